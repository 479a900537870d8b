//! The run's files under `.tmp/.forge/runs/<slug>/`: `run.json` (Forge's own record of the run)
//! and `state.json` (the planner's slices, with Forge's progress on each, and the phase the guard
//! enforces). Both are written atomically through [`crate::state::write_atomic`]; a file that
//! does not parse stops the run with an error naming it — never a silent restart.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::repo::Project;
use crate::report::Format;

/// `.tmp/.forge/runs`.
pub fn runs_dir(project: &Project) -> PathBuf {
    project.tmp_dir().join("runs")
}

pub fn run_dir(project: &Project, slug: &str) -> PathBuf {
    runs_dir(project).join(slug)
}

/// The file naming the run the guard enforces a phase for.
pub fn active_run_path(project: &Project) -> PathBuf {
    project.tmp_dir().join("active-run")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    /// Every slice landed.
    Done,
    /// A gate, the retry policy, the budget or the breaker stopped the run: a person decides.
    Stopped,
}

/// Forge's record of the run. Agents never write it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunMeta {
    pub slug: String,
    pub goal: String,
    pub status: RunStatus,
    /// HEAD when the run started.
    pub base_sha: String,
    pub started_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub planner_attempts: u32,
    /// Whether the planning-output gate has passed.
    #[serde(default)]
    pub planned: bool,
    /// Gate results written so far (numbers the gate files).
    #[serde(default)]
    pub gates_written: u32,
    /// The run-level gates (clean-start, run-artifact, planning-output), in order.
    #[serde(default)]
    pub gates: Vec<GateRef>,
    /// Wall time spent in agents and in checks (focused, related, full), in milliseconds: the
    /// rest of a run's time is Forge's own work.
    /// The planner's agent session, continued across planning attempts.
    #[serde(default)]
    pub planner_session: Option<String>,
    /// Agent sessions an agent has really run in: only those are continued (`resume_command`).
    #[serde(default)]
    pub started_sessions: Vec<String>,
    /// The branch HEAD named when the run started (`None`: detached); agents may not switch.
    #[serde(default)]
    pub branch: Option<String>,
    /// SHA-256 of `state.json` as Forge last wrote it, and the one before (a kill may fall
    /// between the two writes): a resume refuses a state file changed by anything else.
    #[serde(default)]
    pub state_sha256: Option<String>,
    #[serde(default)]
    pub prev_state_sha256: Option<String>,
    #[serde(default)]
    pub agent_ms: u64,
    #[serde(default)]
    pub check_ms: u64,
    /// Of `check_ms`, the clean room's runs of the verify commands (with the code, without it,
    /// with its functions made to fail): what that gate costs.
    #[serde(default)]
    pub clean_room_ms: u64,
    /// The working tree as Forge last saw it, as changes against a commit's tree: on resume,
    /// whatever differs from it is a person's (or an agent's whose call a kill interrupted).
    #[serde(default)]
    pub observed: Option<Observed>,
    /// Paths a person changed while the run was stopped, and paths that differed from HEAD when
    /// it started: never reverted, never committed by the run.
    #[serde(default)]
    pub person_paths: Vec<String>,
    /// The agent call under way, written before it starts and cleared when Forge has judged
    /// what it changed: a resume that finds it knows the changes since `observed` are that
    /// agent's (a kill interrupted it), held to its phase's rules, not a person's.
    #[serde(default)]
    pub in_call: Option<InCall>,
}

/// An agent call a kill may interrupt: its role (`red`, `green`, …) and slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InCall {
    pub role: String,
    pub slice: Option<String>,
}

/// A working tree as changes against `head`'s tree (`None`: the path is absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    pub head: String,
    pub changes: std::collections::BTreeMap<String, Option<crate::evidence::Entry>>,
}

