//! `forge doctor` end to end: a ready checkout passes; each kind of breakage is named with its
//! fix and makes it exit 1.

mod common;

use common::{Repo, forge_bin};
use serde_json::Value;

/// `forge doctor --json` in `r` with `home` as HOME (so the user's own agent settings play no
/// part): exit code and the findings.
fn doctor(r: &Repo, home: &std::path::Path) -> (i32, Value) {
    let o = r
        .forge_cmd(&["doctor", "--json"])
        .env("HOME", home)
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {o:?}"));
    (o.status.code().unwrap_or(-1), v)
}

fn findings<'v>(v: &'v Value, check: &str) -> Vec<&'v Value> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == check)
        .collect()
}

#[test]
fn a_ready_checkout_passes_and_says_what_it_checked() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    let o = r.forge(&[
        "hooks",
        "install",
        "claude",
        "--bin",
        forge_bin().to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["ok"], true);
    for check in ["git", "config", "runner", "hooks"] {
        let f = findings(&v, check);
        assert!(
            !f.is_empty() && f.iter().all(|f| f["status"] == "ok"),
            "{check}: {v:#}"
        );
    }
    let hooks = findings(&v, "hooks")[0]["message"].as_str().unwrap();
    assert!(
        hooks.contains("claude (project)") && hooks.contains("denies `rm -rf /`"),
        "{hooks}"
    );
    // The probe ran on a scratch folder: nothing was recorded in the project.
    assert!(!r.exists(".forge/sessions"), "the probe left a timeline");
    // What the Stop hook will verify is said.
    assert!(
        findings(&v, "hooks").iter().any(|f| f["status"] == "ok"
            && f["message"]
                .as_str()
                .unwrap()
                .starts_with("the Stop hook verifies all changes (no change is active")),
        "{v:#}"
    );
    // The text view ends with its verdict: "Nothing is broken." only when nothing warns (here
    // the sandbox may: not every kernel gives the full wall).
    let o = r
        .forge_cmd(&["doctor"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let last = text.lines().last().unwrap_or_default();
    if kernel_is_full(&r) {
        assert_eq!(last, "Nothing is broken.", "{text}");
    } else {
        assert_eq!(
            last,
            "1 warning(s): Forge runs, but not every control is in force (see the warn lines).",
            "{text}"
        );
    }
}

/// A control that is wired but not in force is a warning, and the last line says so instead of
/// "Nothing is broken.": an active change that does not exist (the Stop hook cannot verify and
/// lets the agent stop), an open breaker (the Stop hook lets it stop unverified).
#[test]
fn a_control_not_in_force_is_a_warning_and_the_last_line_says_so() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    r.change("checkout", &["guest pays by card"]);
    let o = r.forge(&[
        "hooks",
        "install",
        "claude",
        "--bin",
        forge_bin().to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    let yaml = r.read(".forge/config.yaml") + "sandbox:\n  mode: off\n";
    r.config(&yaml);
    assert_eq!(r.forge(&["change", "use", "checkout"]).code, 0);
    let stop_line = |v: &Value| {
        findings(v, "hooks")
            .into_iter()
            .find(|f| f["message"].as_str().unwrap().contains("the Stop hook"))
            .cloned()
            .unwrap_or_else(|| panic!("{v:#}"))
    };
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 0, "{v:#}");
    let f = stop_line(&v);
    assert_eq!(f["status"], "ok", "{v:#}");
    assert!(
        f["message"].as_str().unwrap().contains("change `checkout`"),
        "{v:#}"
    );
    // The active change's folder goes away.
    std::fs::remove_dir_all(r.path().join(".forge/changes/checkout")).unwrap();
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 0, "{v:#}");
    let f = stop_line(&v);
    assert_eq!(f["status"], "warn", "{v:#}");
    assert!(
        f["message"].as_str().unwrap().contains("`checkout`")
            && f["fix"]
                .as_str()
                .unwrap()
                .contains("forge change use --clear"),
        "{v:#}"
    );
    // No active change, and the breaker for all changes open.
    assert_eq!(r.forge(&["change", "use", "--clear"]).code, 0);
    r.write(
        ".forge/changes/all-changes/verify-attempts.yaml",
        "consecutive_failures: 3\nopen: true\nlast_verdict: FAIL\ntotal_attempts: 3\n",
    );
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 0, "{v:#}");
    let f = stop_line(&v);
    assert_eq!(f["status"], "warn", "{v:#}");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("forge verify --reset-breaker --change all-changes"),
        "{v:#}"
    );
    let o = r
        .forge_cmd(&["doctor"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("Nothing is broken"), "{text}");
    assert_eq!(
        text.lines().last().unwrap_or_default(),
        "2 warning(s): Forge runs, but not every control is in force (see the warn lines).",
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("warn  hooks   the circuit breaker of `all-changes` is open")),
        "{text}"
    );
}

