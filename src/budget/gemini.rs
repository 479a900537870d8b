//! Gemini CLI's own records of what it spent: the `gemini --output-format json` result and the
//! session's chat recording (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`, the
//! `transcript_path` of every hook payload).
//!
//! The chat recording, as 0.61.0 writes it (its `ChatRecordingService`): a metadata line
//! (`sessionId`, `kind`), then one line per message, written again whenever the message
//! changes (a tool call's result added), each time whole and with the same `id`. A model
//! response is a `"type": "gemini"` message whose `tokens` is the API's `usageMetadata` of that
//! response — `input` (promptTokenCount, cached tokens included), `output`
//! (candidatesTokenCount), `cached`, `thoughts`, `tool` (toolUsePromptTokenCount) — set once,
//! before or with the message's first line, and `model` names the model. A subagent's chat is
//! `chats/<session id>/<its own id>.jsonl` beside the session's (seen with the built-in
//! `generalist` subagent through the rig). Calls the CLI makes outside the chat — the model
//! router's classification (`utility_router` in the JSON result's `stats`), the next-speaker and
//! loop checks — are in neither file: they are read from the CLI's local telemetry
//! ([`TELEMETRY_FILE`]), whose `gemini_cli.api_response` events carry every call's usage and the
//! role that made it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transcript::{self, PerModel};
use super::{BudgetConfig, Spend, Tokens, price};
use crate::error::Result;

/// Forge's token counts of one Gemini usage: `prompt` includes the `cached` part, thoughts are
/// billed as output, and the tool-use prompt as input.
fn gemini_tokens(prompt: u64, candidates: u64, cached: u64, thoughts: u64, tool: u64) -> Tokens {
    Tokens {
        input: prompt.saturating_sub(cached).saturating_add(tool),
        output: candidates.saturating_add(thoughts),
        cache_write: 0,
        cache_write_1h: 0,
        cache_read: cached,
    }
}

/// Spend from `gemini --output-format json`: `stats.models.<name>.tokens`.
pub fn from_gemini_json(
    v: &Value,
    config: &BudgetConfig,
) -> std::result::Result<Vec<Spend>, String> {
    let models = v
        .pointer("/stats/models")
        .and_then(|m| m.as_object())
        .ok_or("not a `gemini --output-format json` result: no `stats.models`")?;
    let mut out = Vec::new();
    for (model, m) in models {
        let n = |k: &str| {
            m.pointer(&format!("/tokens/{k}"))
                .and_then(|x| x.as_u64())
                .unwrap_or(0)
        };
        let t = gemini_tokens(
            n("prompt"),
            n("candidates"),
            n("cached"),
            n("thoughts"),
            n("tool"),
        );
        let (usd, estimate) = price(config, Some(model), &t);
        out.push(Spend {
            source: "gemini-json".into(),
            model: Some(model.clone()),
            usd,
            estimate,
            tokens: t,
        });
    }
    Ok(out)
}

/// Reads what was added to a Gemini CLI chat recording, and to its subagents' chats, since the
/// last call and returns their spend, one record per model: the session's as `gemini-chat`,
/// its subagents' as `gemini-subagent`. Each model response is booked once, from the first of
/// its lines that carries `tokens`.
pub fn ingest_chat(
    chat: &std::path::Path,
    cursor_dir: &std::path::Path,
    config: &BudgetConfig,
) -> Result<Vec<Spend>> {
    let mut spends = ingest_file(chat, cursor_dir, config, "gemini-chat")?;
    if let (Some(id), Some(dir)) = (session_of(chat), chat.parent()) {
        let mut sub = PerModel::new("gemini-subagent");
        for f in transcript::jsonl_files(&dir.join(file_name_part(&id))) {
            sub.extend(ingest_file(&f, cursor_dir, config, "gemini-subagent")?);
        }
        spends.extend(sub.into_vec());
    }
    Ok(spends)
}

/// The session id a chat recording's first line (its metadata) gives.
fn session_of(chat: &std::path::Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(chat).ok()?;
    let mut line = Vec::new();
    std::io::BufReader::new(f.take(64 * 1024))
        .read_until(b'\n', &mut line)
        .ok()?;
    let v: Value = serde_json::from_slice(&line).ok()?;
    v.get("sessionId")?.as_str().map(str::to_string)
}

/// Gemini CLI's `sanitizeFilenamePart`: every UTF-16 unit outside `[A-Za-z0-9_-]` becomes `_`.
fn file_name_part(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-';
            let n = if keep { 1 } else { c.len_utf16() };
            std::iter::repeat_n(if keep { c } else { '_' }, n)
        })
        .collect()
}

