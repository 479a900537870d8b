//! `forge run` against agents that read Forge's source (issue: hermetic gates): every fact a
//! gate decides on must come from evidence no agent could reach. Each test is one cheat, by
//! the scripted agent tests/fixtures/run/agent.sh, caught by content — not by `git status`,
//! the index, a log read back, the working tree's ignored files, global config, or a process
//! left running — and what lands passes the same checks from a clean clone.

mod common;

use std::path::Path;

use common::Repo;
use common::shop::*;

const GOAL: &str = "members get 10% off; receipts name the amount";

/// The run with a private HOME (the cheats may write global git config there).
fn run_in(r: &Repo, home: &Path) -> common::Output {
    r.forge_env(&["run", "shop", "--goal", GOAL], &[("HOME", home)])
}

fn prompt(r: &Repo, name: &str) -> String {
    r.read(&format!(".tmp/.forge/runs/shop/prompts/{name}.md"))
}

#[test]
fn a_same_size_weakened_test_behind_a_forged_index_stat_is_seen_by_content() {
    let r = shop("same-size-weaken");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    // The forgery worked on git: its status called the weakened test unchanged.
    assert_eq!(
        r.read(".tmp/.forge/runs/shop/status-after-forgery").trim(),
        "",
        "the cheat did not fool git, so the test proves nothing"
    );
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("tests/member_test.sh (the verified red test, which must stay byte-identical)"),
        "{p2}"
    );
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_clean_filter_in_the_global_git_config_cannot_hide_a_weakened_test() {
    let r = shop("global-filter");
    let home = tempfile::tempdir().unwrap();
    let o = run_in(&r, home.path());
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("tests/member_test.sh (the verified red test"),
        "{p2}"
    );
    // The global config the cheat wrote for the person's next git is put back too.
    assert!(
        p2.contains(&format!("{}/.gitconfig", home.path().display())),
        "{p2}"
    );
    assert!(
        !std::fs::read_to_string(home.path().join(".gitconfig"))
            .unwrap_or_default()
            .contains("filter")
    );
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_check_that_hides_and_weakens_the_test_in_the_repository_gets_nothing_committed() {
    // The code under test, run by the checks in their own checkout, finds the repository
    // through its ancestors' working folders, sets skip-worktree on the verified test there
    // and weakens it (in each slice's first green attempt). The checks ran on the candidate
    // tree; the commit is that tree; the working-tree change is found by content and put back.
    let r = shop("check-skip-worktree");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("the working tree changed after the agent's call ended, while Forge ran the checks (tests/member_test.sh)"),
        "{}",
        o.stdout
    );
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
    assert_eq!(
        r.read("tests/member_test.sh").trim(),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\"",
        "{}",
        o.stdout
    );
    assert!(!git_out(&r, &["log", "-p"]).contains("update-index"));
    assert_landed_cleanly(&r);
}

#[test]
fn an_ignored_helper_file_cannot_make_the_checks_pass() {
    // Green puts the implementation in a file its own .gitignore hides: in the working tree
    // the tests pass, in the commit the file would be missing. The checks run on the
    // candidate tree, which lacks it: they fail, and green must commit real code.
    let r = shop("ignored-helper");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "green-checks", "fail"));
    assert!(!git_out(&r, &["log", "-p"]).contains("override.sh\n"));
    assert_landed_cleanly(&r);
}

#[test]
fn a_link_to_a_file_outside_the_repository_is_reverted() {
    let r = shop("symlink-out");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("src/discount.sh (a link to a file outside the repository)"),
        "{p2}"
    );
    assert!(!r.path().join("src/discount.sh").exists());
    assert_landed_cleanly(&r);
}

#[test]
fn a_runner_that_exits_before_any_test_is_no_pass() {
    // `exit 0` appended to the sourced code: the runner stops before printing a single case,
    // with exit 0. No test case in the report is no evidence, so no pass.
    let r = shop("exit0");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let f = gate_file(&r, "member-discount", "green-checks");
    let first: Vec<String> = std::fs::read_dir(r.path().join(".tmp/.forge/runs/shop/gates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("member-discount-green-checks.json"))
        .collect();
    assert_eq!(first.len(), 2, "{first:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(p2.contains("no test case in the report"), "{p2}");
    assert_eq!(f["status"], "pass");
    assert_landed_cleanly(&r);
}

#[test]
fn a_decoy_whose_name_ends_with_the_verified_case_does_not_pass_for_it() {
    // Issue 31: red adds a passing "vip member gets discount" before its real test; green's
    // code stops the runner, plan matching and exit 0, when the real test calls it. Only the
    // decoy is reported: a suffix match at a space would have let green's checks pass.
    let r = shop("decoy-suffix");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("the verified red case `member gets discount` is not among the reported cases"),
        "{p2}"
    );
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "green-checks", "fail"));
    // What landed is the honest second attempt, the decoy beside the real test.
    assert!(!git_out(&r, &["log", "-p"]).contains("# decoy"));
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"vip member gets discount\" \"$(total 100 vip)\" \"\"\ncheck \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
    assert_landed_cleanly(&r);
}

