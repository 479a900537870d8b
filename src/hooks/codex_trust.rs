//! Whether Codex CLI would run Forge's hooks, and recording the person's trust in them the way
//! Codex does. Codex loads a project's `.codex/` hooks only when the project is trusted
//! (`[projects."<root>"] trust_level = "trusted"` in `$CODEX_HOME/config.toml`), runs a
//! non-managed hook only while its definition has the hash the person trusted
//! (`[hooks.state."<file>:<event>:<group>:<index>"] trusted_hash = "sha256:…"`, same file), and
//! none at all with `[features] hooks = false` (or its alias `codex_hooks`). What it skips it
//! skips without a word, so a guard that is wired may not be there.
//!
//! Forge reads those records but never computes Codex's hash: whether a trusted hook changed
//! since, and the trust itself, come from Codex (`codex app-server`: `hooks/list` gives each
//! hook's `currentHash` and `trustStatus`, `config/batchWrite` records it, as Codex's own
//! `/hooks` review does). Observed with the agent rig on Codex 0.169.0 and 0.171.0: the same
//! keys, hashes and file shape on both (fixtures in `tests/fixtures/codex/`).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Agent;
use super::install::{Handler, is_forge_command};
use super::toml_read;

/// Codex's user config, where it records project and hook trust.
pub fn config_file(codex_home: &Path) -> PathBuf {
    codex_home.join("config.toml")
}

/// The name Codex records a hook's trust under: its file, its event in snake case, the
/// positions of its group and of the command in the group.
pub fn hook_key(hooks_file: &Path, h: &Handler) -> String {
    let mut event = String::new();
    for (i, c) in h.event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            event.push('_');
        }
        event.push(c.to_ascii_lowercase());
    }
    format!("{}:{event}:{}:{}", hooks_file.display(), h.group, h.index)
}

/// One reason Codex would not run (some of) Forge's hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// `[features] hooks = false` (or `codex_hooks`) in `file`: no hook runs at all.
    HooksOff { file: PathBuf, key: String },
    /// The project is not trusted (`marked`: it says `trust_level = "untrusted"`), so none of
    /// its `.codex/` hooks is loaded.
    ProjectNotTrusted { file: PathBuf, marked: bool },
    /// These hooks have no trust recorded in `file`.
    Untrusted { events: Vec<String>, file: PathBuf },
    /// These hooks changed since the person trusted them (Codex says `modified`).
    Modified { events: Vec<String> },
    /// The person switched this hook off in Codex (`enabled = false` under its key in `file`).
    Disabled {
        event: String,
        key: String,
        file: PathBuf,
    },
    /// `file` cannot be read, so Forge cannot tell what Codex would do.
    Unreadable { file: PathBuf, why: String },
}

impl Skip {
    /// What is wrong, and the fix, for `forge doctor` and `forge hooks install codex`.
    /// `global`: Forge's hooks are in the user's `hooks.json`, not the project's.
    pub fn explain(&self, root: &Path, global: bool) -> (String, String) {
        let trust = if global {
            "`forge hooks install codex --global --trust`"
        } else {
            "`forge hooks install codex --trust`"
        };
        match self {
            Skip::HooksOff { file, key } => (
                format!(
                    "{} sets `{key} = false` under [features], so Codex CLI runs no hook at all (Forge's included)",
                    file.display()
                ),
                format!(
                    "remove that line from {} (hooks are on by default); `codex --disable hooks` and `-c features.hooks=false` switch them off for one run too",
                    file.display()
                ),
            ),
            Skip::ProjectNotTrusted { file, marked } => (
                format!(
                    "this project is {} in {}, so Codex CLI loads none of its .codex/ hooks (and says nothing)",
                    if *marked {
                        "marked `trust_level = \"untrusted\"`"
                    } else {
                        "not trusted"
                    },
                    file.display()
                ),
                format!(
                    "{trust} (asks Codex to record the trust of the project and of Forge's hooks), or `codex exec --trust` once here and review the hooks with `/hooks` in Codex, or add `[projects.\"{}\"]` with `trust_level = \"trusted\"` to {}",
                    root.display(),
                    file.display()
                ),
            ),
            Skip::Untrusted { events, file } => (
                format!(
                    "Forge's {} hook{} not trusted in {}, so Codex CLI skips {} without a word",
                    events.join(", "),
                    if events.len() == 1 { " is" } else { "s are" },
                    file.display(),
                    if events.len() == 1 { "it" } else { "them" }
                ),
                format!(
                    "{trust}, or review them with `/hooks` in Codex; `codex exec --dangerously-bypass-hook-trust` runs them for that one run only"
                ),
            ),
            Skip::Modified { events } => (
                format!(
                    "Forge's {} hook{} changed since {} trusted (Codex says `modified`), so Codex CLI skips {}",
                    events.join(", "),
                    if events.len() == 1 { "" } else { "s" },
                    if events.len() == 1 {
                        "it was"
                    } else {
                        "they were"
                    },
                    if events.len() == 1 { "it" } else { "them" }
                ),
                format!(
                    "{trust} to trust them as they are now, or review them with `/hooks` in Codex"
                ),
            ),
            Skip::Disabled { event, key, file } => (
                format!(
                    "Forge's {event} hook is switched off in Codex (`enabled = false` under [hooks.state.\"{key}\"] in {})",
                    file.display()
                ),
                format!(
                    "remove that `enabled = false` line from {}, or turn the hook on in `/hooks` in Codex",
                    file.display()
                ),
            ),
            Skip::Unreadable { file, why } => (
                format!(
                    "{} cannot be read ({why}), so Forge cannot tell whether Codex CLI runs its hooks",
                    file.display()
                ),
                format!("fix {} (Codex will not read it either)", file.display()),
            ),
        }
    }
}

