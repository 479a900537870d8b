//! Live agent hooks: Forge's controls spoken in each agent's own hook protocol (Claude Code,
//! Codex CLI, Gemini CLI). See `docs/hook-protocols.md` for the protocols as documented and as
//! captured from the real clients.
//!
//! Every handler fails closed where failing open would let a tool run unchecked: malformed,
//! truncated or oversized input, stdin that never closes, a broken config — all deny. (The
//! agents treat a crashed hook or an unknown exit code as "proceed", so Forge answers instead of
//! crashing; the binary's watchdog covers a hang or a memory runaway the same way.)

pub mod client_skip;
pub mod codex_trust;
pub mod install;
pub mod json_text;
mod payload;
pub mod subagents;
pub mod toml_read;
mod tool_configs;

use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::breaker;
use crate::config::Config;
use crate::guard::{Decision, Guard, GuardResult};
use crate::repo::Project;
use crate::spec::Coverage;
use crate::verify::{self, Verdict};
use payload::Payload;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Option<Agent> {
        match s {
            "claude" | "claude-code" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "gemini" => Some(Agent::Gemini),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    PreToolUse,
    PostToolUse,
    Stop,
    SessionStart,
    /// A subagent began (Claude Code): Forge notes it as running.
    SubagentStart,
    /// A subagent ended (Claude Code): Forge notes it as ended; its own stop is not verified —
    /// the main agent's is.
    SubagentStop,
}

impl Event {
    /// Accepts Forge's kebab-case names and each agent's own event names.
    pub fn parse(s: &str) -> Option<Event> {
        match s {
            "pre-tool-use" | "PreToolUse" | "BeforeTool" | "before-tool" => Some(Event::PreToolUse),
            "post-tool-use" | "PostToolUse" | "AfterTool" | "after-tool" => {
                Some(Event::PostToolUse)
            }
            "stop" | "Stop" | "AfterAgent" | "after-agent" => Some(Event::Stop),
            "session-start" | "SessionStart" => Some(Event::SessionStart),
            "subagent-start" | "SubagentStart" => Some(Event::SubagentStart),
            "subagent-stop" | "SubagentStop" => Some(Event::SubagentStop),
            _ => None,
        }
    }

    pub fn kebab(self) -> &'static str {
        match self {
            Event::PreToolUse => "pre-tool-use",
            Event::PostToolUse => "post-tool-use",
            Event::Stop => "stop",
            Event::SessionStart => "session-start",
            Event::SubagentStart => "subagent-start",
            Event::SubagentStop => "subagent-stop",
        }
    }

    /// The event's name in `agent`'s settings file.
    pub fn native(self, agent: Agent) -> &'static str {
        match (agent, self) {
            (Agent::Gemini, Event::PreToolUse) => "BeforeTool",
            (Agent::Gemini, Event::PostToolUse) => "AfterTool",
            (Agent::Gemini, Event::Stop) => "AfterAgent",
            (_, Event::PreToolUse) => "PreToolUse",
            (_, Event::PostToolUse) => "PostToolUse",
            (_, Event::Stop) => "Stop",
            (_, Event::SessionStart) => "SessionStart",
            (_, Event::SubagentStart) => "SubagentStart",
            (_, Event::SubagentStop) => "SubagentStop",
        }
    }

    pub const ALL: [Event; 6] = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::Stop,
        Event::SessionStart,
        Event::SubagentStart,
        Event::SubagentStop,
    ];

    /// The events `forge hooks install` wires for `agent`: the subagent events only where the
    /// client has them (Claude Code: its Stop must know which subagents still run).
    pub fn installed(agent: Agent) -> &'static [Event] {
        match agent {
            Agent::Claude => &Event::ALL,
            Agent::Codex | Agent::Gemini => &Event::ALL[..4],
        }
    }
}

/// What the hook process prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit: i32,
}

/// Largest payload read; a Write of a big file is the largest legitimate one.
pub const MAX_INPUT: usize = 32 * 1024 * 1024;
/// How long to wait for stdin to close.
pub const STDIN_DEADLINE: Duration = Duration::from_secs(5);

/// Reads all of `input` within `deadline` and `max` bytes; an error says which bound was hit.
/// `poll(2)` bounds the wait in this thread: the hook runs on every tool call, and a helper
/// thread would cost more than the decision.
pub fn read_bounded<R: Read + AsRawFd>(
    mut input: R,
    max: usize,
    deadline: Duration,
) -> Result<Vec<u8>, String> {
    let end = std::time::Instant::now() + deadline;
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let left = end.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(format!(
                "the hook input did not end within {} s",
                deadline.as_secs()
            ));
        }
        let mut fds = nix::libc::pollfd {
            fd: input.as_raw_fd(),
            events: nix::libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for a descriptor `input` owns, for the duration of the call.
        let n = unsafe { nix::libc::poll(&mut fds, 1, ms) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("cannot read the hook input: {e}"));
        }
        if n == 0 {
            continue;
        }
        match input.read(&mut chunk) {
            Ok(0) => return Ok(buf),
            Ok(k) => {
                buf.extend_from_slice(&chunk[..k]);
                if buf.len() > max {
                    return Err(format!("the hook input is larger than {} MiB", max >> 20));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read the hook input: {e}")),
        }
    }
}

