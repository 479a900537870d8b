//! Jest `--json` and Vitest `--reporter=json` results (Vitest's is Jest-compatible). A suite
//! that failed to load — a missing module, a syntax error — has `status: "failed"`, no
//! assertion results and the error in `message`; Jest also counts it in
//! `numRuntimeErrorTestSuites`. Both are infrastructure errors, not failing tests.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use super::{EXCERPT_LINES, Format, LineParser, Report, ReportError, Status, TestCase, excerpt};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Results {
    #[serde(default)]
    num_runtime_error_test_suites: u64,
    #[serde(default)]
    test_results: Vec<SuiteResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SuiteResult {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
    #[serde(default)]
    test_exec_error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    full_name: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    ancestor_titles: Vec<String>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    failure_messages: Vec<String>,
}

pub fn parse_file<R: BufRead>(
    reader: R,
    path: &Path,
    format: Format,
) -> Result<Report, ReportError> {
    let results: Results = serde_json::from_reader(reader).map_err(|e| ReportError::Malformed {
        path: path.display().to_string(),
        format,
        message: e.to_string(),
    })?;
    Ok(convert(results, format))
}

fn convert(results: Results, format: Format) -> Report {
    let mut report = Report {
        format: Some(format),
        ..Report::default()
    };
    let mut load_errors = Vec::new();
    for suite in results.test_results {
        let failed_to_load = suite.test_exec_error.is_some()
            || (suite.status == "failed" && suite.assertion_results.is_empty());
        if failed_to_load {
            let first = cause(&suite.message);
            load_errors.push(format!(
                "{}: {}",
                suite.name,
                crate::text::clip(&first, 300)
            ));
        }
        for a in suite.assertion_results {
            let status = match a.status.as_str() {
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped, // pending, skipped, todo, disabled, focused-out
            };
            let name = if a.full_name.is_empty() {
                a.title
            } else {
                a.full_name
            };
            let mut case = TestCase::new(name, status);
            case.file = Some(suite.name.clone());
            // The describe path, kept apart: `fullName` joins it to the title with spaces.
            case.suite = (!a.ancestor_titles.is_empty()).then(|| a.ancestor_titles.join(" > "));
            if status == Status::Failed {
                let msg = a.failure_messages.join("\n");
                let lines = msg.lines().filter(|l| !l.trim_start().starts_with("at "));
                case.message = excerpt(lines, EXCERPT_LINES);
            }
            report.cases.push(case);
        }
    }
    if results.num_runtime_error_test_suites > 0 && load_errors.is_empty() {
        load_errors.push(format!(
            "{} test suite(s) failed to run",
            results.num_runtime_error_test_suites
        ));
    }
    if !load_errors.is_empty() {
        report.infra_error = Some(format!(
            "test suite failed to load:\n{}",
            load_errors.join("\n")
        ));
    }
    report
}

/// The lines of a load error that say what is wrong: the first, and while it only announces
/// (`Transform failed with 1 error:`), the cause and its location after it.
fn cause(message: &str) -> String {
    // Box-drawing frames around a code excerpt (`│`, `╭─[ file:4:28 ]`) carry only the
    // location: keep that, drop the art.
    let mut lines = message
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches('●')
                .trim_start_matches(['│', '╭', '╰', '─', '┬', '╯'])
                .trim()
        })
        .filter(|l| !l.is_empty() && *l != "Test suite failed to run");
    let Some(first) = lines.next() else {
        return "suite failed to run".into();
    };
    if !first.ends_with(':') {
        return first.to_string();
    }
    std::iter::once(first)
        .chain(lines.take(2))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The JSON printed on stdout (`jest --json` without `--outputFile`): one long line among the
/// runner's other output.
pub struct StdoutParser {
    format: Format,
    found: Option<Report>,
    malformed: Option<String>,
}

impl StdoutParser {
    pub fn new(format: Format) -> Self {
        StdoutParser {
            format,
            found: None,
            malformed: None,
        }
    }
}

impl LineParser for StdoutParser {
    fn line(&mut self, line: &str) {
        let t = line.trim();
        if self.found.is_some() || !t.starts_with('{') || !t.contains("\"testResults\"") {
            return;
        }
        match serde_json::from_str::<Results>(t) {
            Ok(r) => self.found = Some(convert(r, self.format)),
            Err(e) => self.malformed = Some(e.to_string()),
        }
    }

    fn finish(self: Box<Self>) -> Report {
        match self.found {
            Some(r) => r,
            None => {
                let mut r = Report::default();
                r.notes.push(match self.malformed {
                    Some(e) => format!("the {} JSON in the output does not parse: {e}", self.format),
                    None => format!(
                        "no {} JSON found in the output; set `report_path` to the file the runner writes",
                        self.format
                    ),
                });
                r
            }
        }
    }
}
