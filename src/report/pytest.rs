//! pytest's terminal output, in any verbosity: `-v` result lines (`path::test PASSED [ 20%]`),
//! `-rA` short-summary lines (`PASSED path::test`), the FAILURES/ERRORS sections for excerpts,
//! and the final `N failed, N passed, … in 0.1s` line, which counts what was not named.
//! Collection errors and errors in fixtures (setup/teardown) are infrastructure errors.
//! A run that ends early is no evidence: what `collected N items` announced must all have run
//! (passed, failed, skipped, xfailed, xpassed or errored), else the report is incomplete
//! (`pytest.exit(returncode=0)` in a test, `os._exit` in the code under test).

use std::collections::HashMap;

use super::{Counts, EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    index: HashMap<String, usize>,
    summary: Option<Counts>,
    /// Inside `=== FAILURES ===` / `=== ERRORS ===`: the section title and its lines.
    section: Option<(String, Vec<String>)>,
    in_sections: bool,
    excerpts: Vec<(String, String)>,
    errors: Vec<String>,
    /// Tests with a failed subtest: a later PASSED line for the test itself does not clear it.
    subfailed: std::collections::HashSet<String>,
    conftest_error: bool,
    /// The items `collected N items` announced (less those deselected).
    collected: Option<u64>,
    /// The closing line's `N error(s)`, which [`Counts`] does not keep.
    errored: u64,
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        if let Some(title) = banner(line, '=') {
            self.close_section();
            self.in_sections = title == "FAILURES" || title == "ERRORS";
            if let Some(c) = final_counts(title) {
                self.errored = final_errors(title);
                self.summary_seen(c);
            }
            return;
        }
        if let Some(n) = collected(line) {
            if self.collected.is_some() && self.report.incomplete.is_none() {
                self.report.incomplete = Some(
                    "two `collected N items` lines: the output holds more than one run".into(),
                );
            }
            self.collected = Some(n);
            return;
        }
        if self.in_sections {
            if let Some(title) = banner(line, '_') {
                self.close_section();
                self.section = Some((title.to_string(), Vec::new()));
                return;
            }
            if let Some((title, lines)) = &mut self.section {
                if title.starts_with("ERROR ") && self.errors.len() < 10 && line.starts_with("E ") {
                    self.errors.push(format!("{title}: {}", line[1..].trim()));
                }
                if lines.len() < 200 {
                    lines.push(line.to_string());
                }
                return;
            }
        }
        // A failed unittest `subTest` (pytest ≥ 9): its test fails, whatever its own line said.
        if let Some(rest) = line.strip_prefix("SUBFAILED") {
            let rest = match rest.strip_prefix('(') {
                Some(r) => r.split_once(") ").map(|(_, r)| r).unwrap_or(r),
                None => rest.trim_start(),
            };
            let id = rest.split(" - ").next().unwrap_or(rest).trim();
            if id.contains("::") {
                self.record(id, Status::Failed);
                self.subfailed.insert(id.to_string());
            }
            return;
        }
        // A conftest that does not import: nothing was collected.
        if line.starts_with("ImportError while loading conftest") {
            self.errors.push(line.trim().to_string());
            self.conftest_error = true;
            return;
        }
        if self.conftest_error && line.starts_with("E ") && self.errors.len() < 10 {
            self.errors.push(line[1..].trim().to_string());
            return;
        }
        // `-rA` / default short summary: `FAILED path::test - message`, `ERROR path`.
        for (word, status) in [
            ("PASSED ", Some(Status::Passed)),
            ("FAILED ", Some(Status::Failed)),
            ("SKIPPED ", Some(Status::Skipped)),
            ("XFAIL ", Some(Status::XFailed)),
            ("XPASS ", Some(Status::Passed)),
            ("ERROR ", None),
        ] {
            if let Some(rest) = line.strip_prefix(word) {
                let id = rest.split(" - ").next().unwrap_or(rest).trim();
                if id.starts_with('[') {
                    // `SKIPPED [1] file.py:21: reason` names no test; the final line counts it.
                    return;
                }
                match status {
                    Some(s) => self.record(id, s),
                    None => {
                        if self.errors.len() < 10 {
                            self.errors.push(format!("ERROR {}", rest.trim()));
                        }
                    }
                }
                return;
            }
        }
        // `-q` ends with the counts line and no banner around it.
        if line.starts_with(|c: char| c.is_ascii_digit())
            && let Some(c) = final_counts(line)
        {
            self.errored = final_errors(line);
            self.summary_seen(c);
            return;
        }
        // `-v`: `path::test PASSED   [ 16%]`.
        if let Some((id, rest)) = line.split_once(' ')
            && id.contains("::")
        {
            let word = rest.split_whitespace().next().unwrap_or("");
            let status = match word {
                "PASSED" | "XPASS" => Status::Passed,
                "FAILED" => Status::Failed,
                "SKIPPED" => Status::Skipped,
                "XFAIL" => Status::XFailed,
                "ERROR" => {
                    if self.errors.len() < 10 {
                        self.errors.push(format!("ERROR {id}"));
                    }
                    return;
                }
                _ => return,
            };
            self.record(id, status);
        }
    }

    fn finish(mut self: Box<Self>) -> Report {
        self.close_section();
        for (title, text) in std::mem::take(&mut self.excerpts) {
            // Section titles name the function (`test_x`, `TestCart.test_x`, `test_x[param]`).
            // A subtest's section is `TestA.test_b (i=2)`: the test is the part before.
            let key = title
                .split(" (")
                .next()
                .unwrap_or(&title)
                .replace('.', "::");
            if let Some(case) = self.report.cases.iter_mut().find(|c| {
                c.status == Status::Failed && c.message.is_none() && c.name.ends_with(&key)
            }) {
                case.message = Some(text);
            }
        }
        if !self.errors.is_empty() {
            self.errors.dedup();
            let msg = self.errors.join("\n");
            self.report.set_infra(msg);
        }
        if let Some(summary) = self.summary {
            self.report.reconcile(summary);
        }
        if let Some(n) = self.collected
            && self.report.incomplete.is_none()
            && self.report.infra_error.is_none()
        {
            let ran = self.summary.map(|c| c.total() + self.errored);
            match ran {
                Some(ran) if ran < n => {
                    self.report.incomplete = Some(format!(
                        "pytest collected {n} item(s) but only {ran} ran: the run ended early"
                    ))
                }
                None if n > 0 => {
                    self.report.incomplete = Some(format!(
                        "pytest collected {n} item(s) but printed no closing summary: the run ended early"
                    ))
                }
                _ => {}
            }
        }
        self.report
    }
}

