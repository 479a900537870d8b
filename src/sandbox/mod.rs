//! The kernel sandbox: the parse-based guard explains, the kernel enforces.
//!
//! `forge sandbox --profile P -- CMD` runs CMD under a Landlock ruleset scoped to a profile of
//! `forge run` (red, green, review, check) or a live session, with signal and abstract-socket
//! scoping (a sandboxed process cannot signal Forge), `no_new_privs`, no capabilities, secrets
//! unreadable, and — where a writable folder holds control files (`.forge/`, `.git/config`,
//! `.git/hooks/`, `.claude/`, …) — a private mount namespace in which those are bound read-only.
//! `--contain` runs CMD in a new PID namespace, so everything it starts ends with it.
//!
//! - [`profile`]: the profile table as data, and pure `can_read`/`can_write`.
//! - [`config`]: the `sandbox:` section of `.forge/config.yaml`.
//! - [`resolve`]: from a request and the machine's facts to absolute paths and how each is
//!   enforced (pure).
//! - [`launch`]: the re-exec argv callers spawn and the hook's session command line (pure).
//! - `sweep.rs`: the control folders made to be pinned, removed once no namespace binds them.
//! - `landlock.rs`, `mounts.rs`, `contain.rs`: the Linux-only enforcement; everything else
//!   compiles everywhere, and [`enter`] says what is missing where the kernel has none of it.
//!
//! # The API `forge run` and `src/exec.rs` call
//!
//! ```no_run
//! use std::path::Path;
//! use forge::sandbox::{self, launch, Profile, Request, Client};
//!
//! // Once per run: what the kernel offers, for the run's first line and `sandbox.mode`.
//! let level = sandbox::level();
//! if let Err(e) = level.check(sandbox::Mode::Require) { eprintln!("{e}"); }
//!
//! // Per agent call: a red agent may write only the slice's test areas and its answer.
//! let mut req = Request::new(Profile::Red, "/repo");
//! req.write = vec!["tests/**".into()];
//! req.answer = Some("/repo/.tmp/.forge/runs/r/outputs/red-1/answer.json".into());
//! req.tmpdir = Some("/repo/.tmp/.forge/runs/r/tmp/red-1".into());
//! req.client = Client::from_command("claude -p …");
//! req.contain = true;
//! let forge = std::env::current_exe().unwrap();
//! let argv = launch::argv(&forge, &req, &["/bin/sh".into(), "-c".into(), "claude -p …".into()]);
//! // spawn argv[0] with argv[1..] (exec.rs: the wrapper prefix); its exit code is the agent's.
//! ```

pub mod allow;
pub mod config;
pub mod egress;
pub mod launch;
pub mod profile;
pub mod resolve;

#[cfg(target_os = "linux")]
mod contain;
#[cfg(target_os = "linux")]
mod keeper;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod proxy;
pub mod redact;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod sweep;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use config::{Mode, SandboxConfig};
pub use profile::{Access, Place, Profile};
pub use resolve::{Client, Layout, Plan};

/// The environment variable a sandboxed process sees (`FORGE_SANDBOX=<profile>`): the hook uses
/// it to leave a command already inside a sandbox as it is (Landlock domains only narrow, and a
/// nested mount namespace is refused inside one).
pub const ENV_MARKER: &str = "FORGE_SANDBOX";

/// Exit code of `forge sandbox` when the sandbox cannot be set up (like `env`'s 125).
pub const EXIT_SETUP: i32 = 125;
/// CMD was found but could not be executed.
pub const EXIT_CANNOT_EXEC: i32 = 126;
/// CMD was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// Credentials passed in the environment. A session or check command never sees them; an agent
/// client keeps only its own.
pub const SECRET_ENV: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "TWINE_PASSWORD",
    "PYPI_TOKEN",
    "DOCKER_AUTH_CONFIG",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
];

/// The environment variables a client reads its own credential from.
fn own_env(client: Client) -> &'static [&'static str] {
    match client {
        Client::Claude => &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        Client::Codex => &["OPENAI_API_KEY", "CODEX_API_KEY"],
        Client::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    }
}

/// One sandboxed call, in the caller's words. `caches` and `mode` default to the project's
/// `sandbox:` config when `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub profile: Profile,
    /// The repository root (for `check`, the project whose config applies).
    pub project: PathBuf,
    /// Writable areas: globs relative to the project (`tests/**`: its longest literal folder is
    /// granted — an over-approximation the run's scope gates narrow) or absolute folders (a
    /// check's checkout).
    pub write: Vec<String>,
    /// The answer file; its folder becomes writable, so give each call a folder of its own.
    pub answer: Option<PathBuf>,
    /// The private TMPDIR (created, mode 0700); default
    /// `<tmp>/forge-sandbox-<uid>/<project>-<hash>/<profile>`.
    pub tmpdir: Option<PathBuf>,
    /// The agent client a red, green or review call runs: its state folders become writable
    /// and its one credential file readable.
    pub client: Option<Client>,
    pub caches: Option<Vec<String>>,
    pub mode: Option<Mode>,
    /// Run CMD in a new PID namespace: whatever it starts (double-forked, `setsid`) ends when
    /// it ends.
    pub contain: bool,
    /// Carve control files out of writable folders with Landlock rules alone even where a mount
    /// namespace could be made (for measurement and comparison; see docs/sandbox.md).
    pub carve_by_rules: bool,
    /// `check` only: the checkout (the one absolute `write` folder) becomes the lower layer of
    /// an overlay whose upper layer is `<layer>/upper` (`<layer>/work` is overlayfs's own), so
    /// the check's writes land there and the checkout is left as it was
    /// ([`mounts::overlay`]). Needs a mount namespace.
    pub layer: Option<PathBuf>,
    /// With `layer`: folders of the checkout (relative) that stay writable in place — build
    /// caches kept from check to check.
    pub layer_keep: Vec<String>,
    /// With `layer`: folders of the project (relative) that git ignores and the check needs — a
    /// virtual environment, `node_modules` — shown read-only at the same place in the checkout
    /// ([`mounts::environments`]). The checkout holds an empty folder at each.
    pub layer_envs: Vec<String>,
    /// With `layer`: the checkout, its overlay and environments are mounted over the project's
    /// own folder and CMD runs there, so every absolute path an environment holds (a script's
    /// `#!/…/.venv/bin/python`, an editable install's `.pth`, an `npm link`) leads to the
    /// candidate's files, never the working tree's.
    pub layer_in_place: bool,
    /// Look through folders when the plan is made: the project for files whose names say they
    /// hold credentials, to hide them ([`resolve::project_secrets`]), and the control and secret
    /// folders for files with a second name. Off where only the plan's control files are wanted
    /// (the hook's file-tool check, on every call).
    pub look_through: bool,
    /// Folders of the project (relative) kept read-only even inside a writable area: the
    /// environments `forge run`'s checks run with (`.venv`, `node_modules`), which git ignores,
    /// so no snapshot sees a change an agent makes there (a `.pth` import hook, red team of
    /// issue 31).
    pub keep_read_only: Vec<String>,
}

