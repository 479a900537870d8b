//! The verify result for CI systems: GitHub Actions workflow commands (annotations on the
//! failing lines) and JUnit XML (test dashboards). Both are views of a finished
//! [`VerifyReport`]; neither decides anything.

use std::fmt::Write as _;
use std::path::Path;

use super::{CommandResult, VerifyReport, exit_text};
use crate::report::{Location, Status, locate};
use crate::spec::Coverage;

/// Lines of a message kept in an annotation.
const ANNOTATION_LINES: usize = 12;

/// GitHub Actions `::error` workflow commands: one per failing case (with its file and line
/// where the report names them), per command that failed for itself (exit code, timeout,
/// build error, unreadable or empty report) and per failing or uncovered scenario (at its
/// heading in the spec). Paths are made relative to `root`, as GitHub expects.
pub fn github_annotations(report: &VerifyReport, root: &Path) -> String {
    let mut o = String::new();
    for c in &report.commands {
        for t in c.report.failing() {
            let loc = t.location();
            let message = t.message.as_deref().unwrap_or("failed");
            annotate(
                &mut o,
                loc.as_ref(),
                root,
                &format!("{}: {}", c.name, t.name),
                message,
            );
        }
        if let Some(e) = &c.report.infra_error {
            annotate(
                &mut o,
                locate(e, None).as_ref(),
                root,
                &format!("{}: build, compile, import or setup error", c.name),
                e,
            );
        }
        if let Some(why) = command_problem(c) {
            annotate(
                &mut o,
                None,
                root,
                &format!("{}: `{}` failed", c.name, crate::text::clip(&c.run, 80)),
                &why,
            );
        }
    }
    for s in &report.scenarios {
        let title = match s.status {
            Coverage::Covered => continue,
            Coverage::Failing => format!("scenario {}/{} is failing", s.change, s.id),
            Coverage::Uncovered => format!("scenario {}/{} is uncovered", s.change, s.id),
        };
        let loc = Location {
            file: s.file.clone(),
            line: u32::try_from(s.line).ok(),
        };
        annotate(&mut o, Some(&loc), root, &title, &s.evidence.join("\n"));
    }
    o
}

/// Why a command failed on its own, beyond the failing cases it names: what a dashboard or an
/// annotation must show as the command's error.
fn command_problem(c: &CommandResult) -> Option<String> {
    if c.ok {
        return None;
    }
    let mut why = Vec::new();
    if c.timed_out {
        why.push(format!("timed out after {} s", c.timeout_secs));
    } else if c.exit_code != Some(0) && c.tests.failed == 0 && c.report.infra_error.is_none() {
        why.push(exit_text(c));
    }
    if let Some(e) = &c.report_error {
        why.push(format!("report: {e}"));
    }
    if let Some(e) = &c.report.incomplete {
        why.push(format!("report: {e}"));
    }
    if why.is_empty() {
        return None;
    }
    why.push(format!("log: {}", c.log));
    Some(why.join("\n"))
}

fn annotate(o: &mut String, loc: Option<&Location>, root: &Path, title: &str, message: &str) {
    let mut props = Vec::new();
    if let Some(l) = loc {
        props.push(format!(
            "file={}",
            escape_property(&relative(&l.file, root))
        ));
        if let Some(n) = l.line {
            props.push(format!("line={n}"));
        }
    }
    props.push(format!("title={}", escape_property(title)));
    let message: Vec<&str> = message.lines().take(ANNOTATION_LINES).collect();
    let _ = writeln!(
        o,
        "::error {}::{}",
        props.join(","),
        escape_data(&message.join("\n"))
    );
}

/// A path as GitHub wants it: relative to the repository root.
fn relative(file: &str, root: &Path) -> String {
    let p = Path::new(file);
    match p.strip_prefix(root) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => file.trim_start_matches("./").to_string(),
    }
}

