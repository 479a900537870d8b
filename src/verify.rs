//! `forge verify`: run every configured command, parse its test report, check the change's
//! scenario coverage, and reach one verdict. The breaker (see [`crate::breaker`]) then decides
//! the exit code when a change is named.
//!
//! This module decides; it prints nothing. Progress goes to a [`Progress`] the caller passes
//! (the CLI draws it on the terminal), and the finished [`VerifyReport`] is rendered by
//! `render` (text), `ci` (GitHub annotations, JUnit XML) or serde (`--json`).

mod ci;
mod config;
mod render;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use ci::{github_annotations, junit_xml};
pub use config::{CommandConfig, DEFAULT_TIMEOUT_SECS, VerifyCommand, VerifyConfig};
pub use render::{Style, command_block, header, name_width};

use crate::error::{Error, Result};
use crate::exec::{self, ExecOptions};
use crate::repo::{Project, validate_change_name};
use crate::report::{self, Counts, Format, Report, TestCase};
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
/// One command's run, as verify judged it.
#[derive(Debug, Clone, Serialize)]
pub struct CommandResult {
    pub name: String,
    pub run: String,
    /// `null` when the command was killed by a signal or timed out.
    pub exit_code: Option<i32>,
    /// The signal that ended it, or `null`.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout_secs: u64,
    pub duration_ms: u64,
    pub output_bytes: u64,
    /// The parsed format (`null` when nothing was recognised or `report: none`).
    pub report_format: Option<Format>,
    /// Why the report could not be used (missing, malformed, no case), or `null`.
    pub report_error: Option<String>,
    /// Leaf test cases by outcome: what every gate counts.
    pub tests: Counts,
    /// The runner's own summary where it counts differently (parents of subtests: go `-json`,
    /// node's TAP trailer), or `null`.
    pub runner_summary: Option<Counts>,
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
    /// Cut short by a person's Ctrl-C: no verdict rests on it.
    #[serde(skip)]
    pub interrupted: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TestSummary {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub xfailed: u64,
    /// The first build/compile/import/collection error, or `null`.
    pub infra_error: Option<String>,
    pub failing: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub verdict: Verdict,
    pub change: Option<String>,
    pub commands: Vec<CommandResult>,
    /// Configured commands that were not selected (`forge verify NAME…`); scenario coverage is
    /// checked only when this is empty.
    pub not_run: Vec<String>,
    pub tests: TestSummary,
    pub cases: Vec<TestCase>,
    pub scenarios: Vec<ScenarioStatus>,
    /// Why the verdict is FAIL, one short line each.
    pub reasons: Vec<String>,
}

/// What to verify.
#[derive(Debug, Clone, Copy, Default)]
pub struct Request<'a> {
    /// Limits scenario coverage to that change (every change when `None`); it must exist.
    pub change: Option<&'a str>,
    /// Runs only the commands with these names (all when empty).
    pub only: &'a [String],
    /// Where the commands run: the project (`None`), or the session's sandbox (the Stop hook's).
    pub place: Option<&'a Place>,
}

/// Hears about each command as it starts and ends, so a person watching sees progress. Called
/// on the thread that runs the commands, in order.
pub trait Progress {
    /// `log` is where the command's output goes, relative to the project: a person can follow
    /// it while the command runs.
    fn started(&mut self, _cmd: &CommandConfig, _log: &str) {}
    fn finished(&mut self, _result: &CommandResult) {}
}

/// No progress to show (the hooks, tests).
pub struct Silent;
impl Progress for Silent {}

/// Runs a whole verification of `change` (or of every change) without progress.
pub fn run(project: &Project, config: &VerifyConfig, change: Option<&str>) -> Result<VerifyReport> {
    run_with(
        project,
        config,
        Request {
            change,
            only: &[],
            place: None,
        },
        &mut Silent,
    )
}

