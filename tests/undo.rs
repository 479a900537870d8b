//! `forge undo`: a live session's tool calls, journaled by the PreToolUse hook (real captured
//! payloads), undone file by file and ref by ref (docs/undo.md).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::Repo;
use serde_json::{Value, json};

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hooks");

/// A captured Claude Code PreToolUse payload of a Bash call, as `command` with the call id `id`.
fn bash_payload(r: &Repo, command: &str, id: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIX}/claude/PreToolUse-1796004613973515118.json"))
        .unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["cwd"] = json!(r.path().display().to_string());
    v["tool_input"] = json!({"command": command, "description": "d"});
    v["tool_use_id"] = json!(id);
    v
}

/// One Bash call as the client makes it: the PreToolUse hook, then the command it answered
/// with (its rewrite into `forge sandbox --profile session` where the kernel has one).
fn bash(r: &Repo, command: &str, id: &str) {
    let p = bash_payload(r, command, id);
    let pre = r.hook("claude", "pre-tool-use", p.to_string().as_bytes());
    assert_eq!(pre.code, 0, "{pre:?}");
    let run = if pre.stdout.trim().is_empty() {
        command.to_string()
    } else {
        let v: Value = serde_json::from_str(&pre.stdout).unwrap_or_else(|e| panic!("{e}: {pre:?}"));
        assert_ne!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{command}: {pre:?}"
        );
        v["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap_or(command)
            .to_string()
    };
    let o = std::process::Command::new("sh")
        .args(["-c", &run])
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    assert!(o.status.success(), "{command}: {o:?}");
}

/// Every file under the repository but `.git/` and Forge's own, with its bytes and mode.
fn files(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".forge" || rel == ".tmp" {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            // The empty client folders `forge sandbox` leaves (issue 34, point 9): not ours.
            if m.is_dir()
                && [".claude", ".codex", ".gemini"].contains(&rel.as_str())
                && std::fs::read_dir(&p).unwrap().next().is_none()
            {
                continue;
            }
            if m.is_dir() {
                out.insert(format!("{rel}/"), (Vec::new(), 0));
                todo.push(p);
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, (t.to_string_lossy().as_bytes().to_vec(), 0o120000));
            } else {
                out.insert(rel, (std::fs::read(&p).unwrap(), m.permissions().mode()));
            }
        }
    }
    out
}

