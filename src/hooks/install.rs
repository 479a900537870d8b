//! `forge hooks install|uninstall|status`: Forge's entries merged into an agent's settings file,
//! idempotently, leaving the person's own hooks and settings as they were.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::json_text::{self, Kind, Member, Node};
use super::{Agent, Event};
use crate::error::{Error, Result};
use crate::state::write_atomic;

/// The settings file Forge edits for `agent`: the project's, or the user's with `global`.
pub fn settings_path(agent: Agent, root: &Path, global: bool, home: &Path) -> PathBuf {
    match (agent, global) {
        (Agent::Claude, false) => root.join(".claude/settings.json"),
        (Agent::Claude, true) => home.join(".claude/settings.json"),
        (Agent::Codex, false) => root.join(".codex/hooks.json"),
        (Agent::Codex, true) => codex_home(home).join("hooks.json"),
        (Agent::Gemini, false) => root.join(".gemini/settings.json"),
        (Agent::Gemini, true) => home.join(".gemini/settings.json"),
    }
}

/// Codex CLI's own folder (its user `config.toml`, `hooks.json` and trust records):
/// `$CODEX_HOME`, else `~/.codex`, as the client resolves it.
pub fn codex_home(home: &Path) -> PathBuf {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".codex"))
}

/// Seconds an agent waits for each hook. Stop runs the project's tests.
fn timeout_secs(event: Event) -> u64 {
    match event {
        Event::Stop => 1800,
        _ => 30,
    }
}

/// The name the hooks call Forge by unless the installer names a binary: looked up on the
/// client's `PATH`, so a committed settings file works on every teammate's machine. (A PATH
/// folder inside the project is no easier to plant a `forge` in than the `git` or `cargo` the
/// client and the checks run by name: the guard and the sandbox keep every one read-only to the
/// agent — `session_walls` in `hooks/mod.rs`.)
pub const DEFAULT_BIN: &str = "forge";

/// What a hook says on stderr when its binary is not there. Exit 2 with it blocks the call in
/// every client and hands the text to the model (Claude Code shows it at SessionStart too).
pub fn missing_message(bin: &str) -> String {
    let what = if bin == DEFAULT_BIN {
        "`forge` is not on PATH".to_string()
    } else {
        format!("{bin} is not there")
    };
    format!(
        "Forge guards this project, and {what}: the call is blocked until it is. Install Forge and put it on PATH (see its README), or ask the person who set the project up."
    )
}

/// The command an agent runs for `event`: a guard that fails closed (exit 2, with why on
/// stderr) when the binary is missing — a clean 127 is "proceed" to every client, which would
/// switch the guard off without a word — then the hook itself.
pub fn hook_command(bin: &str, agent: Agent, event: Event) -> String {
    let q = crate::text::shell_quote(bin);
    format!(
        "command -v {q} >/dev/null 2>&1 || {{ echo {} >&2; exit 2; }}; {q} hook {} {}",
        crate::text::shell_quote(&missing_message(bin)),
        agent.name(),
        event.kebab()
    )
}

/// Whether a hook command is one of Forge's for `agent` (whatever path the binary had, with or
/// without the guard [`hook_command`] puts in front).
pub fn is_forge_command(cmd: &str, agent: Agent) -> bool {
    let cmd = cmd.rsplit_once("}; ").map_or(cmd, |(_, call)| call);
    let words: Vec<&str> = cmd.split_whitespace().collect();
    words
        .windows(3)
        .any(|w| w[0] == "hook" && w[1] == agent.name() && Event::parse(w[2]).is_some())
        && words
            .iter()
            .take_while(|w| **w != "hook")
            .last()
            .is_some_and(|b| {
                b.trim_matches('\'')
                    .rsplit('/')
                    .next()
                    .is_some_and(|n| n.starts_with("forge"))
            })
}

fn read_text(path: &Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

/// The settings as a JSON object; an error (and the file left alone) when they are not one.
fn load(path: &Path) -> Result<Map<String, Value>> {
    parse_object(path, &read_text(path)?)
}

fn parse_object(path: &Path, text: &str) -> Result<Map<String, Value>> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Config {
            path: path.to_path_buf(),
            message: "is not a JSON object; fix it by hand, Forge will not overwrite it".into(),
        }),
        Err(e) => Err(Error::Config {
            path: path.to_path_buf(),
            message: format!(
                "is not valid JSON ({e}); fix it by hand, Forge will not overwrite it"
            ),
        }),
    }
}

