//! JUnit XML from any producer, read as a stream: `<testcase>` elements and their `<failure>`,
//! `<error>` and `<skipped>` children are counted (never the `tests=` attributes, which
//! producers fill inconsistently). A truncated file — a runner killed mid-write — still yields
//! the cases seen before the cut.

use std::io::BufRead;
use std::path::Path;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::{EXCERPT_LINES, Format, Report, ReportError, Status, TestCase, excerpt};

struct Open {
    case: TestCase,
    classname: String,
    /// `error`/`failure` message attribute and text, for the excerpt and infra detection.
    problem: Option<(String, String, String)>,
    in_problem: bool,
}

pub fn parse<R: BufRead>(reader: R, path: &Path) -> Result<Report, ReportError> {
    let mut xml = Reader::from_reader(reader);
    xml.config_mut().trim_text(false);
    let mut report = Report {
        format: Some(Format::Junit),
        ..Report::default()
    };
    let mut buf = Vec::new();
    let mut open: Option<Open> = None;
    let mut suite_file: Option<String> = None;
    let mut load_errors: Vec<String> = Vec::new();
    let mut saw_root = false;
    let mut depth = 0usize;
    loop {
        let ev = match xml.read_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) => {
                if report.cases.is_empty() && !saw_root {
                    return Err(ReportError::Malformed {
                        path: path.display().to_string(),
                        format: Format::Junit,
                        message: e.to_string(),
                    });
                }
                report.incomplete = Some(format!(
                    "report {} is cut off or malformed after {} test cases ({e})",
                    path.display(),
                    report.cases.len()
                ));
                // The case being written when the damage hit has no result: not counted.
                break;
            }
        };
        match &ev {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        // `Start` and `Empty` are handled alike; an empty element is closed at once.
        match xml_read(&ev) {
            Some((name, start, empty)) => match name {
                "testsuites" => saw_root = true,
                "testsuite" => {
                    saw_root = true;
                    suite_file = attr(start, "file");
                }
                "testcase" => {
                    let [name, classname, file] = attrs(start, ["name", "classname", "file"]);
                    let name = name.unwrap_or_default();
                    let classname = classname.unwrap_or_default();
                    let full = if classname.is_empty() || classname == name {
                        name.clone()
                    } else {
                        format!("{classname}.{name}")
                    };
                    let mut case = TestCase::new(full, Status::Passed);
                    case.file = file.or_else(|| suite_file.clone());
                    case.suite = (!classname.is_empty()).then(|| classname.clone());
                    let o = Open {
                        case,
                        classname,
                        problem: None,
                        in_problem: false,
                    };
                    if empty {
                        finish_case(o, &mut report, &mut load_errors);
                    } else {
                        open = Some(o);
                    }
                }
                tag @ ("failure" | "error") => {
                    if let Some(o) = &mut open {
                        o.case.status = Status::Failed;
                        let kind = if tag == "error" { "error" } else { "failure" };
                        let msg = attr(start, "message").unwrap_or_default();
                        if o.problem.is_none() {
                            o.problem = Some((kind.to_string(), msg, String::new()));
                            o.in_problem = !empty;
                        }
                    }
                }
                "skipped" => {
                    if let Some(o) = &mut open
                        && o.case.status != Status::Failed
                    {
                        // pytest writes an expected failure as `<skipped type="pytest.xfail">`.
                        let xfail = attr(start, "type").is_some_and(|t| t == "pytest.xfail");
                        o.case.status = if xfail {
                            Status::XFailed
                        } else {
                            Status::Skipped
                        };
                    }
                }
                _ => {}
            },
            None => match &ev {
                Event::Text(t) => {
                    if let Some(Open {
                        problem: Some((_, _, text)),
                        in_problem: true,
                        ..
                    }) = &mut open
                        && text.len() < 4096
                    {
                        text.push_str(t);
                    }
                }
                Event::CData(t) => {
                    if let Some(Open {
                        problem: Some((_, _, text)),
                        in_problem: true,
                        ..
                    }) = &mut open
                        && text.len() < 4096
                    {
                        text.push_str(t);
                    }
                }
                Event::GeneralRef(r) => {
                    if let Some(Open {
                        problem: Some((_, _, text)),
                        in_problem: true,
                        ..
                    }) = &mut open
                        && text.len() < 4096
                    {
                        text.push_str(entity(r));
                    }
                }
                Event::End(e) => match e.name().into_inner() {
                    "testcase" => {
                        if let Some(o) = open.take() {
                            finish_case(o, &mut report, &mut load_errors);
                        }
                    }
                    "failure" | "error" => {
                        if let Some(o) = &mut open {
                            o.in_problem = false;
                        }
                    }
                    "testsuite" => suite_file = None,
                    _ => {}
                },
                Event::Eof => break,
                _ => {}
            },
        }
        buf.clear();
    }
    if depth > 0 && report.incomplete.is_none() {
        // Elements left open at the end: the writer stopped mid-way. The case it was writing
        // has no result and is not counted.
        report.incomplete = Some(format!(
            "report {} ends inside {depth} open element(s): cut off after {} test cases",
            path.display(),
            report.cases.len()
        ));
    }
    if !saw_root && report.cases.is_empty() {
        return Err(ReportError::Malformed {
            path: path.display().to_string(),
            format: Format::Junit,
            message: "no <testsuites>, <testsuite> or <testcase> element".into(),
        });
    }
    if !load_errors.is_empty() {
        report.infra_error = Some(format!(
            "test suite failed to load:\n{}",
            load_errors.join("\n")
        ));
    }
    Ok(report)
}

