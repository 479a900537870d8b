//! The subagents a session started and that have not ended yet, kept so that the Stop hook can
//! tell "the work is not finished" from "the work failed". From Claude Code 2.1.220 on, the Agent
//! tool runs subagents in the background by default: the main agent stops while a subagent still
//! fixes the code, and a Stop that counted each of those FAILs would open the breaker on work in
//! progress.
//!
//! What is known comes only from the client's hook events (never from the agent's files): a
//! subagent starts with `SubagentStart`, or with the Agent/Task tool's `PostToolUse` whose result
//! says it was launched in the background (`"status": "async_launched"`, `agentId`); it ends with
//! `SubagentStop` (`agent_id`). A Stop payload that lists the session's `background_tasks`
//! (2.1.220+) is the client's own account and settles the record. The record is
//! `.tmp/.forge/sessions/<session>/subagents.json`, which the session's commands cannot write;
//! each change is a locked, atomic read-modify-write. This file only keeps the record; the Stop
//! hook decides what it means.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::repo::Project;
use crate::state::{self, StateDoc};

/// How many ended ids are remembered: enough to ignore a late launch notice for a subagent that
/// already ended, small enough to keep the file tiny.
const ENDED_KEPT: usize = 64;

/// The session's subagents as the client's events told them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subagents {
    /// Running subagents by `agent_id`, with their `agent_type` when the event named one.
    #[serde(default)]
    pub running: BTreeMap<String, String>,
    /// Ids whose `SubagentStop` came, newest last: a launch notice that arrives after the end
    /// (a subagent quicker than its parent's PostToolUse) does not bring it back.
    #[serde(default)]
    pub ended: Vec<String>,
}

impl StateDoc for Subagents {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("is not a subagent record ({e})"))
    }
    fn render(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

/// What one hook event says about the session's subagents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    Started { id: String, kind: String },
    Ended { id: String },
}

/// The note an event carries, if any. `event` is the client's own name (`hook_event_name`) or
/// Forge's kebab name.
pub fn note(event: &str, payload: &Value) -> Option<Note> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    match event {
        "SubagentStart" | "subagent-start" => Some(Note::Started {
            id: s(payload, "agent_id")?,
            kind: s(payload, "agent_type").unwrap_or_default(),
        }),
        "SubagentStop" | "subagent-stop" => Some(Note::Ended {
            id: s(payload, "agent_id")?,
        }),
        "PostToolUse" | "post-tool-use" => {
            let tool = payload.get("tool_name").and_then(Value::as_str)?;
            if !matches!(tool, "Agent" | "Task") {
                return None;
            }
            let kind = payload
                .get("tool_input")
                .and_then(|i| s(i, "subagent_type"))
                .unwrap_or_default();
            launched_async(payload.get("tool_response")?).map(|id| Note::Started { id, kind })
        }
        _ => None,
    }
}

/// The id of a subagent the Agent tool's result says runs in the background: the object the
/// client sends (`"isAsync": true` or `"status": "async_launched"`, with `agentId`), or the text
/// the model is shown ("Async agent launched successfully", then `agentId: …`).
fn launched_async(response: &Value) -> Option<String> {
    match response {
        Value::Object(o) => {
            let is_async = o.get("isAsync").and_then(Value::as_bool) == Some(true)
                || o.get("status").and_then(Value::as_str) == Some("async_launched");
            let id = o.get("agentId").and_then(Value::as_str)?;
            (is_async && !id.is_empty()).then(|| id.to_string())
        }
        Value::String(t) if t.contains("Async agent launched successfully") => t
            .split("agentId:")
            .nth(1)?
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .find(|w| !w.is_empty())
            .map(str::to_string),
        Value::Array(items) => items.iter().find_map(|i| {
            i.get("text")
                .map(launched_async)
                .unwrap_or_else(|| launched_async(i))
        }),
        _ => None,
    }
}

/// The record's file for `session`.
pub fn path(project: &Project, session: &str) -> PathBuf {
    project
        .tmp_dir()
        .join("sessions")
        .join(crate::timeline::sanitize(session))
        .join("subagents.json")
}

const RECOVERY: &str = "delete it: Forge then counts the next failed Stop as usual";

/// Applies `note` to the session's record.
pub fn apply(project: &Project, session: &str, note: &Note) -> Result<()> {
    state::update(
        &path(project, session),
        RECOVERY,
        |cur: Option<Subagents>| {
            let mut s = cur.unwrap_or_default();
            match note {
                Note::Started { id, kind } => {
                    if !s.ended.contains(id) {
                        s.running.insert(id.clone(), kind.clone());
                    }
                }
                Note::Ended { id } => {
                    s.running.remove(id);
                    s.ended.retain(|e| e != id);
                    s.ended.push(id.clone());
                    let over = s.ended.len().saturating_sub(ENDED_KEPT);
                    s.ended.drain(..over);
                }
            }
            Ok((s, ()))
        },
    )
}

