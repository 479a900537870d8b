//! Claude Code's own records of what it spent: the session transcript (`transcript_path` in
//! every hook payload) and the transcripts of its subagents.
//!
//! Layout, as the real client (2.1.197) writes it: the session is
//! `~/.claude/projects/<project>/<session>.jsonl`; each subagent an `Agent` (formerly `Task`)
//! tool call starts is `…/<session>/subagents/agent-<id>.jsonl` beside a `.meta.json`, and its
//! `SubagentStop` hook payload names it as `agent_transcript_path`. The session transcript
//! holds none of the subagents' model calls, which can be most of a session's cost, so both are
//! read. Every assistant line carries the API's `usage`, including the cache writes split by
//! their time to live (`cache_creation.ephemeral_5m_input_tokens` / `…_1h_…`), which are
//! priced differently.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transcript::{self, PerModel};
use super::{Basis, BudgetConfig, Rate, Spend, Tokens, rate};
use crate::error::Result;

/// What Claude Code's reader keeps in the cursor beside the read position: what was booked for
/// the most recent messages, whose later lines may still raise it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Open {
    /// The last [`OPEN_KEEP`] messages, with what was booked: a later line of one books the
    /// difference when it raises the figure. (A cursor written before this field has none.)
    #[serde(default)]
    open: VecDeque<Booked>,
}

type Cursor = transcript::Cursor<Open>;

/// A message's lines are written together, as its content blocks finish: a message this many
/// messages back gets no more of them.
const OPEN_KEEP: usize = 64;

/// What was booked for one assistant message.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Booked {
    id: String,
    /// Output tokens booked: the most any of its lines reported, and never fewer than the floor
    /// from its content ([`content_chars`] / 4). On slow streams Claude Code writes a
    /// placeholder (`output_tokens: 1`) on the early lines and the real figure on a later one.
    out: u64,
    /// Characters of content its lines carried.
    chars: u64,
    /// USD booked.
    usd: f64,
    /// The client's own cost (`costUSD` on a line) for a model Forge has no price of, the
    /// largest given, with the output tokens of the line that gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client: Option<(f64, u64)>,
    /// The `uuid`s of its lines already read: a line seen twice counts once.
    lines: Vec<String>,
}

