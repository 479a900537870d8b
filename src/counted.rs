//! A verdict counted: the change's breaker moves and the timeline records the verdict and the
//! move. The one sequence `forge verify --change`, the Stop hook and `forge run`'s checks share,
//! so a verdict is never counted without its record, nor recorded beside a breaker state that
//! was not written.
//!
//! Running the checks stays with each caller (the CLI draws progress, the hook runs silently,
//! `forge run` checks a clean room); this module starts where a verdict exists. It sits above
//! [`crate::verify`], [`crate::breaker`] and [`crate::timeline`], none of which imports it.

use crate::breaker::{self, Outcome};
use crate::error::Result;
use crate::repo::Project;
use crate::spec::Coverage;
use crate::timeline::Recorder;
use crate::verify::{Verdict, VerifyReport};

/// What was verified, as the timeline records it.
#[derive(Debug, Clone, Copy)]
pub enum Verified<'a> {
    /// `forge verify` and the Stop hook: the report (counts, commands, scenarios), then the
    /// breaker's move named by what it did (`opened`, `closed`, `counted`…).
    Report(&'a VerifyReport),
    /// `forge run`'s checks: only the verdict, in one `run-check` breaker event.
    RunCheck(Verdict),
}

impl Verified<'_> {
    fn verdict(&self) -> Verdict {
        match self {
            Verified::Report(r) => r.verdict,
            Verified::RunCheck(v) => *v,
        }
    }
}

/// Counts `verified` in the breaker `key` (none: nothing to count, as for a bare `forge verify`
/// or a FAIL while subagents still run) and records it on `rec` (none: no session to record
/// in). The breaker's state is written before anything is recorded; a record that cannot be
/// written is said on stderr and does not undo the count.
pub fn verdict(
    project: &Project,
    key: Option<&str>,
    verified: Verified<'_>,
    max_failures: u32,
    rec: Option<&Recorder>,
) -> Result<Option<Outcome>> {
    let outcome = match key {
        Some(k) => Some(breaker::record(
            project,
            k,
            verified.verdict(),
            max_failures,
        )?),
        None => None,
    };
    if let Some(rec) = rec {
        match verified {
            Verified::Report(report) => record_report(rec, report, outcome.as_ref()),
            Verified::RunCheck(v) => {
                if let Some(o) = &outcome {
                    rec.record_or_warn(
                        Some(&o.change),
                        "breaker",
                        serde_json::json!({"event": "run-check", "verdict": v.as_str(), "consecutive_failures": o.state.consecutive_failures, "max_failures": o.max_failures, "open": o.state.open}),
                    );
                }
            }
        }
    }
    Ok(outcome)
}

/// Records a verify verdict (with counts) and, with a change, the breaker's move.
fn record_report(rec: &Recorder, report: &VerifyReport, outcome: Option<&Outcome>) {
    let n = |k: Coverage| report.scenarios.iter().filter(|s| s.status == k).count();
    let change = report.change.as_deref();
    rec.record_or_warn(
        change,
        "verify",
        serde_json::json!({
            "verdict": report.verdict.as_str(),
            "passed": report.tests.passed,
            "failed": report.tests.failed,
            "skipped": report.tests.skipped,
            "infra_error": report.tests.infra_error.is_some(),
            "failing": report.tests.failing.iter().take(20).collect::<Vec<_>>(),
            "commands": report.commands.iter().map(|c| serde_json::json!({
                "name": c.name, "exit_code": c.exit_code, "timed_out": c.timed_out, "duration_ms": c.duration_ms,
            })).collect::<Vec<_>>(),
            "scenarios": {"covered": n(Coverage::Covered), "failing": n(Coverage::Failing), "uncovered": n(Coverage::Uncovered)},
        }),
    );
    if let Some(o) = outcome {
        let event = if o.state.open && !o.was_open {
            "opened"
        } else if o.state.open {
            "still-open"
        } else if o.was_open {
            "closed"
        } else if o.state.consecutive_failures == 0 {
            "passed"
        } else {
            "counted"
        };
        rec.record_or_warn(
            change,
            "breaker",
            serde_json::json!({
                "event": event,
                "consecutive_failures": o.state.consecutive_failures,
                "max_failures": o.max_failures,
                "open": o.state.open,
                "total_attempts": o.state.total_attempts,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Filter, read};

    fn report(verdict: Verdict, change: Option<&str>) -> VerifyReport {
        VerifyReport {
            verdict,
            change: change.map(str::to_string),
            commands: Vec::new(),
            not_run: Vec::new(),
            tests: Default::default(),
            cases: Vec::new(),
            scenarios: Vec::new(),
            reasons: Vec::new(),
        }
    }

    fn kinds(project: &Project) -> Vec<(String, Option<String>, String)> {
        read(&project.root, &Filter::default())
            .unwrap()
            .into_iter()
            .map(|e| {
                let ev = e.data["event"].as_str().unwrap_or("").to_string();
                (e.kind, e.change, ev)
            })
            .collect()
    }

    #[test]
    fn a_report_is_counted_then_recorded_with_the_breakers_move() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path());
        let rec = Recorder::new(&p, "s", "human:t");
        let r = report(Verdict::Fail, Some("c"));
        let o = verdict(&p, Some("c"), Verified::Report(&r), 1, Some(&rec))
            .unwrap()
            .unwrap();
        assert!(o.state.open);
        assert_eq!(breaker::load(&p, "c").unwrap(), Some(o.state));
        let c = Some("c".to_string());
        assert_eq!(
            kinds(&p),
            [
                ("verify".into(), c.clone(), String::new()),
                ("breaker".into(), c, "opened".into())
            ]
        );
    }

    #[test]
    fn without_a_key_nothing_is_counted_and_the_report_is_still_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path());
        let rec = Recorder::new(&p, "s", "human:t");
        let r = report(Verdict::Fail, None);
        let o = verdict(&p, None, Verified::Report(&r), 3, Some(&rec)).unwrap();
        assert!(o.is_none());
        assert_eq!(kinds(&p), [("verify".to_string(), None, String::new())]);
        assert!(!p.root.join(".forge").join("changes").exists());
    }

    #[test]
    fn a_run_check_is_one_breaker_event_under_the_runs_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path());
        let rec = Recorder::new(&p, "run-x", "forge:run");
        let o = verdict(
            &p,
            Some("x"),
            Verified::RunCheck(Verdict::Fail),
            3,
            Some(&rec),
        )
        .unwrap()
        .unwrap();
        assert_eq!(o.state.consecutive_failures, 1);
        assert_eq!(
            kinds(&p),
            [(
                "breaker".to_string(),
                Some("x".to_string()),
                "run-check".to_string()
            )]
        );
        // No recorder: still counted.
        verdict(&p, Some("x"), Verified::RunCheck(Verdict::Fail), 3, None).unwrap();
        assert_eq!(
            breaker::load(&p, "x")
                .unwrap()
                .unwrap()
                .consecutive_failures,
            2
        );
    }
}
