//! Where the agent rig is and whether the real-client tests can run here: shared by
//! `tests/real_agents.rs` and the notice `cargo test` prints (`tests/real_agents_notice.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Set to `1` (as `.ci/run` does) to make a missing rig a failure instead of a skip.
pub const REQUIRE_ENV: &str = "FORGE_REQUIRE_REAL_AGENTS";

/// Set to the rig's folder (the one holding `claude-offline.sh`) to use a rig kept anywhere;
/// then no other place is looked at.
pub const RIG_ENV: &str = "FORGE_AGENT_RIG";

/// Where the rig's `claude-offline.sh` is looked for: `$FORGE_AGENT_RIG` when it is set; else
/// `../shared/tools/agent-rig/` beside the checkout, then `/work/shared/tools/agent-rig/` (where
/// the project's own machines keep it, for a checkout that is not beside it).
pub fn rig_candidates() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os(RIG_ENV).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(dir).join("claude-offline.sh")];
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        manifest.join("../shared/tools/agent-rig/claude-offline.sh"),
        PathBuf::from("/work/shared/tools/agent-rig/claude-offline.sh"),
    ]
}

pub fn find_rig() -> Result<PathBuf, String> {
    let candidates = rig_candidates();
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

pub fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The pinned client version the rig installs.
pub fn claude_version() -> String {
    std::env::var("CLAUDE_CODE_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| CLAUDE.pinned.to_string())
}

/// The Claude Code versions the guard, sandbox-rewrite, Stop and subagent tests of
/// `tests/real_agents.rs` run on: a comma list (`2.1.197,latest`), where `latest` is the newest
/// published release, asked of npm when the tests start. Unset: the rig's pinned version only,
/// so CI time stays bounded (docs/design.md, "Proven with the real clients").
pub const VERSIONS_ENV: &str = "FORGE_CLAUDE_VERSIONS";

/// A real client the tests run per version: its npm package, the version pinned for CI, and the
/// variable that lists the versions to run instead (as [`VERSIONS_ENV`] does for Claude Code).
pub struct Client {
    pub name: &'static str,
    pub package: &'static str,
    pub pinned: &'static str,
    pub versions_env: &'static str,
}

/// Claude Code: [`VERSIONS_ENV`]; its pinned version is the rig's (`CLAUDE_CODE_VERSION`
/// changes it, see [`claude_version`]).
pub const CLAUDE: Client = Client {
    name: "Claude Code",
    package: "@anthropic-ai/claude-code",
    pinned: "2.1.197",
    versions_env: VERSIONS_ENV,
};

/// Codex CLI: `FORGE_CODEX_VERSIONS=0.169.0,latest`.
pub const CODEX: Client = Client {
    name: "Codex CLI",
    package: "@openai/codex",
    pinned: "0.169.0",
    versions_env: "FORGE_CODEX_VERSIONS",
};

/// Gemini CLI: `FORGE_GEMINI_VERSIONS=0.61.0,latest` (the rig's `gemini-offline.sh` pins 0.61.0
/// too, and takes another through `GEMINI_CLI_VERSION`).
pub const GEMINI: Client = Client {
    name: "Gemini CLI",
    package: "@google/gemini-cli",
    pinned: "0.61.0",
    versions_env: "FORGE_GEMINI_VERSIONS",
};

/// The versions [`VERSIONS_ENV`] names, `latest` resolved; `Err` when npm cannot say which is
/// the newest (offline).
pub fn claude_versions() -> Result<Vec<String>, String> {
    versions_in(
        &std::env::var(VERSIONS_ENV).unwrap_or_default(),
        &claude_version(),
        || newest(&CLAUDE),
    )
}

/// The versions of `client` its variable names, `latest` resolved; unset, the pinned one.
pub fn versions(client: &Client) -> Result<Vec<String>, String> {
    versions_in(
        &std::env::var(client.versions_env).unwrap_or_default(),
        client.pinned,
        || newest(client),
    )
}

/// A comma list of versions, `latest` asked of `newest` (once), duplicates dropped; empty:
/// `pinned` alone.
pub fn versions_in(
    list: &str,
    pinned: &str,
    newest: impl FnOnce() -> Result<String, String>,
) -> Result<Vec<String>, String> {
    let mut newest = Some(newest);
    let mut out: Vec<String> = Vec::new();
    for v in list.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let v = if v == "latest" {
            match newest.take() {
                Some(f) => f()?,
                None => continue,
            }
        } else {
            v.to_string()
        };
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        out.push(pinned.to_string());
    }
    Ok(out)
}

/// The newest published release of `client`, as `npm view` says (asked once per package).
pub fn newest(client: &Client) -> Result<String, String> {
    static NEWEST: Mutex<Vec<(&'static str, Result<String, String>)>> = Mutex::new(Vec::new());
    let mut known = NEWEST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = known.iter().find(|(p, _)| *p == client.package) {
        return r.clone();
    }
    let r = (|| {
        let o = Command::new("npm")
            .args(["view", client.package, "version"])
            .output()
            .map_err(|e| format!("cannot run npm to find the newest {}: {e}", client.name))?;
        let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if !o.status.success() || v.is_empty() {
            return Err(format!(
                "npm could not say which {} is the newest: {}",
                client.name,
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(v)
    })();
    known.push((client.package, r.clone()));
    r
}

/// Whether Claude Code `version` runs Agent-tool subagents in the background by default (from
/// 2.1.220 on, as the rig's README records).
pub fn backgrounds_subagents(version: &str) -> bool {
    let n: Vec<u64> = version.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    n >= vec![2, 1, 220]
}

/// The client the rig installs: `$FORGE_RIG_CACHE/claude-$CLAUDE_CODE_VERSION/…`, as in
/// `claude-offline.sh`.
pub fn rig_claude_bin(version: Option<&str>) -> PathBuf {
    let version = version.map_or_else(claude_version, str::to_string);
    rig_cache().join(format!("claude-{version}/node_modules/.bin/claude"))
}

/// Where the rig keeps the clients it installs: `$FORGE_RIG_CACHE`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/forge-agent-rig`, as its launchers say.
pub fn rig_cache() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("FORGE_RIG_CACHE").unwrap_or_else(|| {
        var("XDG_CACHE_HOME")
            .unwrap_or_else(|| var("HOME").unwrap_or_default().join(".cache"))
            .join("forge-agent-rig")
    })
}

/// Installs the rig's client with one trivial rig run when it is not there yet: `Err` with the
/// rig's own words when that fails.
pub fn install_claude(rig: &Path, version: Option<&str>) -> Result<PathBuf, String> {
    let bin = rig_claude_bin(version);
    if bin.exists() {
        return Ok(bin);
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [{"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}]}"#,
    )
    .map_err(|e| e.to_string())?;
    std::fs::create_dir(dir.path().join("proj")).map_err(|e| e.to_string())?;
    let mut rig_run = Command::new(rig);
    rig_run
        .arg(dir.path().join("proj"))
        .arg(&script)
        .arg(dir.path().join("out"));
    if let Some(v) = version {
        rig_run.env("CLAUDE_CODE_VERSION", v);
    }
    let o = rig_run
        .output()
        .map_err(|e| format!("cannot run {}: {e}", rig.display()))?;
    if o.status.code() == Some(3) || !bin.exists() {
        return Err(format!(
            "the rig could not install the Claude Code client ({}): {}",
            bin.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(bin)
}

/// The rig and its client when the real-client tests can run here, else why not.
pub fn availability() -> Result<(PathBuf, PathBuf), String> {
    let rig = find_rig()?;
    for tool in ["python3", "node", "npm"] {
        if !have(tool) {
            return Err(format!("`{tool}` is not available"));
        }
    }
    let claude = install_claude(&rig, None)?;
    Ok((rig, claude))
}

/// The versions `var` lists as written (`latest` unresolved, so the notice asks no registry), else
/// `pinned`.
fn listed(var: &str, pinned: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
        _ => pinned.to_string(),
    }
}

/// The one line `cargo test` shows about the real-client tests (see
/// `tests/real_agents_notice.rs`).
pub fn notice(availability: &Result<(PathBuf, PathBuf), String>, required: bool) -> String {
    match availability {
        Ok((rig, _)) => format!(
            "real-client tests (tests/real_agents.rs): run with Claude Code {}, Codex CLI {} and Gemini CLI {} through the agent rig at {}",
            listed(VERSIONS_ENV, &claude_version()),
            listed(CODEX.versions_env, CODEX.pinned),
            listed(GEMINI.versions_env, GEMINI.pinned),
            rig.parent().unwrap_or(rig).display()
        ),
        Err(why) => format!(
            "real-client tests (tests/real_agents.rs) {}: {why}. The agent rig is looked for at {}{}; set {REQUIRE_ENV}=1 to make a skip a failure.",
            if required { "FAIL" } else { "SKIPPED" },
            rig_candidates()
                .iter()
                .map(|p| p.parent().unwrap_or(p).display().to_string())
                .collect::<Vec<_>>()
                .join(", then "),
            if std::env::var_os(RIG_ENV).is_some_and(|v| !v.is_empty()) {
                format!(" ({RIG_ENV})")
            } else {
                format!(" (or set {RIG_ENV} to its folder)")
            },
        ),
    }
}
