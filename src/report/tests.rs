//! Every parser against real runner outputs captured from real runs
//! (`tests/fixtures/reports/`, see its MANIFEST.md for the commands and versions).

use std::path::PathBuf;

use super::*;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reports")
        .join(rel)
}

fn parse(rel: &str, format: Format) -> Report {
    parse_output(&fixture(rel), format).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn failing(r: &Report) -> Vec<&str> {
    r.failing().map(|c| c.name.as_str()).collect()
}

fn counts(r: &Report) -> (u64, u64, u64) {
    let c = r.counts();
    (c.passed, c.failed, c.skipped)
}

fn xfailed(r: &Report) -> u64 {
    r.counts().xfailed
}

#[test]
fn libtest_several_binaries_and_doctests() {
    for format in [Format::Libtest, Format::Auto] {
        let r = parse("libtest/pass.txt", format);
        assert_eq!(r.format, Some(Format::Libtest));
        assert_eq!(counts(&r), (5, 0, 0));
        let files: Vec<_> = r
            .cases
            .iter()
            .map(|c| c.file.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(
            files,
            [
                "src/lib.rs",
                "src/lib.rs",
                "tests/checkout_flow.rs",
                "tests/checkout_flow.rs",
                "src/lib.rs"
            ]
        );
        assert!(r.infra_error.is_none());
    }
}

#[test]
fn libtest_failures_with_excerpts() {
    for f in [
        "libtest/failures.txt",
        "libtest/failures-ansi.txt",
        "libtest/failures-backtrace.txt",
    ] {
        let r = parse(f, Format::Auto);
        assert_eq!(counts(&r), (2, 2, 1), "{f}");
        assert_eq!(
            failing(&r),
            ["tests::applies_discount", "tests::guest_pays_by_card"],
            "{f}"
        );
        let msg = r.cases[2].message.as_deref().unwrap();
        assert!(msg.contains("panicked at src/lib.rs:29:9"), "{f}: {msg}");
        assert!(msg.contains("right: 100"), "{f}: {msg}");
        assert!(r.infra_error.is_none());
    }
    let r = parse("libtest/failures-no-fail-fast.txt", Format::Libtest);
    assert_eq!(counts(&r), (2, 3, 1));
    assert!(failing(&r).contains(&"src/lib.rs - add (line 3)"));
}

#[test]
fn cargo_compile_and_harness_errors_are_infra_also_for_auto() {
    for (f, format) in [
        ("libtest/compile-error.txt", Format::Auto),
        ("libtest/compile-error.txt", Format::Libtest),
        ("nextest/compile-error.txt", Format::Auto),
        ("nextest/compile-error.txt", Format::Nextest),
    ] {
        let r = parse(f, format);
        let e = r
            .infra_error
            .clone()
            .unwrap_or_else(|| panic!("{f} {format}: no infra"));
        assert!(e.contains("E0425") && e.contains("src/lib.rs:17:20"), "{e}");
        assert_eq!(counts(&r), (0, 0, 0));
    }
    for format in [Format::Auto, Format::Libtest] {
        let r = parse("libtest/nightly-option.txt", format);
        let e = r
            .infra_error
            .unwrap_or_else(|| panic!("{format}: no infra"));
        assert!(e.contains("only accepted on the nightly compiler"), "{e}");
    }
    // A test's own `error:` output after its binary started is not the harness refusing.
    let r = parse("libtest/same-names.txt", Format::Auto);
    assert!(r.infra_error.is_none());
}

#[test]
fn auto_prefers_the_runner_that_printed_the_closing_summary() {
    // A vitest run that also printed the TAP of a file importing `node:test`.
    let r = parse("vitest-json/stray-tap.console-default.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Vitest));
    assert_eq!(counts(&r), (3, 0, 0));
    // pytest -q has no banner: its closing counts line says pytest.
    let r = parse("pytest/pass-q.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Pytest));
    assert_eq!(counts(&r), (2, 0, 0));
    let r = parse("pytest/failures-q.txt", Format::Auto);
    assert_eq!((r.format, counts(&r)), (Some(Format::Pytest), (2, 2, 1)));
}

#[test]
fn vitest_console_names_failures_and_counts_the_rest() {
    let r = parse("vitest-json/failures.console-default.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Vitest));
    assert_eq!(counts(&r), (2, 2, 2));
    assert_eq!(
        failing(&r),
        [
            "checkout > guest pays by card",
            "checkout > refunds > refund raises"
        ]
    );
    assert_eq!(r.cases[0].file.as_deref(), Some("fail/checkout.test.js"));
    let loc = r.cases[0].location().unwrap();
    assert_eq!(
        (loc.file.as_str(), loc.line),
        ("fail/checkout.test.js", Some(10))
    );
    for f in [
        "vitest-json/load-error.console-default.txt",
        "vitest-json/transform-error.console-default.txt",
    ] {
        let r = parse(f, Format::Vitest);
        assert!(r.infra_error.is_some(), "{f}");
        assert_eq!(r.counts().failed, 0, "{f}");
    }
}

#[test]
fn a_transform_error_keeps_its_cause_line() {
    for r in [
        parse_file(&fixture("vitest-json/transform-error.json"), Format::Auto).unwrap(),
        parse(
            "vitest-json/transform-error.console-default.txt",
            Format::Auto,
        ),
    ] {
        let e = r.infra_error.unwrap();
        assert!(
            e.contains("[PARSE_ERROR] Unexpected token") && e.contains("bad/broken.test.ts:4:28"),
            "{e}"
        );
    }
}

#[test]
fn pytest_subtests_classes_and_conftest() {
    for f in [
        "pytest/classes-subtests-rA.txt",
        "pytest/classes-subtests-q.txt",
        "pytest/classes-subtests-v.txt",
    ] {
        let r = parse(f, Format::Auto);
        assert_eq!(r.format, Some(Format::Pytest), "{f}");
        // pytest: `2 failed, 4 passed, 1 skipped, 1 xfailed, 2 subtests passed`.
        assert_eq!(counts(&r), (4, 2, 1), "{f}");
        assert_eq!(xfailed(&r), 1, "{f}");
        // A failed subTest fails its test, even though pytest also printed it PASSED.
        assert!(
            failing(&r).contains(&"test_last.py::TestSubtests::test_each"),
            "{f}: {:?}",
            failing(&r)
        );
    }
    let r = parse("pytest/classes-subtests-v.txt", Format::Pytest);
    let status = |n: &str| r.cases.iter().find(|c| c.name == n).map(|c| c.status);
    assert_eq!(
        status("test_last.py::TestFirst::test_basic"),
        Some(Status::Skipped)
    );
    assert_eq!(
        status("test_last.py::TestLast::test_basic"),
        Some(Status::Passed)
    );
    assert_eq!(status("test_last.py::test_rounding"), Some(Status::XFailed));
    for format in [Format::Auto, Format::Pytest] {
        let r = parse("pytest/conftest-import-error.txt", format);
        let e = r.infra_error.unwrap_or_else(|| panic!("{format}"));
        assert!(
            e.contains("ImportError while loading conftest") && e.contains("payment_gateway_sdk"),
            "{e}"
        );
    }
}

#[test]
fn runner_summaries_that_count_parents_are_kept_beside_the_leaves() {
    let r = parse("tap/node-failures.tap", Format::Tap);
    assert_eq!(counts(&r), (3, 3, 1));
    let s = r.runner_summary.expect("node's trailer");
    assert_eq!((s.passed, s.failed, s.skipped, s.xfailed), (3, 4, 1, 1));
    let r = parse("go-json/failures.jsonl", Format::GoJson);
    assert_eq!(counts(&r), (3, 2, 1));
    let s = r.runner_summary.expect("go counts parents");
    // The parent `TestGuestPaysByCard` fails with its `visa` subtest.
    assert_eq!((s.passed, s.failed, s.skipped), (3, 3, 1));
}

#[test]
fn nextest_cases_carry_their_crate_root_like_libtest() {
    let n = parse("nextest/same-names.txt", Format::Auto);
    let l = parse("libtest/same-names.txt", Format::Auto);
    let files = |r: &Report| -> Vec<(String, String)> {
        let mut v: Vec<_> = r
            .cases
            .iter()
            .filter(|c| c.status != Status::Skipped)
            .map(|c| (c.name.clone(), c.file.clone().unwrap_or_default()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(&n), files(&l));
    assert!(files(&n).contains(&("pays".into(), "tests/refunds.rs".into())));
}

#[test]
fn forge_report_reads_a_captured_log_like_verify() {
    // The JSON printed among other output, given as a file with an explicit format.
    let r = parse_file(&fixture("jest-json/failures.console.txt"), Format::JestJson).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("no jest-json JSON found")),
        "{:?}",
        r.notes
    );
    for f in [
        "pytest/failures-q.txt",
        "libtest/compile-error.txt",
        "vitest-json/stray-tap.console-default.txt",
    ] {
        let a = parse_file(&fixture(f), Format::Auto).unwrap();
        let b = parse(f, Format::Auto);
        assert_eq!(
            (a.format, a.counts(), a.infra_error.is_some()),
            (b.format, b.counts(), b.infra_error.is_some()),
            "{f}"
        );
    }
}

#[test]
fn nextest_status_lines_and_summary() {
    let r = parse("nextest/failures.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Nextest));
    assert_eq!(counts(&r), (2, 2, 1));
    assert_eq!(
        failing(&r),
        ["tests::overflow_panics", "guest_pays_by_card"]
    );
    assert_eq!(
        r.cases[2].suite.as_deref(),
        Some("checkout_multi::checkout_flow")
    );
    assert!(
        r.cases[2]
            .message
            .as_deref()
            .unwrap()
            .contains("card total")
    );
    let r = parse("nextest/pass.txt", Format::Nextest);
    assert_eq!(counts(&r), (4, 0, 0));
    let r = parse("nextest/compile-error.txt", Format::Nextest);
    assert!(r.infra_error.unwrap().contains("E0425"));
}

#[test]
fn pytest_every_verbosity() {
    for f in [
        "pytest/failures.txt",
        "pytest/failures-q.txt",
        "pytest/failures-v.txt",
        "pytest/failures-rA.txt",
        "pytest/failures-ansi.txt",
    ] {
        let r = parse(f, Format::Pytest);
        // pytest's own line: `2 failed, 2 passed, 1 skipped, 1 xfailed`.
        assert_eq!(counts(&r), (2, 2, 1), "{f}");
        assert_eq!(xfailed(&r), 1, "{f}: xfailed is not skipped");
        assert_eq!(
            failing(&r),
            [
                "test_checkout.py::test_guest_pays_by_card",
                "test_checkout.py::test_refund_raises"
            ],
            "{f}"
        );
        assert!(r.infra_error.is_none(), "{f}");
    }
    let r = parse("pytest/failures.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Pytest));
    let m = r.cases[0].message.as_deref().unwrap();
    assert!(m.contains("assert 100 == 101"), "{m}");
    assert_eq!(r.cases[0].file.as_deref(), Some("test_checkout.py"));
    // -rA names the passing tests too.
    let r = parse("pytest/failures-rA.txt", Format::Pytest);
    assert!(
        r.cases
            .iter()
            .any(|c| c.name == "test_checkout.py::test_adds_amounts" && c.status == Status::Passed)
    );
}

#[test]
fn pytest_collection_error_is_infra() {
    let r = parse("pytest/collection-error.txt", Format::Auto);
    let e = r.infra_error.clone().expect("infra");
    assert!(
        e.contains("test_gateway.py") && e.contains("ModuleNotFoundError"),
        "{e}"
    );
    assert_eq!(counts(&r).1, 0);
}

#[test]
fn go_json_leaves_and_build_failures() {
    for f in ["go-json/failures.jsonl", "go-json/go1.19-failures.jsonl"] {
        let r = parse(f, Format::Auto);
        assert_eq!(r.format, Some(Format::GoJson));
        let mut names = failing(&r);
        names.sort();
        assert_eq!(names, ["TestGuestPaysByCard/visa", "TestRefund"], "{f}");
        assert_eq!(counts(&r), (3, 2, 1), "{f}");
        assert!(r.infra_error.is_none());
    }
    let r = parse("go-json/failures.jsonl", Format::GoJson);
    let visa = r
        .cases
        .iter()
        .find(|c| c.name == "TestGuestPaysByCard/visa")
        .unwrap();
    assert!(
        visa.message
            .as_deref()
            .unwrap()
            .contains("checkout_test.go"),
        "{:?}",
        visa.message
    );
    for f in [
        "go-json/build-failure.jsonl",
        "go-json/go1.19-build-failure.jsonl",
    ] {
        let r = parse(f, Format::GoJson);
        let e = r
            .infra_error
            .clone()
            .unwrap_or_else(|| panic!("{f}: no infra"));
        assert!(e.contains("undefined: ChargeCard"), "{f}: {e}");
        assert_eq!(counts(&r), (1, 0, 0), "{f}");
    }
}

#[test]
fn jest_and_vitest_json_files() {
    for (f, fmt) in [
        ("jest-json/failures.json", Format::JestJson),
        ("vitest-json/failures.json", Format::VitestJson),
    ] {
        let r = parse_file(&fixture(f), Format::Auto).unwrap();
        assert_eq!(r.format, Some(fmt));
        assert_eq!(counts(&r), (2, 2, 2), "{f}");
        assert_eq!(
            failing(&r),
            [
                "checkout guest pays by card",
                "checkout refunds refund raises"
            ],
            "{f}"
        );
        assert!(r.infra_error.is_none());
        assert!(r.cases[1].message.as_deref().unwrap().contains("101"));
    }
    for f in ["jest-json/load-error.json", "vitest-json/load-error.json"] {
        let r = parse_file(&fixture(f), Format::Auto).unwrap();
        let e = r.infra_error.clone().unwrap_or_else(|| panic!("{f}"));
        assert!(e.contains("payment-gateway-sdk"), "{e}");
        assert_eq!(counts(&r), (1, 0, 0));
    }
}

#[test]
fn jest_json_on_stdout_among_other_output() {
    let r = parse("jest-json/failures-json-to-stdout.json", Format::Auto);
    assert_eq!(r.format, Some(Format::JestJson));
    assert_eq!(counts(&r), (2, 2, 2));
}

#[test]
fn junit_from_several_producers() {
    let r = parse_file(&fixture("junit/pytest-failures.xml"), Format::Auto).unwrap();
    // `<skipped type="pytest.xfail">` is an expected failure, not a skip.
    assert_eq!(counts(&r), (2, 2, 1));
    assert_eq!(xfailed(&r), 1);
    assert_eq!(
        failing(&r),
        [
            "test_checkout.test_guest_pays_by_card",
            "test_checkout.test_refund_raises"
        ]
    );
    assert!(
        r.cases[1]
            .message
            .as_deref()
            .unwrap()
            .contains("assert 100 == 101")
    );
    for f in ["junit/jest-failures.xml", "junit/vitest-failures.xml"] {
        let r = parse_file(&fixture(f), Format::Junit).unwrap();
        assert_eq!(r.counts().failed, 2, "{f}");
        assert!(r.infra_error.is_none(), "{f}");
    }
    for f in [
        "junit/pytest-collection-error.xml",
        "junit/jest-load-error-suite-errors.xml",
        "junit/vitest-load-error.xml",
    ] {
        let r = parse_file(&fixture(f), Format::Junit).unwrap();
        assert!(r.infra_error.is_some(), "{f}");
        assert_eq!(r.counts().failed, 0, "{f}");
    }
}

#[test]
fn junit_truncated_counts_what_it_saw_and_garbage_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(fixture("junit/pytest-failures.xml")).unwrap();
    let cut = &full[..full.find("test_settles_with_bank").unwrap()];
    let p = dir.path().join("cut.xml");
    std::fs::write(&p, cut).unwrap();
    let r = parse_file(&p, Format::Junit).unwrap();
    assert_eq!(r.counts().failed, 2);
    assert!(r.incomplete.is_some());
    // An unclosed case has no result: it is not counted as passed.
    let open_case = dir.path().join("open.xml");
    std::fs::write(&open_case, "<testsuite><testcase name=\"x\">").unwrap();
    let r = parse_file(&open_case, Format::Junit).unwrap();
    assert_eq!(r.counts(), Counts::default());
    assert!(r.incomplete.is_some());
    let g = dir.path().join("garbage.xml");
    std::fs::write(&g, "this is not xml <<<").unwrap();
    assert!(matches!(
        parse_file(&g, Format::Junit),
        Err(ReportError::Malformed { .. })
    ));
    assert!(matches!(
        parse_file(&dir.path().join("absent.xml"), Format::Junit),
        Err(ReportError::Missing { .. })
    ));
}

#[test]
fn tap_node_nested_and_prove() {
    let r = parse("tap/node-failures.tap", Format::Auto);
    assert_eq!(r.format, Some(Format::Tap));
    let f = failing(&r);
    assert!(f.contains(&"guest-pays-by-card"), "{f:?}");
    assert!(f.contains(&"refunds > refund raises"), "{f:?}");
    assert!(!f.contains(&"refunds"), "parents are not cases: {f:?}");
    let gp = r
        .cases
        .iter()
        .find(|c| c.name == "guest-pays-by-card")
        .unwrap();
    assert!(gp.message.as_deref().unwrap().contains("100 !== 101"));
    assert!(gp.file.as_deref().unwrap().ends_with("checkout.test.mjs"));
    assert!(r.infra_error.is_none());
    let r = parse("tap/node-load-error.tap", Format::Tap);
    assert!(
        r.infra_error
            .clone()
            .unwrap()
            .contains("ERR_MODULE_NOT_FOUND")
    );
    assert_eq!(r.counts().failed, 0);
    let r = parse("tap/prove-failures.txt", Format::Tap);
    let f = failing(&r);
    assert!(
        f.contains(&"guest_pays_by_card") && f.contains(&"refund raises"),
        "{f:?}"
    );
}

#[test]
fn format_names_round_trip() {
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
    }
    assert!("xunit".parse::<Format>().unwrap_err().contains("junit"));
}

#[test]
fn jest_console_names_failures_counts_the_rest_and_sees_load_errors() {
    let r = parse("jest-json/failures.console.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Jest));
    assert_eq!(counts(&r), (2, 2, 2));
    assert_eq!(
        failing(&r),
        [
            "checkout > guest pays by card",
            "checkout > refunds > refund raises"
        ]
    );
    let loc = r.cases[0].location().unwrap();
    assert_eq!(
        (loc.file.as_str(), loc.line),
        ("fail/checkout.test.js", Some(9))
    );
    assert!(
        r.cases[0]
            .message
            .as_deref()
            .unwrap()
            .contains("Expected: 101")
    );
    let r = parse("jest-json/load-error.console.txt", Format::Auto);
    let e = r.infra_error.clone().unwrap();
    assert!(
        e.contains("load/gateway.test.js: Cannot find module 'payment-gateway-sdk'")
            && e.contains("load/syntax.test.js: SyntaxError"),
        "{e}"
    );
    assert_eq!(counts(&r), (1, 0, 0));
}

/// `npx jest --verbose` (a real run): every case named, nested by its `describe` titles the
/// way the failure headers name them, a failure named once, a title's own parentheses kept.
#[test]
fn jest_console_verbose_names_every_case() {
    let r = parse("jest-json/verbose.console.txt", Format::Jest);
    assert_eq!(counts(&r), (2, 2, 2));
    let names: Vec<(&str, Status)> = r
        .cases
        .iter()
        .map(|c| (c.name.as_str(), c.status))
        .collect();
    assert_eq!(
        names,
        [
            ("top level works", Status::Passed),
            ("checkout > guest pays by card", Status::Failed),
            ("checkout > member pays (10% off)", Status::Passed),
            ("checkout > refunds > refund raises", Status::Failed),
            ("checkout > refunds > partial refund", Status::Skipped),
            (
                "checkout > refunds > refund to a gift card",
                Status::Skipped
            ),
        ]
    );
    assert!(
        r.cases[1]
            .message
            .as_deref()
            .unwrap()
            .contains("Expected: 101")
    );
    assert!(
        r.cases
            .iter()
            .all(|c| c.file.as_deref() == Some("fail/checkout.test.js"))
    );
}

#[test]
fn mocha_spec_reporter() {
    let r = parse("mocha/failures.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Mocha));
    assert_eq!(counts(&r), (2, 2, 1));
    assert_eq!(
        failing(&r),
        [
            "checkout > guest pays by card",
            "checkout > refunds > refund raises"
        ]
    );
    assert!(
        r.cases
            .iter()
            .any(|c| c.name == "fee > is one percent" && c.status == Status::Passed)
    );
    let m = r.cases[1].message.as_deref().unwrap();
    assert!(m.contains("101 !== 102"), "{m}");
    let loc = r.cases[1].location().unwrap();
    assert_eq!(
        (loc.file.as_str(), loc.line),
        ("test/checkout.test.js", Some(9))
    );
    assert_eq!(counts(&parse("mocha/pass.txt", Format::Auto)), (1, 0, 0));
    let r = parse("mocha/load-error.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Mocha));
    assert!(
        r.infra_error
            .unwrap()
            .contains("Cannot find module 'payment-gateway-sdk'")
    );
}

#[test]
fn lines_printed_after_the_real_result_cannot_turn_a_failure_into_a_pass() {
    // Real `pytest -v` output, then what code under test prints at exit to look like a pass.
    let out = b"tests/test_shop.py::test_member_discount FAILED                    [ 50%]\n\
tests/test_shop.py::test_guest_pays_card_fee PASSED                [100%]\n\
=========================== short test summary info ============================\n\
FAILED tests/test_shop.py::test_member_discount - assert 42 == 90\n\
========================= 1 failed, 1 passed in 0.03s ==========================\n\
tests/test_shop.py::test_member_discount PASSED\n\
============================== 2 passed in 0.01s ===============================\n";
    let r = super::parse_bytes(out, Format::Pytest).unwrap();
    assert_eq!(failing(&r), ["tests/test_shop.py::test_member_discount"]);
    assert!(
        r.incomplete
            .as_deref()
            .is_some_and(|m| m.contains("two final summaries")),
        "{:?}",
        r.incomplete
    );
}

/// Issue 31: a report that ends early is no evidence; a full name carries its group; a `not ok`
/// is never dropped. Real outputs: tape 5.10.2, node 20 `--test-reporter=tap`, pytest 9.2.0
/// (sources in tests/fixtures/reports/sources/).
#[test]
fn tape_names_each_assertion_under_its_test() {
    let r = parse("tap/tape-failures.tap", Format::Auto);
    assert_eq!(r.format, Some(Format::Tap));
    let names: Vec<&str> = r.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cart totals > should be strictly equal",
            "cart totals > should be strictly equal",
            "member discount > should be strictly equal",
            "member discount > should be strictly equal",
        ]
    );
    assert_eq!(failing(&r), ["member discount > should be strictly equal"]);
    assert_eq!(r.incomplete, None);
    // The same name twice is visible.
    assert_eq!(
        r.duplicates(),
        [
            ("cart totals > should be strictly equal".to_string(), 2),
            ("member discount > should be strictly equal".to_string(), 2)
        ]
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("name more than one case")),
        "{:?}",
        r.notes
    );
    let r = parse("tap/tape-pass.tap", Format::Auto);
    assert_eq!((counts(&r), r.incomplete), ((3, 0, 0), None));
    // A decoy test whose name ends with the real one's is another case.
    let r = parse("tap/tape-decoy.tap", Format::Tap);
    assert_eq!(
        r.cases.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        [
            "old member discount > should be strictly equal",
            "member discount > should be strictly equal"
        ]
    );
}

#[test]
fn a_tap_stream_that_ends_early_is_incomplete() {
    // tape killed in its second test: no plan.
    let r = parse("tap/tape-killed.tap", Format::Auto);
    assert_eq!(counts(&r), (1, 0, 0));
    let why = r.incomplete.expect("no plan");
    assert!(why.contains("no plan"), "{why}");
    // A plan that the points do not reach: prove's t/03-die.t planned 2 and ran 1.
    let r = parse("tap/prove-failures.txt", Format::Tap);
    let why = r.incomplete.expect("a short plan");
    assert!(
        why.contains("the plan says 1..2 but 1 test point(s) ran"),
        "{why}"
    );
    // Complete streams, nested or per prove file, stay complete.
    for f in [
        "tap/node-pass.tap",
        "tap/node-failures.tap",
        "tap/node-load-error.tap",
        "tap/prove-pass.txt",
        "tap/tape-failures.tap",
    ] {
        assert_eq!(parse(f, Format::Tap).incomplete, None, "{f}");
    }
    let p = |s: &str| parse_bytes(s.as_bytes(), Format::Tap).unwrap();
    assert!(
        p("TAP version 14\nok 1 - a\nok 2 - b\n")
            .incomplete
            .is_some()
    );
    assert!(
        p("TAP version 14\n1..3\nok 1 - a\nok 2 - b\n")
            .incomplete
            .is_some()
    );
    assert!(
        p("TAP version 14\n1..2\nok 1 - a\nok 2 - b\n")
            .incomplete
            .is_none()
    );
    assert!(
        p("TAP version 14\n1..3\nok 1 - a\nok 2 - b\nok 3 - c\nok 4 - d\n")
            .incomplete
            .is_some()
    );
    // A subtest whose own plan its points do not reach.
    let short_sub = "TAP version 14\n    1..2\n    ok 1 - inner\nok 1 - outer\n1..1\n";
    assert!(p(short_sub).incomplete.unwrap().contains("in a subtest"));
}

#[test]
fn a_parent_s_own_not_ok_after_passing_subtests_is_never_dropped() {
    // node: `checkout` runs a passing subtest, then its own assertion fails.
    let r = parse("tap/node-parent-fails-after-subtests.tap", Format::Auto);
    assert_eq!(failing(&r), ["checkout"]);
    assert_eq!(counts(&r), (2, 1, 0));
    assert!(
        r.cases[1]
            .message
            .as_deref()
            .unwrap()
            .contains("100 !== 90")
    );
    assert_eq!(r.incomplete, None);
    // TAP 14 without headers: the indented points belong to the parent that follows.
    let bare = "TAP version 14\n    ok 1 - inner\n    1..1\nnot ok 1 - outer\n1..1\n";
    let r = parse_bytes(bare.as_bytes(), Format::Tap).unwrap();
    assert_eq!(failing(&r), ["outer"]);
    // A parent that fails because a child did repeats it: one failure, the child's.
    let r = parse("tap/node-failures.tap", Format::Tap);
    assert!(!failing(&r).contains(&"refunds"));
}

#[test]
fn pytest_that_ran_fewer_than_it_collected_is_incomplete() {
    // `pytest.exit(returncode=0)` in the second of three tests: exit 0, "1 passed".
    let r = parse("pytest/exit-mid-run-rA.txt", Format::Auto);
    assert_eq!(r.format, Some(Format::Pytest));
    assert_eq!(counts(&r), (1, 0, 0));
    let why = r.incomplete.expect("collected 3, ran 1");
    assert!(why.contains("collected 3 item(s) but only 1 ran"), "{why}");
    // Every complete run stays complete, in every verbosity.
    for f in [
        "pytest/pass.txt",
        "pytest/pass-rA.txt",
        "pytest/pass-q.txt",
        "pytest/failures.txt",
        "pytest/failures-v.txt",
        "pytest/failures-rA.txt",
        "pytest/failures-ansi.txt",
        "pytest/classes-subtests-v.txt",
        "pytest/classes-subtests-rA.txt",
    ] {
        assert_eq!(parse(f, Format::Pytest).incomplete, None, "{f}");
    }
    let p = |s: &str| parse_bytes(s.as_bytes(), Format::Pytest).unwrap();
    // Collected, then nothing: the process died.
    assert!(
        p("collected 2 items\n\nt.py::a PASSED\n")
            .incomplete
            .unwrap()
            .contains("no closing summary")
    );
    // Deselected items are not to run.
    assert!(
        p("collected 3 items / 1 deselected / 2 selected\nPASSED t.py::a\nPASSED t.py::b\n==== 2 passed, 1 deselected in 0.01s ====\n")
            .incomplete
            .is_none()
    );
}

#[test]
fn a_closing_summary_that_counts_fewer_than_the_lines_name_is_incomplete() {
    // Lines printed by the code under test to look like results, then the real summary.
    let out =
        "collected 1 item\nPASSED t.py::real\nPASSED t.py::fake\n==== 1 passed in 0.01s ====\n";
    let r = parse_bytes(out.as_bytes(), Format::Pytest).unwrap();
    assert!(r.incomplete.unwrap().contains("closing summary counts 1"));
}