#[test]
fn passing_lines_appended_to_the_log_are_not_evidence() {
    // The code under test appends "ok … member gets discount" to every log of the run when
    // it exits: what Forge parses is what it read from the pipe, where the case failed.
    let r = shop("rewrite-log");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(p2.contains("failing: member gets discount"), "{p2}");
    assert_landed_cleanly(&r);
}

#[test]
fn a_check_that_plants_a_git_hook_fails_and_the_hook_is_removed() {
    let r = shop("check-plants-hook");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(!r.exists(".git/hooks/pre-commit"));
    assert!(!r.exists("hook-ran"));
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("the check changed what no check may change (put back): .git/hooks/pre-commit"),
        "{p2}"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_check_that_edits_its_own_candidate_fails() {
    let r = shop("check-edits-candidate");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert_check_edit_caught(&r);
}

#[test]
fn red_that_turns_a_passing_test_into_a_skip_is_not_a_red() {
    let r = shop("skip-existing");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-red-w1-a2");
    assert!(
        p2.contains("no longer reported passing: guest pays by card (skipped)"),
        "{p2}"
    );
}

#[test]
fn red_only_adds_to_existing_tests() {
    let r = shop("red-edits-test");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-red-w1-a2");
    assert!(
        p2.contains("tests/card_test.sh (red only adds to existing tests: line 1"),
        "{p2}"
    );
    assert_eq!(
        r.read("tests/card_test.sh"),
        std::fs::read_to_string(Path::new(RUN_FIX).join("shop/tests/card_test.sh")).unwrap()
    );
    assert_landed_cleanly(&r);
}

#[test]
fn the_test_harness_is_no_code_area() {
    let r = shop("harness-area");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains(
            "`slices[0].code_areas` covers tests/run.sh, part of the test harness (it runs the checks)"
        ),
        "{}",
        o.stdout
    );
    assert_landed_cleanly(&r);
}

#[test]
fn the_planners_commands_run_in_the_checkout_not_the_working_tree() {
    let r = shop("focused-writes");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(!r.exists("planted.txt"));
    assert!(
        !git_out(&r, &["ls-files", "-v"])
            .lines()
            .any(|l| l.starts_with('S'))
    );
}

#[test]
fn a_persons_file_an_agent_deletes_comes_back() {
    // notes.local is the person's, ignored only by their global excludes file (so clean-start
    // passes); green deletes it; Forge puts it back from what it saw before the call.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".gitexcludes"), "notes.local\n").unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        format!(
            "[core]\n\texcludesFile = {}/.gitexcludes\n",
            home.path().display()
        ),
    )
    .unwrap();
    let r = shop("delete-notes");
    r.write("notes.local", "my notes, not committed anywhere\n");
    let o = run_in(&r, home.path());
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(r.read("notes.local"), "my notes, not committed anywhere\n");
    assert!(!git_out(&r, &["log", "--all", "--format=%H", "--", "notes.local"]).contains(' '));
    assert_eq!(git_out(&r, &["log", "--all", "--", "notes.local"]), "");
}

#[test]
fn branches_tags_and_the_stash_are_put_back() {
    let r = shop("move-refs");
    r.git(&["tag", "v1"]);
    r.git(&["branch", "feature"]);
    r.write("wip.txt", "stashed work\n");
    r.git(&["add", "wip.txt"]);
    r.git(&["stash", "-q"]);
    let before = git_out(&r, &["for-each-ref", "--format=%(refname) %(objectname)"]);
    let stash_before = git_out(&r, &["stash", "list"]);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(p2.contains("refs/tags/v1 (moved; put back)"), "{p2}");
    assert!(
        p2.contains("refs/heads/feature (deleted; restored)"),
        "{p2}"
    );
    let after = git_out(&r, &["for-each-ref", "--format=%(refname) %(objectname)"]);
    for line in before.lines().filter(|l| !l.starts_with("refs/heads/main")) {
        assert!(after.contains(line), "{line} is gone: {after}");
    }
    assert_eq!(git_out(&r, &["stash", "list"]), stash_before);
}