/// The subagents still running when the session's main agent stops. `listed`: the Stop
/// payload's `background_tasks`, when the client sends it — its own account, which drops a
/// recorded subagent whose `SubagentStop` never came (a killed one) and adds one Forge missed.
pub fn running_at_stop(
    project: &Project,
    session: &str,
    listed: Option<&Value>,
) -> Result<Vec<String>> {
    let file = path(project, session);
    let Some(list) = listed.and_then(Value::as_array) else {
        let s: Option<Subagents> = state::load(&file, RECOVERY)?;
        return Ok(s
            .map(|s| s.running.into_keys().collect())
            .unwrap_or_default());
    };
    let running: BTreeMap<String, String> = list
        .iter()
        .filter(|t| {
            t.get("type").and_then(Value::as_str) == Some("subagent")
                && t.get("status").and_then(Value::as_str) == Some("running")
        })
        .filter_map(|t| {
            let id = t.get("id").and_then(Value::as_str)?.to_string();
            let kind = t
                .get("agent_type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Some((id, kind.to_string()))
        })
        .collect();
    if running.is_empty() && !file.exists() {
        return Ok(Vec::new());
    }
    state::update(&file, RECOVERY, |cur: Option<Subagents>| {
        let mut s = cur.unwrap_or_default();
        s.running = running;
        let ids = s.running.keys().cloned().collect();
        Ok((s, ids))
    })
}

/// The session's record when it exists (for `forge doctor` and tests).
pub fn load(project: &Project, session: &str) -> Result<Option<Subagents>> {
    state::load(&path(project, session), RECOVERY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The payloads as Claude Code 2.1.337 sends them (captured through the agent rig).
    #[test]
    fn the_clients_events_are_read() {
        let start = json!({"session_id": "s", "hook_event_name": "SubagentStart", "agent_id": "a52506d5fc7d61cc1", "agent_type": "general-purpose"});
        assert_eq!(
            note("SubagentStart", &start),
            Some(Note::Started {
                id: "a52506d5fc7d61cc1".into(),
                kind: "general-purpose".into()
            })
        );
        let launched = json!({"hook_event_name": "PostToolUse", "tool_name": "Agent",
            "tool_input": {"description": "fix", "prompt": "p", "subagent_type": "general-purpose"},
            "tool_response": {"isAsync": true, "status": "async_launched", "agentId": "a52506d5fc7d61cc1",
                "description": "fix", "resolvedModel": "claude-opus-5-5", "prompt": "p",
                "outputFile": "/tmp/claude-0/x/tasks/a52506d5fc7d61cc1.output", "canReadOutputFile": true}});
        assert_eq!(
            note("PostToolUse", &launched),
            Some(Note::Started {
                id: "a52506d5fc7d61cc1".into(),
                kind: "general-purpose".into()
            })
        );
        // A foreground subagent's result (2.1.197) has ended already: no note.
        let done = json!({"tool_name": "Agent", "tool_input": {}, "tool_response": {"status": "completed", "agentId": "ac058caaba9ce350b", "content": [{"type": "text", "text": "fixed"}]}});
        assert_eq!(note("PostToolUse", &done), None);
        // The text form the model is shown.
        let text = json!({"tool_name": "Task", "tool_response": "Async agent launched successfully.\nagentId: a0afb4545bac83990 (use it to continue)"});
        assert_eq!(
            note("post-tool-use", &text),
            Some(Note::Started {
                id: "a0afb4545bac83990".into(),
                kind: String::new()
            })
        );
        let stop = json!({"hook_event_name": "SubagentStop", "agent_id": "a52506d5fc7d61cc1", "agent_type": "general-purpose"});
        assert_eq!(
            note("SubagentStop", &stop),
            Some(Note::Ended {
                id: "a52506d5fc7d61cc1".into()
            })
        );
        // Another tool's result, and an event without an id, say nothing.
        assert_eq!(
            note(
                "PostToolUse",
                &json!({"tool_name": "Bash", "tool_response": {"isAsync": true, "agentId": "x"}})
            ),
            None
        );
        assert_eq!(note("SubagentStop", &json!({})), None);
    }

    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let p = Project {
            root: dir.path().to_path_buf(),
        };
        (dir, p)
    }

    #[test]
    fn a_launch_then_its_end_leaves_none_running_in_either_order() {
        let (_d, p) = project();
        let started = Note::Started {
            id: "a1".into(),
            kind: "general-purpose".into(),
        };
        let ended = Note::Ended { id: "a1".into() };
        apply(&p, "s", &started).unwrap();
        apply(&p, "s", &started).unwrap(); // SubagentStart, then the launch notice
        assert_eq!(running_at_stop(&p, "s", None).unwrap(), ["a1"]);
        apply(&p, "s", &ended).unwrap();
        assert!(running_at_stop(&p, "s", None).unwrap().is_empty());
        // A launch notice after the end does not bring it back.
        apply(&p, "s", &started).unwrap();
        assert!(running_at_stop(&p, "s", None).unwrap().is_empty());
        // Sessions are apart.
        assert!(running_at_stop(&p, "other", None).unwrap().is_empty());
    }

    #[test]
    fn the_stop_payloads_background_tasks_settle_the_record() {
        let (_d, p) = project();
        apply(
            &p,
            "s",
            &Note::Started {
                id: "killed".into(),
                kind: String::new(),
            },
        )
        .unwrap();
        let listed = json!([{"id": "a2", "type": "subagent", "status": "running", "agent_type": "general-purpose"},
                            {"id": "sh1", "type": "shell", "status": "running"}]);
        assert_eq!(running_at_stop(&p, "s", Some(&listed)).unwrap(), ["a2"]);
        assert_eq!(running_at_stop(&p, "s", None).unwrap(), ["a2"]);
        assert!(
            running_at_stop(&p, "s", Some(&json!([])))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_record_that_does_not_parse_is_an_error_naming_it() {
        let (_d, p) = project();
        let f = path(&p, "s");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, "garbage").unwrap();
        let e = running_at_stop(&p, "s", None).unwrap_err().to_string();
        assert!(e.contains("subagents.json"), "{e}");
    }
}
