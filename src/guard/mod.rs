//! The guardrails gate: judges an agent's tool call — a shell command on a real parse, files
//! written or read, an MCP tool's input — against the default policy, the person's and the
//! project's rules and the phase of a running slice, and answers allow, ask or deny with the
//! rule that decided and a reason to act on.
//!
//! - `shell/` turns a command line into data ([`shell::Analysis`]): what runs, in which folder,
//!   writing and reading what; it reads scripts, recipes and package scripts in the project;
//! - `rules/` judges that data; each file holds one family of rules ([`rules::DEFAULT_RULES`]);
//! - `tools.rs` reads each agent's tool inputs, `mcp.rs` an MCP tool's by its keys, `servers.rs`
//!   what a server's tool does beyond its files (git, databases, destroying tools); `paths.rs`
//!   places paths; `phase.rs` is a running slice's scope; `config.rs` the `guard:` config
//!   (project and user);
//!   `exceptions.rs` a person's allow-once grants; `trust.rs` trust in a clone's relaxing rules.
//!
//! A missed command leads to one file: the program's family in `rules/`, or `shell/` when the
//! command was never seen.

pub mod config;
pub mod exceptions;
mod mcp;
pub mod paths;
pub mod phase;
pub mod rules;
mod servers;
pub mod shell;
mod tool_code;
pub mod tools;
pub mod trust;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use config::{GuardConfig, OneOrMany, RuleConfig};
use paths::{Paths, Place};
pub use phase::{Phase, load_phase};
use rules::Judge;
pub use tools::{ToolCall, canonical_tool, classify_tool};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// `forge guard check` exit codes: 0 allow, 1 deny, 3 ask (2 is a usage error).
    pub fn exit_code(self) -> i32 {
        match self {
            Decision::Allow => 0,
            Decision::Deny => 1,
            Decision::Ask => 3,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One rule that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub decision: Decision,
    pub rule: String,
    pub reason: String,
    /// The finding exists only because Forge cannot know what runs (code it cannot read), and
    /// what runs would stay inside the session sandbox: with [`Guard::sandboxed`], it is
    /// allowed with a note instead.
    #[serde(skip_serializing_if = "is_false")]
    pub contained: bool,
}

/// The answer for one tool call: the most restrictive finding decides.
#[derive(Debug, Clone, Serialize)]
pub struct GuardResult {
    pub decision: Decision,
    pub rule: String,
    pub reason: String,
    pub findings: Vec<Finding>,
    /// On a deny, the command a person pastes to let exactly this call through once
    /// (`forge guard allow-once -- '…'`), so the way out needs no reading of the docs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_once: Option<String>,
}

/// The rule id of a decision a person's allow-once exception made.
pub const ALLOW_ONCE: &str = "allow-once";

impl GuardResult {
    fn from_findings(mut findings: Vec<Finding>, sandboxed: bool) -> GuardResult {
        findings.dedup();
        if sandboxed {
            for f in findings
                .iter_mut()
                .filter(|f| f.contained && f.decision != Decision::Allow)
            {
                f.decision = Decision::Allow;
                f.reason = format!("contained by the session sandbox: {}", f.reason);
            }
        }
        // The first of the most restrictive: rules that know the command best report first.
        let top = findings
            .iter()
            .fold(None::<&Finding>, |best, f| match best {
                Some(b) if b.decision >= f.decision => Some(b),
                _ => Some(f),
            })
            .cloned();
        match top {
            Some(f) => GuardResult {
                decision: f.decision,
                rule: f.rule,
                reason: f.reason,
                findings,
                allow_once: None,
            },
            None => GuardResult {
                decision: Decision::Allow,
                rule: "default-allow".into(),
                reason: "no rule forbids it".into(),
                findings,
                allow_once: None,
            },
        }
    }

    /// Denies outright, for input the guard cannot understand (fail closed).
    pub fn deny(rule: &str, reason: impl Into<String>) -> GuardResult {
        let reason = reason.into();
        GuardResult {
            decision: Decision::Deny,
            rule: rule.to_string(),
            reason: reason.clone(),
            findings: vec![Finding {
                decision: Decision::Deny,
                rule: rule.to_string(),
                reason,
                contained: false,
            }],
            allow_once: None,
        }
    }

    /// The one-line message an agent (and a person) sees.
    pub fn message(&self) -> String {
        format!(
            "Forge guard {} [{}]: {}{}",
            self.decision.as_str(),
            self.rule,
            self.reason,
            self.way_out()
        )
    }

    /// ` — if the person wants it anyway: forge guard allow-once -- '…'`, or nothing.
    pub fn way_out(&self) -> String {
        match &self.allow_once {
            Some(c) => format!(" — if the person wants it anyway: {c}"),
            None => String::new(),
        }
    }
}

/// Longest allow-once command offered in full: a `Write` of a large file would otherwise repeat
/// its whole content in the reason; past this the person is shown the command's shape.
const ALLOW_ONCE_MAX: usize = 2000;

/// The command that grants a person's exception for exactly `call` of `tool` (canonical), as
/// `forge guard allow-once` records it, so pasting it makes the same call pass once. None for
/// the rules that guard Forge itself: an agent handed a ready bypass of its own harness (its
/// breaker state, its hooks, a person's commands) would only relay it.
fn allow_once_command(rule: &str, tool: &str, call: &str) -> Option<String> {
    if rules::forge::guards_forge(rule) {
        return None;
    }
    let cmd = if tool == "Bash" {
        format!(
            "forge guard allow-once -- {}",
            crate::text::shell_quote(call)
        )
    } else {
        format!(
            "forge guard allow-once --tool {} --input {}",
            crate::text::shell_quote(tool),
            crate::text::shell_quote(call)
        )
    };
    Some(if cmd.len() <= ALLOW_ONCE_MAX {
        cmd
    } else if tool == "Bash" {
        "forge guard allow-once -- '<the exact command>'".to_string()
    } else {
        format!(
            "forge guard allow-once --tool {} --input '<the exact tool input as JSON>'",
            crate::text::shell_quote(tool)
        )
    })
}

/// Where a rule came from, for its default id and for trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Project,
    User,
}

