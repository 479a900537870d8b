//! The run's checks — the focused command, related checks, the configured verify commands —
//! and the two counters that can stop a run: the change's circuit breaker and the budget.
//!
//! A check runs on exactly the tree that would be committed: a clean checkout outside the
//! repository ([`crate::evidence::checkout`]), not the working tree with its ignored files. It
//! runs with git's global and system config off, Python's user site-packages off, Go's env file
//! off and npm's user config off (an agent could have written any of them), a private TMPDIR, and
//! contained: whatever it starts is killed when it ends. Forge's and git's control files are
//! compared before and after it; a check that changed one fails. Its report is parsed from what
//! Forge read from the pipe.

use std::path::PathBuf;

use super::Run;
use super::gates;
use crate::breaker;
use crate::error::Result;
use crate::evidence::Snapshot;
use crate::evidence::checkout::Checkout;
use crate::evidence::odb;
use crate::evidence::refs::Refs;
use crate::report::Format;
use crate::verify::{self, CommandConfig, CommandResult, Place, Verdict};

/// `forge sandbox … --` for `req`: this very binary, re-executed.
pub(super) fn launcher(req: &crate::sandbox::Request) -> Vec<std::ffi::OsString> {
    let forge = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("forge"));
    crate::sandbox::launch::argv(&forge, req, &[])
}

/// The cargo home a check uses (`CARGO_HOME`, else `~/.cargo`), whose config Forge protects.
pub(super) fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// Where a check runs, and whether on an overlay over its checkout.
struct CheckPlace {
    place: Place,
    layered: bool,
}

