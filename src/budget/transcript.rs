//! Reading an agent's own running record of a session — a JSONL file the client appends to as it
//! works (Claude Code's transcript, Gemini CLI's chat recording, Codex CLI's rollout) — from
//! where the last hook call left it, never whole again, with the read position and the ids
//! already counted kept in a cursor file. What a line means, and so what it costs, is left to
//! each client's file (`claude.rs`, `gemini.rs`, `codex.rs`).

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::Spend;
use crate::error::{Error, Result};
use crate::state::{self, StateDoc};

/// Where a record was read up to, the ids of the most recent entries already counted, and what
/// else its client's reader keeps between calls (`extra`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Cursor<X> {
    pub path: String,
    pub offset: u64,
    /// Ids of the entries counted, most recent last: a client that writes one entry as several
    /// lines (Claude Code's content blocks, Gemini CLI's message updates) repeats its id.
    #[serde(default)]
    pub seen: VecDeque<String>,
    #[serde(flatten)]
    pub extra: X,
}

const SEEN_KEEP: usize = 4096;

impl<X> Cursor<X> {
    /// Whether `id` is new, noting it as seen. An id this many entries back is forgotten: no
    /// client rewrites an entry that old.
    pub fn first_sight(&mut self, id: &str) -> bool {
        if self.seen.iter().any(|s| s == id) {
            return false;
        }
        if self.seen.len() == SEEN_KEEP {
            self.seen.pop_front();
        }
        self.seen.push_back(id.to_string());
        true
    }
}

impl<X: Serialize + DeserializeOwned> StateDoc for Cursor<X> {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
    fn render(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Calls `on_line` with every complete line added to `record` since the last call (an
/// incomplete last line waits for the next), under a lock on the cursor, which it then saves.
/// Cursors live in `cursor_dir`, one per file. A file that shrank was rewritten: it is read
/// again from the start, the ids already counted kept.
pub(super) fn read_new<X>(
    record: &Path,
    cursor_dir: &Path,
    on_line: impl FnMut(&mut Cursor<X>, &[u8]),
) -> Result<()>
where
    X: Default + Serialize + DeserializeOwned,
{
    read_new_entries(record, cursor_dir, |_| true, on_line)
}

/// An entry longer than this is not one a client wrote: it is passed over, unread.
const ENTRY_MAX: usize = 16 << 20;

/// [`read_new`] for a record whose entries span several lines (Gemini CLI's telemetry: one
/// pretty-printed JSON value per entry): `ends` says whether a line is an entry's last, and
/// `on_entry` gets each complete entry once. The read position only ever stops between
/// entries, so an entry the client is still writing waits, whole, for the next call.
pub(super) fn read_new_entries<X>(
    record: &Path,
    cursor_dir: &Path,
    ends: impl Fn(&[u8]) -> bool,
    mut on_entry: impl FnMut(&mut Cursor<X>, &[u8]),
) -> Result<()>
where
    X: Default + Serialize + DeserializeOwned,
{
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        record.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let cursor_path = cursor_dir.join(format!("{key}.json"));
    // Nothing new (the common case for a finished subagent): no locked rewrite of the cursor.
    // A cursor that does not load falls through to the update, which reports it.
    let len = std::fs::metadata(record).map(|m| m.len()).ok();
    if let (Ok(Some(cur)), Some(len)) = (state::load::<Cursor<X>>(&cursor_path, ""), len)
        && cur.offset == len
    {
        return Ok(());
    }
    state::update(
        &cursor_path,
        "Delete it to re-read the transcript from the start.",
        |cur: Option<Cursor<X>>| {
            let mut cur = cur.unwrap_or_else(|| Cursor {
                path: record.display().to_string(),
                offset: 0,
                seen: VecDeque::new(),
                extra: X::default(),
            });
            let mut file = std::fs::File::open(record).map_err(|e| {
                Error::io(
                    format!("cannot open the transcript {}", record.display()),
                    e,
                )
            })?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if len < cur.offset {
                cur.offset = 0;
            }
            file.seek(SeekFrom::Start(cur.offset))
                .map_err(|e| Error::io(format!("cannot read {}", record.display()), e))?;
            let mut reader = BufReader::new(file.take(len - cur.offset));
            let mut entry = Vec::new();
            loop {
                let start = entry.len();
                let n = reader
                    .read_until(b'\n', &mut entry)
                    .map_err(|e| Error::io(format!("cannot read {}", record.display()), e))?;
                if n == 0 || entry.last() != Some(&b'\n') {
                    break;
                }
                if ends(&entry[start..]) {
                    cur.offset += entry.len() as u64;
                    on_entry(&mut cur, &entry);
                    entry.clear();
                } else if entry.len() > ENTRY_MAX {
                    cur.offset += entry.len() as u64;
                    entry.clear();
                }
            }
            Ok((cur, ()))
        },
    )
}

/// Spend of one record, summed per model: what a hook call books is one record per model.
pub(super) struct PerModel {
    source: &'static str,
    models: BTreeMap<String, Spend>,
}

impl PerModel {
    pub fn new(source: &'static str) -> PerModel {
        PerModel {
            source,
            models: BTreeMap::new(),
        }
    }

    /// Adds `s` (whose `source` and `model` are set here) to `model`'s sum.
    pub fn add(&mut self, model: &str, s: Spend) {
        match self.models.get_mut(model) {
            Some(acc) => merge(acc, &s),
            None => {
                self.models.insert(
                    model.to_string(),
                    Spend {
                        source: self.source.into(),
                        model: Some(model.to_string()),
                        ..s
                    },
                );
            }
        }
    }

    /// Adds `tokens` of `model`, priced by the table in force (`budget.prices` first).
    pub fn add_priced(&mut self, config: &super::BudgetConfig, model: &str, tokens: super::Tokens) {
        let r = super::rate(config, Some(model));
        self.add(
            model,
            Spend {
                source: String::new(),
                model: None,
                tokens,
                usd: r.cost(&tokens),
                estimate: r.estimate(),
            },
        );
    }

    /// Adds spends already attributed (their own `model`), as from another record.
    pub fn extend(&mut self, spends: Vec<Spend>) {
        for s in spends {
            let model = s.model.clone().unwrap_or_default();
            self.add(&model, s);
        }
    }

    pub fn into_vec(self) -> Vec<Spend> {
        self.models.into_values().collect()
    }
}

/// Adds `s` to `acc`, spend of the same model.
fn merge(acc: &mut Spend, s: &Spend) {
    acc.tokens.add(&s.tokens);
    acc.usd += s.usd;
    if acc.estimate.is_none() {
        acc.estimate.clone_from(&s.estimate);
    }
}

/// The `.jsonl` files directly in `dir`, in name order (none when it does not exist).
pub(super) fn jsonl_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    files
}
