//! Waves and retries (`002_…` retry policy): which slice runs next, when a failed slice gets
//! its retry wave, when the run is done or must stop for a person.

use std::collections::BTreeSet;

use serde_json::json;

use super::state::SliceStatus;
use super::{Outcome, RED_ATTEMPTS, Run, SliceEnd, WAVES};
use crate::error::{Error, Result};
use crate::timeline::Recorder;

impl Run<'_> {
    pub(super) fn status_of(&self, i: usize) -> SliceStatus {
        self.state.slices[i].progress().status
    }

    pub(super) fn index_of(&self, id: &str) -> Option<usize> {
        self.state.slices.iter().position(|s| s.id == id)
    }

    /// The failed slices among `i`'s dependencies, transitively.
    pub(super) fn failed_blockers(&self, i: usize) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut stack: Vec<usize> = self.state.slices[i]
            .depends_on
            .iter()
            .filter_map(|d| self.index_of(d))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some(j) = stack.pop() {
            if !seen.insert(j) {
                continue;
            }
            if self.status_of(j) == SliceStatus::Failed {
                out.insert(j);
            }
            stack.extend(
                self.state.slices[j]
                    .depends_on
                    .iter()
                    .filter_map(|d| self.index_of(d)),
            );
        }
        out
    }

    pub(super) fn ready(&self, i: usize) -> bool {
        matches!(
            self.status_of(i),
            SliceStatus::Pending | SliceStatus::Running
        ) && self.state.slices[i]
            .depends_on
            .iter()
            .filter_map(|d| self.index_of(d))
            .all(|j| self.status_of(j).landed())
    }

    pub(super) fn schedule(&mut self) -> Result<Outcome> {
        loop {
            // A slice interrupted by a kill goes first, then the plan's order.
            let next = (0..self.state.slices.len())
                .find(|&i| self.status_of(i) == SliceStatus::Running)
                .or_else(|| (0..self.state.slices.len()).find(|&i| self.ready(i)));
            if let Some(i) = next {
                match self.run_slice(i)? {
                    SliceEnd::Landed => continue,
                    SliceEnd::Stop(reason) => return self.stop(reason),
                    SliceEnd::Failed(reason) => {
                        let id = self.state.slices[i].id.clone();
                        let wave = self.state.slices[i].progress().wave;
                        {
                            let p = self.state.slices[i].progress_mut();
                            p.status = SliceStatus::Failed;
                            p.step = None;
                            p.failure = Some(reason.clone());
                        }
                        self.state.current = None;
                        self.save()?;
                        self.event(
                            "slice-failed",
                            json!({"slice": id, "wave": wave, "reason": reason}),
                        );
                        let last = self.state.slices[i].progress().last_wave.unwrap_or(WAVES);
                        if wave >= last {
                            self.say(&format!(
                                "Slice `{id}` failed again in the retry wave ({reason}): its retries are exhausted. Work that does not depend on it continues."
                            ));
                        } else {
                            self.say(&format!(
                                "Slice `{id}` failed in wave {wave}: {reason}. Independent slices continue."
                            ));
                        }
                        continue;
                    }
                }
            }
            let n = self.state.slices.len();
            let failed: Vec<usize> = (0..n)
                .filter(|&i| self.status_of(i) == SliceStatus::Failed)
                .collect();
            let pending: Vec<usize> = (0..n)
                .filter(|&i| self.status_of(i) == SliceStatus::Pending)
                .collect();
            if failed.is_empty() && pending.is_empty() {
                return self.finish();
            }
            // The retry wave: a failed slice that has not had it is retried when it is the only
            // blocker of some pending slice, or the only remaining work. A slice that failed its
            // retry wave is given up: only a person brings it back (`--retry`).
            let retryable: Vec<usize> = failed
                .iter()
                .copied()
                .filter(|&f| {
                    let p = self.state.slices[f].progress();
                    p.wave < p.last_wave.unwrap_or(WAVES)
                })
                .collect();
            let retry = retryable.iter().copied().find(|&f| {
                let only_blocker = pending
                    .iter()
                    .any(|&p| self.failed_blockers(p) == BTreeSet::from([f]));
                let only_remaining = retryable.len() == 1 && pending.is_empty();
                only_blocker || only_remaining
            });
            match retry {
                Some(f) => {
                    let id = self.state.slices[f].id.clone();
                    let p = self.state.slices[f].progress_mut();
                    p.status = SliceStatus::Pending;
                    p.wave += 1;
                    p.red_attempts = 0;
                    p.green_attempts = 0;
                    p.red_session = None;
                    p.green_session = None;
                    p.feedback = None;
                    p.step = None;
                    p.red_changed.clear();
                    p.green_changed.clear();
                    let wave = p.wave;
                    self.save()?;
                    self.event("retry-wave", json!({"slice": id, "wave": wave}));
                    self.say(&format!(
                        "Retry wave {wave} for slice `{id}` with new agents ({RED_ATTEMPTS} more red attempts)."
                    ));
                }
                None => {
                    let names = |v: &[usize]| {
                        v.iter()
                            .map(|&i| self.state.slices[i].id.clone())
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let exhausted: Vec<usize> = failed
                        .iter()
                        .copied()
                        .filter(|f| !retryable.contains(f))
                        .collect();
                    let list = |v: &[usize]| {
                        if v.is_empty() {
                            "none".to_string()
                        } else {
                            names(v)
                        }
                    };
                    let hint = match exhausted.first().or(retryable.first()) {
                        Some(&f) => format!(
                            ". To give a slice one more wave once its cause is fixed: `forge run --resume {} --retry {}`",
                            self.meta.slug, self.state.slices[f].id
                        ),
                        None => String::new(),
                    };
                    return self.stop(format!(
                        "retries are exhausted for: {}; failed, not retried (neither the only blocker nor the only remaining work): {}; blocked: {}{hint}",
                        list(&exhausted),
                        list(&retryable),
                        list(&pending)
                    ));
                }
            }
        }
    }

    pub(super) fn finish(&mut self) -> Result<Outcome> {
        if self.state.slices.is_empty() {
            return Err(Error::State {
                path: super::state::state_path(&self.dir),
                message: "holds no slices although the plan was accepted".into(),
                recovery: format!(
                    "Remove .tmp/.forge/runs/{}/ and start the run again.",
                    self.meta.slug
                ),
            });
        }
        self.meta.status = super::state::RunStatus::Done;
        self.state.current = None;
        self.save()?;
        let _ = std::fs::remove_file(super::state::active_run_path(self.project));
        let commits: Vec<String> = self
            .state
            .slices
            .iter()
            .filter_map(|s| s.progress().commit.clone())
            .collect();
        self.event("done", json!({"commits": commits}));
        self.say(&format!(
            "Run `{}` DONE: {}; {} commit(s).",
            self.meta.slug,
            super::state::landed_summary(&self.state),
            commits.len()
        ));
        Ok(Outcome::Done)
    }

    /// Whether this slice, once landed, completes the run (so the full checks must run).
    pub(super) fn is_final(&self, i: usize) -> bool {
        (0..self.state.slices.len())
            .filter(|&j| j != i)
            .all(|j| self.status_of(j).landed())
    }

    /// A person's `--retry <slice>` is for a failed slice of this run.
    pub(super) fn check_retry(&self, id: &str) -> Result<usize> {
        let Some(i) = self.index_of(id) else {
            return Err(Error::usage(format!(
                "run `{}` has no slice `{id}` (slices: {})",
                self.meta.slug,
                self.state
                    .slices
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let status = self.status_of(i);
        if status != SliceStatus::Failed {
            return Err(Error::usage(format!(
                "slice `{id}` is {}; only a failed slice can be retried",
                format!("{status:?}").to_lowercase()
            )));
        }
        Ok(i)
    }

    /// A slice a person may `--accept`: one the run stopped at because its test passed before
    /// any code change.
    pub(super) fn check_accept(&self, id: &str) -> Result<usize> {
        let i = self.index_of(id).ok_or_else(|| {
            Error::usage(format!(
                "run `{}` has no slice `{id}` (slices: {})",
                self.meta.slug,
                self.state
                    .slices
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let p = self.state.slices[i].progress();
        if p.status != SliceStatus::Running || p.step != Some(super::state::Step::Accept) {
            return Err(Error::usage(format!(
                "slice `{id}` is not waiting for acceptance: only a slice whose test passed before any code change, where the run stopped, can be accepted (see `forge run --status {}`)",
                self.meta.slug
            )));
        }
        Ok(i)
    }

    /// A person's `--accept <slice>`: the already-green test may land as test-only coverage.
    pub(super) fn accept_by_person(&mut self, id: &str) -> Result<()> {
        let i = self.check_accept(id)?;
        self.state.slices[i].progress_mut().accepted = true;
        self.save()?;
        let who = crate::git::user_name_from_files(self.root()).unwrap_or_else(|| "unknown".into());
        let person = Recorder::new(
            self.project,
            &format!("run-{}", self.meta.slug),
            &format!("human:{who}"),
        );
        person.record_or_warn(
            Some(&self.meta.slug),
            "run",
            json!({"event": "accept-by-person", "run": self.meta.slug, "slice": id}),
        );
        self.say(&format!(
            "Slice `{id}`: its already-green test may land as test-only coverage ({who}'s decision)."
        ));
        Ok(())
    }

    /// A person's `--retry <slice>`: the failed slice gets one more wave with new agents.
    pub(super) fn retry_by_person(&mut self, id: &str) -> Result<()> {
        let i = self.check_retry(id)?;
        // One more wave, with new agents, and no automatic one after it.
        let p = self.state.slices[i].progress_mut();
        p.status = SliceStatus::Pending;
        p.wave += 1;
        p.last_wave = Some(p.wave);
        p.red_attempts = 0;
        p.green_attempts = 0;
        p.red_session = None;
        p.green_session = None;
        p.feedback = None;
        p.failure = None;
        p.step = None;
        p.red_changed.clear();
        p.green_changed.clear();
        self.save()?;
        let who = crate::git::user_name_from_files(self.root()).unwrap_or_else(|| "unknown".into());
        let person = Recorder::new(
            self.project,
            &format!("run-{}", self.meta.slug),
            &format!("human:{who}"),
        );
        person.record_or_warn(
            Some(&self.meta.slug),
            "run",
            json!({"event": "retry-by-person", "run": self.meta.slug, "slice": id, "wave": self.state.slices[i].progress().wave}),
        );
        self.say(&format!(
            "Slice `{id}` gets one more wave with new agents ({who}'s decision)."
        ));
        Ok(())
    }
}
