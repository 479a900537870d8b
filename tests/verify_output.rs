//! `forge verify` as a person and a CI system see it, end to end: progress while it runs,
//! terminal spinner and colour, named commands, `--strict`, GitHub annotations, JUnit XML and
//! the `--json` fields.

mod common;

use common::{FIXTURES, Repo};

/// A command that prints a captured real runner output and exits as that runner did.
fn replay(fixture: &str, code: i32) -> String {
    format!("cat '{FIXTURES}/{fixture}'; exit {code}")
}

/// Two commands: `first` passes at once; `second` waits until the file `go` exists.
fn two_commands() -> Repo {
    let r = Repo::bare();
    r.config(&format!(
        "verify:\n  commands:\n    - {{name: first, run: {}, report: libtest}}\n    - {{name: second, run: 'while [ ! -f go ]; do sleep 0.05; done; echo done', timeout: 30, report: none}}\n",
        serde_json::to_string(&replay("libtest/pass.txt", 0)).unwrap()
    ));
    r
}

#[test]
fn each_command_is_reported_as_it_ends_while_the_next_runs() {
    use std::io::BufRead;
    let r = two_commands();
    let mut child = r
        .forge_cmd(&["verify"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    // `second` cannot end before `go` exists: `first`'s line must arrive before that.
    for l in lines.by_ref() {
        let l = l.unwrap();
        seen.push(l.clone());
        if l.starts_with("  first   ok") {
            break;
        }
    }
    assert_eq!(
        seen[0], "forge verify — 2 command(s), all changes",
        "{seen:?}"
    );
    std::fs::write(r.path().join("go"), "").unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(
        rest.iter().any(|l| l.starts_with("  second  ok")),
        "{rest:?}"
    );
    assert_eq!(rest.last().unwrap(), "Verdict: PASS");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Piped: one plain line per start (with its log), nothing animated.
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "forge: first started: {} (log: .tmp/.forge/logs/",
            replay("libtest/pass.txt", 0)
        )) && lines[0].ends_with("-first.log)"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("forge: second started: while [ ! -f go ]; do sleep 0.05; done; echo done (log: .tmp/.forge/logs/")
            && lines[1].ends_with("-second.log)"),
        "{err}"
    );
}

#[test]
fn quiet_drops_progress_but_not_the_report() {
    let r = Repo::with_command(&replay("libtest/pass.txt", 0), "libtest");
    let loud = r.forge(&["verify"]);
    let quiet = r.forge(&["verify", "--quiet"]);
    assert!(loud.stderr.contains("forge: test started"), "{loud:?}");
    assert_eq!(quiet.stderr, "", "{quiet:?}");
    let strip = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.contains(" ok    exit 0 "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&loud.stdout), strip(&quiet.stdout));
    // In JSON mode the end of each command is said on stderr too (stdout waits for the object).
    let o = r.forge(&["verify", "--json"]);
    assert!(
        o.stderr.contains("forge: test finished: ok, exit 0, "),
        "{o:?}"
    );
    assert_eq!(r.forge(&["verify", "--json", "-q"]).stderr, "");
}

