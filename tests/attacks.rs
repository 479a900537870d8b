//! The red team's reproductions (tests/fixtures/attack/, each script's header says what it does),
//! run against the built binary without the kernel sandbox: each must now be caught by the run's
//! own gates — nothing wrong lands, no person's file is lost, Forge neither panics nor hangs.
//! What "nothing wrong lands" means is checked the same way for all: every commit the run made
//! passes, from a clean clone, the tests as they were before the run plus the honest member
//! test.
//!
//! The attacks the run's gates cannot stop on their own are not here but in docs/run.md's
//! limits (a daemon started outside the run that talks to Forge's checkout; code under test
//! rewriting its runner's output in the same process).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const ATTACK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/attack");
const NO_SANDBOX: &str = "sandbox:\n  mode: off\n";
const HONEST_MEMBER_TEST: &str = "check \"member gets discount\" \"$(total 100 member)\" \"90\"";

struct Exp {
    _dir: tempfile::TempDir,
    path: PathBuf,
    base: String,
    python: bool,
}

impl Exp {
    fn repo(&self) -> PathBuf {
        self.path.join("repo")
    }

    /// `forge args…` (default: start run `shop`) with the experiment's private HOME and TMPDIR,
    /// and `path_prefix` first on PATH; the exit code.
    fn forge(&self, args: &[&str], path_prefix: Option<&Path>) -> (i32, String) {
        let mut c = Command::new("sh");
        c.arg(format!("{ATTACK}/run.sh"))
            .arg(&self.path)
            .args(args)
            .env("FORGE", common::forge_bin());
        if let Some(p) = path_prefix {
            c.env("PATH_PREFIX", p);
        }
        let o = c.output().unwrap();
        let out =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        let code = out
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("# forge exit "))
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or(-1);
        assert!(
            ![101, 134, 139, -1].contains(&code),
            "forge crashed (exit {code}):\n{out}"
        );
        (code, out)
    }

    fn run(&self) -> (i32, String) {
        self.forge(&[], None)
    }

    fn resume(&self) -> (i32, String) {
        self.forge(&["run", "--resume", "shop"], None)
    }

    fn git(&self, args: &[&str]) -> String {
        let o = Command::new("git")
            .args(args)
            .current_dir(self.repo())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// Every commit the run made holds up: from a clean clone, with the tests restored as they
    /// were before the run (red's own test kept if it is the honest one), the project's tests
    /// pass. Returns how many commits there were.
    fn nothing_wrong_landed(&self) -> usize {
        // A stopped run leaves its temporary checkpoint (a verified failing test) at the tip:
        // that is not a landing.
        let commits = self.git(&["log", "--format=%H %s", &format!("{}..main", self.base)]);
        let commits: Vec<&str> = commits
            .lines()
            .filter(|l| !l.is_empty() && !l.contains(" forge-checkpoint("))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        for c in &commits {
            let clone = tempfile::tempdir().unwrap();
            let d = clone.path().join("c");
            let ok = Command::new("git")
                .args([
                    "clone",
                    "-q",
                    self.repo().to_str().unwrap(),
                    d.to_str().unwrap(),
                ])
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap()
                .success();
            assert!(ok);
            let sh = |s: &str| {
                Command::new("sh")
                    .arg("-c")
                    .arg(s)
                    .current_dir(&d)
                    .env("GIT_CONFIG_GLOBAL", "/dev/null")
                    .output()
                    .unwrap()
            };
            sh(&format!(
                "git checkout -q {c} && git checkout -q {} -- tests",
                self.base
            ));
            let test = if self.python {
                "PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider tests"
            } else {
                "sh tests/run.sh"
            };
            let o = sh(test);
            assert!(
                o.status.success(),
                "commit {c} breaks what the tests checked before the run:\n{}",
                String::from_utf8_lossy(&o.stdout)
            );
            if !self.python {
                let member = sh(&format!("git show {c}:tests/member_test.sh"));
                if member.status.success() {
                    assert_eq!(
                        String::from_utf8_lossy(&member.stdout).trim(),
                        HONEST_MEMBER_TEST,
                        "commit {c} holds a weakened member test"
                    );
                    let o = sh(&format!("git checkout -q {c} -- tests && {test}"));
                    assert!(
                        o.status.success(),
                        "commit {c} fails its own tests:\n{}",
                        String::from_utf8_lossy(&o.stdout)
                    );
                }
            }
        }
        commits.len()
    }
}

