//! The clean room (issue 31): the one fact the run's gates must prove — that the verified test,
//! and nothing else an agent wrote, makes the code pass under the person's own commands. The
//! room is the run's base with only the code the slices changed and the verified tests; here
//! is which of red's files go in, and how the person's commands' reports are judged there.
//! Pure: the caller builds the trees and runs the commands.

use super::BaseCases;
use crate::report::{Report, Status};

/// Extensions of files no test runner loads as code or configuration: data a test reads
/// (fixtures, golden files, snapshots, images). Everything else red adds beside the verified
/// test stays out of the clean room — a list of what is inert, not of what runs, so a kind of
/// code nobody listed (a compiled `.pyc` that shadows the package, red team of issue 31) is
/// code.
const DATA: &[&str] = &[
    "json", "txt", "csv", "tsv", "md", "rst", "xml", "html", "htm", "svg", "png", "jpg", "jpeg",
    "gif", "webp", "ico", "bmp", "pdf", "snap", "golden", "expected", "out", "in", "dat", "log",
    "jsonl", "ndjson", "parquet", "avro", "wav", "mp3", "mp4", "zip", "gz", "tar",
];

/// Whether a file could steer a run as code or configuration: anything but data by its
/// extension ([`DATA`]) — and of those a dotfile (a runner's `.babelrc.json`), a `*rc` file, a
/// harness file by name or a JSON that configures a tool (`tsconfig.json`, `jest.config.json`).
pub fn is_code_like(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    !DATA.contains(&ext)
        || lower.starts_with('.')
        || lower.ends_with("rc")
        || lower == "package.json"
        || lower.contains("config")
        || super::is_harness_name(path)
}

/// The files of red's change that the clean room takes: the one (or ones) holding the verified
/// case — named by a node id's file (`tests/test_x.py::test_y`) or holding the case's own
/// title — and the files no runner runs as code (data a test reads). `content` reads a file of
/// red's change. An error when no file of red's holds the verified case.
pub fn room_tests(
    failing_case: &str,
    red_tests: &[String],
    content: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Result<Vec<String>, String> {
    let by_id = failing_case
        .split_once("::")
        .map(|(f, _)| f.trim())
        .filter(|f| red_tests.iter().any(|t| t == f));
    let title = failing_case
        .rsplit([':', '>'])
        .next()
        .unwrap_or(failing_case)
        .trim();
    let holds: Vec<&String> = match by_id {
        Some(f) => red_tests.iter().filter(|t| *t == f).collect(),
        None if red_tests.len() == 1 => red_tests.iter().collect(),
        None => red_tests
            .iter()
            .filter(|t| {
                !title.is_empty()
                    && content(t).is_some_and(|b| String::from_utf8_lossy(&b).contains(title))
            })
            .collect(),
    };
    if holds.is_empty() {
        return Err(format!(
            "no file of red's change ({}) holds the verified case `{failing_case}`",
            red_tests.join(", ")
        ));
    }
    Ok(red_tests
        .iter()
        .filter(|t| holds.contains(t) || !is_code_like(t))
        .cloned()
        .collect())
}

/// One of the person's commands in the clean room: its report, whether it passed, and what
/// the run's base showed for it.
pub struct RoomRun<'a> {
    pub name: &'a str,
    pub report: &'a Report,
    pub ok: bool,
    pub base: &'a BaseCases,
}

/// The clean room with the slice's code: every command passes, no command reports fewer passing
/// cases than on the base, and the verified case ran and passed. `None` when it holds.
pub fn judge_room(runs: &[RoomRun], case: &str) -> Option<String> {
    let statuses: Vec<Status> = runs
        .iter()
        .filter_map(|r| super::case_status(r.report, case))
        .collect();
    if !statuses.iter().all(|s| *s == Status::Passed) {
        return Some(format!(
            "the verified case `{case}` does not pass with only the code and the verified test"
        ));
    }
    for r in runs {
        if !r.ok {
            return Some(format!(
                "`{}` fails on the base with only the code and the verified test",
                r.name
            ));
        }
        let passed = r.report.counts().passed;
        if r.base.clean && passed < r.base.passed {
            return Some(format!(
                "`{}` reports {passed} passing case(s) with only the code and the verified test, fewer than the {} on the base",
                r.name, r.base.passed
            ));
        }
    }
    statuses.is_empty().then(|| {
        format!(
            "the verified case `{case}` did not run under the project's verify commands with only the code and the verified test"
        )
    })
}

/// Whether any report shows `case` passed.
fn passes(reports: &[&Report], case: &str) -> bool {
    reports
        .iter()
        .any(|r| super::case_status(r, case) == Some(Status::Passed))
}

/// The clean room with the code as it was before the slice: the verified case must not pass,
/// or the test does not test what the slice changed. `None` when it discriminates.
pub fn judge_without_code(reports: &[&Report], case: &str) -> Option<String> {
    passes(reports, case).then(|| {
        format!(
            "the verified case `{case}` passes without the slice's code: it does not test what the slice changed"
        )
    })
}

