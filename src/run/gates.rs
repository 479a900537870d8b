//! The deterministic gates of the slice loop (`002_…`). Each check here is a pure function of
//! evidence Forge gathered itself (git, the test report, the agent's answer file), so it can be
//! proven to pass and to fail in a unit test; `run/mod.rs` gathers the evidence and applies the
//! recovery. An agent never decides a gate.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::glob;
use crate::report::{Format, Report};

/// Gate names, stable: they name the result files and timeline events.
pub const CLEAN_START: &str = "clean-start";
pub const RUN_ARTIFACT: &str = "run-artifact";
pub const PLANNING_OUTPUT: &str = "planning-output";
pub const PRE_RED_BASELINE: &str = "pre-red-baseline";
pub const RED_FILE_SCOPE: &str = "red-file-scope";
pub const SINGLE_RED_FAILURE: &str = "single-red-failure";
pub const VERIFIED_RED: &str = "verified-red";
pub const RED_CHECKPOINT: &str = "red-checkpoint";
pub const GREEN_FILE_SCOPE: &str = "green-file-scope";
pub const GREEN_CHECKS: &str = "green-checks";
pub const MILESTONE_CHECKS: &str = "milestone-checks";
pub const FINAL_ANCESTRY: &str = "final-ancestry";

/// One gate result: the schema of `002_…`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateResult {
    pub gate: String,
    /// `pass` or `fail`.
    pub status: String,
    pub evidence: Value,
    /// Whether Forge must stop before calling the next agent.
    pub blocks: bool,
    /// The next safe action.
    pub recovery: String,
}

impl GateResult {
    pub fn pass(gate: &str, evidence: Value) -> GateResult {
        GateResult {
            gate: gate.into(),
            status: "pass".into(),
            evidence,
            blocks: false,
            recovery: String::new(),
        }
    }

    pub fn fail(gate: &str, evidence: Value, blocks: bool, recovery: &str) -> GateResult {
        GateResult {
            gate: gate.into(),
            status: "fail".into(),
            evidence,
            blocks,
            recovery: recovery.into(),
        }
    }

    pub fn passed(&self) -> bool {
        self.status == "pass"
    }

    /// The evidence's `reason`, for one-line reports.
    pub fn reason(&self) -> String {
        self.evidence
            .get("reason")
            .and_then(|r| r.as_str())
            .unwrap_or("")
            .to_string()
    }
}

/// Files Forge itself owns: its config, specs and ledgers, and its ignored run state. The
/// scope gates leave them to the state protection (`run/mod.rs`), and clean-start allows them.
pub fn is_forge_path(p: &str) -> bool {
    p == ".forge" || p.starts_with(".forge/") || p.starts_with(".tmp/.forge/")
}

pub fn in_areas(areas: &[String], path: &str) -> bool {
    areas.iter().any(|g| glob::matches(g, path))
}

// ---------------------------------------------------------------------------------------------
// clean-start

/// Fails on any non-Forge file that is modified, staged, untracked or conflicted.
pub fn clean_start(dirty: &[String]) -> GateResult {
    let dirty: Vec<&String> = dirty.iter().filter(|p| !is_forge_path(p)).collect();
    if dirty.is_empty() {
        GateResult::pass(CLEAN_START, json!({"reason": "working tree clean"}))
    } else {
        let shown: Vec<&str> = dirty.iter().take(10).map(|s| s.as_str()).collect();
        GateResult::fail(
            CLEAN_START,
            json!({"reason": format!("{} file(s) modified, staged or untracked: {}{}", dirty.len(), shown.join(", "), if dirty.len() > 10 { ", …" } else { "" }), "files": dirty}),
            true,
            "commit, stash or remove these files (`git status`), then `forge run --resume <slug>`",
        )
    }
}

// ---------------------------------------------------------------------------------------------
// planning-output

