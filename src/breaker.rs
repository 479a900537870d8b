//! The per-change circuit breaker: consecutive verify failures of a change are counted in
//! `.forge/changes/<change>/verify-attempts.yaml`; at the threshold the circuit opens and verify
//! exits non-zero until a passing verify or a person's `--reset-breaker` closes it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{EXIT_GATE, EXIT_OK, Result};
use crate::repo::Project;
use crate::state::{self, StateDoc};
use crate::verify::Verdict;

pub const STATE_FILE: &str = "verify-attempts.yaml";

/// The breaker an agent's Stop hook counts its verify of all changes under when no change is active.
/// A change name, so that everything a person knows about a change's breaker works for it:
/// `forge change list` shows it, `forge verify --reset-breaker --change all-changes` resets it,
/// and its state is `.forge/changes/all-changes/verify-attempts.yaml`. Project-wide rather than
/// per session, like a change's: a new session does not buy an agent a fresh streak.
pub const ALL_CHANGES: &str = "all-changes";

/// Consecutive FAILs that open the circuit when the config does not say.
pub const DEFAULT_MAX_FAILURES: u32 = 3;

/// The `breaker:` section of `.forge/config.yaml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerConfig {
    #[serde(default = "default_max_failures")]
    pub max_failures: u32,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            max_failures: DEFAULT_MAX_FAILURES,
        }
    }
}

fn default_max_failures() -> u32 {
    DEFAULT_MAX_FAILURES
}

impl BreakerConfig {
    /// Checks what serde cannot; the message names the key.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.max_failures == 0 {
            return Err("`breaker.max_failures` must be at least 1".into());
        }
        Ok(())
    }
}

/// The persisted state. The first four fields are the documented contract, in this order; the
/// reset record follows them so the contract stays intact.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerState {
    pub consecutive_failures: u32,
    pub open: bool,
    pub last_verdict: Option<Verdict>,
    pub total_attempts: u64,
    /// When a person last ran `--reset-breaker` (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reset_at: Option<String>,
    /// Who did (git `user.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reset_by: Option<String>,
}

impl StateDoc for BreakerState {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        if text.trim().is_empty() {
            return Err(
                "is empty; expected consecutive_failures, open, last_verdict, total_attempts"
                    .into(),
            );
        }
        let s: BreakerState = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        if s.open && s.consecutive_failures == 0 {
            return Err(
                "says `open: true` with `consecutive_failures: 0`, which Forge never writes".into(),
            );
        }
        if u64::from(s.consecutive_failures) > s.total_attempts {
            return Err(format!(
                "says {} consecutive failures out of only {} attempts, which Forge never writes",
                s.consecutive_failures, s.total_attempts
            ));
        }
        Ok(s)
    }

    fn render(&self) -> String {
        let mut out = format!(
            "consecutive_failures: {}\nopen: {}\nlast_verdict: {}\ntotal_attempts: {}\n",
            self.consecutive_failures,
            self.open,
            self.last_verdict.as_ref().map_or("null", Verdict::as_str),
            self.total_attempts
        );
        if let Some(at) = &self.last_reset_at {
            out.push_str(&format!("last_reset_at: {}\n", quote(at)));
        }
        if let Some(by) = &self.last_reset_by {
            out.push_str(&format!("last_reset_by: {}\n", quote(by)));
        }
        out
    }
}

/// A JSON string is a valid YAML double-quoted scalar: safe for any name.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

pub fn state_path(project: &Project, change: &str) -> PathBuf {
    project.change_dir(change).join(STATE_FILE)
}

/// What a person does about a state file Forge will not trust.
pub fn recovery(change: &str) -> String {
    format!(
        "Inspect it (an agent may have edited it), then clear it with: forge verify --reset-breaker --change {change}"
    )
}

pub fn load(project: &Project, change: &str) -> Result<Option<BreakerState>> {
    state::load(&state_path(project, change), &recovery(change))
}

/// The breaker after one verify attempt.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub change: String,
    pub state: BreakerState,
    pub max_failures: u32,
    pub was_open: bool,
}

impl Outcome {
    /// The line printed after the verdict. The FAIL lines are the documented contract, to the
    /// character.
    pub fn line(&self) -> String {
        let s = &self.state;
        let c = &self.change;
        if s.open {
            format!(
                "Breaker: CIRCUIT OPEN — {} consecutive verify failures for change \"{c}\".",
                s.consecutive_failures
            )
        } else if s.last_verdict == Some(Verdict::Fail) {
            format!(
                "Breaker: {}/{} consecutive failures for change \"{c}\" — fix the smallest cause and re-run.",
                s.consecutive_failures, self.max_failures
            )
        } else if self.was_open {
            format!(
                "Breaker: closed — verify passed for change \"{c}\"; streak reset to 0/{}.",
                self.max_failures
            )
        } else {
            format!(
                "Breaker: 0/{} consecutive failures for change \"{c}\" — verify passed.",
                self.max_failures
            )
        }
    }

    /// 0 while the streak builds, 1 at the threshold and while open.
    pub fn exit_code(&self) -> i32 {
        if self.state.open { EXIT_GATE } else { EXIT_OK }
    }
}

