//! The `verify:` section of `.forge/config.yaml`: the commands verify runs and how each one's
//! report is judged. A leaf: it imports only serde, std and the report format enum, and checks
//! its own keys (`src/config.rs` composes it).

use serde::{Deserialize, Serialize};

use crate::report::Format;

/// Seconds a command may run before its whole process group is killed.
pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyConfig {
    pub commands: Vec<VerifyCommand>,
    /// Whether `forge verify` and the Stop hook run the commands inside the kernel sandbox
    /// (`auto`, `require`, `off`); unset: as `sandbox.mode` says. The code under test is often an
    /// agent's: in the sandbox it cannot plant a git hook, rewrite Forge's state or the agents'
    /// settings, or write the home folder when a person verifies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::Mode>,
}

impl VerifyConfig {
    /// The sandbox mode verify runs in, given the project's `sandbox.mode`.
    pub fn sandbox_mode(&self, project_mode: crate::sandbox::Mode) -> crate::sandbox::Mode {
        self.sandbox.unwrap_or(project_mode)
    }
}

/// What to run and how to read its report: everything that runs a command (verify, and
/// `forge run`'s checks) needs exactly this.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    pub name: String,
    pub run: String,
    /// Seconds before the command's whole process group is killed.
    #[serde(default = "default_timeout")]
    pub timeout: u64,
    #[serde(default)]
    pub report: Format,
    /// The report file the command writes (JUnit XML, Jest/Vitest JSON), relative to the root.
    #[serde(default)]
    pub report_path: Option<String>,
}

/// One `verify.commands` entry: the command, and what verify accepts as evidence from it.
///
/// It dereferences to its [`CommandConfig`], so code that only runs commands (`forge run`'s
/// milestone checks, its prompts) reads `c.name`, `c.run` as before and never sees verify's
/// judging keys.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(from = "CommandKeys", into = "CommandKeys")]
pub struct VerifyCommand {
    pub command: CommandConfig,
    /// A command whose report format names cases normally needs at least one case to pass
    /// ("no test case in the report"); `allow_empty: true` accepts a run with none.
    pub allow_empty: bool,
}

impl std::ops::Deref for VerifyCommand {
    type Target = CommandConfig;
    fn deref(&self) -> &CommandConfig {
        &self.command
    }
}

impl std::ops::DerefMut for VerifyCommand {
    fn deref_mut(&mut self) -> &mut CommandConfig {
        &mut self.command
    }
}

/// The keys of a command as written in YAML, flat, each known by name (an unknown key is a
/// typo that would silently change what is judged).
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct CommandKeys {
    name: String,
    run: String,
    #[serde(default = "default_timeout")]
    timeout: u64,
    #[serde(default)]
    report: Format,
    #[serde(default)]
    report_path: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    allow_empty: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl From<CommandKeys> for VerifyCommand {
    fn from(k: CommandKeys) -> Self {
        VerifyCommand {
            command: CommandConfig {
                name: k.name,
                run: k.run,
                timeout: k.timeout,
                report: k.report,
                report_path: k.report_path,
            },
            allow_empty: k.allow_empty,
        }
    }
}

impl From<VerifyCommand> for CommandKeys {
    fn from(v: VerifyCommand) -> Self {
        let c = v.command;
        CommandKeys {
            name: c.name,
            run: c.run,
            timeout: c.timeout,
            report: c.report,
            report_path: c.report_path,
            allow_empty: v.allow_empty,
        }
    }
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

impl VerifyConfig {
    /// The names, in order, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.commands.iter().map(|c| c.name.as_str()).collect()
    }

    /// Checks what serde cannot; the message names the key and how to fix it.
    pub fn validate(&self) -> Result<(), String> {
        if self.commands.is_empty() {
            return Err("`verify.commands` is empty: list at least one command (e.g. `- name: test` / `run: cargo test`)".into());
        }
        let mut names = std::collections::HashSet::new();
        for (i, c) in self.commands.iter().enumerate() {
            let key = format!("verify.commands[{i}]");
            if c.name.trim().is_empty() {
                return Err(format!(
                    "`{key}.name` is empty: give the command a short name like `test`"
                ));
            }
            if c.name.starts_with('-') {
                return Err(format!(
                    "`{key}.name` (`{}`) must not start with `-`: `forge verify NAME` selects commands by it",
                    c.name
                ));
            }
            if !names.insert(c.name.as_str()) {
                return Err(format!(
                    "`{key}.name`: `{}` is used twice; names must be unique",
                    c.name
                ));
            }
            if c.run.trim().is_empty() {
                return Err(format!(
                    "`{key}.run` is empty: give the shell command to run"
                ));
            }
            if c.timeout == 0 {
                return Err(format!("`{key}.timeout` must be at least 1 (seconds)"));
            }
            if c.report == Format::Junit && c.report_path.is_none() {
                return Err(format!(
                    "`{key}.report_path` is required with `report: junit`: set it to the XML file the command writes"
                ));
            }
            if let Some(p) = &c.report_path
                && !c.report.reads_file()
                && c.report != Format::Auto
            {
                return Err(format!(
                    "`{key}.report_path` ({p}) is set but `report: {}` is read from the command's output; remove it or use a file format (junit, jest-json, vitest-json, go-json, tap)",
                    c.report
                ));
            }
            if c.allow_empty && c.report == Format::None {
                return Err(format!(
                    "`{key}.allow_empty` has no effect with `report: none` (no report is read); remove it"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<VerifyConfig, String> {
        let c: VerifyConfig = serde_saphyr::from_str(yaml).map_err(|e| e.to_string())?;
        c.validate()?;
        Ok(c)
    }

    #[test]
    fn keys_are_flat_strict_and_round_trip() {
        let c = parse("commands:\n  - {name: test, run: pytest -rA, report: pytest, allow_empty: true}\n  - {name: lint, run: ruff .}\n").unwrap();
        assert!(c.commands[0].allow_empty && !c.commands[1].allow_empty);
        // Everything that runs a command sees the plain CommandConfig.
        let cmd: &CommandConfig = &c.commands[0];
        assert_eq!((cmd.name.as_str(), cmd.report), ("test", Format::Pytest));
        let json = serde_json::to_string(&c).unwrap();
        let back: VerifyConfig = serde_json::from_str(&json).unwrap();
        assert!(back.commands[0].allow_empty);
        assert!(!json.contains("\"allow_empty\":false"), "{json}");
        let e = parse("commands:\n  - {name: t, run: x, allow_emtpy: true}\n").unwrap_err();
        assert!(e.contains("allow_emtpy"), "{e}");
        let e = parse("commands:\n  - {name: '-t', run: x}\n").unwrap_err();
        assert!(e.contains("verify.commands[0].name"), "{e}");
    }
}
