//! `forge verify` end to end on temporary git repositories: reports from real runner outputs,
//! coverage, JSON, and every fault the issue lists.

mod common;

use common::{FIXTURES, Repo, tap_script};

/// A command that prints a captured real runner output and exits as that runner did.
fn replay(fixture: &str, code: i32) -> String {
    format!("cat '{FIXTURES}/{fixture}'; exit {code}")
}

#[test]
fn real_cargo_failures_are_reported_with_cases_and_excerpts() {
    let r = Repo::with_command(&replay("libtest/failures.txt", 101), "auto");
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 0);
    assert!(
        o.stdout.contains("2 passed, 2 failed, 1 skipped (libtest)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("FAILED tests::guest_pays_by_card"));
    assert!(o.stdout.contains("panicked at src/lib.rs:29:9"));
    assert!(o.stdout.contains("log: .tmp/.forge/logs/"));
    assert_eq!(o.last_line(), "Verdict: FAIL");
}

#[test]
fn passing_run_is_pass() {
    let r = Repo::with_command(&replay("libtest/pass.txt", 0), "libtest");
    let o = r.forge(&["verify"]);
    assert!(
        o.stdout.contains("5 passed, 0 failed, 0 skipped (libtest)"),
        "{}",
        o.stdout
    );
    assert_eq!(o.last_line(), "Verdict: PASS");
}

#[test]
fn compile_error_is_an_infra_error_not_failing_cases() {
    let r = Repo::with_command(&replay("libtest/compile-error.txt", 101), "libtest");
    let o = r.forge(&["verify", "--json"]);
    let v = o.json();
    assert_eq!(v["verdict"], "FAIL");
    assert_eq!(v["tests"]["failed"], 0);
    assert!(
        v["tests"]["infra_error"]
            .as_str()
            .unwrap()
            .contains("E0425")
    );
    let o = r.forge(&["verify"]);
    assert!(o.stdout.contains("infrastructure error"), "{}", o.stdout);
}

#[test]
fn pytest_collection_error_and_go_build_failure_are_infra() {
    for (fixture, code, fmt) in [
        ("pytest/collection-error.txt", 2, "pytest"),
        ("go-json/build-failure.jsonl", 1, "go-json"),
        ("go-json/go1.19-build-failure.jsonl", 2, "auto"),
    ] {
        let r = Repo::with_command(&replay(fixture, code), fmt);
        let v = r.forge(&["verify", "--json"]).json();
        assert_eq!(v["verdict"], "FAIL", "{fixture}");
        assert!(!v["tests"]["infra_error"].is_null(), "{fixture}: {v}");
    }
}

#[test]
fn json_has_the_contract_fields() {
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.write(
        "tests/run.sh",
        &tap_script(&[("guest pays by card", true), ("refunds", false)]),
    );
    r.change("checkout", &["guest pays by card", "member gets discount"]);
    let o = r.forge(&["verify", "--change", "checkout", "--json"]);
    assert_eq!(o.code, 0, "{o:?}");
    let v = o.json();
    assert_eq!(v["verdict"], "FAIL");
    let c = &v["commands"][0];
    assert_eq!(c["name"], "test");
    assert_eq!(c["exit_code"], 1);
    assert_eq!(c["timed_out"], false);
    assert!(c["duration_ms"].is_u64());
    assert_eq!(v["tests"]["passed"], 1);
    assert_eq!(v["tests"]["failed"], 1);
    assert_eq!(v["tests"]["skipped"], 0);
    assert!(v["tests"]["infra_error"].is_null());
    assert_eq!(v["tests"]["failing"], serde_json::json!(["refunds"]));
    assert_eq!(v["scenarios"][0]["id"], "guest-pays-by-card");
    assert_eq!(v["scenarios"][0]["status"], "covered");
    assert_eq!(v["scenarios"][1]["id"], "member-gets-discount");
    assert_eq!(v["scenarios"][1]["status"], "uncovered");
    let b = &v["breaker"];
    assert_eq!(b["consecutive_failures"], 1);
    assert_eq!(b["max_failures"], 3);
    assert_eq!(b["open"], false);
    assert_eq!(b["total_attempts"], 1);
    // Without --change there is no breaker.
    let v = r.forge(&["verify", "--json"]).json();
    assert!(v["breaker"].is_null());
}

#[test]
fn scenario_coverage_by_marker_and_by_name_and_failing() {
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.change(
        "checkout",
        &[
            "guest pays by card",
            "member gets discount",
            "refund on error",
        ],
    );
    // One scenario marked, one named, one marked on a failing test.
    r.write(
        "tests/run.sh",
        "#!/bin/sh\necho 'TAP version 13'\n# @scenario checkout/guest-pays-by-card\necho 'ok 1 - visa works'\necho 'ok 2 - member gets discount'\necho 'not ok 3 - refund on error'\necho '1..3'\nexit 1\n",
    );
    let v = r
        .forge(&["verify", "--change", "checkout", "--json"])
        .json();
    let st: Vec<(String, String)> = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    // The marker sits on an `echo`, not on a test Forge can identify: it ties to nothing
    // (a marker covers only the test it marks, seen passing).
    assert_eq!(
        st,
        [
            ("guest-pays-by-card".to_string(), "uncovered".to_string()),
            ("member-gets-discount".into(), "covered".into()),
            ("refund-on-error".into(), "failing".into()),
        ]
    );
    assert!(
        v["scenarios"][0]["evidence"][0]
            .as_str()
            .unwrap()
            .contains("not on a test Forge can identify"),
        "{}",
        v["scenarios"][0]
    );
    // A marker in documentation does not count.
    r.write("NOTES.md", "@scenario checkout/member-gets-discount\n");
    r.write("tests/run.sh", &tap_script(&[("visa", true)]));
    let v = r
        .forge(&["verify", "--change", "checkout", "--json"])
        .json();
    assert_eq!(v["scenarios"][1]["status"], "uncovered");
    // Markers in git-ignored files do not count either.
    r.write(".gitignore", "build/\n");
    r.write(
        "build/gen.rs",
        "// @scenario checkout/member-gets-discount\n",
    );
    let v = r
        .forge(&["verify", "--change", "checkout", "--json"])
        .json();
    assert_eq!(v["scenarios"][1]["status"], "uncovered");
}

#[test]
fn openspec_tree_is_read() {
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.write(
        "openspec/changes/add-2fa/specs/auth/spec.md",
        "## ADDED Requirements\n\n### Requirement: Two-factor login\nThe system SHALL ask for a code.\n\n#### Scenario: OTP required\n- **WHEN** valid credentials are given\n- **THEN** an OTP challenge is shown\n",
    );
    r.write("tests/run.sh", &tap_script(&[("otp required", true)]));
    let o = r.forge(&["verify", "--change", "add-2fa"]);
    assert!(
        o.stdout.contains("covered   add-2fa/otp-required"),
        "{}",
        o.stdout
    );
    assert_eq!(
        o.last_line(),
        "Breaker: 0/3 consecutive failures for change \"add-2fa\" — verify passed."
    );
    let o = r.forge(&["change", "list"]);
    assert!(
        o.stdout.contains("add-2fa") && o.stdout.contains("openspec"),
        "{}",
        o.stdout
    );
}

#[test]
fn hanging_command_is_killed_with_its_children_at_the_timeout() {
    let r = Repo::bare();
    r.config("verify:\n  commands:\n    - name: test\n      run: 'sleep 300 & echo $! > child.pid; sleep 300'\n      timeout: 1\n");
    let started = std::time::Instant::now();
    let o = r.forge(&["verify"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert!(o.stdout.contains("timed out after 1 s"), "{}", o.stdout);
    assert_eq!(o.last_line(), "Verdict: FAIL");
    let pid = r.read("child.pid").trim().to_string();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z"),
        "child alive: {stat}"
    );
    let v = r.forge(&["verify", "--json"]).json();
    assert_eq!(v["commands"][0]["timed_out"], true);
}

#[test]
fn missing_command_is_a_clear_fail() {
    let r = Repo::with_command("no-such-test-runner-xyz --all", "auto");
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("exit 127"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("command not found — check `verify.commands[0].run`"),
        "{}",
        o.stdout
    );
    assert_eq!(o.last_line(), "Verdict: FAIL");
}

#[test]
fn report_files_absent_malformed_or_stale() {
    let r = Repo::bare();
    r.config("verify:\n  commands:\n    - {name: test, run: 'true', report: junit, report_path: out/junit.xml}\n");
    let o = r.forge(&["verify"]);
    assert!(o.stdout.contains("does not exist"), "{}", o.stdout);
    assert_eq!(o.last_line(), "Verdict: FAIL");

    r.config("verify:\n  commands:\n    - {name: test, run: 'mkdir -p out; echo \"not xml at all\" > out/junit.xml', report: junit, report_path: out/junit.xml}\n");
    let o = r.forge(&["verify"]);
    assert!(o.stdout.contains("not valid junit"), "{}", o.stdout);
    assert_eq!(o.last_line(), "Verdict: FAIL");

    // Cut off mid-write (the runner was killed): counted, but never a PASS.
    r.config("verify:\n  commands:\n    - {name: test, run: 'mkdir -p out; printf \"<testsuite><testcase name=\\\"a\\\"/><testcase name=\\\"b\\\">\" > out/junit.xml', report: junit, report_path: out/junit.xml}\n");
    let o = r.forge(&["verify"]);
    assert!(o.stdout.contains("cut off"), "{}", o.stdout);
    assert_eq!(o.last_line(), "Verdict: FAIL");

    // A report left by an earlier run is removed before the command runs.
    r.write(
        "out/junit.xml",
        &std::fs::read_to_string(format!("{FIXTURES}/junit/vitest-failures.xml")).unwrap(),
    );
    r.config("verify:\n  commands:\n    - {name: test, run: 'true', report: junit, report_path: out/junit.xml}\n");
    let o = r.forge(&["verify"]);
    assert!(o.stdout.contains("does not exist"), "{}", o.stdout);

    // A real report written by the command is read.
    r.config(&format!(
        "verify:\n  commands:\n    - {{name: test, run: 'cp {FIXTURES}/junit/pytest-failures.xml out/junit.xml; exit 1', report: junit, report_path: out/junit.xml}}\n"
    ));
    let v = r.forge(&["verify", "--json"]).json();
    assert_eq!(v["tests"]["failed"], 2, "{v}");
    assert_eq!(v["tests"]["passed"], 2);
}

/// Red team: the code under test made the report's folder a link to a person's folder (Forge's
/// removal of the "old report" deleted their file) or the report a FIFO (Forge's read hung the
/// Stop hook). The report path is cleared and read with no link on the way, never blocking.
#[test]
fn a_report_path_through_a_link_or_a_fifo_neither_deletes_nor_hangs() {
    let r = Repo::bare();
    let outside = tempfile::tempdir().unwrap();
    let theirs = outside.path().join("junit.xml");
    std::fs::write(&theirs, "a person's file\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), r.path().join("out")).unwrap();
    r.config("verify:\n  commands:\n    - {name: test, run: 'true', report: junit, report_path: out/junit.xml}\n");
    let o = r.forge(&["verify"]);
    assert!(theirs.exists(), "Forge deleted a file through a link");
    assert!(o.stdout.contains("symbolic link"), "{}", o.stdout);
    assert_eq!(o.last_line(), "Verdict: FAIL");

    std::fs::remove_file(r.path().join("out")).unwrap();
    r.config("verify:\n  commands:\n    - {name: test, run: 'mkdir -p out && mkfifo out/junit.xml', report: junit, report_path: out/junit.xml}\n");
    let mut child = r
        .forge_cmd(&["verify"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ended = false;
    for _ in 0..300 {
        if child.try_wait().unwrap().is_some() {
            ended = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if !ended {
        let _ = child.kill();
    }
    assert!(ended, "forge verify hung on a FIFO report");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not a regular file"), "{text}");
    assert!(text.trim_end().ends_with("Verdict: FAIL"), "{text}");
}

#[test]
fn non_utf8_ansi_and_crlf_output() {
    let r = Repo::bare();
    r.write(
        "run.sh",
        "printf 'running 2 tests\\r\\n\\033[32mtest a ... ok\\033[0m\\r\\ntest b\\377 ... FAILED\\r\\n\\r\\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\\r\\n'\nexit 101\n",
    );
    r.config("verify:\n  commands:\n    - {name: test, run: sh run.sh, report: libtest}\n");
    let v = r.forge(&["verify", "--json"]).json();
    assert_eq!(v["tests"]["passed"], 1, "{v}");
    assert_eq!(v["tests"]["failed"], 1);
    assert_eq!(v["tests"]["failing"][0], "b\u{fffd}");
}

#[test]
// The child is reaped with wait4 below, which also returns its own peak RSS.
#[allow(clippy::zombie_processes)]
fn enormous_output_keeps_memory_bounded() {
    // 1 GiB of output through a real parser; Forge's peak memory must stay small.
    let r = Repo::with_command(
        "yes 'test output line that is not a result' | head -c 1073741824",
        "libtest",
    );
    let mut child = r
        .forge_cmd(&["verify", "--json", "--quiet"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = {
        use std::io::Read;
        let mut s = String::new();
        child.stdout.take().unwrap().read_to_string(&mut s).unwrap();
        s
    };
    // Reap this child alone and read its own peak RSS (Linux wait4 rusage).
    let mut status = 0;
    let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { nix::libc::wait4(pid as i32, &mut status, 0, &mut usage) };
    assert_eq!(got, pid as i32);
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 48, "peak RSS {peak_mib} MiB");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["commands"][0]["output_bytes"], 1_073_741_824u64);
    assert_eq!(v["commands"][0]["exit_code"], 0);
}

#[test]
fn configuration_errors_exit_2_and_name_file_and_key() {
    let r = Repo::bare();
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains(".forge/config.yaml") && o.stderr.contains("forge init"),
        "{}",
        o.stderr
    );

    for (yaml, needle) in [
        (
            "verify:\n  commands:\n    - {name: t, run: x, report: xunit}\n",
            "xunit",
        ),
        (
            "verify:\n  commands:\n    - {name: t, run: x, timeot: 3}\n",
            "timeot",
        ),
        (
            "verify:\n  commands:\n    - {name: t, run: x, timeout: soon}\n",
            "soon",
        ),
        ("verify:\n  commands: [\n", ".forge/config.yaml"),
    ] {
        r.config(yaml);
        let o = r.forge(&["verify"]);
        assert_eq!(o.code, 2, "{yaml}");
        assert!(o.stderr.contains(needle), "{yaml}: {}", o.stderr);
        assert!(o.stderr.contains("config.yaml"), "{}", o.stderr);
    }
    r.config("verify:\n  commands:\n    - {name: t, run: 'true'}\n");
    let o = r.forge(&["verify", "--change", "nope"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("forge change new nope"), "{}", o.stderr);
    let o = r.forge(&["verify", "--change", "../etc"]);
    assert_eq!(o.code, 2);
}

#[test]
fn verify_from_a_subfolder_finds_the_project() {
    let r = Repo::with_command(&replay("libtest/pass.txt", 0), "libtest");
    std::fs::create_dir_all(r.path().join("src/deep")).unwrap();
    let o = r
        .forge_cmd(&["verify"])
        .current_dir(r.path().join("src/deep"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("Verdict: PASS\n"));
}

#[test]
fn no_test_case_is_no_pass_unless_the_command_allows_it() {
    for (yaml, verdict, needle) in [
        (
            "{name: test, run: 'true', report: pytest}",
            "FAIL",
            "report: no test case in the report",
        ),
        (
            "{name: test, run: 'true', report: tap}",
            "FAIL",
            "report: no test case in the report",
        ),
        (
            "{name: test, run: 'true', report: pytest, allow_empty: true}",
            "PASS",
            "",
        ),
        ("{name: test, run: 'true', report: none}", "PASS", ""),
        (
            "{name: test, run: 'echo all good', report: auto}",
            "FAIL",
            "no test runner's output was recognised (name the runner with `report:`, or set `report: none`",
        ),
        (
            "{name: test, run: 'echo all good', allow_empty: true}",
            "PASS",
            "",
        ),
    ] {
        let r = Repo::bare();
        r.config(&format!("verify:\n  commands:\n    - {yaml}\n"));
        let o = r.forge(&["verify"]);
        assert_eq!(
            o.last_line(),
            format!("Verdict: {verdict}"),
            "{yaml}: {o:?}"
        );
        assert!(o.stdout.contains(needle), "{yaml}: {}", o.stdout);
        if verdict == "FAIL" {
            let v = r.forge(&["verify", "--json"]).json();
            assert!(
                v["reasons"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("test: no test case in the report"),
                "{v}"
            );
        }
    }
    // An explicit empty-is-fine on a command that reads no report is a configuration mistake.
    let r = Repo::bare();
    r.config(
        "verify:\n  commands:\n    - {name: t, run: 'true', report: none, allow_empty: true}\n",
    );
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("verify.commands[0].allow_empty"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_suite_that_exits_0_before_running_is_no_pass() {
    // Real pytest output: the module under test calls `os._exit(0)` on import.
    for format in ["pytest", "auto"] {
        let r = Repo::with_command(&replay("pytest/os-exit-0-on-import.txt", 0), format);
        let o = r.forge(&["verify", "--strict"]);
        assert_eq!(o.code, 1, "{format}: {o:?}");
        assert!(
            o.stdout.contains("report: no test case in the report\n"),
            "{format}: {}",
            o.stdout
        );
    }
}

/// A repository with the real sources a fixture was captured from, under `to`.
fn with_sources(r: &Repo, from: &str, to: &str) {
    let src = std::path::Path::new(FIXTURES).join("sources").join(from);
    let dest = r.path().join(to);
    if src.is_dir() {
        std::fs::create_dir_all(&dest).unwrap();
        common::copy_dir(&src, &dest);
    } else {
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(src, dest).unwrap();
    }
}

fn scenario_states(v: &serde_json::Value) -> Vec<(String, String)> {
    v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_pytest_marker_ties_to_its_class_and_function_only() {
    // Real pytest 9 output of tests/fixtures/reports/sources/test_last.py: `TestLast::test_basic`
    // (marked) passes; same-named methods elsewhere fail (`TestBroken`) or are skipped
    // (`TestFirst`); a subTest of `TestSubtests::test_each` fails.
    for fixture in [
        "pytest/classes-subtests-v.txt",
        "pytest/classes-subtests-rA.txt",
    ] {
        let r = Repo::with_command(&replay(fixture, 1), "auto");
        with_sources(&r, "test_last.py", "test_last.py");
        r.change("listing", &["last item"]);
        let v = r.forge(&["verify", "--change", "listing", "--json"]).json();
        assert_eq!(
            scenario_states(&v),
            [("last-item".to_string(), "covered".to_string())],
            "{fixture}: {}",
            v["scenarios"]
        );
    }
    let r = Repo::with_command(&replay("pytest/classes-subtests-v.txt", 1), "pytest");
    let src = std::fs::read_to_string(format!("{FIXTURES}/sources/test_last.py")).unwrap();
    // Move the marker onto the skipped `TestFirst.test_basic`, and mark the subtest test.
    let src = src
        .replace("    # @scenario listing/last-item\n", "")
        .replace(
            "    @pytest.mark.skip(reason=\"not ready\")",
            "    # @scenario listing/first-item\n    @pytest.mark.skip(reason=\"not ready\")",
        )
        .replace(
            "    def test_each(self):",
            "    # @scenario listing/each-item\n    def test_each(self):",
        );
    r.write("test_last.py", &src);
    r.change("listing", &["first item", "each item"]);
    let v = r.forge(&["verify", "--change", "listing", "--json"]).json();
    assert_eq!(
        scenario_states(&v),
        [
            ("first-item".to_string(), "uncovered".to_string()),
            ("each-item".into(), "failing".into())
        ],
        "{}",
        v["scenarios"]
    );
    assert!(
        v["scenarios"][0]["evidence"][0]
            .as_str()
            .unwrap()
            .contains("TestFirst::test_basic"),
        "{}",
        v["scenarios"][0]
    );
}

#[test]
fn a_rust_marker_ties_to_its_file_and_module_under_libtest_and_nextest() {
    // Real cargo test / nextest output of tests/fixtures/reports/sources/shop: `pays` exists in
    // tests/checkout.rs (marked, passes) and tests/refunds.rs (fails); `totals` in src/lib.rs
    // (passes) and src/cart.rs (marked, fails).
    for (fixture, code, format) in [
        ("libtest/same-names.txt", 101, "libtest"),
        ("nextest/same-names.txt", 100, "nextest"),
        ("nextest/same-names.txt", 100, "auto"),
    ] {
        let r = Repo::with_command(&replay(fixture, code), format);
        with_sources(&r, "shop", ".");
        r.change("checkout", &["guest pays by card", "member gets discount"]);
        let v = r
            .forge(&["verify", "--change", "checkout", "--json"])
            .json();
        assert_eq!(
            scenario_states(&v),
            [
                ("guest-pays-by-card".to_string(), "covered".to_string()),
                ("member-gets-discount".into(), "failing".into())
            ],
            "{fixture} as {format}: {}",
            v["scenarios"]
        );
        assert_eq!(
            v["scenarios"][1]["evidence"],
            serde_json::json!(["failing test: cart::tests::totals"]),
            "{fixture}"
        );
    }
}

#[test]
fn a_js_marker_ties_to_its_describe_path() {
    // Real vitest JSON: `checkout > guest pays by card` fails, `checkout > adds amounts`
    // passes, `checkout > settles with bank` is skipped.
    let r = Repo::bare();
    r.config(&format!(
        "verify:\n  commands:\n    - {{name: test, run: 'mkdir -p out; cp {FIXTURES}/vitest-json/failures.json out/r.json; exit 1', report: vitest-json, report_path: out/r.json}}\n"
    ));
    r.write(
        "fail/checkout.test.js",
        "describe('checkout', () => {\n  // @scenario cart/adds\n  test('adds amounts', () => {});\n  // @scenario cart/settles\n  test.skip('settles with bank', () => {});\n  describe('refunds', () => {\n    // @scenario cart/refunds\n    test('refund raises', () => {});\n  });\n});\ndescribe('other', () => {\n  // @scenario cart/other-adds\n  test('adds amounts', () => {});\n});\n",
    );
    r.change("cart", &["adds", "settles", "refunds", "other adds"]);
    let v = r.forge(&["verify", "--change", "cart", "--json"]).json();
    assert_eq!(
        scenario_states(&v),
        [
            ("adds".to_string(), "covered".to_string()),
            ("settles".into(), "uncovered".into()),
            ("refunds".into(), "failing".into()),
            ("other-adds".into(), "uncovered".into()),
        ],
        "{}",
        v["scenarios"]
    );
}

#[test]
fn a_command_that_was_not_found_covers_no_scenario() {
    let r = Repo::with_command("no-such-test-runner-xyz", "auto");
    r.write(
        "tests/checkout.rs",
        "// @scenario checkout/guest-pays-by-card\n#[test]\nfn pays() {}\n",
    );
    r.change("checkout", &["guest pays by card"]);
    let v = r
        .forge(&["verify", "--change", "checkout", "--json"])
        .json();
    assert_eq!(
        scenario_states(&v),
        [("guest-pays-by-card".to_string(), "uncovered".to_string())]
    );
    assert!(
        v["scenarios"][0]["evidence"][0]
            .as_str()
            .unwrap()
            .contains("cannot be seen to pass"),
        "{}",
        v["scenarios"][0]
    );
}

/// Ctrl-C reaches Forge, not the command's own process group: Forge ends the command, says how
/// far it got and that nothing was counted, and exits 130.
#[test]
fn ctrl_c_ends_the_command_says_so_and_counts_nothing() {
    let r = Repo::bare();
    r.config("verify:\n  commands:\n    - {name: lint, run: 'true', report: none}\n    - {name: test, run: 'echo $$ > sleeper.pid; sleep 60', report: none}\n");
    r.change("checkout", &["guest pays by card"]);
    let child = r
        .forge_cmd(&["verify", "--change", "checkout"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = r.path().join("sleeper.pid");
    let t0 = std::time::Instant::now();
    while !pid_file.exists() || r.read("sleeper.pid").trim().is_empty() {
        assert!(t0.elapsed().as_secs() < 20, "the command never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sleeper: i32 = r.read("sleeper.pid").trim().parse().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(
            "forge: interrupted — 1 of 2 command(s) ran to the end; nothing was counted (no breaker attempt, nothing on the timeline)"
        ),
        "{stderr}"
    );
    assert!(t0.elapsed().as_secs() < 30, "waited for the command");
    // The command's group is gone, and nothing was recorded.
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(sleeper), None).is_err(),
        "the command outlived Forge"
    );
    assert!(!r.exists(".forge/changes/checkout/verify-attempts.yaml"));
    let tl = r.forge(&["timeline", "--kind", "verify", "--json"]);
    assert_eq!(tl.stdout.trim(), "[]", "{tl:?}");
}

/// Issue 31: the code under test is often an agent's, and it runs when a person verifies. In the
/// kernel sandbox (the default where Linux has it) it plants nothing: no git hook, no edit of
/// Forge's config, nothing in the home folder — while the project's own files stay writable
/// (a build writes its output). `verify.sandbox: off` is the person's opt-out.
#[test]
fn verify_runs_the_code_under_test_in_the_sandbox_and_it_plants_nothing() {
    if !common::sandbox_available(
        "verify_runs_the_code_under_test_in_the_sandbox_and_it_plants_nothing",
    ) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let plant = "printf '#!/bin/sh\\n' > .git/hooks/pre-commit 2>/dev/null; \
                 echo '# planted' >> .forge/config.yaml 2>/dev/null; \
                 echo x > \"$HOME/planted\" 2>/dev/null; \
                 mkdir -p build && echo out > build/out.txt && echo 'ok 1 - builds' && echo '1..1'";
    let config = |extra: &str| {
        format!(
            "verify:\n  commands:\n    - name: test\n      run: {}\n      report: tap\n{extra}",
            serde_json::to_string(plant).unwrap()
        )
    };
    let r = Repo::bare();
    r.config(&config(""));
    let before = r.read(".forge/config.yaml");
    let o = r.forge_env(&["verify"], &[("HOME", home.path())]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("Verdict: PASS"), "{o:?}");
    assert!(!r.exists(".git/hooks/pre-commit"), "{o:?}");
    assert_eq!(r.read(".forge/config.yaml"), before);
    assert!(!home.path().join("planted").exists());
    assert_eq!(r.read("build/out.txt"), "out\n");
    // The person's opt-out: the same command plants all three.
    let r = Repo::bare();
    r.config(&config("  sandbox: off\n"));
    let o = r.forge_env(&["verify"], &[("HOME", home.path())]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(r.exists(".git/hooks/pre-commit"));
    assert!(r.read(".forge/config.yaml").contains("# planted"));
    assert!(home.path().join("planted").exists());
}
