//! `forge run`: the red/green slice loop of `002_…`. Agents do the creative work — plan, write
//! one failing test, verify the failure, make it pass — and Forge proves every fact between them
//! with the deterministic gates in [`gates`]. No agent can override a failed gate: Forge applies
//! the recovery (revert, undo, reset), hands the reason back to the same agent, and bounds the
//! attempts by the retry policy.
//!
//! # The trust rule
//!
//! An agent, and every process it or the code it wrote starts, may have changed anything it
//! could write — the working tree, the index, `.git/*`, `~/.gitconfig`, `~/.config/git/*`,
//! `~/.local`, the run folder, the logs — and may still be running. **A gate decides only on what
//! Forge itself observed, through a channel the agent could not write, at the moment of the
//! decision.** So:
//!
//! - scope is judged on content Forge hashed itself ([`crate::evidence::snapshot`]), between
//!   snapshots taken just before and just after each agent call — never on `git status`, the
//!   index's stat cache or flags, filters, or global git config (every git Forge runs is
//!   hermetic: [`crate::git`]);
//! - the checks run on a clean checkout of exactly the tree that would be committed
//!   ([`crate::evidence::checkout`]), with a fresh HOME and no global git config, and their
//!   reports are parsed from the bytes Forge read from the pipe, never a log read back by path;
//! - objects Forge commits or checks out are read back and hashed ([`crate::evidence::odb`]);
//! - whatever an agent call or a check starts is killed when it returns
//!   ([`crate::exec::ExecOptions::contain`]), before the next gate;
//! - refs, Forge's files and git's control files are compared before and after each call and
//!   put back ([`protect`], [`crate::evidence::refs`]); the gate fails with the list;
//! - a person's work is never a casualty: Forge reverts only paths an agent changed in that
//!   call, and on resume, whatever differs from what Forge last saw is the person's.
//!
//! This holds on a machine without any sandbox; the kernel sandbox is a second, independent
//! wall.
//!
//! # Where things are
//!
//! [`gates`] builds every gate result as a pure function of evidence; `observe` owns the
//! snapshots; `restore` is the only code that reverts an agent's work; `record` the only writer
//! of the run's files and timeline. The phases: `plan`, `schedule` (waves and retries), `slice`
//! (one slice, resume), `red`, `green` (with the landing), `checks` (commands, breaker,
//! budget), `agent` (one agent call, observed).

pub mod agent;
mod checks;
mod clean_room;
mod envs;
pub mod gates;
mod green;
mod observe;
mod plan;
mod prompts;
mod protect;
mod record;
mod red;
mod restore;
mod schedule;
mod slice;
pub mod state;
mod stub;

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Error, Result};
use crate::evidence::checkout::Checkout;
use crate::evidence::odb::Ident;
use crate::git;
use crate::repo::{Project, validate_change_name};
use crate::timeline::Recorder;

use state::{RunMeta, RunState, RunStatus};

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

/// The sections of `.forge/config.yaml` a run reads, borrowed from the loaded config: the run
/// takes what it uses and never the whole file, so `config.rs` assembles the run's section and
/// the run does not import it back. Built by `src/cli/run.rs`.
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    pub verify: &'a crate::verify::VerifyConfig,
    pub agents: &'a agent::AgentsConfig,
    pub run: &'a RunConfig,
    pub budget: &'a crate::budget::BudgetConfig,
    pub breaker: &'a crate::breaker::BreakerConfig,
    pub sandbox: &'a crate::sandbox::SandboxConfig,
}

