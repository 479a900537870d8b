//! Agents are commands. Each role (`planner`, `red`, `verifier`, `green`, `coverage_reviewer`)
//! names a shell command in `.forge/config.yaml`; Forge renders the role's prompt into a file and
//! runs the command in the repository root with the `FORGE_*` variables, a timeout, and its
//! output captured to the run folder. Any program can play a role — Claude Code, Codex, a script.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::observe::Attempt;
use super::{Run, protect};
use crate::budget::{self, BudgetConfig, Spend};
use crate::error::{Error, Result};
use crate::evidence::odb;
use crate::evidence::refs::Refs;
use crate::exec::{self, ExecOptions, ExecOutcome};

use crate::repo::Project;

pub const DEFAULT_AGENT_TIMEOUT_SECS: u64 = 1800;
/// Bytes of an agent's output kept in memory (for the status and the next prompt).
const TAIL_BYTES: usize = 32 * 1024;
/// An agent's output is read for its cost as it comes out of the pipe, up to this size (a
/// result JSON is a few KiB; a runaway printer is cut off rather than held).
const SPEND_CAP: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Planner,
    Red,
    Verifier,
    Green,
    CoverageReviewer,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Planner,
        Role::Red,
        Role::Verifier,
        Role::Green,
        Role::CoverageReviewer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Red => "red",
            Role::Verifier => "verifier",
            Role::Green => "green",
            Role::CoverageReviewer => "coverage_reviewer",
        }
    }
}

/// `agents:` in `.forge/config.yaml`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsConfig {
    /// The command for every role that names none of its own.
    #[serde(default)]
    pub default: Option<AgentConfig>,
    #[serde(default)]
    pub planner: Option<AgentConfig>,
    #[serde(default)]
    pub red: Option<AgentConfig>,
    #[serde(default)]
    pub verifier: Option<AgentConfig>,
    #[serde(default)]
    pub green: Option<AgentConfig>,
    #[serde(default)]
    pub coverage_reviewer: Option<AgentConfig>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Shell command; reads the prompt from `$FORGE_PROMPT_FILE`.
    pub command: String,
    /// The command for attempts after the first within one wave, to continue the same agent
    /// session (e.g. `claude -p … --resume "$FORGE_AGENT_SESSION"`). Without it every attempt
    /// runs `command`, with the same `FORGE_AGENT_SESSION`.
    #[serde(default)]
    pub resume_command: Option<String>,
    /// Seconds before the agent's whole process group is killed.
    #[serde(default = "default_timeout")]
    pub timeout: u64,
}

fn default_timeout() -> u64 {
    DEFAULT_AGENT_TIMEOUT_SECS
}

impl AgentsConfig {
    pub fn for_role(&self, role: Role) -> Option<&AgentConfig> {
        let own = match role {
            Role::Planner => &self.planner,
            Role::Red => &self.red,
            Role::Verifier => &self.verifier,
            Role::Green => &self.green,
            Role::CoverageReviewer => &self.coverage_reviewer,
        };
        own.as_ref().or(self.default.as_ref())
    }

    pub fn validate(&self) -> std::result::Result<(), String> {
        let all = [
            ("default", &self.default),
            ("planner", &self.planner),
            ("red", &self.red),
            ("verifier", &self.verifier),
            ("green", &self.green),
            ("coverage_reviewer", &self.coverage_reviewer),
        ];
        for (name, a) in all {
            let Some(a) = a else { continue };
            if a.command.trim().is_empty() {
                return Err(format!(
                    "`agents.{name}.command` is empty: give the shell command that plays this role"
                ));
            }
            if a.resume_command
                .as_deref()
                .is_some_and(|c| c.trim().is_empty())
            {
                return Err(format!(
                    "`agents.{name}.resume_command` is empty: remove it or give a command"
                ));
            }
            if a.timeout == 0 {
                return Err(format!(
                    "`agents.{name}.timeout` must be at least 1 (seconds)"
                ));
            }
        }
        Ok(())
    }

