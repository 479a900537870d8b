//! `forge run` end to end: the built binary drives a scripted agent (tests/fixtures/run/agent.sh)
//! through the slice loop on a temporary git repository — an honest run, and one cheat per gate,
//! each caught by its gate with the recovery applied and the right retry count.

mod common;

use common::shop::*;
use common::{Repo, copy_dir};
use serde_json::Value;

#[test]
fn an_honest_run_lands_one_commit_per_slice() {
    let r = shop("");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("Run `shop` DONE: 2 slice(s) landed, 0 already green (test only, nothing implemented); 2 commit(s)."),
        "{}",
        o.stdout
    );
    assert_landed_cleanly(&r);

    // Each slice's commit has START_SHA as its parent and holds the test and the code.
    let st = status(&r);
    assert_eq!(st["run"]["status"], "done");
    let base = st["run"]["base_sha"].as_str().unwrap().to_string();
    let m = slice(&st, "member-discount");
    let rc = slice(&st, "receipt");
    let mc = m["forge"]["commit"].as_str().unwrap();
    assert_eq!(m["forge"]["start_sha"], base.as_str());
    assert_eq!(git_out(&r, &["rev-parse", &format!("{mc}^")]), base);
    assert_eq!(rc["forge"]["start_sha"], mc);
    assert_eq!(
        git_out(&r, &["show", "--format=", "--name-only", mc]),
        "src/cart.sh\ntests/member_test.sh"
    );
    for s in [m, rc] {
        assert_eq!(s["forge"]["status"], "done");
        assert_eq!(n(&s["forge"]["red_attempts_total"]), 1);
        assert_eq!(n(&s["forge"]["green_attempts_total"]), 1);
    }
    // Every gate, in order, passed; the full checks ran before the last commit only.
    let order: Vec<String> = gates_of(&st, "member-discount")
        .into_iter()
        .map(|(g, s)| {
            assert_eq!(s, "pass");
            g
        })
        .collect();
    assert_eq!(
        order,
        [
            "pre-red-baseline",
            "red-file-scope",
            "single-red-failure",
            "verified-red",
            "red-checkpoint",
            "green-file-scope",
            "green-checks",
            "clean-room",
            "final-ancestry"
        ]
    );
    assert!(has_gate(&st, "receipt", "milestone-checks", "pass"));
    assert!(!has_gate(
        &st,
        "member-discount",
        "milestone-checks",
        "pass"
    ));
    // The clean room's evidence names the functions it made to fail, and its time is booked.
    let room = gate_file(&r, "member-discount", "clean-room");
    assert_eq!(
        room["evidence"]["stubbed"],
        serde_json::json!(["src/cart.sh: total"])
    );
    let meta: serde_json::Value =
        serde_json::from_str(&r.read(".tmp/.forge/runs/shop/run.json")).unwrap();
    let (room_ms, check_ms) = (n(&meta["clean_room_ms"]), n(&meta["check_ms"]));
    assert!(room_ms > 0 && room_ms < check_ms, "{meta}");
    // Gate results carry the seed's schema, and go to the timeline.
    let g = gate_file(&r, "receipt", "final-ancestry");
    for k in ["gate", "status", "evidence", "blocks", "recovery"] {
        assert!(g.get(k).is_some(), "{k} missing in {g}");
    }
    let tl = r.forge(&["timeline", "--change", "shop", "--kind", "gate", "--json"]);
    assert_eq!(tl.code, 0, "{tl:?}");
    assert!(tl.stdout.matches("\"gate\"").count() >= 16, "{}", tl.stdout);
    // Agents got the documented environment and a prompt file; one session per role and wave.
    let log = r.read(".tmp/.forge/runs/shop/agents/member-discount-red-w1-a1.log");
    assert!(
        log.contains("role=red slice=member-discount attempt=1 wave=1 resumed=0 session="),
        "{log}"
    );
    let prompt = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a1.md");
    assert!(
        prompt.contains("the member total is not 90 for 100"),
        "{prompt}"
    );
    // With the sandbox off the checks keep the machine's network, and green is not told
    // otherwise.
    let green = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a1.md");
    assert!(!green.contains("without a network"), "{green}");
    // The run is over: the guard no longer enforces a phase.
    assert!(!r.exists(".tmp/.forge/active-run"));
    // The timeline's HTML view and `forge status` show the run.
    let html = r.path().join("timeline.html");
    let o = r.forge(&[
        "timeline",
        "--change",
        "shop",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("final-ancestry [receipt w1 a1]"), "{page}");
    assert!(page.contains("run shop done"), "{page}");
    let s = r.forge(&["status"]);
    assert!(
        s.stdout.contains("Runs:          1 — latest `shop`: done"),
        "{s:?}"
    );
}