/// `run:` in `.forge/config.yaml`.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Seconds before a focused command or related check is killed.
    #[serde(default = "default_check_timeout")]
    pub check_timeout: u64,
    /// Folders of the checks' checkout kept from one check to the next (build caches such as
    /// `target` or `node_modules`). Code a check runs can write them: a cache is trusted across
    /// the checks of one run.
    #[serde(default)]
    pub check_caches: Vec<String>,
    /// Folders of the project that git ignores and the checks need, read-only: virtual
    /// environments, `node_modules`. Unset: found in the project ([`envs::found`]); `[]`: none.
    #[serde(default)]
    pub check_envs: Option<Vec<String>>,
    /// Files of the test harness (the files that run the checks: `conftest.py`, `Makefile`,
    /// `package.json`, the verify commands' scripts, …) that agents may still change, by glob:
    /// `Cargo.toml` for a project whose slices add dependencies.
    #[serde(default)]
    pub harness_editable: Vec<String>,
    /// Lets red change or remove existing lines of test files (default: red only adds). A red
    /// agent may then weaken an existing test in the same change as its new one.
    #[serde(default)]
    pub red_may_edit_tests: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            check_timeout: DEFAULT_CHECK_TIMEOUT_SECS,
            check_caches: Vec::new(),
            check_envs: None,
            harness_editable: Vec::new(),
            red_may_edit_tests: false,
        }
    }
}

impl RunConfig {
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.check_timeout == 0 {
            return Err("`run.check_timeout` must be at least 1 (seconds)".into());
        }
        let lists: [(&str, &[String]); 2] = [
            ("check_caches", &self.check_caches),
            ("check_envs", self.check_envs.as_deref().unwrap_or(&[])),
        ];
        for (key, list) in lists {
            for (i, c) in list.iter().enumerate() {
                let plain = !c.is_empty()
                    && !c.starts_with('/')
                    && c.split('/').all(|n| !n.is_empty() && n != "." && n != "..");
                if !plain {
                    return Err(format!(
                        "`run.{key}[{i}]` is `{c}`: name a folder inside the project, relative and without `.`, `..` or a trailing `/` (e.g. `target`, `web/node_modules`)"
                    ));
                }
            }
        }
        Ok(())
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
    /// A check could not start where Forge ran it: the person fixes the setup (exit 2).
    Setup(String),
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
    config: Settings<'a>,
    dir: PathBuf,
    /// The repository's git folder (`.git`, or a worktree's).
    git_dir: PathBuf,
    /// Whether `.tmp/.forge/active-run` names this run (written by this process).
    active_written: bool,
    meta: RunMeta,
    state: RunState,
    rec: Recorder,
    out: Printer<'a>,
    /// Forge's eyes on the working tree and the object store.
    seen: observe::Observer,
    /// The checks' checkout, opened at the first check.
    checkout: Option<Checkout>,
    /// The project's environments the checks see read-only, and no agent of the run may change
    /// (found once, when the run starts or resumes).
    envs: Vec<String>,
    /// Whether an overlay can be mounted over the checks' checkout here (tried once per run:
    /// a temp folder on overlayfs or NFS cannot hold an upper layer).
    overlay_works: Option<bool>,
    /// The person whose name Forge's commits carry.
    ident: Ident,
    /// Whether agents and checks run inside the kernel sandbox (decided once per process).
    wall: Wall,
    /// A reason to stop before the next agent call, found after the last one (an unknown cost).
    halt: Option<String>,
    /// A check that could not start in the checks' checkout: Forge's setup, not an agent's
    /// failure (the run stops with exit 2 and the attempt is given back).
    setup: Option<String>,
    /// Resumed after the driving `forge run` died (killed, not stopped): what the run folder
    /// says may have been written by an agent since, so the slice's facts are re-established
    /// from evidence before they are used.
    after_kill: bool,
    /// What each verify command reported on the run's base, measured once per process when
    /// first needed (see [`gates::against_base`]): Forge's own observation, never read back
    /// from the run folder.
    base_cases: Option<Vec<gates::BaseCases>>,
    _lock: RunLocks,
}

/// The kernel sandbox as this run uses it: every agent call and every check inside its profile
/// (`sandbox.mode` auto or require, on a kernel with Landlock), or not at all. The run's own
/// gates are the other, independent wall either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wall {
    Off,
    /// `contain`: a PID namespace ends everything a call starts. `layers`: a check runs on an
    /// overlay over its checkout (a mount namespace, and contained, so nothing writes the
    /// overlay after the check), which leaves the checkout as it was.
    Kernel {
        contain: bool,
        layers: bool,
    },
}

