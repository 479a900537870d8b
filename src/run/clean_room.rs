//! The clean-room gate (issue 31): after green's checks pass, the person's verify commands run
//! on the run's base with only the code the slices changed and the verified tests — no other
//! file red or green added or changed (a helper module, a plugin, a runner config) — and the
//! verified case must run and pass there by its exact name; with the code as it was before the
//! slice it must not pass. Every slice gets it, not only the last. The judging is pure
//! ([`gates::judge_room`]); here the trees are built and the commands run.

use serde_json::json;

use super::Run;
use super::gates::{self, GateResult};
use super::state::SliceStatus;
use crate::error::Result;
use crate::evidence::{Entry, Snapshot};

impl Run<'_> {
    /// The clean-room gate for slice `i` whose candidate tree is `candidate` (START_SHA's tree:
    /// `start`). Records the gate; `Some(why)` when it fails.
    pub(super) fn clean_room(
        &mut self,
        i: usize,
        candidate: &Snapshot,
        start: &Snapshot,
    ) -> Result<Option<String>> {
        let s = self.state.slices[i].clone();
        let Some(case) = s.progress().failing_case.clone() else {
            return Ok(None);
        };
        let root = self.project.root.clone();
        let base_tree = self.seen.tree(&root, &self.meta.base_sha.clone())?;
        let code_areas: Vec<String> = self
            .state
            .slices
            .iter()
            .flat_map(|s| s.code_areas.iter().cloned())
            .collect();
        let is_code = |p: &str| gates::in_areas(&code_areas, p) && !gates::is_test_file(p);
        // The code every slice so far changed, as the candidate has it.
        let mut take: Vec<String> = base_tree
            .diff(candidate)
            .into_iter()
            .map(|c| c.path)
            .filter(|p| is_code(p))
            .collect();
        // The verified tests of the slices landed so far and of this one.
        let blobs = |paths: &[String]| -> Result<std::collections::HashMap<String, Vec<u8>>> {
            let oids: Vec<(String, String)> = paths
                .iter()
                .filter_map(|p| match candidate.entries.get(p) {
                    Some(Entry::File { oid, .. }) => Some((p.clone(), oid.clone())),
                    _ => None,
                })
                .collect();
            let refs: Vec<&str> = oids.iter().map(|(_, o)| o.as_str()).collect();
            let by_oid = self.seen.odb(&root).read(&refs, "blob")?;
            Ok(oids
                .into_iter()
                .filter_map(|(p, o)| by_oid.get(&o).map(|b| (p, b.clone())))
                .collect())
        };
        let mut problem = None;
        for (j, other) in self.state.slices.iter().enumerate() {
            let p = other.progress();
            let landed = matches!(p.status, SliceStatus::Done);
            if j != i && !landed {
                continue;
            }
            let Some(verified) = p.failing_case.as_deref() else {
                continue;
            };
            let content = blobs(&p.red_tests)?;
            match gates::room_tests(verified, &p.red_tests, &|f| content.get(f).cloned()) {
                Ok(t) => take.extend(t),
                Err(why) if j == i => problem = Some(why),
                // An earlier slice's test the room cannot place: its files stay out.
                Err(_) => {}
            }
        }
        if let Some(why) = problem {
            return self.clean_room_result(i, &case, Some(why), json!({}));
        }
        let room = base_tree.overlay(candidate, &take);
        // The same room with this slice's code as it was at START_SHA.
        let own_code: Vec<String> = start
            .diff(candidate)
            .into_iter()
            .map(|c| c.path)
            .filter(|p| is_code(p))
            .collect();
        let without = room.overlay(start, &own_code);
        let base = self.base_cases()?;
        let with = self.full_checks(&format!("{}-clean", s.id), &room)?;
        let runs: Vec<gates::RoomRun> = with
            .iter()
            .zip(&base)
            .map(|(r, b)| gates::RoomRun {
                name: &r.name,
                report: &r.report,
                ok: r.ok,
                base: b,
            })
            .collect();
        let mut why = gates::judge_room(&runs, &case);
        let mut logs: Vec<String> = with.iter().map(|r| r.log.clone()).collect();
        let mut tails: Vec<serde_json::Value> = with
            .iter()
            .filter(|r| !r.ok)
            .map(|r| json!({"command": r.run, "ok": false, "log": r.log, "tail": crate::text::clip_tail(&r.tail, 2000)}))
            .collect();
        if why.is_none() {
            let old = self.full_checks(&format!("{}-clean-without", s.id), &without)?;
            let reports: Vec<&crate::report::Report> = old.iter().map(|r| &r.report).collect();
            why = gates::judge_without_code(&reports, &case);
            logs.extend(old.iter().map(|r| r.log.clone()));
            if why.is_some() {
                tails.extend(old.iter().map(|r| json!({"command": r.run, "ok": false, "log": r.log, "tail": crate::text::clip_tail(&r.tail, 2000)})));
            }
        }
        let mut room_files: Vec<String> = take;
        room_files.sort();
        room_files.dedup();
        self.clean_room_result(
            i,
            &case,
            why,
            json!({"files": room_files, "logs": logs, "checks": tails}),
        )
    }

    fn clean_room_result(
        &mut self,
        i: usize,
        case: &str,
        why: Option<String>,
        mut evidence: serde_json::Value,
    ) -> Result<Option<String>> {
        let r = match &why {
            None => {
                evidence["reason"] = json!(format!(
                    "the verify commands pass on the base with only the code and the verified tests, `{case}` among them, and it fails without the slice's code"
                ));
                GateResult::pass(gates::CLEAN_ROOM, evidence)
            }
            Some(w) => {
                evidence["reason"] = json!(w);
                GateResult::fail(
                    gates::CLEAN_ROOM,
                    evidence,
                    false,
                    "return the reason to green; if a file red added is what makes the test pass, a person looks at the slice",
                )
            }
        };
        self.gate(Some(i), &r)?;
        Ok(why)
    }
}
