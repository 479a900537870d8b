//! The other subcommands end to end: init, change, report, demo, help.

mod common;

use common::{FIXTURES, Repo};

#[test]
fn init_detects_cargo_writes_a_working_config_and_ignores_local_state() {
    let r = Repo::bare();
    r.write("Cargo.toml", "[package]\nname = \"x\"\n");
    r.write(".gitignore", "/target\n");
    let o = r.forge(&["init"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("cargo project"), "{}", o.stdout);
    let cfg = r.read(".forge/config.yaml");
    assert!(
        cfg.contains("run: \"cargo test\"") && cfg.contains("report: libtest"),
        "{cfg}"
    );
    // Nothing in this crate runs clippy: the lint is offered, commented out, not enforced.
    assert!(
        cfg.contains(
            "    # - name: lint\n    #   run: \"cargo clippy --all-targets -- -D warnings\""
        ),
        "{cfg}"
    );
    assert!(!cfg.contains("\n    - name: lint"), "{cfg}");
    assert!(
        o.stdout
            .contains("Lint: `cargo clippy --all-targets -- -D warnings` is written commented out"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("forge change use <name>"), "{}", o.stdout);
    let gi = r.read(".gitignore");
    assert!(
        gi.starts_with("/target\n") && gi.contains(".tmp/.forge/\n"),
        "{gi}"
    );
    // Refuses to overwrite; --force replaces; .gitignore is not duplicated.
    let o = r.forge(&["init"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--force"));
    assert_eq!(r.forge(&["init", "--force"]).code, 0);
    assert_eq!(r.read(".gitignore").matches(".tmp/.forge/").count(), 1);
    // The written config is one `forge verify` accepts (a real cargo test output stands in
    // for the run; a test command that names no case is no evidence, and fails).
    r.config(
        &cfg.replace("cargo test", &format!("cat '{FIXTURES}/libtest/pass.txt'"))
            .replace("cargo clippy --all-targets -- -D warnings", "true"),
    );
    let o = r.forge(&["verify"]);
    assert_eq!(o.last_line(), "Verdict: PASS", "{o:?}");
    // After a verify, git sees no Forge litter but the committed config.
    r.git(&["add", "-A"]);
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--ignored"])
        .current_dir(r.path())
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&status.stdout);
    assert!(s.contains("!! .tmp/"), "{s}");
}

/// Where the crate's CI already runs clippy, verify runs it too, and init says why.
#[test]
fn init_enables_the_lint_the_projects_ci_runs() {
    let r = Repo::bare();
    r.write("Cargo.toml", "[package]\nname = \"x\"\n");
    r.write(
        ".github/workflows/ci.yml",
        "jobs:\n  lint:\n    steps:\n      - run: cargo clippy --all-targets -- -D warnings\n",
    );
    let o = r.forge(&["init"]);
    assert_eq!(o.code, 0, "{o:?}");
    let cfg = r.read(".forge/config.yaml");
    assert!(
        cfg.contains("    - name: lint\n      run: \"cargo clippy --all-targets -- -D warnings\""),
        "{cfg}"
    );
    assert!(
        o.stdout
            .contains("(the project already runs it: .github/workflows/ci.yml)"),
        "{}",
        o.stdout
    );
}

#[test]
fn init_detects_python_go_and_node_projects() {
    for (file, body, want) in [
        ("pyproject.toml", "[project]\n", "pytest"),
        ("go.mod", "module x\n", "go-json"),
        (
            "package.json",
            "{\"devDependencies\":{\"vitest\":\"^3\"}}",
            "vitest-json",
        ),
        (
            "package.json",
            "{\"devDependencies\":{\"jest\":\"^29\"}}",
            "jest-json",
        ),
    ] {
        let r = Repo::bare();
        r.write(file, body);
        assert_eq!(r.forge(&["init"]).code, 0);
        let cfg = r.read(".forge/config.yaml");
        assert!(cfg.contains(&format!("report: {want}")), "{file}: {cfg}");
    }
}

/// A folder holding only the named programs (each a stub that succeeds), for a `PATH` of a
/// machine that has exactly those.
fn path_with(dir: &std::path::Path, programs: &[&str]) -> String {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    for p in programs {
        let f = dir.join(p);
        std::fs::write(&f, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir.display().to_string()
}

#[test]
fn init_writes_a_test_command_this_machine_can_run() {
    let bin = tempfile::tempdir().unwrap();
    // A machine with `python3` and no `python` (Debian, Ubuntu, macOS).
    let r = Repo::bare();
    r.write("pyproject.toml", "[project]\nname = \"x\"\n");
    let o = r
        .forge_cmd(&["init"])
        .env(
            "PATH",
            path_with(&bin.path().join("py3"), &["python3", "git"]),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let cfg = r.read(".forge/config.yaml");
    assert!(cfg.contains("run: \"python3 -m pytest -rA\""), "{cfg}");
    assert!(!cfg.contains("http"), "no placeholder URL: {cfg}");
    // A machine with neither: the config is written and the person is told.
    let r = Repo::bare();
    r.write("go.mod", "module x\n");
    let o = r
        .forge_cmd(&["init"])
        .env("PATH", path_with(&bin.path().join("none"), &["git"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("`go` is not on PATH here"), "{out}");
}

#[test]
fn change_new_list_and_scenarios() {
    let r = Repo::with_command("true", "none");
    r.change("checkout", &["Guest pays by card", "Member gets discount"]);
    let spec = r.read(".forge/changes/checkout/spec.md");
    assert!(spec.contains("#### Scenario: Guest pays by card"), "{spec}");
    let o = r.forge(&["change", "new", "checkout"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("already exists"));
    let o = r.forge(&["change", "new", "Bad Name"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("invalid change name"));

    r.write(
        "tests/a_test.rs",
        "// @scenario checkout/guest-pays-by-card\n#[test]\nfn visa() {}\n",
    );
    let v = r
        .forge(&["change", "scenarios", "checkout", "--json"])
        .json();
    assert_eq!(v[0]["id"], "guest-pays-by-card");
    assert_eq!(v[0]["markers"][0]["file"], "tests/a_test.rs");
    assert_eq!(v[0]["markers"][0]["test"], "visa");
    assert_eq!(v[1]["markers"].as_array().unwrap().len(), 0);

    r.forge(&["verify", "--change", "checkout"]);
    let o = r.forge(&["change", "list"]);
    assert!(
        o.stdout.contains("checkout") && o.stdout.contains("1 consecutive failure(s), last FAIL"),
        "{}",
        o.stdout
    );
    let v = r.forge(&["change", "list", "--json"]).json();
    assert_eq!(v[0]["scenarios"], 2);
    assert_eq!(v[0]["breaker"]["total_attempts"], 1);
}

#[test]
fn report_command_parses_real_outputs() {
    let r = Repo::bare();
    let o = r.forge(&["report", &format!("{FIXTURES}/pytest/failures.txt")]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("2 passed, 2 failed, 1 skipped, 1 xfailed (pytest)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("FAILED test_checkout.py::test_refund_raises")
    );
    let v = r
        .forge(&[
            "report",
            &format!("{FIXTURES}/junit/vitest-failures.xml"),
            "--json",
        ])
        .json();
    assert_eq!(v["format"], "junit");
    assert_eq!(v["counts"]["failed"], 2);
    let o = r.forge(&["report", "/nonexistent.xml"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("does not exist"));
    let o = r.forge(&["report", "x", "--format", "xunit"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("junit"), "{}", o.stderr);
}

#[test]
fn demo_runs_two_slices_and_catches_both_cheats() {
    let r = Repo::bare();
    let o = r.forge(&["demo"]);
    assert_eq!(o.code, 0, "{o:?}");
    for needle in [
        "✗ [member-discount w1 a1] red-file-scope — red may change only tests/ — reverted: src/cart.sh",
        "✗ [member-discount w1 a1] green-file-scope — green may change only src/ — reverted: tests/member_test.sh",
        "✓ [receipt w1 a2] milestone-checks",
        "Run `shop` DONE: 2 slice(s) landed, 0 already green (test only, nothing implemented); 2 commit(s).",
        "feat(member-discount): members get 10% off",
        "feat(receipt): a receipt names the amount paid",
        "status done, wave 1, red attempts 2, green attempts 2",
    ] {
        assert!(
            o.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            o.stdout
        );
    }
    assert!(!o.stdout.contains("forge-checkpoint"), "{}", o.stdout);
}

#[test]
fn demo_verify_walks_through_the_breaker() {
    let r = Repo::bare();
    let o = r.forge(&["demo", "verify"]);
    assert_eq!(o.code, 0, "{o:?}");
    for needle in [
        "Breaker: 1/3 consecutive failures for change \"checkout\" — fix the smallest cause and re-run.",
        "Breaker: CIRCUIT OPEN — 3 consecutive verify failures for change \"checkout\".",
        "# exit 1",
        "UNCOVERED checkout/guest-gets-a-receipt",
        "Breaker: reset for change \"checkout\" by Demo Person",
        "Verdict: PASS",
    ] {
        assert!(
            o.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            o.stdout
        );
    }
}

#[test]
fn every_subcommand_has_help_with_examples() {
    let r = Repo::bare();
    for args in [
        vec!["--help"],
        vec!["verify", "--help"],
        vec!["init", "--help"],
        vec!["change", "new", "--help"],
        vec!["change", "list", "--help"],
        vec!["change", "scenarios", "--help"],
        vec!["report", "--help"],
        vec!["demo", "--help"],
        vec!["run", "--help"],
        vec!["doctor", "--help"],
        vec!["completions", "--help"],
        vec!["man", "--help"],
        vec!["timeline", "--help"],
        vec!["budget", "set", "--help"],
        vec!["budget", "raise", "--help"],
    ] {
        let o = r.forge(&args);
        assert_eq!(o.code, 0, "{args:?}");
        assert!(o.stdout.contains("Examples:"), "{args:?}: {}", o.stdout);
    }
    let o = r.forge(&["frobnicate"]);
    assert_eq!(o.code, 2);
}

#[test]
fn completions_and_man_pages_list_every_command() {
    let r = Repo::bare();
    for (shell, marker) in [
        ("bash", "_forge()"),
        ("zsh", "#compdef forge"),
        ("fish", "complete -c forge"),
        ("elvish", "edit:completion:arg-completer[forge]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = r.forge(&["completions", shell]);
        assert_eq!(o.code, 0, "{shell}: {o:?}");
        assert!(
            o.stdout.contains(marker),
            "{shell}: {}",
            &o.stdout[..200.min(o.stdout.len())]
        );
        for cmd in ["verify", "doctor", "timeline", "budget"] {
            assert!(o.stdout.contains(cmd), "{shell} completes no `{cmd}`");
        }
    }
    assert_eq!(r.forge(&["completions", "tcsh"]).code, 2);

    let o = r.forge(&["man"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains(".TH forge 1"), "{}", &o.stdout[..200]);
    assert!(
        o.stdout.contains("forge\\-doctor(1)"),
        "the top page lists the commands"
    );
    // It renders as a manual page.
    if let Ok(mut nroff) = std::process::Command::new("nroff")
        .arg("-man")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        use std::io::Write;
        nroff
            .stdin
            .take()
            .unwrap()
            .write_all(o.stdout.as_bytes())
            .unwrap();
        let out = nroff.wait_with_output().unwrap();
        assert!(out.status.success() && out.stdout.len() > 500, "{out:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let o = r.forge(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.code, 0, "{o:?}");
    for page in [
        "forge.1",
        "forge-verify.1",
        "forge-doctor.1",
        "forge-budget-raise.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page))
            .unwrap_or_else(|e| panic!("{page}: {e}\n{}", o.stdout));
        assert!(text.contains(".TH"), "{page}");
    }
}

#[test]
fn config_slips_name_the_line_and_the_next_step() {
    let r = Repo::bare();
    r.config("verify:\n  commands:\n    - {name: test, run: 'true', report: none}\nbreaker:\n  max_failures: 3\nbreaker:\n  max_failures: 5\n");
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains(
            ".forge/config.yaml: line 6: key `breaker` appears twice in the same mapping — keep one"
        ),
        "{o:?}"
    );
    r.config("# to do\n");
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains(".forge/config.yaml: is empty: it needs at least the commands")
            && o.stderr.contains("forge init --force"),
        "{o:?}"
    );
}

#[test]
fn scenarios_and_verify_say_the_same_of_a_marker() {
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.change(
        "refunds",
        &["refund raises the balance", "refund is logged"],
    );
    r.write(
        "tests/run.sh",
        "echo 'TAP version 13'\n# @scenario refunds/refund-raises-the-balance\ncheck 1 1\n# @scenario refunds/refund-is-logged\ntest_logged() {\n  :\n}\necho 'ok 1 - test_logged'\necho '1..1'\n",
    );
    let o = r.forge(&["change", "scenarios", "refunds"]);
    let on_nothing =
        "marked at tests/run.sh:2, not on a test Forge can identify: it ties to nothing";
    assert!(o.stdout.contains(on_nothing), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("marked at tests/run.sh:4 on test test_logged"),
        "{}",
        o.stdout
    );
    let v = r.forge(&["verify", "--change", "refunds", "--json"]).json();
    let s = &v["scenarios"];
    assert_eq!(s[0]["id"], "refund-raises-the-balance", "{v}");
    assert_eq!(s[0]["status"], "uncovered");
    assert!(
        s[0]["evidence"][0]
            .as_str()
            .unwrap()
            .starts_with(on_nothing),
        "{v}"
    );
    // The shell function the other marker sits on is the TAP case that passed.
    assert_eq!(s[1]["status"], "covered", "{v}");
}
