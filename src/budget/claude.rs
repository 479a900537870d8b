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
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{BudgetConfig, Spend, Tokens, price};
use crate::error::{Error, Result};
use crate::state::{self, StateDoc};

/// Where a transcript was read up to, and the message ids already counted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Cursor {
    path: String,
    offset: u64,
    /// `message.id` + `requestId` of the most recent assistant messages: Claude Code writes one
    /// message with several content blocks as several lines repeating the same usage.
    seen: VecDeque<String>,
}

const SEEN_KEEP: usize = 4096;

impl StateDoc for Cursor {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
    fn render(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The subagent transcripts of a session transcript: `<session>/subagents/*.jsonl` beside
/// `<session>.jsonl`, in name order.
pub fn subagent_transcripts(transcript: &Path) -> Vec<PathBuf> {
    let dir = transcript.with_extension("").join("subagents");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    files
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
    let mut sub: BTreeMap<String, Tokens> = BTreeMap::new();
    for f in subagent_transcripts(transcript) {
        for s in ingest_file(&f, cursor_dir, config, "claude-subagent")? {
            sub.entry(s.model.unwrap_or_default())
                .or_default()
                .add(&s.tokens);
        }
    }
    spends.extend(sub.into_iter().map(|(model, t)| Spend {
        source: "claude-subagent".into(),
        usd: price(config, Some(&model), &t),
        model: Some(model),
        tokens: t,
    }));
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
    source: &str,
) -> Result<Vec<Spend>> {
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        transcript.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let cursor_path = cursor_dir.join(format!("{key}.json"));
    // Nothing new (the common case for a finished subagent): no locked rewrite of the cursor.
    // A cursor that does not load falls through to the update, which reports it.
    let len = std::fs::metadata(transcript).map(|m| m.len()).ok();
    if let (Ok(Some(cur)), Some(len)) = (state::load::<Cursor>(&cursor_path, ""), len)
        && cur.offset == len
    {
        return Ok(Vec::new());
    }
    state::update(
        &cursor_path,
        "Delete it to re-read the transcript from the start.",
        |cur: Option<Cursor>| {
            let mut cur = cur.unwrap_or_else(|| Cursor {
                path: transcript.display().to_string(),
                ..Cursor::default()
            });
            let mut file = std::fs::File::open(transcript).map_err(|e| {
                Error::io(
                    format!("cannot open the transcript {}", transcript.display()),
                    e,
                )
            })?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if len < cur.offset {
                // Rewritten or truncated: start over, keeping the ids already counted.
                cur.offset = 0;
            }
            file.seek(SeekFrom::Start(cur.offset))
                .map_err(|e| Error::io(format!("cannot read {}", transcript.display()), e))?;
            let mut reader = BufReader::new(file.take(len - cur.offset));
            let mut per_model: BTreeMap<String, Tokens> = BTreeMap::new();
            let mut line = Vec::new();
            loop {
                line.clear();
                let n = reader
                    .read_until(b'\n', &mut line)
                    .map_err(|e| Error::io(format!("cannot read {}", transcript.display()), e))?;
                if n == 0 || line.last() != Some(&b'\n') {
                    break; // an incomplete last line is read next time
                }
                cur.offset += n as u64;
                if memchr::memmem::find(&line, b"\"usage\"").is_none() {
                    continue;
                }
                let Ok(v) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                if v.get("type").and_then(|t| t.as_str()) != Some("assistant") {
                    continue;
                }
                let msg = &v["message"];
                let Some(u) = msg.get("usage") else { continue };
                let id = format!(
                    "{}/{}",
                    msg.get("id").and_then(|x| x.as_str()).unwrap_or(""),
                    v.get("requestId").and_then(|x| x.as_str()).unwrap_or("")
                );
                if cur.seen.contains(&id) {
                    continue;
                }
                if cur.seen.len() == SEEN_KEEP {
                    cur.seen.pop_front();
                }
                cur.seen.push_back(id);
                let model = msg
                    .get("model")
                    .and_then(|x| x.as_str())
                    .unwrap_or("unknown")
                    .to_string();
                per_model.entry(model).or_default().add(&usage_tokens(u));
            }
            let spends = per_model
                .into_iter()
                .map(|(model, t)| Spend {
                    source: source.into(),
                    usd: price(config, Some(&model), &t),
                    model: Some(model),
                    tokens: t,
                })
                .collect();
            Ok((cur, spends))
        },
    )
}