/// Handles one hook call. `input` is the raw stdin (or the reason it could not be read);
/// `fallback_cwd` is used when the payload names none.
pub fn handle(
    agent: Agent,
    event: Event,
    input: Result<Vec<u8>, String>,
    fallback_cwd: &Path,
) -> HookOutput {
    // A file tool's content, most of its input, is left unparsed (BENCHMARKS.md §8).
    let parsed: Result<Payload, String> = match &input {
        Ok(bytes) => payload::parse(bytes),
        Err(e) => Err(e.clone()),
    };
    let payload = parsed.as_ref().ok();
    let cwd = payload
        .and_then(|p| p.cwd.clone())
        .map(PathBuf::from)
        .unwrap_or_else(|| fallback_cwd.to_path_buf());
    let start = session_folder(&cwd);
    let session = payload.and_then(|p| p.session_id.clone());
    match event {
        Event::PreToolUse => {
            // The session's project, config and guard, read once for the sandbox and the guard.
            let loaded = match &parsed {
                Ok(p) => Some((p, guard_for(&start))),
                Err(_) => None,
            };
            // The kernel sandbox's part: whether this call's command will run inside
            // `forge sandbox --profile session` (decided before the guard, which may judge a
            // sandboxed command differently).
            let sandboxing = match &loaded {
                Some((p, Ok((_, Some((project, config)))))) => {
                    session_sandbox(agent, p, project, config)
                }
                _ => Sandboxing::No,
            };
            let sandboxed = matches!(sandboxing, Sandboxing::Rewrite(_));
            // Where the journal of this call goes, if it is journaled (read before the guard
            // takes the config).
            let journal = match &loaded {
                Some((p, Ok((_, Some((project, config)))))) => journal_for(p, project, config),
                _ => None,
            };
            if let (true, Some((_, Ok((_, Some((project, config))))))) = (sandboxed, &loaded) {
                tool_configs::note(project, &config.sandbox.session_writable);
            }
            // A search narrowed by Forge is judged as it will run.
            let narrowed = match &loaded {
                Some((p, Ok((_, Some((project, config)))))) => {
                    narrowed_search(agent, p, project, config)
                }
                _ => None,
            };
            let mut result = match (loaded, &parsed) {
                (Some((p, guard)), _) => match &narrowed {
                    Some(input) => {
                        let mut q = p.clone();
                        q.tool_input = Some(input.clone());
                        pre_tool_use(
                            agent,
                            &q,
                            fallback_cwd,
                            guard,
                            session.as_deref(),
                            sandboxed,
                        )
                    }
                    None => {
                        pre_tool_use(agent, p, fallback_cwd, guard, session.as_deref(), sandboxed)
                    }
                },
                (None, Err(e)) => GuardResult::deny(
                    "malformed-input",
                    format!("{e}; Forge denies what it cannot read"),
                ),
                (None, Ok(_)) => GuardResult::deny(
                    "malformed-input",
                    "the hook input could not be read; Forge denies what it cannot read",
                ),
            };
            if let (Sandboxing::Refuse(why), Decision::Allow) = (&sandboxing, result.decision) {
                result = GuardResult::deny("sandbox-unavailable", why.clone());
            }
            if let (Some(j), Decision::Allow | Decision::Ask, Some(p)) =
                (&journal, result.decision, payload)
            {
                journal_call(agent, p, j);
            }
            if let Some(rec) = recorder(agent, session.as_deref(), &start) {
                let (tool, target) = match payload {
                    Some(p) => (
                        p.tool_name.clone().unwrap_or_default(),
                        describe_input(p.tool_input.as_ref()),
                    ),
                    None => (String::new(), String::new()),
                };
                let sandboxed = result.decision == Decision::Allow
                    && matches!(sandboxing, Sandboxing::Rewrite(_));
                rec.1.record_or_warn(
                    rec.0.as_deref(),
                    "guard",
                    json!({"decision": result.decision, "rule": result.rule, "tool": tool, "target": target, "reason": crate::text::clip_words(&result.reason, 300), "sandbox": sandboxed.then_some("session")}),
                );
            }
            match (&sandboxing, result.decision, &parsed) {
                (Sandboxing::Rewrite(command), Decision::Allow, Ok(p)) => {
                    sandboxed_answer(agent, p, command)
                }
                (_, Decision::Allow, Ok(_)) => match narrowed {
                    Some(input) => rewritten(
                        input,
                        "Forge leaves files whose names say they hold secrets (.env, keys) out of the search",
                    ),
                    None => pre_tool_answer(agent, &result),
                },
                _ => pre_tool_answer(agent, &result),
            }
        }
        Event::PostToolUse => {
            note_subagent(agent, event, &parsed, &start);
            let put_aside = put_aside_planted_commondir(&start);
            let shell = payload
                .and_then(|p| p.tool_name.as_deref())
                .is_some_and(|t| crate::guard::tools::canonical_tool(t) == "Bash");
            let made = if shell {
                put_aside_tool_configs(&start)
            } else {
                Vec::new()
            };
            let staged = if shell {
                control_entries_changed(&start)
            } else {
                None
            };
            if let Some((change, rec)) = recorder(agent, session.as_deref(), &start) {
                if let Some(to) = &put_aside {
                    rec.record_or_warn(
                        change.as_deref(),
                        "hook",
                        json!({"event": "planted-git-file", "file": ".git/commondir", "moved_to": to.display().to_string()}),
                    );
                }
                let tool = payload
                    .and_then(|p| p.tool_name.clone())
                    .unwrap_or_default();
                let target = describe_input(payload.and_then(|p| p.tool_input.as_ref()));
                rec.record_or_warn(
                    change.as_deref(),
                    "tool",
                    json!({"tool": tool, "target": target}),
                );
                if let Some(paths) = &staged {
                    rec.record_or_warn(
                        change.as_deref(),
                        "hook",
                        json!({"event": "control-files-in-git-changed", "paths": paths}),
                    );
                }
                for (file, to) in &made {
                    rec.record_or_warn(
                        change.as_deref(),
                        "hook",
                        json!({"event": "planted-tool-config", "file": file, "moved_to": to.display().to_string()}),
                    );
                }
                ingest_spend(
                    agent,
                    &start,
                    session.as_deref(),
                    payload.and_then(|p| p.transcript_path.as_deref()),
                    &rec,
                    change.as_deref(),
                );
            }
            let mut said = Vec::new();
            if !made.is_empty() {
                said.push(format!(
                    "Forge: the command made {} where there was none — your tools read it on your next command, outside any sandbox, and the sandbox can keep read-only only what exists — so Forge moved it aside: {}. If you asked for it, move it back; to let the session change it, name it in `sandbox.session_writable` (.forge/config.yaml).",
                    made.iter()
                        .map(|(f, _)| f.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    made.iter()
                        .map(|(f, to)| format!("{f} → {}", to.display()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if let Some(paths) = &staged {
                said.push(format!(
                    "Forge: what git holds for control files ({}) changed in the index or in a commit since Forge last looked — the files themselves are read-only to the agent's commands, git's internals are not. If you did not stage or commit that, look at `git diff --cached` and `git log -p -1` for them before `git stash`, `git reset` or `git checkout`: those would write the agent's version.",
                    paths.join(", ")
                ));
            }
            if said.is_empty() {
                HookOutput::default()
            } else {
                system_message(agent, &said.join("\n\n"))
            }
        }
        Event::Stop => {
            // What a command left running may plant after the last PostToolUse.
            put_aside_planted_commondir(&start);
            if let Some((change, rec)) = recorder(agent, session.as_deref(), &start) {
                ingest_spend(
                    agent,
                    &start,
                    session.as_deref(),
                    payload.and_then(|p| p.transcript_path.as_deref()),
                    &rec,
                    change.as_deref(),
                );
            }
            if let Some(r) = over_budget(&start, session.as_deref()) {
                // Over budget: no more verify-and-retry loops; the person decides.
                return system_message(
                    agent,
                    &format!(
                        "{} Stopping here: a person must decide whether to raise the limit.",
                        r.reason
                    ),
                );
            }
            let active = payload.and_then(|p| p.stop_hook_active).unwrap_or(false);
            let running = running_subagents(
                agent,
                &start,
                session.as_deref(),
                payload.and_then(|p| p.background_tasks.as_ref()),
            );
            stop(agent, &start, active, session.as_deref(), &running)
        }
        Event::SubagentStart | Event::SubagentStop => {
            note_subagent(agent, event, &parsed, &start);
            HookOutput::default()
        }
        Event::SessionStart => {
            put_aside_planted_commondir(&start);
            control_entries_changed(&start); // the session's starting point
            warm_journal(agent, session.as_deref(), &start);

            if let Some((change, rec)) = recorder(agent, session.as_deref(), &start) {
                rec.record_or_warn(change.as_deref(), "hook", json!({"event": "session-start"}));
            }
            session_start(agent, &start, session)
        }
    }
}

/// How long the journal of one call may take (seconds) before the watchdog denies the call:
/// the first look at a 10,000-file project reads and keeps every file (~2.5 s, BENCHMARKS.md
/// §11); SessionStart takes that look before the first call where the client has the event.
const JOURNAL_DEADLINE: u32 = 30;

/// The journal a call is recorded in before it runs (`src/undo/`): a tool that can change
/// files, in a project at a repository's root whose `undo.journal` is on.
fn journal_for(p: &Payload, project: &Project, config: &Config) -> Option<crate::undo::Journal> {
    let tool = p.tool_name.as_deref()?;
    if !config.undo.journal
        || crate::undo::changes_nothing(crate::guard::tools::canonical_tool(tool))
    {
        return None;
    }
    crate::undo::Journal::open(&project.root, &project.tmp_dir(), config.undo.max_file_size)
        .ok()
        .flatten()
        .filter(|j| crate::undo::too_many_files(j.git_dir(), config.undo.max_files).is_none())
}

/// Journals the state before the call `p`. A journal that cannot be written does not stop the
/// call (the guard decided it; the journal only makes it undoable): stderr says so.
fn journal_call(agent: Agent, p: &Payload, j: &crate::undo::Journal) {
    let _t = crate::trace::span("undo-journal");
    // The decision is made; the journal's first look at a large tree (every file read and
    // kept) may take longer than the watchdog gives a decision (`forge hook`'s SIGALRM). A
    // pending alarm is pushed out to [`JOURNAL_DEADLINE`]; none is set where none was armed.
    // SAFETY: alarm(2) only reschedules this process's pending SIGALRM.
    unsafe {
        let left = nix::libc::alarm(0);
        if left > 0 {
            nix::libc::alarm(left.max(JOURNAL_DEADLINE));
        }
    }
    let session = session_name(agent, p.session_id.as_deref());
    let tool = p.tool_name.as_deref().unwrap_or_default();
    let summary = describe_input(p.tool_input.as_ref());
    if let Err(e) = j.record(&session, p.tool_use_id.as_deref(), tool, &summary) {
        eprintln!("forge: WARNING: this call is not journaled, `forge undo` cannot undo it: {e}");
    }
}

/// The journal's first look at the project, at SessionStart (no watchdog there): every file
/// read and kept once, so each PreToolUse after it looks only at what changed.
fn warm_journal(agent: Agent, session: Option<&str>, start: &Path) {
    let Ok(project) = Project::discover_session(start) else {
        return;
    };
    let Ok(config) = Config::load_cached(&project.config_path(), &project.tmp_dir().join("cache"))
    else {
        return;
    };
    if !config.undo.journal {
        return;
    }
    if let Ok(Some(j)) =
        crate::undo::Journal::open(&project.root, &project.tmp_dir(), config.undo.max_file_size)
    {
        // Said once a session, here; each call then goes unjournaled without a word.
        if let Some(n) = crate::undo::too_many_files(j.git_dir(), config.undo.max_files) {
            eprintln!(
                "forge: the undo journal is off for this project: git tracks {n} files, more than `undo.max_files` ({}) in .forge/config.yaml; raise it to journal each call (it walks the tree every time), and `forge undo` has nothing to undo until then",
                config.undo.max_files
            );
            return;
        }
        let _t = crate::trace::span("undo-warm");
        if let Err(e) = j.look(&session_name(agent, session)) {
            eprintln!("forge: WARNING: the undo journal could not look at the project: {e}");
        }
    }
}

/// The tool configs a shell call made, put aside ([`tool_configs`]) when the call ran in the
/// session sandbox: a shell tool, no `forge run` phase, the walls in force.
fn put_aside_tool_configs(start: &Path) -> Vec<(String, PathBuf)> {
    let Ok(project) = Project::discover_session(start) else {
        return Vec::new();
    };
    if let Ok(Some(_)) = crate::guard::load_phase(&project.root) {
        return Vec::new();
    }
    let Ok(sandbox) =
        Config::load_sandbox_cached(&project.config_path(), &project.tmp_dir().join("cache"))
    else {
        return Vec::new();
    };
    if crate::sandbox::walls(sandbox.mode, &project.config_path()) != Ok(true) {
        return Vec::new();
    }
    tool_configs::put_aside_new(&project, &sandbox.session_writable)
}

/// A `commondir` in git's common folder, put aside (into `.tmp/.forge/planted/`) after each
/// tool call, at Stop and at SessionStart. Git writes that file only in a linked worktree's own
/// folder; in the common folder it moves where git finds its config and hooks, so a session's
/// command could plant one (the sandbox cannot bind a file that does not exist yet) and the
/// person's next `git status` would run what it names, outside any sandbox. Returns where it went.
fn put_aside_planted_commondir(start: &Path) -> Option<PathBuf> {
    let project = Project::discover_session(start).ok()?;
    let layout =
        crate::sandbox::resolve::Layout::probe(&project.root, &crate::repo::home()).ok()?;
    // In git's common folder — the project's `.git`, or the main repository's when the session
    // runs in a linked worktree or a submodule.
    let planted = layout.planted_commondir()?;
    let dir = project.tmp_dir().join("planted");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let to = dir.join(format!("commondir-{nanos}"));
    let moved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::rename(&planted, &to));
    match moved {
        Ok(()) => {
            eprintln!(
                "forge: a tool call wrote {} (it would make git read its config and hooks elsewhere); moved to {}",
                planted.display(),
                to.display()
            );
            Some(to)
        }
        Err(e) => {
            eprintln!(
                "forge: WARNING: {} was written by a tool call and could not be moved aside ({e}): remove it before running git here",
                planted.display()
            );
            None
        }
    }
}

/// Which control paths' index or HEAD entries changed since the last look (kept in
/// `.tmp/.forge/control-in-git`, which a session cannot write). A session may write git's
/// internals, so it can stage or commit its own `.forge/config.yaml` while the file on disk
/// stays the person's; the person's next `git stash` or `git reset --hard` would write the
/// agent's. `None` when nothing changed (or on the first look).
fn control_entries_changed(start: &Path) -> Option<Vec<String>> {
    let project = Project::discover_session(start).ok()?;
    let root = &project.root;
    // The project's control files, and what this repository's git config makes control files:
    // its hooks folders and the files it includes, where they lie in the project.
    let mut watched: Vec<String> = crate::sandbox::resolve::PROJECT_CONTROL
        .iter()
        .map(|s| s.to_string())
        .collect();
    // The tool configs it keeps read-only (a config that cannot be read opts none out).
    let writable =
        Config::load_sandbox_cached(&project.config_path(), &project.tmp_dir().join("cache"))
            .map(|s| s.session_writable)
            .unwrap_or_default();
    watched.extend(
        crate::sandbox::resolve::tool_config(crate::sandbox::Profile::Session, &writable)
            .map(String::from),
    );
    if let Ok(layout) = crate::sandbox::resolve::Layout::probe(root, &crate::repo::home()) {
        for p in layout.hooks_paths.iter().chain(&layout.git_includes) {
            if let Ok(rel) = p.strip_prefix(&layout.project)
                && !rel.as_os_str().is_empty()
            {
                watched.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut index_args = vec!["ls-files", "-s", "-z", "--"];
    index_args.extend(watched.iter().map(String::as_str));
    let mut head_args = vec!["ls-tree", "-r", "-z", "HEAD", "--"];
    head_args.extend(watched.iter().map(String::as_str));
    // The two at once: this runs after every tool call, and each git start is ~1 ms here.
    let (index, head) = std::thread::scope(|s| {
        let head = s.spawn(|| crate::git::git(root, &head_args));
        let index = crate::git::git(root, &index_args);
        (index, head.join())
    });
    let index = index.ok()?;
    let head = head.ok().and_then(Result::ok).unwrap_or_default();
    let entries = |bytes: &[u8], tag: &str| -> Vec<String> {
        bytes
            .split(|b| *b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| format!("{tag} {}", String::from_utf8_lossy(r)))
            .collect()
    };
    let mut now = entries(&index, "index");
    now.extend(entries(&head, "HEAD"));
    let file = project.tmp_dir().join("control-in-git");
    let before = crate::state::read_untrusted(&file, 1 << 20)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let text = now.join("\n");
    if before.as_deref() != Some(text.as_str()) {
        let _ = crate::state::write_atomic(&file, text.as_bytes());
    }
    let before = before?;
    let old: std::collections::BTreeSet<&str> = before.lines().collect();
    let new: std::collections::BTreeSet<&str> = now.iter().map(String::as_str).collect();
    let mut paths: Vec<String> = old
        .symmetric_difference(&new)
        .filter_map(|e| e.split_once('\t').map(|(_, p)| p.to_string()))
        .collect();
    paths.sort();
    paths.dedup();
    (!paths.is_empty()).then_some(paths)
}

/// The folder the agent's session started in, which every event of the session is judged
/// from: Claude Code names it in `CLAUDE_PROJECT_DIR`; the call's `cwd` follows the commands'
/// `cd`s, into folders they wrote. Codex's `cwd` is its session folder, which a command cannot
/// move. The project is then [`Project::discover_session`]'s.
fn session_folder(cwd: &Path) -> PathBuf {
    std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .unwrap_or_else(|| cwd.to_path_buf())
}

/// The timeline recorder for a hook call in a Forge project (none elsewhere), with the active
/// change. Events are attributed to the agent and its session.
fn recorder(
    agent: Agent,
    session: Option<&str>,
    cwd: &Path,
) -> Option<(Option<String>, crate::timeline::Recorder)> {
    let project = Project::discover_session(cwd).ok()?;
    let session = session_name(agent, session);
    let actor = format!("{}:{}", agent.name(), session);
    let change = active_change(&project);
    Some((
        change,
        crate::timeline::Recorder::new(&project, &session, &actor),
    ))
}

/// The session's name for its records: the client's id, else `FORGE_SESSION`, else one per agent.
fn session_name(agent: Agent, session: Option<&str>) -> String {
    session
        .map(str::to_string)
        .or_else(|| std::env::var("FORGE_SESSION").ok())
        .unwrap_or_else(|| format!("{}-unknown-session", agent.name()))
}

/// Notes a subagent's start or end (see [`subagents`]) in the session's record and on the
/// timeline. A record that cannot be written is said on stderr: the Stop hook then counts as it
/// always did, which is the safe side.
fn note_subagent(agent: Agent, event: Event, parsed: &Result<Payload, String>, start: &Path) {
    let Ok(p) = parsed else { return };
    // Only the Agent tool's results and the subagent events say anything here: no other tool's
    // result (a Read's whole file) is looked at or copied.
    let about_subagents = matches!(event, Event::SubagentStart | Event::SubagentStop)
        || matches!(p.tool_name.as_deref(), Some("Agent" | "Task"));
    if !about_subagents {
        return;
    }
    let v = json!({
        "tool_name": p.tool_name,
        "tool_input": p.tool_input,
        "tool_response": p.tool_response,
        "agent_id": p.agent_id,
        "agent_type": p.agent_type,
    });
    let Some(note) = subagents::note(event.kebab(), &v) else {
        return;
    };
    let Ok(project) = Project::discover_session(start) else {
        return;
    };
    let session = session_name(agent, p.session_id.as_deref());
    if let Err(e) = subagents::apply(&project, &session, &note) {
        eprintln!("forge: could not note the subagent: {e}");
    }
    if let Some((change, rec)) = recorder(agent, p.session_id.as_deref(), start) {
        let (what, id) = match &note {
            subagents::Note::Started { id, .. } => ("subagent-start", id),
            subagents::Note::Ended { id } => ("subagent-stop", id),
        };
        rec.record_or_warn(
            change.as_deref(),
            "hook",
            json!({"event": what, "agent_id": id}),
        );
    }
}

/// The subagents still running as the main agent stops; none when the record cannot be read
/// (then the Stop counts as usual, and stderr says why).
fn running_subagents(
    agent: Agent,
    start: &Path,
    session: Option<&str>,
    listed: Option<&Value>,
) -> Vec<String> {
    let Ok(project) = Project::discover_session(start) else {
        return Vec::new();
    };
    let session = session_name(agent, session);
    subagents::running_at_stop(&project, &session, listed).unwrap_or_else(|e| {
        eprintln!("forge: {e}");
        Vec::new()
    })
}

/// Reads the new part of the session's own record — the `transcript_path` each client sends:
/// Claude Code's transcript, Gemini CLI's chat recording, Codex CLI's rollout — and books its
/// spend to the active change and the session (ledgers and timeline). Failures are reported,
/// never fatal to the hook.
fn ingest_spend(
    agent: Agent,
    cwd: &Path,
    session: Option<&str>,
    transcript: Option<&str>,
    rec: &crate::timeline::Recorder,
    change: Option<&str>,
) {
    let (Some(t), Ok(project)) = (transcript, Project::discover_session(cwd)) else {
        return;
    };
    let result =
        (|| -> crate::Result<(Vec<crate::budget::Spend>, Vec<crate::budget::PriceNotice>)> {
            let config =
                Config::load_cached(&project.config_path(), &project.tmp_dir().join("cache"))?;
            let read: crate::budget::ReadRecord = match agent {
                Agent::Claude => crate::budget::ingest_transcript,
                Agent::Gemini => crate::budget::ingest_chat,
                Agent::Codex => crate::budget::ingest_rollout,
            };
            let cursors = project.tmp_dir().join("transcripts");
            let spends = match agent {
                // A Codex subagent's hooks name its own rollout and its parent's session, and no
                // hook follows its last response: every rollout the session named is read again
                // at each of its hooks (each from where it was left), so that response is booked
                // at the parent's next one.
                Agent::Codex => {
                    let mut spends = Vec::new();
                    for r in session_rollouts(&cursors, session, Path::new(t)) {
                        // One removed since (a subagent's, cleaned up) has nothing more to book.
                        if r.as_path() == Path::new(t) || r.is_file() {
                            spends.extend(read(&r, &cursors, &config.budget)?);
                        }
                    }
                    spends
                }
                _ => read(Path::new(t), &cursors, &config.budget)?,
            };
            let mut notices = crate::budget::record(&project, change, session, &spends)?;
            let mut spends = spends;
            if agent == Agent::Gemini {
                // Calls outside the chat (the model router's, …), from the CLI's telemetry, each
                // to the session that made it: any of the project's sessions may read them first.
                let file = project.root.join(crate::budget::TELEMETRY_FILE);
                if file.is_file() {
                    let cursors = project.tmp_dir().join("transcripts");
                    for (s, sp) in crate::budget::ingest_telemetry(&file, &cursors, &config.budget)?
                    {
                        let s = s.as_deref().or(session);
                        notices.extend(crate::budget::record(&project, change, s, &sp)?);
                        spends.extend(sp);
                    }
                }
            }
            Ok((spends, notices))
        })();
    match result {
        Ok((spends, notices)) => {
            for s in spends {
                rec.record_or_warn(
                    change,
                    "budget",
                    json!({"source": s.source, "model": s.model, "usd": s.usd, "tokens": s.tokens.total(), "input": s.tokens.input, "output": s.tokens.output, "cache_write": s.tokens.cache_write, "cache_write_1h": s.tokens.cache_write_1h, "cache_read": s.tokens.cache_read, "estimated": s.estimate}),
                );
            }
            // A model priced by estimate is named once per project, with the lines that price it.
            for n in notices {
                eprintln!("forge: warning: {}", n.hint());
                rec.record_or_warn(change, "budget", n.event());
            }
        }
        Err(e) => eprintln!("forge: could not record spend from {t}: {e}"),
    }
}

/// The rollouts `session` has named in its hooks, `current` among them (added to the list kept in
/// `cursors`). Without a session, `current` alone.
fn session_rollouts(cursors: &Path, session: Option<&str>, current: &Path) -> Vec<PathBuf> {
    let Some(s) = session.filter(|s| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    }) else {
        return vec![current.to_path_buf()];
    };
    let list = cursors.join(format!("codex-{s}.rollouts"));
    let mut known: Vec<PathBuf> = std::fs::read_to_string(&list)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect();
    if !known.iter().any(|k| k == current) {
        known.push(current.to_path_buf());
        let text: String = known.iter().map(|k| format!("{}\n", k.display())).collect();
        let _ = std::fs::create_dir_all(cursors);
        if let Err(e) = crate::state::write_atomic(&list, text.as_bytes()) {
            eprintln!(
                "forge: could not note the rollout {}: {e}",
                current.display()
            );
        }
    }
    known
}

/// A deny when the change's or the session's spend is at or over its limit. A ledger that does
/// not parse denies too (fail closed).
fn over_budget(cwd: &Path, session: Option<&str>) -> Option<GuardResult> {
    let project = Project::discover_session(cwd).ok()?;
    let config = match Config::load_cached(&project.config_path(), &project.tmp_dir().join("cache"))
    {
        Ok(c) => c,
        Err(_) => return None, // the guard already reported a broken config
    };
    over_budget_with(&project, &config.budget, session)
}

fn over_budget_with(
    project: &Project,
    b: &crate::budget::BudgetConfig,
    session: Option<&str>,
) -> Option<GuardResult> {
    if b.change.usd.is_none()
        && b.change.tokens.is_none()
        && b.session.usd.is_none()
        && b.session.tokens.is_none()
    {
        return None;
    }
    let change = active_change(project);
    match crate::budget::standings(project, b, change.as_deref(), session) {
        Ok(st) => st.iter().find(|s| s.over).map(|s| {
            GuardResult::deny(
                if s.scope.starts_with("change") { "budget-change" } else { "budget-session" },
                format!("the spend budget is used up ({}); a person must raise the limit in .forge/config.yaml or stop here", s.describe()),
            )
        }),
        Err(e) => Some(GuardResult::deny("budget-unreadable", format!("{e}"))),
    }
}

/// The keys whose value describes a tool call on the timeline, the first found.
const DESCRIBED_KEYS: [&str; 9] = [
    "command",
    "cmd",
    "file_path",
    "path",
    "notebook_path",
    "absolute_path",
    "pattern",
    "url",
    "query",
];

/// A short description of what a tool call touches, for the timeline.
fn describe_input(input: Option<&Value>) -> String {
    let Some(v) = input else { return String::new() };
    let s = DESCRIBED_KEYS
        .iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()).map(str::to_string))
        .unwrap_or_default();
    crate::text::clip_words(&s, 300)
}

/// The guard's and the budget's answer. `sandboxed`: the call's command will run inside the
/// session sandbox, so what the guard could only ask about because it cannot see the content
/// (a script run by path, a Makefile recipe) is held by the kernel instead.
fn pre_tool_use(
    agent: Agent,
    p: &Payload,
    fallback_cwd: &Path,
    loaded: crate::Result<(Guard, Option<(Project, Config)>)>,
    session: Option<&str>,
    sandboxed: bool,
) -> GuardResult {
    let Some(tool) = &p.tool_name else {
        return GuardResult::deny(
            "malformed-input",
            "the hook input has no `tool_name`; Forge denies what it cannot read",
        );
    };
    let null = Value::Null;
    let input = p.tool_input.as_ref().unwrap_or(&null);
    let cwd = p
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(|| fallback_cwd.to_path_buf());
    if !cwd.is_absolute() {
        // Every agent sends an absolute folder; anything else cannot be placed safely.
        return GuardResult::deny(
            "malformed-input",
            format!(
                "the hook input's `cwd` ({}) is not an absolute path; Forge denies what it cannot place",
                cwd.display()
            ),
        );
    }
    // The project (its rules and budget) is the session's; the call's own folder places the
    // paths the command names.
    match loaded {
        Ok((g, project)) => {
            let mut g = g.sandboxed(sandboxed);
            if crate::guard::tools::canonical_tool(tool) != "Bash"
                && let Some((project, config)) = &project
            {
                let walls = session_walls(project, config, agent);
                g = g
                    .with_control(walls.control)
                    .with_home_reads(walls.home_reads)
                    .with_home_hidden(walls.home_hidden)
                    .with_secrets(secrets_of(project, config));
            }
            // A skimmed call's exact form, for an allow-once exception, from its whole input.
            let exact = || match p.whole_input {
                Some(raw) => serde_json::from_str::<Value>(raw.get())
                    .map(|whole| crate::guard::tools::exact_call(tool, &whole))
                    .unwrap_or_else(|_| raw.get().to_string()),
                None => crate::guard::tools::exact_call(tool, input),
            };
            let r = g.check_tool_exact(tool, input, &cwd, exact);
            // The hook process ends after this answer: freeing a project's thousand rules one by
            // one would cost more than judging the call with them (BENCHMARKS.md §4).
            std::mem::forget(g);
            if r.decision == Decision::Deny {
                return r;
            }
            // Spend: checked only when a limit is set, with the config already loaded.
            match project {
                Some((project, config)) => {
                    crate::budget::note_limit_changes(&project, &config.budget);
                    over_budget_with(&project, &config.budget, session).unwrap_or(r)
                }
                None => r,
            }
        }
        Err(e) => GuardResult::deny(
            "config-error",
            format!(
                "Forge cannot load its configuration ({e}); a person must fix it before tools run"
            ),
        ),
    }
}

/// What the session sandbox holds that the file tools, which run in the client's own process,
/// must be held to by the guard.
struct SessionWalls {
    /// The paths it keeps read-only in the project.
    control: Vec<PathBuf>,
    /// What it lets commands read under home, with the client's own state (the client reads
    /// its own transcripts and saved outputs through its file tools).
    home_reads: Vec<PathBuf>,
    /// What it hides inside those (the clients' settings files) or shows only redacted.
    home_hidden: Vec<PathBuf>,
}

/// The session sandbox's walls for `project` (the plan's control files, symlinks resolved as
/// the guard resolves paths; what it reads under home). With no plan, no control files — the
/// guard's own rules then stand alone — and home as the allowlist names it.
fn session_walls(project: &Project, config: &Config, agent: Agent) -> SessionWalls {
    // Every path below shares the project's and home's folders: each is asked about once.
    crate::guard::paths::cached(|| session_walls_now(project, config, agent))
}

fn session_walls_now(project: &Project, config: &Config, agent: Agent) -> SessionWalls {
    use crate::guard::paths::canonical;
    let root = canonical(&project.root).unwrap_or_else(|| project.root.clone());
    let home = crate::repo::home();
    let mut req = crate::sandbox::Request::new(crate::sandbox::Profile::Session, &root);
    req.look_through = false;
    let plan = crate::sandbox::resolve(&req, &config.sandbox)
        .ok()
        .map(|(_, p)| p);
    let none = Vec::new();
    let own_state = match crate::sandbox::Client::parse(agent.name()) {
        Some(crate::sandbox::Client::Claude) => &config.sandbox.clients.claude,
        Some(crate::sandbox::Client::Codex) => &config.sandbox.clients.codex,
        Some(crate::sandbox::Client::Gemini) => &config.sandbox.clients.gemini,
        None => &none,
    };
    let mut home_reads: Vec<PathBuf> = match &plan {
        Some(plan) => plan
            .read_inside_holes
            .iter()
            .chain(&plan.write)
            .filter(|p| p.starts_with(&home))
            .cloned()
            .collect(),
        None => {
            crate::sandbox::allow::home_reads(&home, &config.sandbox.read, &|v| std::env::var_os(v))
        }
    };
    home_reads.extend(
        own_state
            .iter()
            .map(|s| crate::sandbox::resolve::expand_home(s, &home)),
    );
    let home_reads = home_reads
        .into_iter()
        .flat_map(|p| {
            let c = canonical(&p);
            std::iter::once(p).chain(c)
        })
        .collect();
    let mut control: Vec<PathBuf> = match &plan {
        Some(plan) => plan
            .read_only
            .iter()
            .map(|p| canonical(p).unwrap_or_else(|| p.clone()))
            .collect(),
        None => Vec::new(),
    };
    // A control folder that holds the agents' worktrees (`.claude`) is not one as a whole here:
    // the worktrees in it are the project's, writable, with their own control files listed
    // apart; the rest of it is agent config, which the guard's own rule denies.
    control.retain(|c| {
        !crate::sandbox::resolve::AGENT_WORKTREES
            .iter()
            .any(|w| root.join(w).starts_with(c))
    });
    // The tool configs a person's next command reads, whether or not they exist yet: the
    // sandbox binds only one that exists, but a file tool is refused making one too (a command
    // that makes one is answered by the PostToolUse hook, docs/sandbox.md "Tool configs").
    let profile = crate::sandbox::Profile::Session;
    let writable = &config.sandbox.session_writable;
    for tree in std::iter::once(root.clone()).chain(crate::sandbox::resolve::agent_worktrees(&root))
    {
        for t in crate::sandbox::resolve::tool_config(profile, writable) {
            let p = tree.join(t);
            if !control.contains(&p) {
                control.push(p);
            }
        }
    }
    // Every PATH folder inside the project, whether or not it exists yet: the sandbox can
    // bind only one that exists, but a file tool writing `node_modules/.bin/git` before
    // `npm install` made the folder plants a program the client and the person's shell run by
    // name (red team, round 12). A relative entry is taken from the project's root. Each is
    // taken as written and as the kernel resolves it, through links — a dangling one too:
    // `~/bin` linked to the project's `tools/bin`, not made yet, is that folder (red team,
    // round 13).
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            let abs = if d.is_absolute() { d } else { root.join(d) };
            let readings = [
                crate::sandbox::resolve::lexical_no_climb(&abs),
                Some(crate::guard::paths::real(&abs)),
            ];
            for n in readings.into_iter().flatten() {
                if n.starts_with(&root) && n != root && !control.contains(&n) {
                    control.push(n);
                }
            }
        }
    }
    // The clients' settings, which the session hides inside their state folders (they can hold
    // the clients' keys), and the files it shows only redacted, as written and as the kernel
    // resolves them.
    let home_hidden = crate::sandbox::resolve::CLIENT_SETTINGS
        .iter()
        .map(|c| home.join(c))
        .chain(
            plan.iter()
                .flat_map(|p| p.views.iter().map(|v| v.path.clone())),
        )
        .flat_map(|p| {
            let c = canonical(&p);
            std::iter::once(p).chain(c)
        })
        .collect();
    SessionWalls {
        control,
        home_reads,
        home_hidden,
    }
}

/// Whether a PreToolUse call's command runs inside the session sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sandboxing {
    /// Not sandboxed: not a Bash call of a client that can rewrite it, the project's
    /// `sandbox.mode` is off, the call is already inside a sandbox, or the kernel has no
    /// Landlock and the mode is `auto`.
    No,
    /// Run this command line instead (it runs the original inside `forge sandbox`).
    Rewrite(String),
    /// `sandbox.mode: require` and the kernel cannot enforce it: deny with this reason.
    Refuse(String),
}

/// The shell tool whose command the session sandbox wraps, by the name `agent` gives it in
/// its hook input.
fn shell_tool(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude | Agent::Codex => "Bash",
        Agent::Gemini => "run_shell_command",
    }
}

/// The session sandbox for a shell call. Each client takes a rewritten tool input: Claude Code
/// and Codex CLI `permissionDecision: "allow"` with `updatedInput`, Gemini CLI
/// `hookSpecificOutput.tool_input` (docs/sandbox.md).
///
/// The project and its `sandbox.mode` are the session's ([`session_folder`]). While a
/// `forge run` phase is active, the run wraps each agent in its phase's profile instead.
fn session_sandbox(agent: Agent, p: &Payload, project: &Project, config: &Config) -> Sandboxing {
    if p.tool_name.as_deref() != Some(shell_tool(agent)) {
        return Sandboxing::No;
    }
    let Some(command) = p
        .tool_input
        .as_ref()
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
    else {
        return Sandboxing::No;
    };
    if let Ok(Some(_)) = crate::guard::load_phase(&project.root) {
        return Sandboxing::No;
    }
    if agent == Agent::Codex && codex_applies_itself(command) {
        return Sandboxing::No;
    }
    match session_walled(project, config) {
        Ok(true) => {}
        Ok(false) => return Sandboxing::No,
        Err(why) => return Sandboxing::Refuse(why),
    }
    if command.contains('\0') {
        return Sandboxing::Refuse(
            "the command contains a NUL byte, which no shell can run as written".into(),
        );
    }
    let Ok(forge) = std::env::current_exe() else {
        return Sandboxing::No;
    };
    let root = project
        .root
        .canonicalize()
        .unwrap_or_else(|_| project.root.clone());
    let tmpdir = crate::sandbox::resolve::default_tmpdir(
        &root,
        &crate::sandbox::resolve::system_tmp(),
        crate::sandbox::Profile::Session,
    );
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let cwd_file = tmpdir.join(format!(".cwd-{}-{nonce}", std::process::id()));
    // Claude Code keeps the folder a command `cd`s to; Codex and Gemini start each command
    // afresh. A
    // subagent isolated in a worktree gets no carried `cd`: Claude Code refuses a command whose
    // `cd` it cannot prove stays in the worktree ("too complex to verify", 2.1.337).
    let in_worktree = p
        .cwd
        .as_deref()
        .map(Path::new)
        .is_some_and(|c| in_agent_worktree(&root, c));
    let keep_cwd = (agent == Agent::Claude && !in_worktree).then_some(cwd_file.as_path());
    Sandboxing::Rewrite(crate::sandbox::launch::session_command(
        &forge,
        &root,
        &crate::sandbox::find_shell(),
        command,
        keep_cwd,
    ))
}

/// Whether `cwd` lies in one of the agents' worktrees of the project at `root`.
fn in_agent_worktree(root: &Path, cwd: &Path) -> bool {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    crate::sandbox::resolve::AGENT_WORKTREES
        .iter()
        .any(|w| cwd.starts_with(root.join(w)))
}

/// Whether Codex CLI applies this shell command itself, in its own process, instead of running
/// it: a command that is only `apply_patch` (or `applypatch`) with its patch in a here-document,
/// after at most one `cd DIR &&`, as Codex recognises it. Rewritten into the sandbox it would
/// find no `apply_patch` to run; left as it is, the guard judges the files the patch names, as it
/// does Codex's `apply_patch` tool. Stricter than Codex on purpose — a plain `DIR`, a
/// delimiter that is quoted or a body with nothing bash would expand, nothing after the
/// delimiter — so that a command Codex would not take is never run outside the sandbox as
/// anything but that one program with that text on its standard input.
fn codex_applies_itself(command: &str) -> bool {
    // Not an option (`cd -P` is `cd` home to bash, a folder named `-P` to Codex).
    let plain = |w: &str| {
        !w.is_empty()
            && !w.starts_with('-')
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-+@%,:".contains(&b))
    };
    let mut rest = command.trim_start_matches([' ', '\t']);
    if let Some(r) = rest.strip_prefix("cd ") {
        let Some((dir, after)) = r.split_once("&&") else {
            return false;
        };
        if !plain(dir.trim_matches([' ', '\t'])) {
            return false;
        }
        rest = after.trim_start_matches([' ', '\t']);
    }
    let Some(r) = rest
        .strip_prefix("apply_patch")
        .or_else(|| rest.strip_prefix("applypatch"))
    else {
        return false;
    };
    let Some(r) = r.trim_start_matches([' ', '\t']).strip_prefix("<<") else {
        return false;
    };
    let Some((head, body)) = r.split_once('\n') else {
        return false;
    };
    let head = head.trim_matches([' ', '\t']);
    let (delim, quoted) = match head.as_bytes() {
        [q @ (b'\'' | b'"'), .., e] if q == e && head.len() > 2 => (&head[1..head.len() - 1], true),
        _ => (head, false),
    };
    if !delim
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        || delim.is_empty()
    {
        return false;
    }
    // A body that bash and Codex could end at different lines, or read differently, is not
    // taken (`EOF ` or `EOF\r` in it, a carriage return, a NUL).
    if body.contains(['\r', '\0']) {
        return false;
    }
    let mut lines = body.split('\n');
    let mut text = String::new();
    loop {
        match lines.next() {
            Some(l) if l == delim => break,
            Some(l)
                if l.starts_with(delim)
                    || l.trim_matches(crate::guard::tools::js_space) == delim =>
            {
                return false;
            }
            Some(l) => {
                text.push_str(l);
                text.push('\n');
            }
            None => return false,
        }
    }
    // Nothing after the delimiter but bash's own blanks: a line of U+00A0 is a command to bash
    // (red team, round 15: Codex did not take it, and bash ran `\u{a0}` outside the sandbox).
    if !lines.all(|l| l.bytes().all(|b| b == b' ' || b == b'\t')) {
        return false;
    }
    // A patch as Codex reads one: anything else it may hand to bash after all.
    let body = text.trim_end_matches('\n');
    body.starts_with("*** Begin Patch\n")
        && body.ends_with("\n*** End Patch")
        && (quoted || !text.contains(['$', '`', '\\']))
}

fn session_walled(project: &Project, config: &Config) -> Result<bool, String> {
    crate::sandbox::walls(config.sandbox.mode, &project.config_path())
}

/// The answer that runs the shell call inside the sandbox: the tool's input, its `command`
/// replaced (every other field — Claude's `description`, `timeout`, `run_in_background`,
/// Gemini's `dir_path` — kept). Claude Code and Codex CLI read the same shape, `allow` with
/// `updatedInput`; the explicit `allow` waives the client's own Bash prompt, as Claude Code does
/// itself for commands its own sandbox runs: the kernel is the wall for what the command can
/// touch. Gemini CLI reads `hookSpecificOutput.tool_input` (0.61.0 merges it over the model's
/// arguments on one path and builds the call from it alone on another, hence the whole input);
/// with no `decision`, its own confirmation still applies.
fn sandboxed_answer(agent: Agent, p: &Payload, command: &str) -> HookOutput {
    let mut input = p.tool_input.clone().unwrap_or_else(|| json!({}));
    if !input.is_object() {
        input = json!({});
    }
    input["command"] = Value::String(command.to_string());
    if agent == Agent::Gemini {
        return HookOutput {
            stdout: json!({"hookSpecificOutput": {
                "hookEventName": "BeforeTool",
                "tool_input": input,
            }})
            .to_string(),
            ..HookOutput::default()
        };
    }
    rewritten(
        input,
        "Forge runs this command inside its kernel sandbox (forge sandbox --profile session)",
    )
}

/// `allow` with the tool's input replaced by `input` (Claude Code's and Codex CLI's
/// `updatedInput`).
fn rewritten(input: Value, reason: &str) -> HookOutput {
    HookOutput {
        stdout: json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
            "updatedInput": input,
        }})
        .to_string(),
        ..HookOutput::default()
    }
}

