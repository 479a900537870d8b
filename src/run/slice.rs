//! One slice from start to landing, and resuming one: the pre-red baseline, then red (red.rs),
//! then green and the landing (green.rs). Also what a resume finds: a person's changes since
//! the run stopped are theirs — kept, named, never reverted.

use std::path::PathBuf;

use serde_json::json;

use super::agent::{self, Role};
use super::checks::{command_failure, ran_no_tests};
use super::gates::{self, GateResult};
use super::state::{SliceStatus, Step};
use super::{RedEnd, Run, SliceEnd};
use crate::error::{Error, Result};
use crate::evidence::Snapshot;
use crate::git;
use crate::report::Status;

impl Run<'_> {
    pub(super) fn run_slice(&mut self, i: usize) -> Result<SliceEnd> {
        let id = self.state.slices[i].id.clone();
        let head = git::head(self.root())?;
        let resumed_step = {
            let p = self.state.slices[i].progress_mut();
            let resumed = if p.status == SliceStatus::Running {
                p.step
            } else {
                None
            };
            if p.status != SliceStatus::Running {
                p.status = SliceStatus::Running;
                p.start_sha = Some(head.clone());
                p.checkpoint = None;
                p.red_tests.clear();
                p.red_changed.clear();
                p.green_changed.clear();
                p.failing_case = None;
                p.step = Some(Step::Red);
            }
            if p.red_session.is_none() {
                p.red_session = Some(agent::new_session_id());
            }
            if p.green_session.is_none() {
                p.green_session = Some(agent::new_session_id());
            }
            resumed
        };
        let wave = self.state.slices[i].progress().wave;
        self.save()?;
        self.say(&format!(
            "Slice `{id}` (wave {wave}): {}",
            self.state.slices[i].title
        ));
        let start_sha = self.start_sha(i)?;

        match resumed_step {
            Some(Step::Green) | Some(Step::Final) => {
                let cp = self.recorded(
                    i,
                    "checkpoint",
                    self.state.slices[i].progress().checkpoint.clone(),
                )?;
                // A final commit a kill interrupted is never adopted as it stands: the branch
                // goes back to the checkpoint (its tree stays in the working tree) and green's
                // work is judged and checked again before Forge commits it anew.
                self.head_is_forges(i, &[cp.as_str()])?;
                self.undo_commits(&cp)?;
                if self.after_kill
                    && let Some(why) = self.recheck_checkpoint(i)?
                {
                    let p = self.state.slices[i].progress().clone();
                    let mut paths = p.red_tests.clone();
                    paths.extend(p.green_changed.iter().cloned());
                    self.restore_to(&start_sha, &paths)?;
                    return Ok(SliceEnd::Failed(format!(
                        "the red checkpoint did not hold when re-checked after the interruption: {why}"
                    )));
                }
                return self.green(i, true);
            }
            Some(Step::Accept) => {
                return match self.resume_acceptance(i)? {
                    RedEnd::Verified => self.green(i, false),
                    RedEnd::Covered => Ok(SliceEnd::Landed),
                    RedEnd::End(e) => Ok(e),
                };
            }
            Some(Step::Red) => {
                // An interrupted red attempt: a checkpoint commit a kill left at HEAD is undone
                // (the test stays in the working tree); commits that are not the run's own — a
                // person's, made while it was stopped — stop the resume.
                self.head_is_forges(i, &[start_sha.as_str()])?;
                self.undo_commits(&start_sha)?;
            }
            None => {}
        }
        if self.state.slices[i].progress().red_attempts == 0 {
            let r = self.baseline(i)?;
            if !r.passed() {
                // The baseline runs the plan's command on START_SHA before any agent of the
                // slice: new agents would meet the same failure, so no retry wave follows.
                let p = self.state.slices[i].progress_mut();
                p.last_wave = Some(p.wave);
                return Ok(SliceEnd::Failed(format!(
                    "pre-red baseline: {}",
                    r.reason()
                )));
            }
        }
        match self.red(i)? {
            RedEnd::Verified => self.green(i, false),
            RedEnd::Covered => Ok(SliceEnd::Landed),
            RedEnd::End(e) => Ok(e),
        }
    }

    /// Pre-red baseline gate: the focused command passes on START_SHA's tree before red edits,
    /// and its report names the cases that pass (red and green must keep every one of them).
    fn baseline(&mut self, i: usize) -> Result<GateResult> {
        let s = self.state.slices[i].clone();
        let start = self.start_sha(i)?;
        let tree = self.seen.tree(&self.project.root, &start)?;
        let res = self.check(&s.id, "baseline", &s.focused_command, s.report, &tree)?;
        let ok = res.ok || ran_no_tests(&res);
        if !ok && let Some(file) = names_new_test_file(&s.focused_command, &s.test_areas, &tree) {
            return self.baseline_for_new_file(i, &file, &tree);
        }
        let names: Vec<String> = res
            .report
            .cases
            .iter()
            .filter(|c| c.status == Status::Passed)
            .map(|c| c.name.clone())
            .collect();
        let counted = res.report.counts().passed;
        self.state.slices[i].progress_mut().baseline_cases = names.clone();
        let r = if ok && names.is_empty() && counted > 0 {
            GateResult::fail(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` passes, but its report counts {counted} passing case(s) without naming them: Forge could not check that red and green keep them; make the command name its cases (pytest: -rA or -v)", s.focused_command), "command": s.focused_command, "log": res.log}),
                true,
                "the planner chose this command: start a new run whose goal asks for a focused command that names its cases (pytest: -rA or -v)",
            )
        } else if ok {
            GateResult::pass(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` passes", s.focused_command), "command": s.focused_command, "log": res.log, "passed": counted, "cases": names}),
            )
        } else {
            GateResult::fail(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` fails before any red change: {}", s.focused_command, command_failure(&res)), "command": s.focused_command, "exit_code": res.exit_code, "log": res.log, "tail": crate::text::clip_tail(&res.tail, 2000)}),
                true,
                "stop the slice and report the baseline failure",
            )
        };
        self.gate(Some(i), &r)?;
        Ok(r)
    }

    /// The pre-red baseline of a focused command that names a test file red will write (what a
    /// person or a model writes: `pytest -rA tests/test_new.py`): it cannot pass before red, so
    /// the person's verify commands show instead that START_SHA is sound. No case passed through
    /// the focused command before red, so red and green have none of it to keep.
    fn baseline_for_new_file(
        &mut self,
        i: usize,
        file: &str,
        tree: &crate::evidence::Snapshot,
    ) -> Result<GateResult> {
        let s = self.state.slices[i].clone();
        let full = self.full_checks(&s.id, tree)?;
        self.state.slices[i].progress_mut().baseline_cases = Vec::new();
        let failed: Vec<&crate::verify::CommandResult> =
            full.iter().filter(|r| !r.ok && !ran_no_tests(r)).collect();
        let r = match failed.first() {
            None => GateResult::pass(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` names {file}, which red will write; the verify commands pass on START_SHA", s.focused_command), "command": s.focused_command, "new_file": file, "verify": full.iter().map(|r| json!({"command": r.run, "log": r.log})).collect::<Vec<_>>()}),
            ),
            Some(f) => GateResult::fail(
                gates::PRE_RED_BASELINE,
                json!({"reason": format!("`{}` names {file}, which red will write, and the verify command `{}` fails before any red change: {}", s.focused_command, f.run, command_failure(f)), "command": f.run, "exit_code": f.exit_code, "log": f.log, "tail": crate::text::clip_tail(&f.tail, 2000)}),
                true,
                "make the project's verify commands pass on its base (`forge verify`), then resume",
            ),
        };
        self.gate(Some(i), &r)?;
        Ok(r)
    }

    /// Counts one more red or green attempt of slice `i`, marks the phase for the guard, and
    /// returns the attempt number, the feedback for it and the agent session to continue.
    pub(super) fn begin_attempt(
        &mut self,
        i: usize,
        step: Step,
    ) -> Result<(u32, Option<String>, String)> {
        let p = self.state.slices[i].progress_mut();
        let (attempts, total, session) = match step {
            Step::Green => (
                &mut p.green_attempts,
                &mut p.green_attempts_total,
                &p.green_session,
            ),
            _ => (
                &mut p.red_attempts,
                &mut p.red_attempts_total,
                &p.red_session,
            ),
        };
        *attempts += 1;
        *total += 1;
        let out = (*attempts, session.clone().unwrap_or_default());
        p.step = Some(step);
        let feedback = p.feedback.take();
        let id = self.state.slices[i].id.clone();
        let phase = if step == Step::Green { "green" } else { "red" };
        self.set_current(&id, phase, None)?;
        Ok((out.0, feedback, out.1))
    }

    /// On resume: HEAD must be one of `expected`, or the commit Forge recorded it was about to
    /// make (a kill fell between the record and the branch update). Anything else — a person's
    /// commits since the run stopped, or an agent's, however it is worded — is named, never
    /// reset away and never taken for Forge's.
    pub(super) fn head_is_forges(&self, i: usize, expected: &[&str]) -> Result<()> {
        let head = git::head(self.root())?;
        let pending = self.state.slices[i].progress().pending_commit.clone();
        if expected.contains(&head.as_str()) || pending.as_deref() == Some(head.as_str()) {
            return Ok(());
        }
        let graph = git::graph(self.root()).unwrap_or_default();
        Err(Error::usage(format!(
            "HEAD ({}) is not where run `{}` left slice `{}` ({}): commits were made since it stopped. Move them off this branch (or reset to {}), then resume.\n{graph}",
            &head[..head.len().min(10)],
            self.meta.slug,
            self.state.slices[i].id,
            expected
                .iter()
                .map(|e| &e[..e.len().min(10)])
                .collect::<Vec<_>>()
                .join(" or "),
            &expected[0][..expected[0].len().min(10)]
        )))
    }

    /// After a kill, the red checkpoint is proven again from evidence before green builds on
    /// it — the run folder that recorded it was within an agent's reach: its parent is
    /// START_SHA, it changes only what red may change, and on its tree (against START_SHA's) the
    /// focused command fails with exactly the verified case while every case that passed
    /// before still passes. `Some(why)` when it does not hold.
    fn recheck_checkpoint(&mut self, i: usize) -> Result<Option<String>> {
        let s = self.state.slices[i].clone();
        let p = s.progress().clone();
        let start = self.start_sha(i)?;
        let cp = self.recorded(i, "checkpoint", p.checkpoint.clone())?;
        let root = self.project.root.clone();
        if self.seen.odb(&root).parent(&cp)?.as_deref() != Some(start.as_str()) {
            return Ok(Some(format!("its parent is not START_SHA {start}")));
        }
        let start_tree = self.seen.tree(&root, &start)?;
        let cp_tree = self.seen.tree(&root, &cp)?;
        let tracked: Vec<String> = start_tree.entries.keys().cloned().collect();
        let harness = self
            .harness()
            .files(&tracked, &[s.focused_command.as_str()]);
        let changes = start_tree.diff(&cp_tree);
        let phase = gates::Phase::Red {
            test_areas: &s.test_areas,
            harness: &harness,
        };
        let mut oids: Vec<&str> = Vec::new();
        for c in &changes {
            if let (
                Some(crate::evidence::Entry::File { oid: o, .. }),
                Some(crate::evidence::Entry::File { oid: n, .. }),
            ) = (&c.before, &c.after)
            {
                oids.push(o);
                oids.push(n);
            }
        }
        let blobs = self.seen.odb(&root).read(&oids, "blob")?;
        for c in &changes {
            if let Some(w) = gates::disallowed(&phase, c, None) {
                return Ok(Some(format!("it changes {} ({w})", c.path)));
            }
            if !self.config.run.red_may_edit_tests {
                match (&c.before, &c.after) {
                    (
                        Some(crate::evidence::Entry::File { oid: o, .. }),
                        Some(crate::evidence::Entry::File { oid: n, .. }),
                    ) => {
                        if let Err(e) = gates::only_adds(&blobs[o.as_str()], &blobs[n.as_str()]) {
                            return Ok(Some(format!("it changes {}: {e}", c.path)));
                        }
                    }
                    (Some(_), _) => return Ok(Some(format!("it removes or replaces {}", c.path))),
                    _ => {}
                }
            }
        }
        let tests: Vec<String> = changes.into_iter().map(|c| c.path).collect();
        if tests.is_empty() {
            return Ok(Some("it holds no test".into()));
        }
        let base = self.check(
            &s.id,
            "recheck-baseline",
            &s.focused_command,
            s.report,
            &start_tree,
        )?;
        if !base.ok {
            return Ok(Some(
                "the focused command no longer passes on START_SHA".into(),
            ));
        }
        let baseline: Vec<String> = base
            .report
            .cases
            .iter()
            .filter(|c| c.status == crate::report::Status::Passed)
            .map(|c| c.name.clone())
            .collect();
        let red = self.check(&s.id, "recheck-red", &s.focused_command, s.report, &cp_tree)?;
        let unbuilt = self.unbuilt(&red, &start_tree, &cp_tree, &tests)?;
        let outcome = super::red::classify(&red, unbuilt.as_ref());
        let compiles = !matches!(outcome, gates::RedOutcome::NewApi { .. });
        let case = match outcome {
            gates::RedOutcome::One { case, .. } | gates::RedOutcome::NewApi { case, .. } => case,
            gates::RedOutcome::AlreadyGreen => return Ok(Some("its test passes".into())),
            gates::RedOutcome::NotRed(why) => return Ok(Some(why)),
        };
        if !p
            .failing_case
            .as_deref()
            .is_some_and(|f| gates::same_case(f, &case))
        {
            return Ok(Some(format!(
                "the case that fails is `{case}`, not the verified one"
            )));
        }
        // A red of new API runs no case (see `gates::new_api`): nothing to hold it to here.
        let problems = if compiles {
            super::checks::evidence_problems(
                &red,
                &gates::Expect {
                    cases: true,
                    passing: None,
                    baseline: &baseline,
                    except: Some(&case),
                },
            )
        } else {
            Vec::new()
        };
        if let Some(p) = problems.first() {
            return Ok(Some(p.clone()));
        }
        let p = self.state.slices[i].progress_mut();
        p.red_tests = tests;
        p.baseline_cases = baseline;
        Ok(None)
    }

    /// On resume: whatever differs from the tree Forge last saw is a person's (or the work of
    /// an agent whose call a kill interrupted — Forge cannot tell, so it never blames the
    /// agent): named, and never reverted. Changes in the running slice's own area (test areas
    /// in red, code areas in green) are taken into the slice as the person's contribution,
    /// judged by its gates like any other; the rest stays out of the run. A change to the
    /// verified test or the test harness of a slice in green cannot be either: the resume stops
    /// (exit 2) naming it.
    pub(super) fn adopt_persons_changes(&mut self) -> Result<()> {
        let Some(obs) = self.meta.observed.clone() else {
            return Ok(());
        };
        if git::head(self.root())? != obs.head {
            // The slice's resume checks name moved commits; nothing to compare against here.
            return Ok(());
        }
        let mut last: Snapshot = (*self.seen.tree(&self.project.root, &obs.head)?).clone();
        for (p, e) in &obs.changes {
            match e {
                Some(e) => last.entries.insert(p.clone(), e.clone()),
                None => last.entries.remove(p),
            };
        }
        let now = self.observe(&obs.head)?;
        let changed: Vec<String> = last.diff(&now).into_iter().map(|c| c.path).collect();
        if let Some(call) = self.meta.in_call.clone() {
            return self.judge_interrupted(&call, &obs.head, last, now);
        }
        if changed.is_empty() {
            return Ok(());
        }
        let running = (0..self.state.slices.len())
            .find(|&i| self.state.slices[i].progress().status == SliceStatus::Running);
        let harness = self.harness();
        let mut adopted = Vec::new();
        let mut blocked = Vec::new();
        let mut kept = Vec::new();
        for f in changed {
            let Some(i) = running else {
                kept.push(f);
                continue;
            };
            let s = &self.state.slices[i];
            let p = s.progress();
            let tracked: Vec<String> = last.entries.keys().cloned().collect();
            let is_harness = harness.files(&tracked, &[]).contains(&f);
            match p.step {
                Some(Step::Green) | Some(Step::Final) => {
                    if p.red_tests.contains(&f) || is_harness {
                        blocked.push(f);
                    } else if gates::in_areas(&s.code_areas, &f)
                        && !gates::in_areas(&s.test_areas, &f)
                    {
                        adopted.push(f);
                    } else {
                        kept.push(f);
                    }
                }
                _ => {
                    // Held to red's rules, as red's own change would be: an existing test may
                    // only gain lines.
                    let start = p.start_sha.clone().unwrap_or_default();
                    let was = self
                        .seen
                        .tree(&self.project.root, &start)
                        .ok()
                        .and_then(|t| t.entries.get(&f).cloned());
                    let adds_only = match (&was, now.entries.get(&f)) {
                        (None, _) => true,
                        _ if self.config.run.red_may_edit_tests => true,
                        (
                            Some(crate::evidence::Entry::File { oid: o, .. }),
                            Some(crate::evidence::Entry::File { oid: n, .. }),
                        ) => self
                            .seen
                            .odb(&self.project.root)
                            .read(&[o.as_str(), n.as_str()], "blob")
                            .is_ok_and(|b| gates::only_adds(&b[o], &b[n]).is_ok()),
                        _ => false,
                    };
                    if !adds_only {
                        blocked.push(f);
                    } else if gates::in_areas(&s.test_areas, &f) && !is_harness {
                        adopted.push(f);
                    } else {
                        kept.push(f);
                    }
                }
            }
        }
        if !blocked.is_empty() {
            return Err(Error::usage(format!(
                "{} changed since run `{}` last saw the tree (by you, or by the agent a kill interrupted): the slice's existing and verified tests and the test harness must stay as the slice started with them. Stash the change (`git stash push -- {}`), resume, and apply it once the slice has landed",
                blocked.join(", "),
                self.meta.slug,
                blocked.join(" ")
            )));
        }
        if let Some(i) = running
            && !adopted.is_empty()
        {
            let p = self.state.slices[i].progress_mut();
            let list = if matches!(p.step, Some(Step::Green) | Some(Step::Final)) {
                &mut p.green_changed
            } else {
                &mut p.red_changed
            };
            for f in &adopted {
                if !list.contains(f) {
                    list.push(f.clone());
                }
            }
            self.say(&format!(
                "  ! changed since the run stopped (by you, or by the agent a kill interrupted), taken into slice `{}` and judged by its gates: {}",
                self.state.slices[i].id,
                adopted.join(", ")
            ));
        }
        if !kept.is_empty() {
            self.say(&format!(
                "  ! changed since the run stopped: {} — kept as yours: never reverted, never committed by the run",
                kept.join(", ")
            ));
            for f in &kept {
                if !self.meta.person_paths.contains(f) {
                    self.meta.person_paths.push(f.clone());
                }
            }
        }
        self.event("persons-changes", json!({"adopted": adopted, "kept": kept}));
        self.remember(&obs.head, &now)?;
        self.save()
    }

    /// On resume after a kill that fell during an agent call: what changed since Forge saw the
    /// tree just before the call may be that agent's or a person's since — Forge cannot tell,
    /// so nothing is adopted as a person's (issue 31). It is judged by the rules the call's phase
    /// would have applied when the call returned (scope, links, harness, red only adds; the
    /// verifier, planner and reviewer change nothing): what they allow is taken into the slice
    /// and judged by its gates like the agent's work; if anything breaks them, the resume stops
    /// (exit 2) naming it and the way out, and nothing is reverted — it may be a person's.
    fn judge_interrupted(
        &mut self,
        call: &super::state::InCall,
        head: &str,
        before: Snapshot,
        now: Snapshot,
    ) -> Result<()> {
        let i = call
            .slice
            .as_ref()
            .and_then(|id| self.state.slices.iter().position(|s| &s.id == id));
        let a = super::observe::Attempt {
            before,
            after: now,
            restored: Vec::new(),
            commits: Vec::new(),
            head_moved: None,
        };
        let tracked: Vec<String> = a.before.entries.keys().cloned().collect();
        let scope = match (call.role.as_str(), i) {
            ("red", Some(i)) => {
                let s = self.state.slices[i].clone();
                let start = self.start_sha(i)?;
                let start_tree = self.seen.tree(&self.project.root, &start)?;
                let harness = self.harness().files(
                    &super::red::paths_of(&tracked, &a.after),
                    &[s.focused_command.as_str()],
                );
                let phase = gates::Phase::Red {
                    test_areas: &s.test_areas,
                    harness: &harness,
                };
                let only = (!self.config.run.red_may_edit_tests).then_some(&*start_tree);
                self.classify(&phase, &a, only)?
            }
            ("green", Some(i)) => {
                let s = self.state.slices[i].clone();
                let p = s.progress().clone();
                let harness = self.harness().files(
                    &super::red::paths_of(&tracked, &a.after),
                    &[s.focused_command.as_str()],
                );
                let phase = gates::Phase::Green {
                    code_areas: &s.code_areas,
                    test_areas: &s.test_areas,
                    red_tests: &p.red_tests,
                    harness: &harness,
                };
                self.classify(&phase, &a, None)?
            }
            (role, _) => self.classify(&gates::Phase::ReadOnly { role }, &a, None)?,
        };
        if !scope.disallowed.is_empty() {
            let paths: Vec<&str> = scope.disallowed.iter().map(|(p, _)| p.as_str()).collect();
            let list: Vec<String> = scope
                .disallowed
                .iter()
                .map(|(p, w)| format!("{p} ({w})"))
                .collect();
            let untracked = paths.iter().any(|p| !a.before.entries.contains_key(*p));
            return Err(Error::usage(format!(
                "{} changed since run `{}` last saw the tree, while the {} agent a kill interrupted was running (or by you since: Forge cannot tell), and that agent may not make such a change: {}. If it is yours, set it aside (`git stash push{} -- {}`), resume, and apply it once the run is done; if it is the agent's, undo it; then resume",
                paths.join(", "),
                self.meta.slug,
                call.role,
                list.join("; "),
                if untracked { " -u" } else { "" },
                paths.join(" ")
            )));
        }
        if let Some(i) = i {
            let p = self.state.slices[i].progress_mut();
            let list = if call.role == "green" {
                &mut p.green_changed
            } else {
                &mut p.red_changed
            };
            for f in &scope.changed {
                if !list.contains(f) {
                    list.push(f.clone());
                }
            }
        }
        if !scope.changed.is_empty() {
            self.say(&format!(
                "  ! the {} agent's call was interrupted: what it changed is taken into the slice and judged by its gates: {}",
                call.role,
                scope.changed.join(", ")
            ));
        }
        self.event(
            "interrupted-call",
            json!({"role": call.role, "slice": call.slice, "kept": scope.changed}),
        );
        self.remember(head, &a.after)?;
        self.save()
    }

    pub(super) fn start_sha(&self, i: usize) -> Result<String> {
        self.recorded(
            i,
            "start_sha",
            self.state.slices[i].progress().start_sha.clone(),
        )
    }

    /// A commit the slice's progress must hold by now; its absence means the state file does
    /// not describe a run Forge drove.
    pub(super) fn recorded(&self, i: usize, what: &str, value: Option<String>) -> Result<String> {
        value.ok_or_else(|| Error::State {
            path: super::state::state_path(&self.dir),
            message: format!(
                "slice `{}` is {:?} but has no `{what}`",
                self.state.slices[i].id,
                self.state.slices[i].progress().step
            ),
            recovery: format!(
                "Inspect it; to start over, remove .tmp/.forge/runs/{}/ and start the run again.",
                self.meta.slug
            ),
        })
    }

    pub(super) fn feedback(&mut self, i: usize, text: String) {
        self.state.slices[i].progress_mut().feedback = Some(text);
    }

    pub(super) fn output_path(&self, role: Role, slice: &str, attempt: u32) -> PathBuf {
        let wave = self
            .index_of(slice)
            .map(|i| self.state.slices[i].progress().wave)
            .unwrap_or(0);
        // A folder per call: the kernel sandbox lets the agent write its answer's folder.
        let name = if role == Role::Planner {
            "state.json"
        } else {
            "answer.json"
        };
        self.dir
            .join("outputs")
            .join(agent::stem(role, slice, wave, attempt))
            .join(name)
    }
}

/// A word of `command` that names a file in `test_areas` which `tree` does not hold (a pytest
/// node id names its file before `::`): the focused command of a slice whose red writes it.
fn names_new_test_file(
    command: &str,
    test_areas: &[String],
    tree: &crate::evidence::Snapshot,
) -> Option<String> {
    command.split_whitespace().find_map(|w| {
        let w = w.trim_matches(|c| c == '\'' || c == '"');
        let path = w.split("::").next().unwrap_or(w).trim_start_matches("./");
        let plausible = !path.is_empty() && !path.starts_with('-') && path.contains('.');
        let held = tree.entries.contains_key(path)
            || tree
                .entries
                .range(format!("{path}/")..)
                .next()
                .is_some_and(|(p, _)| p.starts_with(&format!("{path}/")));
        (plausible && !held && gates::in_areas(test_areas, path)).then(|| path.to_string())
    })
}