/// Checks the planner's `state.json` document field by field. On success, the slices in order.
/// `tracked` (the repository's files) finds areas that claim the same file as test and code.
pub fn planning_output(
    doc: &Value,
    tracked: &[String],
) -> Result<Vec<super::state::Slice>, Vec<String>> {
    let mut problems = Vec::new();
    let Some(slices) = doc.get("slices") else {
        return Err(vec!["state.json has no `slices` array".into()]);
    };
    let Some(slices) = slices.as_array() else {
        return Err(vec!["`slices` is not an array".into()]);
    };
    if slices.is_empty() {
        return Err(vec!["`slices` is empty: plan at least one slice".into()]);
    }
    let mut seen: Vec<String> = Vec::new();
    for (i, s) in slices.iter().enumerate() {
        let at = |k: &str| format!("slices[{i}].{k}");
        let Some(obj) = s.as_object() else {
            problems.push(format!("slices[{i}] is not an object"));
            continue;
        };
        let text = |k: &str, problems: &mut Vec<String>| -> Option<String> {
            match obj.get(k) {
                None => {
                    problems.push(format!("`{}` is missing", at(k)));
                    None
                }
                Some(Value::String(v)) if !v.trim().is_empty() => Some(v.clone()),
                Some(Value::String(_)) => {
                    problems.push(format!("`{}` is empty", at(k)));
                    None
                }
                Some(_) => {
                    problems.push(format!("`{}` must be a string", at(k)));
                    None
                }
            }
        };
        let list = |k: &str, problems: &mut Vec<String>| -> Option<Vec<String>> {
            match obj.get(k) {
                None => {
                    problems.push(format!("`{}` is missing", at(k)));
                    None
                }
                Some(Value::Array(a)) => {
                    let mut out = Vec::new();
                    for (j, v) in a.iter().enumerate() {
                        match v.as_str() {
                            Some(s) if !s.trim().is_empty() => out.push(s.to_string()),
                            _ => problems
                                .push(format!("`{}[{j}]` must be a non-empty string", at(k))),
                        }
                    }
                    Some(out)
                }
                Some(_) => {
                    problems.push(format!("`{}` must be an array of strings", at(k)));
                    None
                }
            }
        };
        let id = text("id", &mut problems);
        text("title", &mut problems);
        let focused = text("focused_command", &mut problems);
        text("expected_red_failure", &mut problems);
        let deps = list("depends_on", &mut problems);
        let tests = list("test_areas", &mut problems);
        let code = list("code_areas", &mut problems);
        let checks = list("related_checks", &mut problems);
        if let Some(r) = obj.get("report")
            && serde_json::from_value::<Format>(r.clone()).is_err()
        {
            problems.push(format!(
                "`{}` is not a report format (one of {})",
                at("report"),
                crate::report::names()
            ));
        }
        if let Some(m) = obj.get("milestone")
            && !m.is_boolean()
        {
            problems.push(format!("`{}` must be true or false", at("milestone")));
        }
        if let Some(id) = &id {
            if crate::repo::validate_change_name(id).is_err() {
                problems.push(format!(
                    "`{}` ({id}) must use lowercase letters, digits and `-`",
                    at("id")
                ));
            }
            if seen.contains(id) {
                problems.push(format!("`{}`: slice id `{id}` is used twice", at("id")));
            }
        }
        if let Some(deps) = &deps {
            let all_ids: Vec<&str> = slices
                .iter()
                .filter_map(|s| s.get("id").and_then(|v| v.as_str()))
                .collect();
            for d in deps {
                if Some(d) == id.as_ref() {
                    problems.push(format!(
                        "`{}`: slice `{d}` depends on itself",
                        at("depends_on")
                    ));
                } else if !all_ids.contains(&d.as_str()) {
                    problems.push(format!(
                        "`{}`: unknown slice id `{d}` (known: {})",
                        at("depends_on"),
                        all_ids.join(", ")
                    ));
                } else if !seen.contains(d) {
                    problems.push(format!(
                        "`{}`: `{d}` comes later in the plan; order slices so that dependencies come first",
                        at("depends_on")
                    ));
                }
            }
        }
        for (k, areas) in [("test_areas", &tests), ("code_areas", &code)] {
            let Some(areas) = areas else { continue };
            if areas.is_empty() {
                problems.push(format!(
                    "`{}` is empty: name the files this slice may change",
                    at(k)
                ));
            }
            for a in areas {
                if let Some(why) = ambiguous_area(a) {
                    problems.push(format!("`{}`: `{a}` {why}", at(k)));
                }
            }
        }
        if let (Some(t), Some(c)) = (&tests, &code) {
            for a in t {
                if c.contains(a) {
                    problems.push(format!(
                        "slices[{i}]: `{a}` is both a test area and a code area; red and green must own different files"
                    ));
                }
            }
            if let Some(f) = tracked.iter().find(|f| in_areas(t, f) && in_areas(c, f)) {
                problems.push(format!(
                    "slices[{i}]: {f} is in a test area and in a code area; narrow the areas so each file has one owner"
                ));
            }
        }
        for (k, cmd) in [("focused_command", focused.as_ref())] {
            if let Some(c) = cmd
                && c.contains('\n')
            {
                problems.push(format!("`{}` spans several lines; give one command", at(k)));
            }
        }
        if let Some(checks) = &checks {
            for (j, c) in checks.iter().enumerate() {
                if c.contains('\n') {
                    problems.push(format!(
                        "`{}[{j}]` spans several lines; give one command",
                        at("related_checks")
                    ));
                }
            }
        }
        if let Some(id) = id {
            seen.push(id);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    serde_json::from_value::<Vec<super::state::Slice>>(Value::Array(slices.clone()))
        .map_err(|e| vec![format!("slices do not parse: {e}")])
}

/// Why an area glob cannot bound an agent, if it cannot.
fn ambiguous_area(a: &str) -> Option<&'static str> {
    let t = a.trim().trim_start_matches("./");
    if t.is_empty() || matches!(t, "." | "*" | "**" | "**/*" | "/" | "*/**" | "**/") {
        return Some("matches the whole repository");
    }
    if a.starts_with('/') || a.starts_with('~') {
        return Some("must be relative to the repository root");
    }
    if t.split('/').any(|s| s == "..") {
        return Some("leaves the repository (`..`)");
    }
    if is_forge_path(t) || t == ".git" || t.starts_with(".git/") || t.starts_with(".tmp/") {
        return Some("is Forge's or git's own state, which no agent may change");
    }
    None
}

// ---------------------------------------------------------------------------------------------
// red

/// What a scope gate saw and undid.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Scope {
    /// Files changed (committed, staged, modified or untracked) since the phase's base.
    pub changed: Vec<String>,
    /// Those the phase may not change; reverted.
    pub disallowed: Vec<String>,
    /// Commits that appeared during the phase; undone (their changes judged like the rest).
    pub commits: Vec<String>,
    /// Forge state files the agent changed; restored byte for byte.
    pub forge_state: Vec<String>,
    /// The agent switched HEAD to another branch (or detached it); switched back.
    pub head_moved: Option<String>,
}