fn git_out(r: &Repo, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .args(args)
        .current_dir(r.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What git holds: every ref, HEAD, and what the index stages.
fn git_state(r: &Repo) -> (String, String, String) {
    (
        git_out(r, &["for-each-ref", "--format=%(refname) %(objectname)"]),
        git_out(r, &["symbolic-ref", "-q", "HEAD"]) + &git_out(r, &["rev-parse", "HEAD"]),
        git_out(r, &["ls-files", "-s"]),
    )
}

/// A project with history, a branch, a tag, untracked and ignored files, a link and a script.
fn project() -> Repo {
    let r = Repo::with_command("true", "none");
    r.write(".gitignore", "target/\n.venv/\n.scratch/\n.tmp/\n");
    r.write("src/lib.rs", "pub fn a() {}\n");
    r.write("src/deep/mod.rs", "mod x;\n");
    r.write("README.md", "one\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "one"]);
    r.git(&["branch", "feature"]);
    r.git(&["tag", "v1"]);
    r.write("README.md", "two\n");
    r.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        r.path().join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("src/lib.rs", r.path().join("lib-link")).unwrap();
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "two"]);
    // The person's work in progress: untracked, staged, and ignored.
    r.write("notes.txt", "my notes\n");
    r.write("staged.txt", "staged\n");
    r.git(&["add", "staged.txt"]);
    r.write("target/keep.bin", "build output\n");
    r.write(".venv/lib/site.py", "x = 1\n");
    r
}

/// The scripted session: a harmless call, then one that wipes the work — files, untracked
/// files, a branch, and history (`git reset --hard HEAD~1`) — run through the hook and the
/// session sandbox as the client runs it; `forge undo --to` puts everything back, byte for
/// byte, and leaves ignored files alone.
#[test]
fn a_destructive_call_is_undone_byte_for_byte() {
    let r = project();
    // The destruction is a Python script: the guard judges `git branch -D` on a command line
    // or in a shell script, and answers "contained by the session sandbox" for code it cannot
    // read through — which the sandbox does not hold (it lets a session write git): the
    // journal is what makes it undoable.
    r.write(
        ".scratch/wreck.py",
        "import os, shutil, subprocess\n\
         g = lambda *a: subprocess.run(['git', *a], check=True)\n\
         shutil.rmtree('src'); os.remove('notes.txt'); os.remove('lib-link')\n\
         os.makedirs('made/deeper'); open('made/deeper/f.txt', 'w').write('new')\n\
         open('target/keep.bin', 'w').write('changed\\n'); os.chmod('run.sh', 0o644)\n\
         g('branch', '-' + 'D', 'feature'); g('tag', '-d', 'v1')\n\
         g('reset', '-q', '--' + 'hard', 'HEAD~1'); g('checkout', '-q', '-b', 'elsewhere')\n",
    );
    let before_1 = (files(r.path()), git_state(&r));
    bash(&r, "echo more >> notes.txt", "toolu_01");
    let before_2 = (files(r.path()), git_state(&r));
    assert_ne!(before_1.0, before_2.0);
    bash(&r, "python3 .scratch/wreck.py", "toolu_02");
    assert!(!r.exists("notes.txt") && r.exists("made/deeper/f.txt"));
    assert_eq!(r.read("README.md"), "one\n", "history rewound");
    assert_ne!(git_state(&r), before_2.1);

    // The journal lists both calls, newest first, with what each changed.
    let o = r.forge(&["undo", "--list", "--json"]);
    assert_eq!(o.code, 0, "{o:?}");
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{v}");
    assert_eq!(calls[0]["seq"], 2);
    assert_eq!(calls[0]["id"], "toolu_02");
    assert_eq!(calls[0]["tool"], "Bash");
    assert_eq!(calls[0]["summary"], "python3 .scratch/wreck.py");
    let changed = &calls[0]["changed"];
    for p in ["notes.txt", "lib-link", "staged.txt", "run.sh"] {
        assert!(
            changed["removed"].as_array().unwrap().contains(&json!(p)),
            "{p}: {changed}"
        );
    }
    assert!(
        changed["added"]
            .as_array()
            .unwrap()
            .contains(&json!("made/deeper/f.txt"))
    );
    assert_eq!(changed["modified"], json!(["README.md"]));
    for r in [
        "HEAD",
        "refs/heads/feature",
        "refs/tags/v1",
        "refs/heads/elsewhere",
    ] {
        assert!(
            changed["refs"].as_array().unwrap().contains(&json!(r)),
            "{r}: {changed}"
        );
    }
    assert!(
        !changed.to_string().contains("target/"),
        "ignored files are not journaled"
    );
    assert_eq!(calls[1]["changed"]["modified"], json!(["notes.txt"]));
    let text = r.forge(&["undo", "--list"]);
    assert!(
        text.stdout
            .contains("Bash: python3 .scratch/wreck.py [toolu_02]"),
        "{text:?}"
    );

    // Undo the destructive call, by the client's id.
    let o = r.forge(&["undo", "--to", "toolu_02"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("restored the state before call 2"),
        "{o:?}"
    );
    let mut want = before_2.0.clone();
    // The ignored file keeps what the call wrote: undo never touches ignored files.
    want.insert("target/keep.bin".into(), (b"changed\n".to_vec(), 0o100644));
    let mut got = files(r.path());
    got.entry("target/keep.bin".into())
        .and_modify(|e| e.1 = 0o100644);
    want.entry("target/keep.bin".into())
        .and_modify(|e| e.1 = 0o100644);
    assert_eq!(got, want, "{o:?}");
    assert!(
        !r.exists("made"),
        "a folder the call made goes with its files"
    );
    assert_eq!(git_state(&r), before_2.1, "{o:?}");
    // The timeline has it.
    let t = r.forge(&["timeline", "--json", "--kind", "undo"]);
    assert!(
        t.stdout.contains("\"to\": 2") || t.stdout.contains("\"to\":2"),
        "{t:?}"
    );

    // Back to before the first call, by number: notes lose the line the call added.
    let o = r.forge(&["undo", "--to", "1"]);
    assert_eq!(o.code, 0, "{o:?}");
    let mut want = before_1.0.clone();
    want.insert("target/keep.bin".into(), (b"changed\n".to_vec(), 0o100644));
    let mut got = files(r.path());
    got.entry("target/keep.bin".into())
        .and_modify(|e| e.1 = 0o100644);
    want.entry("target/keep.bin".into())
        .and_modify(|e| e.1 = 0o100644);
    assert_eq!(got, want);
    assert_eq!(git_state(&r), before_1.1);

    // And that undo undone: the newest entry is the state it replaced.
    let o = r.forge(&["undo"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(r.read("notes.txt"), "my notes\nmore\n");
}

#[test]
fn nothing_to_undo_and_unknown_calls_are_refused_with_their_own_codes() {
    let r = project();
    let o = r.forge(&["undo"]);
    assert_eq!(o.code, 3, "{o:?}");
    assert!(o.stderr.contains("nothing to undo"), "{o:?}");
    let before = files(r.path());
    bash(&r, "ls", "toolu_ls");
    // The call changed nothing: nothing to undo, nothing touched.
    let o = r.forge(&["undo"]);
    assert_eq!(o.code, 3, "{o:?}");
    assert!(o.stderr.contains("as they were before call 1"), "{o:?}");
    assert_eq!(files(r.path()), before);
    let o = r.forge(&["undo", "--to", "toolu_nope"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("no call `toolu_nope`") && o.stderr.contains("--list"),
        "{o:?}"
    );
    // A read-only tool is not journaled.
    let mut read = bash_payload(&r, "x", "toolu_read");
    read["tool_name"] = json!("Read");
    read["tool_input"] = json!({"file_path": r.path().join("README.md")});
    let o = r.hook("claude", "pre-tool-use", read.to_string().as_bytes());
    assert_eq!(o.code, 0, "{o:?}");
    let v: Value = serde_json::from_str(&r.forge(&["undo", "--list", "--json"]).stdout).unwrap();
    assert_eq!(v["calls"].as_array().unwrap().len(), 1, "{v}");
}

/// A file over `undo.max_file_size` is journaled by name only: undo refuses before touching
/// anything and names it; `--skip-missing` restores the rest.
#[test]
fn a_file_over_the_cap_is_named_and_the_rest_restored_on_request() {
    let r = project();
    let config = r.read(".forge/config.yaml");
    r.config(&format!("{config}undo:\n  max_file_size: 1KiB\n"));
    r.write("big.bin", &"x".repeat(4096));
    r.write("small.txt", "small\n");
    bash(&r, "rm big.bin small.txt", "toolu_rm");
    let o = r.forge(&["undo"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stderr.contains("big.bin")
            && o.stderr.contains("undo.max_file_size")
            && o.stderr.contains("--skip-missing"),
        "{o:?}"
    );
    assert!(!r.exists("small.txt"), "nothing is restored on refusal");
    let o = r.forge(&["undo", "--skip-missing"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(r.read("small.txt"), "small\n");
    assert!(!r.exists("big.bin"));
    assert!(
        o.stdout.contains("NOT restored") && o.stdout.contains("big.bin"),
        "{o:?}"
    );
}

/// Edits through the file tools (Write, Edit) are journaled too, and a bad size is a config
/// error naming the key.
#[test]
fn file_tools_are_journaled_and_a_bad_cap_is_named() {
    let r = project();
    let mut w = bash_payload(&r, "x", "toolu_w");
    w["tool_name"] = json!("Write");
    w["tool_input"] = json!({"file_path": r.path().join("README.md"), "content": "gone\n"});
    let o = r.hook("claude", "pre-tool-use", w.to_string().as_bytes());
    assert_eq!(o.code, 0, "{o:?}");
    std::fs::write(r.path().join("README.md"), "gone\n").unwrap();
    let o = r.forge(&["undo"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(r.read("README.md"), "two\n");
    let config = r.read(".forge/config.yaml");
    r.config(&format!("{config}undo:\n  max_file_size: huge\n"));
    let o = r.forge(&["undo", "--list"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("undo.max_file_size"), "{o:?}");
}

/// SessionStart takes the journal's first look (every file read and kept), so the first call's
/// PreToolUse reads only what changed.
#[test]
fn session_start_takes_the_first_look() {
    let r = project();
    let start = json!({"session_id": "s9", "hook_event_name": "SessionStart", "source": "startup",
                       "cwd": r.path().display().to_string()});
    let o = r.hook("claude", "session-start", start.to_string().as_bytes());
    assert_eq!(o.code, 0, "{o:?}");
    let state = std::fs::read_to_string(r.path().join(".tmp/.forge/undo/state")).unwrap();
    assert!(
        state.contains("\tsrc/lib.rs\n") && state.contains("session s9"),
        "{state}"
    );
    // No call is named by it.
    let o = r.forge(&["undo", "--list", "--json"]);
    let v: Value = serde_json::from_str(&o.stdout).unwrap_or_default();
    assert!(v["calls"].as_array().is_none_or(|c| c.is_empty()), "{o:?}");
}

/// The journal holds a copy of every file, a `.env` among them, under names that say nothing:
/// it is a secret to both walls. A session's command cannot read it, and a search of the
/// project leaves it out like the `.env` itself.
#[test]
fn the_journal_is_as_secret_as_the_files_it_copies() {
    let r = project();
    let token = "FORGE_UNDO_TOKEN_51ab";
    r.write(".env", &format!("API_KEY={token}\n"));
    bash(&r, "true", "toolu_01");
    let kept = std::fs::read_dir(r.path().join(".tmp/.forge/undo/objects"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .any(|f| std::fs::read_to_string(f.path()).is_ok_and(|t| t.contains(token)));
    assert!(kept, "the journal did not keep the .env: nothing to hide");

    let steal = "cat .tmp/.forge/undo/objects/*/* 2>&1; grep -r FORGE_UNDO_TOKEN .tmp 2>&1";
    let pre = r.hook(
        "claude",
        "pre-tool-use",
        bash_payload(&r, steal, "toolu_02").to_string().as_bytes(),
    );
    assert_eq!(pre.code, 0, "{pre:?}");
    let v: Value = serde_json::from_str(&pre.stdout).unwrap_or_else(|e| panic!("{e}: {pre:?}"));
    let Some(run) = v["hookSpecificOutput"]["updatedInput"]["command"].as_str() else {
        // No kernel sandbox here: the guard alone answers, and it must not allow the read.
        assert_ne!(
            v["hookSpecificOutput"]["permissionDecision"], "allow",
            "{pre:?}"
        );
        return;
    };
    let o = std::process::Command::new("sh")
        .args(["-c", run])
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !out.contains(token),
        "the journal was read in the sandbox: {out}"
    );

    // The client's Grep of the whole project: the journal is left out of the search.
    let mut grep = bash_payload(&r, "", "toolu_03");
    grep["tool_name"] = json!("Grep");
    grep["tool_input"] = json!({"pattern": token, "output_mode": "content"});
    let g = r.hook("claude", "pre-tool-use", grep.to_string().as_bytes());
    assert_eq!(g.code, 0, "{g:?}");
    assert!(g.stdout.contains(".tmp/.forge/undo"), "{g:?}");
}

/// A project that tracks more files than `undo.max_files` is not journaled: SessionStart says
/// so once, naming the key, and no call then pays for a walk of the tree.
#[test]
fn a_project_over_max_files_is_not_journaled_and_says_so() {
    let r = project();
    let config = r.read(".forge/config.yaml");
    r.config(&format!("{config}undo:\n  max_files: 3\n"));
    let start = json!({"session_id": "s7", "hook_event_name": "SessionStart", "source": "startup",
                       "cwd": r.path().display().to_string()});
    let o = r.hook("claude", "session-start", start.to_string().as_bytes());
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr.contains("undo.max_files") && o.stderr.contains("more than"),
        "{o:?}"
    );
    bash(&r, "true", "toolu_01");
    assert!(!r.path().join(".tmp/.forge/undo/state").exists());
    let o = r.forge(&["undo"]);
    assert_eq!(o.code, 3, "{o:?}");

    // Under the limit, the same session journals.
    r.config(&format!("{config}undo:\n  max_files: 50\n"));
    bash(&r, "true", "toolu_02");
    assert!(r.path().join(".tmp/.forge/undo/state").exists());
}
