//! Mocha's default `spec` reporter: suites and tests indented two spaces a level (`✔ title`
//! passed, `N) title` failed, `- title` pending), then `N passing (5ms)` / `N pending` /
//! `N failing`, then each failure again as `N) suite … title:` with its error and stack.
//! `Exception during run:` is a test file that did not load.

use super::{Counts, EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    /// Suites open in the listing, with their indentation.
    suites: Vec<(usize, String)>,
    /// Failed cases of the listing by their number (`1)`).
    numbered: Vec<(String, usize)>,
    summary: Option<Counts>,
    /// After the summary: the failure whose details are being read.
    detail: Option<(usize, Vec<String>)>,
    load_error: Vec<String>,
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Exception during run:") {
            self.load_error.push(rest.trim().to_string());
            return;
        }
        if !self.load_error.is_empty() && self.load_error.len() < 3 && !t.starts_with("at ") {
            if !t.is_empty() {
                self.load_error.push(t.to_string());
            }
            return;
        }
        if let Some(kind) = summary_word(t) {
            let c = self.summary.get_or_insert_with(Counts::default);
            let n: u64 = t
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            match kind {
                "passing" => c.passed = n,
                "failing" => c.failed = n,
                _ => c.skipped = n,
            }
            return;
        }
        if self.summary.is_some() {
            self.detail_line(indent, t);
            return;
        }
        if t.is_empty() {
            return;
        }
        while self.suites.last().is_some_and(|(i, _)| *i >= indent) {
            self.suites.pop();
        }
        let (status, title) =
            if let Some(title) = t.strip_prefix("✔ ").or_else(|| t.strip_prefix("✓ ")) {
                (Status::Passed, strip_duration(title))
            } else if let Some(title) = t.strip_prefix("- ") {
                (Status::Skipped, title)
            } else if let Some((n, title)) = numbered(t) {
                self.numbered.push((n.to_string(), self.report.cases.len()));
                (Status::Failed, title)
            } else {
                self.suites.push((indent, t.to_string()));
                return;
            };
        let mut path: Vec<&str> = self.suites.iter().map(|(_, s)| s.as_str()).collect();
        path.push(title);
        self.report
            .cases
            .push(TestCase::new(path.join(" > "), status));
    }

    fn finish(mut self: Box<Self>) -> Report {
        self.close_detail();
        if !self.load_error.is_empty() {
            let msg = format!("test file failed to load:\n{}", self.load_error.join("\n"));
            self.report.set_infra(msg);
        }
        if let Some(s) = self.summary {
            self.report.reconcile(s);
        }
        self.report
    }
}

impl Parser {
    fn detail_line(&mut self, indent: usize, t: &str) {
        if indent == 2
            && let Some((n, _)) = numbered(t)
        {
            self.close_detail();
            if let Some((_, idx)) = self.numbered.iter().find(|(k, _)| k == n) {
                self.detail = Some((*idx, Vec::new()));
            }
            return;
        }
        if let Some((_, lines)) = &mut self.detail
            && !t.is_empty()
            && lines.len() < 40
        {
            lines.push(t.to_string());
        }
    }

    fn close_detail(&mut self) {
        let Some((idx, lines)) = self.detail.take() else {
            return;
        };
        // Skip the title lines (the last ends with `:`); keep the error and the first frame.
        let start = lines
            .iter()
            .position(|l| l.ends_with(':'))
            .map_or(0, |i| i + 1);
        let mut frame = false;
        let useful = lines[start..].iter().map(String::as_str).filter(|l| {
            if l.starts_with("at ") {
                let keep = !frame && !l.contains("node:internal") && !l.contains("node_modules");
                frame |= keep;
                keep
            } else {
                true
            }
        });
        self.report.cases[idx].message = excerpt(useful, EXCERPT_LINES);
    }
}

/// `2 passing (5ms)`, `1 pending`, `2 failing` → the word.
fn summary_word(t: &str) -> Option<&str> {
    let (n, rest) = t.split_once(' ')?;
    n.parse::<u64>().ok()?;
    let word = rest.split(' ').next()?;
    let ok = match word {
        "passing" => rest.ends_with(')'),
        "pending" | "failing" => rest == word,
        _ => false,
    };
    ok.then_some(word)
}

/// `1) guest pays by card` → ("1", "guest pays by card").
fn numbered(t: &str) -> Option<(&str, &str)> {
    let (n, title) = t.split_once(") ")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some((n, title))
}

/// `adds amounts (52ms)` → `adds amounts` (mocha prints the time of slow tests).
fn strip_duration(title: &str) -> &str {
    match title.rsplit_once(" (") {
        Some((t, d))
            if d.ends_with("ms)") && d[..d.len() - 3].bytes().all(|b| b.is_ascii_digit()) =>
        {
            t
        }
        _ => title,
    }
}
