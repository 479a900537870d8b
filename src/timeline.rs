//! The session timeline: one append-only JSONL log per session
//! (`.forge/sessions/<session>/timeline.jsonl`), every line an attributed event in a SHA-256
//! hash chain, so an edited, removed or reordered line is detected.
//!
//! A line is written in one fixed field order and ends with `"prev":"<64 hex>","hash":"<64 hex>"}`;
//! `hash` is the SHA-256 of the line with `,"hash":"…"` removed, i.e. of the exact bytes before
//! it plus `}`. Checking a chain therefore needs no JSON parser and no re-serialisation: it is
//! byte-exact and runs at hashing speed.
//!
//! Appends take an exclusive lock on the file, read only its tail (for `seq` and `prev`) and
//! write the line with one `write` — concurrent agents never interleave or break the chain, and
//! the cost does not grow with the log.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::repo::Project;

pub const TIMELINE_FILE: &str = "timeline.jsonl";
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// `,"prev":"<64>","hash":"<64>"}` — the fixed tail of every line.
const TAIL_LEN: usize = 9 + 64 + 10 + 64 + 2;

/// One event, as stored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Event {
    pub ts: String,
    pub seq: u64,
    pub session: String,
    pub change: Option<String>,
    pub actor: String,
    pub kind: String,
    pub data: Value,
    pub prev: String,
    pub hash: String,
}

/// Who records, where: the session and actor every event from this process carries.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub root: PathBuf,
    pub session: String,
    pub actor: String,
}

impl Recorder {
    pub fn new(project: &Project, session: &str, actor: &str) -> Recorder {
        Recorder {
            root: project.root.clone(),
            session: sanitize(session),
            actor: actor.to_string(),
        }
    }

    /// The recorder for a command a person (or a script) runs: session from `FORGE_SESSION`,
    /// else one per terminal session and day; actor from `FORGE_ACTOR`, else `human:<git user>`.
    pub fn for_cli(project: &Project) -> Recorder {
        let session = std::env::var("FORGE_SESSION")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| {
                // SAFETY: getsid(0) only reads the calling process's session id.
                let sid = unsafe { nix::libc::getsid(0) };
                let day = jiff::Timestamp::now().strftime("%Y%m%d").to_string();
                format!("term-{day}-{sid}")
            });
        let actor = std::env::var("FORGE_ACTOR")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| {
                if let Some(m) = crate::caller::agent_marker() {
                    format!("agent:{}", m.agent)
                } else {
                    let who = crate::git::user_name_from_files(&project.root)
                        .or_else(|| std::env::var("USER").ok())
                        .unwrap_or_else(|| "unknown".into());
                    format!("human:{who}")
                }
            });
        Recorder::new(project, &session, &actor)
    }

    pub fn path(&self) -> PathBuf {
        session_path(&self.root, &self.session)
    }

    /// Appends one event; returns it as written.
    pub fn record(&self, change: Option<&str>, kind: &str, data: Value) -> Result<Event> {
        append(&self.path(), &self.session, change, &self.actor, kind, data)
    }

    /// Like [`Recorder::record`], for callers whose own work must not fail because the log
    /// could not be written: the failure is reported on stderr instead.
    pub fn record_or_warn(&self, change: Option<&str>, kind: &str, data: Value) {
        if let Err(e) = self.record(change, kind, data) {
            eprintln!(
                "forge: warning: could not write the timeline {}: {e}",
                self.path().display()
            );
        }
    }
}

/// Session ids become folder names: keep them to a safe alphabet.
pub fn sanitize(session: &str) -> String {
    let s: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() { "unnamed".into() } else { s }
}

pub fn sessions_dir(root: &Path) -> PathBuf {
    root.join(".forge/sessions")
}

pub fn session_path(root: &Path, session: &str) -> PathBuf {
    sessions_dir(root)
        .join(sanitize(session))
        .join(TIMELINE_FILE)
}

fn now() -> String {
    stamp(jiff::Timestamp::now())
}

/// An instant as `ts`: UTC to the microsecond, always six digits after the point, so that stamps
/// sort as text the way they do in time (`…:38.400000Z` before `…:38.450000Z`; trimmed, `…:38.4Z`
/// sorted after it).
fn stamp(t: jiff::Timestamp) -> String {
    let t = t.round(jiff::Unit::Microsecond).unwrap_or(t);
    format!(
        "{}.{:06}Z",
        t.strftime("%Y-%m-%dT%H:%M:%S"),
        t.subsec_microsecond()
    )
}

