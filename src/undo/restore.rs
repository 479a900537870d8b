//! Reading the journal back: the calls with what each changed (`forge undo --list`), and the
//! only code that puts the working tree and git back as they were before a call.
//!
//! It touches only what the journal holds — tracked and untracked files, refs, HEAD, the
//! index — never an ignored file (`.venv`, `node_modules`, `target`) or Forge's own `.forge/`
//! and `.tmp/.forge/`, which no snapshot holds. Before it writes anything it journals the
//! state it is about to replace, as a call of its own: an undo can be undone.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::journal::{Call, GitState, Journal, Taken};
use crate::error::{Error, Result};
use crate::evidence::Entry;
use crate::evidence::checkout::{remove_entry, write_entry};
use crate::evidence::refs::Refs;
use crate::git;

/// Why `forge undo` did nothing.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(
        "nothing to undo: no tool call of {0} was journaled (the hooks journal each call that can change files; see `forge undo --list`)"
    )]
    NoCalls(String),
    #[error(
        "nothing to undo: the files and refs are as they were before call {0}; `forge undo --list` shows what each call changed"
    )]
    Unchanged(u64),
    #[error(
        "no call `{0}` in the journal of {1}: name one by the number or the id `forge undo --list` shows"
    )]
    UnknownCall(String, String),
    #[error(
        "cannot restore {} as it was before call {call}: {} over `undo.max_file_size` (.forge/config.yaml) and not kept: {}. Nothing was changed. Pass --skip-missing to restore everything else, or raise the cap for the calls to come",
        if .paths.len() == 1 { "a file" } else { "files" },
        if .paths.len() == 1 { "it was" } else { "they were" },
        .paths.join(", ")
    )]
    NotKept { call: u64, paths: Vec<String> },
    #[error(transparent)]
    Other(#[from] Error),
}

/// What one call changed, as the journal saw it: its state before, against the state before
/// the next call (or now, for the newest).
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub call: Call,
    pub changed: Changed,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Changed {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
    /// Refs (and `HEAD`) created, moved or deleted.
    pub refs: Vec<String>,
}

impl Changed {
    fn between(
        before: &BTreeMap<String, Entry>,
        after: &BTreeMap<String, Entry>,
        git_before: &GitState,
        git_after: &GitState,
    ) -> Changed {
        let mut c = Changed::default();
        for (p, e) in after {
            match before.get(p) {
                None => c.added.push(p.clone()),
                Some(b) if b != e => c.modified.push(p.clone()),
                _ => {}
            }
        }
        c.removed = before
            .keys()
            .filter(|p| !after.contains_key(*p))
            .cloned()
            .collect();
        if git_before.head != git_after.head {
            c.refs.push("HEAD".into());
        }
        for (r, v) in &git_before.refs {
            if git_after.refs.get(r) != Some(v) {
                c.refs.push(r.clone());
            }
        }
        for r in git_after.refs.keys() {
            if !git_before.refs.contains_key(r) {
                c.refs.push(r.clone());
            }
        }
        c
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.modified.is_empty()
            && self.removed.is_empty()
            && self.refs.is_empty()
    }
}

/// The session to read: the one named, else the one journaled last.
pub fn pick_session(j: &Journal, named: Option<&str>) -> Option<String> {
    if let Some(s) = named {
        return Some(crate::timeline::sanitize(s));
    }
    let rd = std::fs::read_dir(j.dir.join("sessions")).ok()?;
    rd.flatten()
        .filter_map(|e| {
            let m = std::fs::metadata(e.path().join("calls.jsonl")).ok()?;
            Some((
                m.modified().ok()?,
                e.file_name().to_string_lossy().into_owned(),
            ))
        })
        .max()
        .map(|(_, s)| s)
}

/// The session's calls, newest first, each with what it changed.
pub fn list(j: &Journal, session: &str) -> Result<Vec<Listed>> {
    let calls = j.calls(session)?;
    if calls.is_empty() {
        return Ok(Vec::new());
    }
    let now = j.take(session, false)?;
    let mut out = Vec::new();
    let mut after: (BTreeMap<String, Entry>, GitState) = (now.files, now.git);
    for call in calls.into_iter().rev() {
        let files = j.tree(&call.files)?;
        let git: GitState = j.get_json(&call.git)?;
        let changed = Changed::between(&files, &after.0, &git, &after.1);
        out.push(Listed { call, changed });
        after = (files, git);
    }
    Ok(out)
}

/// What an undo did.
#[derive(Debug, Clone, Serialize)]
pub struct Undone {
    /// The call whose "before" was restored.
    pub to: Call,
    /// The journal's entry for the state the undo replaced (undo it to redo).
    pub saved_as: Call,
    pub written: Vec<String>,
    pub removed: Vec<String>,
    pub refs: Vec<String>,
    pub index: bool,
    /// Paths left as they are: over the cap when journaled (with `--skip-missing`).
    pub not_kept: Vec<String>,
}