/// What Codex's own records say about Forge's `handlers` in `hooks_file`: the reasons it would
/// skip them, read from the files only (whether a trusted hook changed since needs Codex:
/// [`AppServer::hooks_list`]). `project`: the project root when `hooks_file` is the
/// project's, whose trust then matters too.
pub fn skips(
    codex_home: &Path,
    project: Option<&Path>,
    hooks_file: &Path,
    handlers: &[Handler],
) -> Vec<Skip> {
    let file = config_file(codex_home);
    let user = match read(&file) {
        Ok(d) => d,
        Err(why) => return vec![Skip::Unreadable { file, why }],
    };
    let mut out = Vec::new();
    let mut off = |doc: &toml_read::Doc, f: &Path| {
        // `hooks` is the canonical key; the deprecated `codex_hooks` counts when it is absent.
        for key in ["hooks", "codex_hooks"] {
            match doc.bool(&["features", key]) {
                Some(false) => {
                    out.push(Skip::HooksOff {
                        file: f.to_path_buf(),
                        key: key.into(),
                    });
                    return;
                }
                Some(true) => return,
                None => {}
            }
        }
    };
    off(&user, &file);
    if let Some(root) = project {
        let root_s = root.to_string_lossy();
        match user.str(&["projects", &root_s, "trust_level"]) {
            Some("trusted") => {
                // A trusted project's own config layer is read too, switches included.
                let pf = root.join(".codex/config.toml");
                match read(&pf) {
                    Ok(doc) => off(&doc, &pf),
                    Err(why) => out.push(Skip::Unreadable { file: pf, why }),
                }
            }
            other => out.push(Skip::ProjectNotTrusted {
                file: file.clone(),
                marked: other == Some("untrusted"),
            }),
        }
    }
    let mut untrusted = Vec::new();
    for h in handlers {
        let key = hook_key(hooks_file, h);
        let state = ["hooks", "state", key.as_str()];
        if user.bool(&[state.as_slice(), &["enabled"]].concat()) == Some(false) {
            out.push(Skip::Disabled {
                event: h.event.clone(),
                key: key.clone(),
                file: file.clone(),
            });
        }
        if user
            .str(&[state.as_slice(), &["trusted_hash"]].concat())
            .is_none()
            && !untrusted.contains(&h.event)
        {
            untrusted.push(h.event.clone());
        }
    }
    if !untrusted.is_empty() {
        out.push(Skip::Untrusted {
            events: untrusted,
            file,
        });
    }
    out
}