/// Sorts events into the merged order: by instant, then session, then `seq`. A stamp as
/// [`stamp`] writes it sorts as text the way it does in time; logs written before that hold
/// trimmed fractions (`…:38.4Z`), which are brought to the fixed width first. A stamp that does
/// not parse (a damaged line) sorts first, where `verify` points at it anyway.
fn merge_order<T>(events: &mut Vec<T>, key: impl Fn(&T) -> (&str, &str, u64)) {
    let fixed = |ts: &str| {
        let b = ts.as_bytes();
        b.len() == FIXED_WIDTH && b[10] == b'T' && b[19] == b'.' && b[26] == b'Z'
    };
    if events.iter().all(|e| fixed(key(e).0)) {
        events.sort_by(|a, b| key(a).cmp(&key(b)));
        return;
    }
    let mut keyed: Vec<(Option<String>, T)> = events
        .drain(..)
        .map(|e| {
            let ts = key(&e).0;
            let k = if fixed(ts) {
                Some(ts.to_string())
            } else {
                ts.parse().ok().map(stamp)
            };
            (k, e)
        })
        .collect();
    keyed.sort_by(|(ta, a), (tb, b)| {
        let ((_, sa, qa), (_, sb, qb)) = (key(a), key(b));
        (ta, sa, qa).cmp(&(tb, sb, qb))
    });
    events.extend(keyed.into_iter().map(|(_, e)| e));
}

/// The length of a stamp as [`stamp`] writes it: `2026-12-04T05:43:38.400000Z`.
const FIXED_WIDTH: usize = 27;

fn hex(bytes: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(H[(b >> 4) as usize] as char);
        s.push(H[(b & 15) as usize] as char);
    }
    s
}

/// The line for an event: fields in a fixed order, then the hash of everything before it.
#[allow(clippy::too_many_arguments)]
fn render(
    ts: &str,
    seq: u64,
    session: &str,
    change: Option<&str>,
    actor: &str,
    kind: &str,
    data: &Value,
    prev: &str,
) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let change = change.map_or("null".to_string(), q);
    let data = serde_json::to_string(data).unwrap_or_else(|_| "null".into());
    let body = format!(
        "{{\"ts\":{},\"seq\":{seq},\"session\":{},\"change\":{change},\"actor\":{},\"kind\":{},\"data\":{data},\"prev\":\"{prev}\"",
        q(ts),
        q(session),
        q(actor),
        q(kind)
    );
    let mut h = Sha256::new();
    h.update(body.as_bytes());
    h.update(b"}");
    let hash = hex(&h.finalize());
    format!("{body},\"hash\":\"{hash}\"}}\n")
}

/// `prev` and `hash` of a stored line, read from its fixed tail; `None` if the tail is damaged.
fn tail_fields(line: &[u8]) -> Option<(&str, &str)> {
    if line.len() < TAIL_LEN + 2 {
        return None;
    }
    let tail = std::str::from_utf8(&line[line.len() - TAIL_LEN..]).ok()?;
    let prev = tail.strip_prefix(",\"prev\":\"")?.get(..64)?;
    let rest = tail.get(9 + 64..)?;
    let hash = rest.strip_prefix("\",\"hash\":\"")?.get(..64)?;
    if rest.get(10 + 64..)? != "\"}" {
        return None;
    }
    Some((prev, hash))
}

/// `seq` of a stored line, read from its fixed head (`{"ts":"…","seq":N,`).
fn head_seq(line: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(&line[..line.len().min(120)]).ok()?;
    let i = s.find(",\"seq\":")? + 7;
    let end = s[i..].find(',')? + i;
    s[i..end].parse().ok()
}

/// Whether a line's hash matches its bytes.
fn hash_ok(line: &[u8], hash: &str) -> bool {
    let body = &line[..line.len() - (TAIL_LEN - 9 - 64 - 1)]; // up to and including prev's quote
    let mut h = Sha256::new();
    h.update(body);
    h.update(b"}");
    hex(&h.finalize()) == hash
}