impl Request {
    pub fn new(profile: Profile, project: impl Into<PathBuf>) -> Request {
        Request {
            profile,
            project: project.into(),
            write: Vec::new(),
            answer: None,
            tmpdir: None,
            client: None,
            caches: None,
            mode: None,
            contain: false,
            carve_by_rules: false,
            layer: None,
            layer_keep: Vec::new(),
            layer_envs: Vec::new(),
            layer_in_place: false,
            look_through: true,
            keep_read_only: Vec::new(),
        }
    }

    /// The checkout an overlay goes on: `layer` asked for, the `check` profile, one absolute
    /// writable folder. The error says what is wrong.
    fn overlay_lower(&self) -> Result<Option<&Path>, SandboxError> {
        if self.layer.is_none() {
            return Ok(None);
        }
        match (self.profile, self.write.as_slice()) {
            (Profile::Check, [w]) if Path::new(w).is_absolute() => Ok(Some(Path::new(w))),
            _ => Err(SandboxError::Plan(
                "--layer needs --profile check and exactly one absolute --write folder (the checkout)".into(),
            )),
        }
    }
}

/// What the kernel offers here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Level {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i32,
    /// Signal and abstract-socket scoping (ABI ≥ 6).
    pub scopes: bool,
    /// A private mount namespace can be made (root, or unprivileged user namespaces).
    pub mount_ns: bool,
    /// A PID namespace can be made (for `--contain`).
    pub pid_ns: bool,
    /// Already inside a Forge sandbox (`FORGE_SANDBOX` set): rules can only narrow.
    pub nested: bool,
}

/// The Landlock ABI a fully enforced profile needs: truncation (3), device ioctls (5), and
/// signal and abstract-socket scopes (6).
pub const REQUIRED_ABI: i32 = 6;

impl Level {
    /// Whether every profile can be fully enforced.
    pub fn full(&self) -> bool {
        self.landlock_abi >= REQUIRED_ABI && (self.mount_ns || self.nested)
    }

    /// What a profile loses here, in words; empty when nothing.
    pub fn missing(&self) -> Vec<String> {
        let mut m = Vec::new();
        match self.landlock_abi {
            0 => m.push(
                "no Landlock (Linux ≥ 5.13 with `lsm=landlock`): commands can write and read anywhere the user can".to_string(),
            ),
            1 | 2 => m.push(format!(
                "Landlock ABI {} cannot stop truncation of read-only files (needs ABI 3, Linux 6.2)",
                self.landlock_abi
            )),
            _ => {}
        }
        if self.landlock_abi > 0 && self.landlock_abi < REQUIRED_ABI {
            m.push(format!(
                "Landlock ABI {} has no signal scoping (needs ABI 6, Linux 6.12): a sandboxed process could signal Forge",
                self.landlock_abi
            ));
        }
        if !self.mount_ns && !self.nested {
            m.push("no mount namespace (not root, and unprivileged user namespaces are off): control files inside writable folders (.forge/, .git/config, .git/hooks/) stay writable, and the Unix sockets of daemons (tmux, Docker, an SSH agent) stay reachable".into());
        }
        m
    }

    /// One line for `forge status` and the run's first line.
    pub fn describe(&self) -> String {
        let mut s = if self.landlock_abi == 0 {
            "none (no Landlock)".to_string()
        } else {
            format!("Landlock ABI {}", self.landlock_abi)
        };
        if self.scopes {
            s.push_str(", signal + socket scopes");
        }
        s.push_str(if self.mount_ns {
            ", mount namespace"
        } else {
            ", no mount namespace"
        });
        s.push_str(if self.pid_ns {
            ", PID namespace (containment)"
        } else {
            ", no PID namespace (no containment)"
        });
        if self.nested {
            s.push_str(", nested in a Forge sandbox");
        }
        s
    }

    /// `Ok` when `mode` can be honoured here; the error says what is missing.
    pub fn check(&self, mode: Mode) -> Result<(), SandboxError> {
        if mode == Mode::Require && !self.full() {
            return Err(SandboxError::Unavailable(self.missing().join("; ")));
        }
        Ok(())
    }
}

/// What is in force for `mode` on a kernel at `level`, in one line (`forge status`).
pub fn in_force(mode: Mode, level: &Level) -> String {
    match mode {
        Mode::Off => "off (`sandbox.mode: off`): commands run unsandboxed; the guard's parse is the only wall".into(),
        _ if level.landlock_abi == 0 && mode == Mode::Require => format!(
            "REQUIRED BUT UNAVAILABLE — {}: sandboxed calls are refused",
            level.missing().join("; ")
        ),
        _ if level.landlock_abi == 0 => format!(
            "none — {}; the guard's parse is the only wall",
            level.missing().join("; ")
        ),
        _ if level.full() => format!("full ({}; mode {})", level.describe(), mode.as_str()),
        _ if mode == Mode::Require => format!(
            "REQUIRED BUT PARTIAL — {}: sandboxed calls are refused",
            level.missing().join("; ")
        ),
        _ => format!(
            "partial ({}; mode auto) — {}",
            level.describe(),
            level.missing().join("; ")
        ),
    }
}

/// What the kernel offers, without starting a process: the Landlock ABI from the kernel, and
/// whether namespaces can be made (root, or unprivileged user namespaces switched on).
pub fn level() -> Level {
    #[cfg(target_os = "linux")]
    {
        let abi = landlock::kernel_abi();
        let nested = std::env::var_os(ENV_MARKER).is_some();
        let ns = mounts::namespaces_possible();
        Level {
            landlock_abi: abi,
            scopes: abi >= 6,
            mount_ns: ns && !nested,
            pid_ns: ns,
            nested,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Level {
            landlock_abi: 0,
            scopes: false,
            mount_ns: false,
            pid_ns: false,
            nested: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `sandbox.mode: require` on a kernel that cannot enforce the profile.
    #[error(
        "the sandbox cannot be fully enforced here: {0}. Use `sandbox.mode: auto` to run with what the kernel offers, or run on Linux ≥ 6.12 with Landlock"
    )]
    Unavailable(String),
    /// The request cannot be resolved (an area outside the project, a protected symlink).
    #[error("{0}")]
    Plan(String),
    /// A step of setting it up failed.
    #[error("cannot set up the sandbox ({step}): {source}")]
    Setup {
        step: String,
        #[source]
        source: std::io::Error,
    },
    /// CMD could not be started.
    #[error("cannot run `{program}`: {source}")]
    Exec {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    pub fn exit_code(&self) -> i32 {
        match self {
            SandboxError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                EXIT_NOT_FOUND
            }
            SandboxError::Exec { .. } => EXIT_CANNOT_EXEC,
            _ => EXIT_SETUP,
        }
    }
}

/// How a contained command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signaled(i32),
}

/// Resolves `req` against the machine: the plan [`enter`] enforces (for `--explain` and the
/// guard's explanations).
pub fn resolve(req: &Request, config: &SandboxConfig) -> Result<(Layout, Plan), SandboxError> {
    resolve_witnessed(req, config).map(|(layout, plan, _)| (layout, plan))
}

