//! `forge run`: the red/green slice loop of `002_…`. Agents do the creative work — plan, write
//! one failing test, verify the failure, make it pass — and Forge proves every fact between them
//! with the deterministic gates in [`gates`]. No agent can override a failed gate: Forge applies
//! the recovery (revert, undo, reset), hands the reason back to the same agent, and bounds the
//! attempts by the retry policy.
//!
//! Every step is saved before and after it runs (`run.json`, `state.json`), so a run killed at
//! any point resumes (`forge run --resume`): an interrupted red attempt restarts from START_SHA,
//! an interrupted green attempt is judged on the tree it left, a final commit is atomic.

pub mod agent;
pub mod gates;
mod protect;
pub mod state;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::breaker;
use crate::config::{CommandConfig, Config};
use crate::error::{Error, Result};
use crate::git;
use crate::repo::{Project, validate_change_name};
use crate::report::Format;
use crate::timeline::Recorder;
use crate::verify::{self, CommandResult, Verdict};

use agent::Role;
use gates::GateResult;
use state::{Current, Progress, RunMeta, RunState, RunStatus, SliceStatus, Step};

/// Red attempts per wave, with the same agent (`002_…` retry policy).
pub const RED_ATTEMPTS: u32 = 5;
/// Green attempts per wave, with the same agent. The seed bounds red only; green is bounded by
/// this and by the change's circuit breaker, which counts its failing checks.
pub const GREEN_ATTEMPTS: u32 = 5;
/// Planner attempts before the run stops (the planning-output gate's recovery is to re-plan).
pub const PLAN_ATTEMPTS: u32 = 3;
/// Waves: the first, then one retry wave with new agents.
pub const WAVES: u32 = 2;
/// A person's default ceiling on one focused or related check.
pub const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 600;

/// `run:` in `.forge/config.yaml`.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Seconds before a focused command or related check is killed.
    #[serde(default = "default_check_timeout")]
    pub check_timeout: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            check_timeout: DEFAULT_CHECK_TIMEOUT_SECS,
        }
    }
}

fn default_check_timeout() -> u64 {
    DEFAULT_CHECK_TIMEOUT_SECS
}

/// How a run ended (for now).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Done,
    Stopped(String),
}

/// Where progress lines go (the CLI prints them; `--json` and tests may drop them).
pub type Printer<'a> = &'a mut dyn FnMut(&str);

/// What ends a slice attempt loop.
enum SliceEnd {
    Landed,
    Failed(String),
    /// The run must stop: budget, breaker, a blocking gate.
    Stop(String),
}

struct Run<'a> {
    project: &'a Project,
    config: &'a Config,
    dir: PathBuf,
    /// The repository's git folder (`.git`, or a worktree's).
    git_dir: PathBuf,
    /// Protected things the last agent changed and Forge put back, for its scope gate.
    tamper: Vec<String>,
    /// The index's skip-worktree/assume-unchanged paths as the run found them.
    hidden: Option<std::collections::BTreeSet<String>>,
    /// Whether `.tmp/.forge/active-run` names this run (written by this process).
    active_written: bool,
    meta: RunMeta,
    state: RunState,
    rec: Recorder,
    out: Printer<'a>,
    _lock: RunLocks,
}

/// Starts a new run.
pub fn start(
    project: &Project,
    config: &Config,
    slug: &str,
    goal: &str,
    out: Printer,
) -> Result<Outcome> {
    validate_change_name(slug).map_err(|_| {
        Error::usage(format!(
            "invalid run name `{slug}`: use lowercase letters, digits and `-` (e.g. `member-discount`)"
        ))
    })?;
    if goal.trim().is_empty() {
        return Err(Error::usage(
            "the goal is empty: say what the run should achieve, e.g. --goal \"members get 10% off\"",
        ));
    }
    agent::require_all(&config.agents, &project.config_path())?;
    let dir = state::run_dir(project, slug);
    if state::meta_path(&dir).exists() {
        return Err(Error::usage(format!(
            "run `{slug}` already exists in {}: continue it with `forge run --resume {slug}`, see it with `forge run --status {slug}`",
            project.rel(&dir)
        )));
    }
    let lock = lock_run(project, &dir, slug)?;
    // A run whose driver was killed may have left its temporary checkpoint at HEAD: a new run
    // must not build on it.
    if let Ok(other) = std::fs::read_to_string(state::active_run_path(project)) {
        let other = other.trim();
        if !other.is_empty()
            && other != slug
            && state::load_meta(&state::run_dir(project, other), other)
                .ok()
                .flatten()
                .is_some_and(|m| m.status == RunStatus::Running)
        {
            return Err(Error::usage(format!(
                "run `{other}` was interrupted and not finished: resume it (`forge run --resume {other}`) before starting another; HEAD may be its temporary checkpoint"
            )));
        }
    }
    if let Ok(head) = git::head(&project.root)
        && git::commit_message(&project.root, &head)
            .is_ok_and(|m| m.starts_with("forge-checkpoint("))
    {
        return Err(Error::usage(format!(
            "HEAD ({}) is a run's temporary checkpoint: resume that run, or reset past it, before starting `{slug}`",
            &head[..head.len().min(10)]
        )));
    }
    let base_sha = git::head(&project.root).map_err(|_| {
        Error::usage(format!(
            "{} has no commit yet: commit something first (the run's slices start from HEAD)",
            project.root.display()
        ))
    })?;
    let now = now();
    let meta = RunMeta {
        slug: slug.into(),
        goal: goal.trim().into(),
        status: RunStatus::Running,
        base_sha,
        started_at: now.clone(),
        updated_at: now,
        stop_reason: None,
        planner_attempts: 0,
        planned: false,
        gates_written: 0,
        gates: Vec::new(),
        agent_ms: 0,
        check_ms: 0,
        branch: git::head_ref(&project.root)?,
        planner_session: None,
        started_sessions: Vec::new(),
        state_sha256: None,
        prev_state_sha256: None,
    };
    let gd = git_dir(project)?;
    let mut run = Run::new(
        project,
        config,
        dir,
        gd,
        meta,
        RunState::default(),
        out,
        lock,
    );
    run.save()?;
    run.event(
        "started",
        json!({"goal": run.meta.goal, "base_sha": run.meta.base_sha}),
    );
    run.say(&format!("Run `{slug}`: {}", run.meta.goal));
    run.drive()
}

/// Continues a run from its saved state.
///
/// `retry` names a slice whose retries were exhausted (or that failed and was not retried):
/// a person's decision to give it a fresh first wave.
pub fn resume(
    project: &Project,
    config: &Config,
    slug: &str,
    retry: Option<&str>,
    out: Printer,
) -> Result<Outcome> {
    validate_change_name(slug)?;
    agent::require_all(&config.agents, &project.config_path())?;
    let dir = state::run_dir(project, slug);
    let Some(mut meta) = state::load_meta(&dir, slug)? else {
        return Err(no_such_run(project, slug));
    };
    let lock = lock_run(project, &dir, slug)?;
    // A SIGKILL can leave a git lock behind (a git command died holding it).
    let gd = git_dir(project)?;
    let branch_lock = meta
        .branch
        .as_deref()
        .map(|b| format!("{b}.lock"))
        .unwrap_or_default();
    for name in [
        "index.lock",
        "HEAD.lock",
        "packed-refs.lock",
        branch_lock.as_str(),
    ] {
        if name.is_empty() {
            continue;
        }
        if gd.join(name).exists() {
            return Err(Error::usage(format!(
                "{} exists: a git command was killed with the run, or one is running now. If no git command is running, remove it (`rm {}`) and resume again",
                gd.join(name).display(),
                gd.join(name).display()
            )));
        }
    }
    let st = state::load_state(&dir, slug)?.unwrap_or_default();
    if meta.planned {
        use sha2::Digest;
        let bytes = std::fs::read(state::state_path(&dir)).unwrap_or_default();
        let digest = format!("{:x}", sha2::Sha256::digest(&bytes));
        let known = [&meta.state_sha256, &meta.prev_state_sha256];
        if !known.iter().any(|k| k.as_deref() == Some(digest.as_str())) {
            return Err(Error::State {
                path: state::state_path(&dir),
                message: "was changed by something other than Forge since the run last saved it (an agent?)".into(),
                recovery: format!(
                    "Inspect it; to start over, remove .tmp/.forge/runs/{slug}/, reset the branch to the run's base {} if you wish, and run `forge run {slug} --goal …` again.",
                    meta.base_sha
                ),
            });
        }
    }
    if meta.status == RunStatus::Done {
        out(&format!("Run `{slug}` is done; nothing to resume."));
        return Ok(Outcome::Done);
    }
    // Killed between writing run.json (plan accepted) and state.json (the plan): plan again.
    if meta.planned && st.slices.is_empty() {
        meta.planned = false;
    }
    meta.status = RunStatus::Running;
    meta.stop_reason = None;
    let mut run = Run::new(project, config, dir, gd, meta, st, out, lock);
    if let Some(id) = retry {
        run.check_retry(id)?;
    }
    run.event("resumed", json!({}));
    run.say(&format!("Resuming run `{slug}`: {}", run.meta.goal));
    if let Some(id) = retry {
        run.retry_by_person(id)?;
    }
    // A run killed while an agent ran: whatever changed in Forge's protected files since that
    // agent started may be the agent's doing, or the person's since. Forge cannot tell; it says.
    if let Ok(b) = std::fs::read(run.dir.join("protected.json"))
        && let Ok(m) = serde_json::from_slice::<Value>(&b)
    {
        let changed = protect::changed_since(project, &run.git_dir, slug, &m);
        if !changed.is_empty() {
            run.event("protected-changed", json!({"files": changed}));
            run.say(&format!(
                "  ! changed since the last agent of this run started: {} — if you did not change them yourself, that agent may have: check them (`git diff -- <file>`)",
                changed.join(", ")
            ));
        }
    }
    run.drive()
}