/// Appends an event to the timeline at `path` under an exclusive lock.
pub fn append(
    path: &Path,
    session: &str,
    change: Option<&str>,
    actor: &str,
    kind: &str,
    data: Value,
) -> Result<Event> {
    debug_assert!(
        is_kind(kind),
        "timeline kind `{kind}` is not in timeline::KINDS: add it there (`forge timeline --kind` accepts only those)"
    );
    let open = || {
        OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
    };
    // The session folder exists on every append but the first: create it only when needed.
    let mut file = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
            }
            open()
        }
        r => r,
    }
    .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    crate::state::lock_file(&file, path)?;
    let (last, torn) = read_tail(&mut file)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let (mut seq, mut prev) = match &last {
        Some((s, h)) => (s + 1, h.clone()),
        None => (1, GENESIS.to_string()),
    };
    let mut out = String::new();
    if let Some(torn) = torn {
        // A writer was killed mid-line. End the fragment, and say so in the chain: nothing is
        // dropped silently, and verification can tell damage from tampering.
        out.push('\n');
        let mut h = Sha256::new();
        h.update(&torn);
        let data = serde_json::json!({"torn_bytes": torn.len(), "torn_sha256": hex(&h.finalize())});
        let line = render(&now(), seq, session, None, "forge", "repair", &data, &prev);
        let (_, hash) = tail_fields(line.trim_end().as_bytes()).expect("rendered line");
        prev = hash.to_string();
        seq += 1;
        out.push_str(&line);
    }
    let ts = now();
    let line = render(&ts, seq, session, change, actor, kind, &data, &prev);
    let (_, hash) = tail_fields(line.trim_end().as_bytes())
        .map(|(p, h)| (p.to_string(), h.to_string()))
        .expect("rendered line");
    out.push_str(&line);
    file.write_all(out.as_bytes())
        .map_err(|e| Error::io(format!("cannot append to {}", path.display()), e))?;
    Ok(Event {
        ts,
        seq,
        session: session.to_string(),
        change: change.map(str::to_string),
        actor: actor.to_string(),
        kind: kind.to_string(),
        data,
        prev,
        hash,
    })
}

/// The position of the last `\n` in `bytes`. A plain loop rather than `memchr::memrchr`: the
/// window is a few KiB and the line usually short, while memchr's first call probes the CPU's
/// features (CPUID, which traps to the hypervisor on a VM) on every append of every process.
fn last_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().rposition(|&b| b == b'\n')
}

/// The last complete line's `(seq, hash)` and a torn trailing fragment, reading only the tail.
#[allow(clippy::type_complexity)]
fn read_tail(file: &mut File) -> std::io::Result<(Option<(u64, String)>, Option<Vec<u8>>)> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok((None, None));
    }
    // Events are short: a small window usually holds the last line; it grows when it does not.
    let mut window = 4 * 1024u64;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::with_capacity((len - start) as usize);
        Read::by_ref(file).take(len - start).read_to_end(&mut buf)?;
        let ends_clean = buf.last() == Some(&b'\n');
        let torn = if ends_clean {
            None
        } else {
            let from = last_newline(&buf).map_or(0, |i| i + 1);
            if from == 0 && start > 0 {
                window *= 4;
                continue;
            }
            Some(buf[from..].to_vec())
        };
        let complete_end = if ends_clean {
            buf.len() - 1
        } else {
            last_newline(&buf).unwrap_or(0)
        };
        if complete_end == 0 && !ends_clean {
            // The only newline in the window is its first byte: the last complete line lies
            // before the window.
            if start > 0 {
                window *= 4;
                continue;
            }
            return Ok((None, torn));
        }
        let line_start = match last_newline(&buf[..complete_end]) {
            Some(i) => i + 1,
            None if start == 0 => 0,
            None => {
                window *= 4;
                continue;
            }
        };
        let line = &buf[line_start..complete_end];
        let last = match (head_seq(line), tail_fields(line)) {
            (Some(seq), Some((_, hash))) => Some((seq, hash.to_string())),
            // A damaged last line: continue the chain from it anyway; `verify` reports it.
            _ => {
                let mut h = Sha256::new();
                h.update(line);
                Some((0, hex(&h.finalize())))
            }
        };
        return Ok((last, torn));
    }
}

/// What `forge timeline verify` found in one file.
#[derive(Debug, Clone, Serialize)]
pub struct ChainReport {
    pub path: String,
    pub events: u64,
    /// Torn lines that a later `repair` event accounts for.
    pub repaired: Vec<usize>,
    /// The first problem: line number (1-based) and what is wrong.
    pub error: Option<(usize, String)>,
}