/// Starts a new run.
pub fn start(
    project: &Project,
    config: Settings<'_>,
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
    agent::require_all(config.agents, &project.config_path())?;
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
    let ident = Ident::of_person(&project.root)?;
    let now = now();
    let meta = RunMeta {
        slug: slug.into(),
        goal: crate::text::inert(goal.trim(), 500),
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
        clean_room_ms: 0,
        branch: git::head_ref(&project.root)?,
        planner_session: None,
        started_sessions: Vec::new(),
        state_sha256: None,
        prev_state_sha256: None,
        observed: None,
        person_paths: Vec::new(),
        in_call: None,
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
        ident,
    )?;
    run.save()?;
    run.event(
        "started",
        json!({"goal": run.meta.goal, "base_sha": run.meta.base_sha}),
    );
    run.say(&format!("Run `{slug}`: {}", run.meta.goal));
    let end = run.drive();
    run.wind_up(end)
}

/// Continues a run from its saved state.
///
/// `retry` names a slice whose retries were exhausted (or that failed and was not retried):
/// a person's decision to give it a fresh first wave.
/// What a person decides on `--resume`, beside resuming.
#[derive(Debug, Default, Clone, Copy)]
pub struct PersonSays<'a> {
    /// `--retry SLICE`: a failed slice gets one more wave.
    pub retry: Option<&'a str>,
    /// `--accept SLICE`: an already-green slice lands as test-only coverage.
    pub accept: Option<&'a str>,
}