/// The guard for one repository: paths, the person's and the project's rules, the current
/// phase, and whether commands run inside the session sandbox.
pub struct Guard {
    pub paths: Paths,
    rules: Vec<(RuleConfig, Source)>,
    decisions: HashMap<String, Decision>,
    phase: Option<Phase>,
    sandboxed: bool,
    /// The person's Forge folder, when allow-once exceptions apply (`for_project`).
    user_dir: Option<PathBuf>,
    /// Relaxing parts of the project's config, set aside until a person trusts them.
    untrusted: Option<GuardConfig>,
    env: shell::Env,
    /// What the session sandbox keeps read-only in the project (its plan's control files:
    /// every `core.hooksPath` folder, the files git's config includes, PATH folders): file tools
    /// run in the client's own process, outside the sandbox, so the guard refuses them there.
    control: Vec<PathBuf>,
    /// The files and folders the project's `sandbox.secrets` names: the sandbox hides them from
    /// commands, and the file tools, which run outside it, may not read them either.
    secrets: Vec<PathBuf>,
    /// What under home the session sandbox lets commands read (toolchains, `sandbox.read`, the
    /// client's own state), when the caller knows it: the file tools follow the same allowlist,
    /// so a credential file no list names is refused to them as the kernel refuses it.
    home_reads: Option<Vec<PathBuf>>,
    /// What the session sandbox hides inside those grants (the clients' settings files, which
    /// can hold their keys) or shows only redacted (redact.rs): refused to the file tools,
    /// which read the file itself.
    home_hidden: Vec<PathBuf>,
}

impl Guard {
    /// The guard with the given project rules, taken as given (trusted), no user rules and no
    /// allow-once exceptions: for tests and for callers that decided trust themselves.
    pub fn new(
        root: &Path,
        home: &Path,
        config: Option<&GuardConfig>,
        phase: Option<Phase>,
    ) -> Guard {
        let mut paths = Paths::new(root, home);
        paths.run_output = phase
            .as_ref()
            .and_then(|p| p.output.as_ref())
            .map(|o| paths.root.join(o));
        let env = shell::Env {
            home: paths.home.clone(),
            root: paths.root.clone(),
            temp: paths
                .temp
                .first()
                .cloned()
                .unwrap_or_else(|| PathBuf::from("/tmp")),
        };
        let mut g = Guard {
            paths,
            rules: Vec::new(),
            decisions: HashMap::new(),
            phase,
            sandboxed: false,
            user_dir: None,
            untrusted: None,
            env,
            control: Vec::new(),
            secrets: Vec::new(),
            home_reads: None,
            home_hidden: Vec::new(),
        };
        if let Some(c) = config {
            g.add(c.clone(), Source::Project);
        }
        g
    }