#[test]
fn a_red_agent_that_edits_production_code_is_reverted_and_told_why() {
    let r = shop("edit-code");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    let g = gate_file(&r, "member-discount", "red-file-scope");
    assert_eq!(g["status"], "pass"); // the last one, after the retry
    assert!(has_gate(&st, "member-discount", "red-file-scope", "fail"));
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    // The same red agent got the reason on its next attempt, and the edit is gone.
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(p2.contains("reverted: src/cart.sh"), "{p2}");
    assert!(!r.read("src/cart.sh").contains("red was here"));
    let s1 = r.read(".tmp/.forge/runs/shop/agents/member-discount-red-w1-a1.log");
    let s2 = r.read(".tmp/.forge/runs/shop/agents/member-discount-red-w1-a2.log");
    let session = |s: &str| s.split("session=").nth(1).unwrap().trim().to_string();
    assert_eq!(
        session(&s1),
        session(&s2),
        "attempts of one wave share the agent session"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_red_agent_that_commits_has_its_commit_undone() {
    let r = shop("commit");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "red-file-scope", "fail"));
    let dir = r.path().join(".tmp/.forge/runs/shop/gates");
    let first = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy()
                .ends_with("-member-discount-red-file-scope.json")
        })
        .map(|p| serde_json::from_slice::<Value>(&std::fs::read(p).unwrap()).unwrap())
        .find(|g| g["status"] == "fail")
        .unwrap();
    assert_eq!(first["evidence"]["commits"].as_array().unwrap().len(), 1);
    assert!(
        first["evidence"]["reason"]
            .as_str()
            .unwrap()
            .contains("commit(s) appeared during red")
    );
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    assert!(
        !subjects(&r)
            .iter()
            .any(|s| s.contains("add the member test"))
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_red_test_that_fails_to_import_is_not_a_red() {
    let r = shop("import-error");
    assert_eq!(run(&r).code, 0);
    let st = status(&r);
    assert!(has_gate(
        &st,
        "member-discount",
        "single-red-failure",
        "fail"
    ));
    let fails: Vec<_> = gates_of(&st, "member-discount");
    assert_eq!(fails[1], ("red-file-scope".into(), "pass".into()));
    assert_eq!(fails[2], ("single-red-failure".into(), "fail".into()));
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        // The runner died at the missing file: its stream has no plan (issue 31).
        p2.contains("the test report is incomplete: no plan (`1..N`) after 1 test point(s)"),
        "{p2}"
    );
    assert!(
        p2.contains("discount_rules.sh"),
        "the command output goes back: {p2}"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_red_test_that_does_not_parse_is_an_infrastructure_failure() {
    let r = shop("syntax-error");
    assert_eq!(run(&r).code, 0);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        p2.contains("infrastructure, syntax, import or setup failure"),
        "{p2}"
    );
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    assert_landed_cleanly(&r);
}

#[test]
fn two_failing_tests_are_not_one_red() {
    let r = shop("two-failures");
    assert_eq!(run(&r).code, 0);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(p2.contains("2 test cases fail"), "{p2}");
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    assert_landed_cleanly(&r);
}

#[test]
fn an_already_green_test_is_reviewed_and_lands_as_coverage() {
    let r = shop("already-green");
    // Issue 31: already green is not done. The approved test stops the run before it lands,
    // naming the person's command.
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains("slice `member-discount`: its test passes before any code change (already green): nothing was implemented and nothing shows the test can fail. Review the test; to land it as test-only coverage: `forge run --resume shop --accept member-discount`"),
        "{}",
        o.stdout
    );
    let st = status(&r);
    assert_eq!(slice(&st, "member-discount")["forge"]["step"], "accept");
    assert!(!subjects(&r).iter().any(|s| s.starts_with("test(")));
    let g = gate_file(&r, "member-discount", "single-red-failure");
    assert_eq!(g["status"], "fail");
    assert_eq!(g["evidence"]["awaiting"], "acceptance");
    // Resumed without the person's word, it stops again; only a waiting slice can be accepted.
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains("--accept member-discount"),
        "{}",
        o.stdout
    );
    let o = r.forge(&["run", "--resume", "shop", "--accept", "receipt"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("slice `receipt` is not waiting for acceptance"),
        "{}",
        o.stderr
    );
    let o = r.forge(&["run", "--resume", "shop", "--accept", "member-discount"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout
            .contains("its already-green test may land as test-only coverage"),
        "{}",
        o.stdout
    );
    // The scripted red writes an already-green test for the next slice too: it waits as well.
    assert!(o.stdout.contains("--accept receipt`"), "{}", o.stdout);
    let o = r.forge(&["run", "--resume", "shop", "--accept", "receipt"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("Run `shop` DONE: 0 slice(s) landed, 2 already green (test only, nothing implemented); 2 commit(s)."),
        "{}",
        o.stdout
    );
    let text = r.forge(&["run", "--status", "shop"]);
    assert!(
        text.stdout
            .contains("0 slice(s) landed, 2 already green (test only, nothing implemented)."),
        "{}",
        text.stdout
    );
    let st = status(&r);
    assert_eq!(slice(&st, "member-discount")["forge"]["accepted"], true);
    let m = slice(&st, "member-discount");
    assert_eq!(m["forge"]["status"], "covered");
    let g = gate_file(&r, "member-discount", "single-red-failure");
    assert_eq!(g["status"], "pass");
    assert_eq!(g["evidence"]["path"], "already-green");
    assert_eq!(g["evidence"]["review"]["useful"], true);
    assert!(r.exists(".tmp/.forge/runs/shop/agents/member-discount-coverage_reviewer-w1-a1.log"));
    // The test-only commit moved START_SHA: the next slice starts from it.
    let cov = m["forge"]["commit"].as_str().unwrap();
    assert_eq!(slice(&st, "receipt")["forge"]["start_sha"], cov);
    assert_eq!(
        git_out(&r, &["show", "--format=%s", "--name-only", cov]),
        "test(member-discount): members get 10% off\n\ntests/member_test.sh"
    );
}

#[test]
fn a_verifier_that_cites_the_wrong_case_sends_red_back() {
    let r = shop("wrong-case");
    assert_eq!(run(&r).code, 0);
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "verified-red", "fail"));
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        p2.contains(
            "cites `guest pays by card`, but the case that failed is `member gets discount`"
        ),
        "{p2}"
    );
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_green_agent_that_weakens_the_test_is_reverted() {
    let r = shop("edit-test");
    assert_eq!(run(&r).code, 0);
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "green-file-scope", "fail"));
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["green_attempts_total"]),
        2
    );
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(p2.contains("reverted: tests/member_test.sh"), "{p2}");
    // The committed test is the verified one, byte for byte.
    assert_eq!(
        r.read("tests/member_test.sh"),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\"\n"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_green_agent_that_sneaks_a_commit_has_it_undone() {
    let r = shop("extra-commit");
    assert_eq!(run(&r).code, 0);
    let st = status(&r);
    let gates = gates_of(&st, "member-discount");
    let scope: Vec<_> = gates
        .iter()
        .filter(|(g, _)| g == "green-file-scope")
        .collect();
    assert_eq!(scope[0].1, "fail");
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["green_attempts_total"]),
        2
    );
    assert!(!subjects(&r).iter().any(|s| s.contains("sneak")));
    assert_landed_cleanly(&r);
    assert!(has_gate(&st, "member-discount", "final-ancestry", "pass"));
}

#[test]
fn an_agent_that_edits_forge_state_has_it_restored() {
    let r = shop("touch-forge");
    let before = r.read(".forge/config.yaml");
    assert_eq!(run(&r).code, 0);
    assert_eq!(r.read(".forge/config.yaml"), before);
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "green-file-scope", "fail"));
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(
        p2.contains(
            "Forge's own state and git's settings, refs and objects may not be changed — put back: .forge/config.yaml"
        ),
        "{p2}"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_planner_with_a_dangling_dependency_plans_again() {
    let r = shop("dangling-dependency");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains(
            "✗ planning-output — `slices[1].depends_on`: unknown slice id `no-such-slice`"
        ),
        "{}",
        o.stdout
    );
    let st = status(&r);
    assert_eq!(n(&st["run"]["planner_attempts"]), 2);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/run-planner-w1-a2.md");
    assert!(p2.contains("no-such-slice"), "{p2}");
    assert_landed_cleanly(&r);
}