#[test]
fn each_breakage_is_named_with_its_fix() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("no-such-runner-xyz --quiet && sh tests/run.sh", "tap");
    // Wired to a forge that is not there, and the user's Codex wired to one that answers nothing.
    let o = r.forge(&["hooks", "install", "claude", "--bin", "/nonexistent/forge"]);
    assert_eq!(o.code, 0, "{o:?}");
    let mute = home.path().join("bin/forge");
    std::fs::create_dir_all(mute.parent().unwrap()).unwrap();
    std::fs::write(&mute, "#!/bin/sh\ncat >/dev/null\n").unwrap();
    std::fs::set_permissions(&mute, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = r
        .forge_cmd(&[
            "hooks",
            "install",
            "codex",
            "--global",
            "--bin",
            mute.to_str().unwrap(),
        ])
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["ok"], false);
    let runner = findings(&v, "runner");
    assert_eq!(runner[0]["status"], "fail", "{v:#}");
    assert!(
        runner[0]["message"]
            .as_str()
            .unwrap()
            .contains("`no-such-runner-xyz` not found"),
        "{v:#}"
    );
    assert!(
        runner[0]["fix"]
            .as_str()
            .unwrap()
            .contains(".forge/config.yaml")
    );
    let hooks = findings(&v, "hooks");
    let claude = hooks
        .iter()
        .find(|f| {
            f["message"]
                .as_str()
                .unwrap()
                .starts_with("claude (project)")
        })
        .unwrap();
    assert_eq!(claude["status"], "fail", "{v:#}");
    assert!(
        claude["message"]
            .as_str()
            .unwrap()
            .contains("does not guard"),
        "{v:#}"
    );
    assert!(
        claude["fix"]
            .as_str()
            .unwrap()
            .contains("forge hooks install claude"),
        "{v:#}"
    );
    let codex = hooks
        .iter()
        .find(|f| f["message"].as_str().unwrap().starts_with("codex (user)"))
        .unwrap();
    assert_eq!(codex["status"], "fail", "{v:#}");
    assert!(
        codex["fix"]
            .as_str()
            .unwrap()
            .contains("forge hooks install codex --global"),
        "{v:#}"
    );

    // A config that does not parse.
    r.config("verify:\n  commandz: []\n");
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 1);
    let config = findings(&v, "config");
    assert_eq!(config[0]["status"], "fail");
    assert!(
        config[0]["message"].as_str().unwrap().contains("commandz"),
        "{v:#}"
    );

    // No config at all, no hooks: the config fails, the hooks only warn.
    let bare = Repo::bare();
    let empty_home = tempfile::tempdir().unwrap();
    let (code, v) = doctor(&bare, empty_home.path());
    assert_eq!(code, 1);
    assert!(
        findings(&v, "config")[0]["fix"]
            .as_str()
            .unwrap()
            .contains("forge init")
    );
    let hooks: Vec<_> = findings(&v, "hooks")
        .into_iter()
        .filter(|f| f["status"] == "warn")
        .collect();
    assert_eq!(hooks.len(), 1, "{v:#}");
}

#[test]
fn a_python_that_cannot_import_the_test_runner_is_named() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("doctor: no python3 on this machine; the import check is not exercised");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("python3 -m no_such_module_xyz -q", "pytest");
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 1, "{v:#}");
    let runner = findings(&v, "runner");
    assert!(
        runner[0]["message"]
            .as_str()
            .unwrap()
            .contains("`python3` cannot import `no_such_module_xyz`"),
        "{v:#}"
    );
}

/// What `forge sandbox --level --json` says this kernel gives (the doctor's finding must agree).
fn kernel_is_full(r: &Repo) -> bool {
    r.forge(&["sandbox", "--level", "--json"]).json()["full"] == true
}

