//! libtest, as printed by `cargo test`: several test binaries (`Running …` sections), doc-tests,
//! failure sections (`---- name stdout ----`) and per-binary `test result:` lines. Compile errors
//! come from cargo before any test runs.

use super::{EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    /// The source of the binary being run (`src/lib.rs`, `tests/api.rs`), from `Running …`.
    current_file: Option<String>,
    /// Failed cases of the current binary by name: failure sections name only failed tests, and
    /// one binary may hold tens of thousands of cases.
    failed_index: std::collections::HashMap<String, usize>,
    /// The failure section being read: case index and its lines.
    section: Option<(usize, Vec<String>)>,
    compile_error: Vec<String>,
    /// A test binary started (`Running …`) and has not yet said `running N tests`: an
    /// `error:` now is the harness refusing to run (a nightly-only option), not a test's output.
    awaiting_run: bool,
    /// Any test binary has run.
    ran_any: bool,
    usage_error: Vec<String>,
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        // Failure sections first: their content may look like anything.
        if let Some(name) = line.strip_prefix("---- ").and_then(|r| {
            r.strip_suffix(" stdout ----")
                .or_else(|| r.strip_suffix(" stderr ----"))
        }) {
            self.close_section();
            if let Some(&idx) = self.failed_index.get(name) {
                self.section = Some((idx, Vec::new()));
            }
            return;
        }
        if line == "failures:" || line.starts_with("test result: ") {
            self.close_section();
        }
        if let Some((_, lines)) = &mut self.section {
            if lines.len() < 40 && !line.starts_with("note: run with `RUST_BACKTRACE") {
                lines.push(line.to_string());
            }
            return;
        }

        if let Some(rest) = line.strip_prefix("test ") {
            if let Some((name, outcome)) = rest.rsplit_once(" ... ") {
                let status = match outcome {
                    "ok" => Some(Status::Passed),
                    "FAILED" => Some(Status::Failed),
                    o if o == "ignored" || o.starts_with("ignored, ") => Some(Status::Skipped),
                    _ => None,
                };
                if let Some(status) = status {
                    let mut case = TestCase::new(name, status);
                    case.file = self.current_file.clone().or_else(|| doctest_file(name));
                    if status == Status::Failed {
                        self.failed_index
                            .insert(name.to_string(), self.report.cases.len());
                    }
                    self.report.cases.push(case);
                }
            }
            return;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("Running ") {
            // `Running unittests src/lib.rs (target/…)` or `Running tests/api.rs (target/…)`.
            let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
            let file = rest.split(" (").next().unwrap_or(rest).trim();
            self.current_file = (!file.is_empty()).then(|| file.to_string());
            self.failed_index.clear();
            self.awaiting_run = true;
            return;
        }
        if t.starts_with("running ") && (t.ends_with(" tests") || t.ends_with(" test")) {
            self.awaiting_run = false;
            self.ran_any = true;
        }
        if let Some(msg) = line.strip_prefix("error: ")
            && (self.awaiting_run || !self.ran_any)
            && !msg.starts_with("test failed")
            && !msg.starts_with("could not compile")
            && !msg.contains(" targets failed")
            && self.usage_error.len() < 4
        {
            self.usage_error.push(line.to_string());
            return;
        }
        if t.starts_with("Doc-tests ") {
            self.current_file = None;
            self.failed_index.clear();
            self.awaiting_run = true;
            return;
        }
        if line.starts_with("error[E") || line.starts_with("error: could not compile") {
            if self.compile_error.len() < 8 {
                self.compile_error.push(line.to_string());
            }
            return;
        }
        if !self.compile_error.is_empty() && self.compile_error.len() < 8 && t.starts_with("--> ") {
            self.compile_error.push(line.to_string());
        }
    }

    fn finish(mut self: Box<Self>) -> Report {
        self.close_section();
        if !self.compile_error.is_empty() {
            let msg = format!("compile error:\n{}", self.compile_error.join("\n"));
            self.report.set_infra(msg);
        }
        if !self.usage_error.is_empty() {
            let msg = format!(
                "the test harness refused to run:\n{}",
                self.usage_error.join("\n")
            );
            self.report.set_infra(msg);
        }
        self.report
    }
}

impl Parser {
    fn close_section(&mut self) {
        if let Some((idx, lines)) = self.section.take() {
            let useful = lines.iter().map(String::as_str).filter(|l| {
                !l.starts_with("stack backtrace:") && !l.starts_with("Test executable failed")
            });
            self.report.cases[idx].message = excerpt(useful, EXCERPT_LINES);
        }
    }
}

/// Doc-test names carry their file: `src/lib.rs - add (line 5)`.
fn doctest_file(name: &str) -> Option<String> {
    name.split_once(" - ").map(|(f, _)| f.to_string())
}