#[test]
fn a_planner_that_writes_files_is_reverted() {
    let r = shop("planner-writes");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("✗ run-artifact — generated files outside"),
        "{}",
        o.stdout
    );
    assert_eq!(n(&status(&r)["run"]["planner_attempts"]), 2);
    assert!(!r.read("src/cart.sh").contains("# planned"));
    assert_landed_cleanly(&r);
}

#[test]
fn a_dirty_tree_stops_before_any_agent() {
    let r = shop("");
    r.write("src/notes.txt", "mine\n");
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stdout.contains("✗ clean-start"), "{}", o.stdout);
    assert!(o.stdout.contains("STOPPED"), "{}", o.stdout);
    assert!(
        !r.exists(".tmp/.forge/runs/shop/agents"),
        "no agent may run"
    );
    assert!(
        o.stdout
            .contains("1 file(s) modified, staged or untracked: src/notes.txt"),
        "{}",
        o.stdout
    );
    let st = r.forge(&["run", "--status", "shop"]);
    assert!(st.stdout.contains("✗ clean-start"), "{st:?}");
    let g = gate_file(&r, "run", "clean-start");
    assert_eq!(g["blocks"], true);
    assert_eq!(g["evidence"]["files"][0], "src/notes.txt");
    assert_eq!(r.read("src/notes.txt"), "mine\n");
}

#[test]
fn run_state_outside_an_ignored_folder_stops_the_run() {
    let r = shop("");
    r.write(".gitignore", "target/\n");
    r.git(&["commit", "-qam", "chore: ignore less"]);
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout
            .contains("✗ run-artifact — .tmp/.forge/ is not ignored by git"),
        "{}",
        o.stdout
    );
}

#[test]
fn failing_green_checks_open_the_breaker_and_stop_the_run() {
    let r = shop("fail-checks");
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout
            .contains("Breaker: CIRCUIT OPEN — 3 consecutive verify failures for change \"shop\"."),
        "{}",
        o.stdout
    );
    let st = status(&r);
    assert_eq!(st["run"]["status"], "stopped");
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["green_attempts_total"]),
        3
    );
    // While the circuit is open, resuming is refused until a person resets it.
    let again = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again
            .stdout
            .contains("circuit breaker of change `shop` is open"),
        "{}",
        again.stdout
    );
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["green_attempts_total"]),
        3
    );
    let reset = r.forge(&["verify", "--reset-breaker", "--change", "shop"]);
    assert_eq!(reset.code, 0, "{reset:?}");
    // A person fixed the agent; the run goes on from where it stopped.
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_landed_cleanly(&r);
}

