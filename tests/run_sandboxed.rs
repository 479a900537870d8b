//! `forge run` with the kernel sandbox (`sandbox.mode: require`): the second, independent wall.
//! Every agent call and every check runs inside its profile, so a cheat the run's gates would
//! catch afterwards (tests/run.rs, tests/hermetic.rs prove those with the sandbox off) is
//! refused by the kernel before it lands anywhere — and an honest run lands as before.
//!
//! Skipped, saying why, where the kernel has no full sandbox, unless FORGE_REQUIRE_SANDBOX=1
//! (CI sets it).

mod common;

use common::shop::*;
use common::{Repo, sandbox_available};

fn shop_sandboxed(cheat: &str) -> Repo {
    shop_with(cheat, "sandbox:\n  mode: require\n")
}

fn agent_log(r: &Repo, name: &str) -> String {
    r.read(&format!(".tmp/.forge/runs/shop/agents/{name}.log"))
}

#[test]
fn an_honest_run_lands_with_every_agent_and_check_in_its_profile() {
    if !sandbox_available("an_honest_run_lands_with_every_agent_and_check_in_its_profile") {
        return;
    }
    let r = shop_sandboxed("check-env");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    // Each check ran on its own overlay (the run says when it cannot).
    assert!(!o.stdout.contains("settle by walking"), "{}", o.stdout);
    assert!(agent_log(&r, "run-planner-w1-a1").contains("sandbox=review"));
    assert!(agent_log(&r, "member-discount-red-w1-a1").contains("sandbox=red"));
    assert!(agent_log(&r, "member-discount-verifier-w1-a1").contains("sandbox=review"));
    assert!(agent_log(&r, "member-discount-green-w1-a1").contains("sandbox=green"));
    // Green is told its checks have no network (they get only their own loopback).
    let green = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a1.md");
    assert!(
        green.contains("The checks run without a network"),
        "{green}"
    );
    let logs = std::fs::read_dir(r.path().join(".tmp/.forge/runs/shop/logs")).unwrap();
    let checked = logs
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("related1"))
        .any(|e| {
            std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("check-sandbox=check"))
        });
    assert!(checked, "the related check ran in the check profile");
    assert_landed_cleanly(&r);
}

/// Issue 34, point 3: with an allowlist for `check`, a run's checks run in their own network
/// namespace with the proxy (contained, on their layer), the run lands as before, and green is
/// told which hosts its checks reach.
#[test]
fn a_run_whose_checks_have_an_allowlist_lands_and_green_is_told_the_hosts() {
    if !sandbox_available("a_run_whose_checks_have_an_allowlist_lands_and_green_is_told_the_hosts")
    {
        return;
    }
    let r = shop_with(
        "check-env",
        "sandbox:\n  mode: require\n  network:\n    check: {allow: [pypi.org, files.pythonhosted.org]}\n",
    );
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let green = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a1.md");
    assert!(
        green.contains("The checks reach only their own `127.0.0.1` and, through a proxy, `pypi.org`, `files.pythonhosted.org` (`sandbox.network.check.allow`)"),
        "{green}"
    );
    assert!(!green.contains("without a network"), "{green}");
    assert_landed_cleanly(&r);
}

#[test]
fn the_kernel_refuses_red_a_write_outside_its_test_areas() {
    if !sandbox_available("the_kernel_refuses_red_a_write_outside_its_test_areas") {
        return;
    }
    let r = shop_sandboxed("edit-code");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let log = agent_log(&r, "member-discount-red-w1-a1");
    assert!(
        log.contains("src/cart.sh") && (log.contains("Read-only") || log.contains("denied")),
        "{log}"
    );
    assert!(!git_out(&r, &["log", "-p"]).contains("# red was here"));
    assert_landed_cleanly(&r);
}

#[test]
fn the_kernel_refuses_green_forges_config_and_a_checks_git_hook() {
    if !sandbox_available("the_kernel_refuses_green_forges_config_and_a_checks_git_hook") {
        return;
    }
    let r = shop_sandboxed("touch-forge check-plants-hook");
    let before = r.read(".forge/config.yaml");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let log = agent_log(&r, "member-discount-green-w1-a1");
    assert!(log.contains(".forge/config.yaml"), "{log}");
    assert_eq!(r.read(".forge/config.yaml"), before);
    assert!(!r.exists(".git/hooks/pre-commit"));
    assert_landed_cleanly(&r);
}

#[test]
fn an_agent_cannot_kill_the_forge_that_drives_it() {
    if !sandbox_available("an_agent_cannot_kill_the_forge_that_drives_it") {
        return;
    }
    // The scripted green sends SIGKILL to its `forge run`: the signal scope refuses it, and the
    // run goes on to land.
    let r = shop_sandboxed("kill-in-green");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("Run `shop` DONE"), "{}", o.stdout);
}