/// Red may change only test/spec/fixture files (its test areas) and may not commit.
pub fn red_scope(changed: &[String], test_areas: &[String]) -> Vec<String> {
    changed
        .iter()
        .filter(|f| !is_forge_path(f) && !in_areas(test_areas, f))
        .cloned()
        .collect()
}

pub fn scope_result(gate: &str, scope: &Scope, areas: &[String], phase: &str) -> GateResult {
    let mut reasons = Vec::new();
    if let Some(h) = &scope.head_moved {
        reasons.push(h.clone());
    }
    if !scope.commits.is_empty() {
        reasons.push(format!(
            "{} commit(s) appeared during {phase} (Forge makes the commits); undone",
            scope.commits.len()
        ));
    }
    if !scope.disallowed.is_empty() {
        reasons.push(format!(
            "{phase} may change only {} — reverted: {}",
            areas.join(", "),
            scope.disallowed.join(", ")
        ));
    }
    if !scope.forge_state.is_empty() {
        reasons.push(format!(
            "Forge's own state and git's settings may not be edited — restored: {}",
            scope.forge_state.join(", ")
        ));
    }
    let reason = if reasons.is_empty() {
        format!("{phase} changed only {}", scope.changed.join(", "))
    } else {
        reasons.join("; ")
    };
    let evidence = json!({
        "reason": reason,
        "changed": scope.changed,
        "disallowed": scope.disallowed,
        "commits": scope.commits,
        "forge_state": scope.forge_state,
        "head_moved": scope.head_moved,
    });
    if reasons.is_empty() {
        GateResult::pass(gate, evidence)
    } else {
        GateResult::fail(
            gate,
            evidence,
            false,
            &format!(
                "the disallowed changes were reverted; the reason goes back to the same {phase} agent"
            ),
        )
    }
}

