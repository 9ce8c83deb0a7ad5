//! Launch logs: reading from offsets, waiting for lines, limits.

use std::sync::Arc;

use super::*;

#[test]
fn lines_are_read_from_an_offset() {
    let log = LaunchLog::new();
    log.push("one");
    log.push("two");
    log.push("three");
    assert_eq!(log.lines_since(0), ["one", "two", "three"]);
    assert_eq!(log.lines_since(2), ["three"]);
    assert!(log.lines_since(3).is_empty());
    assert!(log.lines_since(99).is_empty());
    assert_eq!(log.tail(2), ["two", "three"]);
    assert_eq!(log.len(), 3);
}

#[tokio::test]
async fn readers_wake_up_for_new_lines() {
    let log = Arc::new(LaunchLog::new());
    log.push("first");
    // Already beyond: returns at once.
    log.wait_beyond(0).await;
    let reader = {
        let log = log.clone();
        tokio::spawn(async move {
            log.wait_beyond(1).await;
            log.lines_since(1)
        })
    };
    tokio::task::yield_now().await;
    assert!(!reader.is_finished());
    log.push("second");
    assert_eq!(reader.await.unwrap(), ["second"]);
}

#[test]
fn long_lines_are_cut_at_a_character_boundary() {
    let log = LaunchLog::new();
    log.push("é".repeat(MAX_LINE_BYTES));
    let line = &log.lines_since(0)[0];
    assert!(line.len() <= MAX_LINE_BYTES + " …".len());
    assert!(line.ends_with(" …"));
}

#[test]
fn a_flood_of_lines_is_capped_with_a_note() {
    let log = LaunchLog::new();
    for i in 0..MAX_LINES + 50 {
        log.push(format!("line {i}"));
    }
    assert_eq!(log.len(), MAX_LINES);
    let last = log.tail(1).remove(0);
    assert!(last.contains("launch log full"), "{last}");
}