impl Run<'_> {
    /// The folder the checks run in: outside the repository (a build tool looking for its
    /// workspace upwards must not find the real one), one per repository, kept from check to
    /// check and removed when the run ends (one run drives a checkout at a time; the folder is
    /// verified by content when a run first uses it, after each check and after each agent
    /// call outside the sandbox, so what a killed run, a check or an agent left there is no
    /// risk, only work saved).
    fn checkout_dir(&self) -> PathBuf {
        use sha2::Digest;
        let h = sha2::Sha256::digest(self.root().as_os_str().as_encoded_bytes());
        let tag: String = h[..6].iter().map(|b| format!("{b:02x}")).collect();
        std::env::temp_dir().join(format!("forge-check-{tag}"))
    }

    /// Runs one focused command or related check of `slice` on `tree`.
    pub(super) fn check(
        &mut self,
        slice: &str,
        label: &str,
        run: &str,
        report: Format,
        tree: &Snapshot,
    ) -> Result<CommandResult> {
        let cmd = CommandConfig {
            name: format!("{slice}-{label}"),
            run: run.to_string(),
            timeout: self.config.run.check_timeout,
            report,
            report_path: None,
        };
        let origin = format!(
            "slice `{slice}`'s `{run}`, which the planner chose (.tmp/.forge/runs/{}/state.json); a new run with a goal that names the command plans it anew",
            self.meta.slug
        );
        self.run_check(&cmd, &origin, tree)
    }

    /// Every configured verify command on `tree` (milestones and final completion).
    pub(super) fn full_checks(
        &mut self,
        slice: &str,
        tree: &Snapshot,
    ) -> Result<Vec<CommandResult>> {
        let mut out = Vec::new();
        for (k, c) in self.config.verify.commands.clone().iter().enumerate() {
            let mut c = c.clone();
            let name = c.name.clone();
            c.name = format!("{slice}-full-{name}");
            let origin = format!("`verify.commands[{k}].run` in .forge/config.yaml");
            let mut r = self.run_check(&c, &origin, tree)?;
            r.name = name;
            out.push(r);
        }
        Ok(out)
    }

    /// What every verify command reports on the run's base (its code and its tests), run once
    /// per process: the measure of the same commands with the tests as they were before the
    /// run.
    pub(super) fn base_cases(&mut self) -> Result<Vec<gates::BaseCases>> {
        if let Some(b) = &self.base_cases {
            return Ok(b.clone());
        }
        let base = self.meta.base_sha.clone();
        let tree = self.seen.tree(&self.project.root, &base)?;
        let cases: Vec<gates::BaseCases> = self
            .full_checks("run-base", &tree)?
            .iter()
            .map(|r| {
                // pytest's "no tests ran" is a clean run of zero cases (the message Forge
                // adds for a report without cases is no error of the base's).
                let empty = ran_no_tests(r);
                let error = r.report_error.as_deref().filter(|_| !empty);
                gates::BaseCases::of(&r.report, r.ok || empty, error)
            })
            .collect();
        self.base_cases = Some(cases.clone());
        Ok(cases)
    }

    fn run_check(
        &mut self,
        cmd: &CommandConfig,
        origin: &str,
        tree: &Snapshot,
    ) -> Result<CommandResult> {
        let CheckPlace { place, layered } = self.check_place(tree)?;
        let t = crate::trace::span("check-guard");
        let protected =
            super::protect::Protected::snapshot(self.project, &self.git_dir, &self.meta.slug)?;
        let refs = Refs::list(self.root(), &self.git_dir)?;
        let objects = odb::Stamp::take(&self.git_dir);
        let programs = super::protect::PathWatch::take(self.path_scope());
        let ledgers = super::protect::Ledgers::capture(self.project, &self.meta.slug);
        drop(t);
        let logs = self.dir.join("logs");
        let t = crate::trace::span("check-command");
        let mut res = verify::run_command_at(self.project, &place, &logs, None, origin, cmd)?;
        drop(t);
        let t = crate::trace::span("checkout-verify");
        let odb = self.seen.odb(&self.project.root);
        let rewritten = match self.checkout.as_mut() {
            Some(co) if layered => co.settle_layer(tree)?,
            Some(co) => co.settle(&odb, tree)?,
            None => Vec::new(),
        };
        drop(t);
        let branch = self.meta.branch.clone();
        let mut tampered = refs.put_back(
            self.root(),
            &Refs::list(self.root(), &self.git_dir)?,
            branch.as_deref(),
        )?;
        tampered.extend(protected.put_back(self.project)?);
        tampered.extend(ledgers.put_back(self.project)?);
        let (removed, changed) = programs.put_back();
        tampered.extend(removed);
        if !changed.is_empty() {
            let why = format!(
                "programs on PATH changed while a check ran: {} — a person checks them",
                changed.join(", ")
            );
            tampered.push(why.clone());
            self.halt = Some(why);
        }
        let bad = odb::Stamp::take(&self.git_dir)
            .changes_since(&objects, &self.git_dir)
            .verify(&self.seen.odb(&self.project.root), &self.git_dir);
        if !bad.is_empty() {
            self.seen.forget_stored();
        }
        tampered.extend(bad);
        if !rewritten.is_empty() {
            tampered.push(format!(
                "the candidate's own files in the check's checkout ({})",
                rewritten.join(", ")
            ));
        }
        let untouched = tampered.is_empty();
        if !tampered.is_empty() {
            res.ok = false;
            res.report_error = Some(format!(
                "the check changed what no check may change (put back): {}",
                tampered.join(", ")
            ));
        }
        self.meta.check_ms += res.duration_ms;
        if untouched && !res.timed_out && matches!(res.exit_code, Some(126 | 127)) {
            return Err(self.cannot_start(cmd, origin, &res));
        }
        Ok(res)
    }

    /// A command that exits 126 or 127 did not start (a program or interpreter not found, not
    /// executable): whatever the agent did, Forge's checkout lacks what the command needs, and
    /// counting it against an agent or the breaker would stop an honest run. The error names
    /// the command, where it ran, what that folder had, and the fix.
    fn cannot_start(
        &mut self,
        cmd: &CommandConfig,
        origin: &str,
        res: &CommandResult,
    ) -> crate::Error {
        let envs = if self.envs.is_empty() {
            "none found".to_string()
        } else {
            self.envs.join(", ")
        };
        let why = format!(
            "`{}` could not start in the checks' checkout ({}). Checks run on a clean checkout of the candidate (at {}, shown at the project's path where the kernel allows), which holds the committed files and, read-only, the project's environments ({envs}). Its last output:\n{}\nlog: {}\nIf the command needs another folder git ignores, list it in `run.check_envs` in .forge/config.yaml; if the command itself is wrong, fix {origin}. Then `forge run --resume {}`: this attempt is not counted.",
            cmd.run,
            verify::exit_text(res),
            self.checkout_dir().display(),
            crate::text::inert(&tail_lines(&res.tail, 8), 2000),
            res.log,
            self.meta.slug
        );
        self.setup = Some(why.clone());
        crate::Error::usage(why)
    }

    /// The checkout holding exactly `tree`, and the environment a check gets.
    fn check_place(&mut self, tree: &Snapshot) -> Result<CheckPlace> {
        // Tools look upwards from their folder for configuration (pytest's rootdir, cargo's
        // `.cargo/config.toml`, node's `node_modules`): the checkout's parents are in the temp
        // folder, writable by anyone, so nothing there may steer a check.
        let dir = self.checkout_dir();
        let steering = steering_files(&dir);
        if !steering.is_empty() {
            return Err(crate::Error::usage(format!(
                "{} would steer the checks, which run in {}: tools read such files from every folder above them. Remove them (Forge removes nothing outside its own folders), then resume",
                steering
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                dir.display()
            )));
        }
        let layers = matches!(self.wall, super::Wall::Kernel { layers: true, .. })
            && crate::sandbox::overlay_path_ok(&dir)
            && self.overlay_works(&dir);
        if self.checkout.is_none() {
            let dir = self.checkout_dir();
            let hasher = crate::evidence::Hasher::new(self.seen.format());
            let mut keep = self.config.run.check_caches.clone();
            for e in &self.envs {
                if !keep.contains(e) {
                    keep.push(e.clone());
                }
            }
            self.checkout = Some(Checkout::open(dir, keep, hasher)?);
        }
        let odb = self.seen.odb(&self.project.root);
        let co = self.checkout.as_mut().expect("opened above");
        let t = crate::trace::span("checkout-sync");
        co.sync(&odb, tree)?;
        drop(t);
        let cwd = co.dir.clone();
        // The environments the candidate does not hold a path of (a tracked `node_modules/x`
        // makes that folder the candidate's own).
        let kept = co.kept_for(tree);
        let envs: Vec<String> = self
            .envs
            .iter()
            .filter(|e| kept.contains(e))
            .cloned()
            .collect();
        // A private temp folder, emptied for every check: nothing a test reads from it was put
        // there by an agent or an earlier check.
        let tmp = PathBuf::from(format!("{}-tmp", cwd.display()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)
            .map_err(|e| crate::Error::io(format!("cannot create {}", tmp.display()), e))?;
        let env = [
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("PYTHONNOUSERSITE", "1"),
            ("GOENV", "off"),
            ("npm_config_userconfig", "/dev/null"),
        ];
        let mut env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.push(("TMPDIR".into(), tmp.display().to_string()));
        // No git above the checkout is the checks' repository.
        if let Some(parent) = cwd.parent() {
            env.push((
                "GIT_CEILING_DIRECTORIES".into(),
                parent.display().to_string(),
            ));
        }
        let env_remove = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .filter(|k| k.starts_with("GIT_"))
            .collect();
        // In the kernel sandbox, a check writes only its checkout, its TMPDIR and the
        // configured caches — and, where the kernel allows an overlay, not even its checkout:
        // its writes land in a layer of their own, and the checkout is left as it was.
        let mut layered = false;
        let wrap = match self.wall {
            super::Wall::Kernel { contain, .. } => {
                let mut req = crate::sandbox::Request::new(
                    crate::sandbox::Profile::Check,
                    &self.project.root,
                );
                req.write = vec![cwd.display().to_string()];
                req.tmpdir = Some(tmp.clone());
                req.contain = contain;
                if layers {
                    req.layer = Some(co.prepare_layer(tree)?);
                    req.layer_keep = kept.into_iter().filter(|k| !envs.contains(k)).collect();
                    // The environments read-only, and the whole checkout at the project's own
                    // path, so what they name by absolute path is the candidate's.
                    req.layer_envs = envs.clone();
                    req.layer_in_place = true;
                    // The caller trusts the checkout afterwards: no mode may run it plainly.
                    req.mode = Some(crate::sandbox::Mode::Require);
                    layered = true;
                }
                launcher(&req)
            }
            super::Wall::Off => Vec::new(),
        };
        if layered {
            // In the check's namespace the checkout is at the project's path.
            let root = self.project.root.display().to_string();
            env.push(("PWD".into(), root));
            if let Some(parent) = self.project.root.parent() {
                let ceiling = env.iter_mut().find(|(k, _)| k == "GIT_CEILING_DIRECTORIES");
                if let Some((_, v)) = ceiling {
                    *v = format!("{v}:{}", parent.display());
                }
            }
        } else {
            // Without a mount namespace the environments are links to the project's own
            // (read-only in the kernel sandbox; docs/run.md says what is left open without it).
            co.link_envs(&self.project.root, &envs)?;
        }
        Ok(CheckPlace {
            place: Place {
                cwd: Some(cwd),
                env,
                env_remove,
                strict: true,
                wrap,
                report_root: layered.then(|| co.layer_dir().join("upper")),
            },
            layered,
        })
    }

    /// Whether a check can run on an overlay over the checkout at `dir`: tried once per run
    /// with `forge sandbox --layer` on a scratch folder beside it (the kernel may have the
    /// namespaces and still refuse the overlay: a temp folder on overlayfs or NFS). When it
    /// cannot, the run says so once and settles the checkout by walking it.
    fn overlay_works(&mut self, dir: &std::path::Path) -> bool {
        if let Some(ok) = self.overlay_works {
            return ok;
        }
        let probe = PathBuf::from(format!("{}-probe", dir.display()));
        let _ = std::fs::remove_dir_all(&probe);
        let made = ["co", "layer/upper", "layer/work"]
            .iter()
            .all(|d| std::fs::create_dir_all(probe.join(d)).is_ok());
        let mut req =
            crate::sandbox::Request::new(crate::sandbox::Profile::Check, &self.project.root);
        req.write = vec![probe.join("co").display().to_string()];
        req.tmpdir = Some(probe.join("tmp"));
        req.layer = Some(probe.join("layer"));
        req.mode = Some(crate::sandbox::Mode::Require);
        req.contain = true;
        let argv = launcher(&req);
        let ok = made
            && std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .arg("true")
                .current_dir(probe.join("co"))
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        let _ = std::fs::remove_dir_all(&probe);
        if !ok {
            self.say("  · checks settle by walking their checkout: an overlay cannot be mounted over it here");
        }
        self.overlay_works = Some(ok);
        ok
    }

    /// The run is over, however it ended: the checkout's layer and the checks' temp folder go,
    /// and the checkout too unless it is large enough to be worth keeping for the project's
    /// next run or resume ([`Checkout::park`]: one per project, verified whole before its first
    /// check there).
    pub(super) fn drop_checkout(&mut self) {
        if let Some(co) = self.checkout.take() {
            let _ = std::fs::remove_dir_all(format!("{}-tmp", co.dir.display()));
            let _ = std::fs::remove_dir_all(co.layer_dir());
            co.park(crate::evidence::checkout::PARK_FILES);
        }
    }

    /// Over a limit: the reason. A ledger that cannot be read stops the run too (an agent may
    /// have damaged it to erase its spend), with what a person does about it — never an error
    /// that every later resume would hit.
    pub(super) fn over_budget(&self) -> Result<Option<String>> {
        if let Some(why) = &self.halt {
            return Ok(Some(format!("{why}; check the spend, then resume")));
        }
        let session = format!("run-{}", self.meta.slug);
        let st = match crate::budget::standings(
            self.project,
            self.config.budget,
            Some(&self.meta.slug),
            Some(&session),
        ) {
            Ok(st) => st,
            Err(e) => {
                return Ok(Some(format!(
                    "a spend ledger of this run cannot be read ({}); Forge counts it as over budget. Fix the file, or remove it if you accept that the spend it recorded is forgotten, then resume",
                    crate::text::inert(&e.to_string(), 400)
                )));
            }
        };
        Ok(st.iter().find(|s| s.over).map(|s| {
            format!(
                "budget exhausted for {} ({}); raise the limit in .forge/config.yaml `budget` to continue",
                s.scope,
                s.describe()
            )
        }))
    }

    pub(super) fn breaker_open(&self) -> Result<Option<String>> {
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
    pub(super) fn count_breaker(&mut self, v: Verdict) -> Result<Option<String>> {
        let Some(o) = crate::counted::verdict(
            self.project,
            Some(&self.meta.slug),
            crate::counted::Verified::RunCheck(v),
            self.config.breaker.max_failures,
            Some(&self.rec),
        )?
        else {
            return Ok(None);
        };
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

/// Files in the folders above `dir` that test tools would read as their configuration.
fn steering_files(dir: &std::path::Path) -> Vec<PathBuf> {
    const NAMES: [&str; 22] = [
        "pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
        "conftest.py",
        ".pytest.ini",
        ".cargo",
        "Cargo.toml",
        "package.json",
        "node_modules",
        ".npmrc",
        ".yarnrc.yml",
        "go.work",
        "go.mod",
        ".git",
        "deno.json",
        "bunfig.toml",
        "jest.config.js",
        "vitest.config.ts",
        "vitest.config.js",
        ".mocharc.json",
        "babel.config.js",
    ];
    let mut out = Vec::new();
    for a in dir.ancestors().skip(1) {
        for n in NAMES {
            let p = a.join(n);
            if std::fs::symlink_metadata(&p).is_ok() {
                out.push(p);
            }
        }
    }
    out
}

/// pytest's own word that it found no test (exit 5 and its `no tests ran` banner, which makes
/// the report pytest's; no case; nothing else wrong): on a project with no test yet, a clean run of zero cases. Only where a gate compares
/// with what the base had (the pre-red baseline, the suite as it was before the run) is this
/// taken as passing; every other gate still asks for cases.
pub(super) fn ran_no_tests(r: &CommandResult) -> bool {
    r.exit_code == Some(5)
        && !r.timed_out
        && r.report.format == Some(Format::Pytest)
        && !r.report.has_cases()
        && r.report.counts() == crate::report::Counts::default()
        && r.report.infra_error.is_none()
        && r.report.incomplete.is_none()
}

/// How a check failed, in a few words: exit, failing cases, infrastructure error.
pub(super) fn command_failure(r: &CommandResult) -> String {
    if r.timed_out {
        return format!("timed out after {} s", r.timeout_secs);
    }
    let mut parts = Vec::new();
    if r.exit_code != Some(0) {
        parts.push(verify::exit_text(r));
    }
    let failing: Vec<String> = r
        .report
        .failing()
        .map(|c| crate::text::inert(&c.name, 120))
        .collect();
    if !failing.is_empty() {
        parts.push(format!("failing: {}", failing.join(", ")));
    }
    if let Some(e) = &r.report.infra_error {
        parts.push(format!("infra error: {}", crate::text::inert(e, 200)));
    }
    if let Some(e) = &r.report_error {
        parts.push(crate::text::inert(e, 300));
    }
    if parts.is_empty() {
        "failed".into()
    } else {
        parts.join(", ")
    }
}

/// The last `n` lines of `s`.
pub(super) fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The evidence gate on a check's report (see [`gates::case_evidence`]).
pub(super) fn evidence_problems(res: &CommandResult, expect: &gates::Expect) -> Vec<String> {
    gates::case_evidence(&res.report, res.report_format.is_some(), expect)
}