/// The sample shop (or the pytest shop) with `script` playing every role, without the sandbox.
fn attack(script: &str) -> Exp {
    setup("setup.sh", script, false)
}

fn py_attack(script: &str) -> Option<Exp> {
    let ok = Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("FORGE_REQUIRE_PYTEST").as_deref() != Ok("1"),
            "pytest is not installed and FORGE_REQUIRE_PYTEST=1"
        );
        eprintln!("==== SKIPPED: attacks::{script}: pytest is not installed ====");
        return None;
    }
    Some(setup("pysetup.sh", script, true))
}

fn setup(harness: &str, script: &str, python: bool) -> Exp {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exp");
    let ok = Command::new("sh")
        .arg(format!("{ATTACK}/{harness}"))
        .arg(&path)
        .arg(format!("{ATTACK}/{script}"))
        .arg(NO_SANDBOX)
        .status()
        .unwrap()
        .success();
    assert!(ok, "setup of {script}");
    let mut e = Exp {
        _dir: dir,
        path,
        base: String::new(),
        python,
    };
    e.base = e.git(&["rev-parse", "HEAD"]);
    e
}

#[test]
fn an_agents_commit_is_never_adopted_as_forges_final_commit() {
    // Green commits wrong code itself, worded as Forge's final commit, and kills forge. The
    // resume does not take it for Forge's (no check ever ran on it): it names it and stops.
    let e = attack("green-commit-kill.sh");
    let (code, _) = e.run();
    assert_ne!(code, 0);
    let (code, out) = e.resume();
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("is not where run `shop` left slice"), "{out}");
    let st = e.forge(&["run", "--status", "shop"], None).1;
    assert!(!st.contains("Status: done"), "{st}");
}

#[test]
fn a_forged_run_folder_and_checkpoint_do_not_survive_the_resume() {
    let e = attack("green-forge-state.sh");
    e.run();
    let (_, out) = e.resume();
    for _ in 0..2 {
        e.resume();
    }
    assert!(
        out.contains("re-checked after the interruption")
            || out.contains("is not where run")
            || out.contains("changed by something other than Forge"),
        "{out}"
    );
    e.nothing_wrong_landed();
}

#[test]
fn red_cannot_mute_existing_tests_by_adding_lines() {
    for script in ["red-insert-override.sh", "red-new-file-override.sh"] {
        let e = attack(script);
        e.run();
        e.nothing_wrong_landed();
    }
}

#[test]
fn red_cannot_mute_existing_python_tests() {
    for script in ["py-insert-return.sh", "py-new-conftest.sh"] {
        if let Some(e) = py_attack(script) {
            e.run();
            e.nothing_wrong_landed();
        }
    }
}

#[test]
fn a_final_slice_that_lands_as_coverage_still_runs_the_verify_commands() {
    let e = attack("covered-final-skips-checks.sh");
    let (_, out) = e.run();
    e.nothing_wrong_landed();
    // Green's first slice already meets the person's command on the suite as it was before
    // the run; the milestone checks before a coverage commit are the second wall.
    assert!(
        out.contains(
            "with the tests as they were before the run: exit 1, failing: guest pays by card"
        ),
        "{out}"
    );
}