/// The paths the project's `sandbox.secrets` names, and Forge's own ([`FORGE_SECRETS`]), as
/// the sandbox takes them.
///
/// [`FORGE_SECRETS`]: crate::sandbox::config::FORGE_SECRETS
fn secrets_of(project: &Project, config: &Config) -> Vec<PathBuf> {
    let root = project
        .root
        .canonicalize()
        .unwrap_or_else(|_| project.root.clone());
    let home = crate::repo::home();
    config
        .sandbox
        .all_secrets()
        .map(|s| crate::sandbox::resolve::configured_secret(s, &root, &home))
        .collect()
}

/// Claude Code's Grep of a folder of the session's project, with every file whose name says it
/// holds secrets (`.env`, `*.key`, `id_rsa`, …) left out: its `glob` gets ripgrep exclusions
/// after whatever it selects (ripgrep lets the later glob win). The guard refuses a search that
/// names such a file, but a search of the whole project reads every file `.gitignore` does
/// not name, with hidden ones (red team, round 15: an `.env` not in `.gitignore` was printed),
/// and a walk of the project on every call to look for them would cost more than the search.
///
/// Only inside the project, where Claude Code does not ask before a search anyway: the explicit
/// `allow` this answer needs would otherwise waive its prompt for a folder outside. Codex has
/// no search tool; Gemini CLI's `grep_search` takes other options than ripgrep's globs and is not
/// narrowed (a search the guard refuses stays refused).
fn narrowed_search(agent: Agent, p: &Payload, project: &Project, config: &Config) -> Option<Value> {
    if agent != Agent::Claude || p.tool_name.as_deref() != Some("Grep") {
        return None;
    }
    let secrets = secrets_of(project, config);
    let input = p.tool_input.as_ref()?.as_object()?;
    let cwd = PathBuf::from(p.cwd.as_deref()?);
    let here = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
    // As Claude Code resolves it: trimmed, `~` and `~/` from home, the rest from the session's
    // folder with `..` taken lexically (red team, round 15: `$x/..` is the project).
    let folder = match input.get("path") {
        None | Some(Value::Null) => cwd,
        Some(Value::String(s)) => match s.trim_matches(crate::guard::tools::js_space) {
            "" => cwd,
            "~" => crate::repo::home(),
            t => match t.strip_prefix("~/") {
                Some(rest) => crate::repo::home().join(rest),
                None => crate::guard::paths::logical(&cwd.join(t)),
            },
        },
        Some(_) => return None,
    };
    // Inside the project as Claude Code sees it (where it does not ask) or as the kernel does
    // (a folder linked from the project is searched through the link, ripgrep following it).
    let root = project.root.canonicalize().ok()?;
    let real = crate::guard::paths::real(&folder);
    if !folder.starts_with(&root) && !real.starts_with(&root) {
        return None;
    }
    // Through a link ripgrep names what it finds by the link (`link/prod-creds.yaml`), which
    // no exclusion of the real path meets (red team, round 15): such a search of a configured
    // secret is not narrowed, and the guard refuses it.
    if real != folder && secrets.iter().any(|s| s.starts_with(&real)) {
        return None;
    }
    let mut globs = match input.get("glob") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.trim().to_string(),
        Some(_) => return None,
    };
    let named = secrets
        .iter()
        .filter_map(|s| crate::guard::paths::exclusions_of(s, &root, &here))
        .flatten();
    for g in crate::guard::paths::search_exclusion_globs().chain(named) {
        if !globs.is_empty() {
            globs.push(' ');
        }
        globs.push_str(&g);
    }
    let mut out = Value::Object(input.clone());
    out["glob"] = Value::String(globs);
    Some(out)
}