#[test]
fn the_sandbox_in_force_is_reported_for_the_projects_mode() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    let full = kernel_is_full(&r);
    let (code, v) = doctor(&r, home.path());
    let f = findings(&v, "sandbox");
    assert_eq!(f.len(), 1, "{v:#}");
    if full {
        assert_eq!(f[0]["status"], "ok", "{v:#}");
        assert!(
            f[0]["message"]
                .as_str()
                .unwrap()
                .starts_with("full (Landlock ABI "),
            "{v:#}"
        );
    } else {
        assert_eq!(f[0]["status"], "warn", "{v:#}");
        assert!(f[0]["fix"].is_string(), "{v:#}");
    }
    assert_ne!(code, 1, "{v:#}");

    // Switched off: a warning that says how to switch it on; nothing is broken.
    let yaml = r.read(".forge/config.yaml") + "sandbox:\n  mode: off\n";
    r.config(&yaml);
    let (code, v) = doctor(&r, home.path());
    let f = findings(&v, "sandbox");
    assert_eq!(f[0]["status"], "warn", "{v:#}");
    assert!(
        f[0]["message"].as_str().unwrap().starts_with("off"),
        "{v:#}"
    );
    assert!(
        f[0]["fix"].as_str().unwrap().contains("sandbox.mode: auto"),
        "{v:#}"
    );
    assert_ne!(code, 1, "{v:#}");

    // Required where the kernel cannot give it: broken, exit 1.
    if !full {
        r.config(&yaml.replace("mode: off", "mode: require"));
        let (code, v) = doctor(&r, home.path());
        assert_eq!(findings(&v, "sandbox")[0]["status"], "fail", "{v:#}");
        assert_eq!(code, 1, "{v:#}");
    }
}