/// [`resolve`], and what the plan was read from ([`resolve::Basis`]).
pub(crate) fn resolve_witnessed(
    req: &Request,
    config: &SandboxConfig,
) -> Result<(Layout, Plan, resolve::Basis), SandboxError> {
    let home = crate::repo::home();
    let mut layout = Layout::probe(&req.project, &home).map_err(|e| SandboxError::Setup {
        step: format!("read the project folder {}", req.project.display()),
        source: e,
    })?;
    let mut unsearched = None;
    if req.look_through {
        match resolve::project_secrets(&layout.project) {
            Ok(found) => {
                for f in found {
                    if !layout.env_files.contains(&f) {
                        layout.env_files.push(f);
                    }
                }
            }
            Err(looked) => unsearched = Some(looked),
        }
    }
    let client_state = match req.client {
        Some(Client::Claude) => config.clients.claude.clone(),
        Some(Client::Codex) => config.clients.codex.clone(),
        Some(Client::Gemini) => config.clients.gemini.clone(),
        None => Vec::new(),
    };
    let wants = resolve::Wants {
        home_read: allow::home_reads(&home, &config.read, &|v| std::env::var_os(v)),
        keep_read_only: req
            .keep_read_only
            .iter()
            .map(|k| layout.project.join(k))
            .collect(),
        profile: req.profile,
        session_writable: config.session_writable.clone(),
        write: req.write.clone(),
        answer: req.answer.clone(),
        tmpdir: req.tmpdir.clone(),
        caches: req.caches.clone().unwrap_or_else(|| config.caches.clone()),
        client: req.client,
        client_state,
        secrets: config
            .all_secrets()
            .map(String::from)
            .chain(daemon_sockets(
                &layout.project,
                req.tmpdir.as_deref(),
                &config
                    .sockets
                    .iter()
                    .map(|s| resolve::expand_home(s, &home))
                    .collect::<Vec<_>>(),
                // The hook's file-tool check, on every call, wants only the control files.
                if req.look_through {
                    bound_sockets()
                } else {
                    Vec::new()
                },
            ))
            .collect(),
        // As the kernel sees them: a PATH folder reached through a link (`~/code` → the
        // project) is the project's.
        // As written (a link on the way is named: it can be swapped) and as the kernel
        // resolves them (`~/code` → the project). The system's own folders are left as they
        // are: no sandbox writes there, so no link in them can lead into a writable place
        // but one the machine's owner made.
        path: std::env::var_os("PATH")
            .map(|p| {
                let mut v: Vec<PathBuf> = Vec::new();
                let home = std::env::var_os("HOME").map(PathBuf::from);
                for d in std::env::split_paths(&p) {
                    // bash expands a leading `~` in a PATH entry when it searches it.
                    let d = match (d.strip_prefix("~"), &home) {
                        (Ok(rest), Some(h)) => h.join(rest),
                        _ => d,
                    };
                    // In the form `components` gives back, so that `same` compares bytes.
                    let d: PathBuf = d.components().collect();
                    if v.iter().any(|x| resolve::same(x, &d)) {
                        continue;
                    }
                    let system = ["/usr", "/bin", "/sbin", "/snap", "/nix/store"]
                        .iter()
                        .any(|s| d.starts_with(s));
                    let c = if system {
                        d.clone()
                    } else {
                        d.canonicalize().unwrap_or_else(|_| d.clone())
                    };
                    for x in [d, c] {
                        if !v.iter().any(|y| resolve::same(y, &x)) {
                            v.push(x);
                        }
                    }
                }
                v
            })
            .unwrap_or_default(),
    };
    // One lstat per path, however many places ask (a stat costs ~1.5 µs here, and the plan asks
    // about a hundred paths). Keyed by the path's bytes: hashing a `Path` splits it into
    // components, which cost more than the stat saved; the same path spelled twice is only
    // asked twice.
    let seen: std::cell::RefCell<
        std::collections::HashMap<std::ffi::OsString, Option<std::fs::FileType>>,
    > = Default::default();
    // Most of those paths are under home, and most do not exist (a machine has a few of the
    // seventy kinds of credentials): one listing of home answers for every path whose first
    // folder is not there. (Listing the folders below it too, `~/.cache` among them, cost
    // more than it saved.)
    let home_names: std::cell::OnceCell<Option<std::collections::HashSet<std::ffi::OsString>>> =
        Default::default();
    let listed_absent = |p: &Path| -> bool {
        let Some(std::path::Component::Normal(name)) = p
            .strip_prefix(&home)
            .ok()
            .and_then(|r| r.components().next())
        else {
            return false;
        };
        home_names
            .get_or_init(|| {
                std::fs::read_dir(&home)
                    .ok()
                    .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
            })
            .as_ref()
            .is_some_and(|n| !n.contains(name))
    };
    let kind = |p: &Path| -> Option<std::fs::FileType> {
        if let Some(k) = seen.borrow().get(p.as_os_str()) {
            return *k;
        }
        if listed_absent(p) {
            return None;
        }
        let k = std::fs::symlink_metadata(p).ok().map(|m| m.file_type());
        seen.borrow_mut().insert(p.as_os_str().to_owned(), k);
        k
    };
    let plan = resolve::plan(
        &wants,
        &layout,
        &|p| kind(p).is_some(),
        &|p| match kind(p) {
            Some(k) if k.is_symlink() => p.is_dir(),
            Some(k) => k.is_dir(),
            None => false,
        },
        &|p| kind(p).is_some_and(|k| k.is_symlink()),
    )
    .map_err(SandboxError::Plan)?;
    let mut plan = plan;
    if let Some(looked) = unsearched {
        plan.refusals.push(format!(
            "the project {} has more than {looked} files and folders outside `.git/`, `node_modules/`, `target/` and virtual environments: Forge stopped looking for the files named as credentials it hides (`.env`, `.pgpass`, SSH keys), so it cannot say none is left readable; remove what made so many (`du --inodes -d 2 {} | sort -n | tail` shows where they are)",
            layout.project.display(),
            layout.project.display()
        ));
    }
    let mut read = layout.read.clone();
    views(req, &layout, &mut plan, &mut read);
    // A control file or a secret with a second name (a hard link): a bind keeps a path
    // read-only or hidden, not a file, so the other name stays writable or readable inside.
    // Red team, round 15: a name linked to `.git/config.lock` before git renamed it over
    // `.git/config`, an `.env` linked before it held a secret, dotfiles hard-linked into the
    // project. Each one checked is a witness: a link made later changes its change time.
    for (place, p) in &plan.places {
        if !matches!(place, Place::Control | Place::Secrets)
            || !kind(p).is_some_and(|k| k.is_file())
        {
            continue;
        }
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::symlink_metadata(p)
            && m.nlink() > 1
        {
            let what = if *place == Place::Control {
                "writable"
            } else {
                "readable"
            };
            plan.refusals.push(format!(
                "{} has {} names (hard links): the sandbox keeps a path read-only or hidden, not a file, so its other names stay {what} inside; remove the others (`find / -xdev -samefile {}`) or replace it with a copy",
                p.display(),
                m.nlink(),
                p.display()
            ));
        }
        read.push(p.clone());
    }
    // The same for the files inside a control or secret folder of the project or of home (the
    // system's, `/usr/bin` among the PATH folders, hold the system's own links, and a person's
    // writable places are not in them): a hook that an agent wrote in
    // `.githooks/` and linked to `notes.txt` before the person set `core.hooksPath` is the
    // hook, written through its other name. No witness is needed: inside the sandbox a link to a
    // file behind a bind cannot be made (another mount), so every such link is older than the
    // plan.
    let linked = linked_files(
        plan.places
            .iter()
            .filter(|(place, p)| {
                req.look_through
                    && matches!(place, Place::Control | Place::Secrets)
                    && (p.starts_with(&layout.project) || p.starts_with(&layout.home))
                    && kind(p).is_some_and(|k| k.is_dir())
            })
            .map(|(_, p)| p.as_path()),
        &[
            layout.project.join(crate::repo::TMP_DIR),
            layout
                .git_common
                .as_ref()
                .map(|c| c.join("modules"))
                .unwrap_or_default(),
        ],
    );
    for (p, n) in linked.iter().take(5) {
        plan.refusals.push(format!(
            "{} has {n} names (hard links), inside a folder the sandbox keeps read-only or hidden: its other names stay writable or readable inside; remove them (`find / -xdev -samefile {}`) or replace it with a copy",
            p.display(),
            p.display()
        ));
    }
    if linked.len() > 5 {
        plan.refusals
            .push(format!("and {} more files like them", linked.len() - 5));
    }
    // The links the plan looked at lead somewhere: what they point to is read too.
    read.extend(
        seen.borrow()
            .iter()
            .filter(|(_, k)| k.is_some_and(|k| k.is_symlink()))
            .map(|(p, _)| PathBuf::from(p)),
    );
    let basis = resolve::Basis::of(
        plan.places
            .iter()
            .map(|(_, p)| p.as_path())
            .chain(std::iter::once(req.project.as_path())),
        layout.listed.clone(),
        read,
    );
    Ok((layout, plan, basis))
}