#[test]
fn a_failed_independent_slice_is_skipped_then_retried_with_new_agents() {
    let r = shop("independent member-red-wave1");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    let m = slice(&st, "member-discount");
    assert_eq!(n(&m["forge"]["wave"]), 2);
    assert_eq!(n(&m["forge"]["red_attempts_total"]), 6);
    assert!(
        o.stdout
            .contains("Retry wave 2 for slice `member-discount` with new agents")
    );
    // The independent slice landed first, while the failed one waited.
    assert_eq!(
        subjects(&r),
        vec![
            "feat(member-discount): members get 10% off",
            "feat(receipt): a receipt names the amount paid",
            "chore: sample shop"
        ]
    );
    let session = |f: &str| {
        r.read(&format!(".tmp/.forge/runs/shop/agents/{f}.log"))
            .split("session=")
            .nth(1)
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(
        session("member-discount-red-w1-a1"),
        session("member-discount-red-w1-a5")
    );
    assert_ne!(
        session("member-discount-red-w1-a5"),
        session("member-discount-red-w2-a1"),
        "the retry wave uses a new agent"
    );
}

#[test]
fn retries_exhausted_stop_the_run_and_report() {
    let r = shop("member-red-always");
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains("failed again in the retry wave"),
        "{}",
        o.stdout
    );
    let st = status(&r);
    assert_eq!(st["run"]["status"], "stopped");
    let m = slice(&st, "member-discount");
    assert_eq!(n(&m["forge"]["red_attempts_total"]), 10);
    assert_eq!(m["forge"]["status"], "failed");
    assert_eq!(slice(&st, "receipt")["forge"]["status"], "pending");
    assert_eq!(subjects(&r), vec!["chore: sample shop"]);
    assert_eq!(
        git_out(&r, &["status", "--porcelain", "--", ".", ":!.forge"]),
        ""
    );
    let text = r.forge(&["run", "--status", "shop"]);
    assert!(text.stdout.contains("red attempts 10"), "{}", text.stdout);
    assert!(
        o.stdout.contains("retries are exhausted for: member-discount; failed, not retried (neither the only blocker nor the only remaining work): none; blocked: receipt"),
        "{}",
        o.stdout
    );
    // Resuming does not start a third wave on its own…
    let again = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(again.code, 1, "{again:?}");
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["red_attempts_total"]),
        10
    );
    // …a person does, for one slice, after fixing the agent.
    r.config(&agents_yaml("", ""));
    assert!(
        o.stdout.contains("To give a slice one more wave once its cause is fixed: `forge run --resume shop --retry member-discount`"),
        "{}",
        o.stdout
    );
    let bad = r.forge(&["run", "--resume", "shop", "--retry", "receipt"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        !bad.stdout.contains("Resuming"),
        "a refused retry resumes nothing: {bad:?}"
    );
    assert!(
        bad.stderr
            .contains("slice `receipt` is pending; only a failed slice can be retried"),
        "{bad:?}"
    );
    let o = r.forge(&["run", "--resume", "shop", "--retry", "member-discount"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("gets one more wave with new agents"),
        "{}",
        o.stdout
    );
    assert_landed_cleanly(&r);
    let tl = r.forge(&["timeline", "--change", "shop", "--kind", "run", "--json"]);
    assert!(tl.stdout.contains("retry-by-person"), "{}", tl.stdout);
    assert!(tl.stdout.contains("human:Ada Lovelace"), "{}", tl.stdout);
}

#[test]
fn a_failed_slice_in_its_retry_wave_does_not_stop_independent_work() {
    // member-discount fails both waves; receipt does not depend on it and still lands.
    let r = shop("independent member-red-always");
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    let st = status(&r);
    assert_eq!(slice(&st, "receipt")["forge"]["status"], "done");
    assert_eq!(slice(&st, "member-discount")["forge"]["status"], "failed");
    assert_eq!(
        subjects(&r),
        vec![
            "feat(receipt): a receipt names the amount paid",
            "chore: sample shop"
        ]
    );
    assert!(
        o.stdout
            .contains("retries are exhausted for: member-discount"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_run_killed_in_red_resumes_from_start_sha() {
    let r = shop("kill-in-red");
    let o = run(&r);
    assert_ne!(o.code, 0, "forge was killed: {o:?}");
    assert_eq!(status(&r)["run"]["status"], "running");
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    assert_landed_cleanly(&r);
}

/// Issue 31, point 5: a kill during an agent's call leaves its changes in the tree; on resume
/// they are held to that agent's phase, not adopted as a person's. Red's link into the code and
/// its line of code break red's rules: the resume stops naming them and the way out, reverting
/// nothing (they could be a person's); once undone, the run resumes and lands, red's test
/// taken into the slice and judged by its gates.
#[test]
fn what_a_killed_agent_wrote_is_judged_by_its_phase_not_adopted_as_the_persons() {
    let r = shop("kill-in-red-oversteps");
    let o = run(&r);
    assert_ne!(o.code, 0, "forge was killed: {o:?}");
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("src/cart.sh, tests/zz_link.sh changed since run `shop` last saw the tree, while the red agent a kill interrupted was running")
            && o.stderr.contains("git stash push -u -- src/cart.sh tests/zz_link.sh"),
        "{o:?}"
    );
    assert!(!o.stdout.contains("kept as yours"), "{}", o.stdout);
    assert!(
        r.read("src/cart.sh").contains("red was here"),
        "nothing reverted"
    );
    r.git(&["checkout", "-q", "--", "src/cart.sh"]);
    std::fs::remove_file(r.path().join("tests/zz_link.sh")).unwrap();
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("the red agent's call was interrupted: what it changed is taken into the slice and judged by its gates: tests/member_test.sh"),
        "{}",
        o.stdout
    );
    assert_landed_cleanly(&r);
}

/// Issue 31, red team (fresh round, A8): slice 1's verified test also defines a `receipt()` that
/// answers once `receipt_ready` exists; slice 2's green ships a wrong `receipt` and that marker.
/// The suite sources the tests after the code, so every check runs the test's own receipt — and
/// with green's functions made to fail the marker fails too, so the stub witness is fooled. A
/// function the slice's code defines that a test file defines too ends the slice: the wrong
/// receipt never lands.
#[test]
fn a_code_function_a_test_file_defines_too_lands_nothing() {
    let r = shop("test-shadows-code");
    let o = run(&r);
    assert_ne!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("clean-room — `receipt`, which src/cart.sh defines, is defined by tests/member_test.sh too: the suite runs the test's own, not the code's"),
        "{}",
        o.stdout
    );
    assert!(!git_out(&r, &["log", "-p"]).contains("not implemented"));
    assert_eq!(slice(&status(&r), "receipt")["forge"]["status"], "failed");
}

#[test]
fn a_run_killed_in_green_resumes_and_judges_what_green_left() {
    let r = shop("kill-in-green");
    let o = run(&r);
    assert_ne!(o.code, 0, "forge was killed: {o:?}");
    let st = r.forge(&["run", "--status", "shop"]);
    assert!(
        st.stdout
            .contains("interrupted: no `forge run` is driving it"),
        "{st:?}"
    );
    // The list of runs says so too, and `--json` carries it.
    let list = r.forge(&["run", "--status"]);
    assert!(list.stdout.starts_with("shop "), "{list:?}");
    assert!(list.stdout.contains(" interrupted "), "{list:?}");
    let list = r.forge(&["run", "--status", "--json"]).json();
    assert_eq!(list[0]["interrupted"], true, "{list}");
    // A git lock a killed git command left behind is named, with the way out.
    r.write(".git/index.lock", "");
    let locked = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(locked.code, 2, "{locked:?}");
    assert!(locked.stderr.contains("index.lock exists"), "{locked:?}");
    std::fs::remove_file(r.path().join(".git/index.lock")).unwrap();
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    // Green's change was judged as it was left: no second green attempt was needed.
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["green_attempts_total"]),
        1
    );
    assert_landed_cleanly(&r);
}

#[test]
fn one_run_is_driven_by_one_forge_at_a_time() {
    let r = shop("nested-run");
    assert_eq!(run(&r).code, 0);
    let nested = r.read(".tmp/.forge/runs/shop/nested-run.txt");
    assert!(
        nested
            .contains("run `shop` is already being driven by another `forge run` in this checkout"),
        "{nested}"
    );
    // Nor may a second run with another name start in the same checkout.
    assert_eq!(
        nested.matches("one run per checkout").count(),
        2,
        "{nested}"
    );
    assert_eq!(nested.matches("exit 2").count(), 2, "{nested}");
    assert!(!r.exists(".tmp/.forge/runs/other/run.json"));
}

#[test]
fn agent_cost_is_recorded_and_the_budget_stops_the_run() {
    let r = shop_with("claude-cost", "budget:\n  change:\n    usd: 0.01\n");
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains("budget exhausted for change shop"),
        "{}",
        o.stdout
    );
    // The planner's cost was read from its `claude -p` output and counted.
    let b = r.forge(&["budget", "status", "--change", "shop", "--json"]);
    assert!(b.stdout.contains("0.03"), "{b:?}");
    let st = status(&r);
    assert_eq!(st["run"]["status"], "stopped");
    assert_eq!(subjects(&r), vec!["chore: sample shop"]);
}