/// The guard for the repository containing `cwd`, as the hooks and `forge guard check` use
/// it: its `.forge/config.yaml` (a broken config is an error; relaxing rules only once a person
/// trusted them), the person's own rules and allow-once exceptions, the active run's phase.
/// Also returns the project and its config, for the budget check that follows.
pub fn guard_for(cwd: &Path) -> crate::Result<(Guard, Option<(Project, Config)>)> {
    if !cwd.is_absolute() {
        return Err(crate::Error::usage(format!(
            "the folder {} is not an absolute path",
            cwd.display()
        )));
    }
    let home = crate::repo::home();
    let (root, mut project) = match Project::discover_session(cwd) {
        Ok(p) => {
            let c = Config::load_cached(&p.config_path(), &p.tmp_dir().join("cache"))?;
            (p.root.clone(), Some((p, c)))
        }
        Err(_) => (
            cwd.ancestors()
                .find(|d| d.join(".git").exists())
                .map(Path::to_path_buf)
                .unwrap_or_else(|| cwd.to_path_buf()),
            None,
        ),
    };
    // The guard takes the `guard:` section over (a thousand rules are not copied per call).
    let section = project.as_mut().map(|(_, c)| std::mem::take(&mut c.guard));
    let guard =
        Guard::for_project(&root, &home, section).map_err(|message| crate::Error::State {
            path: root.join(crate::repo::TMP_DIR).join("active-run"),
            message,
            recovery:
                "Fix or remove the run state or ~/.config/forge/guard.yaml (a person), then retry."
                    .into(),
        })?;
    Ok((guard, project))
}