/// The spans of settings text already checked by [`parse_object`].
fn spans(path: &Path, text: &str) -> Result<Node> {
    json_text::parse(text).map_err(|e| not_a(path, &format!("cannot be edited in place ({e})")))
}

fn not_a(path: &Path, what: &str) -> Error {
    Error::Config {
        path: path.to_path_buf(),
        message: format!("{what}; fix it by hand"),
    }
}

/// The value of a node (a small part of text already known to be valid JSON).
fn value_of(text: &str, n: &Node) -> Value {
    serde_json::from_str(&text[n.span.clone()]).unwrap_or(Value::Null)
}

#[derive(Debug, Clone, Default)]
pub struct Change {
    pub path: PathBuf,
    /// Native event names Forge's entries were added to / removed from.
    pub events: Vec<String>,
    /// Native event names whose Forge entries `install` rewrote to its command (an older
    /// install's absolute path, or one without the missing-binary guard).
    pub updated: Vec<String>,
    /// Whether the file was written.
    pub written: bool,
}

/// Forge's hooks object for every event, as a new `hooks` member or a new file holds it.
fn all_hooks(agent: Agent, bin: &str) -> Value {
    Value::Object(
        Event::installed(agent)
            .iter()
            .map(|e| (e.native(agent).to_string(), json!([entry(agent, *e, bin)])))
            .collect(),
    )
}

/// Adds Forge's hooks for every event; an existing Forge entry keeps its place and gets this
/// install's command (see `updated`). The file is edited as text (see [`json_text`]): every byte outside Forge's entries stays as it was.
pub fn install(path: &Path, agent: Agent, bin: &str) -> Result<Change> {
    let mut text = read_text(path)?;
    parse_object(path, &text)?;
    let all: Vec<String> = Event::installed(agent)
        .iter()
        .map(|e| e.native(agent).to_string())
        .collect();
    let mut added = Vec::new();
    let mut updated = Vec::new();
    if text.trim().is_empty() {
        // A new file, in the two-space layout the agents' own docs use.
        let style = json_text::Style {
            indent: Some("  ".into()),
            newline: "\n",
        };
        text = style.render(&json!({"hooks": all_hooks(agent, bin)}), "") + "\n";
        added = all;
    } else if spans(path, &text)?.get("hooks").is_none() {
        let root = spans(path, &text)?;
        text = json_text::insert_member(&text, &root, "hooks", &all_hooks(agent, bin));
        added = all;
    } else {
        for &event in Event::installed(agent) {
            let native = event.native(agent);
            let root = spans(path, &text)?;
            let hooks = &root.get("hooks").map(|m| m.value.clone());
            let Some(hooks) = hooks.as_ref().filter(|h| matches!(h.kind, Kind::Object(_))) else {
                return Err(not_a(path, "`hooks` is not an object"));
            };
            match hooks.get(native) {
                None => {
                    let list = json!([entry(agent, event, bin)]);
                    text = json_text::insert_member(&text, hooks, native, &list);
                }
                Some(list) => {
                    let Some(groups) = list.value.items() else {
                        return Err(not_a(path, &format!("`hooks.{native}` is not a list")));
                    };
                    // Forge's entries already there are brought up to this install's command
                    // in place (an older absolute path, no guard), and nothing else moves.
                    let want = hook_command(bin, agent, event);
                    let mut ours = 0;
                    let mut stale = Vec::new();
                    for g in groups {
                        let Some(hs) = g.get("hooks").and_then(|h| h.value.items()) else {
                            continue;
                        };
                        for i in forge_hooks(&text, g, agent) {
                            ours += 1;
                            if let Some(c) = hs[i].get("command")
                                && value_of(&text, &c.value).as_str() != Some(want.as_str())
                            {
                                stale.push(c.value.span.clone());
                            }
                        }
                    }
                    if ours > 0 {
                        if !stale.is_empty() {
                            let new = Value::String(want).to_string();
                            for span in stale.into_iter().rev() {
                                text = json_text::splice(&text, span, &new);
                            }
                            updated.push(native.to_string());
                        }
                        continue;
                    }
                    text = json_text::push_item(&text, &list.value, &entry(agent, event, bin));
                }
            }
            added.push(native.to_string());
        }
    }
    let written = !added.is_empty() || !updated.is_empty();
    if written {
        write_atomic(path, text.as_bytes())?;
    }
    Ok(Change {
        path: path.to_path_buf(),
        events: added,
        updated,
        written,
    })
}

