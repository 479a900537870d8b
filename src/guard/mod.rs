//! The guardrails gate: judges an agent's tool call — a shell command on a real parse, or a file
//! write/read — against the default policy, the project's rules and the phase of a running
//! slice, and answers allow, ask or deny with the rule that decided and a reason to act on.

pub mod glob;
pub mod paths;
pub mod policy;
pub mod shell;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use paths::{Paths, Place};
use policy::Judge;

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

/// One rule that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub decision: Decision,
    pub rule: String,
    pub reason: String,
}

/// The answer for one tool call: the most restrictive finding decides.
#[derive(Debug, Clone, Serialize)]
pub struct GuardResult {
    pub decision: Decision,
    pub rule: String,
    pub reason: String,
    pub findings: Vec<Finding>,
}

impl GuardResult {
    fn from_findings(mut findings: Vec<Finding>) -> GuardResult {
        findings.dedup();
        // The first of the most restrictive: rules that know the command best report first.
        let top = findings
            .iter()
            .fold(None::<&Finding>, |best, f| match best {
                Some(b) if b.decision >= f.decision => Some(b),
                _ => Some(f),
            })
            .cloned();
        match top {
            Some(f) if f.decision != Decision::Allow => GuardResult {
                decision: f.decision,
                rule: f.rule,
                reason: f.reason,
                findings,
            },
            Some(f) => GuardResult {
                decision: Decision::Allow,
                rule: f.rule,
                reason: f.reason,
                findings,
            },
            None => GuardResult {
                decision: Decision::Allow,
                rule: "default-allow".into(),
                reason: "no rule forbids it".into(),
                findings,
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
            }],
        }
    }

    /// The one-line message an agent (and a person) sees.
    pub fn message(&self) -> String {
        format!(
            "Forge guard {} [{}]: {}",
            self.decision.as_str(),
            self.rule,
            self.reason
        )
    }
}

/// `guard:` in `.forge/config.yaml`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GuardConfig {
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

/// A project rule. Every condition given must hold; at least one is required.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// A name for messages; defaults to `project-rule-<n>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub decision: Decision,
    pub reason: String,
    /// The program (base name), after wrappers such as `sudo` or `env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Arguments that must all be present (globs with `*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// A path glob, relative to the repository root, matched against the files the call writes
    /// (or reads, for read tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Tool names the rule applies to (`Bash`, `Write`, `Edit`, `Read`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<OneOrMany>,
    /// Default rule ids this allow rule relaxes. A project rule can relax a default only by
    /// naming it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relaxes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// By hand rather than `#[serde(untagged)]`, which buffers every value: the hook reads up to