/// How the post-red focused command ended, in the terms of the single-red-failure gate.
#[derive(Debug, Clone, PartialEq)]
pub enum RedOutcome {
    /// Exactly one failing test case: a red.
    One {
        case: String,
        message: Option<String>,
    },
    /// The command passes: the already-green path (coverage review).
    AlreadyGreen,
    /// Not a red: infrastructure, syntax, import or setup; several failures; or no case found.
    NotRed(String),
}

/// Classifies the focused command's run after red: exit status and the parsed report.
pub fn classify_red(
    exit_ok: bool,
    timed_out: bool,
    report: &Report,
    report_error: Option<&str>,
) -> RedOutcome {
    if timed_out {
        return RedOutcome::NotRed("the focused command timed out".into());
    }
    if let Some(e) = &report.infra_error {
        return RedOutcome::NotRed(format!(
            "infrastructure, syntax, import or setup failure (not a red): {}",
            crate::text::clip(e, 300)
        ));
    }
    if let Some(e) = &report.incomplete {
        return RedOutcome::NotRed(format!("the test report is incomplete: {e}"));
    }
    let failing: Vec<_> = report.failing().collect();
    let failed = report.counts().failed;
    match (failed, exit_ok) {
        (0, true) => RedOutcome::AlreadyGreen,
        (0, false) => RedOutcome::NotRed(match report_error {
            Some(e) => format!("the focused command failed and no failing test case could be identified: {e}"),
            None => "the focused command failed but no failing test case could be identified (infrastructure, syntax, import or setup?)".into(),
        }),
        (1, _) if failing.len() == 1 => RedOutcome::One {
            case: failing[0].name.clone(),
            message: failing[0].message.clone(),
        },
        (1, _) => RedOutcome::NotRed(
            "one test failed but the report does not name it; use a report format that names cases".into(),
        ),
        (n, _) => RedOutcome::NotRed(format!(
            "{n} test cases fail ({}); red must add exactly one failing test",
            failing.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Test cases that passed at the baseline and are gone from the post-red report: a red that
/// "adds" a failing test by deleting passing ones weakens the suite. Reports that name no cases
/// (pytest's quiet summary) cannot show this.
pub fn removed_cases(baseline: &[String], after: &Report) -> Vec<String> {
    if after.cases.is_empty() {
        return Vec::new();
    }
    let now: std::collections::HashSet<&str> =
        after.cases.iter().map(|c| c.name.as_str()).collect();
    baseline
        .iter()
        .filter(|b| !now.contains(b.as_str()))
        .cloned()
        .collect()
}

/// The coverage reviewer's answer for an already-green test.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    pub valid: bool,
    pub high_quality: bool,
    pub useful: bool,
    pub reason: String,
}

pub fn read_review(v: &Value) -> Result<Review, String> {
    let b = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_bool())
            .ok_or_else(|| format!("`{k}` must be true or false"))
    };
    let reason = v
        .get("reason")
        .and_then(|x| x.as_str())
        .filter(|s| !s.trim().is_empty())
        .ok_or("`reason` must be a non-empty string")?;
    Ok(Review {
        valid: b("valid")?,
        high_quality: b("high_quality")?,
        useful: b("useful")?,
        reason: reason.to_string(),
    })
}

/// The evidence the verifier's answer is checked against: what Forge saw itself.
pub struct RedEvidence<'a> {
    pub command: &'a str,
    pub failing_case: &'a str,
    /// The focused command's output (ANSI stripped).
    pub output: &'a str,
}