    fn add(&mut self, c: GuardConfig, source: Source) {
        let prefix = match source {
            Source::Project => "project-rule",
            Source::User => "user-rule",
        };
        let c = c.with_default_ids(prefix);
        self.rules.extend(c.rules.into_iter().map(|r| (r, source)));
        for (k, v) in c.decisions {
            // The person's own decision wins over the project's.
            if source == Source::User || !self.decisions.contains_key(&k) {
                self.decisions.insert(k, v);
            }
        }
    }

    /// The person's and the project's rules and decisions in force, described for a person:
    /// `(where from, id, decision, what)`.
    pub fn added(&self) -> Vec<(&'static str, String, Decision, String)> {
        let from = |s: Source| match s {
            Source::Project => "project",
            Source::User => "user",
        };
        let mut out: Vec<_> = self
            .rules
            .iter()
            .map(|(r, s)| {
                let mut what = r.reason.clone();
                let mut on = Vec::new();
                if let Some(p) = &r.program {
                    on.push(format!("program {p}"));
                }
                if !r.args.is_empty() {
                    on.push(format!("args {}", r.args.join(" ")));
                }
                if let Some(p) = &r.path {
                    on.push(format!("path {p}"));
                }
                if !r.relaxes.is_empty() {
                    on.push(format!("relaxes {}", r.relaxes.join(", ")));
                }
                if !on.is_empty() {
                    what = format!("{what} ({})", on.join("; "));
                }
                (from(*s), r.id.clone().unwrap_or_default(), r.decision, what)
            })
            .collect();
        let mut ds: Vec<_> = self.decisions.iter().collect();
        ds.sort();
        for (id, d) in ds {
            out.push((
                "decisions",
                id.clone(),
                *d,
                format!("`{id}` is decided {}", d.as_str()),
            ));
        }
        out
    }

    /// What in the project's config relaxes the default policy and is ignored until a person
    /// trusts it (`forge guard trust`), described for a person.
    pub fn untrusted(&self) -> Vec<String> {
        self.untrusted
            .as_ref()
            .map(GuardConfig::relaxing)
            .unwrap_or_default()
    }

    /// The guard for a project as the hooks and `forge guard check` use it: the project's
    /// config (its relaxing parts only if a person trusted them), the person's own rules from
    /// `~/.config/forge/guard.yaml`, their allow-once exceptions, and the active run's phase. A
    /// user config or run state that cannot be read is an error (the caller fails closed).
    pub fn for_project(
        root: &Path,
        home: &Path,
        project: Option<GuardConfig>,
    ) -> std::result::Result<Guard, String> {
        Guard::for_project_in(root, home, project, &config::user_dir(home))
    }

    /// [`Guard::for_project`] with the person's Forge folder given (tests, tools).
    pub fn for_project_in(
        root: &Path,
        home: &Path,
        project: Option<GuardConfig>,
        dir: &Path,
    ) -> std::result::Result<Guard, String> {
        let dir = dir.to_path_buf();
        let phase = load_phase(root)?;
        let mut g = Guard::new(root, home, None, phase);
        if let Some(p) = project {
            let trusted = !p.has_relaxing()
                || trust::is_trusted(&dir, &g.paths.root, &p.relaxing_fingerprint());
            // Ids by position in the file, before anything is set aside.
            let p = p.with_default_ids("project-rule");
            if trusted {
                g.add(p, Source::Project);
            } else {
                let (relaxing, rest) = p.split_relaxing();
                g.add(rest, Source::Project);
                g.untrusted = Some(relaxing);
            }
        }
        if let Some(u) = config::load_user(&dir)? {
            g.add(u, Source::User);
        }
        g.user_dir = Some(dir);
        Ok(g)
    }

