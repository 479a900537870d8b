//! A live count while a command runs: the lines with which each runner says a case ended, so a
//! person watching `forge verify` on a terminal sees `12 passed, 1 failed` grow. Only a count
//! for the eye — the report is parsed properly from the whole output when the command ends.

use super::Format;

/// How a line ends a case: what it starts with (after indentation) or ends with.
#[derive(Clone, Copy)]
enum At {
    Start(&'static str),
    End(&'static str),
    Holds(&'static str, &'static str),
}

/// Per format, the lines of a passing and of a failing case, as each runner prints them.
const LINES: &[(Format, &[At], &[At])] = &[
    (Format::Tap, &[At::Start("ok ")], &[At::Start("not ok ")]),
    (
        Format::Pytest,
        &[At::Start("PASSED "), At::End(" PASSED")],
        &[At::Start("FAILED "), At::End(" FAILED")],
    ),
    (
        Format::Libtest,
        &[At::End(" ... ok")],
        &[At::End(" ... FAILED")],
    ),
    (
        Format::Nextest,
        &[At::Start("PASS [")],
        &[At::Start("FAIL [")],
    ),
    (Format::Jest, &[At::Start("✓ ")], &[At::Start("✕ ")]),
    (Format::Vitest, &[At::Start("✓ ")], &[At::Start("× ")]),
    (Format::Mocha, &[At::Start("✔ ")], &[]),
    (
        Format::GoJson,
        &[At::Holds("\"Action\":\"pass\"", "\"Test\":")],
        &[At::Holds("\"Action\":\"fail\"", "\"Test\":")],
    ),
];

fn matches(at: &At, line: &str) -> bool {
    match at {
        At::Start(p) => line.starts_with(p),
        At::End(s) => line.ends_with(s),
        At::Holds(a, b) => line.contains(a) && line.contains(b),
    }
}

/// `Some(true)` for a line that says a case passed, `Some(false)` failed, `None` otherwise.
/// `auto` (and a format with no live lines) tries every runner's.
pub fn case_ended(format: Format, line: &str) -> Option<bool> {
    let t = line.trim_start().trim_end_matches('\r');
    let rows = LINES.iter().filter(|(f, _, _)| *f == format);
    let rows: Vec<_> = if rows.clone().next().is_some() {
        rows.collect()
    } else {
        LINES.iter().collect()
    };
    for (_, pass, fail) in rows {
        if fail.iter().any(|a| matches(a, t)) {
            return Some(false);
        }
        if pass.iter().any(|a| matches(a, t)) {
            return Some(true);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runner_s_case_lines_are_counted() {
        let cases = [
            (Format::Tap, "ok 1 - guest pays by card", Some(true)),
            (Format::Tap, "not ok 2 - member gets discount", Some(false)),
            (Format::Tap, "# tests 2", None),
            (Format::Pytest, "PASSED tests/test_a.py::test_x", Some(true)),
            (
                Format::Pytest,
                "tests/test_a.py::test_y FAILED",
                Some(false),
            ),
            (Format::Libtest, "test cart::adds ... ok", Some(true)),
            (Format::Libtest, "test cart::member ... FAILED", Some(false)),
            (
                Format::Nextest,
                "        PASS [   0.004s] shop cart::adds",
                Some(true),
            ),
            (Format::Jest, "    ✓ replaces spaces (10 ms)", Some(true)),
            (Format::Jest, "    ✕ guest pays by card (9 ms)", Some(false)),
            (
                Format::GoJson,
                r#"{"Time":"2024-01-01T00:00:00Z","Action":"pass","Package":"shop","Test":"TestAdds","Elapsed":0}"#,
                Some(true),
            ),
            (
                Format::GoJson,
                r#"{"Action":"pass","Package":"shop","Elapsed":0.1}"#,
                None,
            ),
            (Format::Auto, "not ok 3 - x", Some(false)),
        ];
        for (f, line, want) in cases {
            assert_eq!(case_ended(f, line), want, "{f:?}: {line}");
        }
    }
}