/// Checks a timeline's chain line by line, reading it as a stream.
pub fn verify_file(path: &Path) -> Result<ChainReport> {
    let file =
        File::open(path).map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut report = ChainReport {
        path: path.display().to_string(),
        events: 0,
        repaired: vec![],
        error: None,
    };
    let mut prev = GENESIS.to_string();
    let mut prev_seq = 0u64;
    let mut line = Vec::with_capacity(1024);
    let mut n = 0usize;
    let mut pending_torn: Option<(usize, Vec<u8>)> = None;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        if read == 0 {
            break;
        }
        n += 1;
        let complete = line.last() == Some(&b'\n');
        let body = if complete {
            &line[..line.len() - 1]
        } else {
            &line[..]
        };
        let fail = |report: &mut ChainReport, msg: String| {
            report.error = Some((n, msg));
        };
        let (Some(seq), Some((p, h))) = (head_seq(body), tail_fields(body)) else {
            if !complete {
                fail(&mut report, "the last line is torn (a writer was killed mid-write); the next append will repair it".into());
                break;
            }
            pending_torn = Some((n, body.to_vec()));
            continue;
        };
        if let Some((torn_line, torn)) = pending_torn.take() {
            // Only a `repair` event that names the fragment's hash accounts for it.
            let mut hh = Sha256::new();
            hh.update(&torn);
            let want = hex(&hh.finalize());
            let is_repair = std::str::from_utf8(body)
                .is_ok_and(|s| s.contains("\"kind\":\"repair\"") && s.contains(&want));
            if !is_repair {
                fail(
                    &mut report,
                    format!("line {torn_line} is not a valid event (edited or corrupted)"),
                );
                break;
            }
            report.repaired.push(torn_line);
        }
        if !hash_ok(body, h) {
            fail(
                &mut report,
                "its hash does not match its content: the line was edited".into(),
            );
            break;
        }
        if p != prev {
            fail(&mut report, "its `prev` is not the hash of the line before: a line was removed, inserted or reordered".into());
            break;
        }
        if seq != prev_seq + 1 {
            fail(
                &mut report,
                format!(
                    "`seq` is {seq}, expected {}: lines were removed or reordered",
                    prev_seq + 1
                ),
            );
            break;
        }
        prev = h.to_string();
        prev_seq = seq;
        report.events += 1;
    }
    if report.error.is_none()
        && let Some((torn_line, _)) = pending_torn
    {
        report.error = Some((
            torn_line,
            "is not a valid event (edited or corrupted)".into(),
        ));
    }
    Ok(report)
}

/// Every session timeline in the project.
pub fn files(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = sessions_dir(root);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(format!("cannot list {}", dir.display()), e)),
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(TIMELINE_FILE))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// The kinds of event, each with what it records. `forge timeline --kind` accepts only these,
/// so a typo is an error rather than an empty answer; a new kind is added here.
pub const KINDS: &[(&str, &str)] = &[
    ("verify", "a verify verdict and its counts"),
    ("breaker", "a move of a change's circuit breaker"),
    ("guard", "a guard decision on an agent's tool call"),
    ("tool", "a tool call an agent made"),
    ("hook", "an agent session's start"),
    (
        "budget",
        "spend, a change of the limits, a model priced by estimate",
    ),
    ("note", "a person's note"),
    ("gate", "a gate result of `forge run`"),
    ("run", "a step of `forge run`"),
    ("agent", "an agent call of `forge run`"),
    ("repair", "a torn line ended by the next append"),
    (
        "undo",
        "`forge undo` put files and refs back as they were before a call",
    ),
    (
        "net",
        "a connection a sandboxed command asked Forge's egress proxy for, allowed or refused",
    ),
];

/// Whether `kind` is one of [`KINDS`].
pub fn is_kind(kind: &str) -> bool {
    KINDS.iter().any(|(k, _)| *k == kind)
}

/// Which events to read.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub change: Option<String>,
    pub session: Option<String>,
    pub kind: Option<String>,
    /// Events at or after this instant.
    pub since: Option<jiff::Timestamp>,
    /// Events before this instant.
    pub until: Option<jiff::Timestamp>,
}