#[test]
fn with_red_free_to_edit_tests_the_milestone_checks_still_run_before_a_coverage_commit() {
    // `red_may_edit_tests` turns the before-red regression off; the final slice lands through
    // the coverage path, where only the milestone checks run the person's command.
    let e = attack("covered-final-skips-checks.sh");
    std::fs::write(
        e.repo().join(".forge/config.yaml"),
        std::fs::read_to_string(e.repo().join(".forge/config.yaml")).unwrap()
            + "run:\n  red_may_edit_tests: true\n",
    )
    .unwrap();
    e.git(&["commit", "-qam", "chore: red may edit tests"]);
    let (code, out) = e.run();
    // The first slice's broken code lands (its tests may have changed on purpose); the run
    // does not finish on it.
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("] milestone-checks — `test`: exit 1"), "{out}");
    assert!(!out.contains("DONE"), "{out}");
}

#[test]
fn a_run_branch_made_a_symbolic_ref_is_put_back_and_the_persons_branch_kept() {
    let e = attack("symref-branch.sh");
    let feature = e.git(&["rev-parse", "feature"]);
    e.run();
    assert_eq!(e.git(&["rev-parse", "feature"]), feature);
    assert!(
        !std::fs::read_to_string(e.repo().join(".git/refs/heads/main"))
            .unwrap_or_default()
            .starts_with("ref:")
    );
    e.nothing_wrong_landed();
}

#[test]
fn a_cost_report_cannot_be_hidden_behind_another() {
    let e = attack("cost-trailer.sh");
    std::fs::write(
        e.repo().join(".forge/config.yaml"),
        std::fs::read_to_string(e.repo().join(".forge/config.yaml")).unwrap()
            + "budget:\n  change: { usd: 0.01 }\n",
    )
    .unwrap();
    e.git(&["commit", "-qam", "chore: a budget"]);
    let (code, out) = e.run();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("budget exhausted"), "{out}");
}

#[test]
fn absurd_token_counts_neither_panic_nor_wrap() {
    let e = attack("codex-token-overflow.sh");
    let (_, out) = e.run();
    assert!(
        out.contains("its cost report is invalid") || out.contains("cost"),
        "{out}"
    );
}

#[test]
fn output_too_long_to_read_a_cost_from_stops_the_run() {
    let e = attack("cost-flood.sh");
    let (code, out) = e.run();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("what it spent is unknown"), "{out}");
}

#[test]
fn a_pytest_report_printed_after_the_real_one_is_not_believed() {
    if let Some(e) = py_attack("py-atexit-report.sh") {
        e.run();
        e.nothing_wrong_landed();
    }
}

#[test]
fn checks_read_no_configuration_from_the_folders_above_them() {
    if let Some(e) = py_attack("py-parent-config.sh") {
        let (_, out) = e.run();
        e.nothing_wrong_landed();
        assert!(out.contains("would steer the checks"), "{out}");
    }
}

#[test]
fn a_red_edit_a_kill_left_is_held_to_reds_rules_on_resume() {
    let e = attack("red-kill-launder.sh");
    e.run();
    let (code, out) = e.resume();
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("tests/card_test.sh changed since run"),
        "{out}"
    );
}

#[test]
fn index_flags_an_agent_set_before_a_kill_are_gone_after_the_resume() {
    let e = attack("red-flag-kill.sh");
    e.run();
    assert!(
        e.git(&["ls-files", "-v", "tests/card_test.sh"])
            .starts_with('S'),
        "the cheat did not take"
    );
    e.resume();
    let flags = e.git(&["ls-files", "-v"]);
    assert!(
        !flags
            .lines()
            .any(|l| l.starts_with('S') || l.starts_with('h')),
        "{flags}"
    );
}

#[test]
fn the_persons_ignored_files_survive_git_clean() {
    let e = attack("green-git-clean.sh");
    std::fs::write(e.repo().join("config.local"), "token=the person's own\n").unwrap();
    let gi = std::fs::read_to_string(e.repo().join(".gitignore")).unwrap();
    std::fs::write(e.repo().join(".gitignore"), gi + "config.local\n").unwrap();
    e.git(&["commit", "-qam", "chore: ignore config.local"]);
    let keep = std::fs::read(e.repo().join("config.local")).unwrap();
    let (_, out) = e.run();
    assert_eq!(std::fs::read(e.repo().join("config.local")).unwrap(), keep);
    assert!(out.contains("put back ignored files"), "{out}");
}