/// Workflow-command data escaping, as `@actions/core` does it.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Property values also escape `:` and `,`, which separate properties.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The verify result as JUnit XML: one `<testsuite>` per command with its cases (and, when the
/// command failed for itself, one `<testcase>` for the command carrying an `<error>`), and one
/// `scenarios` suite with a case per scenario.
pub fn junit_xml(report: &VerifyReport) -> String {
    let mut o = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors, mut skipped) = (0usize, 0usize, 0usize, 0usize);
    let mut total_ms = 0u64;
    for c in &report.commands {
        let mut body = String::new();
        let (mut t, mut f, mut e, mut s) = (0usize, 0usize, 0usize, 0usize);
        for case in &c.report.cases {
            t += 1;
            let mut attrs = format!(
                "name=\"{}\" classname=\"{}\"",
                attr(&case.name),
                attr(case.suite.as_deref().unwrap_or(&c.name))
            );
            if let Some(file) = &case.file {
                let _ = write!(attrs, " file=\"{}\"", attr(file));
            }
            if let Some(line) = case.location().and_then(|l| l.line) {
                let _ = write!(attrs, " line=\"{line}\"");
            }
            match case.status {
                Status::Passed => {
                    let _ = writeln!(body, "    <testcase {attrs}/>");
                }
                Status::Failed => {
                    f += 1;
                    let msg = case.message.as_deref().unwrap_or("failed");
                    let _ = writeln!(
                        body,
                        "    <testcase {attrs}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        attr(msg.lines().next().unwrap_or("failed")),
                        text(msg)
                    );
                }
                Status::Skipped | Status::XFailed => {
                    s += 1;
                    let why = if case.status == Status::XFailed {
                        " message=\"xfailed\""
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        body,
                        "    <testcase {attrs}>\n      <skipped{why}/>\n    </testcase>"
                    );
                }
            }
        }
        let problem = command_problem(c).or_else(|| {
            c.report
                .infra_error
                .clone()
                .map(|e| format!("build, compile, import or setup error:\n{e}"))
        });
        if problem.is_none() && c.report.cases.is_empty() {
            // A command with no cases of its own (a linter) is one case that passed.
            t += 1;
            let _ = writeln!(
                body,
                "    <testcase name=\"{}\" classname=\"{}\"/>",
                attr(&format!("$ {}", c.run)),
                attr(&c.name)
            );
        }
        if let Some(why) = problem {
            t += 1;
            e += 1;
            let _ = writeln!(
                body,
                "    <testcase name=\"{}\" classname=\"{}\">\n      <error message=\"{}\">{}</error>\n    </testcase>",
                attr(&format!("$ {}", c.run)),
                attr(&c.name),
                attr(why.lines().next().unwrap_or("failed")),
                text(&why)
            );
        }
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{t}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{s}\" time=\"{:.3}\">\n{body}  </testsuite>",
            attr(&c.name),
            c.duration_ms as f64 / 1000.0
        );
        tests += t;
        failures += f;
        errors += e;
        skipped += s;
        total_ms += c.duration_ms;
    }
    if !report.scenarios.is_empty() {
        let mut body = String::new();
        let mut f = 0usize;
        for s in &report.scenarios {
            let attrs = format!(
                "name=\"{}\" classname=\"scenarios.{}\" file=\"{}\" line=\"{}\"",
                attr(&s.id),
                attr(&s.change),
                attr(&s.file),
                s.line
            );
            match s.status {
                Coverage::Covered => {
                    let _ = writeln!(body, "    <testcase {attrs}/>");
                }
                Coverage::Failing | Coverage::Uncovered => {
                    f += 1;
                    let kind = if s.status == Coverage::Failing {
                        "failing"
                    } else {
                        "uncovered"
                    };
                    let _ = writeln!(
                        body,
                        "    <testcase {attrs}>\n      <failure message=\"{kind}\">{}</failure>\n    </testcase>",
                        text(&s.evidence.join("\n"))
                    );
                }
            }
        }
        let n = report.scenarios.len();
        let _ = writeln!(
            suites,
            "  <testsuite name=\"scenarios\" tests=\"{n}\" failures=\"{f}\" errors=\"0\" skipped=\"0\" time=\"0\">\n{body}  </testsuite>"
        );
        tests += n;
        failures += f;
    }
    let _ = writeln!(
        o,
        "<testsuites name=\"forge verify\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{:.3}\">\n{suites}</testsuites>",
        total_ms as f64 / 1000.0
    );
    o
}

/// Text that XML 1.0 can hold: control characters other than tab and newline are dropped
/// (test output carries ANSI escapes and worse).
fn xml_safe(s: &str) -> String {
    crate::text::strip_ansi(s)
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

fn text(s: &str) -> String {
    quick_xml::escape::escape(xml_safe(s).as_str()).into_owned()
}

fn attr(s: &str) -> String {
    quick_xml::escape::escape(xml_safe(s).as_str())
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping_matches_actions_core() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn xml_text_drops_control_characters_and_escapes() {
        assert_eq!(
            text("a <b> & \u{1b}[31mred\u{1b}[0m\u{0}"),
            "a &lt;b&gt; &amp; red"
        );
        assert_eq!(attr("x\"y\nz"), "x&quot;y&#10;z");
    }
}