/// thousands of rules per tool call.
impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a tool name or a list of tool names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<OneOrMany, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<String>()? {
                    v.push(x);
                }
                Ok(OneOrMany::Many(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl OneOrMany {
    fn contains(&self, s: &str) -> bool {
        match self {
            OneOrMany::One(x) => x == s,
            OneOrMany::Many(v) => v.iter().any(|x| x == s),
        }
    }
}

impl GuardConfig {
    /// Checks the rules; the message names the key.
    pub fn validate(&self) -> std::result::Result<(), String> {
        for (i, r) in self.rules.iter().enumerate() {
            let key = format!("guard.rules[{i}]");
            if r.program.is_none() && r.path.is_none() && r.tool.is_none() {
                return Err(format!(
                    "`{key}` matches nothing: give at least one of `program`, `path`, `tool`"
                ));
            }
            if !r.args.is_empty() && r.program.is_none() {
                return Err(format!("`{key}.args` needs `program`"));
            }
            if !r.relaxes.is_empty() && r.decision != Decision::Allow {
                return Err(format!(
                    "`{key}.relaxes` only makes sense with `decision: allow`"
                ));
            }
            for id in &r.relaxes {
                if !policy::DEFAULT_RULES.iter().any(|(d, _, _)| d == id) {
                    return Err(format!(
                        "`{key}.relaxes`: `{id}` is not a default rule; see `forge guard rules` for the ids"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The phase of a running slice, from the run state (`forge run` writes it).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Phase {
    pub run: String,
    pub slice: String,
    /// `red` or `green`.
    pub phase: String,
    pub test_areas: Vec<String>,
    pub code_areas: Vec<String>,
    /// The tests verified red, which green may not touch.
    pub red_tests: Vec<String>,
    /// The answer file the current agent writes (planner, verifier, coverage reviewer),
    /// repository-relative.
    #[serde(default)]
    pub output: Option<String>,
}

/// The run state fields the guard reads: `.tmp/.forge/active-run` names the run, and its
/// `.tmp/.forge/runs/<slug>/state.json` has `current: {slice, phase}` and the slices.
#[derive(Deserialize)]
struct RunState {
    #[serde(default)]
    current: Option<Current>,
    #[serde(default)]
    slices: Vec<SliceState>,
}

#[derive(Deserialize)]
struct Current {
    slice: String,
    phase: String,
    #[serde(default)]
    red_tests: Vec<String>,
    #[serde(default)]
    output: Option<String>,
}

#[derive(Deserialize)]
struct SliceState {
    id: String,
    #[serde(default)]
    test_areas: Vec<String>,
    #[serde(default)]
    code_areas: Vec<String>,
}

/// The phase of the active run, if a run is in its red or green phase. A run state that exists
/// but cannot be read is an error: the guard then fails closed.
pub fn load_phase(root: &Path) -> std::result::Result<Option<Phase>, String> {
    let tmp = root.join(crate::repo::TMP_DIR);
    let slug = match std::fs::read_to_string(tmp.join("active-run")) {
        Ok(s) => s.trim().to_string(),
        Err(_) => return Ok(None),
    };
    if slug.is_empty() {
        return Ok(None);
    }
    // A run no `forge run` is driving (killed, or stopped without cleaning up) enforces no
    // phase: the run holds its folder's lock for as long as it drives agents.
    let run_dir = tmp.join("runs").join(&slug);
    if run_dir.is_dir() && matches!(crate::state::try_lock_dir(&run_dir), Ok(Some(_))) {
        return Ok(None);
    }
    let path = run_dir.join("state.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let state: RunState = serde_json::from_str(&text)
        .map_err(|e| format!("{} does not parse: {e}", path.display()))?;
    let Some(cur) = state.current else {
        return Ok(None);
    };
    // `final` is Forge committing: no agent runs then.
    if !matches!(
        cur.phase.as_str(),
        "plan" | "red" | "verify" | "review" | "green"
    ) {
        return Ok(None);
    }
    if cur.phase == "plan" {
        return Ok(Some(Phase {
            run: slug,
            slice: String::new(),
            phase: cur.phase,
            output: cur.output,
            ..Phase::default()
        }));
    }
    let slice = state
        .slices
        .iter()
        .find(|s| s.id == cur.slice)
        .ok_or_else(|| {
            format!(
                "{}: current slice `{}` is not among its slices",
                path.display(),
                cur.slice
            )
        })?;
    Ok(Some(Phase {
        run: slug,
        slice: cur.slice,
        phase: cur.phase,
        test_areas: slice.test_areas.clone(),
        code_areas: slice.code_areas.clone(),
        red_tests: cur.red_tests,
        output: cur.output,
    }))
}

/// A tool call as the guard sees it, whatever the agent calls its tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// A shell command line.
    Shell(String),
    /// Files written (Write, Edit, MultiEdit, NotebookEdit, apply_patch; Gemini write_file,
    /// replace).
    Write(Vec<String>),
    /// Files or folders read (Read, Grep, Glob, LS; Gemini read_file, …).
    Read(Vec<String>),
    /// A tool with no file or shell effect Forge judges (web search, todo lists, …).
    Other,
}

/// The canonical tool name used by project rules (`tool: Write`).
pub fn canonical_tool(name: &str) -> &str {
    match name {
        "Bash" | "run_shell_command" | "shell" | "exec_command" | "local_shell" => "Bash",
        "Write" | "write_file" | "create_file" => "Write",
        "Edit" | "replace" | "edit_file" | "MultiEdit" | "apply_patch" => "Edit",
        "NotebookEdit" => "NotebookEdit",
        "Read" | "read_file" | "read_many_files" => "Read",
        "Grep" | "grep_search" | "search_file_content" => "Grep",
        "Glob" | "glob" => "Glob",
        "LS" | "list_directory" => "LS",
        other => other,
    }
}

/// Reads the tool input the way each agent writes it. Input Forge cannot understand for a tool
/// it must judge is an error (the caller denies).
pub fn classify_tool(
    name: &str,
    input: &serde_json::Value,
) -> std::result::Result<ToolCall, String> {
    let field = |keys: &[&str]| -> Option<String> {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string))
    };
    match canonical_tool(name) {
        "Bash" => {
            let cmd = field(&["command", "cmd"]).or_else(|| {
                // Codex's shell tool may send argv as an array.
                input.get("command").and_then(|v| v.as_array()).map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(shell_quote)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            });
            cmd.map(ToolCall::Shell)
                .ok_or_else(|| format!("{name} input has no `command` string"))
        }
        "Write" | "Edit" | "NotebookEdit" => {
            if name == "apply_patch" {
                let patch = field(&["command", "patch", "input"])
                    .ok_or_else(|| "apply_patch input has no patch text".to_string())?;
                return Ok(ToolCall::Write(patch_paths(&patch)));
            }
            let p = field(&[
                "file_path",
                "path",
                "notebook_path",
                "absolute_path",
                "filePath",
            ])
            .ok_or_else(|| format!("{name} input has no `file_path`"))?;
            Ok(ToolCall::Write(vec![p]))
        }
        "Read" | "Grep" | "Glob" | "LS" => {
            let mut paths: Vec<String> = [
                "file_path",
                "path",
                "absolute_path",
                "dir_path",
                "notebook_path",
            ]
            .iter()
            .filter_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string))
            .collect();
            if let Some(arr) = input.get("paths").and_then(|v| v.as_array()) {
                paths.extend(arr.iter().filter_map(|v| v.as_str()).map(str::to_string));
            }
            Ok(ToolCall::Read(paths))
        }
        _ => Ok(ToolCall::Other),
    }
}

/// Files named by a Codex `apply_patch` envelope.
fn patch_paths(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
            .map(|s| s.trim().to_string())
        })
        .collect()
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The guard for one repository: paths, project rules and the current phase.
pub struct Guard {
    pub paths: Paths,
    rules: Vec<RuleConfig>,
    phase: Option<Phase>,
    /// The budget limits from the same config, so the hook checks spend without loading it
    /// twice.
    pub budget: crate::budget::BudgetConfig,
}

impl Guard {
    pub fn new(
        root: &Path,
        home: &Path,
        config: Option<&GuardConfig>,
        phase: Option<Phase>,
    ) -> Guard {
        Guard::with_rules(
            root,
            home,
            config.map(|c| c.rules.clone()).unwrap_or_default(),
            phase,
        )
    }

    fn with_rules(root: &Path, home: &Path, rules: Vec<RuleConfig>, phase: Option<Phase>) -> Guard {
        let mut paths = Paths::new(root, home);
        paths.run_output = phase
            .as_ref()
            .and_then(|p| p.output.as_ref())
            .map(|o| paths.root.join(o));
        Guard {
            paths,
            rules,
            phase,
            budget: crate::budget::BudgetConfig::default(),
        }
    }

    /// The guard for the repository containing `cwd`: its `.forge/config.yaml` rules (a broken
    /// config is an error) and the active run's phase.
    pub fn for_cwd(cwd: &Path) -> Result<Guard> {
        if !cwd.is_absolute() {
            return Err(Error::usage(format!(
                "the folder {} is not an absolute path",
                cwd.display()
            )));
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/root"));
        let mut budget = crate::budget::BudgetConfig::default();
        let (root, config) = match crate::repo::Project::discover(cwd) {
            Ok(p) => {
                let c = crate::config::Config::load_cached(
                    &p.config_path(),
                    &p.tmp_dir().join("cache"),
                )?;
                budget = c.budget;
                (p.root, Some(c.guard))
            }
            Err(_) => (
                find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf()),
                None,
            ),
        };
        let phase = load_phase(&root).map_err(|message| Error::State {
            path: root.join(crate::repo::TMP_DIR).join("active-run"),
            message,
            recovery: "Fix or remove the run state (a person), then retry.".into(),
        })?;
        let mut g = Guard::with_rules(
            &root,
            &home,
            config.map(|c| c.rules).unwrap_or_default(),
            phase,
        );
        g.budget = budget;
        Ok(g)
    }

    pub fn sandboxed(self, _on: bool) -> Guard {
        self
    }

    pub fn check_command(&self, line: &str, cwd: &Path) -> GuardResult {
        let analysis = shell::analyze(line, cwd, &self.paths.home);
        let mut judge = Judge::new(&self.paths);
        judge.analysis(&analysis);
        let written = std::mem::take(&mut judge.written);
        let mut findings = judge.findings;
        self.phase_scope(&written, &mut findings);
        self.project_rules("Bash", Some(&analysis), &written, &[], &mut findings);
        GuardResult::from_findings(findings)
    }

    pub fn check_tool(&self, tool: &str, input: &serde_json::Value, cwd: &Path) -> GuardResult {
        let call = match classify_tool(tool, input) {
            Ok(c) => c,
            Err(e) => {
                return GuardResult::deny(
                    "malformed-input",
                    format!("{e}; Forge denies what it cannot read"),
                );
            }
        };
        match call {
            ToolCall::Shell(line) => self.check_command(&line, cwd),
            ToolCall::Write(files) => {
                let mut judge = Judge::new(&self.paths);
                for f in &files
                    .iter()
                    .map(|f| self.expand_home(f))
                    .collect::<Vec<_>>()
                {
                    let w = shell::Word::lit(f.clone());
                    judge.write(
                        &policy::Target {
                            word: &w,
                            cwd: Some(cwd),
                        },
                        "edits",
                    );
                }
                let written = std::mem::take(&mut judge.written);
                let mut findings = judge.findings;
                self.phase_scope(&written, &mut findings);
                self.project_rules(canonical_tool(tool), None, &written, &[], &mut findings);
                GuardResult::from_findings(findings)
            }
            ToolCall::Read(files) => {
                let mut judge = Judge::new(&self.paths);
                let mut read = Vec::new();
                for f in &files
                    .iter()
                    .map(|f| self.expand_home(f))
                    .collect::<Vec<_>>()
                {
                    let w = shell::Word::lit(f.clone());
                    judge.read(&policy::Target {
                        word: &w,
                        cwd: Some(cwd),
                    });
                    read.push(self.paths.resolve(f, cwd));
                }
                let mut findings = judge.findings;
                self.project_rules(canonical_tool(tool), None, &[], &read, &mut findings);
                GuardResult::from_findings(findings)
            }
            ToolCall::Other => {
                let mut findings = Vec::new();
                self.project_rules(canonical_tool(tool), None, &[], &[], &mut findings);
                GuardResult::from_findings(findings)
            }
        }
    }

    /// Tool paths are not shell words: an agent that writes `~/.bashrc` means the home folder.
    fn expand_home(&self, f: &str) -> String {
        match f.strip_prefix("~/") {
            Some(rest) => self.paths.home.join(rest).display().to_string(),
            None if f == "~" => self.paths.home.display().to_string(),
            None => f.to_string(),
        }
    }

    fn phase_scope(&self, written: &[PathBuf], findings: &mut Vec<Finding>) {
        let Some(ph) = &self.phase else { return };
        for p in written {
            let Place::InRepo(rel) = self.paths.place(p) else {
                continue;
            };
            let in_tests = ph.test_areas.iter().any(|g| glob::matches(g, &rel));
            if matches!(ph.phase.as_str(), "plan" | "verify" | "review") {
                if self.paths.run_output.as_deref() == Some(p.as_path()) {
                    continue;
                }
                let role = match ph.phase.as_str() {
                    "plan" => "planning",
                    "verify" => "the verifier's check",
                    _ => "the coverage review",
                };
                findings.push(Finding {
                    decision: Decision::Deny,
                    rule: "phase-read-only".into(),
                    reason: format!(
                        "run `{}` is in {role}, which is read-only: do not change {rel}; write only your answer to {}",
                        ph.run,
                        ph.output.as_deref().unwrap_or("$FORGE_OUTPUT")
                    ),
                });
                continue;
            }
            let is_red_test = ph
                .red_tests
                .iter()
                .any(|t| t.trim_start_matches("./") == rel);
            if ph.phase == "red" && !in_tests {
                findings.push(Finding {
                    decision: Decision::Deny,
                    rule: "phase-red-scope".into(),
                    reason: format!(
                        "run `{}` slice `{}` is in its red phase: only test files may change ({}), not {rel}",
                        ph.run,
                        ph.slice,
                        ph.test_areas.join(", ")
                    ),
                });
            }
            if ph.phase == "green" {
                let in_code = ph.code_areas.iter().any(|g| glob::matches(g, &rel));
                if is_red_test || in_tests || !in_code {
                    findings.push(Finding {
                        decision: Decision::Deny,
                        rule: "phase-green-scope".into(),
                        reason: format!(
                            "run `{}` slice `{}` is in its green phase: make the test pass by changing code ({}), not {rel}",
                            ph.run,
                            ph.slice,
                            ph.code_areas.join(", ")
                        ),
                    });
                }
            }
        }
    }

    fn project_rules(
        &self,
        tool: &str,
        analysis: Option<&shell::Analysis>,
        written: &[PathBuf],
        read: &[PathBuf],
        findings: &mut Vec<Finding>,
    ) {
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(t) = &r.tool
                && !t.contains(tool)
            {
                continue;
            }
            if let Some(prog) = &r.program {
                let Some(a) = analysis else { continue };
                let hit = a.invocations.iter().any(|inv| {
                    inv.name() == Some(prog.as_str())
                        && r.args
                            .iter()
                            .all(|pat| inv.lit_args().flatten().any(|x| glob::matches_arg(pat, x)))
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
                        Place::RepoRoot => glob::matches(pat, ""),
                        Place::InRepo(rel) => glob::matches(pat, &rel),
                        _ => glob::matches(pat, &p.to_string_lossy()),
                    });
                if !hit {
                    continue;
                }
            }
            let id = r.id.clone().unwrap_or_else(|| format!("project-rule-{i}"));
            if !r.relaxes.is_empty() {
                findings.retain(|f| !r.relaxes.contains(&f.rule));
            }
            findings.push(Finding {
                decision: r.decision,
                rule: id,
                reason: r.reason.clone(),
            });
        }
    }
}

fn find_git_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests;