/// The redacted views the plan binds (redact.rs): each [`redact::candidates`] file the profile
/// lets its commands read but not write (a view cannot be written through), but for a client's
/// own settings where that client runs inside. Each one is read, so each is a witness: a kept
/// namespace whose original changed is made again, with a new view. A missing one is a witness
/// too: one made later is read by the next plan.
fn views(req: &Request, layout: &Layout, plan: &mut Plan, read: &mut Vec<PathBuf>) {
    let own = req.client.filter(|_| req.profile.runs_client());
    for (path, format, client) in
        redact::candidates(&layout.home, &layout.git_includes, &layout.project)
    {
        if client.is_some() && client == own {
            continue;
        }
        if plan.access(req.profile, &path) != Access::Read {
            continue;
        }
        read.push(path.clone());
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let view = redact::redact(format, &text);
        if view != text {
            plan.views.push(redact::View { path, text: view });
        }
    }
}

/// How many entries [`linked_files`] looks at, at most: control and secret folders are small,
/// but `~/.claude/plugins` or `~/.config/gcloud` can hold many.
const LINKED_LIMIT: usize = 20_000;

/// The regular files with more than one name below `folders`, with their number of names.
/// Links are not followed; `skip` folders, and `.git`, `node_modules` and `objects` folders
/// inside (a local clone shares its objects by hard links), are not entered.
fn linked_files<'a>(
    folders: impl Iterator<Item = &'a Path>,
    skip: &[PathBuf],
) -> Vec<(PathBuf, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = folders.map(Path::to_path_buf).collect();
    let mut looked = 0;
    while let Some(dir) = stack.pop() {
        if skip.contains(&dir) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            looked += 1;
            if looked > LINKED_LIMIT {
                return out;
            }
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                if !matches!(
                    e.file_name().to_str(),
                    Some(".git" | "node_modules" | "objects")
                ) {
                    stack.push(e.path());
                }
            } else if t.is_file()
                && let Ok(m) = e.metadata()
                && m.nlink() > 1
            {
                out.push((e.path(), m.nlink()));
            }
        }
    }
    out.sort();
    out
}

/// The Unix sockets of daemons that act for whoever connects — the Docker and Podman daemons
/// (`docker run -v /:/h`), containerd, D-Bus (systemd starts units), the SSH and GPG agents
/// (they sign with the person's keys), and a terminal multiplexer's or an editor's server
/// (`tmux if-shell 'rm -rf ~/notes'`, red team of issue 34). Connecting is not a file access
/// Landlock controls below ABI 9, and a read-only mount does not stop it; covered by a mount
/// (`/dev/null` over a socket, an empty folder over a folder of them), the path answers nothing.
///
/// Not a list of names: every socket bound at a path that the kernel lists
/// ([`bound_sockets`]), besides the well-known paths of daemons that may start later — except
/// those in the project or the private TMPDIR (the agent's own dev server) and those the person
/// grants (`sandbox.sockets`).
fn daemon_sockets(
    project: &Path,
    tmpdir: Option<&Path>,
    granted: &[PathBuf],
    bound: Vec<PathBuf>,
) -> Vec<String> {
    let mut v: Vec<String> = [
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
        "/run/dbus/system_bus_socket",
        "/var/run/dbus/system_bus_socket",
        "/run/systemd/private",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from)
        && sock.is_absolute()
    {
        // `ssh-agent`'s own folder (`/tmp/ssh-XXXX/agent.N`) may hold other agents' sockets.
        match sock.parent() {
            Some(d)
                if d.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("ssh-")) =>
            {
                v.push(d.display().to_string())
            }
            _ => v.push(sock.display().to_string()),
        }
    }
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && run.is_absolute()
    {
        for s in [
            "bus",
            "systemd",
            "docker.sock",
            "podman",
            "gnupg",
            "keyring",
            "ssh-agent.socket",
        ] {
            v.push(run.join(s).display().to_string());
        }
    }
    v.extend(bound.into_iter().map(|p| p.display().to_string()));
    let mine = |p: &Path| {
        p.starts_with(project)
            || tmpdir.is_some_and(|t| p.starts_with(t))
            || granted.iter().any(|g| p.starts_with(g) || g.starts_with(p))
    };
    v.retain(|s| !mine(Path::new(s)));
    v.sort();
    v.dedup();
    v
}

/// Every Unix socket bound at an absolute path in this network namespace, as the kernel lists
/// them in `/proc/net/unix` (`Num RefCount Protocol Flags Type St Inode Path`): a daemon
/// listening anywhere — `/tmp/tmux-1000/default`, an editor's server, a database — whatever
/// its name. One read, no walk of the file system.
pub(crate) fn bound_sockets() -> Vec<PathBuf> {
    let text = std::fs::read("/proc/net/unix").unwrap_or_default();
    parse_unix_sockets(&text)
}

