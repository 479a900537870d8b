//! Green, and the landing. The green agent may change only its code areas, never a test or the
//! harness; the focused command and related checks — and at milestones and the end, every
//! configured verify command — run on the candidate tree (the checkpoint plus green's code, as
//! Forge hashed it), and must show the verified red case passing and every case that passed
//! before still passing. Then one conventional commit of exactly that tree, on START_SHA,
//! checked by the final-ancestry gate.

use serde_json::json;

use super::checks::{command_failure, evidence_problems, tail_lines};
use super::gates::{self, Expect, GateResult, Phase};
use super::state::{SliceStatus, Step};
use super::{GREEN_ATTEMPTS, Run, SliceEnd, prompts};
use crate::error::Result;
use crate::evidence::Snapshot;
use crate::git;
use crate::report::Format;
use crate::verify::{CommandResult, Verdict};

use super::agent::Role;

/// How the milestone-checks gate ended.
pub(super) enum Milestone {
    NotDue,
    Passed,
    /// The feedback for the slice's agent.
    Failed(String),
    Stop(String),
}

impl Run<'_> {
    pub(super) fn green(&mut self, i: usize, resumed: bool) -> Result<SliceEnd> {
        let mut judge_only = resumed;
        loop {
            let s = self.state.slices[i].clone();
            let p = s.progress().clone();
            let checkpoint = self.recorded(i, "checkpoint", p.checkpoint.clone())?;
            let start_sha = self.start_sha(i)?;
            let cp_tree = self.seen.tree(&self.project.root, &checkpoint)?;
            if !judge_only {
                if p.green_attempts >= GREEN_ATTEMPTS {
                    break;
                }
                if let Some(reason) = self.over_budget()? {
                    return Ok(SliceEnd::Stop(reason));
                }
            }
            let now = if judge_only {
                // A resume judges the tree the last attempt (or a person) left, without a call.
                // What green changed is read from the tree itself — never from the run folder,
                // which an agent could have rewritten — and held to green's rules: what green
                // may not change stays out of the slice (and in the working tree: it may be a
                // person's), named in the gate.
                let now = self.observe(&checkpoint)?;
                let tracked: Vec<String> = cp_tree.entries.keys().cloned().collect();
                let harness = self
                    .harness()
                    .files(&tracked, &[s.focused_command.as_str()]);
                let phase = Phase::Green {
                    code_areas: &s.code_areas,
                    test_areas: &s.test_areas,
                    red_tests: &p.red_tests,
                    harness: &harness,
                };
                let mut scope = gates::Scope::default();
                for c in cp_tree.diff(&now) {
                    if self.meta.person_paths.contains(&c.path) {
                        continue;
                    }
                    match gates::disallowed(&phase, &c, None) {
                        Some(w) => scope
                            .disallowed
                            .push((c.path.clone(), format!("{w}; left out of the slice"))),
                        None => scope.changed.push(c.path.clone()),
                    }
                }
                self.state.slices[i].progress_mut().green_changed = scope.changed.clone();
                if !scope.disallowed.is_empty() {
                    let r = gates::scope_result(
                        gates::GREEN_FILE_SCOPE,
                        &scope,
                        &s.code_areas,
                        "green",
                    );
                    self.gate(Some(i), &r)?;
                }
                now
            } else {
                let tracked: Vec<String> = cp_tree.entries.keys().cloned().collect();
                let (attempt, feedback, session) = self.begin_attempt(i, Step::Green)?;
                let prompt = prompts::green(self, &s, attempt, feedback.as_deref());
                let output = self.output_path(Role::Green, &s.id, attempt);
                let a = self.call_agent(
                    Role::Green,
                    Some(i),
                    attempt,
                    &session,
                    &prompt,
                    &output,
                    &checkpoint,
                )?;
                let harness = self.harness().files(
                    &super::red::paths_of(&tracked, &a.after),
                    &[s.focused_command.as_str()],
                );
                let phase = Phase::Green {
                    code_areas: &s.code_areas,
                    test_areas: &s.test_areas,
                    red_tests: &p.red_tests,
                    harness: &harness,
                };
                let (scope, now) = self.judge(&phase, &a, None)?;
                {
                    let p = self.state.slices[i].progress_mut();
                    for f in &scope.changed {
                        if !p.green_changed.contains(f) {
                            p.green_changed.push(f.clone());
                        }
                    }
                }
                self.remember(&checkpoint, &now)?;
                let r =
                    gates::scope_result(gates::GREEN_FILE_SCOPE, &scope, &s.code_areas, "green");
                self.gate(Some(i), &r)?;
                if !r.passed() {
                    self.feedback(
                        i,
                        format!(
                            "{} The verified red tests ({}) must stay byte-identical.",
                            r.reason(),
                            p.red_tests.join(", ")
                        ),
                    );
                    continue;
                }
                now
            };
            judge_only = false;
            let green_changed = self.state.slices[i].progress().green_changed.clone();
            let candidate = cp_tree.overlay(&now, &green_changed);
            let code: Vec<String> = cp_tree
                .diff(&candidate)
                .into_iter()
                .map(|c| c.path)
                .collect();

            // green checks, on the candidate tree
            let attempt = self.state.slices[i].progress().green_attempts;
            let focused = self.check(
                &s.id,
                &format!("green-a{attempt}"),
                &s.focused_command,
                s.report,
                &candidate,
            )?;
            let mut reasons: Vec<String> = Vec::new();
            let evidence = evidence_problems(
                &focused,
                &Expect {
                    cases: true,
                    passing: p.failing_case.as_deref(),
                    baseline: &p.baseline_cases,
                    except: None,
                },
            );
            // The regression check: green's code against the tests as they were before red. Red
            // may only add, but what it added runs in the same suite and could mute an
            // existing test (a redefined helper, a hook); the suite as it was cannot, so every
            // case that passed before must pass there too.
            let mut regress_problems = Vec::new();
            let start_tree = self.seen.tree(&self.project.root, &start_sha)?;
            let tests: Vec<String> = candidate
                .entries
                .keys()
                .chain(start_tree.entries.keys())
                .filter(|f| gates::in_areas(&s.test_areas, f))
                .cloned()
                .collect();
            let before_red = candidate.overlay(&start_tree, &tests);
            if !self.config.run.red_may_edit_tests && !p.baseline_cases.is_empty() {
                let regress = self.check(
                    &s.id,
                    &format!("regress-a{attempt}"),
                    &s.focused_command,
                    s.report,
                    &before_red,
                )?;
                let mut why = evidence_problems(
                    &regress,
                    &Expect {
                        cases: true,
                        passing: None,
                        baseline: &p.baseline_cases,
                        except: None,
                    },
                );
                if why.is_empty() && !regress.ok {
                    why.push(command_failure(&regress));
                }
                regress_problems.extend(
                    why.into_iter()
                        .map(|w| format!("with the tests as they were before red: {w}")),
                );
            }
            let mut results = vec![focused];
            for (k, c) in s.related_checks.iter().enumerate() {
                results.push(self.check(
                    &s.id,
                    &format!("related{k}-a{attempt}"),
                    c,
                    Format::Auto,
                    &candidate,
                )?);
            }
            let failing: Vec<&CommandResult> = results.iter().filter(|r| !r.ok).collect();
            reasons.extend(
                failing
                    .iter()
                    .map(|r| format!("`{}`: {}", r.run, command_failure(r))),
            );
            reasons.extend(evidence);
            reasons.extend(regress_problems);
            // Once the slice's own checks pass: the project's configured verify commands on
            // green's code with the tests as they were before red. The focused command is the
            // planner's (an agent's) and can be made to lie (`… | sed …`); the person's
            // commands, on a suite no agent of this slice wrote, are the evidence that nothing
            // that worked before was broken.
            //
            // They run on the tests as they were before the *run*, not before this slice's
            // red: a red of an earlier slice may have added a file that mutes an existing case
            // (a shell `check` redefined to pass it), which then lands with that slice and is
            // part of every later slice's suite (red team, round 16). Every test area of the
            // plan and every file named as a test is put back as the run's base had it.
            let before_run = {
                let base = self.meta.base_sha.clone();
                let base_tree = self.seen.tree(&self.project.root, &base)?;
                let areas: Vec<String> = self
                    .state
                    .slices
                    .iter()
                    .flat_map(|s| s.test_areas.iter().cloned())
                    .collect();
                let tests: Vec<String> = candidate
                    .entries
                    .keys()
                    .chain(base_tree.entries.keys())
                    .filter(|f| gates::in_areas(&areas, f) || gates::is_test_file(f))
                    .cloned()
                    .collect();
                candidate.overlay(&base_tree, &tests)
            };
            if reasons.is_empty() && !self.config.run.red_may_edit_tests {
                // Held to what the base reported, not to "at least one case": the tests as
                // they were before the run are the base's, and a project with none yet must
                // be able to land its first slice.
                let base = self.base_cases()?;
                for ((r, c), b) in self
                    .full_checks(&format!("{}-regress", s.id), &before_run)?
                    .iter()
                    .zip(&self.config.verify.commands)
                    .zip(&base)
                {
                    let evidence = (c.report != Format::None && !c.allow_empty).then(|| {
                        gates::against_base(
                            &r.report,
                            crate::verify::missing_evidence(c.report, c.allow_empty, r),
                            b,
                        )
                    });
                    // A suite of no test yet, as on the base (pytest says so with exit 5).
                    let empty_as_base = super::checks::ran_no_tests(r) && b.clean && b.passed == 0;
                    if !r.ok && !empty_as_base {
                        reasons.push(format!(
                            "`{}` with the tests as they were before the run: {}",
                            r.name,
                            command_failure(r)
                        ));
                    } else if let Some(why) = evidence.flatten() {
                        reasons.push(format!(
                            "`{}` with the tests as they were before the run: {why}",
                            r.name
                        ));
                    }
                }
            }
            let verdict = if reasons.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            let ev = json!({
                "reason": if reasons.is_empty() { format!("{} check(s) pass", results.len()) } else { reasons.join("; ") },
                "checks": results.iter().map(|r| json!({"command": r.run, "ok": r.ok, "exit_code": r.exit_code, "log": r.log, "counts": r.report.counts(), "tail": (!r.ok).then(|| crate::text::clip_tail(&r.tail, 2000))})).collect::<Vec<_>>(),
            });
            let r = if verdict == Verdict::Pass {
                GateResult::pass(gates::GREEN_CHECKS, ev)
            } else {
                GateResult::fail(
                    gates::GREEN_CHECKS,
                    ev,
                    false,
                    "return the command output to green",
                )
            };
            self.gate(Some(i), &r)?;
            if let Some(reason) = self.count_breaker(verdict)? {
                return Ok(SliceEnd::Stop(reason));
            }
            if verdict == Verdict::Fail {
                let detail: Vec<String> = results
                    .iter()
                    .map(|r| format!("$ {}\n{}", r.run, tail_lines(&r.tail, 30)))
                    .collect();
                self.feedback(i, format!("{}\n{}", r.reason(), detail.join("\n")));
                continue;
            }

            // The clean room: the person's commands on the base with only the code and the
            // verified tests; the verified case must pass there, and fail without the code.
            if !self.config.run.red_may_edit_tests
                && let Some(f) = self.clean_room(i, &candidate, &start_tree)?
            {
                if let Some(reason) = self.count_breaker(Verdict::Fail)? {
                    return Ok(SliceEnd::Stop(reason));
                }
                if f.test_at_fault {
                    return self.give_up(i, format!("clean-room: {}", f.why));
                }
                self.feedback(i, format!("clean-room: {}", f.why));
                continue;
            }

            // milestone checks: at planned milestones and at final completion, every configured
            // command, before the commit.
            match self.milestone_checks(i, &candidate)? {
                Milestone::NotDue | Milestone::Passed => {}
                Milestone::Stop(reason) => return Ok(SliceEnd::Stop(reason)),
                Milestone::Failed(feedback) => {
                    self.feedback(i, feedback);
                    continue;
                }
            }

            // the final commit, of exactly the tree the checks passed on
            let mut owned = p.red_tests.clone();
            owned.extend(green_changed.iter().cloned());
            if let Some(r) = self.settle(&checkpoint, &now, &owned, gates::GREEN_FILE_SCOPE)? {
                self.gate(Some(i), &r)?;
                self.feedback(i, r.reason());
                continue;
            }
            self.state.slices[i].progress_mut().step = Some(Step::Final);
            self.set_current(&s.id, "final", None)?;
            let mut files: Vec<String> = p.red_tests.clone();
            files.extend(code.iter().cloned());
            let msg = format!(
                "feat({}): {}\n\nTest: {}\nFailing case verified red: {}\n\nForge-Run: {}\nForge-Slice: {}\n",
                s.id,
                s.title,
                crate::text::inert(&p.red_tests.join(", "), 500),
                crate::text::inert(&p.failing_case.clone().unwrap_or_default(), 300),
                self.meta.slug,
                s.id
            );
            let commit =
                self.commit_snapshot(i, &start_sha, &checkpoint, &candidate, &msg, &files)?;
            // The working tree is what settle found: the judged tree.
            return self.land(i, &commit, &code, true, Some(&now));
        }
        self.give_up(
            i,
            format!("green did not pass its checks in {GREEN_ATTEMPTS} attempts"),
        )
    }

    /// Ends slice `i` as failed: what red and green changed goes back to the slice's start.
    fn give_up(&mut self, i: usize, why: String) -> Result<SliceEnd> {
        let start = self.start_sha(i)?;
        let p = self.state.slices[i].progress().clone();
        let mut paths = p.red_changed.clone();
        paths.extend(p.green_changed.iter().cloned());
        self.restore_to(&start, &paths)?;
        Ok(SliceEnd::Failed(why))
    }

    /// The milestone-checks gate: at a planned milestone and at final completion — however the
    /// slice lands, through green or as coverage — every configured verify command runs on the
    /// candidate tree before the commit, under `forge verify`'s no-evidence rule.
    pub(super) fn milestone_checks(&mut self, i: usize, candidate: &Snapshot) -> Result<Milestone> {
        let s = self.state.slices[i].clone();
        let final_slice = self.is_final(i);
        if !(s.milestone || final_slice) {
            return Ok(Milestone::NotDue);
        }
        let results = self.full_checks(&s.id, candidate)?;
        let mut problems: Vec<String> = Vec::new();
        for (r, c) in results.iter().zip(&self.config.verify.commands) {
            if !r.ok {
                problems.push(format!("`{}`: {}", r.name, command_failure(r)));
            } else if let Some(why) = crate::verify::missing_evidence(c.report, c.allow_empty, r) {
                // No evidence is no pass, by the same rule as `forge verify`.
                problems.push(format!("`{}`: {why}", r.name));
            }
        }
        let ev = json!({
            "reason": if problems.is_empty() { format!("all {} configured command(s) pass{}", results.len(), if final_slice { " (final completion)" } else { "" }) } else { problems.join("; ") },
            "final": final_slice,
            "commands": results.iter().map(|r| json!({"name": r.name, "command": r.run, "ok": r.ok, "exit_code": r.exit_code, "log": r.log, "tail": (!r.ok).then(|| crate::text::clip_tail(&r.tail, 2000))})).collect::<Vec<_>>(),
        });
        let ok = problems.is_empty();
        let r = if ok {
            GateResult::pass(gates::MILESTONE_CHECKS, ev)
        } else {
            GateResult::fail(
                gates::MILESTONE_CHECKS,
                ev,
                false,
                "route the failure to this slice's agent",
            )
        };
        self.gate(Some(i), &r)?;
        let v = if ok { Verdict::Pass } else { Verdict::Fail };
        if let Some(reason) = self.count_breaker(v)? {
            return Ok(Milestone::Stop(reason));
        }
        if ok {
            return Ok(Milestone::Passed);
        }
        let detail: Vec<String> = results
            .iter()
            .filter(|r| !r.ok)
            .map(|r| format!("$ {}\n{}", r.run, tail_lines(&r.tail, 30)))
            .collect();
        Ok(Milestone::Failed(format!(
            "The full checks fail: {}\n{}",
            r.reason(),
            detail.join("\n")
        )))
    }

    /// Commits `tree` (a snapshot Forge judged) on `parent` and moves HEAD's branch to it from
    /// `expected_head` in one compare-and-swap: built with plumbing from verified objects in a
    /// temporary index, so no hook runs and a kill leaves HEAD where it was. The index entries
    /// of `paths` follow, so `git status` shows a clean tree.
    pub(super) fn commit_snapshot(
        &mut self,
        i: usize,
        parent: &str,
        expected_head: &str,
        tree: &Snapshot,
        message: &str,
        paths: &[String],
    ) -> Result<String> {
        let root = self.project.root.clone();
        let c = self
            .seen
            .commit(&root, &self.git_dir, parent, tree, message, &self.ident)?;
        self.state.slices[i].progress_mut().pending_commit = Some(c.clone());
        self.save()?;
        git::git(
            &root,
            &[
                "update-ref",
                "-m",
                "forge: commit",
                "HEAD",
                &c,
                expected_head,
            ],
        )?;
        git::sync_index(&root, paths)?;
        Ok(c)
    }

    /// Final ancestry gate on the slice's commit; lands the slice on a pass.
    pub(super) fn land(
        &mut self,
        i: usize,
        commit: &str,
        code: &[String],
        verified: bool,
        tree: Option<&Snapshot>,
    ) -> Result<SliceEnd> {
        let p = self.state.slices[i].progress().clone();
        let start = self.start_sha(i)?;
        let parent = self.seen.odb(&self.project.root).parent(commit)?;
        let message = git::commit_message(self.root(), commit)?;
        let files = git::commit_files(self.root(), commit)?;
        let in_history = match &p.checkpoint {
            Some(cp) => git::is_ancestor(self.root(), cp, commit)?,
            None => false,
        };
        let identical = match &p.checkpoint {
            Some(cp) => {
                let at_cp = self.seen.tree(&self.project.root, cp)?;
                let at_commit = self.seen.tree(&self.project.root, commit)?;
                p.red_tests
                    .iter()
                    .all(|t| at_cp.entries.get(t) == at_commit.entries.get(t))
            }
            None => false,
        };
        let r = gates::final_ancestry(&gates::Final {
            start_sha: &start,
            commit,
            parent: parent.as_deref(),
            message: &message,
            files: &files,
            red_tests: &p.red_tests,
            code_files: code,
            checkpoint_in_history: in_history,
            red_tests_identical: identical,
            verified_before_commit: verified,
        });
        self.gate(Some(i), &r)?;
        if !r.passed() {
            let graph = git::graph(self.root()).unwrap_or_default();
            return Ok(SliceEnd::Stop(format!(
                "final-ancestry: {}\n{graph}",
                r.reason()
            )));
        }
        let id = self.state.slices[i].id.clone();
        {
            let p = self.state.slices[i].progress_mut();
            p.status = SliceStatus::Done;
            p.commit = Some(commit.to_string());
            p.step = None;
            p.feedback = None;
        }
        self.state.current = None;
        self.save()?;
        let now = match tree {
            Some(t) => t.clone(),
            None => self.observe(commit)?,
        };
        self.remember(commit, &now)?;
        self.save_meta()?;
        self.event("slice-done", json!({"slice": id, "commit": commit}));
        self.say(&format!(
            "Slice `{id}` landed as {}.",
            &commit[..commit.len().min(10)]
        ));
        Ok(SliceEnd::Landed)
    }
}