    /// The roles that have no command (neither their own nor `default`).
    pub fn missing(&self) -> Vec<&'static str> {
        Role::ALL
            .iter()
            .filter(|r| self.for_role(**r).is_none())
            .map(|r| r.name())
            .collect()
    }
}

/// One agent call: who, which slice and attempt, where its files go.
pub struct Call<'a> {
    pub role: Role,
    pub slice: &'a str,
    pub wave: u32,
    /// 1-based attempt within the wave.
    pub attempt: u32,
    /// The agent session continued across the attempts of one wave.
    pub session: &'a str,
    /// Whether `session` already exists (an earlier attempt of this agent started it): then
    /// `resume_command` runs, if configured. Verifiers and reviewers start fresh every call.
    pub resume: bool,
    pub prompt: &'a str,
    /// Where the agent writes its structured answer.
    pub output: &'a Path,
    /// The kernel sandbox launcher the command runs in (empty: none).
    pub wrap: &'a [std::ffi::OsString],
}

pub struct Finished {
    pub outcome: ExecOutcome,
    pub prompt_file: PathBuf,
    pub spend: Vec<Spend>,
}

/// A file-name stem for one call: `s1-red-w1-a2`.
pub fn stem(role: Role, slice: &str, wave: u32, attempt: u32) -> String {
    let slice = if slice.is_empty() { "run" } else { slice };
    format!("{slice}-{}-w{wave}-a{attempt}", role.name())
}

/// Renders the prompt file, runs the role's command and reads its cost from its output.
pub fn invoke(
    project: &Project,
    run_dir: &Path,
    run_slug: &str,
    agent: &AgentConfig,
    call: &Call,
    budget: &BudgetConfig,
) -> Result<Finished> {
    let stem = stem(call.role, call.slice, call.wave, call.attempt);
    let prompt_file = run_dir.join("prompts").join(format!("{stem}.md"));
    crate::state::write_atomic(&prompt_file, call.prompt.as_bytes())?;
    let command = match &agent.resume_command {
        Some(r) if call.resume => r.as_str(),
        _ => agent.command.as_str(),
    };
    let abs = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            project.root.join(p)
        }
    };
    let mut env = vec![
        ("FORGE_ROLE".to_string(), call.role.name().to_string()),
        (
            "FORGE_PROMPT_FILE".to_string(),
            abs(&prompt_file).display().to_string(),
        ),
        (
            "FORGE_RUN_DIR".to_string(),
            abs(run_dir).display().to_string(),
        ),
        ("FORGE_RUN".to_string(), run_slug.to_string()),
        ("FORGE_SLICE".to_string(), call.slice.to_string()),
        ("FORGE_ATTEMPT".to_string(), call.attempt.to_string()),
        ("FORGE_WAVE".to_string(), call.wave.to_string()),
        ("FORGE_AGENT_SESSION".to_string(), call.session.to_string()),
        (
            "FORGE_OUTPUT".to_string(),
            abs(call.output).display().to_string(),
        ),
        // Timeline events the agent's hooks write are attributed to this run and role.
        ("FORGE_SESSION".to_string(), format!("run-{run_slug}")),
        (
            "FORGE_ACTOR".to_string(),
            format!("agent:{}", call.role.name()),
        ),
    ];
    // The dollars left under the run's limits, for a client that can stop itself there
    // (`claude -p --max-budget-usd "$FORGE_BUDGET_LEFT_USD"`); unset when no USD limit applies.
    let session = format!("run-{run_slug}");
    if let Some(left) = budget::remaining_usd(project, budget, Some(run_slug), Some(&session))? {
        let left = (left * 10_000.0).floor() / 10_000.0;
        env.push(("FORGE_BUDGET_LEFT_USD".to_string(), format!("{left:.4}")));
    }
    let mut opts = ExecOptions::new(
        project.root.clone(),
        Duration::from_secs(agent.timeout),
        run_dir.join("agents").join(format!("{stem}.log")),
        TAIL_BYTES,
    );
    opts.env = env;
    opts.capture = SPEND_CAP;
    opts.contain = true;
    opts.pid_file = Some(pid_file(run_dir));
    opts.wrap = call.wrap.to_vec();
    if let Some(d) = call.output.parent() {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::io(format!("cannot create {}", d.display()), e))?;
    }
    let outcome = exec::run_shell(command, &opts)?;
    let _ = std::fs::remove_file(pid_file(run_dir));
    // The cost is read from what Forge read from the pipe, not from the log by path.
    let spend = outcome
        .captured
        .as_deref()
        .map(|b| spend_from_text(&String::from_utf8_lossy(b), budget))
        .unwrap_or_default();
    Ok(Finished {
        outcome,
        prompt_file,
        spend,
    })
}