fn no_such_run(project: &Project, slug: &str) -> Error {
    let known: Vec<String> = state::list(project)
        .unwrap_or_default()
        .into_iter()
        .map(|m| m.slug)
        .collect();
    Error::usage(format!(
        "no run named `{slug}` (known: {}); start one with `forge run {slug} --goal \"…\"`",
        if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        }
    ))
}

/// One `forge run` per run at a time: the second is refused, never queued behind the first.
/// One `forge run` per checkout at a time: two runs would commit over each other's slices. The
/// lock on `runs/` says "a run is being driven here", the one on `runs/<slug>/` which (the
/// guard and `--status` look at it); both are held for the whole run and refused, never queued.
fn lock_run(project: &Project, dir: &Path, slug: &str) -> Result<RunLocks> {
    let busy = |what: String| {
        Error::usage(format!(
            "{what} is already being driven by another `forge run` in this checkout; wait for it or stop it first (one run per checkout)"
        ))
    };
    let all = crate::state::try_lock_dir(&state::runs_dir(project))?.ok_or_else(|| {
        let other = std::fs::read_to_string(state::active_run_path(project))
            .map(|s| format!("run `{}`", s.trim()))
            .unwrap_or_else(|_| "a run".into());
        busy(other)
    })?;
    let one = crate::state::try_lock_dir(dir)?.ok_or_else(|| busy(format!("run `{slug}`")))?;
    Ok(RunLocks {
        _all: all,
        _one: one,
    })
}

struct RunLocks {
    _all: crate::state::DirLock,
    _one: crate::state::DirLock,
}

fn git_dir(project: &Project) -> Result<PathBuf> {
    let out = git::git(&project.root, &["rev-parse", "--absolute-git-dir"])?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out).trim()))
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

