//! Red: one failing test, judged. The red agent may change only its test areas and only add to
//! existing test files; the focused command, run on the candidate tree (START_SHA plus red's
//! test changes), must fail with exactly one case while every case that passed before still
//! passes; a read-only verifier must confirm the failure is the intended missing behaviour,
//! against the output Forge read itself; then the verified test becomes a temporary checkpoint
//! commit. The already-green path: a coverage reviewer judges a test that passes at once.

use serde_json::{Value, json};

use super::agent::{self, Role};
use super::checks::{evidence_problems, tail_lines};
use super::gates::{self, Expect, GateResult, Phase, RedOutcome};
use super::state::{SliceStatus, Step};
use super::{RED_ATTEMPTS, RedEnd, Run, SliceEnd, prompts};
use crate::error::Result;
use crate::evidence::Snapshot;
use crate::git;
use crate::verify::CommandResult;

impl Run<'_> {
    pub(super) fn red(&mut self, i: usize) -> Result<RedEnd> {
        let start_sha = self.start_sha(i)?;
        let start_tree = self.seen.tree(&self.project.root, &start_sha)?;
        let tracked: Vec<String> = start_tree.entries.keys().cloned().collect();
        while self.state.slices[i].progress().red_attempts < RED_ATTEMPTS {
            if let Some(reason) = self.over_budget()? {
                return Ok(RedEnd::End(SliceEnd::Stop(reason)));
            }
            let s = self.state.slices[i].clone();
            let (attempt, feedback, session) = self.begin_attempt(i, Step::Red)?;
            let prompt = prompts::red(self, &s, attempt, feedback.as_deref());
            let output = self.output_path(Role::Red, &s.id, attempt);
            let a = self.call_agent(
                Role::Red,
                Some(i),
                attempt,
                &session,
                &prompt,
                &output,
                &start_sha,
            )?;

            // red file-scope. The harness by name covers files the agent just created too (a
            // new conftest.py is harness as much as a tracked one).
            let harness = self
                .harness()
                .files(&paths_of(&tracked, &a.after), &[s.focused_command.as_str()]);
            let only = (!self.config.run.red_may_edit_tests).then_some(&*start_tree);
            let phase = Phase::Red {
                test_areas: &s.test_areas,
                harness: &harness,
            };
            let (scope, now) = self.judge(&phase, &a, only)?;
            {
                let p = self.state.slices[i].progress_mut();
                for f in &scope.changed {
                    if !p.red_changed.contains(f) {
                        p.red_changed.push(f.clone());
                    }
                }
            }
            self.remember(&start_sha, &now)?;
            let r = gates::scope_result(gates::RED_FILE_SCOPE, &scope, &s.test_areas, "red");
            self.gate(Some(i), &r)?;
            if !r.passed() {
                self.feedback(i, r.reason());
                continue;
            }
            // The candidate: START_SHA's tree with red's test changes, as Forge hashed them.
            let red_changed = self.state.slices[i].progress().red_changed.clone();
            let candidate = start_tree.overlay(&now, &red_changed);
            let tests: Vec<String> = start_tree
                .diff(&candidate)
                .into_iter()
                .map(|c| c.path)
                .collect();
            if tests.is_empty() {
                let r = GateResult::fail(
                    gates::SINGLE_RED_FAILURE,
                    json!({"reason": "red changed no test file: no failing test case can be identified"}),
                    false,
                    "return to the red agent: add one failing test",
                );
                self.gate(Some(i), &r)?;
                self.feedback(i, r.reason());
                continue;
            }

            // single-red-failure, on the candidate tree
            let res = self.check(
                &s.id,
                &format!("red-a{attempt}"),
                &s.focused_command,
                s.report,
                &candidate,
            )?;
            let baseline = self.state.slices[i].progress().baseline_cases.clone();
            let unbuilt = self.unbuilt(&res, &start_tree, &candidate, &tests)?;
            let mut outcome = classify(&res, unbuilt.as_ref());
            let except = match &outcome {
                RedOutcome::One { case, .. } => Some(case.clone()),
                _ => None,
            };
            // A red that does not compile ran no case: the cases that passed before are held
            // to at green, where the test compiles.
            if matches!(outcome, RedOutcome::One { .. } | RedOutcome::AlreadyGreen) {
                let problems = evidence_problems(
                    &res,
                    &Expect {
                        cases: true,
                        passing: None,
                        baseline: &baseline,
                        except: except.as_deref(),
                    },
                );
                if !problems.is_empty() {
                    outcome = RedOutcome::NotRed(format!(
                        "{}; add a test, never remove, skip or break one",
                        problems.join("; ")
                    ));
                }
            }
            let mut new_api = false;
            let case = match outcome {
                RedOutcome::One { case, message } => {
                    let r = GateResult::pass(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": format!("exactly one failing case: {case}"), "failing_case": case, "message": message, "command": s.focused_command, "log": res.log, "counts": res.report.counts()}),
                    );
                    self.gate(Some(i), &r)?;
                    case
                }
                RedOutcome::NewApi { case, message } => {
                    let r = GateResult::pass(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": format!("one new test, which names what does not exist yet: {case}"), "path": "new-api", "failing_case": case, "message": message, "command": s.focused_command, "log": res.log}),
                    );
                    self.gate(Some(i), &r)?;
                    new_api = true;
                    case
                }
                RedOutcome::NotRed(why) => {
                    let r = GateResult::fail(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": why, "command": s.focused_command, "exit_code": res.exit_code, "counts": res.report.counts(), "infra_error": res.report.infra_error, "log": res.log, "tail": crate::text::clip_tail(&res.tail, 3000)}),
                        false,
                        "return the command output and failure count to the red agent",
                    );
                    self.gate(Some(i), &r)?;
                    self.feedback(
                        i,
                        format!(
                            "{why}\nLast output of `{}`:\n{}",
                            s.focused_command,
                            tail_lines(&res.tail, 40)
                        ),
                    );
                    continue;
                }
                RedOutcome::AlreadyGreen => {
                    if let Some(reason) = self.over_budget()? {
                        return Ok(RedEnd::End(SliceEnd::Stop(reason)));
                    }
                    match self.already_green(i, &tests, &res, attempt, &candidate)? {
                        Some(end) => return Ok(end),
                        None => continue,
                    }
                }
            };

            // verified-red
            if let Some(reason) = self.over_budget()? {
                return Ok(RedEnd::End(SliceEnd::Stop(reason)));
            }
            let out_path = self.output_path(Role::Verifier, &s.id, attempt);
            let _ = std::fs::remove_file(&out_path);
            self.set_current(&s.id, "verify", Some(&out_path))?;
            let vsession = agent::new_session_id();
            // What the command printed, as Forge read it from the pipe.
            let output = captured_text(&res);
            let prompt = prompts::verifier(self, &s, &case, &res, new_api);
            let a = self.call_agent(
                Role::Verifier,
                Some(i),
                attempt,
                &vsession,
                &prompt,
                &out_path,
                &start_sha,
            )?;
            // The verifier is read-only: anything it changed is put back before judging.
            let (vscope, vnow) = self.judge(&Phase::ReadOnly { role: "verifier" }, &a, None)?;
            // Whatever else changed the working tree since red's call was judged — the red
            // check reaching out of its checkout — shows now, without another look.
            let drift =
                self.settle_seen(&start_sha, &now, &vnow, &red_changed, gates::RED_FILE_SCOPE)?;
            let now = vnow;
            self.remember(&start_sha, &now)?;
            let (problems, answer) = match agent::read_output(&out_path) {
                Ok(v) => {
                    let mut p = gates::check_verifier(
                        &v,
                        &gates::RedEvidence {
                            command: &s.focused_command,
                            failing_case: &case,
                            output: &output,
                        },
                    );
                    if let Some(w) = read_only_breach(&vscope) {
                        p.push(format!("the verifier is read-only but {w}"));
                    }
                    (p, v)
                }
                Err(e) => (vec![e], Value::Null),
            };
            if !problems.is_empty() {
                let problems: Vec<String> = problems
                    .iter()
                    .map(|p| crate::text::inert(p, 400))
                    .collect();
                let r = GateResult::fail(
                    gates::VERIFIED_RED,
                    json!({"reason": problems.join("; "), "problems": problems, "answer": answer, "actual_failing_case": case}),
                    false,
                    "return the verifier's feedback to red",
                );
                self.gate(Some(i), &r)?;
                self.feedback(
                    i,
                    format!(
                        "The verifier did not confirm your failing test as the intended missing behaviour:\n- {}",
                        problems.join("\n- ")
                    ),
                );
                continue;
            }
            let r = GateResult::pass(
                gates::VERIFIED_RED,
                json!({"reason": format!("verifier cites `{}` as the intended failure", crate::text::inert(&case, 200)), "answer": answer}),
            );
            self.gate(Some(i), &r)?;

            // red checkpoint: of the tree as it was judged and checked.
            if let Some(r) = drift {
                self.gate(Some(i), &r)?;
                self.feedback(i, r.reason());
                continue;
            }
            let msg = format!(
                "forge-checkpoint({}/{}): verified red, temporary\n\nForge-Run: {}\nForge-Slice: {}\n",
                self.meta.slug, s.id, self.meta.slug, s.id
            );
            let commit =
                self.commit_snapshot(i, &start_sha, &start_sha, &candidate, &msg, &tests)?;
            let parent = self.seen.odb(&self.project.root).parent(&commit)?;
            let files = git::commit_files(self.root(), &commit)?;
            let r =
                gates::red_checkpoint(&start_sha, parent.as_deref(), &files, &tests, &s.test_areas);
            self.gate(Some(i), &r)?;
            if !r.passed() {
                self.restore_to(&start_sha, &red_changed)?;
                self.feedback(
                    i,
                    format!("{} — the slice was reset to START_SHA", r.reason()),
                );
                continue;
            }
            {
                let p = self.state.slices[i].progress_mut();
                p.checkpoint = Some(commit.clone());
                p.red_tests = tests;
                p.failing_case = Some(case);
                p.step = Some(Step::Green);
                p.feedback = None;
            }
            self.save()?;
            self.remember(&commit, &now)?;
            return Ok(RedEnd::Verified);
        }
        let red_changed = self.state.slices[i].progress().red_changed.clone();
        self.restore_to(&start_sha, &red_changed)?;
        Ok(RedEnd::End(SliceEnd::Failed(format!(
            "red did not produce a verified failing test in {RED_ATTEMPTS} attempts"
        ))))
    }

    /// The already-green path of the single-red-failure gate: the coverage reviewer decides;
    /// a valid, high-quality, useful test lands as a test-only commit and the slice is done.
    fn already_green(
        &mut self,
        i: usize,
        tests: &[String],
        res: &CommandResult,
        attempt: u32,
        candidate: &Snapshot,
    ) -> Result<Option<RedEnd>> {
        let s = self.state.slices[i].clone();
        let start_sha = self.start_sha(i)?;
        let out_path = self.output_path(Role::CoverageReviewer, &s.id, attempt);
        let _ = std::fs::remove_file(&out_path);
        self.set_current(&s.id, "review", Some(&out_path))?;
        let prompt = prompts::reviewer(self, &s, tests, res);
        let session = agent::new_session_id();
        let a = self.call_agent(
            Role::CoverageReviewer,
            Some(i),
            attempt,
            &session,
            &prompt,
            &out_path,
            &start_sha,
        )?;
        // The reviewer is read-only: what it changed is put back, and its review is void.
        let (scope, now) = self.judge(
            &Phase::ReadOnly {
                role: "coverage reviewer",
            },
            &a,
            None,
        )?;
        self.remember(&start_sha, &now)?;
        let review = agent::read_output(&out_path)
            .and_then(|v| gates::read_review(&v))
            .and_then(|rv| match read_only_breach(&scope) {
                None => Ok(rv),
                Some(w) => Err(format!("the reviewer is read-only but {w}")),
            });
        match review {
            Ok(rv) if rv.valid && rv.high_quality && rv.useful => {
                match self.milestone_checks(i, candidate)? {
                    super::green::Milestone::NotDue | super::green::Milestone::Passed => {}
                    super::green::Milestone::Stop(reason) => {
                        return Ok(Some(RedEnd::End(SliceEnd::Stop(reason))));
                    }
                    super::green::Milestone::Failed(feedback) => {
                        self.feedback(i, feedback);
                        return Ok(None);
                    }
                }
                let owned = self.state.slices[i].progress().red_changed.clone();
                if let Some(r) = self.settle(&start_sha, &now, &owned, gates::RED_FILE_SCOPE)? {
                    self.gate(Some(i), &r)?;
                    self.feedback(i, r.reason());
                    return Ok(None);
                }
                if !self.state.slices[i].progress().accepted {
                    return self.await_acceptance(i, tests).map(Some);
                }
                let msg = format!(
                    "test({}): {}\n\nThe behaviour was already implemented; the coverage reviewer found the test valid, high quality and useful: {}\n\nForge-Run: {}\nForge-Slice: {}\n",
                    s.id,
                    s.title,
                    crate::text::inert(&rv.reason, 500),
                    self.meta.slug,
                    s.id
                );
                let commit =
                    self.commit_snapshot(i, &start_sha, &start_sha, candidate, &msg, tests)?;
                let parent = self.seen.odb(&self.project.root).parent(&commit)?;
                let r = if parent.as_deref() == Some(start_sha.as_str()) {
                    GateResult::pass(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": format!("already green; the coverage reviewer approved the test: {}", crate::text::inert(&rv.reason, 200)), "path": "already-green", "commit": commit, "review": rv}),
                    )
                } else {
                    GateResult::fail(
                        gates::SINGLE_RED_FAILURE,
                        json!({"reason": "the coverage commit is not directly on START_SHA", "commit": commit, "parent": parent}),
                        true,
                        "review the commit graph",
                    )
                };
                self.gate(Some(i), &r)?;
                if !r.passed() {
                    return Ok(Some(RedEnd::End(SliceEnd::Stop(r.reason()))));
                }
                let p = self.state.slices[i].progress_mut();
                p.status = SliceStatus::Covered;
                p.commit = Some(commit.clone());
                p.red_tests = tests.to_vec();
                p.step = None;
                self.state.current = None;
                self.save()?;
                self.remember(&commit, &now)?;
                self.event("slice-covered", json!({"slice": s.id, "commit": commit}));
                Ok(Some(RedEnd::Covered))
            }
            other => {
                let why = match other {
                    Ok(rv) => format!(
                        "the test passes already and the coverage reviewer rejected it (valid: {}, high quality: {}, useful: {}): {}",
                        rv.valid,
                        rv.high_quality,
                        rv.useful,
                        crate::text::inert(&rv.reason, 400)
                    ),
                    Err(e) => format!(
                        "the test passes already and the coverage review is unusable: {}",
                        crate::text::inert(&e, 400)
                    ),
                };
                let r = GateResult::fail(
                    gates::SINGLE_RED_FAILURE,
                    json!({"reason": why, "path": "already-green", "tests": tests}),
                    false,
                    "return to the red agent: write a test that fails for the missing behaviour",
                );
                self.gate(Some(i), &r)?;
                self.feedback(i, why);
                Ok(None)
            }
        }
    }
}