/// The cost an agent's output carries: a `claude -p --output-format json` result, a `gemini
/// --output-format json` result, or `codex exec --json` events. Output that carries none costs
/// nothing here (a hook-recorded transcript may still count it).
pub fn spend_from_text(text: &str, config: &BudgetConfig) -> Vec<Spend> {
    if text.contains("\"turn.completed\"") {
        return budget::from_codex_jsonl(text, None, config);
    }
    // A whole-output JSON document (claude -p / gemini), or one line of it among lines of
    // stderr. Output holding several cost reports (a process the agent left could print one
    // of its own after the client's) counts the largest: a report can add cost, never hide it.
    let trimmed = text.trim();
    let lines = trimmed
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('{') && l.ends_with('}'));
    let mut best: Vec<Spend> = Vec::new();
    let weight = |v: &[Spend]| {
        (
            v.iter().map(|s| s.usd).sum::<f64>(),
            v.iter()
                .map(|s| s.tokens.total())
                .fold(0u64, u64::saturating_add),
        )
    };
    for c in std::iter::once(trimmed).chain(lines) {
        let Ok(v) = serde_json::from_str::<Value>(c) else {
            continue;
        };
        let found = budget::from_claude_json(&v, config)
            .or_else(|_| budget::from_gemini_json(&v, config))
            .unwrap_or_default();
        if !found.is_empty() && (best.is_empty() || weight(&found) > weight(&best)) {
            best = found;
        }
    }
    best
}

fn pid_file(run_dir: &Path) -> PathBuf {
    run_dir.join("agent.pid")
}

/// Ends what the agent of a killed run left running: its process group, if the process the run
/// recorded is still that agent (same start time, and its environment names this run — the file
/// is within an agent's reach, and must not make Forge kill anything else).
pub fn end_leftover(run_dir: &Path, slug: &str) {
    let f = pid_file(run_dir);
    let Ok(Some(bytes)) = crate::state::read_untrusted(&f, 256) else {
        return;
    };
    let _ = std::fs::remove_file(&f);
    let text = String::from_utf8_lossy(&bytes);
    let mut w = text.split_whitespace();
    let (Some(Ok(pid)), Some(Ok(started))) = (
        w.next().map(str::parse::<u32>),
        w.next().map(str::parse::<u64>),
    ) else {
        return;
    };
    if pid <= 1 || exec::start_time(pid) != Some(started) {
        return;
    }
    let mark = format!("FORGE_RUN={slug}");
    let ours = std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == mark.as_bytes()));
    if ours {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// A fresh agent session id: a random UUID (v4 layout), as `claude --session-id` requires.
pub fn new_session_id() -> String {
    let mut b = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .is_ok();
    if !filled {
        // No /dev/urandom: time and pid still give distinct ids per call.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let x = t ^ ((std::process::id() as u128) << 64);
        b = x.to_le_bytes();
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The agent's structured answer in `$FORGE_OUTPUT`, as JSON. The file is the agent's: a FIFO,
/// a device, a link or a huge file is a bad answer, never a hang.
pub fn read_output(path: &Path) -> std::result::Result<Value, String> {
    let bytes = match crate::state::read_untrusted(path, 4 * 1024 * 1024) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(format!(
                "the agent wrote no answer to $FORGE_OUTPUT ({})",
                path.display()
            ));
        }
        Err(e) => return Err(format!("the answer file {} {e}", path.display())),
    };
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))
}