impl<'a> Run<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        project: &'a Project,
        config: &'a Config,
        dir: PathBuf,
        git_dir: PathBuf,
        meta: RunMeta,
        state: RunState,
        out: Printer<'a>,
        lock: RunLocks,
    ) -> Run<'a> {
        Run {
            project,
            config,
            rec: Recorder::new(project, &format!("run-{}", meta.slug), "forge:run"),
            git_dir,
            tamper: Vec::new(),
            hidden: None,
            active_written: false,
            dir,
            meta,
            state,
            out,
            _lock: lock,
        }
    }
    fn root(&self) -> &Path {
        &self.project.root
    }

    fn say(&mut self, line: &str) {
        (self.out)(line);
    }

    fn save(&mut self) -> Result<()> {
        use sha2::Digest;
        self.meta.updated_at = now();
        let bytes = state::to_json_bytes(&state::state_path(&self.dir), &self.state)?;
        let digest = format!("{:x}", sha2::Sha256::digest(&bytes));
        if self.meta.state_sha256.as_deref() != Some(digest.as_str()) {
            self.meta.prev_state_sha256 = self.meta.state_sha256.take();
            self.meta.state_sha256 = Some(digest);
        }
        // run.json first: a kill between the two writes leaves state.json at the previous
        // digest, which a resume accepts.
        state::save_json(&state::meta_path(&self.dir), &self.meta)?;
        crate::state::write_atomic(&state::state_path(&self.dir), &bytes)
    }

    fn event(&self, event: &str, mut data: Value) {
        data["event"] = json!(event);
        data["run"] = json!(self.meta.slug);
        self.rec.record_or_warn(Some(&self.meta.slug), "run", data);
    }

    fn set_current(&mut self, slice: &str, phase: &str, output: Option<&Path>) -> Result<()> {
        let red_tests = self
            .state
            .slices
            .iter()
            .find(|s| s.id == slice)
            .and_then(|s| s.forge.as_ref())
            .map(|p| p.red_tests.clone())
            .unwrap_or_default();
        self.state.current = Some(Current {
            slice: slice.into(),
            phase: phase.into(),
            red_tests,
            output: output.map(|p| self.project.rel(p)),
        });
        self.save()?;
        // Written once per process: the guard reads the phase from state.json, saved above.
        if !self.active_written {
            crate::state::write_atomic(
                &state::active_run_path(self.project),
                format!("{}\n", self.meta.slug).as_bytes(),
            )?;
            self.active_written = true;
        }
        Ok(())
    }

    /// Writes a gate result to the run folder and the timeline, prints it, and links it from
    /// the slice's progress.
    fn gate(&mut self, slice: Option<usize>, r: &GateResult) -> Result<()> {
        self.meta.gates_written += 1;
        let (sid, wave, attempt) = match slice {
            Some(i) => {
                let s = &self.state.slices[i];
                let p = s.progress();
                let attempt = if matches!(p.step, Some(Step::Green) | Some(Step::Final)) {
                    p.green_attempts
                } else {
                    p.red_attempts
                };
                (s.id.clone(), p.wave, attempt)
            }
            None => ("run".to_string(), 0, self.meta.planner_attempts),
        };
        let file = format!("gates/{:04}-{sid}-{}.json", self.meta.gates_written, r.gate);
        let mut doc = serde_json::to_value(r).unwrap_or_default();
        doc["run"] = json!(self.meta.slug);
        doc["slice"] = json!(sid);
        doc["wave"] = json!(wave);
        doc["attempt"] = json!(attempt);
        doc["at"] = json!(now());
        state::save_json(&self.dir.join(&file), &doc)?;
        self.rec
            .record_or_warn(Some(&self.meta.slug), "gate", doc.clone());
        let gate_ref = state::GateRef {
            gate: r.gate.clone(),
            status: r.status.clone(),
            wave,
            attempt,
            file,
        };
        match slice {
            Some(i) => self.state.slices[i].progress_mut().gates.push(gate_ref),
            None => self.meta.gates.push(gate_ref),
        }
        self.save()?;
        let mark = if r.passed() { "✓" } else { "✗" };
        let who = if sid == "run" {
            String::new()
        } else {
            format!("[{sid} w{wave} a{attempt}] ")
        };
        let why = r.reason();
        let line = if why.is_empty() || r.passed() && why.len() > 100 {
            format!("  {mark} {who}{}", r.gate)
        } else {
            format!(
                "  {mark} {who}{} — {}",
                r.gate,
                crate::text::clip(&why, 300)
            )
        };
        self.say(&line);
        Ok(())
    }

    fn stop(&mut self, reason: String) -> Result<Outcome> {
        self.meta.status = RunStatus::Stopped;
        self.meta.stop_reason = Some(reason.clone());
        self.state.current = None;
        self.save()?;
        let _ = std::fs::remove_file(state::active_run_path(self.project));
        self.event("stopped", json!({"reason": reason}));
        self.say(&format!("Run `{}` STOPPED: {reason}", self.meta.slug));
        // A slice stopped after its red checkpoint leaves that temporary commit at the tip.
        let open_checkpoint = self.state.slices.iter().find_map(|s| {
            let p = s.forge.as_ref()?;
            (p.status == SliceStatus::Running)
                .then(|| Some((s.id.clone(), p.checkpoint.clone()?, p.start_sha.clone()?)))?
        });
        if let Some((id, cp, start)) = open_checkpoint {
            self.say(&format!(
                "HEAD is slice `{id}`'s temporary checkpoint {} (its verified test); green's edits are uncommitted. To abandon the slice instead of resuming: `git reset --hard {}`.",
                &cp[..cp.len().min(10)],
                &start[..start.len().min(10)]
            ));
        }
        self.say(&format!(
            "A person decides next: see `forge run --status {}`, fix the cause, then `forge run --resume {}`.",
            self.meta.slug, self.meta.slug
        ));
        Ok(Outcome::Stopped(reason))
    }

    fn drive(&mut self) -> Result<Outcome> {
        git::refresh_index(self.root());
        if let Some(reason) = self.breaker_open()? {
            return self.stop(reason);
        }
        if !self.meta.planned {
            // No agent has run yet (stopped at clean-start, or a setup error): the run starts
            // from wherever HEAD is now — a person may have committed a fix since. Once a
            // planner ran, a moved HEAD may be its doing or the person's: Forge asks.
            let head = git::head(self.root())?;
            if head != self.meta.base_sha {
                if self.meta.planner_attempts == 0 {
                    self.meta.base_sha = head;
                    self.meta.branch = git::head_ref(self.root())?;
                } else {
                    let graph = git::graph(self.root()).unwrap_or_default();
                    return Err(Error::usage(format!(
                        "HEAD moved since run `{}` stopped while planning (it started from {}). If those commits are yours, start a new run from here; if a planner made them, reset to {} and resume.\n{graph}",
                        self.meta.slug,
                        &self.meta.base_sha[..10.min(self.meta.base_sha.len())],
                        &self.meta.base_sha[..10.min(self.meta.base_sha.len())]
                    )));
                }
            }
            // clean-start and run-artifact are checked before any agent runs.
            let dirty: Vec<String> = git::status(self.root())?
                .into_iter()
                .map(|e| e.path)
                .collect();
            let r = gates::clean_start(&dirty);
            self.gate(None, &r)?;
            if !r.passed() {
                return self.stop(format!("clean-start: {}", r.reason()));
            }
            let r = self.run_artifact(&[])?;
            if !r.passed() {
                return self.stop(format!("run-artifact: {}", r.reason()));
            }
            if let Some(end) = self.plan()? {
                return Ok(end);
            }
        }
        self.schedule()
    }

    /// Run-artifact exception gate: run state lives under the ignored `.tmp/.forge/runs/<slug>/`
    /// and nothing generated lands elsewhere (`stray` are files an agent left outside it).
    fn run_artifact(&mut self, stray: &[String]) -> Result<GateResult> {
        let rel = format!(".tmp/.forge/runs/{}/state.json", self.meta.slug);
        let ignored = git::is_ignored(self.root(), &rel)?;
        let r = if !ignored {
            GateResult::fail(
                gates::RUN_ARTIFACT,
                json!({"reason": ".tmp/.forge/ is not ignored by git", "path": rel}),
                true,
                "add `.tmp/.forge/` to .gitignore (`forge init` does) and commit it",
            )
        } else if !stray.is_empty() {
            GateResult::fail(
                gates::RUN_ARTIFACT,
                json!({"reason": format!("generated files outside .tmp/.forge/runs/{}/ were removed: {}", self.meta.slug, stray.join(", ")), "files": stray}),
                false,
                "the misplaced files were deleted; planning is read-only",
            )
        } else {
            GateResult::pass(
                gates::RUN_ARTIFACT,
                json!({"reason": format!("run state in {}", self.project.rel(&self.dir)), "dir": self.project.rel(&self.dir)}),
            )
        };
        self.gate(None, &r)?;
        Ok(r)
    }

    /// The read-only planning phase. `Some(outcome)` when the run ends here.
    fn plan(&mut self) -> Result<Option<Outcome>> {
        let tracked = git::tracked_files(self.root())?;
        let mut feedback: Option<String> = None;
        // A plan the planner finished before a kill is judged before planning again.
        let existing = std::fs::read(state::state_path(&self.dir))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .filter(|v| {
                v.get("slices")
                    .and_then(|s| s.as_array())
                    .is_some_and(|a| !a.is_empty())
            });
        if let Some(doc) = existing {
            // What the killed planner changed is undone as it would have been.
            let stray = self.undo_planning_changes(Vec::new())?;
            let r = self.run_artifact(&stray)?;
            if r.blocks {
                return self.stop(format!("run-artifact: {}", r.reason())).map(Some);
            }
            if r.passed() {
                match self.accept_plan(&doc, &tracked)? {
                    Ok(()) => return Ok(None),
                    Err(problems) => feedback = Some(problems),
                }
            } else {
                feedback = Some(r.reason());
            }
        }
        while self.meta.planner_attempts < PLAN_ATTEMPTS {
            if let Some(reason) = self.over_budget()? {
                return self.stop(reason).map(Some);
            }
            self.meta.planner_attempts += 1;
            let attempt = self.meta.planner_attempts;
            let state_file = state::state_path(&self.dir);
            self.state = RunState::default();
            let session = self
                .meta
                .planner_session
                .get_or_insert_with(agent::new_session_id)
                .clone();
            self.set_current("", "plan", Some(&state_file))?;
            let prompt = prompts::planner(self, &tracked, feedback.as_deref());
            let before = self.protect()?;
            self.call_agent(Role::Planner, None, attempt, &session, &prompt, &state_file)?;
            // Read the answer before anything rewrites state.json.
            let answer = agent::read_output(&state_file);
            let mut forge_state = before.put_back(self.project)?;
            forge_state.append(&mut self.tamper);
            let stray = self.undo_planning_changes(forge_state)?;
            let r = self.run_artifact(&stray)?;
            if r.blocks {
                return self.stop(format!("run-artifact: {}", r.reason())).map(Some);
            }
            if !r.passed() {
                feedback = Some(r.reason());
                continue;
            }
            let problems = match answer {
                Ok(doc) => match self.accept_plan(&doc, &tracked)? {
                    Ok(()) => return Ok(None),
                    Err(p) => p,
                },
                Err(e) => {
                    let r = GateResult::fail(
                        gates::PLANNING_OUTPUT,
                        json!({"reason": e}),
                        false,
                        "rerun planning",
                    );
                    self.gate(None, &r)?;
                    e
                }
            };
            feedback = Some(problems);
        }
        let reason = format!(
            "planning failed {PLAN_ATTEMPTS} times; last problems: {}",
            feedback.unwrap_or_default()
        );
        self.stop(reason).map(Some)
    }

    /// Planning is read-only: whatever it changed in the repository goes, commits too. The
    /// paths undone, after `already` (Forge state restored by the caller).
    fn undo_planning_changes(&mut self, mut already: Vec<String>) -> Result<Vec<String>> {
        let base = self.meta.base_sha.clone();
        if let Some(moved) = self.restore_head(&base)? {
            already.push(moved);
        }
        let head = git::head(self.root())?;
        if head != self.meta.base_sha {
            git::reset_keep(self.root(), &self.meta.base_sha)?;
            already.push(format!("commit {head}"));
        }
        let changed = changed_since_head(self.root())?;
        git::restore_paths(self.root(), &self.meta.base_sha, &changed)?;
        already.extend(changed);
        Ok(already)
    }

    /// The planning-output gate on a planner's document; on a pass the plan becomes the state,
    /// on a fail the problems (one per line) go back to the planner.
    fn accept_plan(
        &mut self,
        doc: &Value,
        tracked: &[String],
    ) -> Result<std::result::Result<(), String>> {
        match gates::planning_output(doc, tracked) {
            Ok(mut slices) => {
                for s in &mut slices {
                    s.forge = Some(Progress {
                        wave: 1,
                        ..Default::default()
                    });
                }
                let r = GateResult::pass(
                    gates::PLANNING_OUTPUT,
                    json!({"reason": format!("{} slice(s): {}", slices.len(), slices.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", ")),
                           "slices": slices.iter().map(|s| json!({"id": s.id, "depends_on": s.depends_on})).collect::<Vec<_>>()}),
                );
                let extra = doc
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .filter(|(k, _)| !matches!(k.as_str(), "slices" | "current"))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                self.state = RunState {
                    slices,
                    current: None,
                    extra,
                };
                self.meta.planned = true;
                self.gate(None, &r)?;
                self.event("planned", json!({"slices": self.state.slices.len()}));
                Ok(Ok(()))
            }
            Err(problems) => {
                let r = GateResult::fail(
                    gates::PLANNING_OUTPUT,
                    json!({"reason": problems.join("; "), "problems": problems}),
                    false,
                    "rerun planning with these problems before any coding",
                );
                self.gate(None, &r)?;
                Ok(Err(problems.join("\n")))
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // scheduling and the retry policy

    fn status_of(&self, i: usize) -> SliceStatus {
        self.state.slices[i].progress().status
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.state.slices.iter().position(|s| s.id == id)
    }

    /// The failed slices among `i`'s dependencies, transitively.
    fn failed_blockers(&self, i: usize) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut stack: Vec<usize> = self.state.slices[i]
            .depends_on
            .iter()
            .filter_map(|d| self.index_of(d))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some(j) = stack.pop() {
            if !seen.insert(j) {
                continue;
            }
            if self.status_of(j) == SliceStatus::Failed {
                out.insert(j);
            }
            stack.extend(
                self.state.slices[j]
                    .depends_on
                    .iter()
                    .filter_map(|d| self.index_of(d)),
            );
        }
        out
    }

    fn ready(&self, i: usize) -> bool {
        matches!(
            self.status_of(i),
            SliceStatus::Pending | SliceStatus::Running
        ) && self.state.slices[i]
            .depends_on
            .iter()
            .filter_map(|d| self.index_of(d))
            .all(|j| self.status_of(j).landed())
    }

    fn schedule(&mut self) -> Result<Outcome> {
        loop {
            // A slice interrupted by a kill goes first, then the plan's order.
            let next = (0..self.state.slices.len())
                .find(|&i| self.status_of(i) == SliceStatus::Running)
                .or_else(|| (0..self.state.slices.len()).find(|&i| self.ready(i)));
            if let Some(i) = next {
                match self.run_slice(i)? {
                    SliceEnd::Landed => continue,
                    SliceEnd::Stop(reason) => return self.stop(reason),
                    SliceEnd::Failed(reason) => {
                        let id = self.state.slices[i].id.clone();
                        let wave = self.state.slices[i].progress().wave;
                        {
                            let p = self.state.slices[i].progress_mut();
                            p.status = SliceStatus::Failed;
                            p.step = None;
                            p.failure = Some(reason.clone());
                        }
                        self.state.current = None;
                        self.save()?;
                        self.event(
                            "slice-failed",
                            json!({"slice": id, "wave": wave, "reason": reason}),
                        );
                        let last = self.state.slices[i].progress().last_wave.unwrap_or(WAVES);
                        if wave >= last {
                            self.say(&format!(
                                "Slice `{id}` failed again in the retry wave ({reason}): its retries are exhausted. Work that does not depend on it continues."
                            ));
                        } else {
                            self.say(&format!(
                                "Slice `{id}` failed in wave {wave}: {reason}. Independent slices continue."
                            ));
                        }
                        continue;
                    }
                }
            }
            let n = self.state.slices.len();
            let failed: Vec<usize> = (0..n)
                .filter(|&i| self.status_of(i) == SliceStatus::Failed)
                .collect();
            let pending: Vec<usize> = (0..n)
                .filter(|&i| self.status_of(i) == SliceStatus::Pending)
                .collect();
            if failed.is_empty() && pending.is_empty() {
                return self.finish();
            }
            // The retry wave: a failed slice that has not had it is retried when it is the only
            // blocker of some pending slice, or the only remaining work. A slice that failed its
            // retry wave is given up: only a person brings it back (`--retry`).
            let retryable: Vec<usize> = failed
                .iter()
                .copied()
                .filter(|&f| {
                    let p = self.state.slices[f].progress();
                    p.wave < p.last_wave.unwrap_or(WAVES)
                })
                .collect();
            let retry = retryable.iter().copied().find(|&f| {
                let only_blocker = pending
                    .iter()
                    .any(|&p| self.failed_blockers(p) == BTreeSet::from([f]));
                let only_remaining = retryable.len() == 1 && pending.is_empty();
                only_blocker || only_remaining
            });
            match retry {
                Some(f) => {
                    let id = self.state.slices[f].id.clone();
                    let p = self.state.slices[f].progress_mut();
                    p.status = SliceStatus::Pending;
                    p.wave += 1;
                    p.red_attempts = 0;
                    p.green_attempts = 0;
                    p.red_session = None;
                    p.green_session = None;
                    p.feedback = None;
                    p.step = None;
                    let wave = p.wave;
                    self.save()?;
                    self.event("retry-wave", json!({"slice": id, "wave": wave}));
                    self.say(&format!(
                        "Retry wave {wave} for slice `{id}` with new agents ({RED_ATTEMPTS} more red attempts)."
                    ));
                }
                None => {
                    let names = |v: &[usize]| {
                        v.iter()
                            .map(|&i| self.state.slices[i].id.clone())
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let exhausted: Vec<usize> = failed
                        .iter()
                        .copied()
                        .filter(|f| !retryable.contains(f))
                        .collect();
                    let list = |v: &[usize]| {
                        if v.is_empty() {
                            "none".to_string()
                        } else {
                            names(v)
                        }
                    };
                    let hint = match exhausted.first().or(retryable.first()) {
                        Some(&f) => format!(
                            ". To give a slice one more wave once its cause is fixed: `forge run --resume {} --retry {}`",
                            self.meta.slug, self.state.slices[f].id
                        ),
                        None => String::new(),
                    };
                    return self.stop(format!(
                        "retries are exhausted for: {}; failed, not retried (neither the only blocker nor the only remaining work): {}; blocked: {}{hint}",
                        list(&exhausted),
                        list(&retryable),
                        list(&pending)
                    ));
                }
            }
        }
    }

    fn finish(&mut self) -> Result<Outcome> {
        if self.state.slices.is_empty() {
            return Err(Error::State {
                path: state::state_path(&self.dir),
                message: "holds no slices although the plan was accepted".into(),
                recovery: format!(
                    "Remove .tmp/.forge/runs/{}/ and start the run again.",
                    self.meta.slug
                ),
            });
        }
        self.meta.status = RunStatus::Done;
        self.state.current = None;
        self.save()?;
        let _ = std::fs::remove_file(state::active_run_path(self.project));
        let commits: Vec<String> = self
            .state
            .slices
            .iter()
            .filter_map(|s| s.progress().commit.clone())
            .collect();
        self.event("done", json!({"commits": commits}));
        self.say(&format!(
            "Run `{}` DONE: {} slice(s), {} commit(s).",
            self.meta.slug,
            self.state.slices.len(),
            commits.len()
        ));
        Ok(Outcome::Done)
    }

    /// Whether this slice, once landed, completes the run (so the full checks must run).
    fn is_final(&self, i: usize) -> bool {
        (0..self.state.slices.len())
            .filter(|&j| j != i)
            .all(|j| self.status_of(j).landed())
    }

    // -----------------------------------------------------------------------------------------
    // one slice

    fn run_slice(&mut self, i: usize) -> Result<SliceEnd> {
        let id = self.state.slices[i].id.clone();
        let head = git::head(self.root())?;
        let resumed_step = {
            let p = self.state.slices[i].progress_mut();
            let resumed = if p.status == SliceStatus::Running {
                p.step
            } else {
                None
            };
            if p.status != SliceStatus::Running {
                p.status = SliceStatus::Running;
                p.start_sha = Some(head.clone());
                p.checkpoint = None;
                p.red_tests.clear();
                p.failing_case = None;
                p.step = Some(Step::Red);
            }
            if p.red_session.is_none() {
                p.red_session = Some(agent::new_session_id());
            }
            if p.green_session.is_none() {
                p.green_session = Some(agent::new_session_id());
            }
            resumed
        };
        let wave = self.state.slices[i].progress().wave;
        self.save()?;
        self.say(&format!(
            "Slice `{id}` (wave {wave}): {}",
            self.state.slices[i].title
        ));
        let start_sha = self.start_sha(i)?;

        match resumed_step {
            Some(Step::Green) | Some(Step::Final) => {
                if let Some(end) = self.resume_final(i)? {
                    return Ok(end);
                }
                let cp = self.recorded(
                    i,
                    "checkpoint",
                    self.state.slices[i].progress().checkpoint.clone(),
                )?;
                self.head_is_forges(i, &[cp.as_str()])?;
                return self.green(i, true);
            }
            Some(Step::Red) => {
                // An interrupted red attempt starts over from START_SHA — unless commits that
                // are not the run's own sit on top of it (a person's, made while it was stopped).
                self.head_is_forges(i, &[start_sha.as_str()])?;
                self.restore_to(&start_sha)?;
            }
            None => {}
        }
        if self.state.slices[i].progress().red_attempts == 0 {
            let r = self.baseline(i)?;
            if !r.passed() {
                return Ok(SliceEnd::Failed(format!(
                    "pre-red baseline: {}",
                    r.reason()
                )));
            }
        }
        match self.red(i)? {
            RedEnd::Verified => self.green(i, false),
            RedEnd::Covered => Ok(SliceEnd::Landed),
            RedEnd::End(e) => Ok(e),
        }
    }

    /// Pre-red baseline gate: the focused command passes before red edits.
    fn baseline(&mut self, i: usize) -> Result<GateResult> {
        let s = self.state.slices[i].clone();
        let res = self.check(&s.id, "baseline", &s.focused_command, s.report)?;
        self.state.slices[i].progress_mut().baseline_cases = res
            .report
            .cases
            .iter()
            .filter(|c| c.status == crate::report::Status::Passed)
            .map(|c| c.name.clone())
            .collect();
        let r = if res.ok {
            GateResult::pass(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` passes", s.focused_command), "command": s.focused_command, "log": res.log, "passed": res.report.counts().passed}),
            )
        } else {
            GateResult::fail(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` fails before any red change: {}", s.focused_command, command_failure(&res)), "command": s.focused_command, "exit_code": res.exit_code, "log": res.log, "tail": crate::text::clip(&res.tail, 2000)}),
                true,
                "stop the slice and report the baseline failure",
            )
        };
        self.gate(Some(i), &r)?;
        Ok(r)
    }

    fn red(&mut self, i: usize) -> Result<RedEnd> {
        let start_sha = self.start_sha(i)?;
        while self.state.slices[i].progress().red_attempts < RED_ATTEMPTS {
            if let Some(reason) = self.over_budget()? {
                return Ok(RedEnd::End(SliceEnd::Stop(reason)));
            }
            let s = self.state.slices[i].clone();
            let (attempt, feedback, session) = self.begin_attempt(i, Step::Red)?;
            let prompt = prompts::red(self, &s, attempt, feedback.as_deref());
            let before = self.protect()?;
            let output = self.output_path(Role::Red, &s.id, attempt);
            self.call_agent(Role::Red, Some(i), attempt, &session, &prompt, &output)?;

            // red file-scope
            let scope =
                self.judge_scope(&start_sha, &before, |f| !gates::in_areas(&s.test_areas, f))?;
            let r = gates::scope_result(gates::RED_FILE_SCOPE, &scope, &s.test_areas, "red");
            self.gate(Some(i), &r)?;
            if !r.passed() {
                self.feedback(i, r.reason());
                continue;
            }
            let tests: Vec<String> = scope
                .changed
                .iter()
                .filter(|f| !gates::is_forge_path(f))
                .cloned()
                .collect();
            let judged = fingerprint(self.root(), &tests);
            if tests.is_empty() {
                let r = GateResult::fail(
                    gates::SINGLE_RED_FAILURE,
                    json!({"reason": "red changed no test file: no failing test case can be identified"}),
                    false,
                    "return to the red agent: add one failing test",
                );
                self.gate(Some(i), &r)?;
                self.feedback(i, r.reason());
                continue;
            }

            // single-red-failure
            let res = self.check(
                &s.id,
                &format!("red-a{attempt}"),
                &s.focused_command,
                s.report,
            )?;
            let mut outcome = gates::classify_red(
                res.exit_code == Some(0),
                res.timed_out,
                &res.report,
                res.report_error.as_deref(),
            );
            let removed =
                gates::removed_cases(&self.state.slices[i].progress().baseline_cases, &res.report);
            if !removed.is_empty() && !matches!(outcome, gates::RedOutcome::NotRed(_)) {
                outcome = gates::RedOutcome::NotRed(format!(
                    "red removed {} existing test case(s) that passed before: {}; add a test, never remove one",
                    removed.len(),
                    removed.join(", ")
                ));
            }
            let case = match outcome {
                gates::RedOutcome::One { case, message } => {
                    let r = GateResult::pass(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": format!("exactly one failing case: {case}"), "failing_case": case, "message": message, "command": s.focused_command, "log": res.log, "counts": res.report.counts()}),
                    );
                    self.gate(Some(i), &r)?;
                    case
                }
                gates::RedOutcome::NotRed(why) => {
                    let r = GateResult::fail(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": why, "command": s.focused_command, "exit_code": res.exit_code, "counts": res.report.counts(), "infra_error": res.report.infra_error, "log": res.log, "tail": crate::text::clip(&res.tail, 3000)}),
                        false,
                        "return the command output and failure count to the red agent",
                    );
                    self.gate(Some(i), &r)?;
                    self.feedback(
                        i,
                        format!(
                            "{why}\nLast output of `{}`:\n{}",
                            s.focused_command,
                            tail_lines(&res.tail, 40)
                        ),
                    );
                    continue;
                }
                gates::RedOutcome::AlreadyGreen => {
                    if let Some(reason) = self.over_budget()? {
                        return Ok(RedEnd::End(SliceEnd::Stop(reason)));
                    }
                    match self.already_green(i, &tests, &res, attempt)? {
                        Some(end) => return Ok(end),
                        None => continue,
                    }
                }
            };

            // verified-red
            if let Some(reason) = self.over_budget()? {
                return Ok(RedEnd::End(SliceEnd::Stop(reason)));
            }
            let out_path = self.output_path(Role::Verifier, &s.id, attempt);
            let _ = std::fs::remove_file(&out_path);
            self.set_current(&s.id, "verify", Some(&out_path))?;
            let vsession = agent::new_session_id();
            // What the command printed is read now: the log is under .tmp/, where an agent
            // could append the "evidence" it is about to cite.
            let output = read_log(&self.root().join(&res.log));
            let prompt = prompts::verifier(self, &s, &case, &res);
            let before = self.protect()?;
            let test_bytes = protect::file_bytes(self.root(), &tests);
            self.call_agent(
                Role::Verifier,
                Some(i),
                attempt,
                &vsession,
                &prompt,
                &out_path,
            )?;
            // The verifier is read-only: anything it changed is put back before judging.
            let mut vscope =
                self.judge_scope(&start_sha, &before, |f| !tests.contains(&f.to_string()))?;
            vscope
                .disallowed
                .extend(protect::put_back_files(self.root(), &test_bytes)?);
            vscope.disallowed.extend(vscope.forge_state.clone());
            let problems = match agent::read_output(&out_path) {
                Ok(v) => {
                    let mut p = gates::check_verifier(
                        &v,
                        &gates::RedEvidence {
                            command: &s.focused_command,
                            failing_case: &case,
                            output: &output,
                        },
                    );
                    if !vscope.disallowed.is_empty() || !vscope.commits.is_empty() {
                        p.push(format!(
                            "the verifier is read-only but changed {:?}; reverted",
                            vscope.disallowed
                        ));
                    }
                    (p, v)
                }
                Err(e) => (vec![e], Value::Null),
            };
            let (problems, answer) = problems;
            if !problems.is_empty() {
                let r = GateResult::fail(
                    gates::VERIFIED_RED,
                    json!({"reason": problems.join("; "), "problems": problems, "answer": answer, "actual_failing_case": case}),
                    false,
                    "return the verifier's feedback to red",
                );
                self.gate(Some(i), &r)?;
                self.feedback(
                    i,
                    format!(
                        "The verifier did not confirm your failing test as the intended missing behaviour:\n- {}",
                        problems.join("\n- ")
                    ),
                );
                continue;
            }
            let r = GateResult::pass(
                gates::VERIFIED_RED,
                json!({"reason": format!("verifier cites `{case}` as the intended failure"), "answer": answer}),
            );
            self.gate(Some(i), &r)?;

            // red checkpoint: of the tree as it was judged, not as a process the agent left
            // behind may have changed it since.
            if let Some(r) = self.unchanged_since_judged(&judged, gates::RED_FILE_SCOPE)? {
                self.gate(Some(i), &r)?;
                self.feedback(i, r.reason());
                continue;
            }
            let head = git::head(self.root())?;
            let msg = format!(
                "forge-checkpoint({}/{}): verified red, temporary\n\nForge-Run: {}\nForge-Slice: {}\n",
                self.meta.slug, s.id, self.meta.slug, s.id
            );
            let commit = git::commit_paths(self.root(), &start_sha, &head, &tests, &msg)?;
            let parent = git::parent(self.root(), &commit)?;
            let files = git::commit_files(self.root(), &commit)?;
            let mut red_tests = tests.clone();
            red_tests.sort();
            let r = gates::red_checkpoint(
                &start_sha,
                parent.as_deref(),
                &files,
                &red_tests,
                &s.test_areas,
            );
            self.gate(Some(i), &r)?;
            if !r.passed() {
                self.restore_to(&start_sha)?;
                self.feedback(
                    i,
                    format!("{} — the slice was reset to START_SHA", r.reason()),
                );
                continue;
            }
            {
                let p = self.state.slices[i].progress_mut();
                p.checkpoint = Some(commit);
                p.red_tests = red_tests;
                p.failing_case = Some(case);
                p.step = Some(Step::Green);
                p.feedback = None;
            }
            self.save()?;
            return Ok(RedEnd::Verified);
        }
        self.restore_to(&start_sha)?;
        Ok(RedEnd::End(SliceEnd::Failed(format!(
            "red did not produce a verified failing test in {RED_ATTEMPTS} attempts"
        ))))
    }

    /// The already-green path of the single-red-failure gate: the coverage reviewer decides;
    /// a valid, high-quality, useful test lands as a test-only commit and the slice is done.
    fn already_green(
        &mut self,
        i: usize,
        tests: &[String],
        res: &CommandResult,
        attempt: u32,
    ) -> Result<Option<RedEnd>> {
        let s = self.state.slices[i].clone();
        let start_sha = self.start_sha(i)?;
        let out_path = self.output_path(Role::CoverageReviewer, &s.id, attempt);
        let _ = std::fs::remove_file(&out_path);
        self.set_current(&s.id, "review", Some(&out_path))?;
        let prompt = prompts::reviewer(self, &s, tests, res);
        let before = self.protect()?;
        let test_bytes = protect::file_bytes(self.root(), tests);
        let session = agent::new_session_id();
        self.call_agent(
            Role::CoverageReviewer,
            Some(i),
            attempt,
            &session,
            &prompt,
            &out_path,
        )?;
        // The reviewer is read-only: what it changed is put back, and its review is void.
        let mut scope =
            self.judge_scope(&start_sha, &before, |f| !tests.contains(&f.to_string()))?;
        scope
            .disallowed
            .extend(protect::put_back_files(self.root(), &test_bytes)?);
        let review = agent::read_output(&out_path)
            .and_then(|v| gates::read_review(&v))
            .and_then(|rv| {
                if scope.disallowed.is_empty()
                    && scope.commits.is_empty()
                    && scope.forge_state.is_empty()
                {
                    Ok(rv)
                } else {
                    Err(format!(
                        "the reviewer is read-only but changed {:?}; reverted",
                        scope.disallowed
                    ))
                }
            });
        match review {
            Ok(rv) if rv.valid && rv.high_quality && rv.useful => {
                let head = git::head(self.root())?;
                let msg = format!(
                    "test({}): {}\n\nThe behaviour was already implemented; the coverage reviewer found the test valid, high quality and useful: {}\n\nForge-Run: {}\nForge-Slice: {}\n",
                    s.id, s.title, rv.reason, self.meta.slug, s.id
                );
                let commit = git::commit_paths(self.root(), &start_sha, &head, tests, &msg)?;
                let parent = git::parent(self.root(), &commit)?;
                let r = if parent.as_deref() == Some(start_sha.as_str()) {
                    GateResult::pass(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": "already green: the reviewed test landed as a coverage commit", "path": "already-green", "review": rv, "commit": commit, "tests": tests}),
                    )
                } else {
                    GateResult::fail(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": "the coverage commit's parent is not START_SHA", "commit": commit, "parent": parent}),
                        true,
                        "review the commit graph",
                    )
                };
                self.gate(Some(i), &r)?;
                if !r.passed() {
                    return Ok(Some(RedEnd::End(SliceEnd::Stop(r.reason()))));
                }
                let p = self.state.slices[i].progress_mut();
                p.status = SliceStatus::Covered;
                p.commit = Some(commit.clone());
                p.red_tests = tests.to_vec();
                p.step = None;
                self.state.current = None;
                self.save()?;
                self.event("slice-covered", json!({"slice": s.id, "commit": commit}));
                Ok(Some(RedEnd::Covered))
            }
            other => {
                let why = match other {
                    Ok(rv) => format!(
                        "the test passes already and the coverage reviewer rejected it (valid: {}, high quality: {}, useful: {}): {}",
                        rv.valid, rv.high_quality, rv.useful, rv.reason
                    ),
                    Err(e) => {
                        format!("the test passes already and the coverage review is unusable: {e}")
                    }
                };
                let r = GateResult::fail(
                    gates::SINGLE_RED_FAILURE,
                    json!({"reason": why, "path": "already-green", "tests": tests}),
                    false,
                    "return to the red agent: write a test that fails for the missing behaviour",
                );
                self.gate(Some(i), &r)?;
                self.feedback(i, why);
                Ok(None)
            }
        }
    }

    /// After a kill during green/final: a final commit that already landed is adopted.
    fn resume_final(&mut self, i: usize) -> Result<Option<SliceEnd>> {
        let p = self.state.slices[i].progress().clone();
        let (Some(start), Some(_cp)) = (p.start_sha.clone(), p.checkpoint.clone()) else {
            return Ok(None);
        };
        let head = git::head(self.root())?;
        let parent = git::parent(self.root(), &head)?;
        if parent.as_deref() == Some(start.as_str()) {
            let msg = git::commit_message(self.root(), &head)?;
            let mark = format!("Forge-Slice: {}", self.state.slices[i].id);
            if msg.contains(&mark) && !msg.starts_with("forge-checkpoint") {
                let code: Vec<String> = git::commit_files(self.root(), &head)?
                    .into_iter()
                    .filter(|f| !p.red_tests.contains(f))
                    .collect();
                // A kill between the commit and the index sync: sync now.
                git::sync_index(self.root(), &git::commit_files(self.root(), &head)?)?;
                return self.land(i, &head, &code, true).map(Some);
            }
        }
        Ok(None)
    }

    fn green(&mut self, i: usize, resumed: bool) -> Result<SliceEnd> {
        let mut judge_only = resumed;
        loop {
            let s = self.state.slices[i].clone();
            let p = s.progress().clone();
            let checkpoint = self.recorded(i, "checkpoint", p.checkpoint.clone())?;
            let start_sha = self.start_sha(i)?;
            if !judge_only {
                if p.green_attempts >= GREEN_ATTEMPTS {
                    break;
                }
                if let Some(reason) = self.over_budget()? {
                    return Ok(SliceEnd::Stop(reason));
                }
            }
            let before = self.protect()?;
            if !judge_only {
                let (attempt, feedback, session) = self.begin_attempt(i, Step::Green)?;
                let prompt = prompts::green(self, &s, attempt, feedback.as_deref());
                let output = self.output_path(Role::Green, &s.id, attempt);
                self.call_agent(Role::Green, Some(i), attempt, &session, &prompt, &output)?;
            }
            judge_only = false;

            // green file-scope
            let scope = self.judge_scope(&checkpoint, &before, |f| {
                p.red_tests.iter().any(|t| t == f)
                    || gates::in_areas(&s.test_areas, f)
                    || !gates::in_areas(&s.code_areas, f)
            })?;
            let r = gates::scope_result(gates::GREEN_FILE_SCOPE, &scope, &s.code_areas, "green");
            self.gate(Some(i), &r)?;
            if !r.passed() {
                self.feedback(
                    i,
                    format!(
                        "{} The verified red tests ({}) must stay byte-identical.",
                        r.reason(),
                        p.red_tests.join(", ")
                    ),
                );
                continue;
            }
            let code: Vec<String> = scope.changed.clone();
            let judged = fingerprint(self.root(), &code);

            // green checks
            let attempt = self.state.slices[i].progress().green_attempts;
            let mut results = Vec::new();
            let focused = self.check(
                &s.id,
                &format!("green-a{attempt}"),
                &s.focused_command,
                s.report,
            )?;
            let case_passes = p.failing_case.as_deref().is_none_or(|c| {
                focused.report.cases.is_empty()
                    || focused.report.cases.iter().any(|t| {
                        gates::same_case(c, &t.name) && t.status == crate::report::Status::Passed
                    })
            });
            results.push(focused);
            for (k, c) in s.related_checks.iter().enumerate() {
                results.push(self.check(
                    &s.id,
                    &format!("related{k}-a{attempt}"),
                    c,
                    Format::Auto,
                )?);
            }
            let failing: Vec<&CommandResult> = results.iter().filter(|r| !r.ok).collect();
            let mut reasons: Vec<String> = failing
                .iter()
                .map(|r| format!("`{}`: {}", r.run, command_failure(r)))
                .collect();
            if !case_passes {
                reasons.push(format!(
                    "the verified red case `{}` is not among the passing cases",
                    p.failing_case.clone().unwrap_or_default()
                ));
            }
            let evidence = json!({
                "reason": if reasons.is_empty() { format!("{} check(s) pass", results.len()) } else { reasons.join("; ") },
                "checks": results.iter().map(|r| json!({"command": r.run, "ok": r.ok, "exit_code": r.exit_code, "log": r.log, "counts": r.report.counts()})).collect::<Vec<_>>(),
            });
            let verdict = if reasons.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            let r = if verdict == Verdict::Pass {
                GateResult::pass(gates::GREEN_CHECKS, evidence)
            } else {
                GateResult::fail(
                    gates::GREEN_CHECKS,
                    evidence,
                    false,
                    "return the command output to green",
                )
            };
            self.gate(Some(i), &r)?;
            if let Some(reason) = self.count_breaker(verdict)? {
                return Ok(SliceEnd::Stop(reason));
            }
            if verdict == Verdict::Fail {
                let detail: Vec<String> = failing
                    .iter()
                    .map(|r| format!("$ {}\n{}", r.run, tail_lines(&r.tail, 30)))
                    .collect();
                self.feedback(i, format!("{}\n{}", r.reason(), detail.join("\n")));
                continue;
            }

            // milestone checks: at planned milestones and at final completion, every configured
            // command, before the commit.
            let milestone = s.milestone || self.is_final(i);
            if milestone {
                let results = self.full_checks(&s.id)?;
                let failing: Vec<&CommandResult> = results.iter().filter(|r| !r.ok).collect();
                let evidence = json!({
                    "reason": if failing.is_empty() { format!("all {} configured command(s) pass{}", results.len(), if self.is_final(i) { " (final completion)" } else { "" }) } else { failing.iter().map(|r| format!("`{}`: {}", r.name, command_failure(r))).collect::<Vec<_>>().join("; ") },
                    "final": self.is_final(i),
                    "commands": results.iter().map(|r| json!({"name": r.name, "command": r.run, "ok": r.ok, "exit_code": r.exit_code, "log": r.log})).collect::<Vec<_>>(),
                });
                let ok = failing.is_empty();
                let r = if ok {
                    GateResult::pass(gates::MILESTONE_CHECKS, evidence)
                } else {
                    GateResult::fail(
                        gates::MILESTONE_CHECKS,
                        evidence,
                        false,
                        "route the failure to this slice's green agent",
                    )
                };
                self.gate(Some(i), &r)?;
                let v = if ok { Verdict::Pass } else { Verdict::Fail };
                if let Some(reason) = self.count_breaker(v)? {
                    return Ok(SliceEnd::Stop(reason));
                }
                if !ok {
                    let detail: Vec<String> = failing
                        .iter()
                        .map(|r| format!("$ {}\n{}", r.run, tail_lines(&r.tail, 30)))
                        .collect();
                    self.feedback(
                        i,
                        format!(
                            "The full checks fail: {}\n{}",
                            r.reason(),
                            detail.join("\n")
                        ),
                    );
                    continue;
                }
            }

            // the final commit, of the tree the checks passed on
            if let Some(r) = self.unchanged_since_judged(&judged, gates::GREEN_FILE_SCOPE)? {
                self.gate(Some(i), &r)?;
                self.feedback(i, r.reason());
                continue;
            }
            self.state.slices[i].progress_mut().step = Some(Step::Final);
            self.set_current(&s.id, "final", None)?;
            let head = git::head(self.root())?;
            let mut files: Vec<String> = p.red_tests.clone();
            files.extend(code.iter().cloned());
            let msg = format!(
                "feat({}): {}\n\nTest: {}\nFailing case verified red: {}\n\nForge-Run: {}\nForge-Slice: {}\n",
                s.id,
                s.title,
                p.red_tests.join(", "),
                p.failing_case.clone().unwrap_or_default(),
                self.meta.slug,
                s.id
            );
            let commit = git::commit_paths(self.root(), &start_sha, &head, &files, &msg)?;
            return self.land(i, &commit, &code, true);
        }
        let cp = self.start_sha(i)?;
        self.restore_to(&cp)?;
        Ok(SliceEnd::Failed(format!(
            "green did not pass its checks in {GREEN_ATTEMPTS} attempts"
        )))
    }

    /// Final ancestry gate on the slice's commit; lands the slice on a pass.
    fn land(
        &mut self,
        i: usize,
        commit: &str,
        code: &[String],
        verified: bool,
    ) -> Result<SliceEnd> {
        let p = self.state.slices[i].progress().clone();
        let start = self.start_sha(i)?;
        let parent = git::parent(self.root(), commit)?;
        let message = git::commit_message(self.root(), commit)?;
        let files = git::commit_files(self.root(), commit)?;
        let in_history = match &p.checkpoint {
            Some(cp) => git::is_ancestor(self.root(), cp, commit)?,
            None => false,
        };
        let r = gates::final_ancestry(&gates::Final {
            start_sha: &start,
            commit,
            parent: parent.as_deref(),
            message: &message,
            files: &files,
            red_tests: &p.red_tests,
            code_files: code,
            checkpoint_in_history: in_history,
            verified_before_commit: verified,
        });
        self.gate(Some(i), &r)?;
        if !r.passed() {
            let graph = git::graph(self.root()).unwrap_or_default();
            return Ok(SliceEnd::Stop(format!(
                "final-ancestry: {}\n{graph}",
                r.reason()
            )));
        }
        let id = self.state.slices[i].id.clone();
        {
            let p = self.state.slices[i].progress_mut();
            p.status = SliceStatus::Done;
            p.commit = Some(commit.to_string());
            p.step = None;
            p.feedback = None;
        }
        self.state.current = None;
        self.save()?;
        self.event("slice-done", json!({"slice": id, "commit": commit}));
        self.say(&format!(
            "Slice `{id}` landed as {}.",
            &commit[..commit.len().min(10)]
        ));
        Ok(SliceEnd::Landed)
    }

    // -----------------------------------------------------------------------------------------
    // helpers

    /// Counts one more red or green attempt of slice `i`, marks the phase for the guard, and
    /// returns the attempt number, the feedback for it and the agent session to continue.
    fn begin_attempt(&mut self, i: usize, step: Step) -> Result<(u32, Option<String>, String)> {
        let p = self.state.slices[i].progress_mut();
        let (attempts, total, session) = match step {
            Step::Green => (
                &mut p.green_attempts,
                &mut p.green_attempts_total,
                &p.green_session,
            ),
            _ => (
                &mut p.red_attempts,
                &mut p.red_attempts_total,
                &p.red_session,
            ),
        };
        *attempts += 1;
        *total += 1;
        let out = (*attempts, session.clone().unwrap_or_default());
        p.step = Some(step);
        let feedback = p.feedback.take();
        let id = self.state.slices[i].id.clone();
        let phase = if step == Step::Green { "green" } else { "red" };
        self.set_current(&id, phase, None)?;
        Ok((out.0, feedback, out.1))
    }

    /// A person's `--retry <slice>` is for a failed slice of this run.
    fn check_retry(&self, id: &str) -> Result<usize> {
        let Some(i) = self.index_of(id) else {
            return Err(Error::usage(format!(
                "run `{}` has no slice `{id}` (slices: {})",
                self.meta.slug,
                self.state
                    .slices
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let status = self.status_of(i);
        if status != SliceStatus::Failed {
            return Err(Error::usage(format!(
                "slice `{id}` is {}; only a failed slice can be retried",
                format!("{status:?}").to_lowercase()
            )));
        }
        Ok(i)
    }

    /// A person's `--retry <slice>`: the failed slice gets one more wave with new agents.
    fn retry_by_person(&mut self, id: &str) -> Result<()> {
        let i = self.check_retry(id)?;
        // One more wave, with new agents, and no automatic one after it.
        let p = self.state.slices[i].progress_mut();
        p.status = SliceStatus::Pending;
        p.wave += 1;
        p.last_wave = Some(p.wave);
        p.red_attempts = 0;
        p.green_attempts = 0;
        p.red_session = None;
        p.green_session = None;
        p.feedback = None;
        p.failure = None;
        p.step = None;
        self.save()?;
        let who = crate::git::user_name_from_files(self.root()).unwrap_or_else(|| "unknown".into());
        let person = Recorder::new(
            self.project,
            &format!("run-{}", self.meta.slug),
            &format!("human:{who}"),
        );
        person.record_or_warn(
            Some(&self.meta.slug),
            "run",
            json!({"event": "retry-by-person", "run": self.meta.slug, "slice": id, "wave": self.state.slices[i].progress().wave}),
        );
        self.say(&format!(
            "Slice `{id}` gets one more wave with new agents ({who}'s decision)."
        ));
        Ok(())
    }

    /// Captures what no agent may change, before an agent runs; its manifest goes to disk so
    /// a resume after a kill can tell what changed meanwhile.
    fn protect(&mut self) -> Result<protect::Protected> {
        if self.hidden.is_none() {
            self.hidden = Some(git::hidden_paths(self.root())?);
        }
        let hidden = self.hidden.as_ref().expect("set above");
        let p = protect::Protected::snapshot(self.project, &self.git_dir, &self.meta.slug, hidden)?;
        state::save_json(&self.dir.join("protected.json"), &p.manifest())?;
        Ok(p)
    }

    /// On resume: HEAD must be one of `expected`, or a commit this run made on the slice's
    /// START_SHA (a checkpoint or a coverage commit a kill interrupted). Anything else — a
    /// person's commits since the run stopped — is named, never reset away.
    fn head_is_forges(&self, i: usize, expected: &[&str]) -> Result<()> {
        let head = git::head(self.root())?;
        if expected.contains(&head.as_str()) {
            return Ok(());
        }
        let start = self.start_sha(i)?;
        let parent = git::parent(self.root(), &head)?;
        let message = git::commit_message(self.root(), &head).unwrap_or_default();
        let mark = format!("Forge-Slice: {}", self.state.slices[i].id);
        if parent.as_deref() == Some(start.as_str()) && message.contains(&mark) {
            return Ok(());
        }
        let graph = git::graph(self.root()).unwrap_or_default();
        Err(Error::usage(format!(
            "HEAD ({}) is not where run `{}` left slice `{}` ({}): commits were made since it stopped. Move them off this branch (or reset to {}), then resume.\n{graph}",
            &head[..head.len().min(10)],
            self.meta.slug,
            self.state.slices[i].id,
            expected
                .iter()
                .map(|e| &e[..e.len().min(10)])
                .collect::<Vec<_>>()
                .join(" or "),
            &expected[0][..expected[0].len().min(10)]
        )))
    }

    fn start_sha(&self, i: usize) -> Result<String> {
        self.recorded(
            i,
            "start_sha",
            self.state.slices[i].progress().start_sha.clone(),
        )
    }

    /// A commit the slice's progress must hold by now; its absence means the state file does
    /// not describe a run Forge drove.
    fn recorded(&self, i: usize, what: &str, value: Option<String>) -> Result<String> {
        value.ok_or_else(|| Error::State {
            path: state::state_path(&self.dir),
            message: format!(
                "slice `{}` is {:?} but has no `{what}`",
                self.state.slices[i].id,
                self.state.slices[i].progress().step
            ),
            recovery: format!(
                "Inspect it; to start over, remove .tmp/.forge/runs/{}/ and start the run again.",
                self.meta.slug
            ),
        })
    }

    fn feedback(&mut self, i: usize, text: String) {
        self.state.slices[i].progress_mut().feedback = Some(text);
    }

    fn output_path(&self, role: Role, slice: &str, attempt: u32) -> PathBuf {
        let wave = self
            .index_of(slice)
            .map(|i| self.state.slices[i].progress().wave)
            .unwrap_or(0);
        self.dir
            .join("outputs")
            .join(format!("{}.json", agent::stem(role, slice, wave, attempt)))
    }

    fn call_agent(
        &mut self,
        role: Role,
        slice: Option<usize>,
        attempt: u32,
        session: &str,
        prompt: &str,
        output: &Path,
    ) -> Result<()> {
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
        let call = agent::Call {
            role,
            slice: &sid,
            wave,
            attempt,
            session,
            resume,
            prompt,
            output,
        };
        let ledgers = protect::Ledgers::capture(self.project, &self.meta.slug);
        let fin = agent::invoke(
            self.project,
            &self.dir,
            &self.meta.slug,
            &agent_cfg,
            &call,
            &self.config.budget,
        )?;
        let tampered = ledgers.put_back(self.project)?;
        self.tamper.extend(tampered);
        let usd: f64 = fin.spend.iter().filter_map(|s| s.usd).sum();
        let tokens: u64 = fin.spend.iter().map(|s| s.tokens.total()).sum();
        if !fin.spend.is_empty() {
            let session = format!("run-{}", self.meta.slug);
            crate::budget::record(
                self.project,
                Some(&self.meta.slug),
                Some(&session),
                &fin.spend,
            )?;
            for s in &fin.spend {
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
        let not_found = o.exit_code == Some(127)
            && o.duration < std::time::Duration::from_secs(5)
            && (tail.contains("not found") || tail.contains("No such file"));
        if not_found {
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
            return Err(Error::Config {
                path: self.project.config_path(),
                message: format!(
                    "the {} agent's command was not found (exit 127): `{}` — {} (log: {}); fix `agents.{}.command` (or `agents.default.command`), then `forge run --resume {}`",
                    role.name(),
                    agent_cfg.command,
                    crate::text::clip(tail.lines().last().unwrap_or(""), 200),
                    self.project.rel(&o.log_path),
                    role.name(),
                    self.meta.slug
                ),
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
        self.say(&format!(
            "  · {}{who} ran ({status}, {:.1} s{})",
            role.name(),
            o.duration.as_secs_f64(),
            if usd > 0.0 {
                format!(", ${usd:.4}")
            } else {
                String::new()
            }
        ));
        if slice.is_some() {
            self.save()
        } else {
            // The planner's answer is state.json itself: only Forge's own record is saved.
            self.meta.updated_at = now();
            state::save_json(&state::meta_path(&self.dir), &self.meta)
        }
    }

    /// Runs one focused command or related check, logged in the run folder.
    fn check(
        &mut self,
        slice: &str,
        label: &str,
        run: &str,
        report: Format,
    ) -> Result<CommandResult> {
        let cmd = CommandConfig {
            name: format!("{slice}-{label}"),
            run: run.to_string(),
            timeout: self.config.run.check_timeout,
            report,
            report_path: None,
        };
        let origin = format!(
            "slice `{slice}`'s `{run}` in the plan (.tmp/.forge/runs/{}/state.json): re-plan the run",
            self.meta.slug
        );
        let res = verify::run_command(self.project, &self.dir.join("logs"), None, &origin, &cmd)?;
        self.meta.check_ms += res.duration_ms;
        Ok(res)
    }

    /// Every configured verify command (milestones and final completion).
    fn full_checks(&mut self, slice: &str) -> Result<Vec<CommandResult>> {
        let logs = self.dir.join("logs");
        let mut out = Vec::new();
        for (k, c) in self.config.verify.commands.iter().enumerate() {
            let mut c = c.clone();
            let name = c.name.clone();
            c.name = format!("{slice}-full-{name}");
            let origin = format!("`verify.commands[{k}].run` in .forge/config.yaml");
            let mut r = verify::run_command(self.project, &logs, None, &origin, &c)?;
            self.meta.check_ms += r.duration_ms;
            r.name = name;
            out.push(r);
        }
        Ok(out)
    }

    /// Judges a phase's changes since `base`: undoes commits, reverts files `disallowed` says
    /// the phase may not change, restores Forge state the agent touched.
    fn judge_scope(
        &mut self,
        base: &str,
        before: &protect::Protected,
        disallowed: impl Fn(&str) -> bool,
    ) -> Result<gates::Scope> {
        let mut forge_state = before.put_back(self.project)?;
        forge_state.append(&mut self.tamper);
        forge_state.sort();
        let mut scope = gates::Scope {
            forge_state,
            head_moved: self.restore_head(base)?,
            ..Default::default()
        };
        let head = git::head(self.root())?;
        if head != base {
            let out = git::git(self.root(), &["rev-list", &format!("{base}..{head}")])
                .unwrap_or_default();
            scope.commits = String::from_utf8_lossy(&out)
                .lines()
                .map(str::to_string)
                .collect();
            if scope.commits.is_empty() {
                // HEAD moved elsewhere (a reset, a checkout): name it.
                scope.commits.push(head.clone());
            }
            git::reset_keep(self.root(), base)?;
        }
        // HEAD is `base` now: one status scan lists every change since it.
        scope.changed = changed_since_head(self.root())?;
        // After a branch switch the working tree is another branch's checkout: none of it is
        // the agent's work to keep.
        let void = scope.head_moved.is_some();
        scope.disallowed = scope
            .changed
            .iter()
            .filter(|f| void || disallowed(f))
            .cloned()
            .collect();
        git::restore_paths(self.root(), base, &scope.disallowed)?;
        scope.changed.retain(|f| !scope.disallowed.contains(f));
        Ok(scope)
    }

    /// `Some(failed gate)` when the working tree differs from what the scope gate judged: a
    /// process the agent left behind kept editing while Forge ran the checks. Nothing changed
    /// after the checks is committed.
    fn unchanged_since_judged(
        &self,
        judged: &[(String, Option<Vec<u8>>)],
        gate: &str,
    ) -> Result<Option<GateResult>> {
        let now = fingerprint(self.root(), &changed_since_head(self.root())?);
        if now == judged {
            return Ok(None);
        }
        let mut differ: Vec<String> = now
            .iter()
            .filter(|e| !judged.contains(e))
            .chain(judged.iter().filter(|e| !now.contains(e)))
            .map(|(f, _)| f.clone())
            .collect();
        differ.sort();
        differ.dedup();
        Ok(Some(GateResult::fail(
            gate,
            json!({"reason": format!("the working tree changed after the agent finished, while Forge checked it ({}): a process it left behind? Nothing was committed", differ.join(", ")), "files": differ}),
            false,
            "stop any process you started before you finish; the attempt is judged again",
        )))
    }

    /// Puts HEAD back on the run's branch if an agent switched it (`git checkout other`,
    /// `git switch -c x`, a detach). No branch is moved: the other branch keeps its commits.
    fn restore_head(&mut self, base: &str) -> Result<Option<String>> {
        let now = git::head_ref(self.root())?;
        if now == self.meta.branch {
            return Ok(None);
        }
        git::set_head(self.root(), self.meta.branch.as_deref(), base)?;
        let name = |r: &Option<String>| {
            r.as_deref()
                .map(|b| b.trim_start_matches("refs/heads/").to_string())
                .unwrap_or_else(|| "a detached HEAD".into())
        };
        Ok(Some(format!(
            "HEAD was switched to {}; put back on {}",
            name(&now),
            name(&self.meta.branch)
        )))
    }

    /// Puts the working tree back at `commit`: tracked files restored (Forge's own files under
    /// `.forge/` left as they are), files the run created removed.
    fn restore_to(&mut self, commit: &str) -> Result<()> {
        git::reset_keep(self.root(), commit)?;
        let changed = changed_since_head(self.root())?;
        git::restore_paths(self.root(), commit, &changed)
    }

    fn over_budget(&self) -> Result<Option<String>> {
        let session = format!("run-{}", self.meta.slug);
        let st = crate::budget::standings(
            self.project,
            &self.config.budget,
            Some(&self.meta.slug),
            Some(&session),
        )?;
        Ok(st.iter().find(|s| s.over).map(|s| {
            format!(
                "budget exhausted for {} ({}); raise the limit in .forge/config.yaml `budget` to continue",
                s.scope,
                s.describe()
            )
        }))
    }

    fn breaker_open(&self) -> Result<Option<String>> {
        Ok(breaker::load(self.project, &self.meta.slug)?
            .filter(|b| b.open)
            .map(|b| {
                format!(
                    "the circuit breaker of change `{}` is open ({} consecutive failures); a person resets it with `forge verify --reset-breaker --change {}`",
                    self.meta.slug, b.consecutive_failures, self.meta.slug
                )
            }))
    }

    /// Counts a check verdict in the run's breaker (change = the run's name).
    fn count_breaker(&mut self, v: Verdict) -> Result<Option<String>> {
        let o = breaker::record(
            self.project,
            &self.meta.slug,
            v,
            self.config.breaker.max_failures,
        )?;
        self.rec.record_or_warn(
            Some(&self.meta.slug),
            "breaker",
            json!({"event": "run-check", "verdict": v.as_str(), "consecutive_failures": o.state.consecutive_failures, "max_failures": o.max_failures, "open": o.state.open}),
        );
        if v == Verdict::Fail {
            let line = o.line();
            self.say(&format!("  {line}"));
            if o.state.open {
                return Ok(Some(format!(
                    "{line} A person resets it with `forge verify --reset-breaker --change {}`.",
                    self.meta.slug
                )));
            }
        }
        Ok(None)
    }
}

/// The content of each changed path as a scope gate judged it: (path, SHA-256, `None` when
/// deleted), sorted.
fn fingerprint(root: &Path, changed: &[String]) -> Vec<(String, Option<Vec<u8>>)> {
    use sha2::Digest;
    let mut out: Vec<(String, Option<Vec<u8>>)> = changed
        .iter()
        .map(|f| {
            let bytes = std::fs::symlink_metadata(root.join(f))
                .ok()
                .and_then(|_| std::fs::read(root.join(f)).ok());
            (f.clone(), bytes.map(|b| sha2::Sha256::digest(&b).to_vec()))
        })
        .collect();
    out.sort();
    out
}

/// Non-Forge paths modified, staged or untracked against HEAD, sorted: one `git status`, the
/// only full scan of the tree a scope check needs (10,000 files cost ~25 ms per scan).
fn changed_since_head(root: &Path) -> Result<Vec<String>> {
    let mut files: Vec<String> = git::status(root)?
        .into_iter()
        .map(|e| e.path)
        .filter(|f| !gates::is_forge_path(f))
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

enum RedEnd {
    Verified,
    Covered,
    End(SliceEnd),
}

fn command_failure(r: &CommandResult) -> String {
    if r.timed_out {
        return format!("timed out after {} s", r.timeout_secs);
    }
    let mut parts = Vec::new();
    if r.exit_code != Some(0) {
        parts.push(verify::exit_text(r));
    }
    let failing: Vec<&str> = r.report.failing().map(|c| c.name.as_str()).collect();
    if !failing.is_empty() {
        parts.push(format!("failing: {}", failing.join(", ")));
    }
    if let Some(e) = &r.report.infra_error {
        parts.push(format!("infra error: {}", crate::text::clip(e, 200)));
    }
    if let Some(e) = &r.report_error {
        parts.push(e.clone());
    }
    if parts.is_empty() {
        "failed".into()
    } else {
        parts.join(", ")
    }
}

fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A log's text, ANSI stripped, at most 8 MiB from its end.
fn read_log(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let cap = 8 * 1024 * 1024;
    if len > cap {
        let _ = f.seek(SeekFrom::Start(len - cap));
    }
    let mut b = Vec::new();
    let _ = f.read_to_end(&mut b);
    crate::text::strip_ansi(&String::from_utf8_lossy(&b)).into_owned()
}

/// A summary of one run for `forge run --status`.
pub fn status(project: &Project, slug: &str) -> Result<(RunMeta, RunState)> {
    let dir = state::run_dir(project, slug);
    let Some(meta) = state::load_meta(&dir, slug)? else {
        return Err(no_such_run(project, slug));
    };
    let st = state::load_state(&dir, slug)?.unwrap_or_default();
    Ok((meta, st))
}

mod prompts;
