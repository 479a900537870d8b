//! `forge verify`: run every configured command, parse its test report, check the change's
//! scenario coverage, and reach one verdict. The breaker (see [`crate::breaker`]) then decides
//! the exit code when a change is named.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{CommandConfig, Config};
use crate::error::{Error, Result};
use crate::exec::{self, ExecOptions};
use crate::repo::{Project, validate_change_name};
use crate::report::{self, Format, Report, TestCase};
use crate::spec::{self, Coverage, ScenarioStatus};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "PASS")]
    Pass,
    #[serde(rename = "FAIL")]
    Fail,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
        }
    }
}

/// Bytes of each command's output kept in memory for the report; the rest is in its log.
const TAIL_BYTES: usize = 16 * 1024;
/// Logs kept under `.tmp/.forge/logs/`.
const KEEP_LOGS: usize = 50;
/// Failing cases listed per command in the text report (all are in `--json`).
const SHOW_FAILING: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct CommandResult {
    pub name: String,
    pub run: String,
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout_secs: u64,
    pub duration_ms: u64,
    pub output_bytes: u64,
    /// The parsed format (`null` when nothing was recognised).
    pub report_format: Option<Format>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_error: Option<String>,
    pub log: String,
    /// Whether this command, on its own, passed.
    pub ok: bool,
    #[serde(skip)]
    pub report: Report,
    #[serde(skip)]
    pub tail: String,
    /// The whole output as Forge read it from the pipe (when it fit in memory): what a gate
    /// quotes from, never the log read back.
    #[serde(skip)]
    pub output: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TestSummary {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    /// The first build/compile/import/collection error, or `null`.
    pub infra_error: Option<String>,
    pub failing: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    pub commands: Vec<CommandResult>,
    pub tests: TestSummary,
    pub cases: Vec<TestCase>,
    pub scenarios: Vec<ScenarioStatus>,
    /// Why the verdict is FAIL, one short line each.
    pub reasons: Vec<String>,
}

/// Runs a verification. `change` limits scenario coverage to that change (all changes when
/// `None`); it must exist.
pub fn run(project: &Project, config: &Config, change: Option<&str>) -> Result<VerifyReport> {
    if let Some(c) = change {
        validate_change_name(c)?;
        let known = spec::list_changes(project)?;
        if !known.iter().any(|k| k.name == c) {
            let names: Vec<&str> = known.iter().map(|k| k.name.as_str()).collect();
            return Err(Error::usage(format!(
                "no change named `{c}` (known: {}); create it with `forge change new {c}`",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    let logs = project.logs_dir();
    let mut commands = Vec::new();
    for (i, cmd) in config.verify.commands.iter().enumerate() {
        commands.push(run_command(
            project,
            &logs,
            Some(KEEP_LOGS),
            &format!("`verify.commands[{i}].run` in .forge/config.yaml"),
            cmd,
        )?);
    }

    let cases: Vec<TestCase> = commands
        .iter()
        .flat_map(|c| c.report.cases.iter().cloned())
        .collect();
    let mut tests = TestSummary::default();
    for c in &commands {
        let counts = c.report.counts();
        tests.passed += counts.passed;
        tests.failed += counts.failed;
        tests.skipped += counts.skipped;
        if tests.infra_error.is_none() {
            tests.infra_error = c.report.infra_error.clone();
        }
        tests
            .failing
            .extend(c.report.failing().map(|t| t.name.clone()));
    }

    let scenario_list = spec::scenarios(project, change)?;
    let scenarios = if scenario_list.is_empty() {
        Vec::new()
    } else {
        let markers = spec::scan_markers(project)?;
        spec::coverage(&scenario_list, &markers, &cases)
    };

    let mut reasons = Vec::new();
    for c in &commands {
        if c.timed_out {
            reasons.push(format!("{}: timed out after {} s", c.name, c.timeout_secs));
        } else if c.exit_code != Some(0) {
            reasons.push(format!("{}: {}", c.name, exit_text(c)));
        }
        let failed = c.report.counts().failed;
        if failed > 0 {
            reasons.push(format!("{}: {failed} failing test case(s)", c.name));
        }
        if c.report.infra_error.is_some() {
            reasons.push(format!("{}: build/compile/import/setup error", c.name));
        }
        if let Some(e) = &c.report_error {
            reasons.push(format!("{}: {e}", c.name));
        }
        if let Some(e) = &c.report.incomplete {
            reasons.push(format!("{}: {e}", c.name));
        }
    }
    for s in &scenarios {
        match s.status {
            Coverage::Covered => {}
            Coverage::Failing => reasons.push(format!("scenario {}/{} is failing", s.change, s.id)),
            Coverage::Uncovered => {
                reasons.push(format!("scenario {}/{} is uncovered", s.change, s.id))
            }
        }
    }
    let verdict = if reasons.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    Ok(VerifyReport {
        verdict,
        change: change.map(str::to_string),
        commands,
        tests,
        cases,
        scenarios,
        reasons,
    })
}

/// Output kept in memory and parsed from there, up to this size; a longer output is parsed by
/// streaming its log (verify keeps its memory small whatever a command prints).
pub const CAPTURE_BYTES: usize = 8 * 1024 * 1024;
/// The same for a run's checks, whose longer output is no evidence at all ([`Place::strict`]).
pub const STRICT_CAPTURE_BYTES: usize = 64 * 1024 * 1024;

/// Where and how a command runs: verify runs it in the project; `forge run` runs its checks in
/// the candidate tree's checkout, with an environment no agent prepared.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// The folder it runs in (default: the project root).
    pub cwd: Option<std::path::PathBuf>,
    pub env: Vec<(String, String)>,
    pub env_remove: Vec<String>,
    /// Output that did not fit in memory fails the report instead of being read back from the
    /// log.
    pub strict: bool,
}

/// Runs one command and parses its report: verify's unit of work, which `forge run` reuses for
/// its focused command and related checks. `logs` is the folder for its output; with `keep`,
/// the folder is held to that many logs (verify's), without it every log stays (a run's logs
/// are the evidence its gate results point at). `origin` names where the command is set, for
/// the person to fix it.
///
/// The report is parsed from the bytes Forge read from the command's pipe, and everything the
/// command started is killed when it ends (its process group, and what left it).
pub fn run_command(
    project: &Project,
    logs: &Path,
    keep: Option<usize>,
    origin: &str,
    cmd: &CommandConfig,
) -> Result<CommandResult> {
    run_command_at(project, &Place::default(), logs, keep, origin, cmd)
}

/// [`run_command`] at `place`.
pub fn run_command_at(
    project: &Project,
    place: &Place,
    logs: &Path,
    keep: Option<usize>,
    origin: &str,
    cmd: &CommandConfig,
) -> Result<CommandResult> {
    let cwd = place.cwd.clone().unwrap_or_else(|| project.root.clone());
    // A report left by an earlier run must never pass for this run's.
    let report_file = cmd.report_path.as_ref().map(|p| cwd.join(p));
    if let Some(f) = &report_file {
        match std::fs::remove_file(f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::io(
                    format!("cannot remove the old report {}", f.display()),
                    e,
                ));
            }
        }
    }
    let log_path = exec::unique_log_path(logs, &cmd.name);
    if let Some(keep) = keep {
        exec::recycle_log(logs, keep, &log_path);
    }
    let mut opts = ExecOptions::new(cwd, Duration::from_secs(cmd.timeout), log_path, TAIL_BYTES);
    opts.env = vec![("FORGE_VERIFY".into(), "1".into())];
    opts.env.extend(place.env.iter().cloned());
    opts.env_remove = place.env_remove.clone();
    opts.capture = if place.strict {
        STRICT_CAPTURE_BYTES
    } else {
        CAPTURE_BYTES
    };
    opts.contain = true;
    let out = exec::run_shell(&cmd.run, &opts)?;
    let parsed = match (&report_file, &out.captured) {
        (Some(f), _) => report::parse_file(f, cmd.report),
        (None, Some(bytes)) => report::parse_bytes(bytes, cmd.report),
        (None, None) if place.strict => Err(report::ReportError::Malformed {
            path: project.rel(&out.log_path),
            format: cmd.report,
            message: format!(
                "the output is over {} MiB: Forge parses only what it read from the pipe",
                STRICT_CAPTURE_BYTES / (1024 * 1024)
            ),
        }),
        (None, None) => report::parse_output(&out.log_path, cmd.report),
    };
    let (report, report_error) = match parsed {
        Ok(r) => (r, None),
        Err(e) => (Report::default(), Some(e.to_string())),
    };
    let report_error = report_error.or_else(|| {
        // A runner that was asked for and printed nothing recognisable.
        (cmd.report != Format::Auto
            && cmd.report != Format::None
            && report.cases.is_empty()
            && report.counts() == report::Counts::default()
            && report.infra_error.is_none()
            && !out.success())
        .then(|| {
            let mut m = format!("no {} results found in the output", cmd.report);
            if let Some(n) = report.notes.first() {
                m = n.clone();
            }
            m
        })
    });
    let tail = String::from_utf8_lossy(&out.tail).into_owned();
    let mut result = CommandResult {
        name: cmd.name.clone(),
        run: cmd.run.clone(),
        exit_code: out.exit_code,
        signal: out.signal,
        timed_out: out.timed_out,
        timeout_secs: cmd.timeout,
        duration_ms: out.duration.as_millis() as u64,
        output_bytes: out.output_bytes,
        report_format: report.format,
        report_error,
        log: project.rel(&out.log_path),
        ok: false,
        report,
        tail,
        output: out.captured.clone(),
    };
    result.ok = out.success()
        && result.report.counts().failed == 0
        && result.report.infra_error.is_none()
        && result.report.incomplete.is_none()
        && result.report_error.is_none();
    if result.exit_code == Some(127) {
        result.report_error = Some(format!("command not found — check {origin}"));
    }
    Ok(result)
}

/// How a command ended: `exit 3`, `killed by signal 9`.
pub fn exit_text(c: &CommandResult) -> String {
    match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "did not exit normally".to_string(),
    }
}

impl VerifyReport {
    /// The readable report, ending with the verdict line.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        let scope = match &self.change {
            Some(c) => format!("change \"{c}\""),
            None => "all changes".to_string(),
        };
        let _ = writeln!(
            o,
            "forge verify — {} command(s), {scope}",
            self.commands.len()
        );
        let width = self
            .commands
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(4);
        for c in &self.commands {
            let state = if c.ok { "ok  " } else { "FAIL" };
            let how = if c.timed_out {
                format!("timed out after {} s", c.timeout_secs)
            } else {
                exit_text(c)
            };
            let _ = writeln!(
                o,
                "  {:width$}  {state}  {how}  {:.2}s  $ {}",
                c.name,
                c.duration_ms as f64 / 1000.0,
                crate::text::clip(&c.run, 80),
            );
            let pad = " ".repeat(width + 4);
            let counts = c.report.counts();
            if let Some(f) = c.report.format
                && (counts != report::Counts::default() || c.report.infra_error.is_some())
            {
                let _ = writeln!(
                    o,
                    "{pad}{} passed, {} failed, {} skipped ({f})",
                    counts.passed, counts.failed, counts.skipped
                );
            }
            if let Some(e) = &c.report.infra_error {
                let _ = writeln!(
                    o,
                    "{pad}infrastructure error (build, compile, import or setup):"
                );
                for l in e.lines().take(8) {
                    let _ = writeln!(o, "{pad}  {}", crate::text::clip(l, 160));
                }
            }
            let failing: Vec<&TestCase> = c.report.failing().collect();
            for t in failing.iter().take(SHOW_FAILING) {
                let _ = writeln!(o, "{pad}FAILED {}", t.name);
                if let Some(m) = &t.message {
                    for l in m.lines().take(4) {
                        let _ = writeln!(o, "{pad}    {}", crate::text::clip(l, 160));
                    }
                }
            }
            if failing.len() > SHOW_FAILING {
                let _ = writeln!(
                    o,
                    "{pad}… and {} more failing (see --json or the log)",
                    failing.len() - SHOW_FAILING
                );
            }
            if let Some(e) = &c.report_error {
                let _ = writeln!(o, "{pad}report: {e}");
            }
            if let Some(e) = &c.report.incomplete {
                let _ = writeln!(o, "{pad}report: {e}");
            }
            for n in &c.report.notes {
                let _ = writeln!(o, "{pad}note: {n}");
            }
            if !c.ok && failing.is_empty() && c.report.infra_error.is_none() {
                let lines: Vec<&str> = c.tail.lines().filter(|l| !l.trim().is_empty()).collect();
                let start = lines.len().saturating_sub(6);
                if !lines.is_empty() {
                    let _ = writeln!(o, "{pad}last output:");
                }
                for l in &lines[start..] {
                    let _ = writeln!(
                        o,
                        "{pad}  {}",
                        crate::text::clip(&crate::text::strip_ansi(l), 160)
                    );
                }
            }
            if !c.ok {
                let _ = writeln!(o, "{pad}log: {}", c.log);
            }
        }
        if !self.scenarios.is_empty() {
            let n = |k: Coverage| self.scenarios.iter().filter(|s| s.status == k).count();
            let _ = writeln!(
                o,
                "Scenarios: {} covered, {} failing, {} uncovered",
                n(Coverage::Covered),
                n(Coverage::Failing),
                n(Coverage::Uncovered)
            );
            for s in &self.scenarios {
                let label = match s.status {
                    Coverage::Covered => "covered  ",
                    Coverage::Failing => "FAILING  ",
                    Coverage::Uncovered => "UNCOVERED",
                };
                let why = if s.status == Coverage::Covered {
                    String::new()
                } else {
                    format!(
                        " — {}",
                        s.evidence.first().map(String::as_str).unwrap_or("")
                    )
                };
                let _ = writeln!(o, "  {label} {}/{}{why}", s.change, s.id);
            }
        } else if let Some(c) = &self.change {
            let _ = writeln!(
                o,
                "Scenarios: none in change \"{c}\" (add `#### Scenario:` headings to its spec.md)"
            );
        }
        let _ = writeln!(o, "Verdict: {}", self.verdict.as_str());
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_serializes_as_contract_words() {
        assert_eq!(serde_json::to_string(&Verdict::Pass).unwrap(), "\"PASS\"");
        assert_eq!(serde_json::to_string(&Verdict::Fail).unwrap(), "\"FAIL\"");
    }
}
