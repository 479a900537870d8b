//! `go test -json`: one JSON event per line (`run`, `pass`, `fail`, `skip`, `output`, and since
//! Go 1.24 `build-output`/`build-fail`). Older Go prints build errors as plain text even under
//! `-json` (`# pkg`, `file.go:3:2: undefined: x`, `FAIL pkg [build failed]`), so non-JSON lines
//! are read too. Only leaf tests count: a parent whose subtest failed is not a second failure.

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use super::{EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action", default)]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "ImportPath", default)]
    import_path: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
    #[serde(rename = "FailedBuild", default)]
    failed_build: Option<String>,
}

#[derive(Default)]
pub struct Parser {
    report: Report,
    /// Recent output lines of each running test, for the failure excerpt.
    running: HashMap<(String, String), VecDeque<String>>,
    build_errors: Vec<String>,
}

const KEEP_OUTPUT: usize = 12;

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let t = line.trim();
        if !t.starts_with('{') {
            self.plain(t);
            return;
        }
        let Ok(ev) = serde_json::from_str::<Event>(t) else {
            return;
        };
        let pkg = ev.package.clone().unwrap_or_default();
        match (ev.action.as_str(), &ev.test) {
            ("build-output", _) => {
                if let Some(o) = &ev.output {
                    self.build_error(o.trim_end());
                }
            }
            ("build-fail", _) => {
                let what = ev.import_path.unwrap_or_default();
                if self.build_errors.is_empty() {
                    self.build_errors.push(format!("build failed: {what}"));
                }
            }
            ("run", Some(test)) => {
                self.running.insert((pkg, test.clone()), VecDeque::new());
            }
            ("output", Some(test)) => {
                if let Some(buf) = self.running.get_mut(&(pkg, test.clone()))
                    && let Some(o) = &ev.output
                {
                    let o = o.trim_end();
                    if !o.starts_with("=== ") && !o.trim().is_empty() {
                        if buf.len() == KEEP_OUTPUT {
                            buf.pop_front();
                        }
                        buf.push_back(o.to_string());
                    }
                }
            }
            ("output", None) => {
                if let Some(o) = &ev.output
                    && (o.contains("[build failed]") || o.contains("[setup failed]"))
                {
                    self.build_error(o.trim_end());
                }
            }
            (action @ ("pass" | "fail" | "skip"), Some(test)) => {
                let status = match action {
                    "pass" => Status::Passed,
                    "fail" => Status::Failed,
                    _ => Status::Skipped,
                };
                let out = self.running.remove(&(pkg.clone(), test.clone()));
                let mut case = TestCase::new(test.clone(), status);
                case.suite = Some(pkg);
                if status == Status::Failed
                    && let Some(out) = out
                {
                    let lines: Vec<&str> = out
                        .iter()
                        .map(String::as_str)
                        .filter(|l| !l.trim_start().starts_with("--- FAIL"))
                        .collect();
                    case.message = excerpt(lines, EXCERPT_LINES);
                }
                self.report.cases.push(case);
            }
            ("fail", None) => {
                if let Some(b) = ev.failed_build {
                    self.build_error(&format!("FAIL {pkg} [build failed: {b}]"));
                } else {
                    // The package failed: a test that started and never ended crashed it
                    // (panic, os.Exit, timeout).
                    let crashed: Vec<String> = self
                        .running
                        .keys()
                        .filter(|(p, _)| *p == pkg)
                        .map(|(_, t)| t.clone())
                        .collect();
                    for test in crashed {
                        let out = self.running.remove(&(pkg.clone(), test.clone()));
                        let mut case = TestCase::new(test, Status::Failed);
                        case.suite = Some(pkg.clone());
                        case.message =
                            out.and_then(|o| excerpt(o.iter().map(String::as_str), EXCERPT_LINES));
                        self.report.cases.push(case);
                    }
                }
            }
            _ => {}
        }
    }

    fn finish(mut self: Box<Self>) -> Report {
        // go counts a parent beside its subtests: say so, then keep leaves only (`TestA` is
        // dropped when `TestA/x` was reported).
        let all = self.report.counts();
        let parents: std::collections::HashSet<(Option<String>, String)> = self
            .report
            .cases
            .iter()
            .filter_map(|c| {
                c.name
                    .rsplit_once('/')
                    .map(|(parent, _)| (c.suite.clone(), parent.to_string()))
            })
            .collect();
        if !parents.is_empty() {
            self.report
                .cases
                .retain(|c| !parents.contains(&(c.suite.clone(), c.name.clone())));
            self.report.runner_summary = Some(all);
        }
        if !self.build_errors.is_empty() {
            let msg = self.build_errors.join("\n");
            self.report.set_infra(msg);
        }
        self.report
    }
}

impl Parser {
    fn build_error(&mut self, line: &str) {
        if self.build_errors.len() < 10 && !line.is_empty() {
            self.build_errors.push(line.to_string());
        }
    }

    /// Plain text among the JSON: what older Go prints for build errors.
    fn plain(&mut self, t: &str) {
        let is_build = t.contains("[build failed]")
            || t.contains("[setup failed]")
            || t.starts_with("# ")
            || is_compiler_line(t);
        if is_build {
            self.build_error(t);
        }
    }
}

/// `./cart_test.go:12:12: undefined: X` — a compiler diagnostic.
fn is_compiler_line(t: &str) -> bool {
    let Some((file, rest)) = t.split_once(".go:") else {
        return false;
    };
    !file.contains(' ')
        && rest
            .split(':')
            .next()
            .is_some_and(|n| n.parse::<u32>().is_ok())
}