#[test]
fn usage_errors_exit_2_and_say_what_to_do() {
    let r = shop("");
    let o = r.forge(&["run", "shop"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("needs --goal"), "{o:?}");
    let o = r.forge(&["run", "--resume", "nope"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no run named `nope`"), "{o:?}");
    let o = r.forge(&["run", "Bad Name", "--goal", "x"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("invalid run name"), "{o:?}");
    let bare = Repo::with_command("true", "none");
    bare.git(&["commit", "-q", "--allow-empty", "-m", "init"]);
    let o = bare.forge(&["run", "x", "--goal", "y"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("agents.planner.command"), "{o:?}");
    // A second start of the same run is refused; --status lists it.
    assert_eq!(run(&r).code, 0);
    let again = run(&r);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already exists"), "{again:?}");
    let list = r.forge(&["run", "--status"]);
    assert!(list.stdout.starts_with("shop "), "{list:?}");
}

#[test]
fn a_failing_baseline_stops_the_slice_before_any_red_agent() {
    let r = shop("");
    r.write(
        "tests/broken_test.sh",
        "check \"already broken\" \"1\" \"2\"\n",
    );
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "test: a broken test"]);
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains("✗ [member-discount w1 a0] pre-red-baseline — `sh tests/run.sh` fails before any red change: exit 1, failing: already broken"),
        "{}",
        o.stdout
    );
    let st = status(&r);
    let g = gate_file(&r, "member-discount", "pre-red-baseline");
    assert_eq!(g["blocks"], true);
    assert_eq!(
        g["recovery"],
        "stop the slice and report the baseline failure"
    );
    // No red agent ran for it, and no retry wave followed: new agents would meet the same
    // failure on the same base.
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["red_attempts_total"]),
        0
    );
    assert!(!r.exists(".tmp/.forge/runs/shop/agents/member-discount-red-w1-a1.log"));
    assert!(!o.stdout.contains("Retry wave"), "{}", o.stdout);
    // The terminal shows why: the command's last output lines and its log.
    let log = g["evidence"]["log"].as_str().unwrap();
    assert!(
        o.stdout.contains(&format!("      log: {log}")),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("      │ not ok"), "{}", o.stdout);
}

#[test]
fn milestone_checks_run_every_configured_command_before_the_commit() {
    // The project's lint (a configured verify command) rejects TODOs; the focused tests do not.
    // With red free to edit tests, green's code is not also checked against the suite as it
    // was before red (see the next test): the milestone is the gate that meets the TODO.
    let r = Repo::bare();
    copy_dir(&std::path::Path::new(RUN_FIX).join("shop"), r.path());
    let yaml = agents_yaml("milestone todo", "run:\n  red_may_edit_tests: true\n").replace(
        "      report: tap\n",
        "      report: tap\n    - name: lint\n      run: \"! grep -n TODO src/cart.sh\"\n      report: none\n",
    );
    r.config(&yaml);
    r.write(".gitignore", ".tmp/.forge/\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: sample shop"]);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    // The planned milestone (member-discount) and the final completion (receipt) both ran
    // the full commands; the first try's TODO failed the milestone and went back to green.
    let m = gates_of(&st, "member-discount");
    let ms: Vec<&String> = m
        .iter()
        .filter(|(g, _)| g == "milestone-checks")
        .map(|(_, s)| s)
        .collect();
    assert_eq!(ms, ["fail", "pass"]);
    assert!(has_gate(&st, "receipt", "milestone-checks", "pass"));
    let g = gate_file(&r, "receipt", "milestone-checks");
    assert_eq!(g["evidence"]["final"], true);
    assert_eq!(g["evidence"]["commands"].as_array().unwrap().len(), 2);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(p2.contains("The full checks fail: `lint`"), "{p2}");
    // The milestone ran before the commit: nothing with a TODO was ever committed.
    assert!(!git_out(&r, &["log", "-p", "--", "src"]).contains("TODO"));
    assert_landed_cleanly(&r);
}

#[test]
fn every_configured_command_passes_on_the_suite_before_red_before_a_slice_commits() {
    // The same TODO, red kept to adding tests: before any commit, the person's commands run on
    // green's code with the tests as they were before red, and the lint fails green's first try.
    let r = Repo::bare();
    copy_dir(&std::path::Path::new(RUN_FIX).join("shop"), r.path());
    let yaml = agents_yaml("todo", "").replace(
        "      report: tap\n",
        "      report: tap\n    - name: lint\n      run: \"! grep -n TODO src/cart.sh\"\n      report: none\n",
    );
    r.config(&yaml);
    r.write(".gitignore", ".tmp/.forge/\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: sample shop"]);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    let gates = gates_of(&st, "member-discount");
    let g: Vec<&String> = gates
        .iter()
        .filter(|(g, _)| g == "green-checks")
        .map(|(_, s)| s)
        .collect();
    assert_eq!(g, ["fail", "pass"]);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(
        p2.contains("`lint` with the tests as they were before the run: exit 1"),
        "{p2}"
    );
    assert!(!git_out(&r, &["log", "-p", "--", "src"]).contains("TODO"));
    assert_landed_cleanly(&r);
}

/// Issue 31: a test area whose path goes through a link (tests/lnk -> ../build/t, build/
/// ignored) is refused at plan time; the planner is told, and with every plan naming it the run
/// stops before any red or green agent.
#[test]
fn a_test_area_reached_through_a_link_is_refused_at_plan_time() {
    let r = shop("link-area");
    r.write(".gitignore", ".tmp/.forge/\nbuild/\n");
    r.write("build/t/keep", "x\n");
    std::os::unix::fs::symlink("../build/t", r.path().join("tests/lnk")).unwrap();
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: a link to build output"]);
    let o = run(&r);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains(
            "slices[1]: the area `tests/lnk/y/` is reached through the link tests/lnk: name the folder it leads to, or remove the link"
        ),
        "{}",
        o.stdout
    );
    assert!(!r.exists(".tmp/.forge/runs/shop/agents/member-discount-red-w1-a1.log"));
    assert!(!r.exists("build/t/y/extra_test.sh"));
}

#[test]
fn an_already_green_test_the_reviewer_rejects_sends_red_back() {
    let r = shop("already-green reviewer-rejects");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    let m = slice(&st, "member-discount");
    assert_eq!(m["forge"]["status"], "done");
    assert_eq!(n(&m["forge"]["red_attempts_total"]), 2);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        p2.contains("the test passes already and the coverage reviewer rejected it (valid: true, high quality: true, useful: false)"),
        "{p2}"
    );
    // The rejected test is not committed as coverage: the slice lands as test + code.
    assert!(!subjects(&r).iter().any(|s| s.starts_with("test(")));
    assert_landed_cleanly(&r);
}