/// For Codex's SessionStart: the project's Forge hooks that Codex's records say it skips while
/// this one runs (a hook not trusted or switched off), as a sentence for the session, or
/// `None`. Said only when the records trust SessionStart itself (else this run bypasses hook
/// trust, and the records say nothing about it). Whether a hook changed since it was trusted
/// is not checked here (only Codex can tell; `forge doctor` asks it).
pub fn session_warning(codex_home: &Path, root: &Path) -> Option<String> {
    let file = root.join(".codex/hooks.json");
    let handlers = super::install::forge_handlers(&file, Agent::Codex).ok()?;
    let doc = read(&config_file(codex_home)).ok()?;
    let trusted = |h: &Handler| {
        let key = hook_key(&file, h);
        doc.str(&["hooks", "state", &key, "trusted_hash"]).is_some()
            && doc.bool(&["hooks", "state", &key, "enabled"]) != Some(false)
    };
    if !handlers
        .iter()
        .any(|h| h.event == "SessionStart" && trusted(h))
    {
        return None;
    }
    let mut skipped: Vec<&str> = Vec::new();
    for h in handlers.iter().filter(|h| !trusted(h)) {
        if !skipped.contains(&h.event.as_str()) {
            skipped.push(&h.event);
        }
    }
    (!skipped.is_empty()).then(|| {
        format!(
            "Warning for the person: Codex's records ({}) do not trust Forge's {} hook{} (or switched {} off), so Codex skips {} without a word: {}. Fix: `forge hooks install codex --trust`, or `/hooks` in Codex.",
            config_file(codex_home).display(),
            skipped.join(", "),
            if skipped.len() == 1 { "" } else { "s" },
            if skipped.len() == 1 { "it" } else { "them" },
            if skipped.len() == 1 { "it" } else { "them" },
            if skipped.contains(&"PreToolUse") {
                "the guard and the sandbox are not in force in this session"
            } else {
                "that control is not in force in this session"
            }
        )
    })
}

/// A missing file is an empty one (Codex's defaults).
fn read(file: &Path) -> Result<toml_read::Doc, String> {
    match std::fs::read_to_string(file) {
        Ok(t) => toml_read::parse(&t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(e) => Err(e.to_string()),
    }
}

/// How long Forge waits for one answer of `codex app-server` (it answers in about a second).
const APP_SERVER_WAIT: Duration = Duration::from_secs(20);

/// A hook as Codex lists it (`hooks/list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    pub event: String,
    pub command: String,
    pub source_path: PathBuf,
    pub current_hash: String,
    /// `trusted`, `untrusted`, `modified` or `managed`.
    pub trust_status: String,
    pub enabled: bool,
}

impl Listed {
    fn trusted(&self) -> bool {
        matches!(self.trust_status.as_str(), "trusted" | "managed")
    }
}

/// Reads a `hooks/list` result (one entry per folder asked about).
pub fn parse_hooks_list(result: &Value) -> Result<Vec<Listed>, String> {
    let mut out = Vec::new();
    let data = result["data"]
        .as_array()
        .ok_or("its answer to hooks/list has no `data` list")?;
    for folder in data {
        for h in folder["hooks"].as_array().into_iter().flatten() {
            let s = |k: &str| h[k].as_str().unwrap_or_default().to_string();
            out.push(Listed {
                key: s("key"),
                event: s("eventName"),
                command: s("command"),
                source_path: PathBuf::from(s("sourcePath")),
                current_hash: s("currentHash"),
                trust_status: s("trustStatus"),
                enabled: h["enabled"].as_bool().unwrap_or(true),
            });
        }
    }
    Ok(out)
}

/// Codex's `app-server` (JSON-RPC over stdio), started for a few requests and ended with it.
pub struct AppServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next: u64,
}