impl Parser {
    /// A case named again keeps the worse of its statuses: a later line cannot turn a failure
    /// into a pass (code under test can print lines of its own; a failure in teardown follows a
    /// `PASSED`).
    fn record(&mut self, id: &str, status: Status) {
        if let Some(&i) = self.index.get(id) {
            let was = self.report.cases[i].status;
            if !self.subfailed.contains(id) && worse(status, was) {
                self.report.cases[i].status = status;
            }
            return;
        }
        let mut case = TestCase::new(id, status);
        case.file = id.split("::").next().map(str::to_string);
        self.index.insert(id.to_string(), self.report.cases.len());
        self.report.cases.push(case);
    }

    /// A second summary line: the output holds two runs' worth of results, or lines printed to
    /// look like them. Forge cannot tell which counts, so the report is incomplete.
    fn summary_seen(&mut self, c: Counts) {
        if self.summary.is_some() && self.report.incomplete.is_none() {
            self.report.incomplete = Some(
                "two final summaries in the output (`N passed … in Ns`): the report cannot be read as one run".into(),
            );
        }
        self.summary = Some(c);
    }

    fn close_section(&mut self) {
        let Some((title, lines)) = self.section.take() else {
            return;
        };
        if title.starts_with("ERROR ") {
            if !self.errors.iter().any(|e| e.starts_with(&title)) {
                let first = lines
                    .iter()
                    .find(|l| !l.trim().is_empty())
                    .cloned()
                    .unwrap_or_default();
                self.errors.push(format!("{title}: {}", first.trim()));
            }
            return;
        }
        // The assertion (`E   …`) lines and the `file:line: Error` locator say the most.
        let useful = lines
            .iter()
            .map(String::as_str)
            .filter(|l| l.starts_with("E ") || (l.contains(".py:") && !l.starts_with(' ')));
        if let Some(text) = excerpt(useful, EXCERPT_LINES) {
            self.excerpts.push((title, text));
        }
    }
}

