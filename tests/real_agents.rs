//! The real Claude Code CLI, offline, against Forge's hooks: `forge hooks install claude` wires
//! the project, and the agent rig (`shared/tools/agent-rig/claude-offline.sh`) runs the real
//! client against a scripted fake Anthropic API, so every hook call below is made by the client.
//!
//! Needs the rig (a sibling `shared/` of the repository, or `/work/shared`), `python3`, and the
//! pinned client (installed by the rig through npm into `~/.cache/forge-agent-rig` on first use).
//! When any of that is missing the tests print `SKIPPED: …` and return, unless
//! `FORGE_REQUIRE_REAL_AGENTS=1`, which turns the skip into a failure.
//!
//! Rig runs are serialised by a lock (one npm install, no port or CPU contention), so the tests
//! need no `--test-threads=1`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use common::{Repo, forge_bin, tap_script};
use serde_json::{Value, json};

static RIG_LOCK: Mutex<()> = Mutex::new(());

const REQUIRE_ENV: &str = "FORGE_REQUIRE_REAL_AGENTS";

/// Skips (loudly) or, with `FORGE_REQUIRE_REAL_AGENTS=1`, fails.
fn unavailable(test: &str, why: &str) {
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{test}: the real-agent rig is required ({REQUIRE_ENV}=1) but unavailable: {why}");
    }
    eprintln!(
        "\n==== SKIPPED: real_agents::{test}: {why} (set {REQUIRE_ENV}=1 to make this a failure) ====\n"
    );
}

fn find_rig() -> Result<PathBuf, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        manifest.join("../shared/tools/agent-rig/claude-offline.sh"),
        PathBuf::from("/work/shared/tools/agent-rig/claude-offline.sh"),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .ok_or_else(|| {
            format!(
                "agent rig not found (looked at {})",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
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
        for f in ["result.json", "claude.stderr", "server.stderr"] {
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
    for event in ["PreToolUse", "PostToolUse", "Stop", "SessionStart"] {
        assert!(settings.contains(event), "{event} not wired: {settings}");
    }

    let dir = tempfile::Builder::new()
        .prefix("forge-rig-out-")
        .tempdir()
        .unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let out = dir.path().join("out");

    let guard = RIG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let started = std::time::Instant::now();
    let o = Command::new(&rig)
        .arg(r.path())
        .arg(&script)
        .arg(&out)
        .env("RIG_TIMEOUT", "300")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", rig.display()));
    drop(guard);
    let code = o.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    eprintln!(
        "real_agents::{test}: claude-offline exited {code} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    if code == 3 {
        unavailable(
            test,
            &format!(
                "the rig could not install the Claude Code client: {}",
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
}

#[test]
fn edits_of_forge_state_are_denied() {
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
}

#[test]
fn failing_change_blocks_stop_until_the_breaker_opens() {
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
}