/// Characters of what the model wrote in a message's content (text, thinking, tool-call input):
/// a floor for its output tokens (about 4 characters a token) when the usage on the line is a
/// placeholder.
fn content_chars(content: &Value) -> u64 {
    let n = |s: &str| s.chars().count() as u64;
    match content {
        Value::String(s) => n(s),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(|t| t.as_str()) {
                Some("text") => b.get("text").and_then(|x| x.as_str()).map_or(0, n),
                Some("thinking") => b.get("thinking").and_then(|x| x.as_str()).map_or(0, n),
                Some("tool_use") => b.get("input").map_or(0, |i| n(&i.to_string())),
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// Characters per output token, for the floor.
const CHARS_PER_TOKEN: u64 = 4;

/// The subagent transcripts of a session transcript: `<session>/subagents/*.jsonl` beside
/// `<session>.jsonl`, in name order.
pub fn subagent_transcripts(transcript: &Path) -> Vec<PathBuf> {
    transcript::jsonl_files(&transcript.with_extension("").join("subagents"))
}

/// Reads what was added to a Claude Code transcript and to its subagents' transcripts since the
/// last call (never a whole file again) and returns their spend: one record per model, the
/// session's as `claude-transcript`, its subagents' as `claude-subagent`. Read positions and
/// recent message ids live in `cursor_dir`, one cursor per file.
pub fn ingest_transcript(
    transcript: &Path,
    cursor_dir: &Path,
    config: &BudgetConfig,
) -> Result<Vec<Spend>> {
    let mut spends = ingest_file(transcript, cursor_dir, config, "claude-transcript")?;
    let mut sub = PerModel::new("claude-subagent");
    for f in subagent_transcripts(transcript) {
        sub.extend(ingest_file(&f, cursor_dir, config, "claude-subagent")?);
    }
    spends.extend(sub.into_vec());
    Ok(spends)
}

/// The token counts of one assistant message's `usage`.
fn usage_tokens(u: &Value) -> Tokens {
    let n = |k: &str| u.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    let ttl = |k: &str| {
        u.get("cache_creation")
            .and_then(|c| c.get(k))
            .and_then(|x| x.as_u64())
            .unwrap_or(0)
    };
    let (five, hour) = (
        ttl("ephemeral_5m_input_tokens"),
        ttl("ephemeral_1h_input_tokens"),
    );
    let cache_write = n("cache_creation_input_tokens").max(five + hour);
    Tokens {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_write,
        cache_write_1h: hour.min(cache_write),
        cache_read: n("cache_read_input_tokens"),
    }
}

fn ingest_file(
    transcript: &Path,
    cursor_dir: &Path,
    config: &BudgetConfig,
    source: &'static str,
) -> Result<Vec<Spend>> {
    let mut per_model = PerModel::new(source);
    let mut rates: BTreeMap<String, Rate> = BTreeMap::new();
    transcript::read_new(transcript, cursor_dir, |cur: &mut Cursor, line| {
        if memchr::memmem::find(line, b"\"usage\"").is_none() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if v.get("type").and_then(|t| t.as_str()) != Some("assistant") {
            return;
        }
        let msg = &v["message"];
        let Some(u) = msg.get("usage") else { return };
        let model = msg
            .get("model")
            .and_then(|x| x.as_str())
            .unwrap_or("unknown")
            .to_string();
        let r = rates
            .entry(model.clone())
            .or_insert_with(|| rate(config, Some(&model)));
        let l = Line {
            id: format!(
                "{}/{}",
                msg.get("id").and_then(|x| x.as_str()).unwrap_or(""),
                v.get("requestId").and_then(|x| x.as_str()).unwrap_or("")
            ),
            uuid: v.get("uuid").and_then(|x| x.as_str()).map(str::to_string),
            tokens: usage_tokens(u),
            chars: content_chars(&msg["content"]),
            // The client's figure, where Forge has no price of its own for the model.
            client: if r.basis == Basis::Listed {
                None
            } else {
                v.get("costUSD").and_then(|x| x.as_f64())
            },
        };
        if let Some(s) = book(cur, &l, r) {
            per_model.add(&model, s);
        }
    })?;
    Ok(per_model.into_vec())
}

/// What one assistant line of a transcript says.
struct Line {
    /// `message.id` + `requestId`.
    id: String,
    uuid: Option<String>,
    tokens: Tokens,
    chars: u64,
    client: Option<f64>,
}

/// Books one line: all of a message not counted before, or what a later line of a message
/// counted before adds to it (the raised output figure, never less than the content's
/// floor). `None` when it adds nothing.
fn book(cur: &mut Cursor, l: &Line, r: &Rate) -> Option<Spend> {
    let out_usd = |tokens: u64| tokens as f64 * r.price.output / 1e6;
    if let Some(b) = cur.extra.open.iter_mut().find(|b| b.id == l.id) {
        if let Some(u) = &l.uuid {
            if b.lines.contains(u) {
                return None;
            }
            b.lines.push(u.clone());
        }
        b.chars += l.chars;
        let out = b.out.max(l.tokens.output).max(b.chars / CHARS_PER_TOKEN);
        if let Some(c) = l.client
            && b.client.is_none_or(|(had, _)| c > had)
        {
            b.client = Some((c, l.tokens.output));
        }
        let usd = match b.client {
            Some((c, o)) => (c + out_usd(out.saturating_sub(o))).max(b.usd),
            None => b.usd + out_usd(out - b.out),
        };
        let (d_out, d_usd) = (out - b.out, usd - b.usd);
        b.out = out;
        b.usd = usd;
        if d_out == 0 && d_usd <= 0.0 {
            return None;
        }
        return Some(Spend {
            source: String::new(),
            model: None,
            tokens: Tokens {
                output: d_out,
                ..Tokens::default()
            },
            usd: d_usd,
            estimate: r
                .estimate()
                .filter(|_| b.client.is_none_or(|(_, o)| out > o)),
        });
    }
    if !cur.first_sight(&l.id) {
        return None; // counted long ago: no later line can still belong to it
    }
    let mut t = l.tokens;
    t.output = t.output.max(l.chars / CHARS_PER_TOKEN);
    let (usd, estimate) = match l.client {
        Some(c) => (
            c + out_usd(t.output - l.tokens.output),
            r.estimate().filter(|_| t.output > l.tokens.output),
        ),
        None => (r.cost(&t), r.estimate()),
    };
    if cur.extra.open.len() == OPEN_KEEP {
        cur.extra.open.pop_front();
    }
    cur.extra.open.push_back(Booked {
        id: l.id.clone(),
        out: t.output,
        chars: l.chars,
        usd,
        client: l.client.map(|c| (c, l.tokens.output)),
        lines: l.uuid.iter().cloned().collect(),
    });
    Some(Spend {
        source: String::new(),
        model: None,
        tokens: t,
        usd,
        estimate,
    })
}
