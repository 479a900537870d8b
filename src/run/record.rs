//! The sole writer of a run's record: `run.json`, `state.json`, the gate result files, the
//! run's log and its timeline events, and the lines a person reads. Agent text reaches none of
//! them raw: what an agent wrote is made inert ([`crate::text::inert`]) before it is printed.

use serde_json::{Value, json};

use super::gates::GateResult;
use super::state::{self, Current, Observed, RunStatus, SliceStatus, Step};
use super::{Outcome, Run, now};
use crate::error::Result;
use crate::evidence::Snapshot;

impl Run<'_> {
    /// Prints a line and appends it to the run's log (`run.log`), which keeps every line even
    /// when the terminal reading them went away (`forge run … | head`).
    pub(super) fn say(&mut self, line: &str) {
        let line = crate::text::printable(line);
        (self.out)(&line);
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(self.dir.join("run.log"))
        {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }

    pub(super) fn save(&mut self) -> Result<()> {
        let _t = crate::trace::span("save");
        use sha2::Digest;
        self.meta.updated_at = now();
        let bytes = state::to_json_bytes(&state::state_path(&self.dir), &self.state)?;
        let digest = format!("{:x}", sha2::Sha256::digest(&bytes));
        if self.meta.state_sha256.as_deref() != Some(digest.as_str()) {
            self.meta.prev_state_sha256 = self.meta.state_sha256.take();
            self.meta.state_sha256 = Some(digest);
        }
        // run.json first: a kill between the two writes leaves state.json at the previous
        // digest, which a resume accepts.
        state::save_json(&state::meta_path(&self.dir), &self.meta)?;
        crate::state::write_atomic(&state::state_path(&self.dir), &bytes)
    }

    /// Saves only Forge's own record (the planner's answer is `state.json` itself).
    pub(super) fn save_meta(&mut self) -> Result<()> {
        self.meta.updated_at = now();
        state::save_json(&state::meta_path(&self.dir), &self.meta)
    }

    /// Records `snap` as the working tree Forge last saw (against `head`'s tree): a resume
    /// compares the tree with it to tell a person's changes from the run's. Written with the
    /// next save — at the latest just before the next agent call.
    pub(super) fn remember(&mut self, head: &str, snap: &Snapshot) -> Result<()> {
        let tree = self.seen.tree(&self.project.root, head)?;
        // What the tree is now was judged: no call is under way.
        self.meta.in_call = None;
        self.meta.observed = Some(Observed {
            head: head.to_string(),
            changes: tree
                .diff(snap)
                .into_iter()
                .map(|c| (c.path, c.after))
                .collect(),
        });
        Ok(())
    }

    pub(super) fn event(&self, event: &str, mut data: Value) {
        data["event"] = json!(event);
        data["run"] = json!(self.meta.slug);
        self.rec.record_or_warn(Some(&self.meta.slug), "run", data);
    }

    pub(super) fn set_current(
        &mut self,
        slice: &str,
        phase: &str,
        output: Option<&std::path::Path>,
    ) -> Result<()> {
        let red_tests = self
            .state
            .slices
            .iter()
            .find(|s| s.id == slice)
            .and_then(|s| s.forge.as_ref())
            .map(|p| p.red_tests.clone())
            .unwrap_or_default();
        self.state.current = Some(Current {
            slice: slice.into(),
            phase: phase.into(),
            red_tests,
            output: output.map(|p| self.project.rel(p)),
        });
        // Saved before the phase's agent starts (see `call_agent`): the guard reads it then.
        // Written once per process: the guard reads the phase from state.json, saved above.
        if !self.active_written {
            crate::state::write_atomic(
                &state::active_run_path(self.project),
                format!("{}\n", self.meta.slug).as_bytes(),
            )?;
            self.active_written = true;
        }
        Ok(())
    }

    /// Writes a gate result to the run folder and the timeline, prints it, and links it from
    /// the slice's progress.
    pub(super) fn gate(&mut self, slice: Option<usize>, r: &GateResult) -> Result<()> {
        let _t = crate::trace::span("gate");
        self.meta.gates_written += 1;
        let (sid, wave, attempt) = match slice {
            Some(i) => {
                let s = &self.state.slices[i];
                let p = s.progress();
                let attempt = if matches!(p.step, Some(Step::Green) | Some(Step::Final)) {
                    p.green_attempts
                } else {
                    p.red_attempts
                };
                (s.id.clone(), p.wave, attempt)
            }
            None => ("run".to_string(), 0, self.meta.planner_attempts),
        };
        let file = format!("gates/{:04}-{sid}-{}.json", self.meta.gates_written, r.gate);
        let mut doc = serde_json::to_value(r).unwrap_or_default();
        doc["run"] = json!(self.meta.slug);
        doc["slice"] = json!(sid);
        doc["wave"] = json!(wave);
        doc["attempt"] = json!(attempt);
        doc["at"] = json!(now());
        state::save_json(&self.dir.join(&file), &doc)?;
        self.rec
            .record_or_warn(Some(&self.meta.slug), "gate", doc.clone());
        let gate_ref = state::GateRef {
            gate: r.gate.clone(),
            status: r.status.clone(),
            wave,
            attempt,
            file,
        };
        // Linked from the progress with the next save (the gate file itself is on disk now).
        match slice {
            Some(i) => self.state.slices[i].progress_mut().gates.push(gate_ref),
            None => self.meta.gates.push(gate_ref),
        }
        let mark = if r.passed() { "✓" } else { "✗" };
        let who = if sid == "run" {
            String::new()
        } else {
            format!("[{sid} w{wave} a{attempt}] ")
        };
        // The reason quotes agent text (file names, case names, answers): one inert line.
        let why = crate::text::inert(&r.reason(), 300);
        let line = if why.is_empty() || r.passed() && why.len() > 100 {
            format!("  {mark} {who}{}", r.gate)
        } else {
            format!("  {mark} {who}{} — {why}", r.gate)
        };
        self.say(&line);
        if !r.passed() {
            for l in failed_output(&r.evidence) {
                self.say(&l);
            }
        }
        Ok(())
    }

    /// The end of `drive`, however it came: the checks' checkout goes, and a run that ended in
    /// a check that could not start is stopped as any stop is (state saved, a resume
    /// continues), with the agent attempt it was judging given back.
    pub(super) fn wind_up(&mut self, end: Result<Outcome>) -> Result<Outcome> {
        self.drop_checkout();
        let Some(why) = self.setup.take().filter(|_| end.is_err()) else {
            return end;
        };
        if let Some(cur) = self.state.current.as_ref().map(|c| c.slice.clone())
            && let Some(s) = self.state.slices.iter_mut().find(|s| s.id == cur)
        {
            let p = s.progress_mut();
            match p.step {
                Some(state::Step::Green) => p.green_attempts = p.green_attempts.saturating_sub(1),
                Some(state::Step::Red) => p.red_attempts = p.red_attempts.saturating_sub(1),
                _ => {}
            }
        }
        self.stop(format!("setup: {why}"))?;
        Ok(Outcome::Setup(why))
    }

    pub(super) fn stop(&mut self, reason: String) -> Result<Outcome> {
        self.meta.status = RunStatus::Stopped;
        self.meta.stop_reason = Some(reason.clone());
        self.state.current = None;
        self.save()?;
        let _ = std::fs::remove_file(state::active_run_path(self.project));
        self.event("stopped", json!({"reason": reason}));
        self.say(&format!("Run `{}` STOPPED: {reason}", self.meta.slug));
        // A slice stopped after its red checkpoint leaves that temporary commit at the tip.
        let open_checkpoint = self.state.slices.iter().find_map(|s| {
            let p = s.forge.as_ref()?;
            (p.status == SliceStatus::Running)
                .then(|| Some((s.id.clone(), p.checkpoint.clone()?, p.start_sha.clone()?)))?
        });
        if let Some((id, cp, start)) = open_checkpoint {
            self.say(&format!(
                "HEAD is slice `{id}`'s temporary checkpoint {} (its verified test); green's edits are uncommitted. To abandon the slice instead of resuming: `git reset --hard {}`.",
                &cp[..cp.len().min(10)],
                &start[..start.len().min(10)]
            ));
        }
        self.say(&format!(
            "A person decides next: see `forge run --status {}`, fix the cause, then `forge run --resume {}`.",
            self.meta.slug, self.meta.slug
        ));
        Ok(Outcome::Stopped(reason))
    }
}

/// The terminal's view of a failed gate's commands: each failing command's last output lines
/// and its log, so a person sees why without opening the gate's JSON.
fn failed_output(evidence: &Value) -> Vec<String> {
    let mut runs: Vec<&Value> = vec![evidence];
    for key in ["checks", "commands"] {
        if let Some(list) = evidence.get(key).and_then(Value::as_array) {
            runs.extend(list.iter().filter(|c| c.get("ok") == Some(&json!(false))));
        }
    }
    let mut out = Vec::new();
    for r in runs {
        let Some(log) = r.get("log").and_then(Value::as_str) else {
            continue;
        };
        if let Some(tail) = r.get("tail").and_then(Value::as_str) {
            let tail = super::checks::tail_lines(tail.trim_end(), 6);
            for l in tail.lines() {
                out.push(format!("      │ {}", crate::text::inert(l, 200)));
            }
        }
        out.push(format!("      log: {log}"));
    }
    out
}