/// The PreToolUse answer in each agent's protocol. Allow prints nothing: an explicit "allow"
/// would bypass the agent's own permission prompts, which are not Forge's to waive.
pub fn pre_tool_answer(agent: Agent, r: &GuardResult) -> HookOutput {
    let reason = r.message();
    match (agent, r.decision) {
        (_, Decision::Allow) => HookOutput::default(),
        (Agent::Claude, d) => HookOutput {
            stdout: json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": d.as_str(),
                "permissionDecisionReason": reason,
            }})
            .to_string(),
            ..HookOutput::default()
        },
        // Codex treats "ask" as unsupported and proceeds: Forge denies instead, saying a person
        // must approve it.
        (Agent::Codex, d) => HookOutput {
            stdout: json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": ask_as_deny(d, &reason),
            }})
            .to_string(),
            ..HookOutput::default()
        },
        (Agent::Gemini, d) => HookOutput {
            stdout: json!({"decision": "deny", "reason": ask_as_deny(d, &reason)}).to_string(),
            ..HookOutput::default()
        },
    }
}

fn ask_as_deny(d: Decision, reason: &str) -> String {
    if d == Decision::Ask {
        format!("{reason} (this needs a person's approval; ask them to run it)")
    } else {
        reason.to_string()
    }
}