impl Run<'_> {
    /// An approved already-green test stops the run before it lands (issue 31): nothing was
    /// implemented, and nothing shows the test can fail — only a person's `--accept` lands it.
    fn await_acceptance(&mut self, i: usize, tests: &[String]) -> Result<RedEnd> {
        let s = self.state.slices[i].clone();
        let reason = acceptance_reason(&self.meta.slug, &s.id);
        let r = GateResult::fail(
            gates::SINGLE_RED_FAILURE,
            json!({"reason": reason, "path": "already-green", "tests": tests, "awaiting": "acceptance"}),
            true,
            &format!(
                "a person reviews the test; to land it as test-only coverage: forge run --resume {} --accept {}",
                self.meta.slug, s.id
            ),
        );
        self.gate(Some(i), &r)?;
        let p = self.state.slices[i].progress_mut();
        p.step = Some(Step::Accept);
        self.save()?;
        Ok(RedEnd::End(SliceEnd::Stop(reason)))
    }

    /// A slice waiting for acceptance, on resume: with the person's `--accept`, the test is
    /// checked again as it stands (it must still pass alone, every case that passed before
    /// with it) and reviewed again, then lands as test-only coverage; without, the run stops
    /// again, saying so.
    pub(super) fn resume_acceptance(&mut self, i: usize) -> Result<RedEnd> {
        let s = self.state.slices[i].clone();
        let p = s.progress().clone();
        if !p.accepted {
            return Ok(RedEnd::End(SliceEnd::Stop(acceptance_reason(
                &self.meta.slug,
                &s.id,
            ))));
        }
        let start_sha = self.start_sha(i)?;
        let start_tree = self.seen.tree(&self.project.root, &start_sha)?;
        let now = self.observe(&start_sha)?;
        let candidate = start_tree.overlay(&now, &p.red_changed);
        let tests: Vec<String> = start_tree
            .diff(&candidate)
            .into_iter()
            .map(|c| c.path)
            .collect();
        let attempt = p.red_attempts;
        let res = self.check(
            &s.id,
            &format!("accept-a{attempt}"),
            &s.focused_command,
            s.report,
            &candidate,
        )?;
        let mut why = match classify(&res, None) {
            RedOutcome::AlreadyGreen => None,
            _ => Some("the accepted test no longer passes as it did".to_string()),
        };
        if why.is_none() && !tests.is_empty() {
            let problems = evidence_problems(
                &res,
                &Expect {
                    cases: true,
                    passing: None,
                    baseline: &p.baseline_cases,
                    except: None,
                },
            );
            why = problems.first().cloned();
        }
        if tests.is_empty() {
            why = Some("the accepted test is no longer in the working tree".into());
        }
        if let Some(w) = why {
            return Ok(RedEnd::End(SliceEnd::Stop(format!(
                "slice `{}`: {w}; see `forge run --status {}`",
                s.id, self.meta.slug
            ))));
        }
        match self.already_green(i, &tests, &res, attempt, &candidate)? {
            Some(end) => Ok(end),
            None => {
                let p = self.state.slices[i].progress_mut();
                p.step = Some(Step::Red);
                p.accepted = false;
                self.save()?;
                self.red(i)
            }
        }
    }
}