impl Run<'_> {
    /// Captures what no agent may change, before an agent runs; its manifest goes to disk so
    /// a resume after a kill can tell what changed meanwhile.
    pub(super) fn protect(&mut self) -> Result<protect::Protected> {
        let p = protect::Protected::snapshot(self.project, &self.git_dir, &self.meta.slug)?;
        super::state::save_json(&self.dir.join("protected.json"), &p.manifest())?;
        Ok(p)
    }

    /// Runs one agent, observed: the working tree is snapshotted just before and just after,
    /// and every protected thing it changed — Forge's files, git's control files, refs, objects,
    /// HEAD, commits on the run's branch, the spend ledgers — is put back and named. `base` is
    /// the commit the run's branch must stay at.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_agent(
        &mut self,
        role: Role,
        slice: Option<usize>,
        attempt: u32,
        session: &str,
        prompt: &str,
        output: &Path,
        base: &str,
    ) -> Result<Attempt> {
        let agent_cfg = self
            .config
            .agents
            .for_role(role)
            .cloned()
            .expect("checked by require_all");
        let (sid, wave) = match slice {
            Some(i) => (
                self.state.slices[i].id.clone(),
                self.state.slices[i].progress().wave,
            ),
            None => (String::new(), 1),
        };
        // Red, green and the planner continue their session once an agent really started it (a
        // kill or a setup error can fall before); a verifier or a reviewer is new every time.
        let resume = self.meta.started_sessions.iter().any(|s| s == session);
        let request = self.agent_request(role, slice, output, &agent_cfg.command);
        let wrap = request
            .as_ref()
            .map(super::checks::launcher)
            .unwrap_or_default();
        let call = Call {
            role,
            slice: &sid,
            wave,
            attempt,
            session,
            resume,
            prompt,
            output,
            wrap: &wrap,
        };
        let before = {
            let root = self.project.root.clone();
            self.seen.snapshot_before_call(&root, base)?
        };
        // The tree as Forge saw it just before the call is on disk before the agent starts: a
        // kill during the call leaves a resume that knows what was there.
        self.remember(base, &before)?;
        self.meta.in_call = Some(super::state::InCall {
            role: role.name().to_string(),
            slice: slice.map(|_| sid.clone()),
        });
        self.save()?;
        let t = crate::trace::span("call-guard");
        let refs = Refs::list(self.root(), &self.git_dir)?;
        let protected = self.protect()?;
        let objects = odb::Stamp::take(&self.git_dir);
        let programs = protect::PathWatch::take(self.path_scope());
        let ledgers = protect::Ledgers::capture(self.project, &self.meta.slug);
        let index = index_stamp(&self.git_dir);
        // Outside the kernel sandbox the agent can reach the checks' checkout in the temp
        // folder: the next check sweeps it whole rather than trust it.
        if matches!(self.wall, super::Wall::Off)
            && let Some(co) = self.checkout.as_mut()
        {
            co.invalidate();
        }
        drop(t);
        let t = crate::trace::span("agent-call");
        let fin = invoke(
            self.project,
            &self.dir,
            &self.meta.slug,
            &agent_cfg,
            &call,
            self.config.budget,
        )?;

        drop(t);
        let t = crate::trace::span("call-restore");
        // Everything the agent may not change, put back and named: HEAD and the refs first
        // (putting a ref back writes its log), then the files, logs among them.
        let mut restored = self.unlink_branch(base)?;
        let head_moved = self.restore_head(base)?;
        let commits = self.undo_commits(base)?;
        let branch = self.meta.branch.clone();
        restored.extend(refs.put_back(
            self.root(),
            &Refs::list(self.root(), &self.git_dir)?,
            branch.as_deref(),
        )?);
        restored.extend(protected.put_back(self.project)?);
        restored.extend(ledgers.put_back(self.project)?);
        let (removed, changed) = programs.put_back();
        restored.extend(removed);
        if !changed.is_empty() {
            let why = format!(
                "programs on PATH changed while the {} agent ran: {} — they would run in place of the real ones; a person checks them",
                role.name(),
                changed.join(", ")
            );
            restored.push(why.clone());
            self.halt = Some(why);
        }
        // The index is the agent's too (staged content, skip-worktree and assume-unchanged
        // flags): no gate reads it, but the person will; it goes back to the base's tree. Any
        // lock a git of the agent's left is stale: everything the agent started is dead.
        // An index whose inode and ctime did not move was not written (the kernel sets the
        // ctime on every change): nothing to reset.
        let lock = self.git_dir.join("index.lock");
        let locked = std::fs::symlink_metadata(&lock).is_ok();
        if locked || index.is_none() || index != index_stamp(&self.git_dir) {
            let _ = std::fs::remove_file(&lock);
            crate::git::git(self.root(), &["read-tree", base])?;
        }
        let odb = self.seen.odb(&self.project.root);
        let bad = odb::Stamp::take(&self.git_dir)
            .changes_since(&objects, &self.git_dir)
            .verify(&odb, &self.git_dir);
        if !bad.is_empty() {
            self.seen.forget_stored();
        }
        restored.extend(bad);

        drop(t);
        // Output too long to read its cost from is an unknown cost, never a free call: the
        // attempt fails and the run stops before the next agent call, for a person to look.
        if fin.outcome.captured.is_none() && fin.outcome.output_bytes > 0 {
            let why = format!(
                "the {} agent printed {} bytes, more than Forge reads for its cost: what it spent is unknown",
                role.name(),
                fin.outcome.output_bytes
            );
            restored.push(why.clone());
            self.halt = Some(why);
        }
        // Its cost, if valid: an absurd figure is a bad answer, and reaches no ledger.
        let invalid: Vec<String> = fin.spend.iter().filter_map(|s| s.invalid()).collect();
        let spend: Vec<Spend> = if invalid.is_empty() {
            fin.spend.clone()
        } else {
            restored.extend(
                invalid
                    .iter()
                    .map(|w| format!("its cost report is invalid: {w}")),
            );
            Vec::new()
        };
        let usd: f64 = spend.iter().map(|s| s.usd).sum();
        let tokens: u64 = spend.iter().map(|s| s.tokens.total()).sum();
        if !spend.is_empty() {
            let session = format!("run-{}", self.meta.slug);
            let notices =
                crate::budget::record(self.project, Some(&self.meta.slug), Some(&session), &spend)?;
            for n in notices {
                self.say(&format!("  ! {}", n.hint()));
                self.event("estimated-price", n.event());
            }
            for s in &spend {
                self.rec.record_or_warn(
                    Some(&self.meta.slug),
                    "budget",
                    json!({"usd": s.usd, "model": s.model, "tokens": s.tokens.total(), "source": s.source, "role": role.name(), "slice": sid}),
                );
            }
        }
        if let Some(i) = slice {
            let p = self.state.slices[i].progress_mut();
            p.cost_usd += usd;
            p.tokens += tokens;
        }
        let o = &fin.outcome;
        self.meta.agent_ms += o.duration.as_millis() as u64;
        let tail = String::from_utf8_lossy(&o.tail).trim().to_string();
        // The tree after the call, read before the call's outcome is trusted at all: a call
        // that changed something ran, whatever it printed.
        // The areas as the kernel granted them, now that the launcher has made them.
        let areas = self.written_areas(request.as_ref());
        let mut after = {
            let root = self.project.root.clone();
            self.seen
                .snapshot_after_call(&root, base, &before, areas.as_deref())?
        };
        // A program that was not found, or a sandbox that could not be set up, ran nothing: a
        // call that changed the tree, committed or touched what no agent may change did run,
        // and is judged like any other, whatever it printed (red team, round 16: red edited
        // `src/`, printed `sh: 1: claude: not found` and exited 127; its edit was then kept as
        // the person's on resume).
        let ran = after != before || !commits.is_empty() || !restored.is_empty();
        let not_found = !ran
            && o.exit_code == Some(127)
            && o.duration < std::time::Duration::from_secs(5)
            && (tail.contains("not found") || tail.contains("No such file"));
        let no_sandbox = !ran
            && !wrap.is_empty()
            && o.exit_code == Some(crate::sandbox::EXIT_SETUP)
            && tail.contains("forge sandbox: error");
        if not_found || no_sandbox {
            // The shell could not find the agent's program: a setup error, not an attempt. The
            // attempt is given back and nothing of it is kept.
            match slice {
                Some(i) => {
                    let p = self.state.slices[i].progress_mut();
                    let (n, total) = if role == Role::Green {
                        (&mut p.green_attempts, &mut p.green_attempts_total)
                    } else {
                        (&mut p.red_attempts, &mut p.red_attempts_total)
                    };
                    if matches!(role, Role::Red | Role::Green) {
                        *n = n.saturating_sub(1);
                        *total = total.saturating_sub(1);
                    }
                }
                None => self.meta.planner_attempts = self.meta.planner_attempts.saturating_sub(1),
            }
            self.save()?;
            let _ = std::fs::remove_file(self.dir.join("protected.json"));
            let last = crate::text::inert(tail.lines().last().unwrap_or(""), 300);
            return Err(Error::Config {
                path: self.project.config_path(),
                message: if no_sandbox {
                    format!(
                        "the kernel sandbox could not be set up for the {} agent — {last} (log: {}); fix what it names, or set `sandbox.mode: off` to run without it, then `forge run --resume {}`",
                        role.name(),
                        self.project.rel(&o.log_path),
                        self.meta.slug
                    )
                } else {
                    format!(
                        "the {} agent's command was not found (exit 127): `{}` — {last} (log: {}); fix `agents.{}.command` (or `agents.default.command`), then `forge run --resume {}`",
                        role.name(),
                        agent_cfg.command,
                        self.project.rel(&o.log_path),
                        role.name(),
                        self.meta.slug
                    )
                },
            });
        }
        if !self.meta.started_sessions.iter().any(|s| s == session) {
            self.meta.started_sessions.push(session.to_string());
        }
        self.rec.record_or_warn(
            Some(&self.meta.slug),
            "agent",
            json!({"role": role.name(), "slice": sid, "wave": wave, "attempt": attempt,
                   "exit_code": o.exit_code, "timed_out": o.timed_out, "duration_ms": o.duration.as_millis() as u64,
                   "left_running": o.leftovers,
                   "log": self.project.rel(&o.log_path), "prompt": self.project.rel(&fin.prompt_file), "usd": usd}),
        );
        let status = if o.timed_out {
            format!("timed out after {} s", agent_cfg.timeout)
        } else {
            match o.exit_code {
                Some(c) => format!("exit {c}"),
                None => "killed".into(),
            }
        };
        let who = if sid.is_empty() {
            String::new()
        } else {
            format!(" [{sid} w{wave} a{attempt}]")
        };
        let left = if o.leftovers > 0 {
            format!(", {} process(es) it left running killed", o.leftovers)
        } else {
            String::new()
        };
        self.say(&format!(
            "  · {}{who} ran ({status}, {:.1} s{}{left})",
            role.name(),
            o.duration.as_secs_f64(),
            if usd > 0.0 {
                format!(", ${usd:.4}")
            } else {
                String::new()
            }
        ));
        // The person's ignored files (a `config.local`, an `.env`) are nobody's to delete or
        // rewrite: put back, and said. Not a gate failure — a test run may rewrite an ignored
        // log — only never a loss.
        let lost: Vec<String> = before
            .ignored
            .iter()
            .filter(|(p, e)| after.ignored.get(*p) != Some(e) && !after.entries.contains_key(*p))
            .map(|(p, _)| p.clone())
            .collect();
        if !lost.is_empty() {
            let root = self.project.root.clone();
            let oids: Vec<&str> = lost
                .iter()
                .filter_map(|p| before.ignored.get(p).and_then(|e| e.oid()))
                .collect();
            let blobs = self.seen.odb(&root).read(&oids, "blob")?;
            for p in &lost {
                crate::evidence::checkout::write_entry(&root, p, &before.ignored[p], &blobs)?;
                after.ignored.insert(p.clone(), before.ignored[p].clone());
            }
            self.say(&format!(
                "  ! put back ignored files the {} agent deleted or changed: {}",
                role.name(),
                lost.join(", ")
            ));
            self.event(
                "ignored-put-back",
                json!({"role": role.name(), "files": lost}),
            );
        }
        Ok(Attempt {
            before,
            after,
            restored,
            commits,
            head_moved,
        })
    }

    /// The launcher of the kernel sandbox for an agent of `role` (empty without the sandbox):
    /// red may write its test areas, green its code areas, the others only their answer; each
    /// its client's own state folders, a private TMPDIR, and nothing of Forge's or git's.
    fn agent_request(
        &self,
        role: Role,
        slice: Option<usize>,
        output: &Path,
        command: &str,
    ) -> Option<crate::sandbox::Request> {
        use crate::sandbox::{Client, Profile, Request};
        let super::Wall::Kernel { contain, .. } = self.wall else {
            return None;
        };
        let areas = |f: fn(&super::state::Slice) -> &Vec<String>| {
            slice
                .map(|i| f(&self.state.slices[i]).clone())
                .unwrap_or_default()
        };
        let (profile, write) = match role {
            Role::Red => (Profile::Red, areas(|s| &s.test_areas)),
            Role::Green => (Profile::Green, areas(|s| &s.code_areas)),
            _ => (Profile::Review, Vec::new()),
        };
        let mut req = Request::new(profile, &self.project.root);
        req.write = write;
        req.answer = Some(output.to_path_buf());
        // TMPDIR: the launcher's private one for this project and profile, outside the
        // project (whose `.tmp/.forge/` no agent may write).
        req.client = Client::from_command(command);
        req.contain = contain;
        // The environments the checks run with are the person's: no agent of the run changes
        // them (git ignores them, so no gate would see it).
        // A link (`.venv` → a shared folder) is left as it is: a bind would hold only its old
        // target, and what it leads to outside the project no area grants.
        req.keep_read_only = self
            .envs
            .iter()
            .filter(|e| {
                std::fs::symlink_metadata(self.project.root.join(e)).is_ok_and(|m| m.is_dir())
            })
            .cloned()
            .collect();
        Some(req)
    }

    /// The folders of the working tree the kernel let an agent call under `req` write
    /// (relative; Forge's own left out), when everything it started has ended with it
    /// (contained): only those can differ from the snapshot before the call. `None` without
    /// that wall, or when the plan cannot be made.
    fn written_areas(&self, req: Option<&crate::sandbox::Request>) -> Option<Vec<String>> {
        let req = req?;
        if !matches!(self.wall, super::Wall::Kernel { contain: true, .. }) || !req.contain {
            return None;
        }
        let (_, plan) = crate::sandbox::resolve(req, self.config.sandbox).ok()?;
        let named = &self.project.root;
        let root = named.canonicalize().ok()?;
        let mut out = Vec::new();
        for w in &plan.write {
            let inside = w.starts_with(named) || w.starts_with(&root);
            let real = match w.canonicalize() {
                Ok(r) => r,
                // Not there (a client's state folder not made yet): only a problem inside.
                Err(_) if inside => return None,
                Err(_) => continue,
            };
            // An area named through a link (`tests/lnk/y`, `tests/lnk` → an ignored folder)
            // is not where a walk from the root looks: the whole tree is read instead.
            let as_named = w
                .strip_prefix(named)
                .or_else(|_| w.strip_prefix(&root))
                .map(|rel| root.join(rel));
            if as_named.is_ok_and(|n| n != real) {
                return None;
            }
            let Ok(rel) = real.strip_prefix(&root) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            if !crate::evidence::snapshot::is_forge_path(&rel) {
                out.push(rel);
            }
        }
        Some(out)
    }

    /// The working tree now (see [`super::observe::Observer::snapshot`]); a planted object in
    /// the way is named and stops the run rather than be used.
    pub(super) fn observe(&mut self, base: &str) -> Result<crate::evidence::Snapshot> {
        let root = self.project.root.clone();
        self.seen.snapshot(&root, base).map_err(Into::into)
    }
}