/// The change the hooks verify: `FORGE_CHANGE`, else `.tmp/.forge/active-change`.
pub fn active_change(project: &Project) -> Option<String> {
    if let Ok(c) = std::env::var("FORGE_CHANGE")
        && !c.trim().is_empty()
    {
        return Some(c.trim().to_string());
    }
    std::fs::read_to_string(active_change_path(project))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

pub fn active_change_path(project: &Project) -> PathBuf {
    project.tmp_dir().join("active-change")
}

/// What the Stop hook verifies: the active change, else every change under [`breaker::ALL_CHANGES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopTarget {
    /// The change whose scenarios are checked; `None`: every change's.
    pub change: Option<String>,
    /// The breaker that counts the attempts.
    pub breaker: String,
}

impl StopTarget {
    pub fn of(project: &Project) -> StopTarget {
        match active_change(project) {
            Some(c) => StopTarget {
                change: Some(c.clone()),
                breaker: c,
            },
            None => StopTarget {
                change: None,
                breaker: breaker::ALL_CHANGES.to_string(),
            },
        }
    }

    /// How a message names what was verified.
    pub fn describe(&self) -> String {
        match &self.change {
            Some(c) => format!("change \"{c}\""),
            None => "all changes (no change is active)".to_string(),
        }
    }
}

/// Stop: verify the active change, or every change when none is active. FAIL below the
/// threshold blocks the stop and hands the failures back; CIRCUIT OPEN lets the agent stop and
/// tells the person; PASS lets it stop. `stop_hook_active` needs no special case: every blocked
/// stop is a counted attempt, and the breaker ends the loop. The one exception: while subagents
/// the session started still run (`running`), a FAIL is work in progress — it blocks the stop
/// and says so, but does not count; the first Stop after the last one ended counts as usual.
fn stop(
    agent: Agent,
    cwd: &Path,
    _stop_hook_active: bool,
    session: Option<&str>,
    running: &[String],
) -> HookOutput {
    let Ok(project) = Project::discover_session(cwd) else {
        return HookOutput::default();
    };
    // An agent that `forge run` drives is judged by the run's gates: a red agent must be able
    // to stop with its one failing test, which a verify here would block.
    if let Ok(Some(phase)) = crate::guard::load_phase(&project.root)
        && phase.driven
    {
        let msg = format!(
            "forge run `{}` is in its {} phase: its gates judge this agent's work, so the Stop hook does not verify.",
            phase.run, phase.phase
        );
        return system_message(agent, &msg);
    }
    let target = StopTarget::of(&project);
    let key = target.breaker.as_str();
    let what = target.describe();
    // Already open: no point running the tests again (and counting another failure).
    if let Ok(Some(s)) = breaker::load(&project, key)
        && s.open
    {
        let msg = format!(
            "Breaker: CIRCUIT OPEN — {} consecutive verify failures for change \"{key}\". A person must step in: look at the failures, then run `forge verify --reset-breaker --change {key}`.",
            s.consecutive_failures
        );
        return system_message(agent, &msg);
    }
    let outcome = (|| -> crate::Result<(verify::VerifyReport, Option<breaker::Outcome>)> {
        let config = Config::load(&project.config_path())?;
        breaker::load(&project, key)?;
        // The checks run the code the agent just wrote: inside the same wall as its commands.
        let place =
            verify::walled_place(&project, config.verify.sandbox_mode(config.sandbox.mode))?;
        let report = verify::run_with(
            &project,
            &config.verify,
            verify::Request {
                change: target.change.as_deref(),
                only: &[],
                place: Some(&place),
            },
            &mut verify::Silent,
        )?;
        let rec = recorder(agent, session, cwd).map(|(_, rec)| rec);
        // A FAIL while subagents still run is recorded, not counted: their work is not done.
        let waits = report.verdict == Verdict::Fail && !running.is_empty();
        let o = crate::counted::verdict(
            &project,
            (!waits).then_some(key),
            crate::counted::Verified::Report(&report),
            config.breaker.max_failures,
            rec.as_ref(),
        )?;
        if waits && let Some(rec) = &rec {
            rec.record_or_warn(
                target.change.as_deref(),
                "hook",
                json!({"event": "stop-waits-for-subagents", "running": running}),
            );
        }
        Ok((report, o))
    })();
    match outcome {
        Ok((report, None)) => {
            let reason = format!(
                "{} subagent(s) still running ({}); Forge verify FAILED for {what}, and while they work this FAIL is not counted toward the circuit breaker. Wait for their results before you stop: the first Stop after the last one ends is verified and counted as usual.\n{}",
                running.len(),
                running.join(", "),
                summary(&report, 8),
            );
            block(agent, &reason)
        }
        Err(e) => {
            // Forge cannot verify: the agent may stop, and the person is told why.
            let msg = format!("Forge could not verify {what}: {e}");
            system_message(agent, &msg)
        }
        Ok((report, Some(o))) if o.state.open => {
            let msg = format!(
                "{} A person must step in: look at the failures, then run `forge verify --reset-breaker --change {key}`. {}",
                o.line(),
                summary(&report, 3)
            );
            system_message(agent, &msg)
        }
        Ok((report, Some(o))) if report.verdict == Verdict::Fail => {
            let reason = format!(
                "Forge verify FAILED for {what} — you cannot stop yet. {}\n{}",
                summary(&report, 8),
                o.line()
            );
            block(agent, &reason)
        }
        Ok(_) => HookOutput::default(),
    }
}

/// A Stop the agent may not take, with why, in `agent`'s words.
fn block(agent: Agent, reason: &str) -> HookOutput {
    let stdout = match agent {
        Agent::Gemini => json!({"decision": "deny", "reason": reason}),
        _ => json!({"decision": "block", "reason": reason}),
    };
    HookOutput {
        stdout: stdout.to_string(),
        ..HookOutput::default()
    }
}

fn system_message(_agent: Agent, msg: &str) -> HookOutput {
    HookOutput {
        stdout: json!({"systemMessage": msg}).to_string(),
        stderr: format!("{msg}\n"),
        exit: 0,
    }
}

