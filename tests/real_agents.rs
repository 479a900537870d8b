//! The real Claude Code CLI, offline, against Forge's hooks: `forge hooks install claude` wires
//! the project, and the agent rig (`claude-offline.sh`, a developer tool kept outside this
//! repository) runs the real client against a scripted fake Anthropic API, so every hook call
//! below is made by the client.
//!
//! Needs the rig (found as `tests/common/rig.rs` says: `$FORGE_AGENT_RIG`, else
//! `../shared/tools/agent-rig/` beside the checkout, then `/work/shared/tools/agent-rig/`),
//! `python3`, `node`, `npm`, and the pinned client (installed by the rig through npm into
//! `~/.cache/forge-agent-rig` on first use). When any of that is missing each test returns early
//! and passes — its `SKIPPED: …` line is captured by the test harness like any passing test's
//! output, so it shows only with `--nocapture` — and `cargo test` shows one line saying so, why
//! and where the rig was looked for (`tests/real_agents_notice.rs`, which has no harness to hide
//! it). `FORGE_REQUIRE_REAL_AGENTS=1` turns a skip into a failure.
//!
//! The last test runs `forge run` with the real client playing the red role (the other roles stay
//! the scripted tests/fixtures/run/agent.sh): a cheating first attempt reverted by the red
//! file-scope gate, a second attempt through `resume_command` in the same client session, and
//! the client's reported cost in Forge's budget.
//!
//! `FORGE_CLAUDE_VERSIONS=2.1.197,latest` runs the guard, sandbox-rewrite, Stop and worktree
//! tests once per listed Claude Code version (`latest`: the newest on npm); unset, the pinned one
//! only (docs/design.md, "The real-client tests").
//!
//! Rig runs are serialised by a lock (one npm install, no port or CPU contention), so the tests
//! need no `--test-threads=1`.

mod common;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use common::rig::{REQUIRE_ENV, find_rig, have};
use common::{Repo, copy_dir, forge_bin, sandbox_available, tap_script};
use serde_json::{Value, json};

static RIG_LOCK: Mutex<()> = Mutex::new(());

thread_local! {
    /// The Claude Code version this test thread's rig runs (`CLAUDE_CODE_VERSION` for the rig);
    /// `None`: the rig's own default. Set by [`on_each_claude`].
    static CLAUDE: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The Codex CLI version [`run_codex`] runs; `None`: the pinned one. Set by [`on_each_codex`].
    static CODEX: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The Gemini CLI version [`run_gemini`] runs; `None`: the pinned one. Set by
    /// [`on_each_gemini`].
    static GEMINI: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `body` once per Claude Code version `FORGE_CLAUDE_VERSIONS` names (default: the rig's
/// pinned one only; see `tests/common/rig.rs`), each run saying which version it was.
fn on_each_claude(test: &str, body: impl Fn()) {
    on_each_version(
        test,
        "Claude Code",
        common::rig::claude_versions(),
        &CLAUDE,
        body,
    );
}

/// [`on_each_claude`] for Codex CLI: each version `FORGE_CODEX_VERSIONS` names, else 0.169.0.
fn on_each_codex(test: &str, body: impl Fn()) {
    let c = &common::rig::CODEX;
    on_each_version(test, c.name, common::rig::versions(c), &CODEX, body);
}

/// [`on_each_claude`] for Gemini CLI: each version `FORGE_GEMINI_VERSIONS` names, else 0.61.0.
fn on_each_gemini(test: &str, body: impl Fn()) {
    let c = &common::rig::GEMINI;
    on_each_version(test, c.name, common::rig::versions(c), &GEMINI, body);
}

/// Runs `body` once per version in `versions`, with `slot` set to it; a list npm could not
/// resolve is a skip (or a failure when required).
fn on_each_version(
    test: &str,
    client: &str,
    versions: Result<Vec<String>, String>,
    slot: &'static std::thread::LocalKey<RefCell<Option<String>>>,
    body: impl Fn(),
) {
    let versions = match versions {
        Ok(v) => v,
        Err(why) => {
            unavailable(test, &why);
            return;
        }
    };
    for v in versions {
        eprintln!("real_agents::{test}: {client} {v}");
        slot.with(|c| *c.borrow_mut() = Some(v.clone()));
        body();
        slot.with(|c| *c.borrow_mut() = None);
    }
}

/// Skips (loudly) or, with `FORGE_REQUIRE_REAL_AGENTS=1`, fails.
fn unavailable(test: &str, why: &str) {
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{test}: the real-agent rig is required ({REQUIRE_ENV}=1) but unavailable: {why}");
    }
    eprintln!(
        "\n==== SKIPPED: real_agents::{test}: {why} (set {REQUIRE_ENV}=1 to make this a failure) ====\n"
    );
}

/// One finished run of the real client.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    /// The rig's OUT_DIR, inside `dir`.
    out: PathBuf,
    dir: Option<tempfile::TempDir>,
}

impl Run {
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.out.join(name)).unwrap_or_default()
    }

    /// Everything worth seeing when an assertion fails.
    fn dump(&self) -> String {
        let mut s = format!(
            "\n--- rig exit {} (out dir {}, kept on failure)\n--- rig stdout:\n{}\n--- rig stderr:\n{}\n",
            self.code,
            self.out.display(),
            self.stdout,
            self.stderr
        );
        for f in [
            "result.json",
            "claude.stderr",
            "gemini.stderr",
            "server.stderr",
        ] {
            s.push_str(&format!("--- {f}:\n{}\n", self.file(f)));
        }
        s
    }

    fn result(&self) -> Value {
        serde_json::from_str(self.file("result.json").trim())
            .unwrap_or_else(|e| panic!("result.json is not JSON ({e}){}", self.dump()))
    }

    /// The main-agent `/v1/messages` request bodies (those that offer tools), in order.
    fn main_requests(&self) -> Vec<Value> {
        self.file("requests.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["kind"] == "messages")
            .map(|e| e["body"].clone())
            .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .collect()
    }

    /// The messages of the last main request: the whole conversation the model saw.
    fn conversation(&self) -> Vec<Value> {
        self.main_requests()
            .last()
            .and_then(|b| b["messages"].as_array().cloned())
            .unwrap_or_else(|| panic!("no main-agent request logged{}", self.dump()))
    }

    /// `(is_error, text)` of every tool_result the model received.
    fn tool_results(&self) -> Vec<(bool, String)> {
        blocks(&self.conversation())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| (b["is_error"] == json!(true), text_of(&b["content"])))
            .collect()
    }

    /// Texts of the user messages that are Stop-hook feedback.
    fn stop_feedback(&self) -> Vec<String> {
        self.conversation()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| text_of(&m["content"]))
            .filter(|t| t.contains("Stop hook feedback"))
            .collect()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(d) = self.dir.take()
        {
            eprintln!("real_agents: rig output kept at {}", d.keep().display());
        }
    }
}

fn blocks(messages: &[Value]) -> impl Iterator<Item = &Value> {
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
}

/// The text of a message or tool_result `content`: a string or a list of text blocks.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i["text"]
                    .as_str()
                    .map_or_else(|| i.to_string(), str::to_string)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// `forge hooks install claude` with this test binary, then the real client on `turns`.
/// `None` (after a loud skip, or a failure when required) when the rig cannot run here.
fn run_claude(test: &str, r: &Repo, turns: Value) -> Option<Run> {
    run_claude_with_home(test, r, turns, |_| {})
}

/// [`run_claude`], with `seed` called on the client's (empty) home folder before it starts.
fn run_claude_with_home(
    test: &str,
    r: &Repo,
    turns: Value,
    seed: impl FnOnce(&Path),
) -> Option<Run> {
    run_claude_with_args(test, r, turns, seed, &[])
}

/// [`run_claude_with_home`], with `args` given to the client.
fn run_claude_with_args(
    test: &str,
    r: &Repo,
    turns: Value,
    seed: impl FnOnce(&Path),
    args: &[&str],
) -> Option<Run> {
    run_claude_script(test, r, json!({ "turns": turns }), seed, args, &[])
}

/// The real client on a whole rig `script` (`turns`, and what `RIG_FAKE`'s fake reads:
/// `subagent_marker`, `subagent_turns`, `delay`), with `env` for the rig. The Claude Code
/// version is [`on_each_claude`]'s, else `CLAUDE_CODE_VERSION` in `env`, else the rig's.
fn run_claude_script(
    test: &str,
    r: &Repo,
    script_json: Value,
    seed: impl FnOnce(&Path),
    args: &[&str],
    env: &[(&str, &str)],
) -> Option<Run> {
    let rig = match find_rig() {
        Ok(p) => p,
        Err(why) => {
            unavailable(test, &why);
            return None;
        }
    };
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            unavailable(test, &format!("`{tool}` is not available"));
            return None;
        }
    }
    let bin = forge_bin();
    let o = r.forge(&["hooks", "install", "claude", "--bin", bin.to_str().unwrap()]);
    assert_eq!(o.code, 0, "hooks install: {o:?}");
    let settings = r.read(".claude/settings.json");
    for event in [
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionStart",
        "SubagentStart",
        "SubagentStop",
    ] {
        assert!(settings.contains(event), "{event} not wired: {settings}");
    }

    let dir = tempfile::Builder::new()
        .prefix("forge-rig-out-")
        .tempdir()
        .unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, script_json.to_string()).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("home")).unwrap();
    seed(&out.join("home"));

    let mut cmd = Command::new(&rig);
    cmd.arg(r.path())
        .arg(&script)
        .arg(&out)
        .args(args)
        .env("RIG_TIMEOUT", "300")
        .envs(env.iter().copied());
    if let Some(v) = CLAUDE.with(|c| c.borrow().clone()) {
        cmd.env("CLAUDE_CODE_VERSION", v);
    }
    run_rig(test, cmd, "Claude Code", out, dir)
}

/// Runs one of the rig's launchers (`cmd`, its arguments set) alone — the rig's clients share
/// the machine — and reads what it left in `out`; `None` after a loud skip when the rig could
/// not install `client` (exit 3). `dir` holds `out` and is kept with the run.
fn run_rig(
    test: &str,
    mut cmd: Command,
    client: &str,
    out: PathBuf,
    dir: tempfile::TempDir,
) -> Option<Run> {
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let started = std::time::Instant::now();
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    drop(guard);
    let code = o.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    eprintln!(
        "real_agents::{test}: {client} through the rig exited {code} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    if code == 3 {
        unavailable(
            test,
            &format!(
                "the rig could not install the {client} client: {}",
                stderr.trim()
            ),
        );
        return None;
    }
    Some(Run {
        code,
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr,
        out,
        dir: Some(dir),
    })
}

fn bash(command: &str) -> Value {
    json!({"content": [{"type": "tool_use", "name": "Bash",
                        "input": {"command": command, "description": "scripted step"}}],
           "stop_reason": "tool_use"})
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}], "stop_reason": "end_turn"})
}

fn assert_success(run: &Run) {
    assert_eq!(run.code, 0, "client failed{}", run.dump());
    let res = run.result();
    assert_eq!(res["is_error"], json!(false), "{}", run.dump());
}

#[test]
fn benign_bash_command_runs() {
    on_each_claude("benign_bash_command_runs", || {
        let r = Repo::with_command("true", "none");
        let Some(run) = run_claude(
            "benign_bash_command_runs",
            &r,
            json!([bash("echo hello > hello.txt"), text("done")]),
        ) else {
            return;
        };
        assert_success(&run);
        assert!(r.exists("hello.txt"), "hello.txt missing{}", run.dump());
        assert_eq!(r.read("hello.txt"), "hello\n");
        let results = run.tool_results();
        assert_eq!(results.len(), 1, "{results:?}{}", run.dump());
        assert!(
            !results[0].0,
            "benign command errored: {results:?}{}",
            run.dump()
        );
        assert!(
            run.result()["permission_denials"]
                .as_array()
                .is_some_and(|d| d.is_empty()),
            "{}",
            run.dump()
        );
    });
}

/// A fresh folder that Forge's guard counts as outside the repository *and* outside the temp
/// folders (`/tmp`, `/var/tmp`, `$TMPDIR` are deliberately allowed for `rm -r`).
fn victim_dir(test: &str) -> Option<tempfile::TempDir> {
    let temps: Vec<PathBuf> = ["/tmp", "/var/tmp"]
        .iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("TMPDIR").map(PathBuf::from))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut bases = vec![];
    if let Some(home) = std::env::var_os("HOME") {
        bases.push(PathBuf::from(home).join(".cache/forge-real-agents"));
    }
    bases.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/forge-real-agents"));
    for base in &bases {
        if std::fs::create_dir_all(base).is_err() {
            continue;
        }
        let Ok(real) = base.canonicalize() else {
            continue;
        };
        if temps.iter().any(|t| real.starts_with(t)) {
            continue;
        }
        if let Ok(d) = tempfile::Builder::new().prefix("victim-").tempdir_in(&real) {
            return Some(d);
        }
    }
    unavailable(
        test,
        &format!("no writable folder outside the temp folders for the victim (tried {bases:?})"),
    );
    None
}

#[test]
fn destructive_command_outside_the_repo_is_denied() {
    on_each_claude("destructive_command_outside_the_repo_is_denied", || {
        let test = "destructive_command_outside_the_repo_is_denied";
        let r = Repo::with_command("true", "none");
        let Some(victim) = victim_dir(test) else {
            return;
        };
        let precious = victim.path().join("precious.txt");
        std::fs::write(&precious, "keep me\n").unwrap();
        let cmd = format!("rm -rf {}", victim.path().display());
        let Some(run) = run_claude(test, &r, json!([bash(&cmd), text("done")])) else {
            return;
        };
        assert_success(&run);
        assert!(
            precious.is_file(),
            "the client ran `{cmd}`: the victim is gone{}",
            run.dump()
        );
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
        let results = run.tool_results();
        assert_eq!(results.len(), 1, "{results:?}{}", run.dump());
        let (is_error, msg) = &results[0];
        assert!(
            *is_error,
            "deny must reach the model as an error: {msg}{}",
            run.dump()
        );
        assert!(
            msg.contains("Forge guard deny [rm-outside-repo]"),
            "tool_result: {msg}{}",
            run.dump()
        );
        let denials = run.result()["permission_denials"].clone();
        assert!(
            denials
                .as_array()
                .is_some_and(|d| d.len() == 1 && d[0]["tool_name"] == "Bash"),
            "permission_denials: {denials}{}",
            run.dump()
        );
    });
}