#[test]
fn a_check_on_its_overlay_that_edits_its_candidate_fails() {
    if !sandbox_available("a_check_on_its_overlay_that_edits_its_candidate_fails") {
        return;
    }
    // In the sandbox each check's writes land in an overlay layer of their own: what the code
    // under test changed of the candidate is read from there, and the checkout is left alone.
    let r = shop_sandboxed("check-edits-candidate");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert_check_edit_caught(&r);
}

#[test]
fn a_cache_folder_reached_through_a_tracked_link_is_no_cache() {
    if !sandbox_available("a_cache_folder_reached_through_a_tracked_link_is_no_cache") {
        return;
    }
    // Green links src/.build -> . so the configured cache src/.build/cache is the candidate's
    // own src/cache: bound writable over the overlay, the code under test could rewrite a
    // tracked file in the checkout itself, past every check after it (red-team round 5).
    let r = shop_with(
        "cache-link",
        "run:\n  check_caches: [\"src/.build/cache\"]\nsandbox:\n  mode: require\n",
    );
    let _ = run(&r);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(
        p2.contains("the candidate's own files in the check's checkout (src/cache/rate.sh)"),
        "{p2}"
    );
    // Whatever landed passes its own tests from a clean clone.
    if git_out(&r, &["log", "--format=%s"]).contains("feat(member-discount)") {
        assert_clean_clone_passes(&r);
    }
}

#[test]
fn what_an_agent_changes_in_its_areas_is_seen_after_the_call() {
    if !sandbox_available("what_an_agent_changes_in_its_areas_is_seen_after_the_call") {
        return;
    }
    // In the sandbox, the snapshot after a call reads again only what the kernel let the agent
    // write: red's weakening of an existing test in its own area is still seen and refused.
    let r = shop_sandboxed("red-edits-test");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        p2.contains("tests/card_test.sh (red only adds to existing tests: line 1"),
        "{p2}"
    );
    assert_landed_cleanly(&r);
}

/// A test runner that also runs tests/unit, `*.local` ignored, and the person's own uncommitted
/// notes in tests/fixtures/person.local.
fn shop_with_person_file(cheat: &str, config: &str) -> Repo {
    let r = shop_with(cheat, config);
    r.write(".gitignore", ".tmp/.forge/\n*.local\n");
    let runner = r.read("tests/run.sh").replace(
        "for f in tests/*_test.sh; do\n",
        "for f in tests/*_test.sh tests/unit/*_test.sh; do\n  [ -f \"$f\" ] || continue\n",
    );
    r.write("tests/run.sh", &runner);
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: run tests/unit too"]);
    r.write("tests/fixtures/person.local", "the person's own notes\n");
    r
}

#[test]
fn a_persons_ignored_file_rewritten_through_a_second_name_is_put_back() {
    if !sandbox_available("a_persons_ignored_file_rewritten_through_a_second_name_is_put_back") {
        return;
    }
    // Red-team round 7: slice 1's red (area tests/) gives the person's ignored file a second
    // name inside an ignored folder of tests/unit; slice 2's red (area tests/unit) writes
    // through it. Had the snapshot after that call read only tests/unit, the change would go
    // unseen; a file with two names makes every later snapshot a full walk.
    for config in ["sandbox:\n  mode: require\n", ""] {
        let r = shop_with_person_file("link-ignored", config);
        let o = run(&r);
        assert!(
            agent_log(&r, "receipt-red-w1-a1").contains("wrote through the link"),
            "{config}"
        );
        assert!(
            o.stdout.contains(
                "put back ignored files the red agent deleted or changed: tests/fixtures/person.local"
            ),
            "{config}: {}",
            o.stdout
        );
        assert_eq!(
            r.read("tests/fixtures/person.local"),
            "the person's own notes\n"
        );
    }
}

#[test]
fn an_area_named_through_a_link_is_refused_at_plan_time() {
    if !sandbox_available("an_area_named_through_a_link_is_refused_at_plan_time") {
        return;
    }
    // Red-team round 7: a tracked link tests/lnk -> ../build/t (build/ ignored) and a planned
    // area tests/lnk/y/. Issue 31: an area reached through a link is refused at plan time, so
    // no agent ever writes through it.
    let r = shop_sandboxed("link-area");
    r.write(".gitignore", ".tmp/.forge/\nbuild/\n");
    r.write("build/t/keep", "x\n");
    std::os::unix::fs::symlink("../build/t", r.path().join("tests/lnk")).unwrap();
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: a link to build output"]);
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout
            .contains("the area `tests/lnk/y/` is reached through the link tests/lnk"),
        "{}",
        o.stdout
    );
    assert!(!r.path().join("build/t/y/extra_test.sh").exists());
}
