//! A batch's `spark-submit` output, read back: its lines for `localLog`, the application id
//! and URL Spark prints, and the last lines that explain a failure.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Lines of output quoted in a failed batch's `appDiagnostic`.
const DIAGNOSTIC_LINES: usize = 10;

/// Bytes read from a log's end for the diagnostic.
const DIAGNOSTIC_WINDOW: u64 = 64 * 1024;

/// Most bytes of new log read per poll when looking for the application id.
const SCAN_CHUNK: u64 = 1024 * 1024;

/// Appends to a log, creating it (and its directory) if needed.
pub(super) fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(bytes)
}

/// Lines `start..start + size` of a file; none when it does not exist yet.
pub(super) fn read_lines(path: &Path, start: usize, size: usize) -> std::io::Result<Vec<String>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut rows = Vec::new();
    let mut line = Vec::new();
    let mut reader = BufReader::new(file);
    let mut index = 0;
    while rows.len() < size {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        // A last line still being written is left for the next call.
        if line.last() != Some(&b'\n') {
            break;
        }
        if index >= start {
            let text = String::from_utf8_lossy(&line);
            rows.push(text.trim_end_matches(['\n', '\r']).to_owned());
        }
        index += 1;
    }
    Ok(rows)
}

/// Follows a log for the application id (`local-…`, `application_…`, `app-…`, `spark-…`)
/// and URL (YARN's tracking URL, Spark UI's address).
pub(super) struct AppScan {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

impl AppScan {
    pub(super) fn new(path: PathBuf) -> AppScan {
        AppScan {
            path,
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// The first application id and URL in the new complete lines.
    pub(super) fn read(&mut self) -> (Option<String>, Option<String>) {
        let Ok(mut file) = File::open(&self.path) else {
            return (None, None);
        };
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return (None, None);
        }
        let mut chunk = Vec::new();
        let Ok(read) = file.take(SCAN_CHUNK).read_to_end(&mut chunk) else {
            return (None, None);
        };
        self.offset += read as u64;
        self.partial.extend_from_slice(&chunk);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return (None, None);
        };
        let complete: Vec<u8> = self.partial.drain(..=end).collect();
        let text = String::from_utf8_lossy(&complete);
        let mut found = (None, None);
        for line in text.lines() {
            if found.0.is_none() {
                found.0 = find_app_id(line);
            }
            if found.1.is_none() {
                found.1 = find_app_url(line);
            }
        }
        found
    }
}

/// The first Spark application id in `line`.
pub fn find_app_id(line: &str) -> Option<String> {
    // (prefix, then what must follow: groups of digits separated by `_`/`-`, or hex).
    for (at, _) in line.match_indices("application_") {
        let rest = &line[at + "application_".len()..];
        let (a, rest) = digits(rest);
        if a.len() >= 10 {
            if let Some(rest) = rest.strip_prefix('_') {
                let (b, _) = digits(rest);
                if !b.is_empty() {
                    return Some(format!("application_{a}_{b}"));
                }
            }
        }
    }
    for (at, _) in line.match_indices("local-") {
        let (a, _) = digits(&line[at + "local-".len()..]);
        if a.len() >= 10 && boundary_before(line, at) {
            return Some(format!("local-{a}"));
        }
    }
    for (at, _) in line.match_indices("app-") {
        let rest = &line[at + "app-".len()..];
        let (a, rest) = digits(rest);
        if a.len() == 14 && boundary_before(line, at) {
            if let Some(rest) = rest.strip_prefix('-') {
                let (b, _) = digits(rest);
                if b.len() >= 4 {
                    return Some(format!("app-{a}-{b}"));
                }
            }
        }
    }
    for (at, _) in line.match_indices("spark-") {
        let rest = &line[at + "spark-".len()..];
        let hex: String = rest
            .chars()
            .take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            .collect();
        if hex.len() == 32 && boundary_before(line, at) {
            return Some(format!("spark-{hex}"));
        }
    }
    None
}

fn digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

fn boundary_before(line: &str, at: usize) -> bool {
    line[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_' && c != '-')
}

/// The application's URL in `line`: YARN's `tracking URL: ...`, or the Spark UI's
/// `Bound SparkUI to ..., and started at http://...`.
pub fn find_app_url(line: &str) -> Option<String> {
    let url = if let Some((_, rest)) = line.split_once("tracking URL: ") {
        rest
    } else if line.contains("SparkUI") {
        line.split_once("started at ")?.1
    } else {
        return None;
    };
    let url = url.split_whitespace().next()?;
    (url.starts_with("http://") || url.starts_with("https://")).then(|| url.to_owned())
}

/// Why a batch failed: its exit status and the last meaningful lines of its output
/// (Spark's INFO/WARN chatter, stack frames and blank lines left out).
pub(super) fn diagnostic(log_path: &Path, status: &str) -> String {
    let tail = read_tail(log_path, DIAGNOSTIC_WINDOW).unwrap_or_default();
    let lines = meaningful_lines(&tail, DIAGNOSTIC_LINES);
    if lines.is_empty() {
        format!("spark-submit exited with {status}")
    } else {
        format!("spark-submit exited with {status}:\n{}", lines.join("\n"))
    }
}

fn read_tail(path: &Path, window: u64) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(window)))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The last `count` lines of `text` that say something about a failure.
pub fn meaningful_lines(text: &str, count: usize) -> Vec<String> {
    let noise = |line: &str| {
        let trimmed = line.trim();
        trimmed.is_empty()
            || trimmed.starts_with("at ")
            || trimmed.starts_with("... ")
            || trimmed.starts_with("kumiho: starting ")
            || trimmed.starts_with("Using Spark's default log4j")
            || trimmed.starts_with("WARNING: Using incubator modules")
            || is_quiet_log_line(trimmed)
    };
    let kept: Vec<&str> = text.lines().filter(|line| !noise(line)).collect();
    let first = kept.len().saturating_sub(count);
    kept[first..].iter().map(|line| line.to_string()).collect()
}

/// A log4j line at INFO, DEBUG, TRACE or WARN (`26/12/01 01:37:40 INFO SparkContext: ...`)
/// that mentions no exception.
fn is_quiet_log_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(date), Some(time), Some(level)) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    let stamp = |text: &str, sep: char| {
        text.split(sep).count() == 3
            && text
                .chars()
                .all(|c| c.is_ascii_digit() || c == sep || c == ',' || c == '.')
    };
    stamp(date, '/')
        && stamp(time, ':')
        && matches!(level, "INFO" | "DEBUG" | "TRACE" | "WARN")
        && !line.contains("Exception")
}
