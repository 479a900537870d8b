//! The circuit breaker end to end, against the documented contract (exact lines, exit codes,
//! state file), and its faults: concurrency, kills mid-write, tampered state.

mod common;

use common::{Repo, tap_script};
use forge::breaker::BreakerState;
use forge::state::StateDoc;

const STATE: &str = ".forge/changes/checkout/verify-attempts.yaml";

/// A repository whose tests fail (one failing case) until `fix` is called.
fn failing_checkout() -> Repo {
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.write(
        "tests/run.sh",
        &tap_script(&[("guest pays by card", false)]),
    );
    r.change("checkout", &["guest pays by card"]);
    r
}

fn fix(r: &Repo) {
    r.write("tests/run.sh", &tap_script(&[("guest pays by card", true)]));
}

#[test]
fn progression_matches_the_documented_session() {
    let r = failing_checkout();
    let expected = [
        (
            "Breaker: 1/3 consecutive failures for change \"checkout\" — fix the smallest cause and re-run.",
            0,
        ),
        (
            "Breaker: 2/3 consecutive failures for change \"checkout\" — fix the smallest cause and re-run.",
            0,
        ),
        (
            "Breaker: CIRCUIT OPEN — 3 consecutive verify failures for change \"checkout\".",
            1,
        ),
    ];
    for (line, code) in expected {
        let o = r.forge(&["verify", "--change", "checkout"]);
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(lines[lines.len() - 2], "Verdict: FAIL", "{o:?}");
        assert_eq!(lines[lines.len() - 1], line, "{o:?}");
        assert_eq!(o.code, code, "{o:?}");
    }
    assert_eq!(
        r.read(STATE),
        "consecutive_failures: 3\nopen: true\nlast_verdict: FAIL\ntotal_attempts: 3\n"
    );
    // While open: still exit 1, streak keeps counting.
    let o = r.forge(&["verify", "--change", "checkout"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.ends_with(
        "Breaker: CIRCUIT OPEN — 4 consecutive verify failures for change \"checkout\".\n"
    ));
    assert!(
        o.stderr
            .contains("forge verify --reset-breaker --change checkout"),
        "{}",
        o.stderr
    );

    // A passing verify resets the streak and closes the circuit.
    fix(&r);
    let o = r.forge(&["verify", "--change", "checkout"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("Verdict: PASS\n"));
    assert_eq!(
        r.read(STATE),
        "consecutive_failures: 0\nopen: false\nlast_verdict: PASS\ntotal_attempts: 5\n"
    );
}

#[test]
fn bare_verify_is_a_reporter_and_touches_no_breaker() {
    let r = failing_checkout();
    for _ in 0..4 {
        let o = r.forge(&["verify"]);
        assert_eq!(o.code, 0, "{o:?}");
        assert_eq!(o.last_line(), "Verdict: FAIL");
    }
    assert!(!r.exists(STATE));
}

#[test]
fn max_failures_flag_overrides_config() {
    let r = failing_checkout();
    r.config("verify:\n  commands:\n    - {name: test, run: sh tests/run.sh, report: tap}\nbreaker:\n  max_failures: 5\n");
    let o = r.forge(&["verify", "--change", "checkout"]);
    assert!(o.stdout.contains("1/5 consecutive"), "{o:?}");
    let o = r.forge(&["verify", "--change", "checkout", "--max-failures", "2"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("CIRCUIT OPEN — 2 consecutive"));
    let o = r.forge(&["verify", "--change", "checkout", "--max-failures", "0"]);
    assert_eq!(o.code, 2, "{o:?}");
}

#[test]
fn reset_is_a_recorded_human_act_that_keeps_totals() {
    let r = failing_checkout();
    for _ in 0..3 {
        r.forge(&["verify", "--change", "checkout"]);
    }
    let o = r.forge(&["verify", "--reset-breaker", "--change", "checkout"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("by Ada Lovelace"), "{}", o.stdout);
    let s = BreakerState::parse(&r.read(STATE)).unwrap();
    assert_eq!(
        (s.consecutive_failures, s.open, s.total_attempts),
        (0, false, 3)
    );
    assert_eq!(s.last_reset_by.as_deref(), Some("Ada Lovelace"));
    let at = s.last_reset_at.unwrap();
    assert!(at.parse::<jiff::Timestamp>().is_ok(), "{at}");
    // The four contract fields come first, intact.
    let text = r.read(STATE);
    assert!(
        text.starts_with(
            "consecutive_failures: 0\nopen: false\nlast_verdict: FAIL\ntotal_attempts: 3\n"
        ),
        "{text}"
    );
    // The streak starts again from zero.
    let o = r.forge(&["verify", "--change", "checkout"]);
    assert!(o.stdout.contains("1/3 consecutive"), "{o:?}");
    assert_eq!(o.code, 0);
}

#[test]
fn reset_needs_a_change() {
    let r = failing_checkout();
    let o = r.forge(&["verify", "--reset-breaker"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--change"), "{}", o.stderr);
}

#[test]
fn corrupt_state_fails_closed_naming_file_and_recovery() {
    let r = failing_checkout();
    r.forge(&["verify", "--change", "checkout"]);
    r.write(STATE, "consecutive_failures: 0\nopen: false\nlast_verdict: PASS\ntotal_attempts: 1\nagent_was_here: true\n");
    // The test command must not even run: it would leave this file.
    r.config("verify:\n  commands:\n    - {name: test, run: 'touch ran; sh tests/run.sh', report: tap}\n");
    let o = r.forge(&["verify", "--change", "checkout"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("verify-attempts.yaml"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("forge verify --reset-breaker --change checkout"),
        "{}",
        o.stderr
    );
    assert!(!r.exists("ran"));
    assert!(
        r.read(STATE).contains("agent_was_here"),
        "never silently reset"
    );
    for garbage in ["", "\u{0}\u{1}binary", "consecutive_failures: [\n"] {
        r.write(STATE, garbage);
        assert_eq!(
            r.forge(&["verify", "--change", "checkout"]).code,
            2,
            "{garbage:?}"
        );
    }
    // The human recovery command works on it.
    let o = r.forge(&["verify", "--reset-breaker", "--change", "checkout"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("unreadable"), "{}", o.stdout);
    assert_eq!(r.forge(&["verify", "--change", "checkout"]).code, 0);
}

#[test]
fn concurrent_verifies_count_every_attempt() {
    let r = Repo::with_command("sleep 0.3; sh tests/run.sh", "tap");
    r.write(
        "tests/run.sh",
        &tap_script(&[("guest pays by card", false)]),
    );
    r.change("checkout", &["guest pays by card"]);
    let n = 6;
    let children: Vec<_> = (0..n)
        .map(|_| {
            r.forge_cmd(&["verify", "--change", "checkout", "--max-failures", "100"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let s = BreakerState::parse(&r.read(STATE)).unwrap();
    assert_eq!(
        (s.consecutive_failures, s.total_attempts),
        (n, u64::from(n))
    );
}

#[test]
fn a_kill_at_any_moment_leaves_the_old_or_the_new_state() {
    let r = Repo::with_command("true", "none");
    r.write(".forge/changes/checkout/spec.md", "# Change: checkout\n");
    let mut last_total = 0;
    for i in 0..40u64 {
        let mut c = r
            .forge_cmd(&["verify", "--change", "checkout"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros((i * 997) % 12_000));
        let _ = c.kill();
        let _ = c.wait();
        if r.exists(STATE) {
            let s = BreakerState::parse(&r.read(STATE))
                .unwrap_or_else(|e| panic!("torn state after kill {i}: {e}"));
            assert!(s.total_attempts == last_total || s.total_attempts == last_total + 1);
            last_total = s.total_attempts;
        }
    }
    // Interrupted writes leave at most hidden temp files, which git is told to ignore.
    let o = r.forge(&["verify", "--change", "checkout"]);
    assert_eq!(o.code, 0, "{o:?}");
}

#[test]
fn reset_of_an_unknown_change_is_refused_and_creates_nothing() {
    let r = Repo::with_command("true", "none");
    let o = r.forge(&["verify", "--reset-breaker", "--change", "nosuch"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("no change named `nosuch`")
            && o.stderr.contains("forge change new nosuch"),
        "{}",
        o.stderr
    );
    assert!(!r.exists(".forge/changes/nosuch"));
    assert!(!r.exists(".forge/sessions"), "nothing recorded either");
}

#[test]
fn max_failures_needs_a_change() {
    let r = failing_checkout();
    for args in [
        &["verify", "--max-failures", "2"][..],
        &["verify", "--max-failures=2", "--json"],
    ] {
        let o = r.forge(args);
        assert_eq!(o.code, 2, "{args:?}: {o:?}");
        assert!(o.stderr.contains("--change"), "{}", o.stderr);
    }
}