/// The indexes of Forge's hooks (for `agent`) in a hook group's `hooks` list.
fn forge_hooks<'n>(
    text: &'n str,
    group: &'n Node,
    agent: Agent,
) -> impl Iterator<Item = usize> + 'n {
    group
        .get("hooks")
        .and_then(|h| h.value.items())
        .into_iter()
        .flatten()
        .enumerate()
        .filter(move |(_, h)| {
            h.get("command")
                .map(|c| value_of(text, &c.value))
                .and_then(|c| c.as_str().map(|c| is_forge_command(c, agent)))
                .unwrap_or(false)
        })
        .map(|(i, _)| i)
}

/// A group whose hooks are all Forge's (and that has at least one).
fn forge_only(text: &str, group: &Node, agent: Agent) -> bool {
    let n = group
        .get("hooks")
        .and_then(|h| h.value.items())
        .map_or(0, |h| h.len());
    n > 0 && forge_hooks(text, group, agent).count() == n
}

fn entry(agent: Agent, event: Event, bin: &str) -> Value {
    let command = hook_command(bin, agent, event);
    let tool_event = matches!(event, Event::PreToolUse | Event::PostToolUse);
    match agent {
        Agent::Gemini => {
            let mut g = json!({"hooks": [{
                "name": format!("forge-{}", event.kebab()),
                "type": "command",
                "command": command,
                "timeout": timeout_secs(event) * 1000,
            }]});
            if tool_event {
                g["matcher"] = json!(".*");
            }
            g
        }
        Agent::Claude | Agent::Codex => {
            let mut g = json!({"hooks": [{"type": "command", "command": command, "timeout": timeout_secs(event)}]});
            if tool_event {
                // Matchers come first in the documented examples.
                let mut m = Map::new();
                m.insert("matcher".into(), json!("*"));
                m.insert("hooks".into(), g["hooks"].take());
                g = Value::Object(m);
            }
            g
        }
    }
}

/// The `telemetry` settings `forge hooks install gemini` adds to a project's Gemini settings:
/// the CLI's local telemetry, where each model call's usage is, the model router's and the
/// other calls no chat recording holds included (see `budget/gemini.rs`). Prompts are kept out
/// of it.
pub fn gemini_telemetry() -> Value {
    json!({
        "enabled": true,
        "target": "local",
        "outfile": crate::budget::TELEMETRY_FILE,
        "logPrompts": false,
    })
}

/// What [`install_gemini_telemetry`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Telemetry {
    Added,
    /// Forge's settings were there already.
    Already,
    /// The file has telemetry settings of its own, left as they are (the value, as JSON).
    Theirs(String),
}

/// Adds [`gemini_telemetry`] to a project's Gemini settings file (after [`install`] wrote its
/// hooks), as text, unless the file has telemetry settings already: a person's own are never
/// replaced.
pub fn install_gemini_telemetry(path: &Path) -> Result<Telemetry> {
    let text = read_text(path)?;
    parse_object(path, &text)?;
    let root = spans(path, &text)?;
    if let Some(m) = root.get("telemetry") {
        let v = value_of(&text, &m.value);
        return Ok(if v == gemini_telemetry() {
            Telemetry::Already
        } else {
            Telemetry::Theirs(v.to_string())
        });
    }
    let text = json_text::insert_member(&text, &root, "telemetry", &gemini_telemetry());
    write_atomic(path, text.as_bytes())?;
    Ok(Telemetry::Added)
}