#[test]
fn a_run_killed_after_planning_keeps_the_plan() {
    let r = shop("kill-in-plan");
    let o = run(&r);
    assert_ne!(o.code, 0, "forge was killed: {o:?}");
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("✓ planning-output"), "{}", o.stdout);
    // The plan the planner wrote before the kill was judged and kept: no second planner call.
    assert_eq!(n(&status(&r)["run"]["planner_attempts"]), 1);
    assert!(!r.exists(".tmp/.forge/runs/shop/agents/run-planner-w1-a2.log"));
    assert_landed_cleanly(&r);
}

#[test]
fn a_red_agent_that_deletes_a_passing_test_is_not_a_red() {
    let r = shop("delete-test");
    assert_eq!(run(&r).code, 0);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        p2.contains("tests/card_test.sh (red may not delete an existing test file)"),
        "{p2}"
    );
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["red_attempts_total"]),
        2
    );
    // The deleted test is back (the second attempt started from what the first left, and
    // the deletion was never committed).
    assert!(
        r.exists("tests/card_test.sh"),
        "the deleted test must not stay deleted"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn an_agent_that_switches_branch_is_put_back_and_no_branch_moves() {
    let r = shop("switch-branch");
    // The person's own branch, with a commit of its own.
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("notes.txt", "mine\n");
    r.git(&["add", "notes.txt"]);
    r.git(&["commit", "-qm", "docs: my notes"]);
    let feature = git_out(&r, &["rev-parse", "feature"]);
    r.git(&["checkout", "-q", "main"]);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("HEAD was switched to feature; put back on main"),
        "{}",
        o.stdout
    );
    assert_eq!(git_out(&r, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(
        git_out(&r, &["rev-parse", "feature"]),
        feature,
        "the person's branch is untouched"
    );
    assert_eq!(
        n(&slice(&status(&r), "member-discount")["forge"]["green_attempts_total"]),
        2
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_test_hidden_with_skip_worktree_is_seen_and_restored() {
    let r = shop("skip-worktree");
    assert_eq!(run(&r).code, 0);
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "green-file-scope", "fail"));
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(
        p2.contains("tests/member_test.sh (the verified red test, which must stay byte-identical)"),
        "{p2}"
    );
    assert_eq!(
        git_out(&r, &["ls-files", "-v", "tests/member_test.sh"]),
        "H tests/member_test.sh"
    );
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
    assert_landed_cleanly(&r);
}

#[test]
fn file_names_that_look_like_pathspecs_are_literal() {
    let r = shop("magic-name nested-repo");
    // The person's uncommitted note in Forge's config must survive the run's reverts.
    let config = format!("{}# my note\n", r.read(".forge/config.yaml"));
    r.write(".forge/config.yaml", &config);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains(
            "reverted: :(top) (red may change only tests/), vendor/lib (a nested git repository)"
        ),
        "{}",
        o.stdout
    );
    assert!(!r.exists(":(top)"));
    assert!(!r.exists("vendor/lib"));
    assert_eq!(r.read(".forge/config.yaml"), config);
    assert_landed_cleanly(&r);
}

#[test]
fn git_exclude_edits_are_undone_so_hidden_files_are_seen() {
    let r = shop("exclude");
    let before = std::fs::read(r.path().join(".git/info/exclude")).unwrap_or_default();
    assert_eq!(run(&r).code, 0);
    assert_eq!(
        std::fs::read(r.path().join(".git/info/exclude")).unwrap_or_default(),
        before
    );
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(p2.contains("put back: .git/info/exclude"), "{p2}");
    // The code sources the helper; visible again, the helper is committed with it, so a clean
    // checkout of the result passes its tests (hidden, it would be missing there).
    let clone = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("git")
        .args(["clone", "-q", r.path().to_str().unwrap(), "c"])
        .current_dir(clone.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let t = std::process::Command::new("sh")
        .arg("tests/run.sh")
        .current_dir(clone.path().join("c"))
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stdout));
}

#[test]
fn an_agent_cannot_erase_the_record() {
    let r = shop("erase-timeline");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(
        p2.contains(".forge/sessions/run-shop/timeline.jsonl (its past changed)"),
        "{p2}"
    );
    // The record still starts at the run's start and its chain holds.
    let t = r.read(".forge/sessions/run-shop/timeline.jsonl");
    assert!(t.lines().next().unwrap().contains("\"run\""), "{t}");
    assert!(t.contains("planner"), "{t}");
    let v = r.forge(&["timeline", "verify"]);
    assert_eq!(v.code, 0, "{v:?}");
}

#[test]
fn an_agent_cannot_erase_the_runs_spend() {
    let r = shop_with(
        "claude-cost erase-budget",
        "budget:\n  change:\n    usd: 100\n",
    );
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(p2.contains("budget.yaml (spend went down)"), "{p2}");
    // Every agent call's cost is still counted: one real `claude -p` result each.
    let calls = std::fs::read_dir(r.path().join(".tmp/.forge/runs/shop/agents"))
        .unwrap()
        .count() as f64;
    let per_call = serde_json::from_str::<Value>(&std::fs::read_to_string(CLAUDE_RESULT).unwrap())
        .unwrap()["total_cost_usd"]
        .as_f64()
        .unwrap();
    let b = r.forge(&["budget", "status", "--change", "shop", "--json"]);
    let usd = b.json().as_array().unwrap()[0]["usd"].as_f64().unwrap();
    assert!(
        (usd - calls * per_call).abs() < 1e-6,
        "{usd} vs {calls} × {per_call}: {b:?}"
    );
}

#[test]
fn a_verifier_that_plants_evidence_in_the_log_is_caught() {
    let r = shop("fake-log");
    assert_eq!(run(&r).code, 0);
    let g: Vec<_> = gates_of(&status(&r), "member-discount")
        .into_iter()
        .filter(|(g, _)| g == "verified-red")
        .collect();
    assert_eq!(g[0].1, "fail");
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(
        p2.contains("does not appear in the focused command's output"),
        "{p2}"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_resume_refuses_run_state_changed_behind_forges_back() {
    let r = shop("fail-checks");
    assert_eq!(run(&r).code, 1);
    let path = r.path().join(".tmp/.forge/runs/shop/state.json");
    let forged = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"status\": \"running\"", "\"status\": \"done\"");
    std::fs::write(&path, forged).unwrap();
    r.forge(&["verify", "--reset-breaker", "--change", "shop"]);
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("was changed by something other than Forge"),
        "{o:?}"
    );
}