fn parse_unix_sockets(text: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut out: Vec<PathBuf> = text
        .split(|b| *b == b'\n')
        .skip(1)
        .filter_map(|line| {
            // The path is what follows the seventh field (it may hold spaces).
            let mut rest = line;
            for _ in 0..7 {
                let t = rest.iter().position(|b| *b != b' ')?;
                rest = &rest[t..];
                let e = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
                rest = &rest[e..];
            }
            let path = rest.strip_prefix(b" ")?;
            path.starts_with(b"/")
                .then(|| PathBuf::from(std::ffi::OsStr::from_bytes(path)))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every folder under which a sandbox of `forge run` (red, green, review, check) may be granted
/// writes — the project (areas, answers), the temporary folder (private TMPDIRs, the checks'
/// checkout), `/dev`, every client's state and the caches. A program elsewhere (`/usr/bin`,
/// `~/.local/bin`) no process inside can change, so `forge run` watches only the PATH folders
/// that meet one of these. `resolve_tests.rs` holds every plan to it.
pub fn writable_roots(project: &Path, home: &Path, config: &SandboxConfig) -> Vec<PathBuf> {
    let mut roots = vec![
        project.to_path_buf(),
        resolve::system_tmp(),
        std::env::temp_dir(),
        PathBuf::from("/dev"),
    ];
    let c = &config.clients;
    for s in c
        .claude
        .iter()
        .chain(&c.codex)
        .chain(&c.gemini)
        .chain(&config.caches)
    {
        roots.push(resolve::expand_home(s, home));
    }
    roots
}

/// Whether an environment variable's name says it holds a credential: one of [`SECRET_ENV`], or
/// a name with `TOKEN`, `SECRET`, `PASSWORD`, `API_KEY`, `CREDENTIAL`, … in it, or a database
/// URL (`DATABASE_URL`, `*_DSN`). A list of names alone misses `HF_TOKEN`, `VAULT_TOKEN`,
/// `SLACK_BOT_TOKEN` and the next service's.
pub fn is_secret_env(name: &str) -> bool {
    if SECRET_ENV.contains(&name) {
        return true;
    }
    let n = name.to_ascii_uppercase();
    // `AUTH` as a word of the name (`NPM_AUTH`, `BASIC_AUTH_HEADER`), never inside one:
    // `GIT_AUTHOR_NAME` and `XAUTHORITY` are no credentials, and removing the first took a
    // person's git identity from every agent's commits.
    crate::secrets::ENV_NAME_WORDS
        .iter()
        .chain(&["DATABASE_URL"])
        .any(|w| n.contains(w))
        || n.split('_').any(|w| w == "AUTH")
        || n.ends_with("_DSN")
        // `STRIPE_KEY`, `SIGNING_KEY`, `DEPLOY_KEY`, `LICENSE_KEYS` (red team of issue 34): in
        // an allowlisted environment, dropping a harmless `CACHE_KEY` costs little.
        || n.ends_with("_KEY")
        || n.ends_with("_KEYS")
        || n.ends_with("_PASS")
}

/// Whether a variable's value is a credential whatever its name: a URL that carries a user or a
/// password (`scheme://user:pass@host`, `redis://:pass@host`, `https://<token>@host`), as
/// `REDIS_URL`, `AMQP_URL` or a service's own name hold them; an `Authorization:` header or a
/// bearer token; an assignment of a credential-named key (`-Dapi.key=…`, `password=…`).
pub fn is_secret_env_value(name: &str, value: &str) -> bool {
    if is_secret_env(name) {
        return true;
    }
    // A header or an assignment that carries one, whatever variable holds it:
    // `GIT_CONFIG_PARAMETERS='http.extraheader'='Authorization: Bearer …'`,
    // `JAVA_TOOL_OPTIONS=-Dapi.key=…` (red team of issue 34).
    let lower = value.to_ascii_lowercase();
    if lower.contains("authorization:") || lower.contains("bearer ") {
        return true;
    }
    let assigns_secret = value
        .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ';' | '&' | ','))
        .filter_map(|t| t.split_once('=').map(|(k, _)| k))
        .any(|k| {
            let k = k.trim_start_matches('-').replace(['.', '-'], "_");
            !k.is_empty() && is_secret_env(&k)
        });
    if assigns_secret {
        return true;
    }
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    let plain_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // A user name alone is a credential too: `https://<token>@host` is how registries and
    // proxies take a token (red team of issue 34: `PIP_EXTRA_INDEX_URL`, `npm_config_registry`).
    plain_scheme
        && authority
            .rsplit_once('@')
            .is_some_and(|(user, _)| !user.is_empty())
}

/// The environment CMD gets: TMPDIR, the marker, and of the caller's only what is granted by
/// name ([`allow::env_allowed`]: the shell's, the toolchains', git's, the running client's,
/// `sandbox.env`) and is no credential — but its client's own key.
pub fn environment(
    req: &Request,
    plan: &Plan,
    config: &SandboxConfig,
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let set = vec![
        ("TMPDIR".into(), plan.tmpdir.clone().into_os_string()),
        (ENV_MARKER.into(), req.profile.as_str().into()),
    ];
    let client = req.client.filter(|_| req.profile.runs_client());
    let keep: &[&str] = client.map(own_env).unwrap_or(&[]);
    let remove = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v))
        .filter(|(k, v)| {
            if keep.contains(&k.as_str()) {
                return false;
            }
            let v = v.to_string_lossy();
            !allow::env_allowed(k, client, &config.env) || is_secret_env_value(k, &v)
        })
        .map(|(k, _)| k)
        .collect();
    (set, remove)
}