    /// Commands will run inside `forge sandbox --profile session` (the live-session sandbox):
    /// findings that exist only because Forge cannot read what runs — a script outside the
    /// project, inline interpreter code that touches files or processes — become allowed with
    /// a note ("contained by the session sandbox"), since the kernel confines what that code
    /// can write. Everything else is judged exactly as without it: git semantics inside the
    /// project (history, branches, config, force-push, `reset --hard`), exfiltration to the
    /// network, killing Forge, Forge's and the agents' control files, jobs that run later or
    /// elsewhere.
    ///
    /// The PreToolUse hook sets it when it rewrites a Bash call to run in the session sandbox
    /// (and only for Bash: Write/Edit tools run in the agent's own process). Default: false.
    pub fn sandboxed(mut self, on: bool) -> Guard {
        self.sandboxed = on;
        self
    }

    /// Refuses file-tool writes to these paths (and below): the session sandbox's read-only
    /// control files ([`Guard::control`]).
    pub fn with_control(mut self, paths: Vec<PathBuf>) -> Guard {
        self.control = paths;
        self
    }

    /// Refuses file-tool reads of these paths (and below): the project's `sandbox.secrets`.
    pub fn with_secrets(mut self, paths: Vec<PathBuf>) -> Guard {
        self.secrets = paths;
        self
    }

    /// Refuses file-tool reads under home outside `paths` (and below) and the project.
    pub fn with_home_reads(mut self, paths: Vec<PathBuf>) -> Guard {
        self.home_reads = Some(paths);
        self
    }

    /// Refuses file-tool reads of these paths under home even inside what
    /// [`Guard::with_home_reads`] grants.
    pub fn with_home_hidden(mut self, paths: Vec<PathBuf>) -> Guard {
        self.home_hidden = paths;
        self
    }

    /// Judges without a person's allow-once exceptions (`forge guard check` must not use one
    /// up).
    pub fn without_exceptions(mut self) -> Guard {
        self.user_dir = None;
        self
    }

    pub fn check_command(&self, line: &str, cwd: &Path) -> GuardResult {
        // One call judges one moment of the disk: each path is asked about once.
        paths::cached(|| self.check_command_now(line, cwd))
    }

    fn check_command_now(&self, line: &str, cwd: &Path) -> GuardResult {
        let (findings, _) = self.judge_command(line, cwd);
        let r = GuardResult::from_findings(findings, self.sandboxed);
        self.exception("Bash", || line.to_string(), r)
    }

    fn judge_command(&self, line: &str, cwd: &Path) -> (Vec<Finding>, Vec<PathBuf>) {
        let analysis = shell::analyze_in(line, cwd, &self.env);
        let mut judge = Judge::new(&self.paths, &self.decisions);
        judge.analysis(&analysis);
        let written = std::mem::take(&mut judge.written);
        let mut findings = judge.findings;
        if let Some(ph) = &self.phase {
            phase::scope(ph, &self.paths, &written, &mut findings);
        }
        self.project_rules("Bash", Some(&analysis), &written, &[], &mut findings);
        (findings, written)
    }

    pub fn check_tool(&self, tool: &str, input: &serde_json::Value, cwd: &Path) -> GuardResult {
        self.check_tool_exact(tool, input, cwd, || tools::exact_call(tool, input))
    }

    /// [`Guard::check_tool`] on an `input` that may hold only what the judgment reads
    /// ([`tools::judged_keys`]); `exact` gives the whole call as `forge guard allow-once`
    /// records it, asked for only when an exception could apply.
    pub fn check_tool_exact(
        &self,
        tool: &str,
        input: &serde_json::Value,
        cwd: &Path,
        exact: impl FnOnce() -> String,
    ) -> GuardResult {
        paths::cached(|| self.check_tool_now(tool, input, cwd, exact))
    }

