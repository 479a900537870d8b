//! Jest's default console reporter (`npx jest`, `npm test`): `FAIL file` / `PASS file` per test
//! file, `  ● describe › test` headers over each failure (`  ● Test suite failed to run` for a
//! file that did not load) and the closing `Tests:       2 failed, 2 passed, 4 total`. With
//! `--verbose` (or a single test file, where jest turns it on) each test is listed under its
//! file, nested by indentation under its `describe` titles — `✓ title (3 ms)`, `✕ title`,
//! `○ skipped title`, `✎ todo title` — and every case is named; without it passing tests are
//! counted, not named (`report: jest-json` names them too).

use super::{Counts, EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    summary: Option<Counts>,
    /// The test file of the `FAIL`/`PASS` line above.
    file: Option<String>,
    /// The failure being read: a case index, or a file that failed to load.
    open: Option<(Option<usize>, Vec<String>)>,
    /// The `describe` titles above the verbose listing's next line, with their indentation.
    describes: Vec<(usize, String)>,
    load_errors: Vec<String>,
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        if let Some(file) = line
            .strip_prefix("FAIL ")
            .or_else(|| line.strip_prefix("PASS "))
        {
            self.close();
            self.file = Some(file.trim().to_string());
            self.describes.clear();
            return;
        }
        if self.open.is_none() && self.file.is_some() && self.listed(line) {
            return;
        }
        if let Some(title) = line.strip_prefix("  ● ") {
            self.close();
            let title = title.trim();
            if title == "Test suite failed to run" {
                self.open = Some((None, Vec::new()));
                return;
            }
            // `checkout › refunds › refund raises`: the describe path and the title — the
            // case the verbose listing may already have named.
            let name = title.split(" › ").collect::<Vec<_>>().join(" > ");
            let listed =
                self.report.cases.iter().position(|c| {
                    c.name == name && c.file == self.file && c.status == Status::Failed
                });
            let i = listed.unwrap_or_else(|| {
                let mut case = TestCase::new(name, Status::Failed);
                case.file = self.file.clone();
                self.report.cases.push(case);
                self.report.cases.len() - 1
            });
            self.open = Some((Some(i), Vec::new()));
            return;
        }
        if let Some(rest) = line.strip_prefix("Tests:") {
            self.close();
            self.summary = Some(summary_counts(rest));
            return;
        }
        if line.starts_with("Test Suites:") {
            self.close();
            return;
        }
        if let Some((_, lines)) = &mut self.open {
            let t = line.trim();
            // The message and the first stack frame in the test file; not the code excerpt.
            let excerpt_line = t.contains(" | ") || t.starts_with('|') || t.starts_with('>');
            if !t.is_empty() && !excerpt_line && lines.len() < 40 {
                lines.push(t.to_string());
            }
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
    /// A line of the verbose listing under a `PASS`/`FAIL` file: a test (named with the
    /// `describe` titles above it, as the failure headers name it) or a `describe` title.
    fn listed(&mut self, line: &str) -> bool {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if indent < 2 || t.is_empty() || t.starts_with('●') {
            return false;
        }
        let marks = [
            ("✓ ", Status::Passed),
            ("√ ", Status::Passed),
            ("✕ ", Status::Failed),
            ("× ", Status::Failed),
            ("○ skipped ", Status::Skipped),
            ("○ ", Status::Skipped),
            ("✎ todo ", Status::Skipped),
        ];
        self.describes.retain(|(i, _)| *i < indent);
        let Some((title, status)) = marks
            .iter()
            .find_map(|(m, st)| t.strip_prefix(m).map(|rest| (rest, *st)))
        else {
            // A `describe` title opens a level; anything deeper than the listing is not one.
            if indent <= 2 + 2 * self.describes.len() {
                self.describes.push((indent, t.trim_end().to_string()));
            }
            return true;
        };
        // `title (12 ms)`: the time is the runner's, not the name's.
        let title = match title.rfind(" (") {
            Some(at) if title.ends_with(" ms)") || title.ends_with(" s)") => &title[..at],
            _ => title,
        };
        let mut name: Vec<&str> = self.describes.iter().map(|(_, d)| d.as_str()).collect();
        name.push(title.trim_end());
        let mut case = TestCase::new(name.join(" > "), status);
        case.file = self.file.clone();
        self.report.cases.push(case);
        true
    }

    fn close(&mut self) {
        let Some((case, lines)) = self.open.take() else {
            return;
        };
        let file = self.file.clone().unwrap_or_default();
        // Stack frames: keep the first one in the test file, for its line.
        let mut frame_kept = false;
        let useful: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| {
                if l.starts_with("at ") {
                    let keep = !frame_kept && !file.is_empty() && l.contains(file.as_str());
                    frame_kept |= keep;
                    keep
                } else {
                    true
                }
            })
            .collect();
        match case {
            Some(i) => self.report.cases[i].message = excerpt(useful, EXCERPT_LINES),
            None => {
                let cause = useful.first().copied().unwrap_or("failed to run");
                if self.load_errors.len() < 10 {
                    self.load_errors
                        .push(format!("{file}: {}", crate::text::clip(cause, 300)));
                }
            }
        }
    }
}

/// `2 failed, 1 skipped, 1 todo, 2 passed, 6 total` → counts.
fn summary_counts(rest: &str) -> Counts {
    let mut c = Counts::default();
    for part in rest.split(',') {
        let mut it = part.split_whitespace();
        let (Some(n), Some(word)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "passed" => c.passed += n,
            "failed" => c.failed += n,
            "skipped" | "todo" | "pending" => c.skipped += n,
            _ => {}
        }
    }
    c
}