/// Runs `program` as `req` asks, replacing this process (or, with `contain`, waiting for it in a
/// PID namespace): returns only on failure — or, contained, with how CMD ended. Warnings (what
/// `auto` mode leaves out) go to `warn`.
pub fn enter(
    req: &Request,
    config: &SandboxConfig,
    program: &[OsString],
    warn: &mut dyn FnMut(&str),
) -> Result<Ended, SandboxError> {
    let mode = req.mode.unwrap_or(config.mode);
    let level = level();
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (req, program, warn);
        level.check(mode)?;
        return Err(SandboxError::Unavailable(
            "this is not Linux: Forge's sandbox is built on Landlock".into(),
        ));
    }
    #[cfg(target_os = "linux")]
    {
        // A layer that is not mounted would let CMD write the checkout the caller then trusts:
        // without the sandbox, `--layer` is refused, never ignored.
        let lower = req.overlay_lower()?.map(Path::to_path_buf);
        if lower.is_some() && (mode == Mode::Off || level.landlock_abi == 0) {
            return Err(SandboxError::Unavailable(
                "--layer needs the kernel sandbox (Landlock and a mount namespace), and the mode is off or the kernel has no Landlock".into(),
            ));
        }
        if mode == Mode::Off {
            return run_plain(req, program, warn, None);
        }
        level.check(mode)?;
        if level.landlock_abi == 0 {
            warn(&format!(
                "forge sandbox: {} — running `{}` without a file-system sandbox. What remains: the guard's parse of each command{}.",
                level.missing().join("; "),
                program
                    .first()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                if req.contain && level.pid_ns {
                    ", and containment (everything it starts ends with it)"
                } else {
                    ""
                }
            ));
            return run_plain(req, program, warn, None);
        }
        let mut mounts = level.mount_ns && !req.carve_by_rules;
        // A live session's commands share one namespace and one plan, kept between them
        // (keeper.rs). A kept namespace has the machine's network: a session with a network of
        // its own makes its namespace (and proxy) per command.
        let net = config.network.of(req.profile);
        let keeper = (mounts
            && config.reuse
            && req.profile == Profile::Session
            && !net.isolated()
            && !req.contain
            && lower.is_none())
        .then(|| keeper::Keeper::new(req, config));
        let record = keeper.as_ref().and_then(keeper::Keeper::read);
        // Read before a joined namespace resets it to its `/`; entered again below.
        let cwd = if mounts {
            Some(std::env::current_dir().map_err(|e| SandboxError::Setup {
                step: "read the working folder".into(),
                source: e,
            })?)
        } else {
            None
        };
        let mut joined = false;
        let mut to_keep = None;
        // A check reaches nothing but its own loopback, a profile with an allowlist that and
        // the proxy (`sandbox.network`).
        let isolated = net.isolated();
        let mut net_made = false;
        let mut proxy_port = None;
        // Held from before the plan reads the project until `exec`: see sweep.rs.
        let mut _hold = None;
        let plan = match (&keeper, &record) {
            // A plan still true of the machine, and the namespace that enforces it: joined as
            // they are. (A namespace worth joining binds every folder `sweep::make` would make.)
            (Some(k), Some(rec)) if keeper::Keeper::plan_holds(rec) && k.join(rec, None) => {
                joined = true;
                rec.plan.clone()
            }
            _ => {
                let base = sandbox_base();
                if mounts {
                    make_private(&base)?;
                    _hold = Some(sweep::hold(&base)?);
                }
                let since = std::time::SystemTime::now();
                let (_layout, plan, basis) = resolve_witnessed(req, config)?;
                // With a mount namespace, one bind per secret is cheaper than leaving it out of
                // the read grants, which splits its folder (`/etc` for `/etc/shadow`) into a
                // rule per entry.
                let mut bound = plan.clone();
                bound.hide_secrets_by_mount();
                let seen = keeper.as_ref().and_then(|_| keeper::witness(&basis, since));
                if let (Some(k), Some(rec)) = (&keeper, &record)
                    && rec.same_namespace(&bound)
                    && k.join(rec, Some(&rec.refreshed(bound.clone(), seen.clone())))
                {
                    joined = true;
                }
                if mounts && !joined {
                    let dir = keeper.as_ref().and_then(keeper::Keeper::open_dir);
                    // The table the namespace is copied from, for a later command to compare.
                    let table = keeper.as_ref().and_then(|_| keeper::mount_table());
                    // Made here, outside the namespace, and swept from here once no namespace
                    // binds them.
                    sweep::leave(&base, sweep::make(&bound)?);
                    // Started from here, so that it stays on the machine's network.
                    let proxy = match config.network.allow(req.profile) {
                        Some(allow) => match proxy::start(proxy::Rules {
                            profile: req.profile.as_str(),
                            allow,
                            recorder: recorder_for(&req.project),
                        }) {
                            Ok(p) => Some(p),
                            Err(e) if mode == Mode::Require => return Err(e),
                            Err(e) => {
                                warn(&format!(
                                    "forge sandbox: no egress proxy ({e}): the hosts of `sandbox.network.{}.allow` are out of reach, only the sandbox's own loopback is not",
                                    req.profile.as_str()
                                ));
                                None
                            }
                        },
                        None => None,
                    };
                    write_views(&base, &bound.views)?;
                    let made = mounts::enter_namespace(isolated);
                    net_made = matches!(made, Ok(true));
                    if let (true, Some(p)) = (net_made, proxy) {
                        proxy_port = Some(p.listen()?);
                    }
                    if let Err(e) = made {
                        if mode == Mode::Require {
                            return Err(e);
                        }
                        warn(&format!(
                            "forge sandbox: {e}; control files are carved out with Landlock rules instead (no new file at the repository root, no `git commit` in a session)"
                        ));
                        mounts = false;
                    } else if let (Some(k), Some(dir), Some(table)) = (keeper, dir, table) {
                        to_keep = Some((k, dir, bound.clone(), seen, table));
                    }
                }
                if lower.is_some() && !mounts {
                    return Err(SandboxError::Unavailable(
                        "--layer needs a mount namespace (root, or unprivileged user namespaces)"
                            .into(),
                    ));
                }
                if mounts {
                    bound
                } else {
                    let mut plan = plan;
                    plan.carve_by_rules(&mut landlock::list);
                    // A view needs a mount; without one the file is read as it is.
                    for v in std::mem::take(&mut plan.views) {
                        plan.problems.push(format!(
                            "{} holds a credential, and with no mount namespace the sandbox cannot show a redacted copy: commands read it whole",
                            v.path.display()
                        ));
                    }
                    plan
                }
            }
        };
        if isolated && !net_made {
            let p = req.profile.as_str();
            let why = format!(
                "no network namespace could be made here, so the {p} profile can reach the network (`sandbox.network.{p}: {}` is not enforced)",
                if matches!(net, config::Net::Allow(_)) {
                    "{allow: [...]}"
                } else {
                    "loopback"
                }
            );
            if mode == Mode::Require {
                return Err(SandboxError::Unavailable(why));
            }
            warn(&format!("forge sandbox: {why}"));
        }
        if !plan.refusals.is_empty() {
            return Err(SandboxError::Plan(plan.refusals.join("; ")));
        }
        if !plan.problems.is_empty() {
            let p = plan.problems.join("; ");
            if mode == Mode::Require {
                return Err(SandboxError::Plan(p));
            }
            warn(&format!("forge sandbox: {p}"));
        }
        for m in level.missing() {
            warn(&format!("forge sandbox: {m}"));
        }
        if !joined {
            prepare(&plan)?;
        }
        // Named before TMPDIR changes below: the folder `prepare` made.
        let empty = empty_dir(&plan);
        let (mut set, remove) = environment(req, &plan, config);
        if let Some(port) = proxy_port {
            set.extend(
                proxy::environment(port)
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into())),
            );
        }
        apply_environment(&set, &remove);
        let require = mode == Mode::Require;
        let layer = req.layer.clone().zip(lower);
        let keep = req.layer_keep.clone();
        let envs = req.layer_envs.clone();
        let in_place = req.layer_in_place.then(|| req.project.clone());
        let req_project = req.project.clone();
        let step = move || -> Result<(), SandboxError> {
            close_inherited_descriptors();
            if mounts && !joined {
                mounts::apply(&plan, &empty)?;
                if let Some((k, dir, plan, seen, table)) = to_keep {
                    k.keep(dir, plan, seen, table);
                }
            }
            let mut cwd = cwd;
            if let Some((layer, lower)) = &layer {
                mounts::overlay(lower, layer, &keep)?;
                mounts::environments(lower, &req_project, &envs)?;
                if let Some(project) = &in_place {
                    mounts::in_place(lower, project)?;
                    cwd = cwd.map(|c| match c.strip_prefix(lower) {
                        Ok(rel) => project.join(rel),
                        Err(_) => c,
                    });
                }
            }
            if let Some(cwd) = &cwd {
                // The working folder may lie under a new mount: enter it again through the new
                // table, and that must work. On a layer, CMD would otherwise run on the checkout
                // itself; below a covered secret (`~/.gnupg/private-keys-v1.d`, a `.env.d/`
                // folder), the old working folder stays on the mount beneath the cover, where
                // everything is readable (red team, round 10). A joined namespace starts CMD
                // at its `/` until it is entered.
                if let Err(e) = std::env::set_current_dir(cwd) {
                    return Err(SandboxError::Setup {
                        step: if layer.is_some() {
                            format!(
                                "enter the working folder {} through the overlay",
                                cwd.display()
                            )
                        } else {
                            format!(
                                "enter the working folder {} through the sandbox's mounts (it lies inside a secret or a folder the sandbox hides; run the command from another folder)",
                                cwd.display()
                            )
                        },
                        source: e,
                    });
                }
            }
            landlock::detach_terminal();
            landlock::drop_capabilities()?;
            landlock::restrict(&plan, level.landlock_abi, require)?;
            seccomp::deny_reaching_other_processes()?;
            Ok(())
        };
        run_plain(req, program, warn, Some(Box::new(step)))
    }
}