/// Removes only Forge's entries, and the groups and event lists that held only them. One piece
/// comes out at a time, each removal the exact inverse of the insertion `install` made, so
/// `install` then `uninstall` gives back the file's bytes.
pub fn uninstall(path: &Path, agent: Agent) -> Result<Change> {
    if !path.exists() {
        return Ok(Change {
            path: path.to_path_buf(),
            ..Change::default()
        });
    }
    let mut text = read_text(path)?;
    parse_object(path, &text)?;
    let mut removed: Vec<String> = Vec::new();
    if agent == Agent::Gemini {
        // Forge's telemetry settings, exactly as it added them, come out first: the inverse
        // order of `install` then `install_gemini_telemetry`.
        let root = spans(path, &text)?;
        let members: Vec<_> = root.members().iter().map(|m| m.span.clone()).collect();
        if let Some(k) = root
            .members()
            .iter()
            .position(|m| m.key == "telemetry" && value_of(&text, &m.value) == gemini_telemetry())
        {
            text = json_text::splice(&text, json_text::removal(&members, root.span.start, k), "");
            removed.push("telemetry".into());
        }
    }
    while let Some((range, events)) = next_removal(&text, &spans(path, &text)?, agent) {
        text = json_text::splice(&text, range, "");
        for e in events {
            if !removed.contains(&e) {
                removed.push(e);
            }
        }
    }
    let written = !removed.is_empty();
    if written {
        write_atomic(path, text.as_bytes())?;
    }
    Ok(Change {
        path: path.to_path_buf(),
        events: removed,
        written,
        ..Change::default()
    })
}

/// The next piece of Forge's to take out, at the highest level that holds nothing else: the
/// whole `hooks` member, an event's list, a group, or one hook in a person's group.
fn next_removal(text: &str, root: &Node, agent: Agent) -> Option<(Range<usize>, Vec<String>)> {
    let spans_of = |ms: &[Member]| ms.iter().map(|m| m.span.clone()).collect::<Vec<_>>();
    let hooks = root.get("hooks")?;
    let events = hooks.value.members();
    let only_forge = |ev: &Member| {
        ev.value
            .items()
            .is_some_and(|gs| !gs.is_empty() && gs.iter().all(|g| forge_only(text, g, agent)))
    };
    if !events.is_empty() && events.iter().all(only_forge) {
        let k = root.members().iter().position(|m| m.span == hooks.span)?;
        return Some((
            json_text::removal(&spans_of(root.members()), root.span.start, k),
            events.iter().map(|e| e.key.clone()).collect(),
        ));
    }
    for (ei, ev) in events.iter().enumerate() {
        let Some(groups) = ev.value.items() else {
            continue;
        };
        if only_forge(ev) {
            return Some((
                json_text::removal(&spans_of(events), hooks.value.span.start, ei),
                vec![ev.key.clone()],
            ));
        }
        let group_spans: Vec<_> = groups.iter().map(|g| g.span.clone()).collect();
        for (gi, g) in groups.iter().enumerate() {
            if forge_only(text, g, agent) {
                return Some((
                    json_text::removal(&group_spans, ev.value.span.start, gi),
                    vec![ev.key.clone()],
                ));
            }
            if let Some(hi) = forge_hooks(text, g, agent).next() {
                let list = &g.get("hooks")?.value;
                let hook_spans: Vec<_> = list.items()?.iter().map(|h| h.span.clone()).collect();
                return Some((
                    json_text::removal(&hook_spans, list.span.start, hi),
                    vec![ev.key.clone()],
                ));
            }
        }
    }
    None
}

/// Forge's wired events and their commands in a settings file.
pub fn status(path: &Path, agent: Agent) -> Result<Vec<(String, String)>> {
    Ok(forge_handlers(path, agent)?
        .into_iter()
        .map(|h| (h.event, h.command))
        .collect())
}

/// One of Forge's hook commands in a settings file, where it sits: Codex names a hook by its
/// event and these two positions (`<file>:pre_tool_use:0:0`) when it records the person's trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    /// The event as the file names it (`PreToolUse`).
    pub event: String,
    /// Index of the matcher group in the event's list.
    pub group: usize,
    /// Index of the command in the group's `hooks`.
    pub index: usize,
    pub command: String,
}