/// Checks the verifier's answer field by field; the problems, empty when it passes.
pub fn check_verifier(v: &Value, seen: &RedEvidence) -> Vec<String> {
    let mut problems = Vec::new();
    if !v.is_object() {
        return vec!["the answer is not a JSON object".into()];
    }
    let s = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::trim)
            .filter(|x| !x.is_empty())
    };
    match v.get("verdict").and_then(|x| x.as_str()) {
        Some("intended") => {}
        Some("not-intended") => problems.push(format!(
            "the verifier says the failure is not the intended missing behaviour{}",
            s("expected_behavior")
                .map(|e| format!(" (expected: {e})"))
                .unwrap_or_default()
        )),
        Some(other) => problems.push(format!(
            "`verdict` is `{other}`; it must be `intended` or `not-intended`"
        )),
        None => problems.push("`verdict` is missing".into()),
    }
    match s("command") {
        None => problems.push("`command` is missing: cite the command that was run".into()),
        Some(c)
            if squash(c) != squash(seen.command) && !squash(c).contains(&squash(seen.command)) =>
        {
            problems.push(format!(
                "`command` cites `{c}`, but the focused command is `{}`",
                seen.command
            ))
        }
        Some(_) => {}
    }
    match s("failing_case") {
        None => problems.push("`failing_case` is missing: cite the failing test case".into()),
        Some(c) if !same_case(c, seen.failing_case) => problems.push(format!(
            "`failing_case` cites `{c}`, but the case that failed is `{}`",
            seen.failing_case
        )),
        Some(_) => {}
    }
    match s("error_excerpt") {
        None => problems.push("`error_excerpt` is missing: quote the error from the output".into()),
        Some(e) => {
            let out = squash(seen.output);
            let quoted = e
                .lines()
                .map(squash)
                .filter(|l| l.len() >= 4)
                .any(|l| out.contains(&l));
            if !quoted {
                problems.push(format!(
                    "`error_excerpt` ({}) does not appear in the focused command's output; quote it",
                    crate::text::clip(e, 120)
                ));
            }
        }
    }
    if s("expected_behavior").is_none() {
        problems.push("`expected_behavior` is missing: say what behaviour the test expects".into());
    }
    match v.get("rejected_causes").and_then(|x| x.as_array()) {
        Some(a) if !a.is_empty() && a.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty())) => {}
        _ => problems.push(
            "`rejected_causes` must list why other causes (setup, typo, wrong import…) were rejected".into(),
        ),
    }
    problems
}

/// Whitespace collapsed, for comparing quoted text and commands.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a cited test name names the case that failed: equal, or equal but for the suite or
/// module path one of them carries (`tests::adds` vs `adds`, `cart_test.py::test_x` vs `test_x`).
pub fn same_case(cited: &str, actual: &str) -> bool {
    let (c, a) = (cited.trim(), actual.trim());
    if c == a {
        return true;
    }
    let ends = |long: &str, short: &str| {
        long.len() > short.len()
            && long.ends_with(short)
            && matches!(
                long.as_bytes()[long.len() - short.len() - 1],
                b':' | b'.' | b'/' | b' ' | b'>'
            )
    };
    ends(c, a) || ends(a, c)
}

// ---------------------------------------------------------------------------------------------
// checkpoint and final ancestry