/// Where the egress proxy records: the timeline of the session `forge` commands run from here
/// record to (`FORGE_SESSION`, else the terminal's), in a Forge project only — a repository
/// without `.forge/` gets no trace.
#[cfg(target_os = "linux")]
fn recorder_for(project: &Path) -> Option<crate::timeline::Recorder> {
    project
        .join(".forge")
        .is_dir()
        .then(|| crate::timeline::Recorder::for_cli(&crate::repo::Project::at(project)))
}

/// Whether what a session runs for an agent — its Bash calls, and the person's verify commands
/// run on the code it wrote — runs inside `forge sandbox --profile session`: `Ok(false)` when
/// `mode` is off, Forge already runs inside a sandbox (`forge run`, an agent's own command:
/// rules could only narrow), or the kernel has no Landlock and the mode is `auto`; `Err` when
/// `require` cannot be met (`config` names the file that asks for it).
pub fn walls(mode: Mode, config: &Path) -> Result<bool, String> {
    if std::env::var_os(ENV_MARKER).is_some() || mode == Mode::Off {
        return Ok(false);
    }
    let level = level();
    if let Err(e) = level.check(mode) {
        return Err(format!(
            "{e} (`sandbox.mode: require` in {})",
            config.display()
        ));
    }
    Ok(level.landlock_abi > 0)
}

/// Whether `p` can be named in overlayfs's mount options (which separate with `,` and `:`).
pub fn overlay_path_ok(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    !p.as_os_str()
        .as_bytes()
        .iter()
        .any(|b| matches!(b, b',' | b':' | b'\\'))
}

/// The empty read-only folder bound over a secret folder (`~/.ssh`): next to the TMPDIRs,
/// `<tmp>/forge-sandbox-<uid>/empty`.
fn empty_dir(plan: &Plan) -> PathBuf {
    let base = plan
        .tmpdir
        .ancestors()
        .find(|a| {
            a.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("forge-sandbox-"))
        })
        .map(Path::to_path_buf)
        .unwrap_or_else(sandbox_base);
    base.join("empty")
}

/// The user's private sandbox folder, `<tmp>/forge-sandbox-<uid>`.
fn sandbox_base() -> PathBuf {
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { nix::libc::getuid() };
    resolve::system_tmp().join(format!("forge-sandbox-{uid}"))
}

/// How long a view no plan names stays in the sandbox's folder: a plan made a moment ago may be
/// about to bind it.
#[cfg(target_os = "linux")]
const VIEW_KEEP: std::time::Duration = std::time::Duration::from_secs(600);

/// Writes each view to `<base>/views/<name>` (mode 0400, by a rename) before the namespace
/// binds it, and removes the old views no plan named for a while.
#[cfg(target_os = "linux")]
fn write_views(base: &Path, views: &[redact::View]) -> Result<(), SandboxError> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = base.join("views");
    let setup = |step: String, source: std::io::Error| SandboxError::Setup { step, source };
    if views.is_empty() && !dir.exists() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| setup(format!("create the folder {}", dir.display()), e))?;
    check_private(&dir)?;
    let names: Vec<String> = views.iter().map(redact::View::file_name).collect();
    for (v, name) in views.iter().zip(&names) {
        // One written in the last half of [`VIEW_KEEP`] is this text (its name is its hash);
        // an older one is written again, so that no plan's sweep below takes it meanwhile.
        let at = dir.join(name);
        let fresh = std::fs::symlink_metadata(&at).is_ok_and(|m| {
            m.is_file()
                && m.modified()
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age < VIEW_KEEP / 2)
        });
        if fresh {
            continue;
        }
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&tmp)
            .and_then(|mut f| f.write_all(v.text.as_bytes()))
            .and_then(|()| std::fs::rename(&tmp, &at));
        made.map_err(|e| {
            setup(
                format!(
                    "write the redacted view of {} to {}",
                    v.path.display(),
                    at.display()
                ),
                e,
            )
        })?;
    }
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let old = e
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > VIEW_KEEP);
            if old && !names.iter().any(|n| *n == e.file_name().to_string_lossy()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(())
}

/// Creates `base` (mode 0700) if need be, and refuses it unless it is private
/// ([`check_private`]).
#[cfg(target_os = "linux")]
fn make_private(base: &Path) -> Result<(), SandboxError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(base)
        .map_err(|e| SandboxError::Setup {
            step: format!("create the folder {}", base.display()),
            source: e,
        })?;
    check_private(base)
}

/// Refuses a sandbox folder (`<tmp>/forge-sandbox-<uid>`) that is not a folder of this user's
/// that only this user may write. In a shared `/tmp` anyone may make that name first; whoever
/// owns it could swap the TMPDIRs, the empty folder bound over secrets or the staging of
/// `/dev` beneath it for links to places of their choosing.
#[cfg(target_os = "linux")]
fn check_private(base: &Path) -> Result<(), SandboxError> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { nix::libc::getuid() };
    let m = std::fs::symlink_metadata(base).map_err(|e| SandboxError::Setup {
        step: format!("read the sandbox folder {}", base.display()),
        source: e,
    })?;
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(SandboxError::Plan(format!(
            "the sandbox folder {} is not a folder of this user's that only this user may write (owner uid {}, mode {:o}); remove it, or set TMPDIR to a folder of your own",
            base.display(),
            m.uid(),
            m.mode() & 0o7777
        )));
    }
    Ok(())
}

/// Creates the TMPDIR, the empty folder and the writable areas (the control folders to pin are
/// made before the namespace: sweep.rs).
#[cfg(target_os = "linux")]
fn prepare(plan: &Plan) -> Result<(), SandboxError> {
    use std::os::unix::fs::DirBuilderExt;
    let empty = empty_dir(plan);
    if let Some(base) = empty.parent() {
        make_private(base)?;
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&plan.tmpdir)
        .map_err(|e| SandboxError::Setup {
            step: format!("create the TMPDIR {}", plan.tmpdir.display()),
            source: e,
        })?;
    for (dir, mode) in [(empty.clone(), 0o555), (empty.with_file_name("dev"), 0o755)] {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(mode)
            .create(&dir)
            .map_err(|e| SandboxError::Setup {
                step: format!("create the folder {}", dir.display()),
                source: e,
            })?;
    }
    for p in &plan.create_areas {
        std::fs::create_dir_all(p).map_err(|e| SandboxError::Setup {
            step: format!("create the writable area {}", p.display()),
            source: e,
        })?;
    }
    Ok(())
}

type Step = Box<dyn FnOnce() -> Result<(), SandboxError>>;