impl Filter {
    /// Whether an event stamped `ts` falls in the time window. Compared as instants, not as
    /// text: `…:45Z` and `…:45.8Z` do not sort as text the way they do in time.
    fn in_window(&self, ts: &str) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Ok(t) = ts.parse::<jiff::Timestamp>() else {
            return false;
        };
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }
}

/// A matching event as its stored line, with the keys it is merged by. `forge timeline --json`
/// prints these lines as they are: no event is re-encoded, and memory holds only the text.
#[derive(Debug, Clone)]
pub struct RawEvent {
    pub ts: String,
    pub session: String,
    pub seq: u64,
    pub line: String,
}

/// The fields filters look at, borrowed from the line; `data` is skipped unparsed.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    ts: std::borrow::Cow<'a, str>,
    seq: u64,
    #[serde(borrow)]
    session: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    change: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// Like [`read`], but keeps the stored lines instead of parsed events.
pub fn read_lines(root: &Path, filter: &Filter) -> Result<Vec<RawEvent>> {
    let mut out = Vec::new();
    scan(root, filter, |line| {
        let Ok(h) = serde_json::from_slice::<Head>(line) else {
            return;
        };
        if filter
            .change
            .as_deref()
            .is_some_and(|c| h.change.as_deref() != Some(c))
            || filter.kind.as_deref().is_some_and(|k| h.kind != k)
            || !filter.in_window(&h.ts)
        {
            return;
        }
        let text = String::from_utf8_lossy(line).trim_end().to_string();
        out.push(RawEvent {
            ts: h.ts.into_owned(),
            session: h.session.into_owned(),
            seq: h.seq,
            line: text,
        });
    })?;
    merge_order(&mut out, |e| (&e.ts, &e.session, e.seq));
    Ok(out)
}

/// Calls `f` with every line of every selected session file that passes the substring
/// pre-screen.
fn scan(root: &Path, filter: &Filter, mut f: impl FnMut(&[u8])) -> Result<()> {
    let needle = filter
        .change
        .as_ref()
        .map(|c| {
            format!(
                "\"change\":{}",
                serde_json::to_string(c).unwrap_or_default()
            )
        })
        .or_else(|| {
            filter
                .kind
                .as_ref()
                .map(|k| format!("\"kind\":{}", serde_json::to_string(k).unwrap_or_default()))
        });
    let finder = needle
        .as_ref()
        .map(|n| memchr::memmem::Finder::new(n.as_bytes()).into_owned());
    for path in files(root)? {
        if let Some(s) = &filter.session
            && path
                .parent()
                .and_then(|p| p.file_name())
                .is_none_or(|n| n.to_string_lossy() != sanitize(s))
        {
            continue;
        }
        let file = File::open(&path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut line = Vec::with_capacity(1024);
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
            if n == 0 {
                break;
            }
            if finder.as_ref().is_some_and(|fd| fd.find(&line).is_none()) {
                continue;
            }
            f(&line);
        }
    }
    Ok(())
}

/// Reads the matching events of every session, merged in time order. Lines are pre-screened
/// with a substring search before any JSON is parsed, so filtering a large log costs about
/// what `grep` does.
pub fn read(root: &Path, filter: &Filter) -> Result<Vec<Event>> {
    let mut events = Vec::new();
    scan(root, filter, |line| {
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return;
        };
        if filter
            .change
            .as_ref()
            .is_some_and(|c| ev.change.as_deref() != Some(c.as_str()))
            || filter.kind.as_ref().is_some_and(|k| &ev.kind != k)
            || !filter.in_window(&ev.ts)
        {
            return;
        }
        events.push(ev);
    })?;
    merge_order(&mut events, |e| (&e.ts, &e.session, e.seq));
    Ok(events)
}

/// One line of text for an event, for the table view: agent text in it (a command, a reason, a
/// test name) is made inert, so no event can draw a line of its own on a person's terminal.
pub fn summary(e: &Event) -> String {
    crate::text::inert(&summary_raw(e), 400)
}