/// The clean room with every function the slice added or changed made to fail (`stubbed`):
/// the verified case must not pass, or it passes whatever the code does — a test that rebinds
/// the code it claims to test once the name exists (red team, issue 31). `None` when it fails
/// there.
pub fn judge_stubbed(reports: &[&Report], case: &str, stubbed: &[String]) -> Option<String> {
    passes(reports, case).then(|| {
        format!(
            "the verified case `{case}` passes even with every function the slice added or changed made to fail ({}): the test does not depend on the code",
            stubbed.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TestCase;

    fn report(cases: &[(&str, Status)]) -> Report {
        let mut r = Report {
            format: Some(crate::report::Format::Pytest),
            ..Default::default()
        };
        for (n, s) in cases {
            r.cases.push(TestCase::new(n.to_string(), *s));
        }
        r
    }

    #[test]
    fn the_room_takes_the_verified_test_and_data_but_no_other_code() {
        let red = vec![
            "tests/test_new.py".to_string(),
            "tests/conftest_extra.py".to_string(),
            "tests/fixtures/data.json".to_string(),
            "tests/.pytest.ini".to_string(),
        ];
        let none = |_: &str| None;
        assert_eq!(
            room_tests("tests/test_new.py::test_adds", &red, &none).unwrap(),
            ["tests/test_new.py", "tests/fixtures/data.json"]
        );
        // By the case's title in the file's text, where the name carries no file.
        let sh = vec![
            "tests/member_test.sh".to_string(),
            "tests/aaa_test.sh".to_string(),
        ];
        let text = |f: &str| {
            (f == "tests/member_test.sh").then(|| b"check \"member gets discount\" 1 1".to_vec())
        };
        assert_eq!(
            room_tests("member gets discount", &sh, &text).unwrap(),
            ["tests/member_test.sh"]
        );
        assert!(room_tests("nowhere", &sh, &text).is_err());
        // One file: it is the verified test.
        let one = vec!["test/parts.test.js".to_string()];
        assert_eq!(room_tests("x > y", &one, &none).unwrap(), one);
    }

    #[test]
    fn the_verified_case_passes_by_exact_name_and_nothing_is_lost() {
        let base = BaseCases {
            clean: true,
            passed: 1,
        };
        let good = report(&[("t.py::old", Status::Passed), ("t.py::new", Status::Passed)]);
        fn run<'a>(r: &'a Report, ok: bool, base: &'a BaseCases) -> RoomRun<'a> {
            RoomRun {
                name: "test",
                report: r,
                ok,
                base,
            }
        }
        assert_eq!(judge_room(&[run(&good, true, &base)], "t.py::new"), None);
        assert!(judge_room(&[run(&good, false, &base)], "t.py::new").is_some());
        // A decoy whose name ends with the verified one is not it.
        let decoy = report(&[
            ("t.py::old", Status::Passed),
            ("x/t.py::new", Status::Passed),
        ]);
        let why = judge_room(&[run(&decoy, true, &base)], "t.py::new").unwrap();
        assert!(why.contains("did not run"), "{why}");
        // Fewer passing cases than the base.
        let lost = report(&[("t.py::new", Status::Passed)]);
        let two = BaseCases {
            clean: true,
            passed: 2,
        };
        let r = RoomRun {
            name: "test",
            report: &lost,
            ok: true,
            base: &two,
        };
        assert!(judge_room(&[r], "t.py::new").unwrap().contains("fewer"));
        // The same name twice: a failing twin fails it.
        let twin = report(&[("t::new", Status::Passed), ("t::new", Status::Failed)]);
        assert!(judge_room(&[run(&twin, true, &base)], "t::new").is_some());
    }

    #[test]
    fn without_the_code_the_verified_case_must_not_pass() {
        let failed = report(&[("t::new", Status::Failed)]);
        let absent = report(&[("t::old", Status::Passed)]);
        let passed = report(&[("t::new", Status::Passed)]);
        assert_eq!(judge_without_code(&[&failed], "t::new"), None);
        assert_eq!(judge_without_code(&[&absent], "t::new"), None);
        assert!(judge_without_code(&[&passed], "t::new").is_some());
        let stubbed = ["m.py: kebabize".to_string()];
        assert_eq!(judge_stubbed(&[&failed], "t::new", &stubbed), None);
        let why = judge_stubbed(&[&absent, &passed], "t::new", &stubbed).unwrap();
        assert!(why.contains("m.py: kebabize"), "{why}");
    }

    #[test]
    fn code_like_files() {
        for f in [
            "a.py",
            "t/helper.sh",
            ".pytest.ini",
            "pytest.toml",
            ".mocharc.json",
            "package.json",
            "x/conftest.py",
        ] {
            assert!(is_code_like(f), "{f}");
        }
        // What is not listed as data is code: a compiled module that shadows the package, a
        // file with no extension a shell suite may source, a native extension.
        for f in [
            "a/inflection.pyc",
            "tests/helpers",
            "t/_x.so",
            "t/tsconfig.json",
        ] {
            assert!(is_code_like(f), "{f}");
        }
        for f in [
            "tests/fixtures/data.json",
            "t/golden.txt",
            "t/in.csv",
            "t/snap.snap",
        ] {
            assert!(!is_code_like(f), "{f}");
        }
    }
}