/// Runs `program` after `step` (the sandbox), contained or not. Exec replaces this process, so
/// only failures and a contained CMD's end come back.
#[cfg(target_os = "linux")]
fn run_plain(
    req: &Request,
    program: &[OsString],
    warn: &mut dyn FnMut(&str),
    step: Option<Step>,
) -> Result<Ended, SandboxError> {
    if req.contain {
        match contain::enter() {
            // This is `forge sandbox` itself: CMD ran in the namespace and ended.
            Ok(Some(ended)) => return Ok(ended),
            // This is the namespace's CMD process: sandbox it and exec.
            Ok(None) => {}
            Err(contain::Unavailable(why)) => warn(&format!(
                "forge sandbox: cannot contain `{}` ({why}): running it without containment; what it leaves running outlives it",
                program
                    .first()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )),
        }
    }
    if let Some(s) = step {
        s()?;
    }
    Err(exec_program(program))
}

/// Marks every descriptor above stderr close-on-exec, so CMD inherits none of them. A
/// descriptor opened outside (a folder of the project, or home, left open by whoever started
/// Forge) is a way around the sandbox's mounts: `/proc/self/fd/7/.forge/config.yaml` reaches
/// the file on the host's mount, where no cover or read-only bind applies (red team, round 9,
/// read secrets and wrote control files that way). Forge's own are close-on-exec already.
#[cfg(target_os = "linux")]
fn close_inherited_descriptors() {
    use nix::libc;
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range(2) with integer arguments; it changes only this process's flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if r != 0 {
        // Before Linux 5.11: one by one, from the list of this process's descriptors.
        mark_close_on_exec_one_by_one();
    }
    // The three standard ones stay, but a folder given as one (`forge sandbox … < ~`) is the
    // same way around the mounts: it becomes `/dev/null`.
    for fd in 0..=2 {
        // SAFETY: fstat(2) into a zeroed struct; open(2) and dup2(2) on descriptor numbers.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
                if null >= 0 {
                    libc::dup2(null, fd);
                    libc::close(null);
                }
            }
        }
    }
}

/// [`close_inherited_descriptors`] where `close_range(2)` is missing.
#[cfg(target_os = "linux")]
fn mark_close_on_exec_one_by_one() {
    use nix::libc;
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        let fds: Vec<i32> = dir
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .filter(|fd| *fd > 2)
            .collect();
        for fd in fds {
            // SAFETY: fcntl(2) on a descriptor number; a closed one fails harmlessly.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
}

/// `execvp`s `program`; returns only the error.
#[cfg(target_os = "linux")]
fn exec_program(program: &[OsString]) -> SandboxError {
    use std::os::unix::process::CommandExt;
    let Some(first) = program.first() else {
        return SandboxError::Plan("no command given after `--`".into());
    };
    // Found with stat(2), not by letting exec try each PATH entry: a failed execve per entry
    // costs more than the sandbox itself.
    let path = first
        .to_str()
        .and_then(crate::exec::which)
        .map(OsString::from)
        .unwrap_or_else(|| first.clone());
    let e = std::process::Command::new(path)
        .arg0(first)
        .args(&program[1..])
        .exec();
    SandboxError::Exec {
        program: first.to_string_lossy().into_owned(),
        source: e,
    }
}

/// Sets the sandbox's environment in this process before exec (single-threaded: `forge sandbox`
/// starts no thread).
pub fn apply_environment(set: &[(OsString, OsString)], remove: &[String]) {
    for k in remove {
        // SAFETY: `forge sandbox` is single-threaded when it prepares the exec.
        unsafe { std::env::remove_var(k) };
    }
    for (k, v) in set {
        // SAFETY: as above.
        unsafe { std::env::set_var(k, v) };
    }
}

/// The absolute path of the first existing `name` on `PATH`-like candidates.
pub fn find_shell() -> PathBuf {
    for c in ["/bin/bash", "/usr/bin/bash", "/bin/sh"] {
        if Path::new(c).exists() {
            return PathBuf::from(c);
        }
    }
    PathBuf::from("/bin/sh")
}

/// Exits this process the way a contained CMD ended: the same exit code, or killed by the same
/// signal.
pub fn exit_like(ended: Ended) -> ! {
    #[cfg(target_os = "linux")]
    {
        contain::exit_like(ended)
    }
    #[cfg(not(target_os = "linux"))]
    {
        match ended {
            Ended::Exited(c) => std::process::exit(c),
            Ended::Signaled(s) => std::process::exit(128 + s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_socket_bound_at_a_path_is_read_from_the_kernels_list() {
        let text = b"Num       RefCount Protocol Flags    Type St Inode Path\n\
000000003dbff78d: 00000003 00000000 00000000 0001 03  1273\n\
000000006bfa9efd: 00000002 00000000 00010000 0001 01 2998289 /tmp/tmux-1000/default\n\
0000000095f457a1: 00000003 00000000 00000000 0001 03  1272 /tmp/tmux-1000/default\n\
00000000aaaaaaaa: 00000002 00000000 00010000 0001 01 77 @/tmp/.X11-unix/X0\n\
00000000bbbbbbbb: 00000002 00000000 00000000 0002 01 78 /run/user/1000/my socket\n\
00000000cccccccc: 00000002 00000000 00010000 0001 01 79 relative.sock\n";
        assert_eq!(
            parse_unix_sockets(text),
            [
                PathBuf::from("/run/user/1000/my socket"),
                PathBuf::from("/tmp/tmux-1000/default")
            ]
        );
        assert!(parse_unix_sockets(b"").is_empty());
    }

    #[test]
    fn without_a_mount_namespace_the_reachable_sockets_are_named() {
        let level = Level {
            landlock_abi: 7,
            scopes: true,
            mount_ns: false,
            pid_ns: false,
            nested: false,
        };
        let missing = level.missing().join("\n");
        assert!(
            missing.contains(
                "the Unix sockets of daemons (tmux, Docker, an SSH agent) stay reachable"
            ),
            "{missing}"
        );
        let full = Level {
            mount_ns: true,
            ..level
        };
        assert!(full.missing().is_empty());
    }

    #[test]
    fn the_projects_own_and_granted_sockets_stay_reachable() {
        let project = Path::new("/w/repo");
        let bound = || {
            [
                "/w/repo/dev.sock",
                "/tmp/t/s",
                "/tmp/tmux-1000/default",
                "/run/pg/.s.PGSQL",
            ]
            .map(PathBuf::from)
            .to_vec()
        };
        let v = daemon_sockets(project, Some(Path::new("/tmp/t")), &[], bound());
        assert!(v.contains(&"/tmp/tmux-1000/default".to_string()), "{v:?}");
        assert!(v.contains(&"/run/docker.sock".to_string()), "{v:?}");
        assert!(
            !v.iter().any(|s| s == "/w/repo/dev.sock" || s == "/tmp/t/s"),
            "{v:?}"
        );
        let granted = [PathBuf::from("/run/docker.sock"), PathBuf::from("/run/pg")];
        let v = daemon_sockets(project, None, &granted, bound());
        assert!(
            !v.iter()
                .any(|s| s == "/run/docker.sock" || s.starts_with("/run/pg")),
            "{v:?}"
        );
        assert!(v.contains(&"/tmp/t/s".to_string()), "{v:?}");
    }
}
