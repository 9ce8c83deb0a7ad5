//! The log of one engine launch: lines a client can read from an offset and wait on.
//!
//! The launcher writes its own steps here and copies the engine's log into it while the
//! engine starts; the gateway serves it to clients as the LaunchEngine operation's log.

use std::sync::Mutex;

use tokio::sync::watch;

/// Most lines one launch log keeps; an engine flooding its log while starting must not grow
/// the gateway's memory without bound. Later lines are counted, not kept.
pub const MAX_LINES: usize = 10_000;

/// Longest line kept, in bytes; longer lines are cut at a character boundary.
pub const MAX_LINE_BYTES: usize = 4096;

/// An append-only log of lines, shared (`Arc<LaunchLog>`) by the launch and its readers.
#[derive(Debug)]
pub struct LaunchLog {
    // A std mutex: it is held only to push or copy lines, never across an `.await`.
    lines: Mutex<Lines>,
    // Counts appended lines; readers wait on it for new ones.
    appended: watch::Sender<usize>,
}

#[derive(Debug, Default)]
struct Lines {
    kept: Vec<String>,
    dropped: usize,
}

impl Default for LaunchLog {
    fn default() -> Self {
        LaunchLog::new()
    }
}

impl LaunchLog {
    /// An empty log.
    pub fn new() -> LaunchLog {
        LaunchLog {
            lines: Mutex::new(Lines::default()),
            appended: watch::Sender::new(0),
        }
    }

    /// Appends a line (and logs it at debug level for the gateway's own log).
    pub fn push(&self, line: impl Into<String>) {
        let mut line = line.into();
        if line.len() > MAX_LINE_BYTES {
            let mut cut = MAX_LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push_str(" …");
        }
        tracing::debug!(target: "kumiho::launch", "{line}");
        let count = {
            let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
            if lines.kept.len() + 1 < MAX_LINES {
                lines.kept.push(line);
            } else {
                if lines.dropped == 0 {
                    // The last kept line says that later ones are dropped, and where they are.
                    lines.kept.push(format!(
                        "… launch log full ({MAX_LINES} lines); see the engine's log file for the rest"
                    ));
                }
                lines.dropped += 1;
            }
            lines.kept.len()
        };
        self.appended.send_replace(count);
    }

    /// The lines from index `offset` on (none if `offset` is at or past the end).
    pub fn lines_since(&self, offset: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines
            .kept
            .get(offset..)
            .map(<[String]>::to_vec)
            .unwrap_or_default()
    }

    /// How many lines the log holds.
    pub fn len(&self) -> usize {
        *self.appended.borrow()
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last `count` lines.
    pub fn tail(&self, count: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let start = lines.kept.len().saturating_sub(count);
        lines.kept[start..].to_vec()
    }

    /// Waits until the log holds more than `offset` lines (returns at once if it does).
    pub async fn wait_beyond(&self, offset: usize) {
        let mut receiver = self.appended.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = receiver.wait_for(|count| *count > offset).await;
    }
}

#[cfg(test)]
mod tests;