/// The roles' command check, for `forge run` before anything starts.
pub fn require_all(agents: &AgentsConfig, config_path: &Path) -> Result<()> {
    let missing = agents.missing();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Config {
        path: config_path.to_path_buf(),
        message: format!(
            "no agent command for {}: set `agents.default.command` (or `agents.<role>.command`), e.g.\n  agents:\n    default:\n      command: claude -p \"$(cat \"$FORGE_PROMPT_FILE\")\" --output-format json",
            missing
                .iter()
                .map(|r| format!("`agents.{r}.command`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The index file's identity and change time, `None` when absent.
fn index_stamp(git_dir: &std::path::Path) -> Option<(u64, u64, u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(git_dir.join("index")).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.ctime(), m.ctime_nsec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_fall_back_to_default_and_missing_roles_are_named() {
        let mut a = AgentsConfig {
            red: Some(AgentConfig {
                command: "red.sh".into(),
                resume_command: None,
                timeout: 5,
            }),
            ..Default::default()
        };
        assert_eq!(a.for_role(Role::Red).unwrap().command, "red.sh");
        assert!(a.for_role(Role::Green).is_none());
        assert_eq!(
            a.missing(),
            vec!["planner", "verifier", "green", "coverage_reviewer"]
        );
        let e = require_all(&a, Path::new(".forge/config.yaml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("agents.planner.command"), "{e}");
        a.default = Some(AgentConfig {
            command: "any.sh".into(),
            resume_command: None,
            timeout: 5,
        });
        assert_eq!(a.for_role(Role::Green).unwrap().command, "any.sh");
        assert_eq!(a.for_role(Role::Red).unwrap().command, "red.sh");
        assert!(a.missing().is_empty());
    }

    #[test]
    fn session_ids_are_v4_uuids_and_distinct() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }

    #[test]
    fn cost_is_read_from_real_agent_outputs() {
        let fix = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spend");
        let cfg = BudgetConfig::default();
        // A real `claude -p --output-format json` result, after a line of stderr noise.
        let claude = std::fs::read_to_string(format!("{fix}/claude-p-result.json")).unwrap();
        let s = spend_from_text(&format!("warning: something\n{claude}\nmore noise"), &cfg);
        assert!(!s.is_empty());
        assert!(s.iter().any(|x| x.usd > 0.0));
        // Real `codex exec --json` events.
        let codex = std::fs::read_to_string(format!("{fix}/codex-exec.jsonl")).unwrap();
        let s = spend_from_text(&codex, &cfg);
        assert!(s.iter().map(|x| x.tokens.total()).sum::<u64>() > 0);
        // Plain text costs nothing.
        assert!(spend_from_text("edited tests/cart_test.sh\n", &cfg).is_empty());
    }
}
