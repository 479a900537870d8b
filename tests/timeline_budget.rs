//! The session timeline and the spend budget end to end: events from verify, the breaker, a
//! person's reset and the hooks; tamper detection; spend from real agent outputs; enforcement.

mod common;

use common::{Repo, tap_script};
use serde_json::{Value, json};

const SPEND: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spend");

fn hook(r: &Repo, event: &str, payload: &Value) -> common::Output {
    r.hook("claude", event, payload.to_string().as_bytes())
}

fn failing_repo() -> Repo {
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.write(
        "tests/run.sh",
        &tap_script(&[("guest pays by card", false)]),
    );
    r.change("checkout", &["guest pays by card"]);
    r
}

#[test]
fn verify_breaker_and_reset_are_on_the_timeline_attributed() {
    let r = failing_repo();
    for _ in 0..3 {
        r.forge_cmd(&["verify", "--change", "checkout"])
            .env("FORGE_SESSION", "term-1")
            .output()
            .unwrap();
    }
    r.forge_cmd(&["verify", "--reset-breaker", "--change", "checkout"])
        .env("FORGE_SESSION", "term-1")
        .output()
        .unwrap();
    let out = r
        .forge_cmd(&["timeline", "--change", "checkout", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let evs = v.as_array().unwrap();
    let kinds: Vec<(&str, &str)> = evs
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap(),
                e["data"]
                    .get("event")
                    .or(e["data"].get("verdict"))
                    .and_then(|x| x.as_str())
                    .unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("verify", "FAIL"),
            ("breaker", "counted"),
            ("verify", "FAIL"),
            ("breaker", "counted"),
            ("verify", "FAIL"),
            ("breaker", "opened"),
            ("breaker", "reset")
        ]
    );
    assert!(
        evs.iter()
            .all(|e| e["actor"] == "human:Ada Lovelace" && e["session"] == "term-1")
    );
    assert_eq!(evs[0]["data"]["failed"], 1);
    let o = r.forge(&["timeline", "verify"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("7 events, chain intact"), "{}", o.stdout);
    // Text view and filters.
    let o = r.forge(&["timeline", "--kind", "breaker"]);
    assert!(
        o.stdout.contains("opened — 3/3 consecutive failures, OPEN"),
        "{}",
        o.stdout
    );
    assert_eq!(r.forge(&["timeline", "--since", "yesterday"]).code, 2);
}

#[test]
fn tampering_is_detected_and_named() {
    let r = failing_repo();
    for _ in 0..3 {
        r.forge_cmd(&["verify", "--change", "checkout"])
            .env("FORGE_SESSION", "s")
            .output()
            .unwrap();
    }
    let path = ".forge/sessions/s/timeline.jsonl";
    let original = r.read(path);
    // Edit: the agent turns a FAIL into a PASS.
    r.write(
        path,
        &original.replacen("\"verdict\":\"FAIL\"", "\"verdict\":\"PASS\"", 1),
    );
    let o = r.forge(&["timeline", "verify"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stdout
            .contains("timeline.jsonl:1: its hash does not match its content"),
        "{}",
        o.stdout
    );
    // Removal of a line.
    let lines: Vec<&str> = original.lines().collect();
    let removed: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, l)| *l)
        .collect();
    r.write(path, &(removed.join("\n") + "\n"));
    let o = r.forge(&["timeline", "verify"]);
    assert!(o.stdout.contains("timeline.jsonl:3:"), "{}", o.stdout);
    // A torn last line: reported, then repaired by the next append.
    r.write(path, &(original.clone() + "{\"ts\":\"2026-"));
    assert_eq!(r.forge(&["timeline", "verify"]).code, 1);
    r.forge_cmd(&["verify", "--change", "checkout"])
        .env("FORGE_SESSION", "s")
        .output()
        .unwrap();
    let o = r.forge(&["timeline", "verify"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("repaired"), "{}", o.stdout);
}

#[test]
fn hooks_record_guard_decisions_and_spend_and_enforce_the_budget() {
    let r = failing_repo();
    r.config("verify:\n  commands:\n    - {name: test, run: sh tests/run.sh, report: tap}\nbudget:\n  session: {usd: 0.01}\n  change: {usd: 5.00}\n");
    assert_eq!(r.forge(&["change", "use", "checkout"]).code, 0);
    let transcript = r.path().join("transcript.jsonl");
    std::fs::copy(format!("{SPEND}/claude-transcript.jsonl"), &transcript).unwrap();
    let base = json!({"session_id": "sess-1", "transcript_path": transcript, "cwd": r.path(), "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "cargo test"}});
    // Under budget: allowed (where the kernel sandbox runs, with the command rewritten into it),
    // and the decision is on the timeline.
    let o = hook(&r, "pre-tool-use", &base).stdout;
    assert!(
        o.is_empty() || o.contains("\"permissionDecision\":\"allow\""),
        "{o}"
    );
    // The tool ran; PostToolUse books the transcript's spend ($0.03972 of claude-opus-4-8).
    let mut post = base.clone();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] =
        json!({"stdout": "ok", "stderr": "", "interrupted": false, "isImage": false});
    assert_eq!(hook(&r, "post-tool-use", &post).code, 0);
    let ledger = r.read(".forge/sessions/sess-1/budget.yaml");
    assert!(ledger.contains("usd: 0.03972"), "{ledger}");
    assert!(
        r.read(".forge/changes/checkout/budget.yaml")
            .contains("tokens: 7420")
    );
    // Over the session's $0.01: the next tool call is denied, naming the limit and the spend.
    let o = hook(&r, "pre-tool-use", &base);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("[budget-session]") && reason.contains("$0.0397 of $0.01"),
        "{reason}"
    );
    // Stop: the agent may stop, with a message for the person (no verify loop).
    let mut stop = base.clone();
    stop["hook_event_name"] = json!("Stop");
    stop["stop_hook_active"] = json!(false);
    let o = hook(&r, "stop", &stop);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert!(v.get("decision").is_none());
    assert!(
        v["systemMessage"].as_str().unwrap().contains("budget"),
        "{o:?}"
    );
    // Everything is on the timeline, attributed to the agent session.
    let out = r
        .forge_cmd(&["timeline", "--session", "sess-1", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"guard") && kinds.contains(&"budget") && kinds.contains(&"tool"),
        "{kinds:?}"
    );
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|e| e["actor"] == "claude:sess-1")
    );
    // A person sees it in one screen.
    let o = r.forge(&["status"]);
    assert!(o.stdout.contains("Active change: checkout"), "{}", o.stdout);
    assert!(o.stdout.contains("Guard denials"), "{}", o.stdout);
}