/// `==== title ====` (or with `_`) → `title`.
fn banner(line: &str, ch: char) -> Option<&str> {
    let rest = line.strip_prefix(ch)?;
    if !rest.starts_with(ch) {
        return None;
    }
    let inner = line.trim_matches(ch);
    if inner.len() == line.len() || !line.ends_with(ch) {
        return None;
    }
    let inner = inner.trim();
    (!inner.is_empty()).then_some(inner)
}

/// Whether a line is pytest's closing counts (`2 failed, 4 passed in 0.03s`).
pub(super) fn is_final_counts(line: &str) -> bool {
    final_counts(line).is_some()
}

/// `2 failed, 2 passed, 1 skipped, 1 xfailed in 0.03s` → counts; `None` for other banners.
fn final_counts(title: &str) -> Option<Counts> {
    let (counts, took) = title.rsplit_once(" in ")?;
    // `0.03s`, `1.52s (0:00:01)`: a duration, not prose that happens to contain " in ".
    if !took.starts_with(|c: char| c.is_ascii_digit()) || !took.contains('s') {
        return None;
    }
    if counts == "no tests ran" {
        return Some(Counts::default());
    }
    let mut c = Counts::default();
    let mut any = false;
    for part in counts.split(',') {
        let mut it = part.split_whitespace();
        let (Some(n), Some(word)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        any = true;
        match word {
            "passed" | "xpassed" => c.passed += n,
            "failed" => c.failed += n,
            "skipped" => c.skipped += n,
            "xfailed" => c.xfailed += n,
            _ => {}
        }
    }
    any.then_some(c)
}

/// `collected 5 items`, `collecting ... collected 7 items`, `collected 9 items / 2 deselected /
/// 7 selected`, `collected 1 item / 1 error` → the items that are to run.
fn collected(line: &str) -> Option<u64> {
    let rest = line
        .strip_prefix("collecting ... ")
        .unwrap_or(line)
        .strip_prefix("collected ")?;
    let mut parts = rest.split(" / ");
    let head = parts.next()?;
    let (n, word) = head.split_once(' ')?;
    if !word.starts_with("item") {
        return None;
    }
    let mut n: u64 = n.parse().ok()?;
    for p in parts {
        let (k, what) = p.trim().split_once(' ')?;
        let k: u64 = k.parse().ok()?;
        match what.trim() {
            "selected" => n = k,
            "deselected" => n = n.saturating_sub(k),
            _ => {}
        }
    }
    Some(n)
}

/// The `N error(s)` of a closing counts line.
fn final_errors(title: &str) -> u64 {
    let Some((counts, _)) = title.rsplit_once(" in ") else {
        return 0;
    };
    counts
        .split(',')
        .filter_map(|p| {
            let mut it = p.split_whitespace();
            let n = it.next()?.parse::<u64>().ok()?;
            matches!(it.next()?, "error" | "errors").then_some(n)
        })
        .sum()
}

/// Whether `new` is worse than `was` (failed, then skipped or xfailed, then passed).
fn worse(new: Status, was: Status) -> bool {
    let rank = |s: Status| match s {
        Status::Failed => 3,
        Status::Skipped | Status::XFailed => 1,
        Status::Passed => 0,
    };
    rank(new) > rank(was)
}