/// A short, useful account of a FAIL: failing cases with their first message line, infra
/// errors, failing and uncovered scenarios, commands that failed without cases.
pub fn summary(r: &verify::VerifyReport, max_items: usize) -> String {
    let mut lines = Vec::new();
    if let Some(e) = &r.tests.infra_error {
        lines.push(format!(
            "Build/import error: {}",
            crate::text::clip(e.lines().next().unwrap_or(""), 200)
        ));
    }
    for c in r
        .cases
        .iter()
        .filter(|c| c.status == crate::report::Status::Failed)
        .take(max_items)
    {
        let first = c
            .message
            .as_deref()
            .and_then(|m| m.lines().next())
            .unwrap_or("");
        lines.push(format!(
            "Failing test {}: {}",
            c.name,
            crate::text::clip(first, 160)
        ));
    }
    for s in &r.scenarios {
        match s.status {
            Coverage::Uncovered => lines.push(format!(
                "Uncovered scenario {}/{}: add a test marked `@scenario {}/{}`",
                s.change, s.id, s.change, s.id
            )),
            Coverage::Failing => lines.push(format!("Failing scenario {}/{}", s.change, s.id)),
            Coverage::Covered => {}
        }
    }
    for c in &r.commands {
        if !c.ok && c.report.cases.is_empty() && c.report.infra_error.is_none() {
            let mut how = if c.timed_out {
                format!("timed out after {} s", c.timeout_secs)
            } else {
                c.exit_code
                    .map_or("no exit code".to_string(), |x| format!("exit {x}"))
            };
            // Why an exit 0 failed: `no test case in the report`, a missing report file.
            if let Some(e) = &c.report_error {
                how.push_str(&format!(", {e}"));
            }
            lines.push(format!(
                "Command `{}` failed ({how}); see {}",
                c.name, c.log
            ));
        }
    }
    lines.truncate(max_items.max(1) + 4);
    lines.join("\n")
}