    fn check_tool_now(
        &self,
        tool: &str,
        input: &serde_json::Value,
        cwd: &Path,
        exact: impl FnOnce() -> String,
    ) -> GuardResult {
        let call = match classify_tool(tool, input) {
            Ok(c) => c,
            Err(e) => {
                return GuardResult::deny(
                    "malformed-input",
                    format!("{e}; Forge denies what it cannot read"),
                );
            }
        };
        let canon = canonical_tool(tool);
        if canon == "Bash" {
            let line = call.commands.first().cloned().unwrap_or_default();
            return self.check_command(&line, cwd);
        }
        let mut findings = Vec::new();
        let session_cwd = cwd.to_path_buf();
        // Every folder the input names (the first is where commands run), then the session's.
        let mut bases: Vec<PathBuf> = Vec::new();
        for c in &call.folders {
            let b = self.paths.resolve(&self.expand_home(c), cwd);
            if !bases.contains(&b) {
                bases.push(b);
            }
        }
        if !bases.contains(&session_cwd) {
            bases.push(session_cwd.clone());
        }
        // A server may take a relative path from the project's root, or from any folder
        // between it and the session's (red team, round 14: serena's `relative_path` is the
        // project's, whatever the session's folder).
        if call.server && session_cwd.starts_with(&self.paths.root) {
            for a in session_cwd.ancestors().skip(1) {
                if !a.starts_with(&self.paths.root) {
                    break;
                }
                if !bases.iter().any(|b| b == a) {
                    bases.push(a.to_path_buf());
                }
            }
        }
        let cwd = bases[0].clone();
        // Other places a path may mean, judged as well (red team, round 12): a relative path
        // against the session's folder and every other folder when the input names its own
        // `cwd` (an MCP server resolves against the folder it was started in), and a path with
        // `..` taken lexically, as Node's `path.resolve` does before the kernel sees it —
        // through a link `g`, `g/../.git/config` is the link target's sibling for the kernel
        // but `.git/config` for the client.
        let other_readings = |f: &str| -> Vec<String> {
            let p = Path::new(f);
            let bases = if p.is_relative() {
                &bases[..]
            } else {
                &bases[..1]
            };
            let mut out: Vec<String> = Vec::new();
            for (i, base) in bases.iter().enumerate() {
                let abs = base.join(p);
                if i > 0 {
                    out.push(abs.display().to_string());
                }
                let climbs = p.components().any(|c| c == std::path::Component::ParentDir);
                if climbs && let Some(n) = crate::sandbox::resolve::lexical_no_climb(&abs) {
                    out.push(n.display().to_string());
                }
            }
            out
        };
        // Commands inside an MCP tool's input run like shell commands (outside any sandbox).
        let mut written = Vec::new();
        let readings = call.readings.iter().map(|c| (c, true));
        for (c, reading) in call.commands.iter().map(|c| (c, false)).chain(readings) {
            let (f, w) = self.judge_command(c, &cwd);
            findings.extend(f.into_iter().filter(|f| {
                let unparsed_reading = reading && f.rule == rules::code::UNPARSEABLE.id;
                !(f.rule.starts_with("project-rule")
                    || f.rule.starts_with("user-rule")
                    || unparsed_reading)
            }));
            written.extend(w);
        }
        let mut judge = Judge::new(&self.paths, &self.decisions);
        let here = shell::Cwd::at(&cwd);
        let origin = shell::Origin::Line;
        let write = |judge: &mut Judge, f: &str| {
            for f in self.tool_paths(f, call.server) {
                for g in std::iter::once(f.clone()).chain(other_readings(&f)) {
                    let w = shell::Word::lit(g);
                    judge.write(
                        &rules::Target {
                            word: &w,
                            cwd: &here,
                            origin: &origin,
                        },
                        "edits",
                        false,
                    );
                }
            }
        };
        for f in &call.written {
            write(&mut judge, f);
        }
        // What only a value's shape says the tool writes: judged where it lands, kept out of
        // the phase's scope (below).
        let certain = judge.written.len();
        for f in &call.maybe_written {
            write(&mut judge, f);
        }
        let named = judge.written.len();
        for f in &call.placeholders {
            write(&mut judge, f);
        }
        let mut read = Vec::new();
        for f in &call.read {
            for f in self.tool_paths(f, call.server) {
                for g in std::iter::once(f.clone()).chain(other_readings(&f)) {
                    let w = shell::Word::lit(g);
                    judge.read(&rules::Target {
                        word: &w,
                        cwd: &here,
                        origin: &origin,
                    });
                }
                read.push(self.paths.resolve(&f, &cwd));
            }
        }
        // What the project's `sandbox.secrets` names.
        for r in &read {
            let real = paths::real(r);
            if let Some(sec) = self
                .secrets
                .iter()
                .find(|s| paths::within_folded(r, s) || paths::within_folded(&real, s))
            {
                judge.hit(
                    &rules::fs::SECRETS,
                    format!("this reads {}, which the project's `sandbox.secrets` names ({}); agents may not read secrets", r.display(), sec.display()),
                );
            }
        }
        // A bare name that is a secret's, as a file of any folder the call may mean.
        for n in &call.names {
            for b in &bases {
                let p = b.join(n);
                if let Some(kind) = paths::secret_kind(&p, &self.paths.home) {
                    judge.hit(
                        &rules::fs::SECRETS,
                        format!("this names `{n}`, which in {} is {kind}; agents may not read or copy secrets", b.display()),
                    );
                    break;
                }
            }
        }
        // A pattern that selects files: a secret it could match is read.
        let folders_of = |base: &Option<String>| -> Vec<PathBuf> {
            match base {
                Some(b) => self
                    .tool_paths(b, call.server)
                    .iter()
                    .map(|b| self.paths.resolve(b, &cwd))
                    .collect(),
                None => vec![cwd.clone()],
            }
        };
        // Home is read by allowlist, as in the session sandbox: what a file tool reads, or the
        // folder a pattern or search walks, lies under home only where the sandbox grants it.
        if let Some(granted) = &self.home_reads {
            let walked: Vec<PathBuf> = call
                .patterns
                .iter()
                .map(|(b, _, _)| b)
                .chain(&call.searches)
                .flat_map(folders_of)
                .collect();
            let outside = |p: &Path| {
                paths::within_folded(p, &self.paths.home)
                    && !paths::within_folded(p, &self.paths.root)
                    && !granted.iter().any(|g| paths::within_folded(p, g))
            };
            let hidden = |p: &Path| self.home_hidden.iter().any(|h| paths::within_folded(p, h));
            // A walk of a folder that holds home (`/`, `/home`) reads it too.
            let holds_home = |p: &Path| paths::within_folded(&self.paths.home, p);
            let reads = read
                .iter()
                .map(|r| (r, false))
                .chain(walked.iter().map(|w| (w, true)));
            for (r, walk) in reads {
                let real = paths::real(r);
                if !walk && (hidden(r) || hidden(&real)) {
                    judge.hit(
                        &rules::fs::SECRETS,
                        format!("this reads {}, which can hold a credential (a token inside a config file, a client's settings): the session sandbox shows commands a redacted copy or nothing, and a file tool runs outside it, on the file itself; read it with a command (`cat`), which sees what the sandbox shows", r.display()),
                    );
                    break;
                }
                if outside(r) || outside(&real) || (walk && (holds_home(r) || holds_home(&real))) {
                    judge.hit(
                        &rules::fs::SECRETS,
                        format!("this reads {}, in the home folder outside what the sandbox lets agents read (the project, toolchains, the client's own state); home is read by allowlist, so a credential file nobody listed stays unread — if agents may read it, add it to `sandbox.read` in .forge/config.yaml", r.display()),
                    );
                    break;
                }
            }
        }
        for (base, pat, contents) in &call.patterns {
            for base in folders_of(base) {
                let pat = self.expand_home(pat);
                if let Some((what, kind)) =
                    paths::pattern_reaches_secret(&base, &pat, &self.paths.home, *contents)
                {
                    judge.hit(
                        &rules::fs::SECRETS,
                        format!("the pattern `{pat}` in {} can select {what} ({kind}); agents may not read secrets — name the files or types to search (`*.rs`)", base.display()),
                    );
                }
            }
        }
        // A content search of a folder that holds what `sandbox.secrets` names, unless its
        // globs leave it out (as the hook narrows Claude Code's Grep in the project).
        if canon == "Grep" {
            let bases: Vec<PathBuf> = match call.searches.is_empty() {
                true => call
                    .read
                    .iter()
                    .flat_map(|b| folders_of(&Some(b.clone())))
                    .chain(call.read.is_empty().then(|| cwd.clone()))
                    .collect(),
                false => call.searches.iter().flat_map(folders_of).collect(),
            };
            let here = session_cwd
                .canonicalize()
                .unwrap_or_else(|_| session_cwd.clone());
            for base in bases {
                for sec in self
                    .secrets
                    .iter()
                    .filter(|s| paths::within_folded(s, &base))
                {
                    let left_out =
                        paths::search_leaves_out(&call.exclusions, sec, &self.paths.root, &here);
                    if !left_out && sec != &base {
                        judge.hit(
                            &rules::fs::SECRETS,
                            format!("a search of {} reads {}, which the project's `sandbox.secrets` names; agents may not read secrets", base.display(), sec.display()),
                        );
                    }
                }
            }
        }
        // A search of a whole folder: a secret below it is read.
        for base in call.searches.iter().flat_map(folders_of) {
            if let Some((what, kind)) = paths::secret_below(&base, &self.paths.home) {
                judge.hit(
                    &rules::fs::SECRETS,
                    format!("a search of {} reads every file below it, {what} among them ({kind}); agents may not read secrets — search the project's folders, or name the files or types to search (`glob: \"*.rs\"`)", base.display()),
                );
            }
        }
        for r in &call.unjudged {
            judge.hit(&rules::code::UNREAD_CODE, r.clone());
        }
        for r in &call.destroys {
            judge.hit(&rules::system::EXTERNAL_DESTROY, r.clone());
        }
        for u in &call.urls {
            if rules::net::metadata_endpoint(u) {
                judge.hit(&rules::fs::SECRETS, format!("`{u}` is a cloud metadata endpoint, which hands out the machine's credentials; agents may not read them"));
            }
        }
        for w in written.clone().iter().chain(judge.written.clone().iter()) {
            // A `.git` below the top (a submodule's `.git` file, a nested repository): git run
            // in that folder reads its config and runs its hooks and fsmonitor.
            let nested_git = w.strip_prefix(&self.paths.root).is_ok_and(|rel| {
                rel.components()
                    .skip(1)
                    .any(|c| paths::fold(&c.as_os_str().to_string_lossy()) == ".git")
            });
            if nested_git {
                judge.hit(
                    &rules::forge::SANDBOX_CONTROL,
                    format!(
                        "this edits {}, a `.git` inside the project: git run in that folder reads its config and runs its hooks; ask the person",
                        w.display()
                    ),
                );
            }
            // In any case, as a case-insensitive file system compares them (red team, round 13);
            // and a folder that holds one, which a rename onto it replaces (red team, round 14:
            // `move_file src/pkg node_modules` planted `node_modules/.bin/git`). The project's
            // root holds them all and is never replaced by a file tool.
            let holds = |c: &PathBuf| *w != self.paths.root && paths::within_folded(c, w);
            if let Some(c) = self
                .control
                .iter()
                .find(|c| paths::within_folded(w, c) || holds(c))
            {
                judge.hit(
                    &rules::forge::SANDBOX_CONTROL,
                    format!(
                        "this edits {}, which the session sandbox keeps read-only ({}: git or the shell runs what is there); file tools run outside the sandbox, so Forge refuses it here — ask the person",
                        w.display(),
                        c.display()
                    ),
                );
            }
        }
        let mut guessed = judge.written.split_off(certain);
        guessed.truncate(named - certain);
        written.extend(std::mem::take(&mut judge.written));
        findings.extend(judge.findings);
        if let Some(ph) = &self.phase {
            phase::scope(ph, &self.paths, &written, &mut findings);
        }
        written.extend(guessed);
        self.project_rules(canon, None, &written, &read, &mut findings);
        // Tool calls run in the agent's own process, never in the sandbox.
        let r = GuardResult::from_findings(findings, false);
        // The exact call (the whole input, a Write's content too) is written out only when an
        // exception could apply: an allowed call needs none.
        self.exception(canon, exact, r)
    }