#[test]
fn edits_of_forge_state_are_denied() {
    on_each_claude("edits_of_forge_state_are_denied", || {
        let test = "edits_of_forge_state_are_denied";
        let r = Repo::with_command("true", "none");
        r.change("checkout", &["guest pays by card"]);
        let config = r.read(".forge/config.yaml");
        let attempts = r
            .path()
            .join(".forge/changes/checkout/verify-attempts.yaml");
        let attempts_before = std::fs::read_to_string(&attempts).ok();
        let write = json!({"content": [{"type": "tool_use", "name": "Write", "input": {
                "file_path": attempts.display().to_string(),
                "content": "consecutive_failures: 0\nopen: false\n"}}],
            "stop_reason": "tool_use"});
        let Some(run) = run_claude(
            test,
            &r,
            json!([
                write,
                bash("echo 'verify: {commands: []}' > .forge/config.yaml"),
                text("done")
            ]),
        ) else {
            return;
        };
        assert_success(&run);
        assert_eq!(
            std::fs::read_to_string(&attempts).ok(),
            attempts_before,
            "the Write tool changed {}{}",
            attempts.display(),
            run.dump()
        );
        assert_eq!(
            r.read(".forge/config.yaml"),
            config,
            "Bash rewrote .forge/config.yaml{}",
            run.dump()
        );
        let results = run.tool_results();
        assert_eq!(results.len(), 2, "{results:?}{}", run.dump());
        for (is_error, msg) in &results {
            assert!(*is_error, "{msg}{}", run.dump());
            assert!(
                msg.contains("Forge guard deny [forge-state]"),
                "tool_result: {msg}{}",
                run.dump()
            );
        }
        let denials = run.result()["permission_denials"].clone();
        let names: Vec<&str> = denials
            .as_array()
            .map(|d| d.iter().filter_map(|x| x["tool_name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(names, ["Write", "Bash"], "{denials}{}", run.dump());
    });
}

#[test]
fn failing_change_blocks_stop_until_the_breaker_opens() {
    on_each_claude("failing_change_blocks_stop_until_the_breaker_opens", || {
        let test = "failing_change_blocks_stop_until_the_breaker_opens";
        let r = Repo::with_command("sh tests/run.sh", "tap");
        r.write(
            "tests/run.sh",
            &tap_script(&[("guest pays by card", false)]),
        );
        r.change("checkout", &["guest pays by card"]);
        let o = r.forge(&["change", "use", "checkout"]);
        assert_eq!(o.code, 0, "{o:?}");
        // One text turn per expected stop: the first stop and two blocked retries; the third
        // failure opens the breaker and lets the client stop. Spare turns prove it really stopped.
        let turns = json!([
            text("done (1)"),
            text("done (2)"),
            text("done (3)"),
            text("done (4)"),
            text("done (5)")
        ]);
        let Some(run) = run_claude(test, &r, turns) else {
            return;
        };
        assert_success(&run);
        let feedback = run.stop_feedback();
        assert_eq!(
            feedback.len(),
            2,
            "Stop hook blocks: {feedback:#?}{}",
            run.dump()
        );
        for (i, f) in feedback.iter().enumerate() {
            assert!(f.contains("Forge verify FAILED"), "{f}{}", run.dump());
            assert!(f.contains("guest pays by card"), "{f}{}", run.dump());
            assert!(
                f.contains(&format!("Breaker: {}/3", i + 1)),
                "{f}{}",
                run.dump()
            );
        }
        // The client stopped after the third attempt, on the third scripted turn.
        assert_eq!(run.main_requests().len(), 3, "{}", run.dump());
        assert_eq!(run.result()["result"], "done (3)", "{}", run.dump());
        let state = r.read(".forge/changes/checkout/verify-attempts.yaml");
        assert!(state.contains("consecutive_failures: 3"), "{state}");
        assert!(state.contains("open: true"), "{state}");
    });
}

/// The first Claude Code release that backgrounds subagents (the rig's README).
const BACKGROUND_CLAUDE: &str = "2.1.220";

/// From Claude Code 2.1.220 on, the Agent tool runs subagents in the background by default:
/// the main agent stops while its subagent still fixes the code. Those Stops are blocked with
/// "1 subagent(s) still running" and not counted; once the subagent ended, the Stop verifies,
/// passes, and the breaker never opened. Runs on each version `FORGE_CLAUDE_VERSIONS` lists that
/// backgrounds subagents, else on the first that does.
#[test]
fn a_stop_waits_for_a_background_subagent_without_opening_the_breaker() {
    let test = "a_stop_waits_for_a_background_subagent_without_opening_the_breaker";
    let versions: Vec<String> = common::rig::claude_versions()
        .unwrap_or_default()
        .into_iter()
        .filter(|v| common::rig::backgrounds_subagents(v))
        .collect();
    let versions = if versions.is_empty() {
        vec![BACKGROUND_CLAUDE.to_string()]
    } else {
        versions
    };
    for v in versions {
        eprintln!("real_agents::{test}: Claude Code {v}");
        let r = Repo::with_command("sh tests/run.sh", "tap");
        // The case passes once the subagent's fix landed.
        r.write(
            "tests/run.sh",
            "if [ -f fixed.txt ]; then echo 'ok 1 - guest pays by card'; else echo 'not ok 1 - guest pays by card'; fi\necho 1..1\n",
        );
        r.change("checkout", &["guest pays by card"]);
        assert_eq!(r.forge(&["change", "use", "checkout"]).code, 0);
        let agent = json!({"content": [{"type": "tool_use", "name": "@agent", "input": {
                "description": "fix the card payment", "prompt": "SUBAGENT-TASK: fix it",
                "subagent_type": "general-purpose"}}],
            "stop_reason": "tool_use"});
        let mut turns = vec![agent];
        turns.extend((1..=10).map(|i| text(&format!("waiting ({i})"))));
        let script = json!({
            "subagent_marker": "SUBAGENT-TASK",
            "turns": turns,
            "subagent_turns": [bash("sleep 3 && echo fixed > fixed.txt"), text("fixed")],
        });
        let Some(run) = run_claude_script(
            test,
            &r,
            script,
            |_| {},
            &[],
            &[
                ("RIG_FAKE", "fake_anthropic_stream.py"),
                ("CLAUDE_CODE_VERSION", v.as_str()),
            ],
        ) else {
            return;
        };
        assert_success(&run);
        // The subagent ran in the background and did its work.
        let results = run.tool_results();
        assert!(
            results
                .iter()
                .any(|(_, t)| t.contains("Async agent launched successfully")),
            "{results:?}{}",
            run.dump()
        );
        assert!(r.exists("fixed.txt"), "{}", run.dump());
        // Each Stop while it ran was blocked and said why, and none was counted.
        let feedback = run.stop_feedback();
        for f in &feedback {
            assert!(
                f.contains("1 subagent(s) still running") && f.contains("not counted"),
                "{f}{}",
                run.dump()
            );
            assert!(!f.contains("Breaker:"), "{f}{}", run.dump());
        }
        let state = r.read(".forge/changes/checkout/verify-attempts.yaml");
        assert!(
            state.contains("consecutive_failures: 0"),
            "{state}{}",
            run.dump()
        );
        assert!(state.contains("open: false"), "{state}{}", run.dump());
        assert!(
            state.contains("last_verdict: PASS"),
            "{state}{}",
            run.dump()
        );
        let result = run.result()["result"].as_str().unwrap_or("").to_string();
        assert!(result.starts_with("waiting"), "{result}{}", run.dump());
        eprintln!(
            "real_agents::{test}: Claude Code {v}: {} Stop(s) blocked while the subagent ran, then PASS",
            feedback.len()
        );
    }
}

/// A subagent started with `isolation: "worktree"` works in `.claude/worktrees/agent-…/`, a
/// working tree of the project: its Bash and Write calls there go through (the Bash one in the
/// kernel sandbox, in a form Claude Code's own worktree check accepts), and a write to the
/// worktree's `.forge/` is denied.
#[test]
fn a_worktree_subagent_edits_its_worktree_but_not_its_forge_state() {
    on_each_claude(
        "a_worktree_subagent_edits_its_worktree_but_not_its_forge_state",
        || {
            let test = "a_worktree_subagent_edits_its_worktree_but_not_its_forge_state";
            let r = Repo::with_command("true", "none");
            // Claude Code bases a worktree on HEAD.
            r.git(&["add", "-A"]);
            r.git(&["commit", "-qm", "base"]);
            let agent = json!({"content": [{"type": "tool_use", "name": "@agent", "input": {
                "description": "fix it", "prompt": "SUBAGENT-TASK: fix it",
                "subagent_type": "general-purpose", "isolation": "worktree",
                "run_in_background": false}}],
            "stop_reason": "tool_use"});
            let write = json!({"content": [{"type": "tool_use", "name": "Write", "input": {
                "file_path": "src/w.txt", "content": "written\n"}}],
            "stop_reason": "tool_use"});
            let script = json!({
                "subagent_marker": "SUBAGENT-TASK",
                "turns": [agent, text("done")],
                "subagent_turns": [
                    bash("echo fixed > fixed.txt"),
                    write,
                    bash("echo 'verify: {}' > .forge/config.yaml"),
                    text("fixed"),
                ],
            });
            let Some(run) = run_claude_script(
                test,
                &r,
                script,
                |_| {},
                &[],
                &[("RIG_FAKE", "fake_anthropic_stream.py")],
            ) else {
                return;
            };
            assert_success(&run);
            let worktrees: Vec<PathBuf> = std::fs::read_dir(r.path().join(".claude/worktrees"))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            assert_eq!(worktrees.len(), 1, "{worktrees:?}{}", run.dump());
            let wt = &worktrees[0];
            assert_eq!(
                std::fs::read_to_string(wt.join("fixed.txt")).unwrap_or_default(),
                "fixed\n",
                "{}",
                run.dump()
            );
            assert_eq!(
                std::fs::read_to_string(wt.join("src/w.txt")).unwrap_or_default(),
                "written\n",
                "{}",
                run.dump()
            );
            assert_eq!(
                std::fs::read_to_string(wt.join(".forge/config.yaml")).unwrap(),
                r.read(".forge/config.yaml"),
                "the worktree's config was rewritten{}",
                run.dump()
            );
            let log = run.file("requests.jsonl");
            assert!(
                log.contains("Forge guard deny [forge-state]"),
                "{}",
                run.dump()
            );
            assert!(!log.contains("[agent-config]"), "{}", run.dump());
        },
    );
}

/// A fork subagent (`subagent_type: "fork"`, switched on by `CLAUDE_CODE_FORK_SUBAGENT=1`)
/// inherits the main conversation instead of starting blank; its shell calls reach Forge's
/// hooks like any subagent's: the destructive one is denied, the benign one runs in the kernel
/// sandbox.
#[test]
fn a_fork_subagents_commands_are_guarded_and_sandboxed() {
    on_each_claude(
        "a_fork_subagents_commands_are_guarded_and_sandboxed",
        || {
            let test = "a_fork_subagents_commands_are_guarded_and_sandboxed";
            if !sandbox_available(test) {
                return;
            }
            let r = Repo::with_command("true", "none");
            let Some(victim) = victim_dir(test) else {
                return;
            };
            let precious = victim.path().join("precious.txt");
            std::fs::write(&precious, "keep me\n").unwrap();
            let agent = json!({"content": [{"type": "tool_use", "name": "@agent", "input": {
                "description": "run the two commands", "prompt": "FORK-TASK: run the two commands",
                "subagent_type": "fork", "run_in_background": false}}],
            "stop_reason": "tool_use"});
            let script = json!({
                "subagent_marker": "FORK-TASK",
                "turns": [agent, text("done")],
                "subagent_turns": [
                    bash(&format!("rm -rf {}", victim.path().display())),
                    bash("echo fork > fork.txt && echo \"marker=$FORGE_SANDBOX\""),
                    text("finished"),
                ],
            });
            let Some(run) = run_claude_script(
                test,
                &r,
                script,
                |_| {},
                &[],
                &[
                    ("RIG_FAKE", "fake_anthropic_stream.py"),
                    ("CLAUDE_CODE_FORK_SUBAGENT", "1"),
                ],
            ) else {
                return;
            };
            assert_success(&run);
            let log = run.file("requests.jsonl");
            assert_eq!(
                std::fs::read_to_string(&precious).unwrap_or_default(),
                "keep me\n",
                "the fork's rm ran{}",
                run.dump()
            );
            assert!(
                log.contains("Forge guard deny [rm-outside-repo]"),
                "the hook did not deny the fork's call{}",
                run.dump()
            );
            assert!(log.contains("marker=session"), "{}", run.dump());
            assert_eq!(r.read("fork.txt"), "fork\n", "{}", run.dump());
            // A fork, not a blank subagent: its requests start with the main conversation, its
            // task (the marker) coming after it.
            let forked = log
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|e| e["kind"] == "messages" && e["role"] == "sub")
                .any(|e| {
                    let first = e["body"]["messages"][0].to_string();
                    !first.contains("FORK-TASK") && e["body"].to_string().contains("FORK-TASK")
                });
            assert!(
                forked,
                "the subagent did not inherit the conversation{}",
                run.dump()
            );
        },
    );
}

// ---------------------------------------------------------------------------------------------
// `forge run` with the real client playing red.
//
// Forge, not the rig, starts `claude` here: once per red attempt, against one fake model for the
// whole run. `tests/fixtures/run/claude-offline-run.sh` runs `forge run` inside the rig's offline
// setup (private network namespace, `claude` on PATH, HOME and the API pointed at the fake), and
// `tests/fixtures/run/fake_red_model.py` wraps the rig's fake API so that the script is keyed on
// Forge's prompt: an entry is picked by substrings of the current prompt (the slice, "attempt 1
// of", "Your last attempt was rejected"), and its turns are counted from that prompt on.

const RUN_FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run");
const GOAL: &str = "members get 10% off; receipts name the amount";
const MEMBER_TEST: &str = r#"check "member gets discount" "$(total 100 member)" "90""#;
const RECEIPT_TEST: &str =
    r#"check "receipt names the amount" "$(receipt 90 2>/dev/null)" "paid 90""#;
const CARD_LINE: &str = "    card) echo $(( $1 + $1 * 2 / 100 )) ;;   # 2% card fee";
const CHEAT_LINE: &str = "    member) echo 90 ;;   # red was here";

/// The rig's client, installed by one trivial rig run when it is not there yet. Call with
/// `RIG_LOCK` held.
fn ensure_claude(test: &str, rig: &Path) -> Option<PathBuf> {
    let version = CLAUDE.with(|c| c.borrow().clone());
    match common::rig::install_claude(rig, version.as_deref()) {
        Ok(bin) => Some(bin),
        Err(why) => {
            unavailable(test, &why);
            None
        }
    }
}

fn git_out(r: &Repo, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(r.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A role's agent command as the README documents it, with the real client: the first call of
/// a wave, and the `resume_command` that continues the wave's session.
fn claude_agent_commands() -> (String, String) {
    let flags = "--output-format json --permission-mode acceptEdits";
    (
        format!(
            r#"claude -p "$(cat "$FORGE_PROMPT_FILE")" --session-id "$FORGE_AGENT_SESSION" {flags}"#
        ),
        format!(
            r#"claude -p "$(cat "$FORGE_PROMPT_FILE")" --resume "$FORGE_AGENT_SESSION" {flags}"#
        ),
    )
}

/// The sample shop of tests/run.rs, committed: the scripted agent plays every role but red, which
/// is the real client (`resume_command` continues the wave's session on later attempts).
fn shop_with_claude_red() -> Repo {
    let r = Repo::bare();
    copy_dir(&Path::new(RUN_FIX).join("shop"), r.path());
    let scripted = format!(
        "FORGE_BIN='{}' sh {RUN_FIX}/agent.sh",
        forge_bin().display()
    );
    let (red, resume) = claude_agent_commands();
    let q = |s: &str| serde_json::to_string(s).unwrap();
    r.config(&format!(
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      timeout: 30\n      report: tap\n\
         agents:\n  default:\n    command: {}\n    timeout: 30\n  red:\n    command: {}\n    resume_command: {}\n    timeout: 120\n\
         # The kernel would refuse red's write to src/cart.sh; this test proves the gate that\n\
         # reverts it and the resumed session (the walled client: the kernel-sandbox tests below).\n\
         sandbox:\n  mode: off\n",
        q(&scripted),
        q(&red),
        q(&resume)
    ));
    r.write(".gitignore", ".tmp/.forge/\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: sample shop"]);
    r
}

fn tool(name: &str, input: Value) -> Value {
    json!({"content": [{"type": "tool_use", "name": name, "input": input}],
           "stop_reason": "tool_use"})
}

/// The model's side of every red call, keyed on Forge's prompt (see fake_red_model.py).
fn red_script(repo: &Path) -> Value {
    let p = |rel: &str| repo.join(rel).display().to_string();
    json!({"by_prompt": [
        // Attempt 2 of member-discount, resumed: the test alone. The file is still there from
        // attempt 1 (only src/cart.sh was reverted), and the client edits a file only after
        // reading it.
        {"name": "member-a2",
         "when": ["Slice `member-discount`", "Your last attempt was rejected"],
         "turns": [
            tool("Read", json!({"file_path": p("tests/member_test.sh")})),
            tool("Write", json!({"file_path": p("tests/member_test.sh"),
                                 "content": format!("{MEMBER_TEST}\n")})),
            text("member test only")]},
        // Attempt 1: a draft of the test, and the cheat — the production code, made to pass.
        {"name": "member-a1",
         "when": ["Slice `member-discount`", "attempt 1 of"],
         "turns": [
            tool("Write", json!({"file_path": p("tests/member_test.sh"),
                                 "content": format!("# draft\n{MEMBER_TEST}\n")})),
            tool("Read", json!({"file_path": p("src/cart.sh")})),
            tool("Edit", json!({"file_path": p("src/cart.sh"), "old_string": CARD_LINE,
                                "new_string": format!("{CARD_LINE}\n{CHEAT_LINE}")})),
            text("test and code")]},
        {"name": "receipt-a1",
         "when": ["Slice `receipt`", "attempt 1 of"],
         "turns": [
            tool("Write", json!({"file_path": p("tests/receipt_test.sh"),
                                 "content": format!("{RECEIPT_TEST}\n")})),
            text("receipt test")]}
    ]})
}

/// `forge run` on a real Python package with its own `.venv` (inflection, vendored), with
/// `forge init`'s config, the kernel sandbox as the config leaves it, and the real Claude Code
/// client as red and green (the planner and verifier scripted): the slice lands, and what landed
/// passes the project's suite.
#[test]
fn claude_as_red_and_green_lands_a_slice_on_a_real_python_package() {
    let test = "claude_as_red_and_green_lands_a_slice_on_a_real_python_package";
    let rig = match find_rig() {
        Ok(p) => p,
        Err(why) => return unavailable(test, &why),
    };
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            return unavailable(test, &format!("`{tool}` is not available"));
        }
    }
    if !common::projects::pytest_available(test) {
        return;
    }
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(claude) = ensure_claude(test, &rig) else {
        return;
    };
    let r = common::projects::python_project("inflection");
    let mut plan = common::projects::inflection_script();
    plan["slices"] = json!([plan["slices"][0].clone()]);
    let scripted = common::projects::scripted_agent(&r, &plan);
    let (first, again) = claude_agent_commands();
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let mut agents = format!(
        "  default:\n    command: {}\n    timeout: 120\n",
        q(&scripted)
    );
    for role in ["red", "green"] {
        agents.push_str(&format!(
            "  {role}:\n    command: {}\n    resume_command: {}\n    timeout: 120\n",
            q(&first),
            q(&again)
        ));
    }
    common::projects::init_with_agents(&r, &agents);
    let repo = r.path().canonicalize().unwrap();
    let p = |rel: &str| repo.join(rel).display().to_string();
    let last_line = "_irregular('zombie', 'zombies')";
    let model = json!({"by_prompt": [
        {"name": "red", "when": ["role: red", "Slice `kebabize`"],
         "turns": [
            tool("Write", json!({"file_path": p("test_kebabize.py"), "content":
                "import inflection\n\n\ndef test_kebabize_splits_camel_case():\n    assert inflection.kebabize(\"DeviceType\") == \"device-type\"\n"})),
            text("wrote the failing test")]},
        {"name": "green", "when": ["role: green", "Slice `kebabize`"],
         "turns": [
            tool("Read", json!({"file_path": p("inflection/__init__.py")})),
            tool("Edit", json!({"file_path": p("inflection/__init__.py"), "old_string": last_line,
                "new_string": format!("{last_line}\n\n\ndef kebabize(word: str) -> str:\n    \"\"\"Make a kebab-case word from a CamelCase one.\"\"\"\n    return dasherize(underscore(word))")})),
            text("kebabize added")]}
    ]});
    let dir = tempfile::Builder::new()
        .prefix("forge-rig-out-")
        .tempdir()
        .unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, model.to_string()).unwrap();
    let out = dir.path().join("out");
    let o = Command::new("bash")
        .arg(Path::new(RUN_FIX).join("claude-offline-run.sh"))
        .arg(rig.parent().unwrap())
        .arg(&claude)
        .arg(&script)
        .arg(&out)
        .arg(forge_bin())
        .args(["run", "words", "--goal", "kebab case"])
        .current_dir(&repo)
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    drop(guard);
    let run = Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        out,
        dir: Some(dir),
    };
    assert_eq!(run.code, 0, "forge run failed{}", run.dump());
    assert!(
        run.stdout
            .contains("Run `words` DONE: 1 slice(s) landed, 0 already green (test only, nothing implemented); 1 commit(s)."),
        "{}",
        run.dump()
    );
    assert_eq!(
        git_out(&r, &["log", "-1", "--format=%s"]),
        "feat(kebabize): kebabize turns a word into kebab case"
    );
    let suite = Command::new(r.path().join(".venv/bin/python"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(r.path())
        .output()
        .unwrap();
    assert!(suite.status.success(), "{suite:?}");
}

/// The claude `-p --output-format json` result in an agent log (the log's last JSON line).
fn claude_result(r: &Repo, stem: &str) -> Value {
    let log = r.read(&format!(".tmp/.forge/runs/shop/agents/{stem}.log"));
    log.lines()
        .rev()
        .find_map(|l| {
            serde_json::from_str::<Value>(l.trim())
                .ok()
                .filter(|v| v["type"] == "result")
        })
        .unwrap_or_else(|| panic!("no claude result in {stem}.log:\n{log}"))
}

/// Every red agent log of the run, for a failure message.
fn red_logs(r: &Repo) -> String {
    let dir = r.path().join(".tmp/.forge/runs/shop/agents");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names.retain(|p| p.to_string_lossy().contains("-red-"));
    names.sort();
    names
        .iter()
        .map(|p| {
            format!(
                "--- {}:\n{}\n",
                p.display(),
                std::fs::read_to_string(p).unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn claude_plays_red_in_forge_run_and_a_cheat_is_reverted_then_resumed() {
    let test = "claude_plays_red_in_forge_run_and_a_cheat_is_reverted_then_resumed";
    let rig = match find_rig() {
        Ok(p) => p,
        Err(why) => return unavailable(test, &why),
    };
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            return unavailable(test, &format!("`{tool}` is not available"));
        }
    }
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(claude) = ensure_claude(test, &rig) else {
        return;
    };
    let r = shop_with_claude_red();
    let repo = r.path().canonicalize().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("forge-rig-out-")
        .tempdir()
        .unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, red_script(&repo).to_string()).unwrap();
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let o = Command::new("bash")
        .arg(Path::new(RUN_FIX).join("claude-offline-run.sh"))
        .arg(rig.parent().unwrap())
        .arg(&claude)
        .arg(&script)
        .arg(&out)
        .arg(forge_bin())
        .args(["run", "shop", "--goal", GOAL])
        .current_dir(&repo)
        .output()
        .unwrap();
    drop(guard);
    let run = Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        out,
        dir: Some(dir),
    };
    eprintln!(
        "real_agents::{test}: forge run exited {} in {:.1}s",
        run.code,
        started.elapsed().as_secs_f64()
    );

    // The run landed: the two commits of the honest run, and the project's tests pass.
    assert_eq!(
        run.code,
        0,
        "forge run failed{}--- red agent logs:\n{}",
        run.dump(),
        red_logs(&r)
    );
    assert!(
        run.stdout
            .contains("Run `shop` DONE: 2 slice(s) landed, 0 already green (test only, nothing implemented); 2 commit(s)."),
        "{}",
        run.dump()
    );
    assert_eq!(
        git_out(&r, &["log", "--format=%s"]),
        "feat(receipt): a receipt names the amount paid\n\
         feat(member-discount): members get 10% off\n\
         chore: sample shop"
    );
    assert_eq!(
        git_out(&r, &["show", "--format=", "--name-only", "HEAD~1"]),
        "src/cart.sh\ntests/member_test.sh"
    );
    // The member test is attempt 2's, the cart is green's: the cheat left no trace.
    assert_eq!(
        git_out(&r, &["show", "HEAD~1:tests/member_test.sh"]),
        MEMBER_TEST
    );
    assert!(!r.read("src/cart.sh").contains("red was here"));
    assert!(r.read("src/cart.sh").contains("10% member discount"));
    assert_eq!(
        git_out(&r, &["status", "--porcelain", "--", ".", ":!.forge"]),
        ""
    );
    let tests_pass = Command::new("sh")
        .arg("tests/run.sh")
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(tests_pass.status.success(), "{tests_pass:?}");

    // Attempt 1 failed the red file-scope gate on src/cart.sh; attempt 2 passed it.
    let st = r.forge(&["run", "--status", "shop", "--json"]).json();
    let slice = |id: &str| {
        st["slices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("no slice {id} in {st}"))
            .clone()
    };
    let member = slice("member-discount");
    let scope: Vec<(u64, String)> = member["forge"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["gate"] == "red-file-scope")
        .map(|g| {
            (
                g["attempt"].as_u64().unwrap(),
                g["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(scope, [(1, "fail".into()), (2, "pass".into())], "{st}");
    assert_eq!(member["forge"]["red_attempts_total"], 2, "{st}");
    assert_eq!(slice("receipt")["forge"]["red_attempts_total"], 1, "{st}");
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-red-w1-a2.md");
    assert!(p2.contains("reverted: src/cart.sh"), "{p2}");

    // The fake model saw every call: each scripted turn once, in order, and every tool the
    // client ran (Write, Read, Edit) succeeded — the cheat really happened.
    let requests = run.main_requests();
    let turns: Vec<String> = run
        .file("requests.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["kind"] == "messages" && e["turn"].is_string())
        .filter(|e| e["body"]["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .map(|e| e["turn"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        turns,
        [
            "member-a1#0",
            "member-a1#1",
            "member-a1#2",
            "member-a1#3",
            "member-a2#0",
            "member-a2#1",
            "member-a2#2",
            "receipt-a1#0",
            "receipt-a1#1"
        ],
        "{}",
        run.dump()
    );
    for body in &requests {
        let msgs = body["messages"].as_array().cloned().unwrap_or_default();
        for b in blocks(&msgs).filter(|b| b["type"] == "tool_result") {
            assert_ne!(
                b["is_error"],
                json!(true),
                "a tool failed: {b}{}",
                run.dump()
            );
        }
    }

    // The resumed call continued the same session: its first request carries attempt 1's
    // prompt and its Edit of src/cart.sh before attempt 2's prompt, which names the revert.
    let a2 = &requests[4]["messages"];
    let a2 = a2.as_array().unwrap();
    let user_texts: Vec<String> = a2
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .filter(|t| t.contains("# Forge run `shop`"))
        .collect();
    assert_eq!(user_texts.len(), 2, "{user_texts:#?}{}", run.dump());
    assert!(
        user_texts[0].contains("role: red (attempt 1 of"),
        "{}",
        user_texts[0]
    );
    assert!(
        user_texts[1].contains("role: red (attempt 2 of"),
        "{}",
        user_texts[1]
    );
    assert!(
        user_texts[1].contains("Your last attempt was rejected")
            && user_texts[1].contains("reverted: src/cart.sh"),
        "{}",
        user_texts[1]
    );
    assert!(
        blocks(a2).any(|b| b["type"] == "tool_use"
            && b["name"] == "Edit"
            && b["input"]["new_string"]
                .as_str()
                .is_some_and(|s| s.contains("red was here"))),
        "attempt 1's Edit is not in the resumed conversation{}",
        run.dump()
    );
    // Both attempts report Forge's session id, and the client's transcript of that session holds
    // both prompts; the receipt slice got a session of its own.
    let session = member["forge"]["red_session"].as_str().unwrap().to_string();
    let a1_result = claude_result(&r, "member-discount-red-w1-a1");
    let a2_result = claude_result(&r, "member-discount-red-w1-a2");
    let receipt_result = claude_result(&r, "receipt-red-w1-a1");
    assert_eq!(a1_result["session_id"], session.as_str());
    assert_eq!(a2_result["session_id"], session.as_str());
    assert_ne!(receipt_result["session_id"], session.as_str());
    let projects = run.out.join("home/.claude/projects");
    let transcript = std::fs::read_dir(&projects)
        .unwrap()
        .map(|d| d.unwrap().path().join(format!("{session}.jsonl")))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no transcript {session}.jsonl under {}", projects.display()));
    let transcript = std::fs::read_to_string(transcript).unwrap();
    assert!(transcript.contains("role: red (attempt 1 of"));
    assert!(transcript.contains("role: red (attempt 2 of"));

    // What the client reported it cost is what the budget holds.
    let results = [&a1_result, &a2_result, &receipt_result];
    let usd: f64 = results
        .iter()
        .map(|v| v["total_cost_usd"].as_f64().unwrap())
        .sum();
    assert!(usd > 0.0, "{results:?}");
    let b = r.forge(&["budget", "status", "--change", "shop", "--json"]);
    assert_eq!(b.code, 0, "{b:?}");
    let standings = b.json();
    let change = standings
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == "change shop")
        .unwrap_or_else(|| panic!("no change standing: {standings}"));
    let spent = change["usd"].as_f64().unwrap();
    assert!(
        (spent - usd).abs() < 1e-9,
        "budget {spent} vs client {usd}: {standings}"
    );
    assert!(change["tokens"].as_u64().unwrap() > 0, "{standings}");
}

const SPEND_FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spend");

/// Runs `command` (which starts `claude` itself, from `PATH`) in `repo` against the rig's fake
/// model with `fake_cache_model.py`'s additions (subagent turns, scripted usage): like
/// `claude-offline-run.sh`, whose copy it uses with that fake. `None` after a loud skip.
fn run_with_cache_model(
    test: &str,
    repo: &Path,
    script: &Value,
    command: &[&str],
) -> Option<(std::process::Output, PathBuf, tempfile::TempDir)> {
    let rig = match find_rig() {
        Ok(p) => p,
        Err(why) => {
            unavailable(test, &why);
            return None;
        }
    };
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            unavailable(test, &format!("`{tool}` is not available"));
            return None;
        }
    }
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let claude = ensure_claude(test, &rig)?;
    let dir = tempfile::Builder::new()
        .prefix("forge-rig-out-")
        .tempdir()
        .unwrap();
    let runner = std::fs::read_to_string(Path::new(RUN_FIX).join("claude-offline-run.sh"))
        .unwrap()
        .replace("fake_red_model.py", "fake_cache_model.py");
    std::fs::write(dir.path().join("run.sh"), runner).unwrap();
    std::fs::copy(
        Path::new(SPEND_FIX).join("fake_cache_model.py"),
        dir.path().join("fake_cache_model.py"),
    )
    .unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let out = dir.path().join("out");
    let o = Command::new("bash")
        .arg(dir.path().join("run.sh"))
        .arg(rig.parent().unwrap())
        .arg(&claude)
        .arg(&script_path)
        .arg(&out)
        .args(command)
        .current_dir(repo)
        .output()
        .unwrap();
    drop(guard);
    Some((o, out, dir))
}

#[test]
fn subagent_spend_matches_the_clients_own_total() {
    on_each_claude(
        "subagent_spend_matches_the_clients_own_total",
        subagent_spend_on_one_client,
    );
}

/// [`subagent_spend_matches_the_clients_own_total`] on the client [`on_each_claude`] chose.
fn subagent_spend_on_one_client() {
    let test = "subagent_spend_matches_the_clients_own_total";
    let r = Repo::with_command("true", "none");
    let bin = forge_bin();
    let o = r.forge(&["hooks", "install", "claude", "--bin", bin.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{o:?}");
    let script: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{SPEND_FIX}/claude-subagents/script.json")).unwrap(),
    )
    .unwrap();
    let repo = r.path().canonicalize().unwrap();
    let Some((o, out, dir)) = run_with_cache_model(
        test,
        &repo,
        &script,
        &[
            "env",
            "IS_SANDBOX=1",
            "claude",
            "-p",
            "do the task",
            "--output-format",
            "json",
            "--dangerously-skip-permissions",
        ],
    ) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&o.stdout);
    let keep = || format!("\n--- out dir kept at {}", dir.path().display());
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not a result ({e}): {stdout}{:?}{}", o.stderr, keep()));
    let session = result["session_id"].as_str().unwrap();
    // The client ran a subagent, and wrote its transcript where Forge looks for it.
    let subagents: Vec<_> = glob_jsonl(&out.join("home/.claude/projects"), "subagents");
    assert_eq!(subagents.len(), 1, "{subagents:?}{}", keep());
    // The session's last message (a subagent's too) can reach its transcript after the hook
    // that would read it ran (seen with 2.1.197, more often on a loaded machine); a record by
    // hand continues from where the hooks stopped and completes it.
    let transcript = glob_jsonl(&out.join("home/.claude/projects"), session)
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("subagents"))
        .unwrap();
    let o = r.forge(&[
        "budget",
        "record",
        "--session",
        session,
        "--from",
        "claude-transcript",
        transcript.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    // The subagent's spend is booked, which only its own transcript holds.
    let v = r.forge(&["timeline", "--kind", "budget", "--json"]).json();
    let sub: Vec<&Value> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["data"]["source"] == "claude-subagent")
        .collect();
    assert!(!sub.is_empty(), "{v:#}{}", keep());
    // The subagent runs on the client's small model: `claude-haiku-4-5-20251001` on 2.1.197,
    // `claude-haiku-5-5` on 2.1.337.
    assert!(
        sub.iter().all(|e| e["data"]["model"]
            .as_str()
            .is_some_and(|m| m.starts_with("claude-haiku-"))),
        "{v:#}"
    );
    // Booked by the hooks, or — for what reached the transcript after they read it — by the
    // record above; the ledger's total below (equal to the client's, which includes the
    // subagent's cost) proves all of it was counted.
    let ledger = r.read(&format!(".forge/sessions/{session}/budget.yaml"));
    let usd: f64 = ledger
        .lines()
        .find_map(|l| l.strip_prefix("usd: "))
        .unwrap()
        .parse()
        .unwrap();
    let claude = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (usd - claude).abs() < 1e-9,
        "Forge booked ${usd}, Claude Code reports ${claude}\n{ledger}{}",
        keep()
    );
    assert!(ledger.contains("cache_write_1h_tokens: 2000"), "{ledger}");
}

/// The `.jsonl` files under `root` whose path contains `part`.
fn glob_jsonl(root: &Path, part: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl")
                && p.to_string_lossy().contains(part)
            {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn the_documented_agent_command_hands_claude_the_dollars_left() {
    let test = "the_documented_agent_command_hands_claude_the_dollars_left";
    let r = Repo::bare();
    let bash = |c: &str| json!({"content": [{"type": "tool_use", "name": "Bash", "input": {"command": c, "description": "step"}}], "stop_reason": "tool_use"});
    let script = json!({"turns": [bash("echo one"), bash("echo two"), bash("echo three"),
        {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}]});
    // The agent command docs/budget.md gives, as `forge run` runs it: through `sh -c`, with
    // FORGE_BUDGET_LEFT_USD set when a USD limit applies.
    let documented = "claude -p \"do the task\" ${FORGE_BUDGET_LEFT_USD:+--max-budget-usd \"$FORGE_BUDGET_LEFT_USD\"} --output-format json --dangerously-skip-permissions";
    let repo = r.path().canonicalize().unwrap();
    let run = |left: Option<&str>| {
        let mut cmd = vec!["env", "IS_SANDBOX=1"];
        let var = left.map(|l| format!("FORGE_BUDGET_LEFT_USD={l}"));
        if let Some(v) = &var {
            cmd.push(v);
        }
        cmd.extend(["sh", "-c", documented]);
        run_with_cache_model(test, &repo, &script, &cmd).map(|(o, _, _)| {
            let s = String::from_utf8_lossy(&o.stdout).into_owned();
            (
                o.status.code(),
                serde_json::from_str::<Value>(s.trim())
                    .unwrap_or_else(|e| panic!("{e}: {s} {o:?}")),
            )
        })
    };
    let Some((code, res)) = run(Some("0.0100")) else {
        return;
    };
    assert_eq!(code, Some(1), "{res}");
    assert_eq!(res["subtype"], "error_max_budget_usd", "{res}");
    // Its cost still reaches Forge (the result carries modelUsage).
    assert!(
        !forge::budget::from_claude_json(&res, &Default::default())
            .unwrap()
            .is_empty()
    );
    let Some((code, res)) = run(None) else {
        return;
    };
    assert_eq!(code, Some(0), "{res}");
    assert_eq!(res["subtype"], "success", "{res}");
}

/// Which versions the background-subagent test may use: from 2.1.220 on, as numbers, not text.
#[test]
fn the_versions_that_background_subagents_are_told_by_number() {
    for (v, yes) in [
        ("2.1.197", false),
        ("2.1.99", false),
        ("2.1.220", true),
        ("2.1.337", true),
        ("2.2.0", true),
        ("3.0.0", true),
    ] {
        assert_eq!(common::rig::backgrounds_subagents(v), yes, "{v}");
    }
}

/// How a `FORGE_*_VERSIONS` list is read: unset, the pinned version alone (CI asks no registry);
/// `latest` asked of npm once, duplicates dropped; npm's failure is the tests' skip reason.
#[test]
fn a_versions_list_defaults_to_the_pinned_one_and_resolves_latest() {
    use common::rig::versions_in;
    let never = || -> Result<String, String> { panic!("npm asked for an unset list") };
    assert_eq!(versions_in("", "0.169.0", never).unwrap(), ["0.169.0"]);
    assert_eq!(versions_in(" , ", "0.169.0", never).unwrap(), ["0.169.0"]);
    let newest = || Ok("0.171.0".to_string());
    assert_eq!(
        versions_in("0.169.0, latest", "0.169.0", newest).unwrap(),
        ["0.169.0", "0.171.0"]
    );
    assert_eq!(
        versions_in("latest,0.171.0,latest", "0.169.0", newest).unwrap(),
        ["0.171.0"]
    );
    let offline = || Err("npm could not say".to_string());
    assert_eq!(
        versions_in("latest", "0.61.0", offline).unwrap_err(),
        "npm could not say"
    );
    assert_eq!(common::rig::CODEX.versions_env, "FORGE_CODEX_VERSIONS");
    assert_eq!(common::rig::GEMINI.versions_env, "FORGE_GEMINI_VERSIONS");
}

#[test]
fn the_skip_notice_names_the_reason_the_rig_and_the_switch() {
    let why = "agent rig not found (looked at x)".to_string();
    let line = common::rig::notice(&Err(why), false);
    assert!(
        line.starts_with("real-client tests (tests/real_agents.rs) SKIPPED: agent rig not found"),
        "{line}"
    );
    if std::env::var_os(common::rig::RIG_ENV).is_none() {
        assert!(
            line.contains("/work/shared/tools/agent-rig")
                && line.contains("/../shared/tools/agent-rig"),
            "{line}"
        );
    }
    assert!(
        line.contains("FORGE_AGENT_RIG"),
        "how to point at a rig elsewhere: {line}"
    );
    assert!(line.contains("FORGE_REQUIRE_REAL_AGENTS=1"), "{line}");
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(common::rig::notice(&Err("x".into()), true).contains(" FAIL: x"));
}

/// A script the guard reads but cannot see through: Python whose paths are computed at run time
/// (`chr` codes, an argument). Outside a sandbox the guard asks about it (`inline-code`); inside
/// the session sandbox that finding is allowed as contained, and the kernel holds what the code
/// then tries: read `~/.ssh/*`, delete the folder `$1`, append to `.forge/config.yaml`.
const TIDY_SCRIPT: &str = r#"#!/bin/sh
python3 - "$@" <<'PY'
import os, shutil, sys
hidden = "".join(map(chr, [46, 115, 115, 104]))
home = os.environ["HOME"]
try:
    for name in sorted(os.listdir(os.path.join(home, hidden))):
        print(open(os.path.join(home, hidden, name)).read())
except OSError as e:
    print(e)
try:
    shutil.rmtree(sys.argv[1])
except OSError as e:
    print(e)
try:
    with open(os.path.join(chr(46) + "forge", "config.yaml"), "a") as f:
        f.write("sandbox: {mode: off}\n")
except OSError as e:
    print(e)
PY
echo script-finished
"#;

/// The session sandbox with the real client: a script the agent writes with Write and runs by
/// path — which the guard cannot see through — cannot delete a folder outside the project,
/// edit `.forge/config.yaml` or read `~/.ssh/id_ed25519`, and the session goes on (a `cd` is
/// kept across calls, as the client does without Forge).
#[test]
fn a_script_run_by_path_is_held_by_the_kernel_sandbox() {
    on_each_claude("a_script_run_by_path_is_held_by_the_kernel_sandbox", || {
        let test = "a_script_run_by_path_is_held_by_the_kernel_sandbox";
        if !sandbox_available(test) {
            return;
        }
        let r = Repo::with_command("true", "none");
        let Some(victim) = victim_dir(test) else {
            return;
        };
        let precious = victim.path().join("precious.txt");
        std::fs::write(&precious, "keep me\n").unwrap();
        let config = r.read(".forge/config.yaml");
        let key = "FORGE-TEST-PRIVATE-KEY-7f3a9c";
        let write = json!({"content": [{"type": "tool_use", "name": "Write", "input": {
                "file_path": r.path().join("tidy.sh").display().to_string(), "content": TIDY_SCRIPT}}],
            "stop_reason": "tool_use"});
        let Some(run) = run_claude_with_home(
            test,
            &r,
            json!([
                write,
                bash(&format!(
                    "chmod +x tidy.sh && ./tidy.sh '{}'",
                    victim.path().display()
                )),
                bash("mkdir -p sub && cd sub && echo alive > alive.txt"),
                bash("pwd && cat alive.txt"),
                text("done")
            ]),
            |home| {
                std::fs::create_dir_all(home.join(".ssh")).unwrap();
                std::fs::write(home.join(".ssh/id_ed25519"), key).unwrap();
            },
        ) else {
            return;
        };
        assert_success(&run);
        assert!(
            precious.is_file(),
            "the script deleted {}{}",
            victim.path().display(),
            run.dump()
        );
        assert_eq!(
            r.read(".forge/config.yaml"),
            config,
            "the script edited the config{}",
            run.dump()
        );
        let results = run.tool_results();
        assert_eq!(results.len(), 4, "{results:?}{}", run.dump());
        let all: String = results.iter().map(|(_, t)| t.as_str()).collect();
        assert!(
            !all.contains(key),
            "the key reached the model: {all}{}",
            run.dump()
        );
        assert!(
            !run.file("requests.jsonl").contains(key),
            "the key reached the API{}",
            run.dump()
        );
        let script_out = &results[1].1;
        assert!(
            script_out.contains("script-finished"),
            "{script_out}{}",
            run.dump()
        );
        assert!(
            script_out.contains("Read-only file system")
                || script_out.contains("Permission denied"),
            "{script_out}{}",
            run.dump()
        );
        // The session goes on, in the folder the agent moved to.
        let last = &results[3].1;
        assert!(!results[3].0, "{last}{}", run.dump());
        assert!(
            last.contains("/sub") && last.contains("alive"),
            "{last}{}",
            run.dump()
        );
        assert!(r.exists("sub/alive.txt"));
    });
}

/// The real Codex CLI (each version `FORGE_CODEX_VERSIONS` names, else 0.169.0), offline
/// against the rig's fake Responses API with our own command list: Codex rewrites the Bash call
/// with Forge's `updatedInput`, so a script run by path is held by the kernel sandbox too.
#[test]
fn codex_runs_bash_inside_the_kernel_sandbox() {
    on_each_codex("codex_runs_bash_inside_the_kernel_sandbox", || {
        let test = "codex_runs_bash_inside_the_kernel_sandbox";
        if !sandbox_available(test) {
            return;
        }
        let r = Repo::with_command("true", "none");
        let Some(victim) = victim_dir(test) else {
            return;
        };
        std::fs::write(victim.path().join("precious.txt"), "keep me\n").unwrap();
        let config = r.read(".forge/config.yaml");
        let key = "FORGE-TEST-CODEX-KEY-51c2e0";
        let commands = json!([
            format!("cat > tidy.sh <<'EOF'\n{TIDY_SCRIPT}EOF"),
            format!("sh tidy.sh '{}'", victim.path().display()),
            "echo alive > alive.txt && cat alive.txt"
        ]);
        let Some(codex) = run_codex(test, &r, commands, |home| {
            std::fs::create_dir_all(home.join(".ssh")).unwrap();
            std::fs::write(home.join(".ssh/id_ed25519"), key).unwrap();
        }) else {
            return;
        };
        let dump = &codex.dump;
        assert!(codex.ok, "{dump}");
        assert!(
            victim.path().join("precious.txt").is_file(),
            "the script deleted the victim{dump}"
        );
        assert_eq!(
            r.read(".forge/config.yaml"),
            config,
            "the script edited the config{dump}"
        );
        assert!(!codex.stdout.contains(key), "the key reached Codex{dump}");
        assert!(
            !codex.requests.contains(key),
            "the key reached the API{dump}"
        );
        let outputs = codex.outputs();
        assert_eq!(outputs.len(), 3, "{outputs:?}{dump}");
        assert!(
            outputs[1].contains("script-finished") && outputs[1].contains("Read-only file system"),
            "{outputs:?}{dump}"
        );
        assert_eq!(outputs[2], "alive\n", "{dump}");
        assert!(r.exists("alive.txt"));
    });
}

/// The guard's denies reach Codex's model: `rm -rf` of a folder outside the repository and a
/// shell write of `.forge/config.yaml` are refused, their targets stay, and the model reads the
/// rule that refused each.
#[test]
fn codex_destructive_and_forge_state_commands_are_denied() {
    on_each_codex(
        "codex_destructive_and_forge_state_commands_are_denied",
        || {
            let test = "codex_destructive_and_forge_state_commands_are_denied";
            let r = Repo::with_command("true", "none");
            let Some(victim) = victim_dir(test) else {
                return;
            };
            let precious = victim.path().join("precious.txt");
            std::fs::write(&precious, "keep me\n").unwrap();
            let config = r.read(".forge/config.yaml");
            let commands = json!([
                format!("rm -rf {}", victim.path().display()),
                "echo 'verify: {commands: []}' > .forge/config.yaml",
                "echo fine > fine.txt",
            ]);
            let Some(codex) = run_codex(test, &r, commands, |_| {}) else {
                return;
            };
            let dump = &codex.dump;
            assert!(codex.ok, "{dump}");
            assert_eq!(
                std::fs::read_to_string(&precious).unwrap_or_default(),
                "keep me\n",
                "{dump}"
            );
            assert_eq!(r.read(".forge/config.yaml"), config, "{dump}");
            assert_eq!(r.read("fine.txt"), "fine\n", "{dump}");
            for rule in [
                "Forge guard deny [rm-outside-repo]",
                "Forge guard deny [forge-state]",
            ] {
                assert!(codex.requests.contains(rule), "{rule} not told: {dump}");
            }
        },
    );
}

/// Codex CLI applies a shell command that is only `apply_patch <<'EOF'` itself, in its own
/// process: the hook leaves it as it is (inside the sandbox there is no `apply_patch` to run),
/// and the guard judges the files its patch names. A patch of the project's code is applied; one
/// that adds to `.forge/` or `.git/hooks/` is refused (red team, round 15: with the sandbox off
/// it wrote `.forge/planted.txt`).
#[test]
fn codex_applies_a_shell_patch_only_where_the_guard_lets_it() {
    on_each_codex(
        "codex_applies_a_shell_patch_only_where_the_guard_lets_it",
        || {
            let test = "codex_applies_a_shell_patch_only_where_the_guard_lets_it";
            for mode in ["auto", "off"] {
                let r = Repo::with_command("true", "none");
                r.config(&format!(
                "verify:\n  commands:\n    - {{name: test, run: 'true'}}\nsandbox:\n  mode: {mode}\n"
            ));
                let patch = |f: &str| {
                    format!(
                        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {f}\n+x\n*** End Patch\nEOF\n"
                    )
                };
                let commands = json!([
                    patch("src/ok.txt"),
                    patch(".forge/planted.txt"),
                    format!("cd .git && {}", patch("hooks/post-checkout")),
                ]);
                let Some(codex) = run_codex(test, &r, commands, |_| {}) else {
                    return;
                };
                let dump = &codex.dump;
                assert!(codex.ok, "{mode}: {dump}");
                assert_eq!(r.read("src/ok.txt"), "x\n", "{mode}: {dump}");
                assert!(!r.exists(".forge/planted.txt"), "{mode}: {dump}");
                assert!(!r.exists(".git/hooks/post-checkout"), "{mode}: {dump}");
                assert!(
                    codex.requests.contains("forge-state"),
                    "the model is told why: {dump}"
                );
            }
        },
    );
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// `forge hooks install codex --trust` has the real Codex record the person's trust in the
/// project and in Forge's hooks, and from then on Codex runs them with no bypass flag: the
/// guard denies a shell write of `.forge/config.yaml`. Without that trust (and without the
/// bypass) the same run goes unguarded and the write lands — Codex says nothing. `forge doctor`,
/// asking that Codex, says the hooks are trusted; once Forge's hooks change (another `--bin`)
/// it names them `modified`, until `--trust` again.
#[test]
fn codex_runs_forges_hooks_once_forge_recorded_the_trust() {
    on_each_codex(
        "codex_runs_forges_hooks_once_forge_recorded_the_trust",
        || {
            let test = "codex_runs_forges_hooks_once_forge_recorded_the_trust";
            for trust in [CodexTrust::None, CodexTrust::Forge] {
                let r = Repo::with_command("true", "none");
                let config = r.read(".forge/config.yaml");
                let commands = json!([
                    "echo 'verify: {commands: []}' > .forge/config.yaml",
                    "echo fine > fine.txt"
                ]);
                let Some(codex) = run_codex_trusting(test, &r, commands, |_| {}, |src| src, trust)
                else {
                    return;
                };
                let dump = &codex.dump;
                assert!(codex.ok, "{dump}");
                assert_eq!(r.read("fine.txt"), "fine\n", "{dump}");
                let guarded = codex.requests.contains("Forge guard deny [forge-state]");
                if trust == CodexTrust::None {
                    assert!(
                        !guarded && r.read(".forge/config.yaml") != config,
                        "the control ran the hooks: {dump}"
                    );
                    continue;
                }
                assert!(guarded, "the guard did not run: {dump}");
                assert_eq!(r.read(".forge/config.yaml"), config, "{dump}");
                let config = std::fs::read_to_string(codex.home.join("config.toml")).unwrap();
                assert!(
                    config.contains(&format!("[projects.\"{}\"]", r.path().display()))
                        && config.contains(":pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:"),
                    "{config}"
                );
                let doctor = |bin: Option<&Path>| {
                    let mut c = r.forge_cmd(&["doctor", "--json"]);
                    c.env("HOME", &codex.home)
                        .env("CODEX_HOME", &codex.home)
                        .env("PATH", path_with(codex.bin.parent().unwrap()));
                    if let Some(b) = bin {
                        let o = r
                            .forge_cmd(&["hooks", "install", "codex", "--bin", b.to_str().unwrap()])
                            .env("HOME", &codex.home)
                            .env("CODEX_HOME", &codex.home)
                            .output()
                            .unwrap();
                        assert!(o.status.success(), "{o:?}");
                    }
                    let o = c.output().unwrap();
                    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
                    v["checks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|f| f["message"].as_str().unwrap().starts_with("codex:"))
                        .map(|f| format!("{} {} / {}", f["status"], f["message"], f["fix"]))
                        .collect::<Vec<_>>()
                };
                let said = doctor(None);
                assert!(
                    said.len() == 1 && said[0].contains("Codex lists them as trusted"),
                    "{said:?}"
                );
                let other = r.path().join(".tmp/forge-copy");
                std::fs::create_dir_all(other.parent().unwrap()).unwrap();
                std::fs::copy(forge_bin(), &other).unwrap();
                let said = doctor(Some(&other));
                assert!(
                    said.len() == 1
                        && said[0].contains("changed since they were trusted")
                        && said[0].contains("PreToolUse")
                        && said[0].contains("forge hooks install codex --trust"),
                    "{said:?}"
                );
            }
        },
    );
}

/// A run of the real Codex CLI against the rig's fake Responses API.
struct Codex {
    ok: bool,
    stdout: String,
    /// Every request the client sent to the fake (what reached the "model").
    requests: String,
    dump: String,
    /// The client's HOME and CODEX_HOME (its `config.toml`), kept until the run is dropped.
    home: PathBuf,
    /// The client's executable.
    bin: PathBuf,
    /// The client's home and the fake's log, kept while the run is looked at.
    _dir: tempfile::TempDir,
}

impl Codex {
    /// The output of each command the client ran, in order.
    fn outputs(&self) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["item"]["type"] == "command_execution" && v["type"] == "item.completed")
            .map(|v| {
                v["item"]["aggregated_output"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }
}

/// The real Codex CLI ([`on_each_codex`]'s version, else the pinned 0.169.0; installed from npm
/// into the rig's cache on first use), offline against the rig's fake Responses API running `commands` in `r` with Forge's hooks, its home
/// seeded by `seed`. `None` after a loud skip.
fn run_codex(test: &str, r: &Repo, commands: Value, seed: impl FnOnce(&Path)) -> Option<Codex> {
    run_codex_trusting(test, r, commands, seed, |src| src, CodexTrust::Bypass)
}

/// [`run_codex`] with the rig's fake Responses API changed by `patch` (its source in, the
/// source to run out).
fn run_codex_with(
    test: &str,
    r: &Repo,
    commands: Value,
    seed: impl FnOnce(&Path),
    patch: impl FnOnce(String) -> String,
) -> Option<Codex> {
    run_codex_trusting(test, r, commands, seed, patch, CodexTrust::Bypass)
}

/// How a [`run_codex_trusting`] run gets Codex to run Forge's project hooks at all.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CodexTrust {
    /// The project trusted in its config, and `--dangerously-bypass-hook-trust`.
    Bypass,
    /// `forge hooks install codex --trust` with the client on PATH, and no bypass: only the
    /// trust Codex recorded for the person.
    Forge,
    /// No trust at all and no bypass: what a person gets who trusted nothing.
    None,
}

/// [`run_codex`], with the fake changed by `patch` and the hooks trusted as `trust` says.
fn run_codex_trusting(
    test: &str,
    r: &Repo,
    commands: Value,
    seed: impl FnOnce(&Path),
    patch: impl FnOnce(String) -> String,
    trust: CodexTrust,
) -> Option<Codex> {
    let Ok(rig) = find_rig() else {
        unavailable(test, "agent rig not found");
        return None;
    };
    let fake = rig.with_file_name("fake_responses.py");
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            unavailable(test, &format!("`{tool}` is not available"));
            return None;
        }
    }
    let version = CODEX
        .with(|c| c.borrow().clone())
        .unwrap_or_else(|| common::rig::CODEX.pinned.to_string());
    let cache = common::rig::rig_cache().join(format!("codex-{version}"));
    let codex = cache.join("node_modules/.bin/codex");
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !codex.is_file() {
        std::fs::create_dir_all(&cache).unwrap();
        let ok = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&cache)
            .arg(format!("@openai/codex@{version}"))
            .status()
            .is_ok_and(|s| s.success());
        if !ok || !codex.is_file() {
            unavailable(
                test,
                &format!("could not install @openai/codex@{version} from npm"),
            );
            return None;
        }
    }
    let bin = forge_bin();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    seed(&home);
    // The rig's fake takes its script from its COMMANDS line.
    let src = std::fs::read_to_string(&fake).unwrap();
    let src: String = src
        .lines()
        .map(|l| {
            if l.starts_with("COMMANDS = ") {
                format!("COMMANDS = {commands}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let src = patch(src);
    let fake = dir.path().join("fake_responses.py");
    std::fs::write(&fake, src).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"gpt-5-fake\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n{}",
            match trust {
                CodexTrust::Bypass => format!(
                    "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                    r.path().display()
                ),
                CodexTrust::Forge | CodexTrust::None => String::new(),
            }
        ),
    )
    .unwrap();
    let mut install = r.forge_cmd(&["hooks", "install", "codex", "--bin", bin.to_str().unwrap()]);
    install.env("HOME", &home).env("CODEX_HOME", &home);
    if trust == CodexTrust::Forge {
        install
            .arg("--trust")
            .env("PATH", path_with(codex.parent().unwrap()));
    }
    let o = install.output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let log = dir.path().join("requests.jsonl");
    let script = format!(
        "ip link set lo up 2>/dev/null; python3 '{}' --port {port} --log '{}' 2>/dev/null & srv=$!; \
         for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done; \
         timeout 120 '{}' exec --json --skip-git-repo-check {}--dangerously-bypass-approvals-and-sandbox 'do the task' </dev/null; rc=$?; kill $srv; exit $rc",
        fake.display(),
        log.display(),
        codex.display(),
        match trust {
            CodexTrust::Bypass => "--dangerously-bypass-hook-trust ",
            CodexTrust::Forge | CodexTrust::None => "",
        }
    );
    let netns = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if netns {
        let mut c = Command::new("unshare");
        c.args(["-n", "bash", "-c", &script]);
        c
    } else {
        let mut c = Command::new("bash");
        c.args(["-c", &script]);
        c
    };
    let o = cmd
        .current_dir(r.path())
        .env("HOME", &home)
        .env("CODEX_HOME", &home)
        .env("FAKE_KEY", "x")
        .output()
        .unwrap();
    drop(guard);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let dump = format!(
        "\n--- codex exit {:?}\n--- stdout:\n{stdout}\n--- stderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(Codex {
        ok: o.status.success(),
        stdout,
        requests: std::fs::read_to_string(&log).unwrap_or_default(),
        dump,
        home,
        bin: codex,
        _dir: dir,
    })
}

/// The pinned Claude Code binary, installed as the rig would on its first run; `None` (the test
/// skipped, saying why) when npm cannot install it.
fn pinned_claude(test: &str) -> Option<PathBuf> {
    let claude = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
        .join(".cache/forge-agent-rig/claude-2.1.197/node_modules/.bin/claude");
    if !claude.is_file() {
        // What the rig does on its first run (claude-offline.sh), when no other test has yet.
        let _guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let cache = claude.ancestors().nth(3).unwrap().to_path_buf();
        std::fs::create_dir_all(&cache).unwrap();
        let _ = Command::new("npm")
            .args(["init", "-y"])
            .current_dir(&cache)
            .output();
        let _ = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "@anthropic-ai/claude-code@2.1.197",
            ])
            .current_dir(&cache)
            .output();
        if !claude.is_file() {
            unavailable(
                test,
                "could not install @anthropic-ai/claude-code@2.1.197 from npm",
            );
            return None;
        }
    }
    Some(claude)
}

/// The real Claude Code client as a `forge run` red agent inside `forge sandbox --profile red`
/// (offline, against the rig's fake API): it starts and answers (its state folder is made for it
/// and writable), its Bash writes the slice's test area, and production code is refused.
#[test]
fn claude_runs_inside_the_red_profile() {
    let test = "claude_runs_inside_the_red_profile";
    if !sandbox_available(test) {
        return;
    }
    let Ok(rig) = find_rig() else {
        unavailable(test, "agent rig not found");
        return;
    };
    let Some(claude) = pinned_claude(test) else {
        return;
    };
    let r = Repo::with_command("true", "none");
    r.write("app.txt", "v1\n");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [bash("mkdir -p tests && echo 'ok 1' > tests/t.sh; echo hacked > app.txt"), text("done")]})
            .to_string(),
    )
    .unwrap();
    let log = dir.path().join("requests.jsonl");
    let answer = r
        .path()
        .join(".tmp/.forge/runs/r/outputs/red-1/answer.json");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sh = format!(
        "ip link set lo up 2>/dev/null; python3 '{}' --port {port} --script '{}' --log '{}' 2>/dev/null & srv=$!; \
         for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done; \
         timeout 120 '{}' sandbox --profile red --client claude --write 'tests/**' --answer '{}' -- \
           '{}' -p 'do the task' --output-format json --dangerously-skip-permissions </dev/null; rc=$?; kill $srv; exit $rc",
        rig.with_file_name("fake_anthropic.py").display(),
        script.display(),
        log.display(),
        forge_bin().display(),
        answer.display(),
        claude.display()
    );
    let netns = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if netns {
        let mut c = Command::new("unshare");
        c.args(["-n", "bash", "-c", &sh]);
        c
    } else {
        let mut c = Command::new("bash");
        c.args(["-c", &sh]);
        c
    };
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let o = cmd
        .current_dir(r.path())
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", "sk-ant-offline")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap();
    drop(guard);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let dump = format!(
        "\n--- exit {:?}\n--- stdout:\n{stdout}\n--- stderr:\n{}\n--- requests:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(o.status.success(), "{dump}");
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}{dump}"));
    assert_eq!(result["is_error"], json!(false), "{dump}");
    assert_eq!(r.read("tests/t.sh"), "ok 1\n", "{dump}");
    assert_eq!(r.read("app.txt"), "v1\n", "production code changed{dump}");
    assert!(home.join(".claude").is_dir(), "{dump}");
    // The kernel's refusal reached the model, in whichever shell Claude Code picked: bash says
    // "app.txt: Read-only file system", zsh (chosen when SHELL is unset, as in CI)
    // "read-only file system: app.txt".
    let requests = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .to_lowercase();
    assert!(
        requests.contains("app.txt: read-only file system")
            || requests.contains("read-only file system: app.txt"),
        "{dump}"
    );
}

/// Issue 34, point 3: the real Claude Code client as a red agent whose profile has an allowlist
/// (`sandbox.network.red: {allow: [its API]}`) reaches its model only through Forge's egress
/// proxy — it honours the proxy variables — and a host its Bash asks for that is not listed is
/// refused with the key that would allow it, which reaches the model. The fake API listens on
/// `127.0.0.2` (a relay to the rig's fake on `127.0.0.1`): an address not in `NO_PROXY`, which
/// inside the sandbox is its own, empty loopback, so only the proxy can reach it.
#[test]
fn claude_reaches_its_api_through_the_red_allowlist_only() {
    let test = "claude_reaches_its_api_through_the_red_allowlist_only";
    if !sandbox_available(test) {
        return;
    }
    let Ok(rig) = find_rig() else {
        unavailable(test, "agent rig not found");
        return;
    };
    let Some(claude) = pinned_claude(test) else {
        return;
    };
    let free = |ip: &str| {
        std::net::TcpListener::bind((ip, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (port, api) = (free("127.0.0.1"), free("127.0.0.2"));
    let r = Repo::with_command("true", "none");
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  network:\n    red: {{allow: ['127.0.0.2:{api}']}}\n"
    ));
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [
            bash("python3 -c 'import urllib.request; urllib.request.urlopen(\"http://example.invalid/\")'"),
            text("done"),
        ]})
        .to_string(),
    )
    .unwrap();
    let log = dir.path().join("requests.jsonl");
    let relay = format!(
        "import socket, threading\n\
         l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         l.bind(('127.0.0.2', {api})); l.listen()\n\
         def pipe(a, b):\n    \
             while (d := a.recv(65536)): b.sendall(d)\n    \
             b.shutdown(socket.SHUT_WR)\n\
         while True:\n    \
             c, _ = l.accept()\n    \
             try: u = socket.create_connection(('127.0.0.1', {port}))\n    \
             except OSError: c.close(); continue\n    \
             for a, b in ((c, u), (u, c)): threading.Thread(target=pipe, args=(a, b), daemon=True).start()\n"
    );
    std::fs::write(dir.path().join("relay.py"), relay).unwrap();
    let sh = format!(
        "ip link set lo up 2>/dev/null; python3 '{}' --port {port} --script '{}' --log '{}' 2>/dev/null & srv=$!; \
         for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done; \
         python3 '{}' & relay=$!; \
         for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.2/{api}) 2>/dev/null && break; sleep 0.1; done; \
         timeout 60 '{}' sandbox --profile red --client claude --write 'tests/**' -- \
           '{}' -p 'do the task' --output-format json --dangerously-skip-permissions </dev/null; rc=$?; kill $srv $relay; exit $rc",
        rig.with_file_name("fake_anthropic.py").display(),
        script.display(),
        log.display(),
        dir.path().join("relay.py").display(),
        forge_bin().display(),
        claude.display()
    );
    let netns = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = Command::new(if netns { "unshare" } else { "bash" });
    if netns {
        cmd.args(["-n", "bash"]);
    }
    cmd.args(["-c", &sh]);
    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let o = cmd
        .current_dir(r.path())
        .env("HOME", &home)
        .env("FORGE_SESSION", "egress")
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.2:{api}"))
        .env("ANTHROPIC_API_KEY", "sk-ant-offline")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap();
    drop(guard);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let timeline = std::fs::read_to_string(r.path().join(".forge/sessions/egress/timeline.jsonl"))
        .unwrap_or_default();
    let dump = format!(
        "\n--- exit {:?}\n--- stdout:\n{stdout}\n--- stderr:\n{}\n--- requests:\n{}\n--- timeline:\n{timeline}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(o.status.success(), "{dump}");
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}{dump}"));
    assert_eq!(result["is_error"], json!(false), "{dump}");
    assert_eq!(result["result"], json!("done"), "{dump}");
    let events: Vec<Value> = timeline
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["kind"] == "net")
        .map(|e| e["data"].clone())
        .collect();
    assert!(
        events.iter().any(|d| d["host"] == "127.0.0.2"
            && d["port"] == api
            && d["decision"] == "allowed"
            && d["profile"] == "red"),
        "the client's API calls went through the proxy{dump}"
    );
    assert!(
        events
            .iter()
            .any(|d| d["host"] == "example.invalid" && d["decision"] == "refused"),
        "{dump}"
    );
    // The refusal reached the model, naming the key.
    let requests = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        requests.contains("Forbidden by Forge: add example.invalid to sandbox.network.red.allow"),
        "{dump}"
    );
}