#[test]
fn a_stop_after_the_checkpoint_says_how_to_abandon_the_slice() {
    let r = shop("fail-checks");
    let o = run(&r);
    assert_eq!(o.code, 1);
    let start = slice(&status(&r), "member-discount")["forge"]["start_sha"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        o.stdout.contains(&format!(
            "To abandon the slice instead of resuming: `git reset --hard {}`",
            &start[..10]
        )),
        "{}",
        o.stdout
    );
}

#[test]
fn replacement_objects_cannot_disguise_a_weakened_test() {
    let r = shop("replace-objects");
    assert_eq!(run(&r).code, 0);
    let st = status(&r);
    assert!(has_gate(&st, "member-discount", "green-file-scope", "fail"));
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(p2.contains("reverted: tests/member_test.sh"), "{p2}");
    assert!(
        p2.contains("refs/replace/"),
        "the replacement ref is removed: {p2}"
    );
    assert_eq!(git_out(&r, &["for-each-ref", "refs/replace/"]), "");
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        "check \"member gets discount\" \"$(total 100 member)\" \"90\""
    );
    assert_landed_cleanly(&r);
}

#[test]
fn a_process_left_behind_is_killed_before_the_next_gate() {
    // Green leaves a detached process (setsid, in the background) that waits for the checks
    // to start and then edits the code: it is killed when green's call returns, so it never
    // edits anything, and what lands is what the checks ran on.
    let r = shop("slow-checks background-edit");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("process(es) it left running killed"),
        "{}",
        o.stdout
    );
    let st = status(&r);
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["green_attempts_total"]),
        1
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!r.read("src/cart.sh").contains("# late"));
    assert!(!git_out(&r, &["log", "-p"]).contains("# late"));
    assert_landed_cleanly(&r);
}

#[test]
fn a_planted_git_hook_never_runs_and_is_removed() {
    let r = shop("plant-hook");
    assert_eq!(run(&r).code, 0);
    assert!(
        !r.exists("hook-ran"),
        "Forge's own checkout ran a hook an agent planted"
    );
    assert!(!r.exists(".git/hooks/post-checkout"));
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(p2.contains(".git/hooks/post-checkout"), "{p2}");
    assert_landed_cleanly(&r);
}

#[test]
fn a_deleted_branch_comes_back_where_it_was() {
    let r = shop("delete-branch");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("HEAD was switched to a detached HEAD; put back on main"),
        "{}",
        o.stdout
    );
    assert_eq!(git_out(&r, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_landed_cleanly(&r);
}

#[test]
fn resume_command_continues_red_and_green_but_never_a_verifier() {
    let r = shop("");
    let cmd = format!("CHEAT='edit-code' sh {RUN_FIX}/agent.sh");
    let resumed = format!("RESUMED=1 {cmd}");
    r.config(&format!(
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      report: tap\nagents:\n  default:\n    command: {}\n    resume_command: {}\n",
        serde_json::to_string(&cmd).unwrap(),
        serde_json::to_string(&resumed).unwrap()
    ));
    r.git(&["commit", "-qam", "chore: resume command"]);
    assert_eq!(run(&r).code, 0);
    let log = |f: &str| r.read(&format!(".tmp/.forge/runs/shop/agents/{f}.log"));
    assert!(log("member-discount-red-w1-a1").contains("resumed=0"));
    assert!(
        log("member-discount-red-w1-a2").contains("resumed=1"),
        "{}",
        log("member-discount-red-w1-a2")
    );
    // The verifier of red's second attempt is a new agent: no resume.
    assert!(log("member-discount-verifier-w1-a2").contains("resumed=0"));
    assert!(log("run-planner-w1-a1").contains("resumed=0"));
    assert!(
        !log("run-planner-w1-a1").contains("session=\n"),
        "the planner has a session id"
    );
}

#[test]
fn an_agent_command_that_does_not_exist_is_a_setup_error() {
    let r = shop("");
    r.config("verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      report: tap\nagents:\n  default:\n    command: no-such-agent-program --plan\n");
    r.git(&["commit", "-qam", "chore: a typo in the agent"]);
    let o = run(&r);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("the planner agent's command was not found (exit 127)"),
        "{o:?}"
    );
    assert!(o.stderr.contains("agents.planner.command"), "{o:?}");
    assert!(o.stderr.contains("run-planner-w1-a1.log"), "{o:?}");
    // The person fixes the command and commits the fix; nothing was spent on the typo: the
    // planner's first real attempt is attempt 1, and its session is new (no resume_command).
    let cmd = format!("sh {RUN_FIX}/agent.sh");
    r.config(&format!(
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      report: tap\nagents:\n  default:\n    command: {}\n    resume_command: {}\n",
        serde_json::to_string(&cmd).unwrap(),
        serde_json::to_string(&format!("RESUMED=1 {cmd}")).unwrap()
    ));
    r.git(&["commit", "-qam", "chore: fix the agent command"]);
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(n(&status(&r)["run"]["planner_attempts"]), 1);
    assert!(
        r.read(".tmp/.forge/runs/shop/agents/run-planner-w1-a1.log")
            .contains("resumed=0")
    );
    // The person's commit is where the run started from.
    assert!(subjects(&r).contains(&"chore: fix the agent command".to_string()));
    assert_eq!(subjects(&r).len(), 5, "{:?}", subjects(&r));
}