/// The element name, its start tag and whether it is self-closing, for start/empty events.
fn xml_read<'a>(ev: &'a Event<'a>) -> Option<(&'a str, &'a BytesStart<'a>, bool)> {
    match ev {
        Event::Start(e) => Some((e.name().into_inner(), e, false)),
        Event::Empty(e) => Some((e.name().into_inner(), e, true)),
        _ => None,
    }
}

fn entity(name: &str) -> &'static str {
    match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "quot" => "\"",
        "apos" => "'",
        "#10" | "#xA" | "#xa" => "\n",
        _ => "",
    }
}

fn attr(e: &BytesStart, key: &str) -> Option<String> {
    let [v] = attrs(e, [key]);
    v
}

/// Several attributes in one pass over the tag (a `<testcase>` is read once, not per key).
fn attrs<const N: usize>(e: &BytesStart, keys: [&str; N]) -> [Option<String>; N] {
    let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
    for a in e.attributes().with_checks(false).flatten() {
        let k = a.key.into_inner();
        if let Some(i) = keys.iter().position(|x| *x == k) {
            let v = if a.value.contains('&') {
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(|v| v.into_owned())
                    .unwrap_or_else(|_| a.value.clone().into_owned())
            } else {
                a.value.clone().into_owned()
            };
            out[i] = Some(v);
        }
    }
    out
}

/// A case that stands for a suite that never ran: pytest's collection failure, jest-junit's
/// "Test suite failed to run", Vitest's import failure (a case named after its own file).
fn is_load_failure(o: &Open) -> bool {
    let Some((kind, msg, _)) = &o.problem else {
        return false;
    };
    if kind == "error" && msg == "collection failure" {
        return true;
    }
    if o.classname == "Test suite failed to run" {
        return true;
    }
    let name = o.case.name.as_str();
    name == o.classname && looks_like_source_file(name)
}

fn looks_like_source_file(name: &str) -> bool {
    const EXT: [&str; 10] = [
        ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".py", ".go",
    ];
    !name.contains(' ') && EXT.iter().any(|e| name.ends_with(e))
}

fn finish_case(mut o: Open, report: &mut Report, load_errors: &mut Vec<String>) {
    if is_load_failure(&o) {
        let (_, msg, text) = o.problem.as_ref().expect("checked");
        let first = if msg.is_empty() {
            text.lines()
                .map(|l| l.trim().trim_start_matches('●').trim())
                .find(|l| !l.is_empty() && *l != "Test suite failed to run")
                .unwrap_or("failed to load")
                .to_string()
        } else {
            msg.clone()
        };
        let line = format!("{}: {}", o.case.name, crate::text::clip(&first, 300));
        if !load_errors.contains(&line) && load_errors.len() < 10 {
            load_errors.push(line);
        }
        return;
    }
    if let Some((_, msg, text)) = o.problem.take() {
        let lines = std::iter::once(msg.as_str())
            .chain(text.lines())
            .filter(|l| !l.trim_start().starts_with("at "));
        o.case.message = excerpt(lines, EXCERPT_LINES);
    }
    report.cases.push(o.case);
}