/// Runs a verification: the selected commands, then (when every command ran) the scenario
/// coverage, and the verdict.
pub fn run_with(
    project: &Project,
    config: &VerifyConfig,
    req: Request<'_>,
    progress: &mut dyn Progress,
) -> Result<VerifyReport> {
    let selected = select(config, req)?;
    if let Some(c) = req.change {
        check_change_exists(project, c)?;
    }
    let logs = project.logs_dir();
    let in_project = Place::default();
    let mut commands = Vec::new();
    let mut not_run = Vec::new();
    for (i, cmd) in config.commands.iter().enumerate() {
        if !selected[i] {
            not_run.push(cmd.name.clone());
            continue;
        }
        let log_path = exec::unique_log_path(&logs, &cmd.name);
        progress.started(cmd, &project.rel(&log_path));
        let mut result = run_command_logged(
            project,
            req.place.unwrap_or(&in_project),
            (&logs, &log_path),
            Some(KEEP_LOGS),
            &format!("`verify.commands[{i}].run` in .forge/config.yaml"),
            cmd,
        )?;
        if let Some(why) = missing_evidence(cmd.report, cmd.allow_empty, &result) {
            result.ok = false;
            result.report_error = Some(why);
        }
        progress.finished(&result);
        commands.push(result);
        // Ctrl-C: no verdict, so nothing for the caller to count or record.
        if crate::exec::interrupted() {
            return Err(Error::Interrupted {
                ran: commands.iter().filter(|c| !c.interrupted).count(),
                of: selected.iter().filter(|s| **s).count(),
            });
        }
    }

    let cases: Vec<TestCase> = commands
        .iter()
        .flat_map(|c| c.report.cases.iter().cloned())
        .collect();
    let mut tests = TestSummary::default();
    for c in &commands {
        tests.passed += c.tests.passed;
        tests.failed += c.tests.failed;
        tests.skipped += c.tests.skipped;
        tests.xfailed += c.tests.xfailed;
        if tests.infra_error.is_none() {
            tests.infra_error = c.report.infra_error.clone();
        }
        tests
            .failing
            .extend(c.report.failing().map(|t| t.name.clone()));
    }

    let scenarios = if not_run.is_empty() {
        let scenario_list = spec::scenarios(project, req.change)?;
        if scenario_list.is_empty() {
            Vec::new()
        } else {
            let markers = spec::scan_markers(project)?;
            let tested: Vec<spec::Tested<'_>> = commands
                .iter()
                .flat_map(|c| {
                    c.report.cases.iter().map(|case| spec::Tested {
                        format: c.report.format,
                        case,
                    })
                })
                .collect();
            spec::coverage(&scenario_list, &markers, &tested)
        }
    } else {
        Vec::new()
    };

    let mut reasons = Vec::new();
    for c in &commands {
        if c.timed_out {
            reasons.push(format!("{}: timed out after {} s", c.name, c.timeout_secs));
        } else if c.exit_code != Some(0) {
            reasons.push(format!("{}: {}", c.name, exit_text(c)));
        }
        if c.tests.failed > 0 {
            reasons.push(format!(
                "{}: {} failing test case(s)",
                c.name, c.tests.failed
            ));
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
        change: req.change.map(str::to_string),
        commands,
        not_run,
        tests,
        cases,
        scenarios,
        reasons,
    })
}

/// Which configured commands run. A partial run never counts for a change's breaker: a PASS of
/// the lint alone must not close a circuit the tests opened.
fn select(config: &VerifyConfig, req: Request<'_>) -> Result<Vec<bool>> {
    if req.only.is_empty() {
        return Ok(vec![true; config.commands.len()]);
    }
    let names = config.names();
    let unknown: Vec<&str> = req
        .only
        .iter()
        .map(String::as_str)
        .filter(|n| !names.contains(n))
        .collect();
    if !unknown.is_empty() {
        return Err(Error::usage(format!(
            "no verify command named {} in .forge/config.yaml; the commands are: {}",
            unknown
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            names.join(", ")
        )));
    }
    if let Some(c) = req.change {
        return Err(Error::usage(format!(
            "--change {c} counts whole verifications for the breaker: run `forge verify --change {c}` without command names, or drop --change to run only {}",
            req.only.join(", ")
        )));
    }
    Ok(config
        .commands
        .iter()
        .map(|c| req.only.iter().any(|n| *n == c.name))
        .collect())
}