#[test]
fn a_persons_commits_on_a_stopped_slice_are_never_reset_away() {
    let r = shop("kill-in-red");
    assert_ne!(run(&r).code, 0);
    // While the run is interrupted, a person commits something of their own.
    r.write("NOTES.md", "mine\n");
    r.git(&["add", "NOTES.md"]);
    r.git(&["commit", "-qm", "docs: my notes"]);
    // A new run may not start on top of the interrupted one.
    let other = r.forge(&["run", "other", "--goal", "x"]);
    assert_eq!(other.code, 2, "{other:?}");
    assert!(
        other.stderr.contains("run `shop` was interrupted"),
        "{other:?}"
    );
    r.config(&agents_yaml("", ""));
    let o = r.forge(&["run", "--resume", "shop"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("commits were made since it stopped"),
        "{o:?}"
    );
    assert_eq!(r.read("NOTES.md"), "mine\n");
    assert_eq!(subjects(&r)[0], "docs: my notes");
}

#[test]
fn red_may_add_to_a_test_file_that_already_defines_a_name_twice() {
    // Issue 29: a test file may define one name twice, legally (a helper redefined before
    // each case here; two local `class FalsyError` in more-itertools' tests/test_more.py). Red's
    // one new case, appended, is an addition: the slice lands.
    let r = shop("append-existing");
    r.write(
        "tests/card_test.sh",
        "amount() { echo 100; }\ncheck \"guest pays by card\" \"$(total \"$(amount)\" card)\" \"102\"\namount() { echo 50; }\ncheck \"guest pays 51 for 50 by card\" \"$(total \"$(amount)\" card)\" \"51\"\n",
    );
    r.git(&["commit", "-qa", "--amend", "--no-edit"]);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    assert!(!has_gate(&st, "member-discount", "red-file-scope", "fail"));
    assert_eq!(
        n(&slice(&st, "member-discount")["forge"]["red_attempts_total"]),
        1
    );
    let mc = slice(&st, "member-discount")["forge"]["commit"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        git_out(&r, &["show", "--format=", "--name-only", &mc]),
        "src/cart.sh\ntests/card_test.sh"
    );
    assert!(
        r.read("tests/card_test.sh")
            .ends_with("check \"member gets discount\" \"$(total 100 member)\" \"90\"\ncheck \"receipt names the amount\" \"$(receipt 90 2>/dev/null)\" \"paid 90\"\n")
    );
    assert_landed_cleanly(&r);
}

/// The shop before its first test: the runner is configured (TAP from `sh tests/run.sh`) but
/// no test file exists yet, so every check of the base reports no case.
fn greenfield_shop(cheat: &str) -> Repo {
    let r = shop(cheat);
    std::fs::remove_file(r.path().join("tests/card_test.sh")).unwrap();
    let runner = r.read("tests/run.sh").replace(
        "do\n  if ! sh -n",
        "do\n  [ -e \"$f\" ] || continue\n  if ! sh -n",
    );
    assert!(runner.contains("|| continue"), "{runner}");
    r.write("tests/run.sh", &runner);
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qa", "--amend", "--no-edit"]);
    let o = std::process::Command::new("sh")
        .arg("tests/run.sh")
        .current_dir(r.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "TAP version 13\n1..0\n");
    r
}

#[test]
fn a_project_with_no_test_yet_lands_its_first_slice() {
    // Issue 29: the person's commands with the tests as they were before the run report no
    // case, as they did on the base: that is what the base had, not a missing report.
    let r = greenfield_shop("");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("Run `shop` DONE: 2 slice(s) landed, 0 already green (test only, nothing implemented); 2 commit(s)."),
        "{}",
        o.stdout
    );
    let st = status(&r);
    for id in ["member-discount", "receipt"] {
        assert_eq!(
            n(&slice(&st, id)["forge"]["green_attempts_total"]),
            1,
            "{id}"
        );
        assert!(!has_gate(&st, id, "green-checks", "fail"), "{id}");
    }
    let mc = slice(&st, "member-discount")["forge"]["commit"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        git_out(&r, &["show", "--format=", "--name-only", &mc]),
        "src/cart.sh\ntests/member_test.sh"
    );
    assert_landed_cleanly(&r);
}

#[test]
fn code_that_hides_the_suite_as_it_was_before_the_run_still_fails() {
    // The neighbour: the base had a case, and receipt's green ends the runner early unless the
    // test an earlier slice added is there. Its own checks pass; the suite as it was before
    // the run reports none, fewer than the base's one.
    let r = shop("hide-old-suite");
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let st = status(&r);
    let g: Vec<String> = gates_of(&st, "receipt")
        .into_iter()
        .filter(|(g, _)| g == "green-checks")
        .map(|(_, s)| s)
        .collect();
    assert_eq!(g, ["fail", "pass"]);
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/receipt-green-w1-a2.md");
    assert!(
        p2.contains("`test` with the tests as they were before the run: 0 passing case(s), fewer than the 1 it reports on the run's base"),
        "{p2}"
    );
    assert!(!git_out(&r, &["log", "-p", "--", "src"]).contains("hide-old-suite"));
    assert_landed_cleanly(&r);
}

/// A large project's checks' checkout outlives the run, so the next run rewrites only what
/// changed — without its cache folders (code a check ran wrote them), and taken on trust in
/// nothing: a test planted in it between runs is not run by the next one.
#[test]
fn a_large_projects_checkout_waits_for_the_next_run_and_is_verified_there() {
    let r = shop_with("", "run:\n  check_caches: [build]\n");
    for i in 0..2_000 {
        r.write(&format!("lib/m{:02}/f{i}.txt", i / 100), &format!("{i}\n"));
    }
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: a large tree"]);
    // The checks make a cache folder of their own, as a build would.
    let with_cache = "verify:\n  commands:\n    - name: test\n      run: mkdir -p build && echo built > build/out && sh tests/run.sh";
    let config = r.read(".forge/config.yaml").replacen(
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh",
        with_cache,
        1,
    );
    assert_ne!(config, r.read(".forge/config.yaml"));
    r.write(".forge/config.yaml", &config);
    r.git(&["commit", "-qam", "chore: checks that build"]);
    let base = git_out(&r, &["rev-parse", "HEAD"]);
    let o = run(&r);
    assert_eq!(o.code, 0, "{o:?}");
    let parked: Vec<std::path::PathBuf> = std::fs::read_dir(r.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("forge-check"))
        })
        .collect();
    assert_eq!(
        parked.len(),
        1,
        "{parked:?}: only the checkout stays, not its layer or temp folder"
    );
    let co = &parked[0];
    assert_eq!(
        std::fs::read_to_string(co.join("lib/m07/f700.txt")).unwrap(),
        "700\n"
    );
    assert!(
        !co.join("build").exists(),
        "a check's cache outlived the run"
    );

    // Between runs, something writes the parked folder: a test that fails, a changed file.
    std::fs::write(co.join("tests/zz_planted_test.sh"), "check planted 1 2\n").unwrap();
    std::fs::write(co.join("lib/m07/f700.txt"), "changed\n").unwrap();
    r.git(&["reset", "-q", "--hard", &base]);
    std::fs::remove_dir_all(r.path().join(".tmp/.forge/runs")).unwrap();
    let o = run(&r);
    assert_eq!(o.code, 0, "the planted test was run: {o:?}");
    assert!(!co.join("tests/zz_planted_test.sh").exists());
    assert_eq!(
        std::fs::read_to_string(co.join("lib/m07/f700.txt")).unwrap(),
        "700\n"
    );
    assert!(o.stdout.contains("DONE: 2 slice(s) landed"), "{}", o.stdout);
}