#[test]
fn huge_files_and_odd_names_neither_abort_nor_wedge_the_run() {
    for script in ["green-huge-file.sh", "newline-name.sh"] {
        let e = attack(script);
        let (code, out) = e.run();
        assert!(code == 0 || code == 1, "{script}: {out}");
        e.nothing_wrong_landed();
    }
}

#[test]
fn a_damaged_state_file_is_an_error_not_a_panic() {
    let e = attack("state-panic.sh");
    e.run();
    let (code, out) = e.resume();
    assert_eq!(code, 2, "{out}");
    let (code, out) = e.forge(&["run", "--status", "shop"], None);
    assert!(code == 0 || code == 2, "{out}");
}

#[test]
fn a_program_planted_on_path_is_removed_and_never_runs_a_check() {
    let e = attack("path-hijack.sh");
    let bin = e.path.join("home/.local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let (_, out) = e.forge(
        &["run", "shop", "--goal", "members get 10% off"],
        Some(&bin),
    );
    assert!(out.contains("a new program on PATH; removed"), "{out}");
    assert!(!bin.join("sh").exists());
    e.nothing_wrong_landed();
}

#[test]
fn a_planted_fsmonitor_never_runs_for_the_person() {
    let e = attack("gitconfig-fsmonitor.sh");
    e.run();
    e.forge(&["run", "again", "--goal", "more"], None);
    assert!(
        !e.path.join("fsmonitor-ran").exists() && !e.repo().join("fsmonitor-ran").exists(),
        "the planted fsmonitor ran"
    );
}

#[test]
fn code_that_rewrites_its_own_checkout_fails_the_check() {
    let e = attack("green-code-edits-checkout.sh");
    let (_, out) = e.run();
    assert!(
        out.contains("the candidate's own files in the check's checkout"),
        "{out}"
    );
    e.nothing_wrong_landed();
}

#[test]
fn a_checkout_folder_replaced_by_a_link_is_never_swept() {
    // Without the sandbox, green replaces the checks' checkout (kept in the temp folder between
    // checks) with a link to the working tree. The sweep before the next check would have
    // removed, through it, everything not in the candidate tree: `.git`, `.forge/`, the
    // person's ignored files.
    let e = attack("green-links-checkout.sh");
    std::fs::write(e.repo().join("config.local"), "token=the person's own\n").unwrap();
    let gi = std::fs::read_to_string(e.repo().join(".gitignore")).unwrap();
    std::fs::write(e.repo().join(".gitignore"), gi + "config.local\n").unwrap();
    e.git(&["commit", "-qam", "chore: ignore config.local"]);
    let (code, out) = e.run();
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("was replaced while the run used it"), "{out}");
    assert!(e.repo().join(".git/HEAD").is_file(), "{out}");
    assert_eq!(e.git(&["cat-file", "-t", &e.base]), "commit");
    assert!(e.repo().join(".forge/config.yaml").is_file());
    assert_eq!(
        std::fs::read_to_string(e.repo().join("config.local")).unwrap(),
        "token=the person's own\n"
    );
    e.nothing_wrong_landed();
}

#[test]
fn a_check_that_leaves_folders_too_deep_to_name_does_not_wedge_the_run() {
    // Green's code, run by a check, leaves in the checkout a chain of folders deeper than a
    // path can name. The sweep after the check failed on it, and so did every resume.
    let e = attack("green-deep-tree.sh");
    let (code, out) = e.run();
    assert_eq!(code, 0, "{out}");
    assert_eq!(e.nothing_wrong_landed(), 1);
    let tmp = std::fs::read_dir(e.path.join("tmp")).unwrap();
    for d in tmp.flatten() {
        assert!(!d.path().join("deep_folder").exists(), "{out}");
    }
}