#[test]
fn budget_record_status_and_check() {
    let r = failing_repo();
    r.config("verify:\n  commands:\n    - {name: test, run: 'true'}\nbudget:\n  change: {usd: 0.05, tokens: null}\n  warn_at: 0.5\n");
    let o = r.forge(&[
        "budget",
        "record",
        "--change",
        "checkout",
        "--from",
        "claude-json",
        &format!("{SPEND}/claude-p-result.json"),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("$0.0397"), "{}", o.stdout);
    let o = r.forge(&["budget", "status", "--change", "checkout"]);
    assert!(o.stdout.starts_with("warn "), "{}", o.stdout);
    assert_eq!(
        r.forge(&["budget", "check", "--change", "checkout"]).code,
        0
    );
    let o = r.forge(&[
        "budget",
        "record",
        "--change",
        "checkout",
        "--from",
        "codex-json",
        &format!("{SPEND}/codex-exec.jsonl"),
    ]);
    assert!(o.stdout.contains("NO PRICE"), "{}", o.stdout);
    r.forge(&["budget", "record", "--change", "checkout", "--usd", "0.02"]);
    let o = r.forge(&["budget", "check", "--change", "checkout"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stdout.contains("OVER change checkout"), "{}", o.stdout);
    let v = r
        .forge(&["budget", "status", "--change", "checkout", "--json"])
        .json();
    assert_eq!(v[0]["unpriced_tokens"], 440);
    assert_eq!(
        r.forge(&["budget", "record", "--change", "checkout", "--usd", "-1"])
            .code,
        2
    );
    // A tampered ledger fails closed.
    r.write(".forge/changes/checkout/budget.yaml", "usd: lots\n");
    assert_eq!(
        r.forge(&["budget", "check", "--change", "checkout"]).code,
        2
    );
}

#[test]
fn html_page_is_written() {
    let r = failing_repo();
    for _ in 0..3 {
        r.forge(&["verify", "--change", "checkout"]);
    }
    let o = r.forge(&["timeline", "--html", "t.html"]);
    assert_eq!(o.code, 0, "{o:?}");
    let page = r.read("t.html");
    assert!(
        page.starts_with("<!doctype html>")
            && page.contains("<svg")
            && page.contains("Breaker streak per change")
    );
}

#[test]
fn raising_a_limit_is_recorded_as_a_persons_act() {
    let r = failing_repo();
    r.config(
        "verify:\n  commands:\n    - {name: test, run: 'true'}\nbudget:\n  change: {usd: 1.00}\n",
    );
    assert_eq!(
        r.forge(&["budget", "status", "--change", "checkout"]).code,
        0
    );
    r.config(
        "verify:\n  commands:\n    - {name: test, run: 'true'}\nbudget:\n  change: {usd: 50.00}\n",
    );
    assert_eq!(
        r.forge(&["budget", "status", "--change", "checkout"]).code,
        0
    );
    let v = r.forge(&["timeline", "--kind", "budget", "--json"]).json();
    let evs = v.as_array().unwrap();
    assert_eq!(evs.len(), 1, "{v}");
    assert_eq!(evs[0]["data"]["event"], "limits-changed");
    assert_eq!(evs[0]["data"]["from"]["change"]["usd"], 1.0);
    assert_eq!(evs[0]["data"]["to"]["change"]["usd"], 50.0);
    assert_eq!(evs[0]["actor"], "human:Ada Lovelace");
    // And an agent cannot make that edit in the first place.
    let o = r.forge(&[
        "guard",
        "check",
        "--",
        "sed -i s/1.00/50.00/ .forge/config.yaml",
    ]);
    assert_eq!(o.code, 1, "{o:?}");
}