/// One slice as the planner writes it (the public contract), plus Forge's progress on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Slice {
    pub id: String,
    pub title: String,
    pub depends_on: Vec<String>,
    pub test_areas: Vec<String>,
    pub code_areas: Vec<String>,
    pub focused_command: String,
    #[serde(default)]
    pub report: Format,
    pub related_checks: Vec<String>,
    pub expected_red_failure: String,
    #[serde(default)]
    pub milestone: bool,
    /// Forge's progress; absent until the plan is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<Progress>,
    /// Whatever else the planner wrote is kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// How many slices landed with code and how many only as already-green tests (issue 31: an
/// already-green slice is not implemented work): `2 slice(s) landed, 1 already green (test
/// only, nothing implemented)`.
pub fn landed_summary(st: &RunState) -> String {
    let count = |want: SliceStatus| {
        st.slices
            .iter()
            .filter(|s| s.forge.as_ref().is_some_and(|p| p.status == want))
            .count()
    };
    format!(
        "{} slice(s) landed, {} already green (test only, nothing implemented)",
        count(SliceStatus::Done),
        count(SliceStatus::Covered)
    )
}

impl Slice {
    pub fn progress(&self) -> &Progress {
        self.forge
            .as_ref()
            .expect("progress is set when the plan is accepted")
    }

