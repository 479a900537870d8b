//! The phase scope of a `forge run` slice, enforced live on every write: red writes only test
//! areas, green only code areas (never the verified tests), planning, verifying and reviewing
//! write only the agent's answer file.
//!
//! **Killing a run does not lift its scope.** `.tmp/.forge/active-run` names the run; its
//! `state.json` holds the phase. The scope stays in force whether or not a `forge run` still
//! drives the run (holds its folder's lock): an agent that kills its driver — or outlives it —
//! stays in the phase it was given. A person lifts it by resuming (`forge run --resume`), by
//! finishing the run, or with `forge guard lift`, which records on the timeline that the scope
//! of exactly this state of the run was lifted; if the run moves on after that (a resume), the
//! lift no longer applies.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::paths::{Paths, Place};
use super::rules::Rule;
use super::{Decision, Finding};

pub const RED_SCOPE: Rule = Rule {
    id: "phase-red-scope",
    decision: Decision::Deny,
    summary: "during a run's red phase, writes outside the slice's test areas",
};
pub const GREEN_SCOPE: Rule = Rule {
    id: "phase-green-scope",
    decision: Decision::Deny,
    summary: "during a run's green phase, writes to tests or outside the slice's code areas",
};
pub const READ_ONLY: Rule = Rule {
    id: "phase-read-only",
    decision: Decision::Deny,
    summary: "during planning, verifying and reviewing, any write but the agent's own answer file",
};

/// The phase of a running slice, from the run state (`forge run` writes it).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Phase {
    pub run: String,
    pub slice: String,
    /// `plan`, `red`, `verify`, `review` or `green`.
    pub phase: String,
    pub test_areas: Vec<String>,
    pub code_areas: Vec<String>,
    /// The tests verified red, which green may not touch.
    pub red_tests: Vec<String>,
    /// The answer file the current agent writes (planner, verifier, coverage reviewer),
    /// repository-relative.
    #[serde(default)]
    pub output: Option<String>,
    /// Whether a `forge run` is driving the run now (holds its folder's lock). An interrupted
    /// run's scope is enforced all the same; only the Stop hook tells the two apart.
    #[serde(skip)]
    pub driven: bool,
}

/// The run state fields the guard reads.
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

/// Where a person's lift of an interrupted run's scope is recorded.
pub fn lift_path(root: &Path) -> PathBuf {
    root.join(crate::repo::TMP_DIR).join("guard/phase-lifted")
}

fn state_path(root: &Path, slug: &str) -> PathBuf {
    root.join(crate::repo::TMP_DIR)
        .join("runs")
        .join(slug)
        .join("state.json")
}

fn fingerprint(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The phase of the active run, if a run is in one of its agent phases — driven or
/// interrupted, unless a person lifted this very state of it. A run state that exists but
/// cannot be read is an error: the guard then fails closed.
pub fn load_phase(root: &Path) -> std::result::Result<Option<Phase>, String> {
    let tmp = root.join(crate::repo::TMP_DIR);
    let slug = match std::fs::read_to_string(tmp.join("active-run")) {
        Ok(s) => s.trim().to_string(),
        Err(_) => return Ok(None),
    };
    if slug.is_empty() {
        return Ok(None);
    }
    let run_dir = tmp.join("runs").join(&slug);
    let driven = run_dir.is_dir() && matches!(crate::state::try_lock_dir(&run_dir), Ok(None));
    let path = state_path(root, &slug);
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !driven && lifted(root, &slug, &bytes) {
        return Ok(None);
    }
    let state: RunState = serde_json::from_slice(&bytes)
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
            driven,
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
        driven,
    }))
}

fn lifted(root: &Path, slug: &str, state: &[u8]) -> bool {
    std::fs::read_to_string(lift_path(root)).is_ok_and(|t| {
        let mut w = t.split_whitespace();
        w.next() == Some(slug) && w.next() == Some(fingerprint(state).as_str())
    })
}

/// What `forge guard lift` did.
#[derive(Debug)]
pub enum Lift {
    /// The scope of this run, in this state, no longer applies.
    Lifted(Phase),
    /// No run phase is in force.
    Nothing,
    /// A `forge run` drives the run: stop it or let it finish.
    Driven(Phase),
}

/// Lifts the phase scope of an interrupted run (a person's act).
pub fn lift(root: &Path) -> std::result::Result<Lift, String> {
    let Some(phase) = load_phase(root)? else {
        return Ok(Lift::Nothing);
    };
    if phase.driven {
        return Ok(Lift::Driven(phase));
    }
    let state = std::fs::read(state_path(root, &phase.run)).map_err(|e| e.to_string())?;
    let line = format!("{} {}\n", phase.run, fingerprint(&state));
    crate::state::write_atomic(&lift_path(root), line.as_bytes()).map_err(|e| e.to_string())?;
    Ok(Lift::Lifted(phase))
}

/// Writes outside the phase's scope.
pub fn scope(phase: &Phase, paths: &Paths, written: &[PathBuf], findings: &mut Vec<Finding>) {
    let interrupted = if phase.driven {
        String::new()
    } else {
        format!(
            " (the run was interrupted; its scope stays until a person resumes it with `forge run --resume {}` or lifts it with `forge guard lift`)",
            phase.run
        )
    };
    let deny = |rule: &Rule, reason: String| Finding {
        decision: rule.decision,
        rule: rule.id.to_string(),
        reason,
        contained: false,
    };
    for p in written {
        let Place::InRepo(rel) = paths.place(p) else {
            continue;
        };
        let in_tests = phase
            .test_areas
            .iter()
            .any(|g| crate::glob::matches(g, &rel));
        if matches!(phase.phase.as_str(), "plan" | "verify" | "review") {
            if paths.run_output.as_deref() == Some(p.as_path()) {
                continue;
            }
            let role = match phase.phase.as_str() {
                "plan" => "planning",
                "verify" => "the verifier's check",
                _ => "the coverage review",
            };
            findings.push(deny(&READ_ONLY, format!(
                "run `{}` is in {role}, which is read-only: do not change {rel}; write only your answer to {}{interrupted}",
                phase.run,
                phase.output.as_deref().unwrap_or("$FORGE_OUTPUT")
            )));
            continue;
        }
        let is_red_test = phase
            .red_tests
            .iter()
            .any(|t| t.trim_start_matches("./") == rel);
        if phase.phase == "red" && !in_tests {
            findings.push(deny(&RED_SCOPE, format!(
                "run `{}` slice `{}` is in its red phase: only test files may change ({}), not {rel}{interrupted}",
                phase.run,
                phase.slice,
                phase.test_areas.join(", ")
            )));
        }
        if phase.phase == "green" {
            let in_code = phase
                .code_areas
                .iter()
                .any(|g| crate::glob::matches(g, &rel));
            if is_red_test || in_tests || !in_code {
                findings.push(deny(&GREEN_SCOPE, format!(
                    "run `{}` slice `{}` is in its green phase: make the test pass by changing code ({}), not {rel}{interrupted}",
                    phase.run,
                    phase.slice,
                    phase.code_areas.join(", ")
                )));
            }
        }
    }
}