#[test]
fn a_fifo_for_an_answer_is_a_bad_answer_not_a_hang() {
    let r = shop("fifo-answer");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-red-w1-a2");
    assert!(p2.contains("is not a regular file"), "{p2}");
    assert_landed_cleanly(&r);
    // A FIFO in place of the run's own files stops nothing either.
    let st = r.path().join(".tmp/.forge/runs/shop/state.json");
    std::fs::remove_file(&st).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&st)
            .status()
            .unwrap()
            .success()
    );
    let o = r.forge(&["run", "--status", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("is not a regular file"), "{o:?}");
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
}

#[test]
fn an_invalid_cost_report_fails_the_call_and_reaches_no_ledger() {
    let r = shop("bad-cost");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(p2.contains("its cost report is invalid: -5 USD"), "{p2}");
    let ledger = r.path().join(".forge/changes/shop/budget.yaml");
    if ledger.exists() {
        assert!(!r.read(".forge/changes/shop/budget.yaml").contains('-'));
    }
    assert_landed_cleanly(&r);
}

#[test]
fn agent_text_cannot_draw_a_gate_line_or_add_a_trailer() {
    let r = shop("evil-title");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        !o.stdout
            .lines()
            .any(|l| l.starts_with("  ✓ [member-discount w1 a9]")),
        "{}",
        o.stdout
    );
    let msg = git_out(&r, &["log", "-1", "--format=%B", "HEAD~1"]);
    let trailers = std::process::Command::new("git")
        .args(["interpret-trailers", "--parse"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(msg.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    let t = String::from_utf8_lossy(&trailers.stdout);
    assert_eq!(
        t.lines()
            .filter(|l| l.starts_with("Forge-Slice:"))
            .collect::<Vec<_>>(),
        ["Forge-Slice: member-discount"],
        "{msg}"
    );
}

#[test]
fn a_reader_that_goes_away_does_not_end_the_run() {
    use std::io::{BufRead, BufReader};
    let r = shop("");
    let mut child = r
        .forge_cmd(&["run", "shop", "--goal", GOAL])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        // `forge run … | head -n 2`
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        for _ in 0..2 {
            line.clear();
            out.read_line(&mut line).unwrap();
        }
    }
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(0));
    assert!(
        r.read(".tmp/.forge/runs/shop/run.log")
            .contains("Run `shop` DONE: 2 slice(s) landed, 0 already green (test only, nothing implemented); 2 commit(s).")
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_command_verify_runs_takes_what_it_detached_with_it() {
    // A test suite that leaves a daemon (setsid, double fork, output closed): when verify is
    // done, nothing it started is left.
    let marker = format!("forge-daemon-{}", std::process::id());
    let r = Repo::with_command(
        &format!(
            "setsid sh -c '(sleep 30; echo {marker}) </dev/null >/dev/null 2>&1 &'; echo TAP version 13; echo ok 1 - a; echo 1..1"
        ),
        "tap",
    );
    let o = r.forge(&["verify"]);
    assert_eq!(o.code, 0, "{o:?}");
    std::thread::sleep(std::time::Duration::from_millis(100));
    let alive = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
    });
    assert!(!alive, "the detached process survived verify");
}

#[test]
fn on_resume_a_persons_changes_are_never_reverted_nor_adopted_unseen() {
    // Killed in green; while it was stopped, a person wrote notes.txt. Forge cannot tell it
    // from what the green agent wrote before the kill (issue 31): it is not adopted as the
    // person's, nor reverted — the resume stops, names it and the way out. Set aside, the run
    // resumes: green's interrupted change (src/cart.sh, in its code area) is taken into the
    // slice and judged by its gates, and the person's file comes back committed by no slice.
    let r = shop("kill-in-green");
    assert_ne!(run(&r).code, 0);
    r.write("notes.txt", "the person's notes\n");
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("notes.txt changed since run `shop` last saw the tree, while the green agent a kill interrupted was running")
            && o.stderr.contains("git stash push -u -- notes.txt"),
        "{o:?}"
    );
    assert_eq!(r.read("notes.txt"), "the person's notes\n");
    r.git(&["stash", "push", "-q", "-u", "--", "notes.txt"]);
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains(
            "the green agent's call was interrupted: what it changed is taken into the slice and judged by its gates: src/cart.sh"
        ),
        "{}",
        o.stdout
    );
    r.git(&["stash", "pop", "-q"]);
    assert_eq!(r.read("notes.txt"), "the person's notes\n");
    assert_eq!(git_out(&r, &["log", "--all", "--", "notes.txt"]), "");
    assert_clean_clone_passes(&r);
}