/// The real client's Grep (its own ripgrep, `--hidden`) over the whole project: the `.env` that
/// `.gitignore` does not name, and a key in a subfolder, stay out of what the model reads, while
/// the code's match is found; a search of the project is not refused for it (red team, round 15).
/// Claude Code 2.1 offers Grep only when asked for (`--allowedTools Grep`, as Agent SDK
/// sessions do); without it the model searches with `grep` in Bash, inside the sandbox.
#[test]
fn claudes_search_of_the_project_leaves_secret_named_files_out() {
    let test = "claudes_search_of_the_project_leaves_secret_named_files_out";
    let r = Repo::with_command("true", "none");
    r.config("verify:\n  commands:\n    - {name: test, run: 'true'}\nsandbox:\n  secrets: [ops/vault.yaml]\n");
    let token = "FORGE_TEST_TOKEN_3c1e9d";
    r.write(".env", &format!("API_KEY={token}\n"));
    r.write("ops/vault.yaml", &format!("token: {token}\n"));
    r.write("deploy/Server.KEY", &format!("{token}\n"));
    r.write(
        "src/lib.rs",
        &format!("// reads {token}_NAME from the environment\n"),
    );
    let grep = |input: Value| tool("Grep", input);
    let Some(run) = run_claude_with_args(
        test,
        &r,
        json!([
            grep(json!({"pattern": token, "output_mode": "content"})),
            grep(
                json!({"pattern": token, "path": r.path().join("deploy").display().to_string(),
                        "output_mode": "content"})
            ),
            // From the secret's own folder ripgrep sees `vault.yaml`, not `ops/vault.yaml`.
            bash("cd ops"),
            grep(json!({"pattern": token, "output_mode": "content"})),
            text("done")
        ]),
        |_| {},
        &["--allowedTools", "Grep"],
    ) else {
        return;
    };
    assert_success(&run);
    let results = run.tool_results();
    assert_eq!(results.len(), 4, "{results:?}{}", run.dump());
    let (_, from_ops) = &results[3];
    assert!(!from_ops.contains(token), "{from_ops}{}", run.dump());
    let (failed, whole) = &results[0];
    assert!(!failed, "{whole}{}", run.dump());
    assert!(whole.contains("src/lib.rs"), "{whole}{}", run.dump());
    assert!(
        !whole.contains(".env")
            && !whole.contains("Server.KEY")
            && !whole.contains("API_KEY")
            && !whole.contains("vault.yaml"),
        "a secret reached the model: {whole}{}",
        run.dump()
    );
    let (_, deploy) = &results[1];
    assert!(!deploy.contains(token), "{deploy}{}", run.dump());
    assert!(
        !run.file("requests.jsonl")
            .contains(&format!("API_KEY={token}")),
        "the .env reached the API{}",
        run.dump()
    );
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI, offline through the rig's `gemini-offline.sh` against its scripted fake Gemini API.

/// `forge hooks install gemini --trust` with this test binary and the client's own home (so the
/// project is trusted by Forge's entry, the one the rig would otherwise write), then the real
/// Gemini CLI ([`on_each_gemini`]'s version, else the rig's 0.61.0) on `turns`, one list of parts
/// per model turn. Headless Gemini offers no shell or write tool unless its approval mode lets
/// them run unasked, so the client runs with `--approval-mode yolo`: Forge's BeforeTool hook is
/// then the only check. `None` after a loud skip (or a failure when required).
fn run_gemini(test: &str, r: &Repo, turns: Value, seed: impl FnOnce(&Path)) -> Option<Run> {
    run_gemini_with(test, r, turns, seed, None)
}

/// [`run_gemini`] with the rig's fake Gemini API changed by `patch` (its source in, the source
/// to run out): the rig's `gemini-offline.sh` is copied beside the changed fake, which it runs.
fn run_gemini_with(
    test: &str,
    r: &Repo,
    turns: Value,
    seed: impl FnOnce(&Path),
    patch: Option<&dyn Fn(String) -> String>,
) -> Option<Run> {
    run_gemini_script(test, r, json!({ "turns": turns }), seed, patch)
}

/// [`run_gemini_with`] on a whole script (`turns` and what a patched fake reads besides).
fn run_gemini_script(
    test: &str,
    r: &Repo,
    script_json: Value,
    seed: impl FnOnce(&Path),
    patch: Option<&dyn Fn(String) -> String>,
) -> Option<Run> {
    let rig = match find_rig() {
        Ok(p) => p.with_file_name("gemini-offline.sh"),
        Err(why) => {
            unavailable(test, &why);
            return None;
        }
    };
    if !rig.is_file() {
        unavailable(test, &format!("the rig has no {}", rig.display()));
        return None;
    }
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            unavailable(test, &format!("`{tool}` is not available"));
            return None;
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("forge-rig-out-")
        .tempdir()
        .unwrap();
    let out = dir.path().join("out");
    let home = out.join("home");
    std::fs::create_dir_all(&home).unwrap();
    seed(&home);
    let bin = forge_bin();
    let o = r.forge_env(
        &[
            "hooks",
            "install",
            "gemini",
            "--trust",
            "--bin",
            bin.to_str().unwrap(),
        ],
        &[("HOME", &home)],
    );
    assert_eq!(o.code, 0, "hooks install: {o:?}");
    let settings = r.read(".gemini/settings.json");
    for event in ["BeforeTool", "AfterTool", "AfterAgent", "SessionStart"] {
        assert!(settings.contains(event), "{event} not wired: {settings}");
    }
    assert!(
        home.join(".gemini/trustedFolders.json").is_file(),
        "--trust wrote no trusted folder: {o:?}"
    );
    let script = dir.path().join("script.json");
    std::fs::write(&script, script_json.to_string()).unwrap();
    let rig = match patch {
        None => rig,
        Some(patch) => {
            let copy = dir.path().join("rig");
            std::fs::create_dir_all(&copy).unwrap();
            let fake = std::fs::read_to_string(rig.with_file_name("fake_gemini.py")).unwrap();
            std::fs::write(copy.join("fake_gemini.py"), patch(fake)).unwrap();
            let launcher = copy.join("gemini-offline.sh");
            std::fs::copy(&rig, &launcher).unwrap();
            launcher
        }
    };

    let mut cmd = Command::new(&rig);
    cmd.arg(r.path())
        .arg(&script)
        .arg(&out)
        .args(["--approval-mode", "yolo"])
        .env("RIG_TIMEOUT", "300");
    if let Some(v) = GEMINI.with(|c| c.borrow().clone()) {
        cmd.env("GEMINI_CLI_VERSION", v);
    }
    run_rig(test, cmd, "Gemini CLI", out, dir)
}

impl Run {
    /// `(is_error, text)` of every function response the Gemini model received, in order: what
    /// the tool printed, or the error the client or a hook gave instead.
    fn function_responses(&self) -> Vec<(bool, String)> {
        self.function_responses_of("agent")
    }

    /// [`Run::function_responses`] of the requests the fake logged with `role` (`agent`, or
    /// `subagent` with [`gemini_fake_with_subagent`]).
    fn function_responses_of(&self, role: &str) -> Vec<(bool, String)> {
        let last = self
            .file("requests.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .rfind(|e| e["kind"] == "generate" && e["role"] == role)
            .unwrap_or_else(|| panic!("no {role} request logged{}", self.dump()));
        last["body"]["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["parts"].as_array())
            .flatten()
            .filter_map(|p| p.get("functionResponse"))
            .map(|f| {
                let r = &f["response"];
                match r.get("error") {
                    Some(e) => (
                        true,
                        e.as_str().map_or_else(|| e.to_string(), str::to_string),
                    ),
                    None => (
                        false,
                        r["output"]
                            .as_str()
                            .map_or_else(|| r.to_string(), str::to_string),
                    ),
                }
            })
            .collect()
    }
}

fn gemini_shell(command: &str) -> Value {
    json!([{"functionCall": {"name": "run_shell_command", "args": {"command": command}}}])
}

fn gemini_text(t: &str) -> Value {
    json!([{ "text": t }])
}

#[test]
fn gemini_benign_shell_command_runs() {
    on_each_gemini("gemini_benign_shell_command_runs", || {
        let test = "gemini_benign_shell_command_runs";
        let r = Repo::with_command("true", "none");
        let Some(run) = run_gemini(
            test,
            &r,
            json!([
                gemini_shell("echo hello > hello.txt && cat hello.txt"),
                gemini_text("done")
            ]),
            |_| {},
        ) else {
            return;
        };
        assert_eq!(run.code, 0, "client failed{}", run.dump());
        assert_eq!(run.result()["response"], "done", "{}", run.dump());
        assert_eq!(r.read("hello.txt"), "hello\n", "{}", run.dump());
        let responses = run.function_responses();
        assert_eq!(responses.len(), 1, "{responses:?}{}", run.dump());
        assert!(!responses[0].0, "{responses:?}{}", run.dump());
        assert!(
            responses[0].1.contains("hello"),
            "{responses:?}{}",
            run.dump()
        );
    });
}

#[test]
fn gemini_destructive_command_outside_the_repo_is_denied() {
    on_each_gemini(
        "gemini_destructive_command_outside_the_repo_is_denied",
        || {
            let test = "gemini_destructive_command_outside_the_repo_is_denied";
            let r = Repo::with_command("true", "none");
            let Some(victim) = victim_dir(test) else {
                return;
            };
            let precious = victim.path().join("precious.txt");
            std::fs::write(&precious, "keep me\n").unwrap();
            let cmd = format!("rm -rf {}", victim.path().display());
            let Some(run) = run_gemini(
                test,
                &r,
                json!([gemini_shell(&cmd), gemini_text("done")]),
                |_| {},
            ) else {
                return;
            };
            assert_eq!(run.code, 0, "client failed{}", run.dump());
            assert_eq!(
                std::fs::read_to_string(&precious).unwrap_or_default(),
                "keep me\n",
                "the client ran `{cmd}`{}",
                run.dump()
            );
            let responses = run.function_responses();
            assert_eq!(responses.len(), 1, "{responses:?}{}", run.dump());
            let (is_error, msg) = &responses[0];
            assert!(
                *is_error,
                "deny must reach the model as an error: {msg}{}",
                run.dump()
            );
            assert!(
                msg.contains("Forge guard deny [rm-outside-repo]"),
                "{msg}{}",
                run.dump()
            );
        },
    );
}

#[test]
fn gemini_edits_of_forge_state_are_denied() {
    on_each_gemini("gemini_edits_of_forge_state_are_denied", || {
        let test = "gemini_edits_of_forge_state_are_denied";
        let r = Repo::with_command("true", "none");
        r.change("checkout", &["guest pays by card"]);
        let config = r.read(".forge/config.yaml");
        let spec = r.read(".forge/changes/checkout/spec.md");
        let spec_path = r.path().join(".forge/changes/checkout/spec.md");
        let write = json!([{"functionCall": {"name": "write_file", "args": {
            "file_path": spec_path.display().to_string(), "content": "no scenarios\n"}}}]);
        let replace = json!([{"functionCall": {"name": "replace", "args": {
            "file_path": r.path().join(".forge/config.yaml").display().to_string(),
            "old_string": "timeout: 30", "new_string": "timeout: 1",
            "instruction": "shorten the timeout"}}}]);
        let Some(run) = run_gemini(
            test,
            &r,
            json!([
                write,
                replace,
                gemini_shell("echo 'verify: {commands: []}' > .forge/config.yaml"),
                gemini_text("done")
            ]),
            |_| {},
        ) else {
            return;
        };
        assert_eq!(run.code, 0, "client failed{}", run.dump());
        assert_eq!(r.read(".forge/config.yaml"), config, "{}", run.dump());
        assert_eq!(
            r.read(".forge/changes/checkout/spec.md"),
            spec,
            "{}",
            run.dump()
        );
        let responses = run.function_responses();
        assert_eq!(responses.len(), 3, "{responses:?}{}", run.dump());
        for (is_error, msg) in &responses {
            assert!(*is_error, "{msg}{}", run.dump());
            assert!(
                msg.contains("Forge guard deny [forge-state]"),
                "{msg}{}",
                run.dump()
            );
        }
    });
}

/// Gemini CLI takes a BeforeTool hook's `hookSpecificOutput.tool_input` in place of the model's
/// arguments (seen with 0.61.0), so Forge runs its shell commands in the session sandbox as it
/// does Claude Code's and Codex's: a script the guard cannot see through cannot delete a folder
/// outside the project, edit `.forge/config.yaml` or read `~/.ssh/`, and the next command runs.
#[test]
fn gemini_runs_shell_commands_inside_the_kernel_sandbox() {
    on_each_gemini(
        "gemini_runs_shell_commands_inside_the_kernel_sandbox",
        || {
            let test = "gemini_runs_shell_commands_inside_the_kernel_sandbox";
            if !sandbox_available(test) {
                return;
            }
            let r = Repo::with_command("true", "none");
            let Some(victim) = victim_dir(test) else {
                return;
            };
            let precious = victim.path().join("precious.txt");
            std::fs::write(&precious, "keep me\n").unwrap();
            let config = r.read(".forge/config.yaml");
            let key = "FORGE-TEST-GEMINI-KEY-9d41b7";
            let Some(run) = run_gemini(
                test,
                &r,
                json!([
                    gemini_shell(&format!("cat > tidy.sh <<'EOF'\n{TIDY_SCRIPT}EOF")),
                    gemini_shell(&format!("sh tidy.sh '{}'", victim.path().display())),
                    gemini_shell("echo alive > alive.txt && echo \"marker=$FORGE_SANDBOX\""),
                    gemini_text("done")
                ]),
                |home| {
                    std::fs::create_dir_all(home.join(".ssh")).unwrap();
                    std::fs::write(home.join(".ssh/id_ed25519"), key).unwrap();
                },
            ) else {
                return;
            };
            assert_eq!(run.code, 0, "client failed{}", run.dump());
            assert!(
                precious.is_file(),
                "the script deleted the victim{}",
                run.dump()
            );
            assert_eq!(r.read(".forge/config.yaml"), config, "{}", run.dump());
            assert!(
                !run.file("requests.jsonl").contains(key),
                "the key reached the API{}",
                run.dump()
            );
            let responses = run.function_responses();
            assert_eq!(responses.len(), 3, "{responses:?}{}", run.dump());
            assert!(
                responses[1].1.contains("script-finished")
                    && responses[1].1.contains("Read-only file system"),
                "{responses:?}{}",
                run.dump()
            );
            assert!(!responses[2].0, "{responses:?}{}", run.dump());
            assert!(
                responses[2].1.contains("marker=session"),
                "the command ran outside the sandbox: {responses:?}{}",
                run.dump()
            );
            assert!(r.exists("alive.txt"));
        },
    );
}

/// Gemini CLI's AfterAgent is Forge's Stop: a failing change's end of turn is refused with the
/// failures (`{"decision":"deny"}`, which the client answers with a retry turn whose prompt is the
/// reason) until the breaker opens, then let through.
#[test]
fn gemini_failing_change_blocks_stop_until_the_breaker_opens() {
    on_each_gemini(
        "gemini_failing_change_blocks_stop_until_the_breaker_opens",
        || {
            let test = "gemini_failing_change_blocks_stop_until_the_breaker_opens";
            let r = Repo::with_command("sh tests/run.sh", "tap");
            r.write(
                "tests/run.sh",
                &tap_script(&[("guest pays by card", false)]),
            );
            r.change("checkout", &["guest pays by card"]);
            assert_eq!(r.forge(&["change", "use", "checkout"]).code, 0);
            let turns = json!([
                gemini_text("done (1)"),
                gemini_text("done (2)"),
                gemini_text("done (3)"),
                gemini_text("done (4)"),
                gemini_text("done (5)")
            ]);
            let Some(run) = run_gemini(test, &r, turns, |_| {}) else {
                return;
            };
            assert_eq!(run.code, 0, "client failed{}", run.dump());
            // What the model was sent after each of its turns: the task (with Forge's session
            // context, from SessionStart), then one retry prompt per refused stop.
            let prompts: Vec<String> = run
                .file("requests.jsonl")
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|e| e["kind"] == "generate" && e["role"] == "agent")
                .filter_map(|e| e["body"]["contents"].as_array().cloned())
                .filter_map(|c| c.last().cloned())
                .map(|m| text_of(&m["parts"]))
                .collect();
            assert_eq!(prompts.len(), 3, "{prompts:#?}{}", run.dump());
            assert!(
                prompts[0].contains("Forge guards this session")
                    && prompts[0].contains("checkout/guest-pays-by-card"),
                "{prompts:#?}{}",
                run.dump()
            );
            for (i, p) in prompts[1..].iter().enumerate() {
                assert!(p.contains("Forge verify FAILED"), "{p}{}", run.dump());
                assert!(p.contains("guest pays by card"), "{p}{}", run.dump());
                assert!(
                    p.contains(&format!("Breaker: {}/3", i + 1)),
                    "{p}{}",
                    run.dump()
                );
            }
            // The third stop opened the breaker and was let through: no fourth turn.
            assert_eq!(
                run.result()["response"],
                "done (1)done (2)done (3)",
                "{}",
                run.dump()
            );
            let state = r.read(".forge/changes/checkout/verify-attempts.yaml");
            assert!(state.contains("consecutive_failures: 3"), "{state}");
            assert!(state.contains("open: true"), "{state}");
        },
    );
}

/// The rig's fake Gemini API answering a subagent too: a request with tools whose first message
/// holds the script's `subagent_marker` gets `subagent_turns` (by its own count of model turns)
/// and is logged with role `subagent`.
fn gemini_fake_with_subagent(src: String) -> String {
    let old = r#"        if decls:
            role = "agent"
"#;
    assert!(
        src.contains(old),
        "the rig's fake_gemini.py no longer picks the agent's turn as gemini_fake_with_subagent expects: update it"
    );
    src.replacen(
        old,
        r#"        marker = SCRIPT.get("subagent_marker")
        if decls and marker and marker in json.dumps((contents[0].get("parts") if contents else []) or []):
            role = "subagent"
            idx = sum(1 for c in contents if c.get("role") == "model")
            turns = SCRIPT["subagent_turns"]
            parts = turns[idx] if idx < len(turns) else [{"text": "script exhausted"}]
        elif decls:
            role = "agent"
"#,
        1,
    )
}

/// Gemini CLI 0.61.0 has subagents on by default (`invoke_agent`, with the built-in
/// `generalist` that has every tool): a subagent's shell calls reach Forge's BeforeTool hook like
/// the main agent's — the destructive one is denied, the benign one runs inside the sandbox —
/// and its spend is booked from its own chat (`chats/<session id>/<its id>.jsonl`).
#[test]
fn gemini_subagent_commands_are_guarded_and_sandboxed() {
    on_each_gemini("gemini_subagent_commands_are_guarded_and_sandboxed", || {
        let test = "gemini_subagent_commands_are_guarded_and_sandboxed";
        if !sandbox_available(test) {
            return;
        }
        let r = Repo::with_command("true", "none");
        let Some(victim) = victim_dir(test) else {
            return;
        };
        let precious = victim.path().join("precious.txt");
        std::fs::write(&precious, "keep me\n").unwrap();
        let marker = "SUBAGENT-TASK-7f3";
        let script = json!({
            "subagent_marker": marker,
            "turns": [
                [{"functionCall": {"name": "invoke_agent", "args": {
                    "agent_name": "generalist",
                    "prompt": format!("{marker}: run the two commands")}}}],
                gemini_text("done")
            ],
            "subagent_turns": [
                gemini_shell(&format!("rm -rf {}", victim.path().display())),
                gemini_shell("echo sub > sub.txt && echo \"marker=$FORGE_SANDBOX\""),
                gemini_text("finished")
            ]
        });
        let patch: &dyn Fn(String) -> String = &gemini_fake_with_subagent;
        let Some(run) = run_gemini_script(test, &r, script, |_| {}, Some(patch)) else {
            return;
        };
        assert_eq!(run.code, 0, "client failed{}", run.dump());
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap_or_default(),
            "keep me\n",
            "the subagent's rm ran{}",
            run.dump()
        );
        let sub = run.function_responses_of("subagent");
        assert_eq!(sub.len(), 2, "{sub:?}{}", run.dump());
        assert!(
            sub[0].0 && sub[0].1.contains("Forge guard deny [rm-outside-repo]"),
            "the hook did not deny the subagent's call: {sub:?}{}",
            run.dump()
        );
        assert!(
            !sub[1].0 && sub[1].1.contains("marker=session"),
            "the subagent's command ran outside the sandbox: {sub:?}{}",
            run.dump()
        );
        assert_eq!(r.read("sub.txt"), "sub\n");
        let session = run.result()["session_id"].as_str().unwrap().to_string();
        let timeline = r.read(&format!(".forge/sessions/{session}/timeline.jsonl"));
        assert!(
            timeline.contains("\"source\":\"gemini-subagent\""),
            "the subagent's chat was not booked{}",
            run.dump()
        );
    });
}

/// The rig's fake Responses API playing a main agent that starts one subagent with Codex's
/// `spawn_agent` (namespace `multi_agent_v1`), waits for it with `wait_agent` and ends; the
/// subagent (a request whose user input holds the marker) runs `sub_commands` in turn. The
/// fake's own `COMMANDS` are then unused. Requests are logged with `"sub"`.
fn codex_fake_with_subagent(sub_commands: Value) -> impl FnOnce(String) -> String {
    move |src: String| {
        let old = r#"        n = sum(1 for i in inp if isinstance(i, dict) and i.get("type") == "function_call_output")
        if n < len(COMMANDS):
            item = tool_call(req, COMMANDS[n])
        else:"#;
        let log = r#"log({"kind": "responses", "turn": n,"#;
        assert!(
            src.contains(old) && src.contains(log),
            "the rig's fake_responses.py no longer picks its turn as codex_fake_with_subagent expects: update it"
        );
        let new = r#"        n = sum(1 for i in inp if isinstance(i, dict) and i.get("type") == "function_call_output")
        is_sub = any(SUB_MARKER in json.dumps(i) for i in inp if isinstance(i, dict) and i.get("role") == "user")
        step = (SUB_COMMANDS if is_sub else MAIN_STEPS)[n:n + 1]
        if step and isinstance(step[0], dict):
            args = dict(step[0]["args"])
            if step[0]["name"] == "wait_agent":
                args["targets"] = [v["agent_id"] for v in (json.loads(i["output"]) for i in inp
                                   if isinstance(i, dict) and i.get("type") == "function_call_output"
                                   and isinstance(i.get("output"), str) and "agent_id" in i["output"])]
            item = {"type": "function_call", "id": "fc_%d" % next(_ids), "call_id": "call_%d" % next(_ids),
                    "name": step[0]["name"], "namespace": "multi_agent_v1", "arguments": json.dumps(args),
                    "status": "completed"}
        elif step:
            item = tool_call(req, step[0])
        else:"#;
        let defs = format!(
            "SUB_MARKER = \"SUBAGENT-TASK-c0d\"\nSUB_COMMANDS = {sub_commands}\nMAIN_STEPS = [{{\"name\": \"spawn_agent\", \"args\": {{\"message\": SUB_MARKER + \": run the commands\"}}}}, {{\"name\": \"wait_agent\", \"args\": {{\"timeout_ms\": 60000}}}}]\n\n\ndef log("
        );
        src.replacen(old, new, 1)
            .replacen(
                log,
                r#"log({"kind": "responses", "sub": is_sub, "turn": n,"#,
                1,
            )
            .replacen("def log(", &defs, 1)
    }
}

/// Codex CLI 0.171.0 has subagents on by default (`multi_agent`: `spawn_agent`, `wait_agent`,
/// … in the `multi_agent_v1` namespace; `codex features list`): a subagent's shell calls reach
/// Forge's PreToolUse hook like the main agent's — the destructive one is denied, the benign one
/// runs inside the sandbox.
#[test]
fn codex_subagent_commands_are_guarded_and_sandboxed() {
    on_each_codex("codex_subagent_commands_are_guarded_and_sandboxed", || {
        let test = "codex_subagent_commands_are_guarded_and_sandboxed";
        if !sandbox_available(test) {
            return;
        }
        let r = Repo::with_command("true", "none");
        let Some(victim) = victim_dir(test) else {
            return;
        };
        let precious = victim.path().join("precious.txt");
        std::fs::write(&precious, "keep me\n").unwrap();
        let sub = json!([
            format!("rm -rf {}", victim.path().display()),
            "echo sub > sub.txt && echo \"marker=$FORGE_SANDBOX\""
        ]);
        let fake = codex_fake_with_subagent(sub);
        let Some(codex) = run_codex_with(
            test,
            &r,
            json!([]),
            |_| {},
            |src| codex_fake_with_usage(fake(src)),
        ) else {
            return;
        };
        let dump = &codex.dump;
        assert!(codex.ok, "{dump}");
        let requests: Vec<Value> = codex
            .requests
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(|e: &Value| e["kind"] == "responses")
            .collect();
        let last_sub = requests
            .iter()
            .rfind(|e| e["sub"] == true)
            .unwrap_or_else(|| panic!("the subagent never ran{dump}"));
        let outputs: Vec<String> = last_sub["body"]["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| i["output"].to_string())
            .collect();
        assert_eq!(outputs.len(), 2, "{outputs:?}{dump}");
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap_or_default(),
            "keep me\n",
            "the subagent's rm ran{dump}"
        );
        assert!(
            outputs[0].contains("Forge guard deny [rm-outside-repo]"),
            "the hook did not deny the subagent's call: {outputs:?}{dump}"
        );
        assert!(
            outputs[1].contains("marker=session"),
            "the subagent's command ran outside the sandbox: {outputs:?}{dump}"
        );
        assert_eq!(r.read("sub.txt"), "sub\n", "{dump}");
        // The subagent's hooks name its own rollout (and the parent's session): its calls are
        // booked beside the main thread's, which alone make `turn.completed`'s usage.
        let main = codex
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "turn.completed")
            .map(|v| {
                v["usage"]["input_tokens"].as_f64().unwrap()
                    + v["usage"]["output_tokens"].as_f64().unwrap()
            })
            .unwrap_or_else(|| panic!("no turn.completed{dump}"));
        let session = codex
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "thread.started")
            .and_then(|v| v["thread_id"].as_str().map(str::to_string))
            .unwrap_or_else(|| panic!("no thread.started{dump}"));
        let (ledger, field) = session_ledger(&r, &session);
        assert!(
            field("tokens") > main,
            "the subagent's calls were not booked: {ledger}{dump}"
        );
        // Every response is booked, the subagent's last one (after its last tool call, which
        // no hook of its own follows) at the parent's next hook: the fake's whole usage.
        let truth: f64 = requests
            .iter()
            .map(|e| e["usage"]["total_tokens"].as_f64().unwrap())
            .sum();
        assert_ratio(
            "tokens",
            field("tokens"),
            truth,
            &format!("\n{ledger}{dump}"),
        );
        // The main agent waited for it and got its end.
        assert!(
            requests.iter().any(|e| e["sub"] == false && e["turn"] == 2),
            "{dump}"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// Spend of Gemini CLI and Codex CLI sessions, held to what their fake model APIs reported.

/// The rig's fake Gemini API reporting usage as the real API does for a model that caches and
/// thinks — half of each prompt read from the cache, 5 thought tokens — and logging it beside
/// each request: the truth Forge's ledger is held to.
fn gemini_fake_with_usage(src: String) -> String {
    let usage = r#"        usage = {"promptTokenCount": len(json.dumps(contents)) // 4 + 1, "candidatesTokenCount": 7,
                 "totalTokenCount": len(json.dumps(contents)) // 4 + 8}
"#;
    let log = r#""reply": parts})"#;
    assert!(
        src.contains(usage) && src.contains(log),
        "the rig's fake_gemini.py no longer computes and logs usage as gemini_fake_with_usage expects: update it"
    );
    src.replace(
        usage,
        &format!(
            "{usage}        usage[\"cachedContentTokenCount\"] = usage[\"promptTokenCount\"] // 2\n        usage[\"thoughtsTokenCount\"] = 5\n        usage[\"totalTokenCount\"] += 5\n"
        ),
    )
    .replace(log, r#""reply": parts, "usage": usage})"#)
}

/// The rig's fake Responses API reporting a different usage per response, with cached input
/// and reasoning, and logging it beside each request.
fn codex_fake_with_usage(src: String) -> String {
    let usage = r#"        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
"#;
    let log = r#""reply": item})"#;
    assert!(
        src.contains(usage) && src.contains(log),
        "the rig's fake_responses.py no longer computes and logs usage as codex_fake_with_usage expects: update it"
    );
    let usage_of = r#"def usage_of(n):
    return {"input_tokens": 100 + 50 * n, "input_tokens_details": {"cached_tokens": 40 * n},
            "output_tokens": 10 + n, "output_tokens_details": {"reasoning_tokens": 3},
            "total_tokens": 110 + 51 * n}


class H("#;
    src.replace(usage, "        usage = usage_of(n)\n")
        .replace(log, r#""reply": item, "usage": usage_of(n)})"#)
        .replacen("class H(", usage_of, 1)
}

/// USD per million tokens of `model` in Forge's table in force (`forge budget prices --json`,
/// the row of the longest prefix): `(input, output, cache_read)`.
fn listed_price(r: &Repo, model: &str) -> (f64, f64, f64) {
    let v = r.forge(&["budget", "prices", "--json"]).json();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| model.starts_with(row["model"].as_str().unwrap()))
        .max_by_key(|row| row["model"].as_str().unwrap().len())
        .unwrap_or_else(|| panic!("no price row for {model}: the test expects a listed model"));
    let f = |k: &str| row[k].as_f64().unwrap();
    (f("input"), f("output"), f("cache_read"))
}

/// A session's ledger, as numbers.
fn session_ledger(r: &Repo, session: &str) -> (String, impl Fn(&str) -> f64) {
    let ledger = r.read(&format!(".forge/sessions/{session}/budget.yaml"));
    let text = ledger.clone();
    (ledger, move |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap_or_else(|| panic!("no {k} in {text}"))
            .parse()
            .unwrap()
    })
}

/// `booked / truth`, asserted within 1.00 ± 0.01.
fn assert_ratio(what: &str, booked: f64, truth: f64, dump: &str) {
    let ratio = booked / truth;
    assert!(
        (ratio - 1.0).abs() <= 0.01,
        "{what}: Forge booked {booked}, the fake reported {truth} (ratio {ratio:.4}){dump}"
    );
}

/// [`gemini_fake_with_usage`] taking `secs` to answer each of the agent's requests, as a real
/// model does: Gemini CLI writes its telemetry in batches 5 seconds apart (OpenTelemetry's
/// default, which 0.61.0 keeps), so a session over within 5 seconds of its router call ends
/// before the call reaches the file.
fn gemini_fake_with_latency(src: String, secs: f64) -> String {
    let at = "        usage = {\"promptTokenCount\"";
    assert!(
        src.contains(at),
        "the rig's fake_gemini.py no longer computes usage as gemini_fake_with_latency expects: update it"
    );
    src.replacen(
        at,
        &format!("        if decls:\n            time.sleep({secs})\n{at}"),
        1,
    )
}

/// A live Gemini CLI session's hooks book every model call the fake API answered, once, as it
/// reported it: tokens (input, cached, output with thoughts) and their price — the agent's calls
/// from the session's chat recording, the model router's call (a side request with no tools,
/// `utility_router` in the client's stats) and any other side call from the CLI's local
/// telemetry, which `forge hooks install gemini` turned on.
#[test]
fn gemini_spend_matches_the_fakes_true_usage() {
    on_each_gemini("gemini_spend_matches_the_fakes_true_usage", || {
        let test = "gemini_spend_matches_the_fakes_true_usage";
        let r = Repo::with_command("true", "none");
        // The router's model has no row in Forge's table: priced here as its owner would.
        r.config("verify:\n  commands:\n    - {name: test, run: 'true', report: none}\nbudget:\n  prices:\n    gemini-3.5-flash-lite: {input: 0.1, output: 0.4, cache_read: 0.01}\n");
        let turns = json!([
            gemini_shell("echo one"),
            gemini_shell("echo two"),
            gemini_text("done")
        ]);
        let patch: &dyn Fn(String) -> String =
            &|src| gemini_fake_with_latency(gemini_fake_with_usage(src), 2.5);
        let Some(run) = run_gemini_with(test, &r, turns, |_| {}, Some(patch)) else {
            return;
        };
        assert_eq!(run.code, 0, "client failed{}", run.dump());
        let session = run.result()["session_id"].as_str().unwrap().to_string();
        let (mut input, mut cached, mut output, mut total, mut usd, mut side) =
            (0u64, 0u64, 0u64, 0u64, 0f64, 0u64);
        let (mut calls, mut models) = (0, std::collections::BTreeSet::new());
        for e in run
            .file("requests.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["kind"] == "generate")
        {
            let u = &e["usage"];
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            if e["role"] == "agent" {
                calls += 1;
            } else {
                side += n("totalTokenCount");
            }
            let model = e["model"].as_str().unwrap();
            models.insert(model.to_string());
            let (i, c, o) = (
                n("promptTokenCount") - n("cachedContentTokenCount"),
                n("cachedContentTokenCount"),
                n("candidatesTokenCount") + n("thoughtsTokenCount"),
            );
            let (pi, po, pc) = listed_price(&r, model);
            usd += (i as f64 * pi + o as f64 * po + c as f64 * pc) / 1e6;
            (input, cached, output) = (input + i, cached + c, output + o);
            total += n("totalTokenCount");
        }
        assert_eq!(calls, 3, "{}", run.dump());
        assert!(
            side > 0,
            "no side call: the router did not run{}",
            run.dump()
        );
        let (ledger, field) = session_ledger(&r, &session);
        let dump = format!("\n{ledger}{}", run.dump());
        assert_ratio("tokens", field("tokens"), total as f64, &dump);
        assert_ratio("usd", field("usd"), usd, &dump);
        assert_eq!(
            (
                field("input_tokens") as u64,
                field("cache_read_tokens") as u64,
                field("output_tokens") as u64,
            ),
            (input, cached, output),
            "every call booked once{dump}"
        );
        assert!(
            field("records") as usize >= models.len(),
            "a record per model and hook call{dump}"
        );
        eprintln!(
            "real_agents::{test}: booked {} tokens, ${:.6}; the fake reported {total} tokens (${usd:.6}), {side} of them side calls (the router's); ratio {:.4} tokens, {:.4} usd",
            field("tokens"),
            field("usd"),
            field("tokens") / total as f64,
            field("usd") / usd
        );
    });
}

/// A USD limit on the session stops a live Gemini CLI session: the spend the first tool call's
/// AfterTool booked is over it, so the next BeforeTool is denied and the model is told why.
#[test]
fn gemini_usd_limit_trips_on_the_booked_spend() {
    on_each_gemini("gemini_usd_limit_trips_on_the_booked_spend", || {
        let test = "gemini_usd_limit_trips_on_the_booked_spend";
        let r = Repo::with_command("true", "none");
        r.config("verify:\n  commands:\n    - {name: test, run: 'true'}\nbudget:\n  session: {usd: 0.0001}\n");
        let turns = json!([
            gemini_shell("echo one > one.txt"),
            gemini_shell("echo two > two.txt"),
            gemini_text("done")
        ]);
        let Some(run) = run_gemini(test, &r, turns, |_| {}) else {
            return;
        };
        assert_eq!(run.code, 0, "client failed{}", run.dump());
        assert!(r.exists("one.txt"), "{}", run.dump());
        assert!(!r.exists("two.txt"), "the second call ran{}", run.dump());
        let responses = run.function_responses();
        assert_eq!(responses.len(), 2, "{responses:?}{}", run.dump());
        assert!(
            responses[1].0 && responses[1].1.contains("[budget-session]"),
            "{responses:?}{}",
            run.dump()
        );
    });
}

/// A live Codex CLI session's hooks book the rollout's running total: what the fake Responses
/// API reported for every response (cached input and reasoning included), priced by Forge.
#[test]
fn codex_spend_matches_the_fakes_true_usage() {
    on_each_codex("codex_spend_matches_the_fakes_true_usage", || {
        let test = "codex_spend_matches_the_fakes_true_usage";
        let r = Repo::with_command("true", "none");
        let commands = json!(["echo one", "echo two"]);
        let Some(codex) = run_codex_with(test, &r, commands, |_| {}, codex_fake_with_usage) else {
            return;
        };
        let dump = &codex.dump;
        assert!(codex.ok, "{dump}");
        let session = codex
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "thread.started")
            .and_then(|v| v["thread_id"].as_str().map(str::to_string))
            .unwrap_or_else(|| panic!("no thread.started{dump}"));
        let (pi, po, pc) = listed_price(&r, "gpt-5-fake");
        let (mut input, mut cached, mut output, mut total, mut usd) =
            (0u64, 0u64, 0u64, 0u64, 0f64);
        let mut calls = 0;
        for e in codex
            .requests
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["kind"] == "responses")
        {
            calls += 1;
            let u = &e["usage"];
            let n = |p: &str| u.pointer(p).and_then(|x| x.as_u64()).unwrap();
            let c = n("/input_tokens_details/cached_tokens");
            let (i, o) = (n("/input_tokens") - c, n("/output_tokens"));
            usd += (i as f64 * pi + o as f64 * po + c as f64 * pc) / 1e6;
            (input, cached, output) = (input + i, cached + c, output + o);
            total += n("/total_tokens");
        }
        assert_eq!(calls, 3, "{dump}");
        let (ledger, field) = session_ledger(&r, &session);
        let dump = format!("\n{ledger}{dump}");
        assert_ratio("tokens", field("tokens"), total as f64, &dump);
        assert_ratio("usd", field("usd"), usd, &dump);
        assert_eq!(
            (
                field("input_tokens") as u64,
                field("cache_read_tokens") as u64,
                field("output_tokens") as u64
            ),
            (input, cached, output),
            "{dump}"
        );
    });
}

/// A USD limit on the session stops a live Codex CLI session at its next tool call.
#[test]
fn codex_usd_limit_trips_on_the_booked_spend() {
    on_each_codex("codex_usd_limit_trips_on_the_booked_spend", || {
        let test = "codex_usd_limit_trips_on_the_booked_spend";
        let r = Repo::with_command("true", "none");
        r.config("verify:\n  commands:\n    - {name: test, run: 'true'}\nbudget:\n  session: {usd: 0.0001}\n");
        let commands = json!(["echo one > one.txt", "echo two > two.txt"]);
        let Some(codex) = run_codex(test, &r, commands, |_| {}) else {
            return;
        };
        let dump = &codex.dump;
        assert!(codex.ok, "{dump}");
        assert!(r.exists("one.txt"), "{dump}");
        assert!(!r.exists("two.txt"), "the second call ran{dump}");
        assert!(codex.requests.contains("[budget-session]"), "{dump}");
    });
}