/// Forge's hook commands for `agent` in the settings file at `path`, in file order (none when
/// the file does not exist).
pub fn forge_handlers(path: &Path, agent: Agent) -> Result<Vec<Handler>> {
    if !path.exists() {
        return Ok(vec![]);
    }
    let settings = load(path)?;
    let mut out = Vec::new();
    if let Some(hooks) = settings.get("hooks").and_then(|h| h.as_object()) {
        for (event, list) in hooks {
            for (group, g) in list.as_array().into_iter().flatten().enumerate() {
                for (index, h) in g
                    .get("hooks")
                    .and_then(|h| h.as_array())
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    if let Some(c) = h.get("command").and_then(|c| c.as_str())
                        && is_forge_command(c, agent)
                    {
                        out.push(Handler {
                            event: event.clone(),
                            group,
                            index,
                            command: c.to_string(),
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm run lint)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./my-audit.sh"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
"#;

    #[test]
    fn install_is_idempotent_and_uninstall_restores_the_users_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".claude/settings.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, USER).unwrap();
        let c = install(&p, Agent::Claude, "forge").unwrap();
        assert_eq!(
            c.events,
            [
                "PreToolUse",
                "PostToolUse",
                "Stop",
                "SessionStart",
                "SubagentStart",
                "SubagentStop"
            ]
        );
        let after_first = std::fs::read_to_string(&p).unwrap();
        let v: Value = serde_json::from_str(&after_first).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "./my-audit.sh"
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "command -v forge >/dev/null 2>&1 || { echo 'Forge guards this project, and `forge` is not on PATH: the call is blocked until it is. Install Forge and put it on PATH (see its README), or ask the person who set the project up.' >&2; exit 2; }; forge hook claude pre-tool-use"
        );
        assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "*");
        assert!(v["hooks"]["Stop"][0].get("matcher").is_none());
        assert_eq!(v["model"], "opus");
        let c = install(&p, Agent::Claude, "forge").unwrap();
        assert!(!c.written);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), after_first);
        assert_eq!(status(&p, Agent::Claude).unwrap().len(), 6);
        let c = uninstall(&p, Agent::Claude).unwrap();
        assert_eq!(c.events.len(), 6);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), USER);
    }

    /// Settings as people write them. `install` then `uninstall` must give back every byte.
    const SHAPES: &[&str] = &[
        "{\"model\":\"opus\",\"env\":{\"A\":\"1\"}}",
        "{\"model\":\"opus\"}\n",
        "{ \"model\": \"opus\", \"n\": 1.0e3, \"s\": \"caf\\u00e9 \\/ x\" }",
        "{\n    \"model\": \"opus\"\n}\n",
        "{\n\t\"model\": \"opus\"\n}\n",
        "{\r\n  \"model\": \"opus\",\r\n  \"n\": 10\r\n}\r\n",
        "{\n  \"a\": [1, 2,   3],\n  \"b\" :  {\"c\":null}\n}",
        "{}",
        "{}\n",
        "{ }",
        "{\n}\n",
        "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"./audit.sh\"}]}]}}",
        "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [ { \"type\": \"command\", \"command\": \"say done\" } ]\n      }\n    ]\n  },\n  \"model\": \"opus\"\n}\n",
        "{\"hooks\": {\"Notification\": []}, \"x\": true}",
    ];

    #[test]
    fn install_then_uninstall_gives_back_every_shape_byte_for_byte() {
        for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
            for original in SHAPES.iter().copied().chain([USER]) {
                let dir = tempfile::tempdir().unwrap();
                let p = dir.path().join("settings.json");
                std::fs::write(&p, original).unwrap();
                let c = install(&p, agent, "/opt/forge/bin/forge").unwrap();
                let n = Event::installed(agent).len();
                assert_eq!(c.events.len(), n, "{agent:?} {original:?}");
                let installed = std::fs::read_to_string(&p).unwrap();
                let v: Value = serde_json::from_str(&installed)
                    .unwrap_or_else(|e| panic!("{original:?} → invalid JSON {installed:?}: {e}"));
                assert_eq!(status(&p, agent).unwrap().len(), n, "{installed}");
                // The person's values are untouched.
                let before: Value = serde_json::from_str(original).unwrap();
                for (k, val) in before.as_object().unwrap() {
                    if k != "hooks" {
                        assert_eq!(&v[k], val, "{original:?}");
                    }
                }
                // Idempotent: a second install writes nothing.
                assert!(!install(&p, agent, "/opt/forge/bin/forge").unwrap().written);
                let c = uninstall(&p, agent).unwrap();
                assert_eq!(c.events.len(), n, "{agent:?} {installed}");
                assert_eq!(
                    std::fs::read_to_string(&p).unwrap(),
                    original,
                    "{agent:?}: after install:\n{installed}"
                );
            }
        }
    }

    #[test]
    fn an_emptied_event_list_or_hooks_object_goes_with_forge() {
        // The documented limit: Forge cannot tell a list it made from an empty one the person
        // kept, so an event list that was empty before goes with Forge's entries, and so does
        // a `hooks` object that held nothing but empty lists.
        for (original, after) in [
            ("{\"hooks\":{}}", "{}"),
            ("{\"hooks\":{\"Stop\":[]},\"a\":1}", "{\"a\":1}"),
            (
                "{\"hooks\":{\"Stop\":[],\"X\":[{\"hooks\":[]}]}}",
                "{\"hooks\":{\"X\":[{\"hooks\":[]}]}}",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("settings.json");
            std::fs::write(&p, original).unwrap();
            install(&p, Agent::Claude, "forge").unwrap();
            uninstall(&p, Agent::Claude).unwrap();
            let got = std::fs::read_to_string(&p).unwrap();
            let want: Value = serde_json::from_str(after).unwrap();
            assert_eq!(serde_json::from_str::<Value>(&got).unwrap(), want, "{got}");
        }
    }

    #[test]
    fn a_persons_hook_in_forges_group_and_their_later_entries_survive() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        install(&p, Agent::Claude, "forge").unwrap();
        // The person adds a hook to Forge's Stop group and a group after Forge's PreToolUse.
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        v["hooks"]["Stop"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "command", "command": "say done"}));
        v["hooks"]["PreToolUse"].as_array_mut().unwrap().push(
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}),
        );
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        let c = uninstall(&p, Agent::Claude).unwrap();
        assert_eq!(c.events.len(), 6);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
            }})
        );
    }

    #[test]
    fn gemini_telemetry_is_added_after_the_hooks_and_taken_out_byte_for_byte() {
        for original in SHAPES.iter().copied().chain([USER, ""]) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("settings.json");
            std::fs::write(&p, original).unwrap();
            install(&p, Agent::Gemini, "forge").unwrap();
            let hooked = std::fs::read_to_string(&p).unwrap();
            assert_eq!(install_gemini_telemetry(&p).unwrap(), Telemetry::Added);
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            assert_eq!(v["telemetry"], gemini_telemetry(), "{original:?}");
            assert_eq!(v["telemetry"]["outfile"], ".gemini/forge-telemetry.log");
            assert_eq!(install_gemini_telemetry(&p).unwrap(), Telemetry::Already);
            let c = uninstall(&p, Agent::Gemini).unwrap();
            assert!(c.events.contains(&"telemetry".to_string()), "{c:?}");
            if !original.is_empty() {
                assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
            }
            // Without Forge's hooks, the telemetry still comes out.
            std::fs::write(&p, &hooked).unwrap();
            install_gemini_telemetry(&p).unwrap();
            let hooks_out = uninstall(&p, Agent::Gemini).unwrap();
            assert!(
                !std::fs::read_to_string(&p).unwrap().contains("telemetry"),
                "{hooks_out:?}"
            );
        }
    }

    #[test]
    fn a_persons_own_gemini_telemetry_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        let own = "{\"telemetry\": {\"enabled\": true, \"target\": \"gcp\"}}\n";
        std::fs::write(&p, own).unwrap();
        let got = install_gemini_telemetry(&p).unwrap();
        assert_eq!(
            got,
            Telemetry::Theirs(r#"{"enabled":true,"target":"gcp"}"#.into())
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), own);
        uninstall(&p, Agent::Gemini).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), own);
    }

    #[test]
    fn gemini_uses_its_event_names_and_milliseconds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        install(&p, Agent::Gemini, "forge").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(
            v["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
            hook_command("forge", Agent::Gemini, Event::PreToolUse)
        );
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 30_000);
        assert!(
            v["hooks"]["AfterAgent"][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .ends_with("; forge hook gemini stop")
        );
    }

    /// An install from before the guard (the installer's absolute path, no guard) is brought up
    /// to the portable command in place: the person's hooks and the entries' places stay.
    #[test]
    fn an_older_absolute_path_install_is_upgraded_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        std::fs::write(&p, USER).unwrap();
        install(&p, Agent::Claude, "forge").unwrap();
        let current = std::fs::read_to_string(&p).unwrap();
        let old = Event::ALL.iter().fold(current.clone(), |t, e| {
            t.replace(
                &Value::String(hook_command("forge", Agent::Claude, *e)).to_string(),
                &format!("\"/home/ada/.cargo/bin/forge hook claude {}\"", e.kebab()),
            )
        });
        assert_ne!(old, current);
        std::fs::write(&p, &old).unwrap();
        let c = install(&p, Agent::Claude, "forge").unwrap();
        assert!(c.written && c.events.is_empty(), "{c:?}");
        assert_eq!(
            c.updated,
            [
                "PreToolUse",
                "PostToolUse",
                "Stop",
                "SessionStart",
                "SubagentStart",
                "SubagentStop"
            ]
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), current);
        assert!(!install(&p, Agent::Claude, "forge").unwrap().written);
        uninstall(&p, Agent::Claude).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), USER);
    }

    /// The written command, run as the clients run it (`sh -c`): without the binary it blocks
    /// (exit 2, the reason on stderr); with it, the hook answers.
    #[test]
    fn the_hook_command_fails_closed_without_its_binary() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let stub = bin.join("forge");
        std::fs::write(&stub, "#!/bin/sh\necho \"answered $*\"\n").unwrap();
        std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let run = |cmd: &str, path: &Path| {
            std::process::Command::new("/bin/sh")
                .args(["-c", cmd])
                .env("PATH", path)
                .output()
                .unwrap()
        };
        for event in Event::ALL {
            let cmd = hook_command("forge", Agent::Claude, event);
            let o = run(&cmd, &empty);
            assert_eq!(o.status.code(), Some(2), "{cmd}: {o:?}");
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                format!("{}\n", missing_message("forge"))
            );
            assert!(o.stdout.is_empty());
            let o = run(&cmd, &bin);
            assert_eq!(o.status.code(), Some(0), "{o:?}");
            assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                format!("answered hook claude {}\n", event.kebab())
            );
        }
        // A named binary: the same guard, by its path.
        let gone = dir.path().join("it's gone/forge");
        let cmd = hook_command(gone.to_str().unwrap(), Agent::Codex, Event::Stop);
        let o = run(&cmd, &bin);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("it's gone/forge is not there"),
            "{o:?}"
        );
        let cmd = hook_command(stub.to_str().unwrap(), Agent::Codex, Event::Stop);
        assert_eq!(run(&cmd, &empty).status.code(), Some(0));
    }

    #[test]
    fn broken_settings_are_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        std::fs::write(&p, "{ \"hooks\": [ ").unwrap();
        let e = install(&p, Agent::Claude, "forge").unwrap_err().to_string();
        assert!(
            e.contains("settings.json") && e.contains("not valid JSON"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{ \"hooks\": [ ");
    }

    #[test]
    fn forge_commands_are_recognised_by_shape() {
        assert!(is_forge_command("forge hook claude stop", Agent::Claude));
        assert!(is_forge_command(
            "'/opt/my tools/forge' hook claude pre-tool-use",
            Agent::Claude
        ));
        assert!(!is_forge_command("forge hook codex stop", Agent::Claude));
        for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
            for bin in ["forge", "/opt/my tools/forge", "/x/it's/forge"] {
                for event in Event::ALL {
                    let c = hook_command(bin, agent, event);
                    assert!(is_forge_command(&c, agent), "{c}");
                    let other = if agent == Agent::Claude {
                        Agent::Codex
                    } else {
                        Agent::Claude
                    };
                    assert!(!is_forge_command(&c, other), "{c}");
                }
            }
        }
        assert!(!is_forge_command(
            "command -v x || { exit 2; }; ./audit.sh hook claude stop",
            Agent::Claude
        ));
        assert!(!is_forge_command(
            "./my-audit.sh hook claude stop",
            Agent::Claude
        ));
    }
}