/// The red checkpoint: directly on START_SHA, holding exactly the verified test change.
pub fn red_checkpoint(
    start_sha: &str,
    parent: Option<&str>,
    files: &[String],
    red_tests: &[String],
    test_areas: &[String],
) -> GateResult {
    let mut reasons = Vec::new();
    if parent != Some(start_sha) {
        reasons.push(format!(
            "the checkpoint's parent is {}, not START_SHA {start_sha}",
            parent.unwrap_or("(none)")
        ));
    }
    let outside: Vec<&String> = files.iter().filter(|f| !in_areas(test_areas, f)).collect();
    if !outside.is_empty() {
        reasons.push(format!(
            "the checkpoint includes non-test files: {}",
            outside
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if files != red_tests {
        reasons.push(format!(
            "the checkpoint holds {files:?}, not the verified test change {red_tests:?}"
        ));
    }
    let reason = if reasons.is_empty() {
        format!(
            "temporary commit on START_SHA with only {}",
            files.join(", ")
        )
    } else {
        reasons.join("; ")
    };
    let evidence =
        json!({"reason": reason, "start_sha": start_sha, "parent": parent, "files": files});
    if reasons.is_empty() {
        GateResult::pass(RED_CHECKPOINT, evidence)
    } else {
        GateResult::fail(
            RED_CHECKPOINT,
            evidence,
            false,
            "reset to START_SHA and retry the slice",
        )
    }
}

/// What the final ancestry gate looks at.
pub struct Final<'a> {
    pub start_sha: &'a str,
    pub commit: &'a str,
    pub parent: Option<&'a str>,
    pub message: &'a str,
    pub files: &'a [String],
    pub red_tests: &'a [String],
    pub code_files: &'a [String],
    /// Whether the checkpoint commit is reachable from the final commit.
    pub checkpoint_in_history: bool,
    /// Whether the pre-commit verification this commit needs passed (all configured commands
    /// at final completion and milestones; the focused and related checks otherwise).
    pub verified_before_commit: bool,
}

pub fn final_ancestry(f: &Final) -> GateResult {
    let mut reasons = Vec::new();
    if f.parent != Some(f.start_sha) {
        reasons.push(format!(
            "HEAD^1 is {}, not START_SHA {}",
            f.parent.unwrap_or("(none)"),
            f.start_sha
        ));
    }
    if !is_conventional(f.message) {
        reasons.push(format!(
            "the commit message `{}` is not a conventional commit",
            f.message.lines().next().unwrap_or("")
        ));
    }
    let missing: Vec<&String> = f
        .red_tests
        .iter()
        .chain(f.code_files)
        .filter(|p| !f.files.contains(p))
        .collect();
    if !missing.is_empty() {
        reasons.push(format!("the commit lacks {missing:?}"));
    }
    let extra: Vec<&String> = f
        .files
        .iter()
        .filter(|p| !f.red_tests.contains(p) && !f.code_files.contains(p))
        .collect();
    if !extra.is_empty() {
        reasons.push(format!(
            "the commit holds files that are neither the verified test nor green's code: {extra:?}"
        ));
    }
    if f.red_tests.is_empty() {
        reasons.push("the commit has no verified test".into());
    }
    if f.code_files.is_empty() {
        reasons.push("the commit has no implementation".into());
    }
    if f.checkpoint_in_history {
        reasons.push("the temporary checkpoint commit remains in history".into());
    }
    if !f.verified_before_commit {
        reasons.push("no passing verification was recorded before the commit".into());
    }
    let reason = if reasons.is_empty() {
        format!(
            "one conventional commit on START_SHA {} with {}",
            &f.start_sha[..f.start_sha.len().min(10)],
            f.files.join(", ")
        )
    } else {
        reasons.join("; ")
    };
    let evidence = json!({
        "reason": reason,
        "commit": f.commit, "parent": f.parent, "start_sha": f.start_sha,
        "message": f.message, "files": f.files,
    });
    if reasons.is_empty() {
        GateResult::pass(FINAL_ANCESTRY, evidence)
    } else {
        GateResult::fail(
            FINAL_ANCESTRY,
            evidence,
            true,
            "stop completion and review the commit graph (`git log --oneline --graph`)",
        )
    }
}

/// `type(scope)!: subject` with a known type.
pub fn is_conventional(message: &str) -> bool {
    let first = message.lines().next().unwrap_or("");
    let Some((head, subject)) = first.split_once(": ") else {
        return false;
    };
    let head = head.trim_end_matches('!');
    let ty = head.split('(').next().unwrap_or("");
    let scope_ok = match head.find('(') {
        Some(i) => head.ends_with(')') && head.len() > i + 2,
        None => true,
    };
    const TYPES: [&str; 11] = [
        "feat", "fix", "test", "refactor", "perf", "docs", "chore", "build", "ci", "style",
        "revert",
    ];
    TYPES.contains(&ty) && scope_ok && !subject.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Status, TestCase};

    fn slice(id: &str, deps: &[&str]) -> Value {
        json!({"id": id, "title": "T", "depends_on": deps, "test_areas": ["tests/"],
               "code_areas": ["src/"], "focused_command": "sh tests/run.sh",
               "related_checks": [], "expected_red_failure": "x"})
    }

    #[test]
    fn clean_start_passes_on_forge_files_only_and_fails_on_others() {
        assert!(clean_start(&[".forge/config.yaml".into()]).passed());
        let r = clean_start(&[".forge/x".into(), "src/a.rs".into()]);
        assert!(!r.passed() && r.blocks);
        assert_eq!(r.evidence["files"], json!(["src/a.rs"]));
    }

    #[test]
    fn planning_output_accepts_a_good_plan_and_names_every_problem() {
        let ok = json!({"slices": [slice("a", &[]), slice("b", &["a"])]});
        let s = planning_output(&ok, &[]).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].depends_on, vec!["a"]);

        let dangling = json!({"slices": [slice("a", &["zzz"])]});
        let e = planning_output(&dangling, &[]).unwrap_err();
        assert!(e[0].contains("unknown slice id `zzz`"), "{e:?}");

        let later = json!({"slices": [slice("a", &["b"]), slice("b", &[])]});
        let e = planning_output(&later, &[]).unwrap_err();
        assert!(e[0].contains("comes later"), "{e:?}");

        let mut missing = slice("a", &[]);
        missing
            .as_object_mut()
            .unwrap()
            .remove("expected_red_failure");
        missing.as_object_mut().unwrap().remove("code_areas");
        let e = planning_output(&json!({"slices": [missing]}), &[]).unwrap_err();
        assert!(
            e.iter()
                .any(|p| p.contains("slices[0].expected_red_failure` is missing")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|p| p.contains("slices[0].code_areas` is missing")),
            "{e:?}"
        );

        let mut broad = slice("a", &[]);
        broad["code_areas"] = json!(["**"]);
        broad["test_areas"] = json!(["../elsewhere/"]);
        let e = planning_output(&json!({"slices": [broad]}), &[]).unwrap_err();
        assert!(e.iter().any(|p| p.contains("whole repository")), "{e:?}");
        assert!(
            e.iter().any(|p| p.contains("leaves the repository")),
            "{e:?}"
        );

        let mut overlap = slice("a", &[]);
        overlap["test_areas"] = json!(["src/**/*_test.rs"]);
        let e = planning_output(&json!({"slices": [overlap]}), &["src/cart_test.rs".into()])
            .unwrap_err();
        assert!(
            e[0].contains("src/cart_test.rs is in a test area and in a code area"),
            "{e:?}"
        );

        let mut cmd = slice("a", &[]);
        cmd["focused_command"] = json!("  ");
        cmd["report"] = json!("xml");
        let e = planning_output(&json!({"slices": [cmd]}), &[]).unwrap_err();
        assert!(
            e.iter().any(|p| p.contains("focused_command` is empty")),
            "{e:?}"
        );
        assert!(e.iter().any(|p| p.contains("not a report format")), "{e:?}");

        let twice = json!({"slices": [slice("a", &[]), slice("a", &[])]});
        assert!(planning_output(&twice, &[]).unwrap_err()[0].contains("used twice"));
        assert!(planning_output(&json!({"slices": []}), &[]).is_err());
        assert!(planning_output(&json!({}), &[]).is_err());
    }

    fn report(cases: &[(&str, Status)]) -> Report {
        Report {
            cases: cases
                .iter()
                .map(|(n, s)| TestCase {
                    name: n.to_string(),
                    status: *s,
                    file: None,
                    suite: None,
                    message: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn single_red_failure_tells_one_failure_from_everything_else() {
        use Status::*;
        let one = report(&[("adds", Passed), ("member discount", Failed)]);
        assert!(
            matches!(classify_red(false, false, &one, None), RedOutcome::One { case, .. } if case == "member discount")
        );
        let two = report(&[("a", Failed), ("b", Failed)]);
        assert!(
            matches!(classify_red(false, false, &two, None), RedOutcome::NotRed(m) if m.contains("2 test cases fail"))
        );
        let green = report(&[("a", Passed)]);
        assert_eq!(
            classify_red(true, false, &green, None),
            RedOutcome::AlreadyGreen
        );
        let mut infra = report(&[]);
        infra.infra_error = Some("error[E0432]: unresolved import `crate::cart`".into());
        assert!(
            matches!(classify_red(false, false, &infra, None), RedOutcome::NotRed(m) if m.contains("infrastructure"))
        );
        assert!(
            matches!(classify_red(false, false, &report(&[]), None), RedOutcome::NotRed(m) if m.contains("no failing test case"))
        );
        assert!(
            matches!(classify_red(false, true, &one, None), RedOutcome::NotRed(m) if m.contains("timed out"))
        );
    }

    #[test]
    fn removed_passing_cases_are_found() {
        use Status::*;
        let base = vec!["a".to_string(), "b".to_string()];
        assert!(
            removed_cases(
                &base,
                &report(&[("a", Passed), ("b", Passed), ("c", Failed)])
            )
            .is_empty()
        );
        assert_eq!(
            removed_cases(&base, &report(&[("a", Passed), ("c", Failed)])),
            vec!["b"]
        );
        assert!(removed_cases(&base, &report(&[])).is_empty());
    }

    #[test]
    fn the_verifier_is_checked_field_by_field_against_what_failed() {
        let seen = RedEvidence {
            command: "sh tests/run.sh",
            failing_case: "member gets discount",
            output: "ok 1 - guest pays\nnot ok 2 - member gets discount\n  message: 'expected 90, got 95'\n",
        };
        let good = json!({"verdict": "intended", "command": "sh tests/run.sh",
            "failing_case": "member gets discount", "error_excerpt": "expected 90, got 95",
            "expected_behavior": "members pay 10% less", "rejected_causes": ["not a setup error: other tests pass"]});
        assert!(check_verifier(&good, &seen).is_empty());
        let mut wrong_case = good.clone();
        wrong_case["failing_case"] = json!("guest pays");
        let p = check_verifier(&wrong_case, &seen);
        assert!(
            p[0].contains("but the case that failed is `member gets discount`"),
            "{p:?}"
        );
        let mut made_up = good.clone();
        made_up["error_excerpt"] = json!("assertion failed: total == 90");
        assert!(check_verifier(&made_up, &seen)[0].contains("does not appear"));
        let mut no = good.clone();
        no["verdict"] = json!("not-intended");
        assert!(check_verifier(&no, &seen)[0].contains("not the intended"));
        let thin = json!({"verdict": "intended"});
        assert_eq!(check_verifier(&thin, &seen).len(), 5);
        let mut cmd = good.clone();
        cmd["command"] = json!("cargo test");
        assert!(check_verifier(&cmd, &seen)[0].contains("focused command is"));
    }

    #[test]
    fn case_names_match_modulo_their_suite_path() {
        assert!(same_case("adds", "tests::adds"));
        assert!(same_case("tests/test_cart.py::test_adds", "test_adds"));
        assert!(!same_case("adds", "tests::subtracts"));
        assert!(!same_case("dds", "tests::adds"));
    }

    #[test]
    fn checkpoint_and_final_ancestry_pass_and_fail() {
        let t = vec!["tests/a.sh".to_string()];
        let areas = vec!["tests/".to_string()];
        assert!(red_checkpoint("s", Some("s"), &t, &t, &areas).passed());
        assert!(!red_checkpoint("s", Some("x"), &t, &t, &areas).passed());
        let with_code = vec!["src/a.sh".to_string(), "tests/a.sh".to_string()];
        assert!(!red_checkpoint("s", Some("s"), &with_code, &t, &areas).passed());

        let code = vec!["src/a.sh".to_string()];
        let mut f = Final {
            start_sha: "s",
            commit: "c",
            parent: Some("s"),
            message: "feat(a): members get 10% off",
            files: &with_code,
            red_tests: &t,
            code_files: &code,
            checkpoint_in_history: false,
            verified_before_commit: true,
        };
        assert!(final_ancestry(&f).passed());
        f.parent = Some("sneaky");
        let r = final_ancestry(&f);
        assert!(!r.passed() && r.blocks && r.reason().contains("HEAD^1"));
        f.parent = Some("s");
        f.checkpoint_in_history = true;
        assert!(final_ancestry(&f).reason().contains("checkpoint"));
        f.checkpoint_in_history = false;
        f.message = "members get 10% off";
        assert!(!final_ancestry(&f).passed());
        f.message = "feat: x";
        f.verified_before_commit = false;
        assert!(!final_ancestry(&f).passed());
        f.verified_before_commit = true;
        let sneaked = vec![
            "src/a.sh".to_string(),
            "src/other.sh".to_string(),
            "tests/a.sh".to_string(),
        ];
        f.files = &sneaked;
        assert!(
            final_ancestry(&f)
                .reason()
                .contains("neither the verified test")
        );
    }

    #[test]
    fn conventional_messages() {
        assert!(is_conventional("feat(cart): member discount\n\nbody"));
        assert!(is_conventional("fix!: x"));
        assert!(!is_conventional("wip"));
        assert!(!is_conventional("feat(): x"));
        assert!(!is_conventional("feature: x"));
    }

    #[test]
    fn red_scope_allows_tests_only() {
        let changed = vec![
            "tests/a.sh".to_string(),
            "src/a.sh".to_string(),
            ".forge/config.yaml".to_string(),
        ];
        assert_eq!(red_scope(&changed, &["tests/".into()]), vec!["src/a.sh"]);
    }
}
