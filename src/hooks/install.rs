//! `forge hooks install|uninstall|status`: Forge's entries merged into an agent's settings file,
//! idempotently, leaving the person's own hooks and settings as they were.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Agent, Event};
use crate::error::{Error, Result};
use crate::state::write_atomic;

/// The settings file Forge edits for `agent`: the project's, or the user's with `global`.
pub fn settings_path(agent: Agent, root: &Path, global: bool, home: &Path) -> PathBuf {
    match (agent, global) {
        (Agent::Claude, false) => root.join(".claude/settings.json"),
        (Agent::Claude, true) => home.join(".claude/settings.json"),
        (Agent::Codex, false) => root.join(".codex/hooks.json"),
        (Agent::Codex, true) => std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"))
            .join("hooks.json"),
        (Agent::Gemini, false) => root.join(".gemini/settings.json"),
        (Agent::Gemini, true) => home.join(".gemini/settings.json"),
    }
}

/// Seconds an agent waits for each hook. Stop runs the project's tests.
fn timeout_secs(event: Event) -> u64 {
    match event {
        Event::Stop => 1800,
        _ => 30,
    }
}

/// The command an agent runs for `event`.
pub fn hook_command(bin: &str, agent: Agent, event: Event) -> String {
    let bin = if bin.contains([' ', '\'', '"', '$', '`']) {
        format!("'{}'", bin.replace('\'', "'\\''"))
    } else {
        bin.to_string()
    };
    format!("{bin} hook {} {}", agent.name(), event.kebab())
}

/// Whether a hook command is one of Forge's for `agent` (whatever path the binary had).
pub fn is_forge_command(cmd: &str, agent: Agent) -> bool {
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

fn load(path: &Path) -> Result<Map<String, Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
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

/// Writes the settings back in the file's own style: its indentation (two or four spaces, a
/// tab, or none) and its final newline, so untouched parts stay as the person wrote them.
fn save(path: &Path, settings: &Map<String, Value>) -> Result<()> {
    use serde::Serialize;
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let compact = !old.trim().is_empty() && !old.trim().contains('\n');
    let mut buf = Vec::new();
    if compact {
        serde_json::to_writer(&mut buf, settings).map_err(|e| Error::usage(e.to_string()))?;
    } else {
        let second = old.lines().nth(1).unwrap_or("  ");
        let ind: Vec<u8> = if second.starts_with('\t') {
            b"\t".to_vec()
        } else {
            let n = second.len() - second.trim_start().len();
            vec![b' '; if n == 0 { 2 } else { n.min(8) }]
        };
        let fmt = serde_json::ser::PrettyFormatter::with_indent(&ind);
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        settings
            .serialize(&mut ser)
            .map_err(|e| Error::usage(e.to_string()))?;
    }
    if old.is_empty() || old.ends_with('\n') {
        buf.push(b'\n');
    }
    write_atomic(path, &buf)
}

fn hooks_object<'m>(
    settings: &'m mut Map<String, Value>,
    path: &Path,
) -> Result<&'m mut Map<String, Value>> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    hooks.as_object_mut().ok_or_else(|| Error::Config {
        path: path.to_path_buf(),
        message: "`hooks` is not an object; fix it by hand".into(),
    })
}

#[derive(Debug, Clone, Default)]
pub struct Change {
    pub path: PathBuf,
    /// Native event names Forge's entries were added to / removed from.
    pub events: Vec<String>,
    /// Whether the file was written.
    pub written: bool,
}