/// What the agent is told at the start: what the guard denies, and exactly what happens when it
/// stops (the Stop hook's target and breaker, as [`stop`] will use them).
fn session_start(agent: Agent, cwd: &Path, _session: Option<String>) -> HookOutput {
    let Ok(project) = Project::discover_session(cwd) else {
        return HookOutput::default();
    };
    let target = StopTarget::of(&project);
    let key = &target.breaker;
    let max = Config::load_cached(&project.config_path(), &project.tmp_dir().join("cache"))
        .map(|c| c.breaker.max_failures)
        .unwrap_or(breaker::DEFAULT_MAX_FAILURES);
    if let Ok(Some(phase)) = crate::guard::load_phase(&project.root)
        && phase.driven
    {
        let ctx = format!(
            "Forge guards this session: destructive commands, writes outside the repository and edits of .forge/ or .git/ are denied. forge run `{}` is in its {} phase: its gates judge your work, so the Stop hook does not verify.",
            phase.run, phase.phase
        );
        return HookOutput {
            stdout: json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ctx}}).to_string(),
            ..HookOutput::default()
        };
    }
    let verify = match &target.change {
        Some(c) => format!("`forge verify --change {c}` runs (the verify commands and the scenarios of change {c})"),
        None => "`forge verify` runs (the verify commands and the scenarios of every change; no change is active)".to_string(),
    };
    let mut ctx = format!(
        "Forge guards this session: destructive commands, writes outside the repository and edits of .forge/ or .git/ are denied. When you stop, {verify}: a FAIL blocks the stop and hands the failures back to you, until {max} FAILs in a row open the circuit breaker and a person must step in."
    );
    let b = match breaker::load(&project, key) {
        Ok(Some(s)) if s.open => format!(
            "CIRCUIT OPEN after {} consecutive failures — a person must reset it",
            s.consecutive_failures
        ),
        Ok(Some(s)) => format!(
            "{} consecutive verify failure(s), last verdict {}",
            s.consecutive_failures,
            s.last_verdict.map_or("none", |v| v.as_str())
        ),
        Ok(None) => "no verify attempts yet".into(),
        Err(_) => "breaker state unreadable — a person must look at it".into(),
    };
    match &target.change {
        Some(change) => ctx.push_str(&format!("\nActive change: {change} ({b}).")),
        None => ctx.push_str(&format!("\nBreaker \"{key}\": {b}.")),
    }
    if let Ok(sc) = crate::spec::scenarios(&project, target.change.as_deref())
        && !sc.is_empty()
    {
        ctx.push_str("\nScenarios (cover each with a test marked `@scenario <change>/<id>`):");
        for s in sc.iter().take(30) {
            ctx.push_str(&format!("\n- {}/{}: {}", s.change, s.id, s.title));
        }
    }
    if agent == Agent::Codex
        && let Some(w) =
            codex_trust::session_warning(&install::codex_home(&crate::repo::home()), &project.root)
    {
        ctx.push_str(&format!("\n{w}"));
    }
    HookOutput {
        stdout: json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ctx}}).to_string(),
        ..HookOutput::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Codex session's rollouts — its own and its subagents' — are remembered across its hooks,
    /// each once; a session id that is no plain name keeps no list.
    #[test]
    fn a_sessions_rollouts_are_remembered_once_each() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join("transcripts");
        let (main, sub) = (Path::new("/r/main.jsonl"), Path::new("/r/sub.jsonl"));
        assert_eq!(
            session_rollouts(&c, Some("t-1"), main),
            vec![main.to_path_buf()]
        );
        assert_eq!(
            session_rollouts(&c, Some("t-1"), sub),
            vec![main.to_path_buf(), sub.to_path_buf()]
        );
        assert_eq!(
            session_rollouts(&c, Some("t-1"), main),
            vec![main.to_path_buf(), sub.to_path_buf()]
        );
        assert_eq!(
            session_rollouts(&c, Some("t-2"), sub),
            vec![sub.to_path_buf()]
        );
        assert_eq!(
            session_rollouts(&c, Some("../x"), sub),
            vec![sub.to_path_buf()]
        );
        assert!(!d.path().join("x.rollouts").exists());
    }

    #[test]
    fn bounded_read_times_out_and_caps() {
        let (r, _w) = std::io::pipe().unwrap();
        let e = read_bounded(r, 10, Duration::from_millis(100)).unwrap_err();
        assert!(e.contains("did not end"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 11]).unwrap();
        let e = read_bounded(
            std::fs::File::open(&big).unwrap(),
            10,
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(e.contains("larger"), "{e}");
        let ok = dir.path().join("ok");
        std::fs::write(&ok, b"{}").unwrap();
        assert_eq!(
            read_bounded(
                std::fs::File::open(&ok).unwrap(),
                10,
                Duration::from_secs(1)
            )
            .unwrap(),
            b"{}"
        );
    }

    /// A Forge project in a temp folder, and a Bash payload for it.
    fn project_with(sandbox_yaml: &str) -> (tempfile::TempDir, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".forge")).unwrap();
        std::fs::write(
            dir.path().join(".forge/config.yaml"),
            format!("verify:\n  commands:\n    - {{name: t, run: 'true'}}\n{sandbox_yaml}"),
        )
        .unwrap();
        let payload = json!({"session_id": "s", "cwd": dir.path(), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "echo \"it's\" > out.txt", "description": "d", "timeout": 5000}});
        (dir, payload.to_string().into_bytes())
    }

    #[test]
    fn bash_calls_are_rewritten_into_the_session_sandbox() {
        if crate::sandbox::level().landlock_abi == 0 {
            eprintln!("SKIPPED: no Landlock here, so the hook does not rewrite");
            return;
        }
        let (dir, payload) = project_with("");
        for agent in [Agent::Claude, Agent::Codex] {
            let o = handle(agent, Event::PreToolUse, Ok(payload.clone()), dir.path());
            let v: Value = serde_json::from_str(&o.stdout).unwrap();
            let h = &v["hookSpecificOutput"];
            assert_eq!(h["permissionDecision"], "allow", "{agent:?}: {}", o.stdout);
            let cmd = h["updatedInput"]["command"].as_str().unwrap();
            assert!(
                cmd.contains(" sandbox --profile session --project "),
                "{cmd}"
            );
            assert!(cmd.contains(r#"echo "it'\''s" > out.txt"#), "{cmd}");
            // The client's other fields are kept.
            assert_eq!(h["updatedInput"]["description"], "d");
            assert_eq!(h["updatedInput"]["timeout"], 5000);
        }
        // Gemini CLI takes `hookSpecificOutput.tool_input` in place of the model's arguments
        // (seen with 0.61.0): its shell tool's command is rewritten, its other fields kept, and
        // no `cd` is carried over (each of its commands starts afresh, as Codex's do). No
        // `decision`: the client's own confirmation still applies.
        let gemini = json!({"session_id": "s", "cwd": dir.path(), "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "echo \"it's\" > out.txt",
            "description": "d", "dir_path": "sub"}});
        let o = handle(
            Agent::Gemini,
            Event::PreToolUse,
            Ok(gemini.to_string().into_bytes()),
            dir.path(),
        );
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(
            v["hookSpecificOutput"]["hookEventName"], "BeforeTool",
            "{v}"
        );
        assert!(v.get("decision").is_none(), "{v}");
        let input = &v["hookSpecificOutput"]["tool_input"];
        let cmd = input["command"].as_str().unwrap();
        assert!(
            cmd.contains(" sandbox --profile session --project "),
            "{cmd}"
        );
        assert!(cmd.contains(r#"echo "it'\''s" > out.txt"#), "{cmd}");
        assert!(!cmd.contains("__forge_cwd"), "{cmd}");
        assert_eq!(input["description"], "d");
        assert_eq!(input["dir_path"], "sub");
        // Gemini's tool is `run_shell_command`; a `Bash` there is no shell call of Gemini's.
        let o = handle(
            Agent::Gemini,
            Event::PreToolUse,
            Ok(payload.clone()),
            dir.path(),
        );
        assert_eq!(o.stdout, "");
        // Other tools are not rewritten.
        let write = json!({"cwd": dir.path(), "tool_name": "Write",
            "tool_input": {"file_path": dir.path().join("a.txt"), "content": "x"}});
        let o = handle(
            Agent::Claude,
            Event::PreToolUse,
            Ok(write.to_string().into_bytes()),
            dir.path(),
        );
        assert_eq!(o.stdout, "");
        // A guard deny stays a deny.
        let deny = json!({"cwd": dir.path(), "tool_name": "Bash",
            "tool_input": {"command": "rm -rf ~/"}});
        let o = handle(
            Agent::Claude,
            Event::PreToolUse,
            Ok(deny.to_string().into_bytes()),
            dir.path(),
        );
        assert!(o.stdout.contains("\"deny\""), "{}", o.stdout);
        assert!(!o.stdout.contains("updatedInput"), "{}", o.stdout);
        // Claude Code carries a command's `cd` over, except for a subagent isolated in a
        // worktree: its own check refuses a `cd` it cannot follow there.
        let wt = dir.path().join(".claude/worktrees/agent-a1");
        std::fs::create_dir_all(&wt).unwrap();
        for (cwd, carried) in [(dir.path().to_path_buf(), true), (wt, false)] {
            let mut p: Value = serde_json::from_slice(&payload).unwrap();
            p["cwd"] = json!(cwd);
            let o = handle(
                Agent::Claude,
                Event::PreToolUse,
                Ok(p.to_string().into_bytes()),
                dir.path(),
            );
            assert_eq!(o.stdout.contains("builtin cd"), carried, "{}", o.stdout);
            assert!(
                o.stdout.contains("sandbox --profile session"),
                "{}",
                o.stdout
            );
        }
    }

    #[test]
    fn claude_searches_of_the_project_leave_secret_named_files_out() {
        let (dir, _) = project_with("");
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("linked")).unwrap();
        let grep = |agent: Agent, input: Value| {
            let p = json!({"session_id": "s", "cwd": dir.path(), "hook_event_name": "PreToolUse",
                "tool_name": "Grep", "tool_input": input});
            handle(
                agent,
                Event::PreToolUse,
                Ok(p.to_string().into_bytes()),
                dir.path(),
            )
        };
        let exclusions: Vec<String> = crate::guard::paths::search_exclusion_globs().collect();
        // No glob, a folder of the project, a glob that selects: each keeps what it had and
        // gains the exclusions after it, Forge's undo journal among them (it holds copies of
        // every file); the other fields are kept.
        let journal = " !**/.tmp/.forge/undo !/.tmp/.forge/undo";
        for (input, before) in [
            (json!({"pattern": "TOKEN"}), ""),
            (
                json!({"pattern": "TOKEN", "path": dir.path().join("src"), "glob": "*.{ts,tsx}", "output_mode": "content"}),
                "*.{ts,tsx} ",
            ),
            (
                json!({"pattern": "TOKEN", "path": "src", "glob": "  *.rs  "}),
                "*.rs ",
            ),
            // `$x/..` is the project to Claude Code, and a folder linked from it is searched
            // through the link.
            (json!({"pattern": "TOKEN", "path": "$x/.."}), ""),
            (json!({"pattern": "TOKEN", "path": "linked"}), ""),
        ] {
            let o = grep(Agent::Claude, input.clone());
            let v: Value = serde_json::from_str(&o.stdout).unwrap();
            let h = &v["hookSpecificOutput"];
            assert_eq!(h["permissionDecision"], "allow", "{}", o.stdout);
            let u = &h["updatedInput"];
            assert_eq!(
                u["glob"].as_str().unwrap(),
                format!("{before}{}{journal}", exclusions.join(" ")),
                "{input}"
            );
            for (k, val) in input.as_object().unwrap() {
                if k != "glob" {
                    assert_eq!(&u[k], val, "{k}");
                }
            }
        }
        // Through a link to a folder that holds a configured secret: not narrowed (the guard
        // judges the search as it is).
        // Outside the project an `allow` would waive Claude's own prompt: left as it was.
        let outside = tempfile::tempdir().unwrap();
        for path in [
            outside.path().to_string_lossy().to_string(),
            "~/notes".into(),
            " ~".into(),
            "../..".into(),
        ] {
            let o = grep(Agent::Claude, json!({"pattern": "x", "path": path}));
            assert!(!o.stdout.contains("updatedInput"), "{path}: {}", o.stdout);
        }
        // Gemini's search is not narrowed; a search the guard refuses stays refused.
        let o = grep(Agent::Gemini, json!({"pattern": "TOKEN"}));
        assert!(!o.stdout.contains("updatedInput"), "{}", o.stdout);
        let o = grep(Agent::Claude, json!({"pattern": "x", "glob": ".env"}));
        assert!(o.stdout.contains("\"deny\""), "{}", o.stdout);
        assert!(!o.stdout.contains("updatedInput"), "{}", o.stdout);
    }

    /// What `sandbox.secrets` names is hidden from the file tools too: Claude Code's Grep of the
    /// project leaves it out, a Read of it or a search that would read it is refused (red team,
    /// round 15: only the sandbox knew the list). A relative entry is the project's.
    #[test]
    fn the_configured_secrets_are_out_of_the_file_tools_reach() {
        let (dir, _) = project_with("sandbox:\n  secrets: [config/prod-creds.yaml]\n");
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::write(dir.path().join("config/prod-creds.yaml"), "pw: x\n").unwrap();
        let call = |agent: Agent, tool: &str, input: Value| {
            let p = json!({"session_id": "s", "cwd": dir.path().join("config"),
                "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
            handle(
                agent,
                Event::PreToolUse,
                Ok(p.to_string().into_bytes()),
                dir.path(),
            )
            .stdout
        };
        let o = call(
            Agent::Claude,
            "Grep",
            json!({"pattern": "pw", "path": dir.path()}),
        );
        let v: Value = serde_json::from_str(&o).unwrap();
        let glob = v["hookSpecificOutput"]["updatedInput"]["glob"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            glob.ends_with(" !**/config/prod-creds.yaml !/prod-creds.yaml"),
            "{glob}"
        );
        // Through a link ripgrep names it `link/prod-creds.yaml`: refused, not narrowed.
        std::os::unix::fs::symlink(dir.path().join("config"), dir.path().join("link")).unwrap();
        let o = call(
            Agent::Claude,
            "Grep",
            json!({"pattern": "pw", "path": dir.path().join("link")}),
        );
        assert!(
            o.contains("sandbox.secrets") && !o.contains("updatedInput"),
            "{o}"
        );
        for (agent, tool, input) in [
            (
                Agent::Claude,
                "Read",
                json!({"file_path": dir.path().join("config/prod-creds.yaml")}),
            ),
            (
                Agent::Claude,
                "Read",
                json!({"file_path": "prod-creds.yaml"}),
            ),
            (
                Agent::Gemini,
                "search_file_content",
                json!({"pattern": "pw"}),
            ),
            (
                Agent::Gemini,
                "search_file_content",
                json!({"pattern": "pw", "include": "*.yaml"}),
            ),
        ] {
            let o = call(agent, tool, input.clone());
            assert!(o.contains("sandbox.secrets"), "{tool} {input}: {o}");
        }
    }

    #[test]
    fn codex_applies_only_a_plain_patch_command_itself() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n";
        for yes in [
            format!("apply_patch <<'EOF'\n{patch}EOF\n"),
            format!("applypatch <<\"PATCH\"\n{patch}PATCH"),
            format!("cd src && apply_patch <<EOF\n{patch}EOF\n"),
        ] {
            assert!(codex_applies_itself(&yes), "{yes}");
        }
        for no in [
            format!("apply_patch <<'EOF'\n{patch}EOF\nrm -rf ~\n"),
            format!("apply_patch <<'EOF'\n{patch}EOF\n\u{a0}\n"),
            format!("apply_patch <<'EOF'\n{patch}EOF\n\u{b}\n"),
            format!("apply_patch <<'EOF'\n{patch}EOF\n\r\n"),
            "apply_patch <<'EOF'\nnot a patch\nEOF\n".to_string(),
            format!("cd -P && apply_patch <<'EOF'\n{patch}EOF\n"),
            format!("cd -- && apply_patch <<'EOF'\n{patch}EOF\n"),
            format!("apply_patch <<'EOF'\n*** Begin Patch\nEOF \n{patch}EOF\n"),
            format!("apply_patch <<'EOF'\n*** Begin Patch\nEOFEOF\n{patch}EOF\n"),
            format!("apply_patch <<'EOF'\r\n{patch}EOF\r\n"),
            format!("apply_patch <<'EOF'\n{patch}"),
            format!("apply_patch <<EOF\n$(touch /tmp/x)\n{patch}EOF\n"),
            format!("cd $HOME && apply_patch <<'EOF'\n{patch}EOF\n"),
            format!("cd a; rm -rf b && apply_patch <<'EOF'\n{patch}EOF\n"),
            format!("apply_patch <<'EOF' > out\n{patch}EOF\n"),
            format!("apply_patch <<'E OF'\n{patch}E OF\n"),
            format!("x=1 apply_patch <<'EOF'\n{patch}EOF\n"),
            "apply_patchx <<'EOF'\nEOF\n".to_string(),
            "echo apply_patch".to_string(),
        ] {
            assert!(!codex_applies_itself(&no), "{no}");
        }
    }

    #[test]
    fn mode_off_leaves_bash_calls_as_they_are() {
        let (dir, payload) = project_with("sandbox:\n  mode: off\n");
        let o = handle(Agent::Claude, Event::PreToolUse, Ok(payload), dir.path());
        assert_eq!(o.stdout, "");
    }

    #[test]
    fn malformed_pre_tool_input_is_denied_in_every_protocol() {
        let dir = tempfile::tempdir().unwrap();
        for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
            for input in [
                Ok(b"{not json".to_vec()),
                Ok(b"[1]".to_vec()),
                Ok(b"{}".to_vec()),
                Err("the hook input did not end".to_string()),
            ] {
                let o = handle(agent, Event::PreToolUse, input.clone(), dir.path());
                assert_eq!(o.exit, 0);
                let v: Value = serde_json::from_str(&o.stdout).unwrap();
                let denied = v["hookSpecificOutput"]["permissionDecision"] == "deny"
                    || v["decision"] == "deny";
                assert!(denied, "{agent:?} {input:?}: {}", o.stdout);
            }
        }
    }
}
