//! Agents are commands. Each role (`planner`, `red`, `verifier`, `green`, `coverage_reviewer`)
//! names a shell command in `.forge/config.yaml`; Forge renders the role's prompt into a file and
//! runs the command in the repository root with the `FORGE_*` variables, a timeout, and its
//! output captured to the run folder. Any program can play a role — Claude Code, Codex, a script.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::budget::{self, BudgetConfig, Spend};
use crate::error::{Error, Result};
use crate::exec::{self, ExecOptions, ExecOutcome};
use crate::repo::Project;

pub const DEFAULT_AGENT_TIMEOUT_SECS: u64 = 1800;
/// Bytes of an agent's output kept in memory (for the status and the next prompt).
const TAIL_BYTES: usize = 32 * 1024;

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
    let opts = ExecOptions {
        cwd: project.root.clone(),
        timeout: Duration::from_secs(agent.timeout),
        log_path: run_dir.join("agents").join(format!("{stem}.log")),
        tail_bytes: TAIL_BYTES,
        env,
    };
    if let Some(d) = call.output.parent() {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::io(format!("cannot create {}", d.display()), e))?;
    }
    let outcome = exec::run_shell(command, &opts)?;
    let spend = read_spend(&outcome.log_path, budget);
    Ok(Finished {
        outcome,
        prompt_file,
        spend,
    })
}

/// The cost an agent's output carries: a `claude -p --output-format json` result, a `gemini
/// --output-format json` result, or `codex exec --json` events. Output that carries none costs
/// nothing here (a hook-recorded transcript may still count it).
pub fn read_spend(log: &Path, config: &BudgetConfig) -> Vec<Spend> {
    // Agent logs are bounded by what agents print; a 64 MiB cap keeps a runaway printer cheap.
    let Ok(meta) = std::fs::metadata(log) else {
        return Vec::new();
    };
    if meta.len() > 64 * 1024 * 1024 {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    spend_from_text(&text, config)
}

pub fn spend_from_text(text: &str, config: &BudgetConfig) -> Vec<Spend> {
    if text.contains("\"turn.completed\"") {
        return budget::from_codex_jsonl(text, None, config);
    }
    // A whole-output JSON document (claude -p / gemini), or one line of it among lines of
    // stderr, the last one first.
    let trimmed = text.trim();
    let lines = trimmed
        .lines()
        .rev()
        .map(str::trim)
        .filter(|l| l.starts_with('{') && l.ends_with('}'));
    for c in std::iter::once(trimmed).chain(lines) {
        if let Ok(v) = serde_json::from_str::<Value>(c) {
            if let Ok(s) = budget::from_claude_json(&v) {
                return s;
            }
            if let Ok(s) = budget::from_gemini_json(&v, config) {
                return s;
            }
        }
    }
    Vec::new()
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

/// The agent's structured answer in `$FORGE_OUTPUT`, as JSON.
pub fn read_output(path: &Path) -> std::result::Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "the agent wrote no answer to $FORGE_OUTPUT ({})",
                path.display()
            )
        } else {
            format!("cannot read {}: {e}", path.display())
        }
    })?;
    if bytes.len() > 4 * 1024 * 1024 {
        return Err(format!("{} is over 4 MiB", path.display()));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))
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
        assert!(s.iter().any(|x| x.usd.unwrap_or(0.0) > 0.0));
        // Real `codex exec --json` events.
        let codex = std::fs::read_to_string(format!("{fix}/codex-exec.jsonl")).unwrap();
        let s = spend_from_text(&codex, &cfg);
        assert!(s.iter().map(|x| x.tokens.total()).sum::<u64>() > 0);
        // Plain text costs nothing.
        assert!(spend_from_text("edited tests/cart_test.sh\n", &cfg).is_empty());
    }
}
