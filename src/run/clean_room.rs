//! The clean-room gate (issue 31): after green's checks pass, the person's verify commands run
//! on the run's base with only the code the slices changed and the verified tests — no other
//! file red or green added or changed (a helper module, a plugin, a runner config) — and the
//! verified case must run and pass there by its exact name; with the code as it was before the
//! slice it must not pass, nor with every function the slice added or changed made to fail
//! ([`super::stub`]). Every slice gets it, not only the last. The judging is pure
//! ([`gates::judge_room`]); here the trees are built and the commands run.

use serde_json::json;

use super::Run;
use super::gates::{self, GateResult};
use super::state::SliceStatus;
use super::stub;
use crate::error::Result;
use crate::evidence::{Entry, Snapshot};

/// Why the clean room failed, and whose work is at fault.
pub(super) struct RoomFailure {
    pub why: String,
    /// The verified test passes whatever the code does: nothing green writes can change that,
    /// so the slice ends here rather than spend green's attempts.
    pub test_at_fault: bool,
}

impl Run<'_> {
    /// The clean-room gate for slice `i` whose candidate tree is `candidate` (START_SHA's tree:
    /// `start`). Records the gate; `Some` when it fails.
    pub(super) fn clean_room(
        &mut self,
        i: usize,
        candidate: &Snapshot,
        start: &Snapshot,
    ) -> Result<Option<RoomFailure>> {
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
            return self.clean_room_result(i, &case, Some(why), false, json!({}));
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
        if let Some(why) = self.shadowed_by_tests(&room, start, &own_code)? {
            return self.clean_room_result(i, &case, Some(why), true, json!({}));
        }
        let base = self.base_cases()?;
        let checks_before = self.meta.check_ms;
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
        let tail = |r: &crate::verify::CommandResult| json!({"command": r.run, "ok": false, "log": r.log, "tail": crate::text::clip_tail(&r.tail, 2000)});
        if why.is_none() {
            let old = self.full_checks(&format!("{}-clean-without", s.id), &without)?;
            let reports: Vec<&crate::report::Report> = old.iter().map(|r| &r.report).collect();
            why = gates::judge_without_code(&reports, &case);
            logs.extend(old.iter().map(|r| r.log.clone()));
            if why.is_some() {
                tails.extend(old.iter().map(tail));
            }
        }
        let mut stubbed_names = Vec::new();
        let mut test_at_fault = false;
        if why.is_none()
            && let Some((stubbed, names)) = self.stubbed(&room, start, candidate, &own_code)?
        {
            let runs = self.full_checks(&format!("{}-clean-stubbed", s.id), &stubbed)?;
            let reports: Vec<&crate::report::Report> = runs.iter().map(|r| &r.report).collect();
            why = gates::judge_stubbed(&reports, &case, &names);
            test_at_fault = why.is_some();
            logs.extend(runs.iter().map(|r| r.log.clone()));
            if why.is_some() {
                tails.extend(runs.iter().map(tail));
            }
            stubbed_names = names;
        }
        self.meta.clean_room_ms += self.meta.check_ms - checks_before;
        let mut room_files: Vec<String> = take;
        room_files.sort();
        room_files.dedup();
        self.clean_room_result(
            i,
            &case,
            why,
            test_at_fault,
            json!({"files": room_files, "stubbed": stubbed_names, "logs": logs, "checks": tails}),
        )
    }

    /// A shell function the slice's code adds or changes that a test file or the harness defines
    /// too: the suite sources the tests after the code, so it runs the test's own (red team of
    /// issue 31, A8: an earlier slice's verified test held a `receipt()` that waited for a
    /// marker this slice's code then shipped). A test that mocks a function the slice left as it
    /// was is ordinary. Named, or `None`.
    fn shadowed_by_tests(
        &mut self,
        room: &Snapshot,
        start: &Snapshot,
        own_code: &[String],
    ) -> Result<Option<String>> {
        let test_areas: Vec<String> = self
            .state
            .slices
            .iter()
            .flat_map(|s| s.test_areas.iter().cloned())
            .collect();
        let oid_of = |p: &String| match room.entries.get(p) {
            Some(Entry::File { oid, .. }) => Some((p.clone(), oid.clone())),
            _ => None,
        };
        let code: Vec<(String, String)> = own_code
            .iter()
            .filter(|p| gates::is_shell(p))
            .filter_map(oid_of)
            .collect();
        if code.is_empty() {
            return Ok(None);
        }
        let tests: Vec<(String, String)> = room
            .entries
            .keys()
            .filter(|p| {
                gates::is_shell(p)
                    && !own_code.contains(p)
                    && (gates::in_areas(&test_areas, p) || gates::is_test_file(p))
            })
            .filter_map(oid_of)
            .collect();
        let was = |p: &String| match start.entries.get(p) {
            Some(Entry::File { oid, .. }) => Some(oid.clone()),
            _ => None,
        };
        let olds: Vec<String> = code.iter().filter_map(|(p, _)| was(p)).collect();
        let oids: Vec<&str> = code
            .iter()
            .chain(&tests)
            .map(|(_, o)| o.as_str())
            .chain(olds.iter().map(String::as_str))
            .collect();
        let root = self.project.root.clone();
        let blobs = self.seen.odb(&root).read(&oids, "blob")?;
        let text = |o: &str| String::from_utf8_lossy(&blobs[o]).into_owned();
        for (cp, co) in &code {
            let old = was(cp).map(|o| text(&o));
            let defined = stub::changed_functions(cp, old.as_deref(), &text(co));
            for (tp, to) in &tests {
                if let Some(n) = gates::shell_functions(&blobs[to.as_str()])
                    .into_iter()
                    .find(|n| defined.contains(n))
                {
                    return Ok(Some(format!(
                        "`{n}`, which {cp} defines, is defined by {tp} too: the suite runs the test's own, not the code's"
                    )));
                }
            }
        }
        Ok(None)
    }

    /// `room` with every function this slice's code added or changed (from `start` to
    /// `candidate`, in `own_code`) made to fail, and the names stubbed; `None` when no file is
    /// in a language [`stub`] knows or none of its functions could be found.
    fn stubbed(
        &mut self,
        room: &Snapshot,
        start: &Snapshot,
        candidate: &Snapshot,
        own_code: &[String],
    ) -> Result<Option<(Snapshot, Vec<String>)>> {
        let file = |s: &Snapshot, p: &str| match s.entries.get(p) {
            Some(Entry::File { oid, exec }) => Some((oid.clone(), *exec)),
            _ => None,
        };
        let root = self.project.root.clone();
        let odb = self.seen.odb(&root);
        let mut out = room.clone();
        let mut names = Vec::new();
        for p in own_code {
            let Some((new_oid, exec)) = file(candidate, p) else {
                continue;
            };
            let old_oid = file(start, p).map(|(o, _)| o);
            let wanted: Vec<&str> = [Some(new_oid.as_str()), old_oid.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            let blobs = odb.read(&wanted, "blob")?;
            let text = |o: &str| blobs.get(o).and_then(|b| std::str::from_utf8(b).ok());
            let (Some(new), old) = (text(&new_oid), old_oid.as_deref().and_then(text)) else {
                continue;
            };
            let Some((stubbed, stubbed_here)) = stub::stub_changed(p, old, new) else {
                continue;
            };
            let oid = odb.put_blob(stubbed.as_bytes())?;
            out.entries.insert(p.clone(), Entry::File { oid, exec });
            names.extend(stubbed_here.into_iter().map(|n| format!("{p}: {n}")));
        }
        Ok((!names.is_empty()).then_some((out, names)))
    }

    fn clean_room_result(
        &mut self,
        i: usize,
        case: &str,
        why: Option<String>,
        test_at_fault: bool,
        mut evidence: serde_json::Value,
    ) -> Result<Option<RoomFailure>> {
        let r = match &why {
            None => {
                let stubbed = evidence["stubbed"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty());
                evidence["reason"] = json!(format!(
                    "the verify commands pass on the base with only the code and the verified tests, `{case}` among them, and it fails without the slice's code{}",
                    if stubbed {
                        " and with the functions it added or changed made to fail"
                    } else {
                        ""
                    }
                ));
                GateResult::pass(gates::CLEAN_ROOM, evidence)
            }
            Some(w) if test_at_fault => {
                evidence["reason"] = json!(w);
                GateResult::fail(
                    gates::CLEAN_ROOM,
                    evidence,
                    true,
                    "the slice ends: a person reads the verified test, which passes whatever the code does",
                )
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
        Ok(why.map(|why| RoomFailure { why, test_at_fault }))
    }
}
