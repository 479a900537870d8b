//! Codex CLI's own records of what it spent: the `codex exec --json` event stream and the
//! session's rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`, the `transcript_path`
//! of every hook payload).
//!
//! Both carry the Responses API's usage in Codex's words, as 0.169.0 and 0.171.0 write it:
//! `input_tokens` includes `cached_input_tokens`, and `output_tokens` includes
//! `reasoning_output_tokens` (`total_tokens` is their sum). The rollout carries the thread's
//! running total twice per model response: in a `token_usage_record` line
//! (`thread_token_usage`), written as the response completes, before its tool call runs, and in
//! a `token_count` event (`info.total_token_usage`), written only after the tool's output — too
//! late for that call's PostToolUse hook. Its `turn_context` lines name the model.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transcript::{self, PerModel};
use super::{BudgetConfig, Spend, Tokens, price};
use crate::error::Result;

/// Forge's token counts of one Codex `usage` object (a `turn.completed`'s, or a rollout's
/// `total_token_usage`).
fn usage_tokens(u: &Value) -> Tokens {
    let n = |k: &str| u.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    let cached = n("cached_input_tokens");
    Tokens {
        input: n("input_tokens").saturating_sub(cached),
        // Reasoning is a part of the output, not more of it.
        output: n("output_tokens"),
        cache_write: n("cache_write_input_tokens"),
        cache_write_1h: 0,
        cache_read: cached,
    }
}

/// Spend from `codex exec --json` output (JSONL): the `usage` of every `turn.completed`. Codex
/// does not name the model in this stream; `model` comes from the caller.
pub fn from_codex_jsonl(text: &str, model: Option<&str>, config: &BudgetConfig) -> Vec<Spend> {
    let mut t = Tokens::default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(|x| x.as_str()) != Some("turn.completed") {
            continue;
        }
        t.add(&usage_tokens(&v["usage"]));
    }
    if t.total() == 0 {
        return vec![];
    }
    let (usd, estimate) = price(config, model, &t);
    vec![Spend {
        source: "codex-json".into(),
        model: model.map(str::to_string),
        usd,
        estimate,
        tokens: t,
    }]
}

/// What the rollout reader keeps beside the read position: the running total booked so far and
/// the model of the latest turn (a later call may start reading after its `turn_context`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Thread {
    #[serde(default)]
    total: Tokens,
    #[serde(default)]
    model: Option<String>,
}

type Cursor = transcript::Cursor<Thread>;

/// Reads what was added to a Codex rollout since the last call and returns its spend, one
/// record per model (`codex-rollout`): each running total (a `token_usage_record`'s or a
/// `token_count`'s) books how far it moved past the total already booked. A total that is the
/// same or lower — the other line of the same response, a line read again after the file was
/// rewritten — books nothing, so nothing is counted twice.
pub fn ingest_rollout(
    rollout: &std::path::Path,
    cursor_dir: &std::path::Path,
    config: &BudgetConfig,
) -> Result<Vec<Spend>> {
    let mut per_model = PerModel::new("codex-rollout");
    transcript::read_new(rollout, cursor_dir, |cur: &mut Cursor, line| {
        if ["token_usage", "token_count", "turn_context"]
            .iter()
            .all(|k| memchr::memmem::find(line, k.as_bytes()).is_none())
        {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let p = &v["payload"];
        match v.get("type").and_then(|t| t.as_str()) {
            Some("turn_context") => {
                if let Some(m) = p.get("model").and_then(|m| m.as_str()) {
                    cur.extra.model = Some(m.to_string());
                }
            }
            Some(kind @ ("event_msg" | "token_usage_record")) => {
                let total = match kind {
                    "token_usage_record" => p.get("thread_token_usage"),
                    _ if p["type"] == "token_count" => p.pointer("/info/total_token_usage"),
                    _ => None,
                };
                // A rate-limit update's `token_count` carries no usage.
                let Some(total) = total.filter(|t| t.is_object()) else {
                    return;
                };
                let now = usage_tokens(total);
                let was = cur.extra.total;
                let d = Tokens {
                    input: now.input.saturating_sub(was.input),
                    output: now.output.saturating_sub(was.output),
                    cache_write: now.cache_write.saturating_sub(was.cache_write),
                    cache_write_1h: 0,
                    cache_read: now.cache_read.saturating_sub(was.cache_read),
                };
                cur.extra.total = Tokens {
                    input: now.input.max(was.input),
                    output: now.output.max(was.output),
                    cache_write: now.cache_write.max(was.cache_write),
                    cache_write_1h: 0,
                    cache_read: now.cache_read.max(was.cache_read),
                };
                if d.total() == 0 {
                    return;
                }
                let model = cur.extra.model.clone().unwrap_or_else(|| "unknown".into());
                per_model.add_priced(config, &model, d);
            }
            _ => {}
        }
    })?;
    Ok(per_model.into_vec())
}