/// Why a run stops at an approved already-green slice, naming the command that lands it.
fn acceptance_reason(slug: &str, id: &str) -> String {
    format!(
        "slice `{id}`: its test passes before any code change (already green): nothing was implemented and nothing shows the test can fail. Review the test; to land it as test-only coverage: `forge run --resume {slug} --accept {id}`"
    )
}

/// What Forge read of a red check that did not compile, for the new-API path: the compiler's
/// errors in the output it read from the pipe, the files red changed, and the tests red added
/// (each file's content in the candidate against START_SHA's, from the object store).
pub(super) struct UnbuiltSeen {
    diagnostics: Vec<crate::report::compile::Diagnostic>,
    red_files: Vec<String>,
    added: Vec<(String, Option<Vec<String>>)>,
}

impl Run<'_> {
    /// [`UnbuiltSeen`] for a check that failed with no failing case and printed compile errors;
    /// `None` otherwise (the only case the new-API path can apply to).
    pub(super) fn unbuilt(
        &self,
        res: &CommandResult,
        start: &Snapshot,
        candidate: &Snapshot,
        tests: &[String],
    ) -> Result<Option<UnbuiltSeen>> {
        if res.exit_code == Some(0) || res.timed_out || res.report.counts().failed > 0 {
            return Ok(None);
        }
        let diagnostics = crate::report::compile::diagnostics(&captured_text(res));
        if diagnostics.is_empty() {
            return Ok(None);
        }
        let file = |t: &Snapshot, p: &str| match t.entries.get(p) {
            Some(crate::evidence::Entry::File { oid, .. }) => Some(oid.clone()),
            _ => None,
        };
        let oids: Vec<String> = tests
            .iter()
            .flat_map(|p| [file(start, p), file(candidate, p)])
            .flatten()
            .collect();
        let refs: Vec<&str> = oids.iter().map(String::as_str).collect();
        let blobs = self.seen.odb(&self.project.root).read(&refs, "blob")?;
        let text = |oid: Option<String>| {
            oid.and_then(|o| blobs.get(&o))
                .map(|b| String::from_utf8_lossy(b).into_owned())
        };
        let added = tests
            .iter()
            .filter_map(|p| {
                let after = text(file(candidate, p))?;
                let before = text(file(start, p));
                Some((
                    p.clone(),
                    crate::report::compile::tests_added(p, before.as_deref(), &after),
                ))
            })
            .collect();
        Ok(Some(UnbuiltSeen {
            diagnostics,
            red_files: tests.to_vec(),
            added,
        }))
    }
}