    /// A person's allow-once exception for exactly this call turns a deny or ask into allow
    /// (and is used up).
    fn exception(
        &self,
        tool: &str,
        call: impl FnOnce() -> String,
        mut r: GuardResult,
    ) -> GuardResult {
        if r.decision == Decision::Allow {
            return r;
        }
        let call = call();
        let call = call.as_str();
        if r.decision == Decision::Deny {
            r.allow_once = allow_once_command(&r.rule, canonical_tool(tool), call);
        }
        let Some(dir) = &self.user_dir else { return r };
        match exceptions::take(dir, &self.paths.root, canonical_tool(tool), call) {
            Some(g) => GuardResult {
                decision: Decision::Allow,
                rule: ALLOW_ONCE.into(),
                reason: format!(
                    "{} allowed this exact call once at {} (it would have been {} [{}]: {})",
                    g.by,
                    g.granted_at,
                    r.decision.as_str(),
                    r.rule,
                    r.reason
                ),
                findings: r.findings,
                allow_once: None,
            },
            None => r,
        }
    }

    /// The paths a tool's value may mean: `~` expanded, and for a server's tool the value with
    /// `$HOME`, `${HOME}`, `%USERPROFILE%` and other variables of the environment expanded too,
    /// as a server that calls `os.path.expandvars` reads it (red team, round 14). Claude Code's
    /// own tools take the path as written.
    fn tool_paths(&self, f: &str, server: bool) -> Vec<String> {
        let mut out = vec![self.expand_home(f)];
        // Claude Code trims a path before it resolves it (` ~` is home, `.env ` is `.env`;
        // red team, round 15): both readings are judged.
        let trimmed = self.expand_home(f.trim_matches(tools::js_space));
        if !out.contains(&trimmed) {
            out.push(trimmed);
        }
        if server && (f.contains('$') || f.contains('%')) {
            let e = self.expand_home(&self.expand_vars(f));
            if !out.contains(&e) {
                out.push(e);
            }
        }
        out
    }

