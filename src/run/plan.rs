//! Planning: the read-only planner writes the plan (`state.json`); the run-artifact gate keeps
//! generated files in the run folder; the planning-output gate accepts or rejects the plan.

use serde_json::{Value, json};

use super::agent::{self, Role};
use super::gates::{self, GateResult, Phase};
use super::state::{self, Progress, RunState};
use super::{Outcome, PLAN_ATTEMPTS, Run, prompts};
use crate::error::Result;
use crate::git;

impl Run<'_> {
    /// Run-artifact exception gate: run state lives under the ignored `.tmp/.forge/runs/<slug>/`
    /// and nothing generated lands elsewhere (`stray` are files an agent left outside it).
    pub(super) fn run_artifact(&mut self, stray: &[String]) -> Result<GateResult> {
        let rel = format!(".tmp/.forge/runs/{}/state.json", self.meta.slug);
        let ignored = git::is_ignored(self.root(), &rel)?;
        let r = if !ignored {
            GateResult::fail(
                gates::RUN_ARTIFACT,
                json!({"reason": ".tmp/.forge/ is not ignored by git", "path": rel}),
                true,
                "add `.tmp/.forge/` to .gitignore (`forge init` does) and commit it",
            )
        } else if !stray.is_empty() {
            GateResult::fail(
                gates::RUN_ARTIFACT,
                json!({"reason": format!("generated files outside .tmp/.forge/runs/{}/ were removed: {}", self.meta.slug, stray.join(", ")), "files": stray}),
                false,
                "the misplaced files were deleted; planning is read-only",
            )
        } else {
            GateResult::pass(
                gates::RUN_ARTIFACT,
                json!({"reason": format!("run state in {}", self.project.rel(&self.dir)), "dir": self.project.rel(&self.dir)}),
            )
        };
        self.gate(None, &r)?;
        Ok(r)
    }

    /// The test harness of this project (see [`gates::Harness`]).
    pub(super) fn harness(&self) -> gates::Harness {
        gates::Harness {
            commands: self
                .config
                .verify
                .commands
                .iter()
                .map(|c| c.run.clone())
                .collect(),
            editable: self.config.run.harness_editable.clone(),
        }
    }

    /// The read-only planning phase. `Some(outcome)` when the run ends here.
    pub(super) fn plan(&mut self) -> Result<Option<Outcome>> {
        let base = self.meta.base_sha.clone();
        let tracked: Vec<String> = self
            .seen
            .tree(&self.project.root, &base)?
            .entries
            .keys()
            .cloned()
            .collect();
        let mut feedback: Option<String> = None;
        // A plan the planner finished before a kill is judged before planning again.
        let last = self.output_path(Role::Planner, "", self.meta.planner_attempts);
        let existing = (self.meta.planner_attempts > 0)
            .then(|| crate::state::read_untrusted(&last, state::MAX_RUN_FILE))
            .and_then(|r| r.ok())
            .flatten()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .filter(|v| {
                v.get("slices")
                    .and_then(|s| s.as_array())
                    .is_some_and(|a| !a.is_empty())
            });
        if let Some(doc) = existing {
            let r = self.run_artifact(&[])?;
            if r.blocks {
                return self.stop(format!("run-artifact: {}", r.reason())).map(Some);
            }
            match self.accept_plan(&doc, &tracked)? {
                Ok(()) => return Ok(None),
                Err(problems) => feedback = Some(problems),
            }
        }
        while self.meta.planner_attempts < PLAN_ATTEMPTS {
            if let Some(reason) = self.over_budget()? {
                return self.stop(reason).map(Some);
            }
            self.meta.planner_attempts += 1;
            let attempt = self.meta.planner_attempts;
            // The planner's answer goes to a file of its own; Forge writes state.json.
            let state_file = self.output_path(Role::Planner, "", attempt);
            self.state = RunState::default();
            let session = self
                .meta
                .planner_session
                .get_or_insert_with(agent::new_session_id)
                .clone();
            self.set_current("", "plan", Some(&state_file))?;
            let prompt = prompts::planner(self, &tracked, feedback.as_deref());
            let a = self.call_agent(
                Role::Planner,
                None,
                attempt,
                &session,
                &prompt,
                &state_file,
                &base,
            )?;
            let answer = agent::read_output(&state_file);
            // Planning is read-only: whatever it changed in the repository is put back.
            let (scope, now) = self.judge(&Phase::ReadOnly { role: "planner" }, &a, None)?;
            self.remember(&base, &now)?;
            let mut stray: Vec<String> = scope.disallowed.iter().map(|(p, _)| p.clone()).collect();
            stray.extend(scope.restored.iter().cloned());
            stray.extend(scope.commits.iter().map(|c| format!("commit {c}")));
            stray.extend(scope.head_moved.iter().cloned());
            let r = self.run_artifact(&stray)?;
            if r.blocks {
                return self.stop(format!("run-artifact: {}", r.reason())).map(Some);
            }
            if !r.passed() {
                feedback = Some(r.reason());
                continue;
            }
            let problems = match answer {
                Ok(doc) => match self.accept_plan(&doc, &tracked)? {
                    Ok(()) => return Ok(None),
                    Err(p) => p,
                },
                Err(e) => {
                    let r = GateResult::fail(
                        gates::PLANNING_OUTPUT,
                        json!({"reason": e}),
                        false,
                        "rerun planning",
                    );
                    self.gate(None, &r)?;
                    e
                }
            };
            feedback = Some(problems);
        }
        let reason = format!(
            "planning failed {PLAN_ATTEMPTS} times; last problems: {}",
            crate::text::inert(&feedback.unwrap_or_default(), 600)
        );
        self.stop(reason).map(Some)
    }

    /// The links the planning-output gate judges (issue 31): every tracked file that is a
    /// link, and every link on the path of an area the document names (tracked or not: an
    /// ignored `tests/lnk` leads elsewhere just the same), each with its target as read.
    fn links(&self, doc: &Value, tracked: &[String]) -> Vec<(String, Vec<u8>)> {
        use std::os::unix::ffi::OsStrExt;
        let root = &self.project.root;
        let read = |rel: &str| -> Option<(String, Vec<u8>)> {
            let p = root.join(rel);
            let m = std::fs::symlink_metadata(&p).ok()?;
            if !m.file_type().is_symlink() {
                return None;
            }
            let t = std::fs::read_link(&p).ok()?;
            Some((rel.to_string(), t.as_os_str().as_bytes().to_vec()))
        };
        let mut out: Vec<(String, Vec<u8>)> = tracked.iter().filter_map(|f| read(f)).collect();
        let areas = doc
            .get("slices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|s| ["test_areas", "code_areas"].map(|k| s.get(k).cloned()))
            .flatten()
            .filter_map(|v| v.as_array().cloned())
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string));
        for a in areas {
            let area_root = gates::area_root(&a);
            let mut path = String::new();
            for part in area_root.split('/').filter(|p| !p.is_empty() && *p != ".") {
                if part == ".." {
                    break;
                }
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(part);
                if let Some(l) = read(&path) {
                    if !out.iter().any(|(p, _)| *p == l.0) {
                        out.push(l);
                    }
                    break;
                }
            }
        }
        out
    }

    /// The planning-output gate on a planner's document; on a pass the plan becomes the state,
    /// on a fail the problems (one per line) go back to the planner.
    fn accept_plan(
        &mut self,
        doc: &Value,
        tracked: &[String],
    ) -> Result<std::result::Result<(), String>> {
        let links = self.links(doc, tracked);
        match gates::planning_output(doc, tracked, &links, &self.harness(), &self.envs) {
            Ok(mut slices) => {
                for s in &mut slices {
                    s.forge = Some(Progress {
                        wave: 1,
                        ..Default::default()
                    });
                }
                let r = GateResult::pass(
                    gates::PLANNING_OUTPUT,
                    json!({"reason": format!("{} slice(s): {}", slices.len(), slices.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", ")),
                           "slices": slices.iter().map(|s| json!({"id": s.id, "depends_on": s.depends_on})).collect::<Vec<_>>()}),
                );
                let extra = doc
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .filter(|(k, _)| !matches!(k.as_str(), "slices" | "current"))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                self.state = RunState {
                    slices,
                    current: None,
                    extra,
                };
                self.meta.planned = true;
                self.gate(None, &r)?;
                self.event("planned", json!({"slices": self.state.slices.len()}));
                Ok(Ok(()))
            }
            Err(problems) => {
                let problems: Vec<String> = problems
                    .iter()
                    .map(|p| crate::text::inert(p, 400))
                    .collect();
                let r = GateResult::fail(
                    gates::PLANNING_OUTPUT,
                    json!({"reason": problems.join("; "), "problems": problems}),
                    false,
                    "rerun planning with these problems before any coding",
                );
                self.gate(None, &r)?;
                Ok(Err(problems.join("\n")))
            }
        }
    }
}