/// Puts the files, refs, HEAD and index back as they were before call `to` (a number or a
/// client's call id; the newest call when `None`) of `session`.
pub fn undo(
    j: &Journal,
    session: &str,
    to: Option<&str>,
    skip_missing: bool,
) -> std::result::Result<Undone, Refused> {
    let _lock = crate::state::lock_dir(&j.dir)?;
    let calls = j.calls(session)?;
    let target = match to {
        None => calls.last(),
        Some(x) => calls
            .iter()
            .find(|c| c.seq.to_string() == x || c.id.as_deref() == Some(x)),
    };
    let target = match (target, to) {
        (Some(t), _) => t.clone(),
        (None, None) => return Err(Refused::NoCalls(session.to_string())),
        (None, Some(x)) => return Err(Refused::UnknownCall(x.to_string(), session.to_string())),
    };
    let files = j.tree(&target.files)?;
    let git: GitState = j.get_json(&target.git)?;
    let now: Taken = j.take(session, true)?;
    let changed = Changed::between(&now.files, &files, &now.git, &git);
    let index_differs = git.index.is_some() && git.index != now.git.index;
    if changed.is_empty() && !index_differs {
        return Err(Refused::Unchanged(target.seq));
    }
    // Every object needed, before anything is touched.
    let mut blobs: HashMap<String, Vec<u8>> = HashMap::new();
    let mut not_kept = Vec::new();
    for p in changed.added.iter().chain(&changed.modified) {
        match &files[p] {
            Entry::File { oid, .. } | Entry::Symlink { oid } => match j.store.get(oid)? {
                Some(b) => {
                    blobs.insert(oid.clone(), b);
                }
                None => not_kept.push(p.clone()),
            },
            Entry::TooLarge { .. } => not_kept.push(p.clone()),
            Entry::Gitlink { .. } | Entry::Nested => {}
        }
    }
    let index_bytes = match (&git.index, index_differs) {
        (Some(oid), true) => j.store.get(oid)?,
        _ => None,
    };
    if git.index_not_kept {
        not_kept.push(".git/index".into());
    }
    if !not_kept.is_empty() && !skip_missing {
        return Err(Refused::NotKept {
            call: target.seq,
            paths: not_kept,
        });
    }
    let saved_as = j.append_call(
        session,
        None,
        "forge undo",
        &format!("undo to before call {}", target.seq),
        &now,
    )?;
    // Git first: a ref put back names a commit the files do not need.
    let refs = put_back_git(j, &git, &now.git)?;
    let index = match index_bytes {
        Some(b) => {
            crate::state::write_atomic(&j.git_dir.join("index"), &b)?;
            true
        }
        None => false,
    };
    // Then the files: what the call (or a later one) made goes, deepest first; what it
    // changed or removed comes back from the journal.
    let mut removed: Vec<String> = changed
        .removed
        .iter()
        .filter(|p| {
            !matches!(
                now.files.get(*p),
                Some(Entry::Nested | Entry::Gitlink { .. })
            )
        })
        .cloned()
        .collect();
    removed.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
    for p in &removed {
        remove_entry(&j.root, p)?;
    }
    remove_empty_parents(&j.root, &removed, &files);
    let mut written = Vec::new();
    for p in changed.added.iter().chain(&changed.modified) {
        if not_kept.contains(p) || matches!(files[p], Entry::Gitlink { .. } | Entry::Nested) {
            continue;
        }
        write_entry(&j.root, p, &files[p], &blobs)?;
        written.push(p.clone());
    }
    written.sort();
    removed.sort();
    Ok(Undone {
        to: target,
        saved_as,
        written,
        removed,
        refs,
        index,
        not_kept,
    })
}

/// Refs and HEAD as `to` has them: moved or deleted refs set back, refs made since deleted.
/// A ref whose commit git no longer has (pruned) cannot be set: it is named, not set.
fn put_back_git(j: &Journal, to: &GitState, now: &GitState) -> Result<Vec<String>> {
    let root = &j.root;
    let mut want = to.refs.clone();
    let wanted: Vec<&str> = want
        .iter()
        .filter(|(r, v)| now.refs.get(*r) != Some(*v) && !v.starts_with("ref: "))
        .map(|(_, v)| v.as_str())
        .collect();
    let mut out = Vec::new();
    if !wanted.is_empty() {
        let mut input = wanted.join("\n");
        input.push('\n');
        let have = git::git_stdin(
            root,
            &["cat-file", "--batch-check=%(objectname)"],
            input.as_bytes(),
        )?;
        let text = String::from_utf8_lossy(&have);
        let gone: Vec<String> = wanted
            .iter()
            .zip(text.lines())
            .filter(|(_, l)| l.ends_with(" missing"))
            .map(|(o, _)| o.to_string())
            .collect();
        want.retain(|r, v| {
            let lost = gone.contains(v);
            if lost {
                out.push(format!(
                    "{r} (its commit {v} is no longer in git's objects: not restored)"
                ));
            }
            !lost
        });
    }
    let mut now_refs = now.refs.clone();
    // A lost ref is left as it is now.
    for r in to.refs.keys() {
        if !want.contains_key(r) {
            now_refs.remove(r);
        }
    }
    out.extend(Refs(want).put_back(root, &Refs(now_refs), None)?);
    if to.head != now.head && !to.head.is_empty() {
        match to.head.strip_prefix("ref: ") {
            Some(target) => {
                git::git(root, &["symbolic-ref", "-m", "forge undo", "HEAD", target])?;
            }
            None => {
                git::git(
                    root,
                    &[
                        "update-ref",
                        "--no-deref",
                        "-m",
                        "forge undo",
                        "HEAD",
                        &to.head,
                    ],
                )?;
            }
        }
        out.push(format!("HEAD ({}; put back)", to.head));
    }
    Ok(out)
}

/// Folders left empty by removing `removed`, and holding nothing of `files`, go too.
fn remove_empty_parents(
    root: &std::path::Path,
    removed: &[String],
    files: &BTreeMap<String, Entry>,
) {
    let mut dirs: Vec<&str> = Vec::new();
    for p in removed {
        let mut at = p.as_str();
        while let Some((d, _)) = at.rsplit_once('/') {
            dirs.push(d);
            at = d;
        }
    }
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    dirs.dedup();
    for d in dirs {
        let prefix = format!("{d}/");
        if files
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
        {
            continue;
        }
        let _ = std::fs::remove_dir(root.join(d));
    }
}