/// Counts one attempt with its verdict, under the change's lock.
pub fn record(
    project: &Project,
    change: &str,
    verdict: Verdict,
    max_failures: u32,
) -> Result<Outcome> {
    let path = state_path(project, change);
    state::update(&path, &recovery(change), |current: Option<BreakerState>| {
        let mut s = current.unwrap_or_default();
        let was_open = s.open;
        s.total_attempts += 1;
        s.last_verdict = Some(verdict);
        match verdict {
            Verdict::Pass => {
                s.consecutive_failures = 0;
                s.open = false;
            }
            Verdict::Fail => {
                s.consecutive_failures = s.consecutive_failures.saturating_add(1);
                s.open = s.open || s.consecutive_failures >= max_failures;
            }
        }
        let outcome = Outcome {
            change: change.to_string(),
            state: s.clone(),
            max_failures,
            was_open,
        };
        Ok((s, outcome))
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct ResetOutcome {
    pub change: String,
    /// The state before the reset; `None` when the file was unreadable.
    pub before: Option<BreakerState>,
    pub after: BreakerState,
    /// Why the previous file could not be read, when it could not.
    pub unreadable: Option<String>,
}

/// A person's "I intervened": clears the streak and the open flag, keeps `total_attempts` and
/// `last_verdict`, and records when and by whom. It also clears a state file that does not
/// parse — the recovery that the fail-closed load points to.
pub fn reset(project: &Project, change: &str, by: &str, at: &str) -> Result<ResetOutcome> {
    let path = state_path(project, change);
    state::update_or_recover(
        &path,
        |current: std::result::Result<Option<BreakerState>, String>| {
            let (before, unreadable) = match current {
                Ok(b) => (b, None),
                Err(e) => (None, Some(e)),
            };
            let mut after = before.clone().unwrap_or_default();
            after.consecutive_failures = 0;
            after.open = false;
            after.last_reset_at = Some(at.to_string());
            after.last_reset_by = Some(by.to_string());
            let outcome = ResetOutcome {
                change: change.to_string(),
                before,
                after: after.clone(),
                unreadable,
            };
            Ok((after, outcome))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_four_contract_fields_first() {
        let s = BreakerState {
            consecutive_failures: 3,
            open: true,
            last_verdict: Some(Verdict::Fail),
            total_attempts: 7,
            ..Default::default()
        };
        assert_eq!(
            s.render(),
            "consecutive_failures: 3\nopen: true\nlast_verdict: FAIL\ntotal_attempts: 7\n"
        );
        assert_eq!(BreakerState::parse(&s.render()).unwrap(), s);
    }

    #[test]
    fn reset_record_round_trips_with_awkward_names() {
        let s = BreakerState {
            last_verdict: Some(Verdict::Pass),
            total_attempts: 2,
            last_reset_at: Some("2026-11-30T02:00:00Z".into()),
            last_reset_by: Some("O'Neil: \"the\" #1".into()),
            ..Default::default()
        };
        assert_eq!(BreakerState::parse(&s.render()).unwrap(), s);
    }

    #[test]
    fn tampered_states_are_rejected() {
        for bad in [
            "",
            "consecutive_failures: -1\nopen: false\nlast_verdict: FAIL\ntotal_attempts: 1\n",
            "consecutive_failures: 0\nopen: true\nlast_verdict: FAIL\ntotal_attempts: 1\n",
            "consecutive_failures: 5\nopen: true\nlast_verdict: FAIL\ntotal_attempts: 2\n",
            "consecutive_failures: 1\nopen: false\nlast_verdict: MAYBE\ntotal_attempts: 1\n",
            "consecutive_failures: 1\nopen: false\nlast_verdict: FAIL\ntotal_attempts: 1\nbonus: 1\n",
            "consecutive_failures: 1\nopen: [",
        ] {
            assert!(BreakerState::parse(bad).is_err(), "accepted: {bad:?}");
        }
    }

    #[test]
    fn streak_opens_at_threshold_and_passes_close_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path());
        let mut lines = Vec::new();
        for _ in 0..3 {
            let o = record(&p, "checkout", Verdict::Fail, 3).unwrap();
            lines.push((o.line(), o.exit_code()));
        }
        assert_eq!(
            lines[0].0,
            "Breaker: 1/3 consecutive failures for change \"checkout\" — fix the smallest cause and re-run."
        );
        assert_eq!(lines[1].1, 0);
        assert_eq!(
            lines[2],
            (
                "Breaker: CIRCUIT OPEN — 3 consecutive verify failures for change \"checkout\"."
                    .to_string(),
                1
            )
        );
        let o = record(&p, "checkout", Verdict::Fail, 3).unwrap();
        assert_eq!((o.state.consecutive_failures, o.exit_code()), (4, 1));
        let o = record(&p, "checkout", Verdict::Pass, 3).unwrap();
        assert!(o.was_open && !o.state.open);
        assert_eq!(
            (
                o.state.consecutive_failures,
                o.state.total_attempts,
                o.exit_code()
            ),
            (0, 5, 0)
        );
    }

    #[test]
    fn reset_keeps_totals_and_records_who() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path());
        for _ in 0..3 {
            record(&p, "c", Verdict::Fail, 3).unwrap();
        }
        let r = reset(&p, "c", "Ada", "2026-11-30T02:00:00Z").unwrap();
        assert_eq!(r.before.unwrap().consecutive_failures, 3);
        let s = load(&p, "c").unwrap().unwrap();
        assert_eq!(
            (s.consecutive_failures, s.open, s.total_attempts),
            (0, false, 3)
        );
        assert_eq!(s.last_verdict, Some(Verdict::Fail));
        assert_eq!(s.last_reset_by.as_deref(), Some("Ada"));
    }

    #[test]
    fn corrupt_file_blocks_record_but_not_reset() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path());
        let path = state_path(&p, "c");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "consecutive_failures: lots\n").unwrap();
        let e = record(&p, "c", Verdict::Fail, 3).unwrap_err().to_string();
        assert!(
            e.contains("verify-attempts.yaml") && e.contains("--reset-breaker --change c"),
            "{e}"
        );
        let r = reset(&p, "c", "Ada", "t").unwrap();
        assert!(r.unreadable.is_some());
        assert_eq!(load(&p, "c").unwrap().unwrap().total_attempts, 0);
    }
}