#[test]
fn on_resume_a_persons_change_to_the_verified_test_stops_with_the_way_out() {
    let r = shop("kill-in-green");
    assert_ne!(run(&r).code, 0);
    r.write(
        "tests/member_test.sh",
        "check \"member gets discount\" \"90\" \"90\"\n",
    );
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("tests/member_test.sh changed since run `shop` last saw the tree"),
        "{o:?}"
    );
    assert!(
        o.stderr.contains("git stash push -- tests/member_test.sh"),
        "{o:?}"
    );
    // Nothing was reverted: the person's edit is still there.
    assert!(r.read("tests/member_test.sh").contains("\"90\" \"90\""));
    r.git(&["stash", "push", "-q", "--", "tests/member_test.sh"]);
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
}

#[test]
fn a_damaged_ledger_stops_the_run_with_the_way_out_not_an_error() {
    let r = shop("kill-in-green claude-cost");
    assert_ne!(run(&r).code, 0);
    r.write(".forge/changes/shop/budget.yaml", "usd: [not a number\n");
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(
        o.code, 1,
        "a stop a person can act on, not a setup error: {o:?}"
    );
    assert!(
        o.stdout
            .contains("a spend ledger of this run cannot be read"),
        "{}",
        o.stdout
    );
    // The person removes it (accepting that its spend is forgotten) and the run goes on.
    std::fs::remove_file(r.path().join(".forge/changes/shop/budget.yaml")).unwrap();
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
}

// Red team, round 16.

#[test]
fn a_plan_that_calls_an_existing_test_code_does_not_let_green_change_it() {
    let r = shop("test-as-code");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("tests/card_test.sh (a test file: green may not change tests)"),
        "{p2}"
    );
    assert_eq!(
        git_out(&r, &["show", "HEAD:tests/card_test.sh"]),
        std::fs::read_to_string(Path::new(RUN_FIX).join("shop/tests/card_test.sh"))
            .unwrap()
            .trim()
    );
    assert_landed_cleanly(&r);
}

#[test]
fn red_may_not_define_the_runners_helper_again_in_a_new_file() {
    let r = shop("redefine-helper");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-red-w1-a2");
    assert!(
        p2.contains(
            "tests/aaa_test.sh (red only adds: it defines `check` again, which tests/run.sh defines"
        ),
        "{p2}"
    );
    assert!(!git_out(&r, &["log", "--name-only"]).contains("aaa_test.sh"));
    assert_landed_cleanly(&r);
}

#[test]
fn a_mute_an_earlier_slice_landed_does_not_hide_a_later_slices_regression() {
    // Slice 1's red lands a `check` (made by eval, past the name rule) that passes "guest pays
    // by card" whatever it got; slice 2's green drops the card fee. The person's command runs
    // on the tests as they were before the run, without the mute, and fails.
    let r = shop("mute-later");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "receipt-green-w1-a2");
    assert!(
        p2.contains(
            "`test` with the tests as they were before the run: exit 1, failing: guest pays by card"
        ),
        "{p2}"
    );
    assert!(git_out(&r, &["show", "HEAD:src/cart.sh"]).contains("$1 * 2 / 100"));
}

#[test]
fn an_agent_that_says_not_found_after_changing_files_is_judged() {
    // Exit 127 with "not found" is a setup error only for a call that changed nothing.
    let r = shop("fake-not-found");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-red-w1-a2");
    assert!(
        p2.contains("src/cart.sh (red may change only tests/)"),
        "{p2}"
    );
    assert!(!git_out(&r, &["log", "-p"]).contains("red was here"));
    assert_landed_cleanly(&r);
}

#[test]
fn a_link_that_climbs_out_through_another_link_is_reverted() {
    let r = shop("link-hop");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = prompt(&r, "member-discount-green-w1-a2");
    assert!(
        p2.contains("src/e (a link to a file outside the repository)"),
        "{p2}"
    );
    assert!(!git_out(&r, &["log", "--name-only"]).contains("src/e"));
    assert_landed_cleanly(&r);
}