/// Adds Forge's hooks for every event; existing Forge entries are left as they are.
pub fn install(path: &Path, agent: Agent, bin: &str) -> Result<Change> {
    let mut settings = load(path)?;
    let hooks = hooks_object(&mut settings, path)?;
    let mut added = Vec::new();
    for event in Event::ALL {
        let native = event.native(agent);
        let list = hooks.entry(native).or_insert_with(|| Value::Array(vec![]));
        let Some(groups) = list.as_array_mut() else {
            return Err(Error::Config {
                path: path.to_path_buf(),
                message: format!("`hooks.{native}` is not a list; fix it by hand"),
            });
        };
        let present = groups.iter().any(|g| {
            g.get("hooks").and_then(|h| h.as_array()).is_some_and(|hs| {
                hs.iter().any(|h| {
                    h.get("command")
                        .and_then(|c| c.as_str())
                        .is_some_and(|c| is_forge_command(c, agent))
                })
            })
        });
        if present {
            continue;
        }
        groups.push(entry(agent, event, bin));
        added.push(native.to_string());
    }
    let written = !added.is_empty();
    if written {
        save(path, &settings)?;
    }
    Ok(Change {
        path: path.to_path_buf(),
        events: added,
        written,
    })
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

/// Removes only Forge's entries, and the groups and event lists that held only them.
pub fn uninstall(path: &Path, agent: Agent) -> Result<Change> {
    if !path.exists() {
        return Ok(Change {
            path: path.to_path_buf(),
            ..Change::default()
        });
    }
    let mut settings = load(path)?;
    let mut removed = Vec::new();
    if let Some(hooks) = settings.get_mut("hooks").and_then(|h| h.as_object_mut()) {
        let mut empty_events = Vec::new();
        for (event, list) in hooks.iter_mut() {
            let Some(groups) = list.as_array_mut() else {
                continue;
            };
            let before: usize = groups.iter().map(count_hooks).sum();
            for g in groups.iter_mut() {
                if let Some(hs) = g.get_mut("hooks").and_then(|h| h.as_array_mut()) {
                    hs.retain(|h| {
                        !h.get("command")
                            .and_then(|c| c.as_str())
                            .is_some_and(|c| is_forge_command(c, agent))
                    });
                }
            }
            groups.retain(|g| {
                g.get("hooks")
                    .and_then(|h| h.as_array())
                    .is_none_or(|h| !h.is_empty())
            });
            let after: usize = groups.iter().map(count_hooks).sum();
            if after < before {
                removed.push(event.clone());
                if groups.is_empty() {
                    empty_events.push(event.clone());
                }
            }
        }
        for e in empty_events {
            hooks.remove(&e);
        }
        if hooks.is_empty() && !removed.is_empty() {
            settings.remove("hooks");
        }
    }
    let written = !removed.is_empty();
    if written {
        save(path, &settings)?;
    }
    Ok(Change {
        path: path.to_path_buf(),
        events: removed,
        written,
    })
}

fn count_hooks(g: &Value) -> usize {
    g.get("hooks")
        .and_then(|h| h.as_array())
        .map_or(0, |h| h.len())
}

/// Forge's wired events and their commands in a settings file.
pub fn status(path: &Path, agent: Agent) -> Result<Vec<(String, String)>> {
    if !path.exists() {
        return Ok(vec![]);
    }
    let settings = load(path)?;
    let mut out = Vec::new();
    if let Some(hooks) = settings.get("hooks").and_then(|h| h.as_object()) {
        for (event, list) in hooks {
            for g in list.as_array().into_iter().flatten() {
                for h in g
                    .get("hooks")
                    .and_then(|h| h.as_array())
                    .into_iter()
                    .flatten()
                {
                    if let Some(c) = h.get("command").and_then(|c| c.as_str())
                        && is_forge_command(c, agent)
                    {
                        out.push((event.clone(), c.to_string()));
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
        let c = install(&p, Agent::Claude, "/usr/local/bin/forge").unwrap();
        assert_eq!(
            c.events,
            ["PreToolUse", "PostToolUse", "Stop", "SessionStart"]
        );
        let after_first = std::fs::read_to_string(&p).unwrap();
        let v: Value = serde_json::from_str(&after_first).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "./my-audit.sh"
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "/usr/local/bin/forge hook claude pre-tool-use"
        );
        assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "*");
        assert!(v["hooks"]["Stop"][0].get("matcher").is_none());
        assert_eq!(v["model"], "opus");
        let c = install(&p, Agent::Claude, "forge").unwrap();
        assert!(!c.written);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), after_first);
        assert_eq!(status(&p, Agent::Claude).unwrap().len(), 4);
        let c = uninstall(&p, Agent::Claude).unwrap();
        assert_eq!(c.events.len(), 4);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), USER);
    }

    #[test]
    fn other_indentation_styles_survive_install_and_uninstall() {
        for original in [
            "{\"model\":\"opus\",\"env\":{\"A\":\"1\"}}",
            "{\n    \"model\": \"opus\"\n}\n",
            "{\n\t\"model\": \"opus\"\n}\n",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("settings.json");
            std::fs::write(&p, original).unwrap();
            install(&p, Agent::Claude, "forge").unwrap();
            uninstall(&p, Agent::Claude).unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
        }
    }

    #[test]
    fn gemini_uses_its_event_names_and_milliseconds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        install(&p, Agent::Gemini, "forge").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(
            v["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
            "forge hook gemini pre-tool-use"
        );
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 30_000);
        assert_eq!(
            v["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
            "forge hook gemini stop"
        );
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
        assert!(!is_forge_command(
            "./my-audit.sh hook claude stop",
            Agent::Claude
        ));
    }
}