fn summary_raw(e: &Event) -> String {
    let d = &e.data;
    let s = |k: &str| d.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let u = |k: &str| d.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    match e.kind.as_str() {
        "verify" => format!(
            "{} — {} passed, {} failed, {} skipped",
            s("verdict"),
            u("passed"),
            u("failed"),
            u("skipped")
        ),
        "breaker" => format!(
            "{} — {}/{} consecutive failures{}",
            s("event"),
            u("consecutive_failures"),
            u("max_failures"),
            if d.get("open").and_then(|v| v.as_bool()) == Some(true) {
                ", OPEN"
            } else {
                ""
            }
        ),
        "guard" => format!(
            "{} [{}] {}: {}",
            s("decision"),
            s("rule"),
            s("tool"),
            crate::text::clip_words(&s("target"), 120)
        ),
        "net" => format!(
            "{} {}:{} ({}, {}){}",
            s("decision"),
            s("host"),
            u("port"),
            s("via"),
            s("profile"),
            if s("decision") == "refused" {
                format!(": not in {}", s("key"))
            } else if d.get("error").is_some() {
                format!(": {}", s("error"))
            } else {
                format!(" by `{}`", s("rule"))
            }
        ),
        "budget" if s("event") == "limits-changed" && d.get("key").is_some() => format!(
            "budget.{} {} → {} ({})",
            s("key"),
            d["from"],
            d["to"],
            s("by")
        ),
        "budget" if s("event") == "limits-changed" => {
            format!("limits changed: {} → {}", d["from"], d["to"])
        }
        "budget" if s("event") == "unpriced-model" => format!(
            "no price for model {}: add it under budget.prices",
            s("model")
        ),
        "budget" if s("event") == "estimated-price" => format!(
            "no price for model {}: priced as {} until budget.prices gives one",
            s("model"),
            s("like")
        ),
        "budget" => format!(
            "${:.4} {} ({} tokens) from {}",
            d.get("usd").and_then(|v| v.as_f64()).unwrap_or(0.0),
            s("model"),
            u("tokens"),
            s("source")
        ),
        "tool" => format!(
            "{}: {}",
            s("tool"),
            crate::text::clip_words(&s("target"), 120)
        ),
        "hook" => s("event"),
        "gate" => format!(
            "{} {} [{} w{} a{}]{}",
            if s("status") == "pass" { "✓" } else { "✗" },
            s("gate"),
            s("slice"),
            u("wave"),
            u("attempt"),
            d.pointer("/evidence/reason")
                .and_then(|r| r.as_str())
                .filter(|r| !r.is_empty())
                .map(|r| format!(" — {}", crate::text::clip_words(r, 120)))
                .unwrap_or_default()
        ),
        "run" => format!(
            "run {} {}{}",
            s("run"),
            s("event"),
            d.get("slice")
                .and_then(|v| v.as_str())
                .map(|v| format!(" {v}"))
                .unwrap_or_default()
        ),
        "agent" => format!(
            "{} [{} w{} a{}] exit {}, {} ms{}",
            s("role"),
            s("slice"),
            u("wave"),
            u("attempt"),
            d.get("exit_code")
                .map(|v| v.to_string())
                .unwrap_or_default(),
            u("duration_ms"),
            if d.get("timed_out").and_then(|v| v.as_bool()) == Some(true) {
                ", timed out"
            } else {
                ""
            }
        ),
        "note" => crate::text::clip_words(&s("text"), 120),
        "repair" => format!("repaired a torn line of {} bytes", u("torn_bytes")),
        _ => crate::text::clip_words(&d.to_string(), 100),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tl(dir: &Path) -> PathBuf {
        dir.join("s1/timeline.jsonl")
    }

    #[test]
    fn a_net_event_reads_as_its_decision_and_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = tl(dir.path());
        let line =
            |data: Value| summary(&append(&p, "s1", None, "human:ada", "net", data).unwrap());
        let base = serde_json::json!({"profile": "check", "host": "pypi.org", "port": 443,
            "via": "connect", "key": "sandbox.network.check.allow"});
        let with = |extra: Value| {
            let mut d = base.clone();
            d.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            d
        };
        assert_eq!(
            line(with(
                serde_json::json!({"decision": "allowed", "rule": "pypi.org"})
            )),
            "allowed pypi.org:443 (connect, check) by `pypi.org`"
        );
        assert_eq!(
            line(with(serde_json::json!({"decision": "refused"}))),
            "refused pypi.org:443 (connect, check): not in sandbox.network.check.allow"
        );
        assert_eq!(
            line(with(
                serde_json::json!({"decision": "allowed", "rule": "pypi.org", "error": "cannot resolve pypi.org"})
            )),
            "allowed pypi.org:443 (connect, check): cannot resolve pypi.org"
        );
    }

    #[test]
    fn appends_chain_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let p = tl(dir.path());
        for i in 0..5 {
            let e = append(
                &p,
                "s1",
                Some("checkout"),
                "human:ada",
                "verify",
                serde_json::json!({"i": i, "verdict": "FAIL"}),
            )
            .unwrap();
            assert_eq!(e.seq, i + 1);
        }
        let r = verify_file(&p).unwrap();
        assert_eq!((r.events, r.error.clone()), (5, None));
        // The hash is the SHA-256 of the line without its hash field, as `sha256sum` would see it.
        let first = std::fs::read_to_string(&p)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string();
        let ev: Event = serde_json::from_str(&first).unwrap();
        let body = first.replace(&format!(",\"hash\":\"{}\"", ev.hash), "");
        assert_eq!(hex(&Sha256::digest(body.as_bytes())), ev.hash);
        assert_eq!(ev.prev, GENESIS);
    }

    fn tamper(p: &Path, f: impl FnOnce(&mut Vec<String>)) {
        let text = std::fs::read_to_string(p).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        f(&mut lines);
        std::fs::write(p, lines.join("\n") + "\n").unwrap();
    }

    #[test]
    fn edits_removals_and_reorders_are_detected_at_their_line() {
        for (what, line) in [("edit", 3), ("delete", 3), ("swap", 2), ("insert", 3)] {
            let dir = tempfile::tempdir().unwrap();
            let p = tl(dir.path());
            for i in 0..5 {
                append(&p, "s1", None, "a", "guard", serde_json::json!({"i": i})).unwrap();
            }
            tamper(&p, |l| match what {
                "edit" => l[2] = l[2].replace("\"i\":2", "\"i\":7"),
                "delete" => {
                    l.remove(2);
                }
                "swap" => l.swap(1, 2),
                _ => {
                    let copy = l[1].clone();
                    l.insert(2, copy);
                }
            });
            let r = verify_file(&p).unwrap();
            assert_eq!(r.error.as_ref().map(|e| e.0), Some(line), "{what}: {r:?}");
        }
    }

    #[test]
    fn torn_last_line_is_reported_then_repaired_by_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let p = tl(dir.path());
        for i in 0..3 {
            append(&p, "s1", None, "a", "guard", serde_json::json!({"i": i})).unwrap();
        }
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"ts\":\"2026-11-30T00:00:00Z\",\"seq\":4,\"sess")
            .unwrap();
        drop(f);
        let r = verify_file(&p).unwrap();
        assert_eq!(r.error.as_ref().map(|e| e.0), Some(4));
        assert!(r.error.unwrap().1.contains("torn"));
        let e = append(&p, "s1", None, "a", "guard", serde_json::json!({"i": 3})).unwrap();
        assert_eq!(e.seq, 5, "repair event took seq 4");
        let r = verify_file(&p).unwrap();
        assert_eq!(r.error, None, "{r:?}");
        assert_eq!(r.repaired, vec![4]);
        assert_eq!(r.events, 5);
    }

    #[test]
    fn a_torn_tail_whose_newline_sits_at_the_window_edge_keeps_the_chain() {
        // The read window is 4 KiB: 4,095 torn bytes put the last newline at its first byte.
        for torn in [4094usize, 4095, 4096, 20000] {
            let dir = tempfile::tempdir().unwrap();
            let p = tl(dir.path());
            for i in 0..2 {
                append(&p, "s1", None, "a", "note", serde_json::json!({"i": i})).unwrap();
            }
            let mut f = OpenOptions::new().append(true).open(&p).unwrap();
            f.write_all(&vec![b'x'; torn]).unwrap();
            drop(f);
            append(&p, "s1", None, "a", "note", serde_json::json!({"i": 2})).unwrap();
            let r = verify_file(&p).unwrap();
            assert_eq!(r.error, None, "torn {torn}: {r:?}");
            assert_eq!(r.repaired, vec![3], "torn {torn}");
        }
    }

    #[test]
    fn concurrent_appends_keep_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let p = tl(dir.path());
        std::thread::scope(|s| {
            for t in 0..8 {
                let p = &p;
                s.spawn(move || {
                    for i in 0..50 {
                        append(
                            p,
                            "s1",
                            None,
                            "a",
                            "guard",
                            serde_json::json!({"t": t, "i": i}),
                        )
                        .unwrap();
                    }
                });
            }
        });
        let r = verify_file(&p).unwrap();
        assert_eq!((r.events, r.error), (400, None));
    }

    #[test]
    fn events_merge_in_time_order_whatever_the_width_of_their_fractions() {
        // Forge before 2026-12-04 wrote `…:38.4Z` for `…:38.400000Z`: as text that sorts
        // after `…:38.45Z`, and a tool call came out after the spend it caused.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let put = |session: &str, lines: &[(&str, u64)]| {
            let p = session_path(root, session);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let text: String = lines
                .iter()
                .map(|(ts, seq)| {
                    render(
                        ts,
                        *seq,
                        session,
                        None,
                        "x",
                        "note",
                        &serde_json::json!({}),
                        "0",
                    )
                })
                .collect();
            std::fs::write(p, text).unwrap();
        };
        put(
            "a",
            &[
                ("2026-12-04T05:43:38.4Z", 1),
                ("2026-12-04T05:43:38.45Z", 2),
            ],
        );
        put(
            "b",
            &[
                ("2026-12-04T05:43:38.420000Z", 1),
                ("2026-12-04T05:43:39Z", 2),
            ],
        );
        let want = [("a", 1), ("b", 1), ("a", 2), ("b", 2)];
        let got: Vec<_> = read(root, &Filter::default())
            .unwrap()
            .into_iter()
            .map(|e| (e.session, e.seq))
            .collect();
        let want: Vec<_> = want.iter().map(|(s, q)| (s.to_string(), *q)).collect();
        assert_eq!(got, want);
        let got: Vec<_> = read_lines(root, &Filter::default())
            .unwrap()
            .into_iter()
            .map(|e| (e.session, e.seq))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn new_events_are_stamped_with_six_fraction_digits() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        assert_eq!(
            stamp(at("2026-12-04T05:43:38.4Z")),
            "2026-12-04T05:43:38.400000Z"
        );
        assert_eq!(
            stamp(at("2026-12-04T05:43:38Z")),
            "2026-12-04T05:43:38.000000Z"
        );
        assert_eq!(
            stamp(at("2026-12-04T05:43:59.9999996Z")),
            "2026-12-04T05:44:00.000000Z"
        );
        let ts = now();
        assert_eq!(ts.len(), FIXED_WIDTH, "{ts}");
        assert_eq!(FIXED_WIDTH, "2026-12-04T05:43:38.400000Z".len());
    }

    #[test]
    fn the_time_window_compares_instants_not_text() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        let f = Filter {
            since: Some(at("2026-11-30T03:06:45Z")),
            until: Some(at("2026-11-30T04:00:00Z")),
            ..Filter::default()
        };
        // As text, `…45.81596Z` sorts before `…45Z`; as a time it is after.
        assert!(f.in_window("2026-11-30T03:06:45.81596Z"));
        assert!(f.in_window("2026-11-30T03:06:45Z"), "since is inclusive");
        assert!(!f.in_window("2026-11-30T03:06:44.9Z"));
        assert!(!f.in_window("2026-11-30T04:00:00Z"), "until is exclusive");
        assert!(!f.in_window("not a time"));
        assert!(
            Filter::default().in_window("not a time"),
            "no window, no parse"
        );
    }

    #[test]
    fn read_merges_sessions_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        append(
            &session_path(root, "a"),
            "a",
            Some("c1"),
            "x",
            "verify",
            serde_json::json!({}),
        )
        .unwrap();
        append(
            &session_path(root, "b"),
            "b",
            Some("c2"),
            "y",
            "guard",
            serde_json::json!({}),
        )
        .unwrap();
        append(
            &session_path(root, "a"),
            "a",
            Some("c2"),
            "x",
            "breaker",
            serde_json::json!({}),
        )
        .unwrap();
        let all = read(root, &Filter::default()).unwrap();
        assert_eq!(all.len(), 3);
        assert!(all.windows(2).all(|w| w[0].ts <= w[1].ts));
        let c2 = read(
            root,
            &Filter {
                change: Some("c2".into()),
                ..Filter::default()
            },
        )
        .unwrap();
        assert_eq!(c2.len(), 2);
        let k = read(
            root,
            &Filter {
                kind: Some("guard".into()),
                ..Filter::default()
            },
        )
        .unwrap();
        assert_eq!(k.len(), 1);
        let s = read(
            root,
            &Filter {
                session: Some("a".into()),
                ..Filter::default()
            },
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(sanitize("../../etc"), "_.._etc");
    }
}