/// A client that would skip Forge's hooks is a warning with its fix: Gemini CLI in a folder it
/// does not trust (it runs no project hook there), until `forge hooks install gemini --trust`
/// writes the entry Gemini reads, or `GEMINI_CLI_TRUST_WORKSPACE=true`; Claude Code with
/// `disableAllHooks: true` in a settings file it reads.
#[test]
fn a_client_that_would_skip_forges_hooks_is_named() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    let bin = forge_bin();
    let install = |args: &[&str]| {
        r.forge_cmd(&[&["hooks", "install"], args].concat())
            .env("HOME", home.path())
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .output()
            .unwrap()
    };
    let o = install(&["gemini", "--bin", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("--trust") && said.contains("--skip-trust"),
        "{said}"
    );
    let skips = |v: &Value, who: &str| -> Vec<String> {
        findings(v, "hooks")
            .iter()
            .filter(|f| f["status"] == "warn" && f["message"].as_str().unwrap().starts_with(who))
            .map(|f| format!("{} / {}", f["message"], f["fix"]))
            .collect()
    };
    let (_, v) = doctor(&r, home.path());
    let w = skips(&v, "gemini:");
    assert_eq!(w.len(), 1, "{v:#}");
    assert!(
        w[0].contains("not trusted") && w[0].contains("forge hooks install gemini --trust"),
        "{w:?}"
    );
    // The person agrees: the entry Gemini reads, in the shape it writes.
    let o = install(&["gemini", "--bin", bin.to_str().unwrap(), "--trust"]);
    assert!(o.status.success(), "{o:?}");
    let folders: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".gemini/trustedFolders.json")).unwrap(),
    )
    .unwrap();
    let root = r.path().canonicalize().unwrap();
    assert_eq!(folders[root.to_str().unwrap()], "TRUST_FOLDER", "{folders}");
    let (_, v) = doctor(&r, home.path());
    assert!(skips(&v, "gemini:").is_empty(), "{v:#}");
    // `--trust` is for the clients that keep trust records (Gemini, Codex), not Claude Code.
    let o = install(&["claude", "--trust"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // Claude Code with every hook switched off.
    let o = install(&["claude", "--bin", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    r.write(
        ".claude/settings.local.json",
        "{\"disableAllHooks\": true}\n",
    );
    let (_, v) = doctor(&r, home.path());
    let w = skips(&v, "claude:");
    assert_eq!(w.len(), 1, "{v:#}");
    assert!(
        w[0].contains("disableAllHooks") && w[0].contains("settings.local.json"),
        "{w:?}"
    );
}

/// Gemini's own switch trusts the folder as well.
#[test]
fn gemini_trusted_by_its_environment_switch_is_not_warned_about() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    let o = r.forge(&[
        "hooks",
        "install",
        "gemini",
        "--bin",
        forge_bin().to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    let o = r
        .forge_cmd(&["doctor", "--json"])
        .env("HOME", home.path())
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !findings(&v, "hooks")
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains("not trusted")),
        "{v:#}"
    );
}

/// An install made before the subagent events were wired (PreToolUse, PostToolUse, Stop,
/// SessionStart only) still guards every call: a warning with the reinstall command, not a
/// failure. Without PreToolUse it fails.
#[test]
fn an_older_install_without_the_subagent_events_is_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    let o = r.forge(&[
        "hooks",
        "install",
        "claude",
        "--bin",
        forge_bin().to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    let path = r.path().join(".claude/settings.json");
    let mut settings: Value = serde_json::from_str(&r.read(".claude/settings.json")).unwrap();
    let hooks = settings["hooks"].as_object_mut().unwrap();
    hooks.remove("SubagentStart");
    hooks.remove("SubagentStop");
    std::fs::write(&path, settings.to_string()).unwrap();
    let (code, v) = doctor(&r, home.path());
    let f = findings(&v, "hooks");
    let missing = f
        .iter()
        .find(|f| f["message"].as_str().unwrap().contains("SubagentStart"))
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(missing["status"], "warn", "{v:#}");
    assert_eq!(code, 0, "{v:#}");
    settings["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PreToolUse");
    std::fs::write(&path, settings.to_string()).unwrap();
    let (code, v) = doctor(&r, home.path());
    assert_eq!(code, 1, "{v:#}");
}

/// Codex CLI loads a project's hooks only in a trusted project and runs each only once the
/// person trusted it, skipping the rest without a word: `forge doctor` names each reason from
/// Codex's own records (`$CODEX_HOME/config.toml`, default `~/.codex/`) with its fix, and the
/// records Codex writes when the person trusts them (the shape captured from 0.169.0 and
/// 0.171.0) end the warnings; `[features] hooks = false` is named too. `--trust` needs Codex
/// itself: with no `codex` on PATH it says so and fails, the hooks still wired.
#[test]
fn codex_that_would_skip_forges_hooks_is_named() {
    let home = tempfile::tempdir().unwrap();
    let r = Repo::with_command("sh tests/run.sh", "tap");
    let bin = forge_bin();
    // This machine's `codex`, if any, plays no part: the records alone are read.
    let path = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|d| !d.join("codex").exists()),
    )
    .unwrap();
    let run = |args: &[&str]| {
        r.forge_cmd(args)
            .env("HOME", home.path())
            .env_remove("CODEX_HOME")
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let codex_warnings = || -> Vec<String> {
        let o = run(&["doctor", "--json"]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        findings(&v, "hooks")
            .iter()
            .filter(|f| {
                f["status"] == "warn" && f["message"].as_str().unwrap().starts_with("codex:")
            })
            .map(|f| format!("{} / {}", f["message"], f["fix"]))
            .collect()
    };
    let o = run(&["hooks", "install", "codex", "--bin", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("not trusted") && said.contains("forge hooks install codex --trust"),
        "{said}"
    );
    let w = codex_warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("this project is not trusted")
            && w[0].contains(".codex/config.toml")
            && w[0].contains("forge hooks install codex --trust")
            && w[0].contains("codex exec --trust")
            && w[0].contains("trust_level = \\\"trusted\\\""),
        "{w:?}"
    );
    assert!(
        w[1].contains("PreToolUse, PostToolUse, Stop, SessionStart hooks are not trusted")
            && w[1].contains("/hooks"),
        "{w:?}"
    );
    // `--trust` asks Codex, which is not there.
    let o = run(&[
        "hooks",
        "install",
        "codex",
        "--bin",
        bin.to_str().unwrap(),
        "--trust",
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`codex` is not on PATH") && err.contains("/hooks"),
        "{err}"
    );
    assert!(r.exists(".codex/hooks.json"));
    // The records Codex writes once the person trusted the project and the hooks.
    let root = r.path().canonicalize().unwrap();
    let mut config = format!(
        "# mine\n[features]\nfoo = true\n\n[projects]\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n\n[hooks.state]\n",
        root.display()
    );
    for event in ["pre_tool_use", "post_tool_use", "stop", "session_start"] {
        config += &format!(
            "\n[hooks.state.\"{}/.codex/hooks.json:{event}:0:0\"]\ntrusted_hash = \"sha256:0123\"\n",
            root.display()
        );
    }
    let file = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &config).unwrap();
    assert_eq!(codex_warnings(), Vec::<String>::new());
    let o = run(&["doctor"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("the project and Forge's 4 hooks") && text.contains("`codex` is not on PATH"),
        "{text}"
    );
    // Hooks switched off in Codex's features.
    std::fs::write(&file, config.replace("foo = true", "hooks = false")).unwrap();
    let w = codex_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("`hooks = false`")
            && w[0].contains("no hook at all")
            && w[0].contains("remove that line"),
        "{w:?}"
    );
}
