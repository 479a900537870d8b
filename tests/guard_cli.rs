//! A person's guard commands end to end, through the built binary and the real Claude Code
//! PreToolUse protocol: allow-once exceptions, trust in a clone's relaxing rules, lifting an
//! interrupted run's phase scope, MCP tool calls — each recorded on the timeline.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{Output, Repo};
use serde_json::{Value, json};

/// The repository and a HOME (with the person's Forge folder) of its own.
struct Person {
    repo: Repo,
    home: tempfile::TempDir,
}

impl Person {
    fn new(config: &str) -> Person {
        let repo = Repo::bare();
        repo.config(config);
        Person {
            repo,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.repo.forge_cmd(args);
        c.env("HOME", self.home.path())
            .env("FORGE_CONFIG_DIR", self.home.path().join("forge"))
            .env("FORGE_ACTOR", "human:Ada")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDECODE")
            .env_remove("GEMINI_CLI")
            .env_remove("CODEX_SANDBOX")
            .env_remove("FORGE_ROLE");
        c
    }

    fn forge(&self, args: &[&str]) -> Output {
        let out = self.cmd(args).output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The Claude Code PreToolUse hook's decision for a tool call: `allow` when it prints
    /// nothing.
    fn pre_tool_use(&self, tool: &str, input: Value) -> (String, String) {
        let payload = json!({
            "session_id": "agent-1",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": self.repo.path(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
        });
        let mut child = self
            .cmd(&["hook", "claude", "pre-tool-use"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if stdout.trim().is_empty() {
            return ("allow".into(), String::new());
        }
        let v: Value = serde_json::from_str(&stdout).unwrap();
        let h = &v["hookSpecificOutput"];
        (
            h["permissionDecision"].as_str().unwrap().to_string(),
            h["permissionDecisionReason"].as_str().unwrap().to_string(),
        )
    }

    fn bash(&self, command: &str) -> (String, String) {
        self.pre_tool_use("Bash", json!({"command": command, "description": "x"}))
    }

    /// A line pasted into the person's terminal (bash, `forge` on PATH), as they would paste
    /// the allow-once command a deny offers.
    fn paste(&self, line: &str) -> Output {
        let bin = common::forge_bin();
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new("bash");
        c.args(["-c", line])
            .current_dir(self.repo.path())
            .env("PATH", path)
            .env("TMPDIR", self.repo.tmp())
            .env("HOME", self.home.path())
            .env("FORGE_CONFIG_DIR", self.home.path().join("forge"))
            .env("FORGE_ACTOR", "human:Ada")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDE_PROJECT_DIR");
        for (var, _) in forge::caller::AGENT_MARKERS {
            c.env_remove(var);
        }
        let out = c.output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn timeline(&self) -> String {
        let o = self.forge(&["timeline", "--kind", "guard", "--json"]);
        assert_eq!(o.code, 0, "{o:?}");
        o.stdout
    }
}

const CONFIG: &str = "verify:\n  commands:\n    - {name: test, run: 'true', report: none}\n";

#[test]
fn an_exception_a_person_grants_lets_exactly_that_call_through_once() {
    let p = Person::new(CONFIG);
    let line = "git push --force origin feature/x";
    let (d, reason) = p.bash(line);
    assert_eq!(d, "deny", "{reason}");
    // An agent cannot grant one: the command is a person's.
    let (d, reason) = p.bash(&format!("forge guard allow-once -- '{line}'"));
    assert_eq!(d, "deny");
    assert!(reason.contains("human-only"), "{reason}");
    let o = p.forge(&["guard", "allow-once", "--for", "10m", "--", line]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.starts_with("Allowed once, until "), "{o:?}");
    // Checking by hand does not use it up.
    let o = p.forge(&[
        "guard",
        "check",
        "--",
        "git",
        "push",
        "--force",
        "origin",
        "feature/x",
    ]);
    assert_eq!(o.code, 1, "{o:?}");
    // Another call is not covered; this one is, once.
    assert_eq!(p.bash("git push --force origin main").0, "deny");
    assert_eq!(p.bash(line).0, "allow");
    assert_eq!(p.bash(line).0, "deny");
    let tl = p.timeline();
    assert!(tl.contains("allow-once-granted"), "{tl}");
    assert!(tl.contains("\"rule\":\"allow-once\""), "{tl}");
    assert!(tl.contains("human:Ada"), "{tl}");
    // Run where an agent's environment shows, the command refuses too (behind the guard).
    let out = p
        .cmd(&["guard", "allow-once", "--", "rm -rf /"])
        .env("CLAUDECODE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a person's act"));
    // Bad durations are usage errors that say how to write one.
    let o = p.forge(&["guard", "allow-once", "--for", "soon", "--", "x"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("10m"), "{o:?}");
}

/// The allow-once command a deny reason offers, cut from the reason.
fn offered(reason: &str) -> &str {
    reason
        .split_once(" — if the person wants it anyway: ")
        .unwrap_or_else(|| panic!("no allow-once command offered: {reason}"))
        .1
}

#[test]
fn a_deny_offers_the_allow_once_command_that_lets_exactly_that_call_through() {
    let p = Person::new(CONFIG);
    // Quotes of both kinds and a `$` survive the shell quoting.
    let line = r#"git push --force origin "it's-$HOME""#;
    let (d, reason) = p.bash(line);
    assert_eq!(d, "deny", "{reason}");
    let paste = offered(&reason);
    assert_eq!(
        paste,
        r#"forge guard allow-once -- 'git push --force origin "it'\''s-$HOME"'"#
    );
    // `forge guard check` offers the same command.
    let o = p.forge(&["guard", "check", "--", line]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stdout.trim_end().ends_with(paste), "{o:?}");
    let o = p.paste(paste);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(p.bash(line).0, "allow");
    assert_eq!(p.bash(line).0, "deny", "once");

    // A file tool's call: its input as JSON.
    let outside = p.home.path().join("notes.txt");
    let input = json!({"file_path": outside, "content": "it's done\n"});
    let (d, reason) = p.pre_tool_use("Write", input.clone());
    assert_eq!(d, "deny", "{reason}");
    let paste = offered(&reason);
    assert!(
        paste.starts_with("forge guard allow-once --tool Write --input '{"),
        "{paste}"
    );
    let o = p.paste(paste);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(p.pre_tool_use("Write", input).0, "allow");

    // Rules that keep Forge's own controls from an agent offer no way round them.
    let (d, reason) = p.bash("echo 0 > .forge/changes/x/verify-attempts.yaml");
    assert_eq!(d, "deny", "{reason}");
    assert!(!reason.contains("allow-once"), "{reason}");
    let (d, reason) = p.bash("forge hooks uninstall claude");
    assert_eq!(d, "deny", "{reason}");
    assert!(
        !reason.contains("if the person wants it anyway"),
        "{reason}"
    );
}

/// The hook leaves a Write's content unparsed (BENCHMARKS.md §8), yet a person's exception
/// still names the exact call: the whole input, every key and character of it, however the
/// person's JSON writes it.
#[test]
fn an_exception_for_a_denied_write_names_its_whole_input() {
    let p = Person::new(CONFIG);
    let outside = p.home.path().join("notes.txt");
    // Escapes, Unicode, and more than an offered command shows in full.
    let content = format!(
        "it's \"done\"\n\tcaf\u{e9} \u{1f600} \\ {}",
        "x = 1;\n".repeat(400)
    );
    let input = json!({"file_path": outside, "content": content, "extra": [1, {"k": "\u{e9}\n"}]});
    let (d, reason) = p.pre_tool_use("Write", input.clone());
    assert_eq!(d, "deny", "{reason}");
    assert_eq!(
        offered(&reason),
        "forge guard allow-once --tool Write --input '<the exact tool input as JSON>'"
    );
    let grant = |v: &str| {
        let o = p.forge(&["guard", "allow-once", "--tool", "Write", "--input", v]);
        assert_eq!(o.code, 0, "{o:?}");
    };
    // Another content, or the input without a key the guard does not read, is another call.
    let mut other = input.clone();
    other["content"] = json!(content.replace("done", "dome"));
    grant(&other.to_string());
    let mut fewer = input.clone();
    fewer.as_object_mut().unwrap().remove("extra");
    grant(&fewer.to_string());
    assert_eq!(p.pre_tool_use("Write", input.clone()).0, "deny");
    // The same input, pretty-printed and with `\u` escapes, is this call: once.
    let pretty = serde_json::to_string_pretty(&input)
        .unwrap()
        .replace('\u{e9}', "\\u00e9");
    assert!(pretty.contains("caf\\u00e9"), "{pretty}");
    grant(&pretty);
    assert_eq!(p.pre_tool_use("Write", input.clone()).0, "allow");
    assert_eq!(p.pre_tool_use("Write", input).0, "deny", "once");
}

#[test]
fn relaxing_rules_from_a_clone_apply_only_once_a_person_trusts_them() {
    let p = Person::new(&format!(
        "{CONFIG}guard:\n  rules:\n    - {{decision: allow, reason: scratch branch, program: git, args: [reset, --hard], relaxes: [git-reset-hard]}}\n  decisions:\n    unparseable: ask\n"
    ));
    let o = p.forge(&["guard", "check", "--", "git", "reset", "--hard"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stderr.contains("ignored until a person trusts it"),
        "{o:?}"
    );
    let o = p.forge(&["guard", "trust", "--show"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("relaxes git-reset-hard"), "{o:?}");
    assert!(
        o.stdout
            .contains("decision of `unparseable` lowered from deny to ask"),
        "{o:?}"
    );
    assert!(o.stdout.contains("Not trusted"), "{o:?}");
    // An agent cannot trust it.
    assert_eq!(p.bash("forge guard trust").0, "deny");
    let o = p.forge(&["guard", "trust"]);
    assert_eq!(o.code, 0, "{o:?}");
    let o = p.forge(&["guard", "check", "--", "git", "reset", "--hard"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(p.forge(&["guard", "check", "--", "echo 'x"]).code, 3);
    assert!(p.timeline().contains("\"event\":\"trust\""));
    // Changed relaxing rules are ignored again.
    p.repo.config(&format!(
        "{CONFIG}guard:\n  rules:\n    - {{decision: allow, reason: scratch branch, program: git, args: [reset, --hard], relaxes: [git-reset-hard, git-clean]}}\n"
    ));
    assert_eq!(
        p.forge(&["guard", "check", "--", "git", "reset", "--hard"])
            .code,
        1
    );
    assert_eq!(p.forge(&["guard", "trust", "--revoke"]).code, 0);
}

#[test]
fn an_interrupted_runs_phase_scope_stays_until_a_person_lifts_it() {
    let p = Person::new(CONFIG);
    p.repo.write(".tmp/.forge/active-run", "r1\n");
    p.repo.write(
        ".tmp/.forge/runs/r1/state.json",
        r#"{"current": {"slice": "s1", "phase": "red", "red_tests": []}, "slices": [{"id": "s1", "test_areas": ["tests/"], "code_areas": ["src/"]}]}"#,
    );
    let code = p.repo.path().join("src/cart.rs").display().to_string();
    // No `forge run` drives the run (it was killed): the scope stays.
    let (d, reason) = p.pre_tool_use("Write", json!({"file_path": code, "content": "x"}));
    assert_eq!(d, "deny");
    assert!(
        reason.contains("phase-red-scope") && reason.contains("forge guard lift"),
        "{reason}"
    );
    let o = p.forge(&["guard", "lift", "--show"]);
    assert!(o.stdout.contains("interrupted"), "{o:?}");
    assert_eq!(
        p.bash("forge guard lift").0,
        "deny",
        "an agent cannot lift it"
    );
    let o = p.forge(&["guard", "lift"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("forge run --resume r1"), "{o:?}");
    assert_eq!(
        p.pre_tool_use("Write", json!({"file_path": code, "content": "x"}))
            .0,
        "allow"
    );
    assert!(p.timeline().contains("phase-lifted"));
    // While a `forge run` drives the run, it cannot be lifted.
    let driver = std::fs::File::open(p.repo.path().join(".tmp/.forge/runs/r1")).unwrap();
    driver.lock().unwrap();
    p.repo.write(
        ".tmp/.forge/runs/r1/state.json",
        r#"{"current": {"slice": "s1", "phase": "green", "red_tests": []}, "slices": [{"id": "s1", "test_areas": ["tests/"], "code_areas": ["src/"]}]}"#,
    );
    assert_eq!(p.forge(&["guard", "lift"]).code, 2);
}

#[test]
fn mcp_tool_calls_go_through_the_guard() {
    let p = Person::new(CONFIG);
    let cfg = p
        .repo
        .path()
        .join(".forge/config.yaml")
        .display()
        .to_string();
    let (d, reason) = p.pre_tool_use(
        "mcp__filesystem__write_file",
        json!({"path": cfg, "content": "x"}),
    );
    assert_eq!(d, "deny");
    assert!(reason.contains("forge-state"), "{reason}");
    let (d, _) = p.pre_tool_use(
        "mcp__shell__execute_command",
        json!({"command": "git push --force origin main"}),
    );
    assert_eq!(d, "deny");
    let ok = p.repo.path().join("src/new.rs").display().to_string();
    assert_eq!(
        p.pre_tool_use(
            "mcp__filesystem__write_file",
            json!({"path": ok, "content": "x"})
        )
        .0,
        "allow"
    );
}
