//! Vitest's default console reporter (`vitest run`): ` FAIL  file > describe > test` headers
//! name each failing test (a suite that failed to load ends with ` [ file ]`), the lines under
//! them up to the `⎯` rule are the failure, and `      Tests  2 failed | 2 passed (4)` closes
//! the run. Passing tests are counted, not named: use `report: vitest-json` to name them.

use super::{Counts, EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    summary: Option<Counts>,
    /// The failure being read: a case index, or a suite that failed to load (its file).
    open: Option<(Failure, Vec<String>)>,
    load_errors: Vec<String>,
}

enum Failure {
    Case(usize),
    Suite(String),
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let t = line.trim();
        if let Some(rest) = line.strip_prefix(" FAIL  ") {
            self.close();
            let rest = rest.trim_end();
            if let Some((file, _)) = rest.split_once(" [ ")
                && rest.ends_with(" ]")
            {
                self.open = Some((Failure::Suite(file.to_string()), Vec::new()));
                return;
            }
            let (file, name) = rest.split_once(" > ").unwrap_or((rest, rest));
            let mut case = TestCase::new(name, Status::Failed);
            case.file = Some(file.to_string());
            self.report.cases.push(case);
            self.open = Some((Failure::Case(self.report.cases.len() - 1), Vec::new()));
            return;
        }
        if t.starts_with('⎯') {
            self.close();
            return;
        }
        if let Some((_, lines)) = &mut self.open {
            // Box-drawing frames (`╭─[ file:4:28 ]`) keep only their text.
            let t = t.trim_start_matches(['│', '╭', '╰', '─', '┬', '╯']).trim();
            if lines.len() < 40 && !t.is_empty() {
                lines.push(t.to_string());
            }
            return;
        }
        if line.starts_with("      Tests ")
            && let Some(rest) = t.strip_prefix("Tests ")
        {
            self.summary = Some(summary_counts(rest));
        }
    }

    fn finish(mut self: Box<Self>) -> Report {
        self.close();
        if !self.load_errors.is_empty() {
            let msg = format!(
                "test suite failed to load:\n{}",
                self.load_errors.join("\n")
            );
            self.report.set_infra(msg);
        }
        if let Some(s) = self.summary {
            self.report.reconcile(s);
        }
        self.report
    }
}

impl Parser {
    fn close(&mut self) {
        let Some((what, lines)) = self.open.take() else {
            return;
        };
        // The error line(s) and the `❯ file:line:col` that points at the failure; the code
        // excerpt around it (`  9|   test(…`) is left to the log.
        let useful = lines.iter().map(String::as_str).filter(|l| {
            !l.contains('|') && !l.starts_with("- ") && !l.starts_with("+ ") && *l != "- Expected"
        });
        match what {
            Failure::Case(i) => self.report.cases[i].message = excerpt(useful, EXCERPT_LINES),
            Failure::Suite(file) => {
                let cause: Vec<&str> = useful
                    .filter(|l| !l.starts_with("❯ ") || l.contains(&file))
                    .take(3)
                    .collect();
                if self.load_errors.len() < 10 {
                    self.load_errors
                        .push(format!("{file}: {}", cause.join(" ")));
                }
            }
        }
    }
}

/// `2 failed | 2 passed | 1 skipped | 1 todo (6)` → counts (`no tests` → none).
fn summary_counts(rest: &str) -> Counts {
    let mut c = Counts::default();
    let rest = rest.split(" (").next().unwrap_or(rest);
    for part in rest.split('|') {
        let mut it = part.split_whitespace();
        let (Some(n), Some(word)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "passed" => c.passed += n,
            "failed" => c.failed += n,
            "skipped" | "todo" => c.skipped += n,
            _ => {}
        }
    }
    c
}