/// Refuses a change that neither `.forge/changes/` nor an OpenSpec tree has.
pub fn check_change_exists(project: &Project, change: &str) -> Result<()> {
    validate_change_name(change)?;
    let known = spec::list_changes(project)?;
    if known.iter().any(|k| k.name == change) {
        return Ok(());
    }
    let names: Vec<&str> = known.iter().map(|k| k.name.as_str()).collect();
    Err(Error::usage(format!(
        "no change named `{change}` (known: {}); create it with `forge change new {change}`",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// Why a command that exited 0 is no evidence that its tests ran, or `None` when it is.
///
/// No evidence is no pass: a report format that names cases must name (or count) at least
/// one, or the run proved nothing — a module that calls `os._exit(0)` on import, a script that
/// returns early. `report: auto` that recognises no runner at all is treated the same way: a
/// CI gate must not pass silently on output it cannot read. `report: none` (a command that runs
/// no tests) and `allow_empty` opt out. A command that failed, or whose report is unreadable,
/// already fails for that reason.
///
/// `forge run`'s gates apply the same rule by calling this with the check's format and
/// `allow_empty = false` (or the verify command's own setting for milestone checks).
pub fn missing_evidence(
    report: Format,
    allow_empty: bool,
    result: &CommandResult,
) -> Option<String> {
    if report == Format::None
        || allow_empty
        || result.exit_code != Some(0)
        || result.timed_out
        || result.report.infra_error.is_some()
        || result.report.incomplete.is_some()
        || result.report_error.is_some()
        || result.report.has_cases()
    {
        return None;
    }
    Some(match result.report.format {
        Some(_) => "no test case in the report".to_string(),
        None => "no test case in the report: no test runner's output was recognised (name the runner with `report:`, or set `report: none` for a command that runs no tests)".to_string(),
    })
}

/// Output kept in memory and parsed from there, up to this size; a longer output is parsed by
/// streaming its log (verify keeps its memory small whatever a command prints).
pub const CAPTURE_BYTES: usize = 8 * 1024 * 1024;
/// The largest report file Forge reads (a runner's JUnit XML of a very large suite fits).
const REPORT_BYTES: u64 = 256 * 1024 * 1024;

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
    /// The kernel sandbox's launcher the command runs in (empty: none).
    pub wrap: Vec<std::ffi::OsString>,
    /// Where the command's report file (`report_path`) is found, when not under `cwd`: a check
    /// on an overlay writes it into the overlay's upper layer, which holds exactly what the
    /// check wrote.
    pub report_root: Option<std::path::PathBuf>,
}

/// Where verify runs the project's commands: inside `forge sandbox --profile session` where
/// [`crate::sandbox::walls`] says so — the project writable but Forge's state, git's hooks and
/// config and the agents' settings, and the home folder read-only, caches writable — else in
/// the project as it is.
pub fn walled_place(project: &Project, mode: crate::sandbox::Mode) -> Result<Place> {
    if !crate::sandbox::walls(mode, &project.config_path()).map_err(Error::usage)? {
        return Ok(Place::default());
    }
    let root = project.root.canonicalize().unwrap_or(project.root.clone());
    let req = crate::sandbox::Request::new(crate::sandbox::Profile::Session, root);
    let forge =
        std::env::current_exe().map_err(|e| Error::io("cannot find Forge's own binary", e))?;
    Ok(Place {
        wrap: crate::sandbox::launch::argv(&forge, &req, &[]),
        ..Place::default()
    })
}

/// Runs one command and parses its report: verify's unit of work, which `forge run` reuses for
/// its focused command and related checks. `logs` is the folder for its output; with `keep`,
/// the folder is held to that many logs (verify's), without it every log stays (a run's logs
/// are the evidence its gate results point at). `origin` names where the command is set, for
/// the person to fix it. The no-evidence rule is the caller's ([`missing_evidence`]).
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
    let log_path = exec::unique_log_path(logs, &cmd.name);
    run_command_logged(project, place, (logs, &log_path), keep, origin, cmd)
}

/// [`run_command_at`], its output logged to `log.1` in the folder `log.0` (chosen by the
/// caller, who shows it before the command ends).
fn run_command_logged(
    project: &Project,
    place: &Place,
    log: (&Path, &Path),
    keep: Option<usize>,
    origin: &str,
    cmd: &CommandConfig,
) -> Result<CommandResult> {
    let (logs, log_path) = log;
    let cwd = place.cwd.clone().unwrap_or_else(|| project.root.clone());
    // A report left by an earlier run must never pass for this run's. The command (code an agent
    // may have written) chose what lies at the report's path: it is removed and read with no
    // symbolic link on the way and never blocking (a FIFO), and a path Forge cannot clear safely
    // fails the command rather than Forge.
    let report_root = place.report_root.clone().unwrap_or_else(|| cwd.clone());
    let report_file = cmd.report_path.as_ref().map(|p| report_root.join(p));
    let mut unsafe_report: Option<String> = None;
    if let Some(rel) = &cmd.report_path
        && let Err(why) =
            crate::state::remove_beneath(&report_root, Path::new(rel)).and_then(|()| {
                // A check's checkout lacks the folders only the working tree had (`.tmp/.forge/`).
                match place.cwd {
                    Some(_) => crate::state::make_parents_beneath(&report_root, Path::new(rel)),
                    None => Ok(()),
                }
            })
    {
        unsafe_report = Some(format!("the report path {rel} {why}"));
    }
    if let Some(keep) = keep {
        exec::recycle_log(logs, keep, log_path);
    }
    let mut opts = ExecOptions::new(
        cwd.clone(),
        Duration::from_secs(cmd.timeout),
        log_path.to_path_buf(),
        TAIL_BYTES,
    );
    opts.env = vec![("FORGE_VERIFY".into(), "1".into())];
    opts.env.extend(place.env.iter().cloned());
    opts.env_remove = place.env_remove.clone();
    opts.capture = if place.strict {
        STRICT_CAPTURE_BYTES
    } else {
        CAPTURE_BYTES
    };
    opts.contain = true;
    opts.wrap = place.wrap.clone();
    let out = exec::run_shell(&cmd.run, &opts)?;
    let parsed = match (&report_file, &out.captured) {
        (Some(f), _) => match (
            &unsafe_report,
            crate::state::read_beneath(
                &report_root,
                Path::new(cmd.report_path.as_deref().unwrap_or("")),
                REPORT_BYTES,
            ),
        ) {
            (Some(why), _) => Err(report::ReportError::Malformed {
                path: f.display().to_string(),
                format: cmd.report,
                message: why.clone(),
            }),
            (None, Ok(Some(bytes))) => report::parse_bytes(&bytes, cmd.report),
            (None, Ok(None)) => Err(report::ReportError::Missing {
                path: f.display().to_string(),
            }),
            (None, Err(why)) => Err(report::ReportError::Malformed {
                path: f.display().to_string(),
                format: cmd.report,
                message: format!("the report {why}"),
            }),
        },
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
            && !report.has_cases()
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
        tests: report.counts(),
        runner_summary: report.runner_summary,
        log: project.rel(&out.log_path),
        ok: false,
        report,
        tail,
        output: out.captured.clone(),
        interrupted: out.interrupted,
    };
    result.ok = out.success()
        && result.tests.failed == 0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_serializes_as_contract_words() {
        assert_eq!(serde_json::to_string(&Verdict::Pass).unwrap(), "\"PASS\"");
        assert_eq!(serde_json::to_string(&Verdict::Fail).unwrap(), "\"FAIL\"");
    }
}