/// The single-red-failure classification of a red check (see [`gates::classify_red`]).
pub(super) fn classify(res: &CommandResult, unbuilt: Option<&UnbuiltSeen>) -> RedOutcome {
    gates::classify_red(
        res.exit_code == Some(0),
        res.timed_out,
        &res.report,
        res.report_error.as_deref(),
        unbuilt
            .map(|u| gates::Unbuilt {
                diagnostics: &u.diagnostics,
                red_files: &u.red_files,
                added: &u.added,
            })
            .as_ref(),
    )
}

/// The paths of `tracked` and of `after`: every file that is, or just became, part of the tree.
pub(super) fn paths_of(tracked: &[String], after: &Snapshot) -> Vec<String> {
    let mut all: Vec<String> = tracked.to_vec();
    all.extend(after.entries.keys().cloned());
    all.sort();
    all.dedup();
    all
}

/// The command's output as Forge read it from the pipe, ANSI stripped (the tail when it did
/// not fit in memory).
pub(super) fn captured_text(res: &CommandResult) -> String {
    match &res.output {
        Some(b) => crate::text::strip_ansi(&String::from_utf8_lossy(b)).into_owned(),
        None => crate::text::strip_ansi(&res.tail).into_owned(),
    }
}

/// What a read-only agent changed anyway, in words; `None` if nothing.
fn read_only_breach(s: &gates::Scope) -> Option<String> {
    let mut what: Vec<String> = s.disallowed.iter().map(|(p, _)| p.clone()).collect();
    what.extend(s.restored.iter().cloned());
    what.extend(s.commits.iter().map(|c| format!("commit {c}")));
    what.extend(s.head_moved.iter().cloned());
    (!what.is_empty()).then(|| format!("changed {}; put back", what.join(", ")))
}