    pub fn progress_mut(&mut self) -> &mut Progress {
        self.forge.get_or_insert_with(Progress::default)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SliceStatus {
    #[default]
    Pending,
    Running,
    /// Landed as one commit with its test and implementation.
    Done,
    /// The red test passed already; the reviewed test landed as a coverage commit.
    Covered,
    Failed,
}

impl SliceStatus {
    pub fn landed(self) -> bool {
        matches!(self, SliceStatus::Done | SliceStatus::Covered)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    Red,
    Green,
    /// Green's checks passed; the final commit is being made.
    Final,
    /// The test passed before any code change and the coverage reviewer approved it: the slice
    /// waits for a person's `forge run --resume <run> --accept <slice>` (issue 31: already
    /// green is not done).
    Accept,
}

/// Forge's progress on one slice.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Progress {
    pub status: SliceStatus,
    /// 1 for the first wave, 2 for the retry wave with new agents, more when a person grants
    /// one (`--retry`).
    pub wave: u32,
    /// The last wave this slice gets (default: the retry wave); set by a person's `--retry`.
    #[serde(default)]
    pub last_wave: Option<u32>,
    #[serde(default)]
    pub step: Option<Step>,
    /// Red attempts in this wave / in all waves.
    pub red_attempts: u32,
    pub red_attempts_total: u32,
    pub green_attempts: u32,
    pub green_attempts_total: u32,
    /// The session id the agents of this wave resume (one per role).
    #[serde(default)]
    pub red_session: Option<String>,
    #[serde(default)]
    pub green_session: Option<String>,
    #[serde(default)]
    pub start_sha: Option<String>,
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// The test cases that passed before red (pre-red baseline): red may add a test, never
    /// remove one.
    #[serde(default)]
    pub baseline_cases: Vec<String>,
    /// The test files verified red; green may not touch them.
    #[serde(default)]
    pub red_tests: Vec<String>,
    /// Paths red changed, in this wave's attempts so far (accepted by red-file-scope).
    #[serde(default)]
    pub red_changed: Vec<String>,
    /// Paths green changed, in this wave's attempts so far (accepted by green-file-scope).
    #[serde(default)]
    pub green_changed: Vec<String>,
    #[serde(default)]
    pub failing_case: Option<String>,
    /// A person accepted the slice's already-green test as test-only coverage
    /// (`forge run --resume <run> --accept <slice>`): nothing shows that test can fail.
    #[serde(default)]
    pub accepted: bool,
    /// Gate feedback for the next attempt of the same agent.
    #[serde(default)]
    pub feedback: Option<String>,
    #[serde(default)]
    pub commit: Option<String>,
    /// The commit Forge made and is about to move the branch to (recorded first, so a resume
    /// after a kill knows it for Forge's own — and only that one).
    #[serde(default)]
    pub pending_commit: Option<String>,
    #[serde(default)]
    pub failure: Option<String>,
    #[serde(default)]
    pub cost_usd: f64,
    #[serde(default)]
    pub tokens: u64,
    /// Every gate result of the slice, in order (`gate`, `status`, attempt, file).
    #[serde(default)]
    pub gates: Vec<GateRef>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateRef {
    pub gate: String,
    pub status: String,
    pub wave: u32,
    pub attempt: u32,
    pub file: String,
}

/// What the guard reads: the slice and phase the agent now running is in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Current {
    pub slice: String,
    /// `plan`, `red`, `verify`, `review`, `green` or `final`.
    pub phase: String,
    #[serde(default)]
    pub red_tests: Vec<String>,
    /// The one file under the run folder the current agent may write (`plan`, `verify`,
    /// `review`), repository-relative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// `state.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunState {
    #[serde(default)]
    pub slices: Vec<Slice>,
    #[serde(default)]
    pub current: Option<Current>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

pub fn meta_path(dir: &Path) -> PathBuf {
    dir.join("run.json")
}

pub fn state_path(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

fn recovery(slug: &str) -> String {
    format!(
        "Inspect it (an agent may have edited it); to start over, remove .tmp/.forge/runs/{slug}/ and run `forge run {slug} --goal …` again."
    )
}

/// The largest run file Forge reads: a plan of many slices is a few hundred KiB.
pub const MAX_RUN_FILE: u64 = 16 * 1024 * 1024;

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path, slug: &str) -> Result<Option<T>> {
    // The run folder is within an agent's reach: no FIFO, device or link is followed.
    let bytes = match crate::state::read_untrusted(path, MAX_RUN_FILE) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(Error::State {
                path: path.to_path_buf(),
                message: e,
                recovery: recovery(slug),
            });
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::State {
            path: path.to_path_buf(),
            message: format!("does not parse: {e}"),
            recovery: recovery(slug),
        })
}

pub fn load_meta(dir: &Path, slug: &str) -> Result<Option<RunMeta>> {
    read_json(&meta_path(dir), slug)
}

pub fn load_state(dir: &Path, slug: &str) -> Result<Option<RunState>> {
    read_json(&state_path(dir), slug)
}

pub fn save_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    crate::state::write_atomic(path, &to_json_bytes(path, value)?)
}

/// Pretty JSON with a final newline, as the run's files are written.
pub fn to_json_bytes<T: Serialize>(path: &Path, value: &T) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::usage(format!("cannot encode {}: {e}", path.display())))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Every run under `.tmp/.forge/runs/`, newest first.
pub fn list(project: &Project) -> Result<Vec<RunMeta>> {
    let dir = runs_dir(project);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("cannot read {}", dir.display()), e)),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let slug = e.file_name().to_string_lossy().into_owned();
        if let Some(m) = load_meta(&e.path(), &slug)? {
            out.push(m);
        }
    }
    out.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planner_fields_round_trip_with_extras_and_progress() {
        let text = r#"{"slices":[{"id":"a","title":"A","depends_on":[],"test_areas":["tests/"],
            "code_areas":["src/"],"focused_command":"cargo test","related_checks":[],
            "expected_red_failure":"x","rationale":"kept"}],"notes":"also kept"}"#;
        let mut s: RunState = serde_json::from_str(text).unwrap();
        assert_eq!(s.slices[0].report, Format::Auto);
        assert!(!s.slices[0].milestone);
        s.slices[0].progress_mut().wave = 1;
        let back = serde_json::to_value(&s).unwrap();
        assert_eq!(back["slices"][0]["rationale"], "kept");
        assert_eq!(back["notes"], "also kept");
        assert_eq!(back["slices"][0]["forge"]["wave"], 1);
        assert_eq!(back["slices"][0]["forge"]["status"], "pending");
    }

    #[test]
    fn a_damaged_state_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(state_path(dir.path()), "{not json").unwrap();
        let e = load_state(dir.path(), "r").unwrap_err().to_string();
        assert!(
            e.contains("state.json") && e.contains("does not parse"),
            "{e}"
        );
        assert!(load_state(&dir.path().join("none"), "r").unwrap().is_none());
    }
}