pub fn resume(
    project: &Project,
    config: Settings<'_>,
    slug: &str,
    says: PersonSays<'_>,
    out: Printer,
) -> Result<Outcome> {
    let retry = says.retry;
    validate_change_name(slug)?;
    agent::require_all(config.agents, &project.config_path())?;
    let dir = state::run_dir(project, slug);
    let Some(mut meta) = state::load_meta(&dir, slug)? else {
        return Err(no_such_run(project, slug));
    };
    let lock = lock_run(project, &dir, slug)?;
    // What the killed run's agent left running ends before anything else is looked at.
    agent::end_leftover(&dir, slug);
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
        let bytes = crate::state::read_untrusted(&state::state_path(&dir), state::MAX_RUN_FILE)
            .ok()
            .flatten()
            .unwrap_or_default();
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
    if meta.planned
        && let Some(s) = st.slices.iter().find(|s| s.forge.is_none())
    {
        return Err(Error::State {
            path: state::state_path(&dir),
            message: format!(
                "slice `{}` has no progress record (`forge`), which Forge writes for every slice of an accepted plan",
                crate::text::inert(&s.id, 80)
            ),
            recovery: format!(
                "Inspect it (an agent may have edited it); to start over, remove .tmp/.forge/runs/{slug}/ and run `forge run {slug} --goal …` again."
            ),
        });
    }
    if meta.status == RunStatus::Done {
        out(&format!("Run `{slug}` is done; nothing to resume."));
        return Ok(Outcome::Done);
    }
    // Killed between writing run.json (plan accepted) and state.json (the plan): plan again.
    if meta.planned && st.slices.is_empty() {
        meta.planned = false;
    }
    // Still `running` on disk: the driving process died without stopping the run.
    let after_kill = meta.status == RunStatus::Running;
    meta.status = RunStatus::Running;
    meta.stop_reason = None;
    let ident = Ident::of_person(&project.root)?;
    let mut run = Run::new(project, config, dir, gd, meta, st, out, lock, ident)?;
    run.after_kill = after_kill;
    if after_kill {
        // The index is the agent's too (staged content, skip-worktree and assume-unchanged
        // flags), and the call that would have reset it was killed: back to HEAD's tree, the
        // files themselves untouched. A lock a killed git left is stale.
        let _ = std::fs::remove_file(run.git_dir.join("index.lock"));
        crate::git::git(run.root(), &["read-tree", "HEAD"])?;
    }
    if let Some(id) = retry {
        run.check_retry(id)?;
    }
    if let Some(id) = says.accept {
        run.check_accept(id)?;
    }
    run.event("resumed", json!({}));
    run.say(&format!("Resuming run `{slug}`: {}", run.meta.goal));
    if let Some(id) = retry {
        run.retry_by_person(id)?;
    }
    if let Some(id) = says.accept {
        run.accept_by_person(id)?;
    }
    // A run killed while an agent ran: whatever changed in Forge's protected files since that
    // agent started may be the agent's doing, or the person's since. Forge cannot tell; it says.
    if let Ok(Some(b)) =
        crate::state::read_untrusted(&run.dir.join("protected.json"), state::MAX_RUN_FILE)
        && let Ok(m) = serde_json::from_slice::<serde_json::Value>(&b)
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
    run.adopt_persons_changes()?;
    let end = run.drive();
    run.wind_up(end)
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

/// The sandbox this run uses: `require` on a kernel that cannot enforce it is a setup error;
/// `auto` uses Landlock where the kernel has it.
fn wall(project: &Project, config: Settings<'_>) -> Result<Wall> {
    use crate::sandbox::{self, Mode};
    let mode = config.sandbox.mode;
    if mode == Mode::Off {
        return Ok(Wall::Off);
    }
    let level = sandbox::level();
    level.check(mode).map_err(|e| Error::Config {
        path: project.config_path(),
        message: format!("`sandbox.mode: require`: {e}"),
    })?;
    Ok(if level.landlock_abi > 0 {
        Wall::Kernel {
            contain: level.pid_ns,
            layers: level.pid_ns && level.mount_ns && level.full(),
        }
    } else {
        Wall::Off
    })
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
        config: Settings<'a>,
        dir: PathBuf,
        git_dir: PathBuf,
        meta: RunMeta,
        state: RunState,
        out: Printer<'a>,
        lock: RunLocks,
        ident: Ident,
    ) -> Result<Run<'a>> {
        let wall = wall(project, config)?;
        Ok(Run {
            project,
            config,
            wall,
            halt: None,
            setup: None,
            after_kill: false,
            base_cases: None,
            rec: Recorder::new(project, &format!("run-{}", meta.slug), "forge:run"),
            git_dir,
            active_written: false,
            dir,
            meta,
            state,
            out,
            seen: observe::Observer::new(&project.root)?,
            checkout: None,
            envs: match &config.run.check_envs {
                Some(list) => list.clone(),
                None => envs::found(&project.root),
            },
            overlay_works: None,
            ident,
            _lock: lock,
        })
    }

    fn root(&self) -> &Path {
        &self.project.root
    }

    fn drive(&mut self) -> Result<Outcome> {
        let level = crate::sandbox::level();
        if self.config.sandbox.mode != crate::sandbox::Mode::Off && !level.full() {
            // Said once per run: what the kernel cannot give here.
            self.say(&format!(
                "  ! sandbox: {}",
                crate::sandbox::in_force(self.config.sandbox.mode, &level)
            ));
        }
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
            if self.meta.planner_attempts == 0 {
                // clean-start and run-artifact are checked before any agent runs. The person's
                // view of their tree (their global excludes apply): nothing an agent did yet.
                let dirty: Vec<String> = git::status(self.root())?
                    .into_iter()
                    .map(|e| e.path)
                    .collect();
                let r = gates::clean_start(&dirty);
                self.gate(None, &r)?;
                if !r.passed() {
                    return self.stop(format!("clean-start: {}", r.reason()));
                }
                // What differs from HEAD now (files only the person's global excludes hide) is
                // the person's: the run never reverts or commits it.
                let base = self.meta.base_sha.clone();
                let now = self.observe(&base)?;
                let tree = self.seen.tree(&self.project.root, &base)?;
                self.meta.person_paths = tree.diff(&now).into_iter().map(|c| c.path).collect();
                self.remember(&base, &now)?;
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
}

enum RedEnd {
    Verified,
    Covered,
    End(SliceEnd),
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