impl AppServer {
    /// Starts `codex app-server` in `cwd` and says hello.
    pub fn start(codex: &Path, cwd: &Path) -> Result<AppServer, String> {
        let mut child = Command::new(codex)
            .arg("app-server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{} app-server`: {e}", codex.display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut s = AppServer {
            child,
            stdin,
            lines,
            next: 0,
        };
        s.call(
            "initialize",
            json!({"clientInfo": {"name": "forge", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        s.send(&json!({"method": "initialized"}))?;
        Ok(s)
    }

    fn send(&mut self, msg: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("its input is closed")?;
        writeln!(stdin, "{msg}")
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("cannot write to `codex app-server`: {e}"))
    }

    /// One request; its `result`, or why there is none.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + APP_SERVER_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "`codex app-server` did not answer {method} within {}s",
                        APP_SERVER_WAIT.as_secs()
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "`codex app-server` ended before answering {method}"
                    ));
                }
            };
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v.get("id") != Some(&json!(id)) {
                continue; // a notification
            }
            if let Some(e) = v.get("error") {
                return Err(format!(
                    "`codex app-server` refused {method}: {}",
                    e["message"].as_str().unwrap_or(&e.to_string())
                ));
            }
            return Ok(v.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    /// Every hook Codex would consider in `cwd`, with its trust.
    pub fn hooks_list(&mut self, cwd: &Path) -> Result<Vec<Listed>, String> {
        let r = self.call("hooks/list", json!({"cwds": [cwd]}))?;
        parse_hooks_list(&r)
    }

    fn write(&mut self, key_path: &str, value: Value) -> Result<(), String> {
        self.call(
            "config/batchWrite",
            json!({"edits": [{"keyPath": key_path, "mergeStrategy": "upsert", "value": value}]}),
        )
        .map(|_| ())
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Forge's hooks from `hooks_file` among those Codex lists.
pub fn forge_listed<'l>(listed: &'l [Listed], hooks_file: &Path) -> Vec<&'l Listed> {
    listed
        .iter()
        .filter(|l| l.source_path == hooks_file && is_forge_command(&l.command, Agent::Codex))
        .collect()
}

/// The events (named as the file names them, not as Codex does: `preToolUse`) of Forge's
/// `handlers` in `hooks_file` that Codex lists with trust status `status`.
pub fn events_listed_as(
    listed: &[Listed],
    hooks_file: &Path,
    handlers: &[Handler],
    status: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for l in forge_listed(listed, hooks_file) {
        if l.trust_status != status {
            continue;
        }
        let e = handlers
            .iter()
            .find(|h| hook_key(hooks_file, h) == l.key)
            .map_or_else(|| l.event.clone(), |h| h.event.clone());
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

/// What [`trust`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Trusted {
    /// The project's trust was recorded (it had none, or said `untrusted`).
    pub project: bool,
    /// The events whose hooks' trust was recorded (they were untrusted or changed).
    pub hooks: Vec<String>,
}

/// Asks Codex (`codex`, its app-server) to record that the person trusts the project (when
/// `project` is given) and Forge's hooks in `hooks_file` as they are now, then checks that
/// Codex lists every one of them as trusted. Only Forge's hooks: the person's own stay as
/// they were.
pub fn trust(
    codex: &Path,
    codex_home: &Path,
    cwd: &Path,
    project: Option<&Path>,
    hooks_file: &Path,
    handlers: &[Handler],
) -> Result<Trusted, String> {
    let mut server = AppServer::start(codex, cwd)?;
    let mut done = Trusted::default();
    if let Some(root) = project {
        let trusted = read(&config_file(codex_home)).ok().is_some_and(|d| {
            d.str(&["projects", &root.to_string_lossy(), "trust_level"]) == Some("trusted")
        });
        if !trusted {
            server.write(
                "projects",
                json!({root.to_string_lossy(): {"trust_level": "trusted"}}),
            )?;
            done.project = true;
        }
    }
    let listed = server.hooks_list(cwd)?;
    let mut state = serde_json::Map::new();
    for l in forge_listed(&listed, hooks_file) {
        if matches!(l.trust_status.as_str(), "untrusted" | "modified") {
            state.insert(l.key.clone(), json!({"trusted_hash": l.current_hash}));
        }
    }
    for status in ["untrusted", "modified"] {
        for e in events_listed_as(&listed, hooks_file, handlers, status) {
            if !done.hooks.contains(&e) {
                done.hooks.push(e);
            }
        }
    }
    if !state.is_empty() {
        server.write("hooks.state", Value::Object(state))?;
    }
    let listed = server.hooks_list(cwd)?;
    let ours = forge_listed(&listed, hooks_file);
    if ours.len() < handlers.len() {
        return Err(format!(
            "Codex lists {} of Forge's {} hooks in {} (is the project trusted, and are hooks on?)",
            ours.len(),
            handlers.len(),
            hooks_file.display()
        ));
    }
    if let Some(l) = ours.iter().find(|l| !l.trusted()) {
        return Err(format!(
            "Codex still lists Forge's {} hook as {}",
            events_listed_as(&listed, hooks_file, handlers, &l.trust_status).join(", "),
            l.trust_status
        ));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/codex");
    const ROOT: &str = "/tmp/trustlab/proj";

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap()
    }

    /// The four hooks `forge hooks install codex` writes, as in the fixtures' project.
    fn handlers() -> Vec<Handler> {
        ["PreToolUse", "PostToolUse", "Stop", "SessionStart"]
            .into_iter()
            .map(|e| Handler {
                event: e.into(),
                group: 0,
                index: 0,
                command: format!("forge hook codex {e}"),
            })
            .collect()
    }

    fn hooks_file() -> PathBuf {
        Path::new(ROOT).join(".codex/hooks.json")
    }

    fn home_with(config: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(config_file(home.path()), config).unwrap();
        home
    }

    #[test]
    fn keys_are_the_ones_codex_records() {
        let h = Handler {
            event: "SessionStart".into(),
            group: 2,
            index: 1,
            command: String::new(),
        };
        assert_eq!(
            hook_key(&hooks_file(), &h),
            "/tmp/trustlab/proj/.codex/hooks.json:session_start:2:1"
        );
        // Every key of Codex's own hooks/list (0.169.0 and 0.171.0) is one Forge computes.
        for v in ["0.169.0", "0.171.0"] {
            let list: Value =
                serde_json::from_str(&fixture(&format!("hooks-list-untrusted-{v}.json"))).unwrap();
            let listed = parse_hooks_list(&list["result"]).unwrap();
            assert_eq!(listed.len(), 4, "{v}");
            let ours: Vec<String> = handlers()
                .iter()
                .map(|h| hook_key(&hooks_file(), h))
                .collect();
            for l in &listed {
                assert!(ours.contains(&l.key), "{v}: {}", l.key);
                assert_eq!(l.trust_status, "untrusted");
                assert!(l.current_hash.starts_with("sha256:"));
            }
            assert_eq!(forge_listed(&listed, &hooks_file()).len(), 4, "{v}");
            assert!(forge_listed(&listed, Path::new("/elsewhere/hooks.json")).is_empty());
        }
    }

    #[test]
    fn what_codex_writes_when_trusting_is_read_as_trusted() {
        for v in ["0.169.0", "0.171.0"] {
            // `config/batchWrite` of the project and of Forge's hooks, as `--trust` does.
            let home = home_with(&fixture(&format!("config-trusted-{v}.toml")));
            assert_eq!(
                skips(
                    home.path(),
                    Some(Path::new(ROOT)),
                    &hooks_file(),
                    &handlers()
                ),
                [],
                "{v}"
            );
            // `codex exec --trust`: the project only; each hook still needs its trust.
            let home = home_with(&fixture(&format!("config-exec-trust-{v}.toml")));
            let s = skips(
                home.path(),
                Some(Path::new(ROOT)),
                &hooks_file(),
                &handlers(),
            );
            assert_eq!(s.len(), 1, "{v}: {s:?}");
            let Skip::Untrusted { events, .. } = &s[0] else {
                panic!("{v}: {s:?}");
            };
            assert_eq!(events.len(), 4);
        }
    }

    #[test]
    fn each_reason_to_skip_is_found() {
        let trusted = fixture("config-trusted-0.171.0.toml");
        let p = Some(Path::new(ROOT));
        let s = |config: &str| {
            let home = home_with(config);
            skips(home.path(), p, &hooks_file(), &handlers())
        };
        // No config at all: an untrusted project and untrusted hooks.
        let home = tempfile::tempdir().unwrap();
        let none = skips(home.path(), p, &hooks_file(), &handlers());
        assert!(
            matches!(
                &none[..],
                [
                    Skip::ProjectNotTrusted { marked: false, .. },
                    Skip::Untrusted { .. }
                ]
            ),
            "{none:?}"
        );
        // The user scope (`--global`) needs no project trust.
        let none = skips(home.path(), None, &hooks_file(), &handlers());
        assert!(matches!(&none[..], [Skip::Untrusted { .. }]), "{none:?}");
        // Marked untrusted; a parent folder's trust does not count (0.169.0 and 0.171.0 list
        // no project hook then).
        let marked = trusted.replace("trust_level = \"trusted\"", "trust_level = \"untrusted\"");
        assert!(matches!(
            &s(&marked)[..],
            [Skip::ProjectNotTrusted { marked: true, .. }]
        ));
        let parent = trusted.replace(
            "[projects.\"/tmp/trustlab/proj\"]",
            "[projects.\"/tmp/trustlab\"]",
        );
        assert!(matches!(
            &s(&parent)[..],
            [Skip::ProjectNotTrusted { marked: false, .. }]
        ));
        // Hooks off, by the canonical key or its alias; `hooks = true` wins over the alias.
        for (line, off) in [
            ("hooks = false", Some("hooks")),
            ("codex_hooks = false", Some("codex_hooks")),
            ("hooks = true\ncodex_hooks = false", None),
        ] {
            let c = trusted.replace("[features]\nfoo = true", &format!("[features]\n{line}"));
            let got = s(&c);
            match off {
                Some(k) => assert!(
                    matches!(&got[..], [Skip::HooksOff { key, .. }] if key == k),
                    "{line}: {got:?}"
                ),
                None => assert_eq!(got, [], "{line}"),
            }
        }
        // One hook switched off in `/hooks`; one never trusted.
        let key = "/tmp/trustlab/proj/.codex/hooks.json:pre_tool_use:0:0";
        let c = trusted.replace(
            &format!("[hooks.state.\"{key}\"]\n"),
            &format!("[hooks.state.\"{key}\"]\nenabled = false\n"),
        );
        assert!(
            matches!(&s(&c)[..], [Skip::Disabled { event, .. }] if event == "PreToolUse"),
            "{:?}",
            s(&c)
        );
        let stop = "/tmp/trustlab/proj/.codex/hooks.json:stop:0:0";
        let c: String = trusted
            .lines()
            .filter(|l| !l.contains(stop) && !l.contains("sha256:d5efa7"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            matches!(&s(&c)[..], [Skip::Untrusted { events, .. }] if events == &["Stop"]),
            "{:?}",
            s(&c)
        );
        // A trusted project's own config layer can switch hooks off as well.
        let home = home_with(&trusted);
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".codex")).unwrap();
        std::fs::write(
            root.path().join(".codex/config.toml"),
            "[features]\nhooks = false\n",
        )
        .unwrap();
        let c = trusted.replace(ROOT, &root.path().to_string_lossy());
        std::fs::write(config_file(home.path()), c).unwrap();
        let hf = root.path().join(".codex/hooks.json");
        let got = skips(home.path(), Some(root.path()), &hf, &handlers());
        assert!(
            matches!(&got[..], [Skip::HooksOff { file, .. }] if file.ends_with(".codex/config.toml")),
            "{got:?}"
        );
        // A config Forge cannot read is said, not guessed.
        assert!(matches!(&s("[projects\n")[..], [Skip::Unreadable { .. }]));
    }

    #[test]
    fn session_start_names_the_hooks_codex_skips_beside_it() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join(".codex")).unwrap();
        let hooks = fixture("config-trusted-0.171.0.toml");
        // Forge's own install, in the project.
        super::super::install::install(&root.join(".codex/hooks.json"), Agent::Codex, "forge")
            .unwrap();
        let config = hooks.replace(ROOT, &root.to_string_lossy());
        let home = home_with(&config);
        assert_eq!(session_warning(home.path(), root), None);
        // PreToolUse never trusted: the guard is off, and the session is told.
        let pre = format!("{}/.codex/hooks.json:pre_tool_use:0:0", root.display());
        let c: String = config
            .lines()
            .filter(|l| !l.contains(&pre) && !l.contains("sha256:53c5ed"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(config_file(home.path()), &c).unwrap();
        let w = session_warning(home.path(), root).unwrap();
        assert!(
            w.contains("Forge's PreToolUse hook") && w.contains("guard"),
            "{w}"
        );
        // Nothing trusted while SessionStart runs: hook trust is bypassed; nothing to say.
        std::fs::write(config_file(home.path()), "").unwrap();
        assert_eq!(session_warning(home.path(), root), None);
    }

    #[test]
    fn every_reason_says_its_fix() {
        let root = Path::new(ROOT);
        let f = PathBuf::from("/h/.codex/config.toml");
        for (skip, fix) in [
            (
                Skip::ProjectNotTrusted {
                    file: f.clone(),
                    marked: false,
                },
                "forge hooks install codex --trust",
            ),
            (
                Skip::Untrusted {
                    events: vec!["Stop".into()],
                    file: f.clone(),
                },
                "forge hooks install codex --trust",
            ),
            (
                Skip::Modified {
                    events: vec!["Stop".into()],
                },
                "forge hooks install codex --trust",
            ),
            (
                Skip::HooksOff {
                    file: f.clone(),
                    key: "hooks".into(),
                },
                "remove that line from /h/.codex/config.toml",
            ),
            (
                Skip::Disabled {
                    event: "Stop".into(),
                    key: "k".into(),
                    file: f.clone(),
                },
                "`enabled = false`",
            ),
        ] {
            let (_, got) = skip.explain(root, false);
            assert!(got.contains(fix), "{skip:?}: {got}");
        }
        let (what, fix) = Skip::ProjectNotTrusted {
            file: f,
            marked: false,
        }
        .explain(root, false);
        assert!(what.contains("not trusted"), "{what}");
        assert!(
            fix.contains("[projects.\"/tmp/trustlab/proj\"]") && fix.contains("codex exec --trust"),
            "{fix}"
        );
        let (_, fix) = Skip::Modified { events: vec![] }.explain(root, true);
        assert!(fix.contains("--global --trust"), "{fix}");
    }
}
