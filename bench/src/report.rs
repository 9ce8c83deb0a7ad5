//! Figures, the targets they are held to, the printed table and the JSON file.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::error::{BenchError, Result};

/// A bound from issue #5 that a figure must meet.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "bound")]
pub enum Goal {
    AtMost(f64),
    AtLeast(f64),
}

impl Goal {
    fn met(self, value: f64) -> bool {
        match self {
            Goal::AtMost(bound) => value <= bound,
            Goal::AtLeast(bound) => value >= bound,
        }
    }

    fn describe(self, unit: &str) -> String {
        match self {
            Goal::AtMost(bound) => format!("<= {} {unit}", number(bound)),
            Goal::AtLeast(bound) => format!(">= {} {unit}", number(bound)),
        }
    }
}

/// One measured number.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// The case of issue #5, e.g. `2. SELECT 1 cycle`.
    pub case: String,
    /// What was measured, e.g. `p50 through kumiho`.
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub goal: Option<Goal>,
    /// `Some(true)` MET, `Some(false)` MISSED, `None` no target.
    pub met: Option<bool>,
    /// What the reader should know about how it was measured.
    pub note: Option<String>,
}

/// Everything measured in one run.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub figures: Vec<Figure>,
    /// Cases that could not run, with why.
    pub failures: Vec<String>,
    pub machine: Machine,
}

/// Where the run happened.
#[derive(Debug, Default, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_gib: f64,
    pub kernel: String,
    pub started_at_unix: u64,
}

impl Machine {
    pub fn describe() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
            .unwrap_or_else(|| "unknown".to_owned());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib: f64 = meminfo
            .lines()
            .find_map(|line| line.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or(0.0);
        Machine {
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            cpu_model,
            memory_gib: memory_kib / (1024.0 * 1024.0),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_owned(),
            started_at_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }
}

impl Report {
    /// Records a figure; prints it at once so that a long run shows progress.
    pub fn add(&mut self, case: &str, name: &str, value: f64, unit: &str, goal: Option<Goal>) {
        self.add_noted(case, name, value, unit, goal, None);
    }

    pub fn add_noted(
        &mut self,
        case: &str,
        name: &str,
        value: f64,
        unit: &str,
        goal: Option<Goal>,
        note: Option<String>,
    ) {
        let figure = Figure {
            case: case.to_owned(),
            name: name.to_owned(),
            value,
            unit: unit.to_owned(),
            goal,
            met: goal.map(|goal| goal.met(value)),
            note,
        };
        eprintln!("  {}: {} {}", figure.name, number(value), figure.unit);
        self.figures.push(figure);
    }

    pub fn fail(&mut self, case: &str, reason: impl std::fmt::Display) {
        eprintln!("  {case} FAILED: {reason}");
        self.failures.push(format!("{case}: {reason}"));
    }

    /// The table: each figure beside its target, MET or MISSED.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let rows: Vec<[String; 4]> = self
            .figures
            .iter()
            .map(|f| {
                [
                    f.name.clone(),
                    format!("{} {}", number(f.value), f.unit),
                    f.goal.map(|g| g.describe(&f.unit)).unwrap_or_default(),
                    match f.met {
                        Some(true) => "MET".to_owned(),
                        Some(false) => "MISSED".to_owned(),
                        None => String::new(),
                    },
                ]
            })
            .collect();
        let header = ["figure", "value", "target", ""];
        let mut widths = header.map(str::len);
        for figure in &self.figures {
            widths[0] = widths[0].max(figure.case.len() + 4);
        }
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.len());
            }
        }
        let mut case = "";
        let line = |out: &mut String, cells: [&str; 4]| {
            let _ = writeln!(
                out,
                "| {:<w0$} | {:>w1$} | {:<w2$} | {:<w3$} |",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3]
            );
        };
        line(&mut out, header);
        let _ = writeln!(
            out,
            "|{}|{}:|{}|{}|",
            "-".repeat(widths[0] + 2),
            "-".repeat(widths[1] + 1),
            "-".repeat(widths[2] + 2),
            "-".repeat(widths[3] + 2)
        );
        for (figure, row) in self.figures.iter().zip(&rows) {
            if figure.case != case {
                case = &figure.case;
                line(&mut out, [&format!("**{case}**"), "", "", ""]);
            }
            line(&mut out, [&row[0], &row[1], &row[2], &row[3]]);
        }
        for failure in &self.failures {
            let _ = writeln!(out, "\nNOT MEASURED: {failure}");
        }
        out
    }

    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| BenchError::Setup(format!("cannot encode the results: {e}")))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| BenchError::Setup(format!("cannot write {}: {e}", path.display())))
    }
}

/// Three significant digits, without exponent noise for the usual ranges.
pub fn number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || (value.fract() == 0.0 && magnitude < 1e15) {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_decide_met_or_missed() {
        let mut report = Report::default();
        report.add("1", "p50", 0.8, "ms", Some(Goal::AtMost(1.0)));
        report.add("1", "ratio", 0.85, "x", Some(Goal::AtLeast(0.9)));
        report.add("1", "sessions/s", 1200.0, "1/s", None);
        assert_eq!(report.figures[0].met, Some(true));
        assert_eq!(report.figures[1].met, Some(false));
        assert_eq!(report.figures[2].met, None);
        let table = report.table();
        assert!(table.contains("MET") && table.contains("MISSED"), "{table}");
        assert!(table.contains("<= 1 ms"), "{table}");
    }
}