/// The chat reader keeps nothing beside the read position and the message ids counted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Nothing {}

type Cursor = transcript::Cursor<Nothing>;

/// One chat file's new spend.
fn ingest_file(
    chat: &std::path::Path,
    cursor_dir: &std::path::Path,
    config: &BudgetConfig,
    source: &'static str,
) -> Result<Vec<Spend>> {
    let mut per_model = PerModel::new(source);
    transcript::read_new(chat, cursor_dir, |cur: &mut Cursor, line| {
        if memchr::memmem::find(line, b"\"tokens\"").is_none() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if v.get("type").and_then(|t| t.as_str()) != Some("gemini") {
            return;
        }
        let (Some(id), Some(t)) = (
            v.get("id").and_then(|x| x.as_str()),
            v.get("tokens").filter(|t| t.is_object()),
        ) else {
            return; // its usage comes on a later line of the same message
        };
        if !cur.first_sight(id) {
            return;
        }
        let n = |k: &str| t.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        let tokens = gemini_tokens(
            n("input"),
            n("output"),
            n("cached"),
            n("thoughts"),
            n("tool"),
        );
        let model = v
            .get("model")
            .and_then(|m| m.as_str())
            .unwrap_or("unknown")
            .to_string();
        per_model.add_priced(config, &model, tokens);
    })?;
    Ok(per_model.into_vec())
}

/// Where `forge hooks install gemini` has the CLI write its local telemetry (`telemetry.outfile`
/// in the project's `.gemini/settings.json`), from the project's root. Inside `.gemini/`
/// because the CLI opens the file relative to its working folder, the project's root whenever
/// that settings file applies, and dies without a word when the file's folder is missing;
/// `.gemini/` is there whenever its settings are.
pub const TELEMETRY_FILE: &str = ".gemini/forge-telemetry.log";

/// The roles of calls a chat recording already holds (the session's chat, a subagent's chat):
/// their telemetry events are not booked again.
const CHAT_ROLES: [&str; 2] = ["main", "subagent"];

/// Spend read from the telemetry, by the session that made it (its `session.id`).
pub type SessionSpends = Vec<(Option<String>, Vec<Spend>)>;

/// Reads the events added to Gemini CLI's telemetry file since the last call and returns the
/// spend of every model call no chat recording holds (source `gemini-telemetry`), by session
/// and model. The file is one pretty-printed JSON value per event, spans and metrics among
/// them, written in batches by every session of the project: each event is read once, by
/// whichever session's hook comes first, and booked to the session it names.
pub fn ingest_telemetry(
    file: &std::path::Path,
    cursor_dir: &std::path::Path,
    config: &BudgetConfig,
) -> Result<SessionSpends> {
    let mut by_session: std::collections::BTreeMap<Option<String>, PerModel> = Default::default();
    transcript::read_new_entries(
        file,
        cursor_dir,
        |line| line == b"}\n",
        |cur: &mut Cursor, entry| {
            if memchr::memmem::find(entry, b"\"gemini_cli.api_response\"").is_none() {
                return;
            }
            let Ok(v) = serde_json::from_slice::<Value>(entry) else {
                return;
            };
            let Some(a) = v.get("attributes").filter(|a| {
                a.get("event.name").and_then(|n| n.as_str()) == Some("gemini_cli.api_response")
            }) else {
                return;
            };
            let s = |k: &str| a.get(k).and_then(|x| x.as_str());
            let role = s("role").unwrap_or("");
            if CHAT_ROLES.contains(&role) {
                return;
            }
            let model = s("model").unwrap_or("unknown").to_string();
            let session = s("session.id").map(str::to_string);
            let id = format!(
                "{}/{}/{}/{role}/{model}",
                session.as_deref().unwrap_or(""),
                s("event.timestamp").unwrap_or(""),
                v.get("hrTime").map(|t| t.to_string()).unwrap_or_default(),
            );
            if !cur.first_sight(&id) {
                return;
            }
            let n = |k: &str| a.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
            let tokens = gemini_tokens(
                n("input_token_count"),
                n("output_token_count"),
                n("cached_content_token_count"),
                n("thoughts_token_count"),
                n("tool_token_count"),
            );
            by_session
                .entry(session)
                .or_insert_with(|| PerModel::new("gemini-telemetry"))
                .add_priced(config, &model, tokens);
        },
    )?;
    Ok(by_session
        .into_iter()
        .map(|(s, m)| (s, m.into_vec()))
        .collect())
}
