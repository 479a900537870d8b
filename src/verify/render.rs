//! The text report of `forge verify`, in pieces that can be printed as the commands finish
//! (header, one block per command, then scenarios and the verdict) and that join into exactly
//! the report printed at once. Colour is a [`Style`] the caller chose; nothing here looks at
//! the terminal.

use std::fmt::Write as _;

use super::{CommandResult, VerifyReport, exit_text};
use crate::report::{Counts, TestCase};
use crate::spec::Coverage;
use crate::text::clip;

/// Failing cases listed per command in the text report (all are in `--json`).
const SHOW_FAILING: usize = 10;

/// How the text is drawn: plain, or with ANSI colours (a terminal, `--color always`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

const GREEN: &str = "32";
const RED: &str = "31";
const YELLOW: &str = "33";
const BOLD_GREEN: &str = "1;32";
const BOLD_RED: &str = "1;31";

impl Style {
    /// `text` in the colour `sgr` (an ANSI SGR parameter), or as is without colour.
    pub fn paint(&self, sgr: &str, text: &str) -> String {
        if self.color {
            format!("\u{1b}[{sgr}m{text}\u{1b}[0m")
        } else {
            text.to_string()
        }
    }
}

/// The first line: how many commands and which scenarios.
pub fn header(selected: usize, total: usize, change: Option<&str>, only: &[String]) -> String {
    if selected < total {
        return format!(
            "forge verify — {selected} of {total} command(s): {}\n",
            only.join(", ")
        );
    }
    let scope = match change {
        Some(c) => format!("change \"{c}\""),
        None => "all changes".to_string(),
    };
    format!("forge verify — {selected} command(s), {scope}\n")
}

/// The column the command names are padded to.
pub fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(str::len).max().unwrap_or(4)
}

fn counts_text(c: &Counts) -> String {
    let mut s = format!(
        "{} passed, {} failed, {} skipped",
        c.passed, c.failed, c.skipped
    );
    if c.xfailed > 0 {
        let _ = write!(s, ", {} xfailed", c.xfailed);
    }
    s
}

/// One command's block: its result line, counts, failures, problems and, when it failed
/// without naming why, the end of its output.
pub fn command_block(c: &CommandResult, width: usize, style: Style) -> String {
    let mut o = String::new();
    let state = if c.ok {
        style.paint(GREEN, "ok  ")
    } else {
        style.paint(RED, "FAIL")
    };
    let how = if c.timed_out {
        format!("timed out after {} s", c.timeout_secs)
    } else {
        exit_text(c)
    };
    let _ = writeln!(
        o,
        "  {:width$}  {state}  {how}  {:.2}s  $ {}",
        c.name,
        c.duration_ms as f64 / 1000.0,
        clip(&c.run, 80),
    );
    let pad = " ".repeat(width + 4);
    if let Some(f) = c.report.format
        && (c.tests != Counts::default() || c.report.infra_error.is_some())
    {
        let _ = writeln!(o, "{pad}{} ({f})", counts_text(&c.tests));
    }
    if let Some(r) = &c.runner_summary
        && *r != c.tests
    {
        let _ = writeln!(
            o,
            "{pad}the runner's own count, parents of subtests included: {}",
            counts_text(r)
        );
    }
    if let Some(e) = &c.report.infra_error {
        let _ = writeln!(
            o,
            "{pad}infrastructure error (build, compile, import or setup):"
        );
        for l in e.lines().take(8) {
            let _ = writeln!(o, "{pad}  {}", clip(l, 160));
        }
    }
    let failing: Vec<&TestCase> = c.report.failing().collect();
    for t in failing.iter().take(SHOW_FAILING) {
        let _ = writeln!(o, "{pad}{} {}", style.paint(RED, "FAILED"), t.name);
        if let Some(m) = &t.message {
            for l in m.lines().take(4) {
                let _ = writeln!(o, "{pad}    {}", clip(l, 160));
            }
        }
    }
    if failing.len() > SHOW_FAILING {
        let _ = writeln!(
            o,
            "{pad}… and {} more failing (see --json or the log)",
            failing.len() - SHOW_FAILING
        );
    }
    if let Some(e) = &c.report_error {
        let _ = writeln!(o, "{pad}report: {e}");
    }
    if let Some(e) = &c.report.incomplete {
        let _ = writeln!(o, "{pad}report: {e}");
    }
    for n in &c.report.notes {
        let _ = writeln!(o, "{pad}note: {n}");
    }
    if !c.ok && failing.is_empty() && c.report.infra_error.is_none() {
        let lines: Vec<&str> = c.tail.lines().filter(|l| !l.trim().is_empty()).collect();
        let start = lines.len().saturating_sub(6);
        if !lines.is_empty() {
            let _ = writeln!(o, "{pad}last output:");
        }
        for l in &lines[start..] {
            let _ = writeln!(o, "{pad}  {}", clip(&crate::text::strip_ansi(l), 160));
        }
    }
    if !c.ok {
        let _ = writeln!(o, "{pad}log: {}", c.log);
    }
    o
}

impl VerifyReport {
    /// The readable report, ending with the verdict line.
    pub fn render_text(&self, style: Style) -> String {
        let selected: Vec<String> = self.commands.iter().map(|c| c.name.clone()).collect();
        let mut o = header(
            self.commands.len(),
            self.commands.len() + self.not_run.len(),
            self.change.as_deref(),
            &selected,
        );
        let width = name_width(self.commands.iter().map(|c| c.name.as_str()));
        for c in &self.commands {
            o.push_str(&command_block(c, width, style));
        }
        o.push_str(&self.render_end(style));
        o
    }

    /// What follows the commands: scenario coverage and the verdict line.
    pub fn render_end(&self, style: Style) -> String {
        let mut o = String::new();
        if !self.not_run.is_empty() {
            let _ = writeln!(
                o,
                "Scenarios: not checked — coverage needs every command, and {} did not run",
                self.not_run.join(", ")
            );
        } else if !self.scenarios.is_empty() {
            let n = |k: Coverage| self.scenarios.iter().filter(|s| s.status == k).count();
            let _ = writeln!(
                o,
                "Scenarios: {} covered, {} failing, {} uncovered",
                n(Coverage::Covered),
                n(Coverage::Failing),
                n(Coverage::Uncovered)
            );
            for s in &self.scenarios {
                let label = match s.status {
                    Coverage::Covered => style.paint(GREEN, "covered  "),
                    Coverage::Failing => style.paint(RED, "FAILING  "),
                    Coverage::Uncovered => style.paint(YELLOW, "UNCOVERED"),
                };
                let why = if s.status == Coverage::Covered {
                    String::new()
                } else {
                    format!(
                        " — {}",
                        s.evidence.first().map(String::as_str).unwrap_or("")
                    )
                };
                let _ = writeln!(o, "  {label} {}/{}{why}", s.change, s.id);
            }
        } else if let Some(c) = &self.change {
            let _ = writeln!(
                o,
                "Scenarios: none in change \"{c}\" (add `#### Scenario:` headings to its spec.md)"
            );
        }
        let verdict = match self.verdict {
            super::Verdict::Pass => style.paint(BOLD_GREEN, "PASS"),
            super::Verdict::Fail => style.paint(BOLD_RED, "FAIL"),
        };
        let _ = writeln!(o, "Verdict: {verdict}");
        o
    }
}