/// Runs `forge args…` in `r` on a pseudo-terminal (util-linux `script`), returning what the
/// terminal received.
fn on_terminal(r: &Repo, args: &str, env: &[(&str, &str)]) -> String {
    let mut c = std::process::Command::new("script");
    c.args([
        "-qec",
        &format!("{} {args}", common::forge_bin().display()),
        "/dev/null",
    ])
    .current_dir(r.path())
    .env_remove("NO_COLOR")
    .env("TERM", "xterm");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c
        .output()
        .expect("util-linux `script` runs commands on a terminal");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_terminal_gets_a_spinner_and_colour_a_pipe_gets_neither() {
    let r = Repo::with_command(&replay("libtest/failures.txt", 101), "libtest");
    let tty = on_terminal(&r, "verify", &[]);
    assert!(tty.contains('⠋') && tty.contains("\r\u{1b}[2K"), "{tty:?}");
    assert!(tty.contains("\u{1b}[31mFAIL\u{1b}[0m"), "{tty:?}");
    assert!(tty.contains("Verdict: \u{1b}[1;31mFAIL"), "{tty:?}");
    // The spinner is erased: the report's own line ends the command.
    assert!(!tty.contains("forge: test started"), "{tty:?}");
    let quiet = on_terminal(&r, "verify --quiet", &[]);
    assert!(!quiet.contains('⠋'), "{quiet:?}");
    for plain in [
        on_terminal(&r, "verify", &[("NO_COLOR", "1")]),
        on_terminal(&r, "verify --color never", &[]),
    ] {
        assert!(!plain.contains("\u{1b}[31m"), "{plain:?}");
        assert!(plain.contains("Verdict: FAIL"), "{plain:?}");
    }
    // `--color always` wins over NO_COLOR (an explicit request), also into a pipe.
    let o = r
        .forge_cmd(&["verify", "--color", "always"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let piped = String::from_utf8_lossy(&o.stdout);
    assert!(piped.contains("\u{1b}[31mFAIL"), "{piped}");
    let o = r.forge(&["verify"]);
    assert!(!o.stdout.contains('\u{1b}') && !o.stderr.contains('\u{1b}'));
    assert!(!o.stderr.contains('\r') && !o.stderr.contains('⠋'), "{o:?}");
}

/// On a terminal the spinner counts the cases the running command's output says ended, as the
/// output comes: a person sees a long suite move, not only its time.
#[test]
fn the_spinner_counts_cases_while_the_command_runs() {
    let r = Repo::with_command(
        "echo 'ok 1 - a'; echo 'ok 2 - b'; echo 'not ok 3 - c'; sleep 1; echo '1..3'; exit 1",
        "tap",
    );
    let tty = on_terminal(&r, "verify", &[]);
    // A spinner frame (not the report's closing counts) carries the count.
    let counted = tty
        .split("\r\u{1b}[2K")
        .any(|frame| frame.contains("$ echo") && frame.contains("s  2 passed, 1 failed"));
    assert!(counted, "{tty:?}");
}

#[test]
fn named_commands_run_alone_and_unknown_names_are_usage_errors() {
    let r = Repo::bare();
    r.config("verify:\n  commands:\n    - {name: test, run: 'touch test-ran; exit 1', report: none}\n    - {name: lint, run: 'touch lint-ran', report: none}\n");
    r.change("checkout", &["guest pays by card"]);
    let o = r.forge(&["verify", "lint"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(r.exists("lint-ran") && !r.exists("test-ran"));
    assert!(
        o.stdout
            .starts_with("forge verify — 1 of 2 command(s): lint\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains(
            "Scenarios: not checked — coverage needs every command, and test did not run"
        ),
        "{}",
        o.stdout
    );
    assert_eq!(o.last_line(), "Verdict: PASS");
    let v = r.forge(&["verify", "lint", "--json"]).json();
    assert_eq!(v["not_run"], serde_json::json!(["test"]));
    // Named twice, run once; the header lists commands in config order.
    let o = r.forge(&["verify", "lint", "lint"]);
    assert!(
        o.stdout
            .starts_with("forge verify — 1 of 2 command(s): lint\n"),
        "{}",
        o.stdout
    );
    assert_eq!(o.stdout.matches("  lint  ok").count(), 1, "{}", o.stdout);
    let o = r.forge(&["verify", "lnt", "tset"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("no verify command named `lnt`, `tset` in .forge/config.yaml; the commands are: test, lint"),
        "{}",
        o.stderr
    );
    // A partial run never counts for (and so never resets) a breaker.
    let o = r.forge(&["verify", "lint", "--change", "checkout"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("counts whole verifications"),
        "{}",
        o.stderr
    );
    assert!(!r.exists(".forge/changes/checkout/verify-attempts.yaml"));
}

#[test]
fn strict_and_gate_exit_1_on_fail_only() {
    let r = Repo::with_command(&replay("libtest/failures.txt", 101), "libtest");
    assert_eq!(r.forge(&["verify"]).code, 0);
    assert_eq!(r.forge(&["verify", "--strict"]).code, 1);
    assert_eq!(r.forge(&["verify", "--gate", "--json"]).code, 1);
    r.change("checkout", &["applies discount"]);
    // Below the breaker's threshold --strict still fails the step.
    let o = r.forge(&["verify", "--strict", "--change", "checkout"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stdout.contains("Breaker: 1/3"), "{}", o.stdout);
    let pass = Repo::with_command(&replay("libtest/pass.txt", 0), "libtest");
    assert_eq!(pass.forge(&["verify", "--strict"]).code, 0);
}

#[test]
fn github_format_annotates_failures_at_their_file_and_line() {
    let r = Repo::with_command(&replay("libtest/failures.txt", 101), "libtest");
    r.change("checkout", &["member gets discount"]);
    let o = r.forge(&["verify", "--format", "github"]);
    assert_eq!(o.code, 0);
    let ann: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert!(
        ann.iter().any(|l| l.starts_with(
            "::error file=src/lib.rs,line=29,title=test%3A tests%3A%3Aguest_pays_by_card::"
        ) && l.contains("right: 100")),
        "{ann:?}"
    );
    assert!(
        ann.contains(
            &"::error file=.forge/changes/checkout/spec.md,line=11,title=scenario checkout/member-gets-discount is uncovered::no test names it: mark one with `@scenario checkout/member-gets-discount`"
        ),
        "{ann:?}"
    );
    // The report itself is intact and still ends with the verdict.
    assert!(o.stdout.contains("FAILED tests::guest_pays_by_card"));
    assert_eq!(o.last_line(), "Verdict: FAIL");
    // A build error points at the line the compiler names.
    let r = Repo::with_command(&replay("libtest/compile-error.txt", 101), "libtest");
    let o = r.forge(&["verify", "--format=github"]);
    assert!(
        o.stdout.lines().any(|l| l.starts_with(
            "::error file=src/lib.rs,line=17,title=test%3A build%2C compile%2C import or setup error::"
        )),
        "{}",
        o.stdout
    );
    // Its exit code is explained by the build error: no second annotation for it.
    assert_eq!(o.stdout.matches("::error").count(), 1, "{}", o.stdout);
}

#[test]
fn junit_output_is_the_verify_result_in_junit_xml() {
    let r = Repo::with_command(&replay("libtest/failures.txt", 101), "libtest");
    r.change("checkout", &["guest pays by card", "member gets discount"]);
    std::fs::create_dir(r.path().join("out")).unwrap();
    let o = r.forge(&["verify", "--junit", "out/forge.xml", "--quiet"]);
    assert_eq!(o.code, 0, "{o:?}");
    let xml = r.read("out/forge.xml");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"forge verify\" tests=\"7\" failures=\"4\" errors=\"0\" skipped=\"1\""), "{xml}");
    assert!(
        xml.contains("<testsuite name=\"scenarios\" tests=\"2\" failures=\"2\""),
        "{xml}"
    );
    // Forge's own JUnit reader sees the same cases.
    let v = r
        .forge(&["report", "out/forge.xml", "--format", "junit", "--json"])
        .json();
    assert_eq!(v["counts"]["passed"], 2, "{v}");
    assert_eq!(v["counts"]["failed"], 4, "{v}");
    assert_eq!(v["counts"]["skipped"], 1, "{v}");
    // A command that fails on its own (not found) is an <error> naming why.
    let r = Repo::with_command("no-such-runner-xyz", "auto");
    r.forge(&["verify", "--junit", "j.xml"]);
    let xml = r.read("j.xml");
    assert!(xml.contains("errors=\"1\""), "{xml}");
    assert!(xml.contains("<error message=\"exit 127\">"), "{xml}");
}

#[test]
fn a_junit_path_that_cannot_be_written_stops_before_anything_runs() {
    let r = Repo::with_command("touch ran", "none");
    let o = r.forge(&["verify", "--junit", "reprots/forge.xml"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("reprots/forge.xml: the folder ")
            && o.stderr.contains("reprots does not exist; create it first"),
        "{o:?}"
    );
    assert!(
        !r.exists("ran"),
        "the suite ran before the path was checked"
    );
    assert!(!r.exists("reprots"), "--junit created a folder");
    // A folder given where a file is meant.
    std::fs::create_dir(r.path().join("reports")).unwrap();
    let o = r.forge(&["verify", "--junit", "reports"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("is a folder"), "{o:?}");
    assert!(!r.exists("ran"));
    // A folder this user cannot write in (root writes anywhere: nothing to prove then).
    use std::os::unix::fs::PermissionsExt;
    let locked = r.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(locked.join("probe"), "").is_err() {
        let o = r.forge(&["verify", "--junit", "locked/forge.xml"]);
        assert_eq!(o.code, 2, "{o:?}");
        assert!(o.stderr.contains("cannot write in"), "{o:?}");
        assert!(!r.exists("ran"));
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A folder that exists: written.
    let o = r.forge(&["verify", "--junit", "reports/forge.xml"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(r.exists("reports/forge.xml") && r.exists("ran"));
}

#[test]
fn json_fields_are_always_present() {
    let r = Repo::with_command(&replay("libtest/failures.txt", 101), "libtest");
    let v = r.forge(&["verify", "--json"]).json();
    let keys = |o: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = o.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        [
            "breaker",
            "cases",
            "change",
            "commands",
            "not_run",
            "reasons",
            "scenarios",
            "tests",
            "verdict"
        ]
    );
    assert_eq!(
        keys(&v["commands"][0]),
        [
            "duration_ms",
            "exit_code",
            "log",
            "name",
            "ok",
            "output_bytes",
            "report_error",
            "report_format",
            "run",
            "runner_summary",
            "signal",
            "tests",
            "timed_out",
            "timeout_secs"
        ]
    );
    assert_eq!(
        keys(&v["cases"][0]),
        ["file", "message", "name", "status", "suite"]
    );
    assert_eq!(
        keys(&v["tests"]),
        [
            "failed",
            "failing",
            "infra_error",
            "passed",
            "skipped",
            "xfailed"
        ]
    );
    assert!(v["commands"][0]["signal"].is_null());
    assert!(v["commands"][0]["report_error"].is_null());
}

/// Where stderr is not a terminal, the line a command starts with names its log, which fills
/// while the command runs (a person can `tail -f` a slow suite) and is the log its block names.
#[test]
fn the_started_line_names_the_log_a_person_can_follow() {
    use std::io::BufRead;
    let r = Repo::with_command("echo hello-from-the-suite; sleep 2; exit 1", "none");
    let mut child = r
        .forge_cmd(&["verify"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let log = line
        .strip_prefix("forge: test started: echo hello-from-the-suite; sleep 2; exit 1 (log: ")
        .and_then(|l| l.trim_end().strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    assert!(
        log.starts_with(".tmp/.forge/logs/") && log.ends_with("-test.log"),
        "{log}"
    );
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(r.path().join(&log))
        .unwrap_or_default()
        .contains("hello-from-the-suite")
    {
        assert!(t0.elapsed().as_secs() < 10, "the log did not fill");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(child.try_wait().unwrap().is_none(), "read while it runs");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("log: {log}")), "{stdout}");
}