    /// `$NAME`, `${NAME}` and `%NAME%` replaced by the variable's value (HOME and USERPROFILE
    /// by the guard's home); an unknown variable stays as written.
    fn expand_vars(&self, f: &str) -> String {
        let value = |name: &str| -> Option<String> {
            match name {
                "HOME" | "USERPROFILE" => Some(self.paths.home.display().to_string()),
                _ => std::env::var(name).ok(),
            }
        };
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut out = String::new();
        let mut rest = f;
        while let Some(i) = rest.find(['$', '%']) {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let (name, len) = if rest[i..].starts_with("${") {
                match after[1..].find('}') {
                    Some(e) => (&after[1..1 + e], e + 3),
                    None => ("", 0),
                }
            } else if rest[i..].starts_with('%') {
                match after.find('%') {
                    Some(e) if after[..e].chars().all(is_name) => (&after[..e], e + 2),
                    _ => ("", 0),
                }
            } else {
                let e = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
                (&after[..e], e + 1)
            };
            match value(name).filter(|_| !name.is_empty()) {
                Some(v) => {
                    out.push_str(&v);
                    rest = &rest[i + len..];
                }
                None => {
                    out.push_str(&rest[i..i + 1]);
                    rest = &rest[i + 1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// Tool paths are not shell words: an agent that writes `~/.bashrc` means the home folder,
    /// and `~root/.bashrc` root's, as Python's `expanduser` in an MCP server reads it.
    fn expand_home(&self, f: &str) -> String {
        let Some(rest) = f.strip_prefix('~') else {
            return f.to_string();
        };
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let home = if user.is_empty() {
            self.paths.home.clone()
        } else {
            PathBuf::from(shell::user_home(user, &self.paths.home))
        };
        if tail.is_empty() {
            home.display().to_string()
        } else {
            home.join(tail).display().to_string()
        }
    }

    /// The phase in force, if any.
    pub fn phase(&self) -> Option<&Phase> {
        self.phase.as_ref()
    }

    fn project_rules(
        &self,
        tool: &str,
        analysis: Option<&shell::Analysis>,
        written: &[PathBuf],
        read: &[PathBuf],
        findings: &mut Vec<Finding>,
    ) {
        for (i, (r, source)) in self.rules.iter().enumerate() {
            if let Some(t) = &r.tool
                && !t.contains(tool)
            {
                continue;
            }
            if let Some(prog) = &r.program {
                let Some(a) = analysis else { continue };
                let hit = a.invocations.iter().any(|inv| {
                    inv.name() == Some(prog.as_str())
                        && r.args.iter().all(|pat| {
                            inv.lit_args()
                                .flatten()
                                .any(|x| crate::glob::matches_arg(pat, x))
                        })
                });
                if !hit {
                    continue;
                }
            }
            if let Some(pat) = &r.path {
                let hit = written
                    .iter()
                    .chain(read)
                    .any(|p| match self.paths.place(p) {
                        Place::RepoRoot => crate::glob::matches(pat, ""),
                        Place::InRepo(rel) => crate::glob::matches(pat, &rel),
                        _ => crate::glob::matches(pat, &p.to_string_lossy()),
                    });
                if !hit {
                    continue;
                }
            }
            // `add` named every rule by its position.
            let id =
                r.id.clone()
                    .unwrap_or_else(|| format!("{source:?}-rule-{i}"));
            if !r.relaxes.is_empty() {
                findings.retain(|f| !r.relaxes.contains(&f.rule));
            }
            findings.push(Finding {
                decision: r.decision,
                rule: id,
                reason: r.reason.clone(),
                contained: false,
            });
        }
    }
}

#[cfg(test)]
mod tests;
