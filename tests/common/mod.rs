//! A temporary git repository with a Forge config, and the built `forge` binary to run in it.
#![allow(dead_code)]

pub mod projects;
pub mod rig;
pub mod shop;

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Repo {
    /// Holds the repository (`repo/`) and the temp folder Forge's processes get (`tmp/`), so
    /// what a test's `forge run` keeps in the temp folder (its checks' checkout) goes with it.
    pub dir: tempfile::TempDir,
    repo: PathBuf,
}

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reports");

impl Repo {
    /// A git repository with `user.name` set and nothing else.
    pub fn bare() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let r = Repo { dir, repo };
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "user.name", "Ada Lovelace"]);
        r.git(&["config", "user.email", "ada@example.com"]);
        r
    }

    /// A repository whose single verify command is `run` (report format `report`).
    pub fn with_command(run: &str, report: &str) -> Repo {
        let r = Repo::bare();
        r.config(&format!(
            "verify:\n  commands:\n    - name: test\n      run: {}\n      timeout: 30\n      report: {report}\n",
            serde_json::to_string(run).unwrap()
        ));
        r
    }

    pub fn path(&self) -> &Path {
        &self.repo
    }

    /// The temp folder the test's forge processes use (`TMPDIR`).
    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    pub fn config(&self, yaml: &str) {
        self.write(".forge/config.yaml", yaml);
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).exists()
    }

    pub fn git(&self, args: &[&str]) {
        let st = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}: {st:?}");
    }

    /// `forge args…` in the repository.
    pub fn forge(&self, args: &[&str]) -> Output {
        let out = self.forge_cmd(args).output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `forge hook <agent> <event>` with `stdin` as the payload, written from a thread so a hook
    /// that answers before reading everything cannot deadlock the test.
    pub fn hook(&self, agent: &str, event: &str, stdin: &[u8]) -> Output {
        self.hook_env(agent, event, stdin, &[])
    }

    /// [`Repo::hook`] with extra environment variables (a private HOME, say).
    pub fn hook_env(
        &self,
        agent: &str,
        event: &str,
        stdin: &[u8],
        env: &[(&str, &Path)],
    ) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut cmd = self.forge_cmd(&["hook", agent, event]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut sin = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = sin.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `forge args…` with extra environment variables (a private HOME, say).
    pub fn forge_env(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut c = self.forge_cmd(args);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `forge args…` as a person's terminal runs it: without the markers an agent's session
    /// sets (`CLAUDECODE`, …), so the suite means the same when an agent runs `cargo test`;
    /// with the test's own temp folder.
    pub fn forge_cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(forge_bin());
        c.args(args)
            .current_dir(self.path())
            .env("TMPDIR", self.tmp());
        for (var, _) in forge::caller::AGENT_MARKERS {
            c.env_remove(var);
        }
        // The hooks take the session's project from it (a suite run from a Claude Code
        // session has it set).
        c.env_remove("CLAUDE_PROJECT_DIR");
        c
    }

    /// A change with the given scenario titles, via `forge change new`.
    pub fn change(&self, name: &str, scenarios: &[&str]) {
        let mut args = vec!["change", "new", name];
        for s in scenarios {
            args.push("--scenario");
            args.push(s);
        }
        let o = self.forge(&args);
        assert_eq!(o.code, 0, "{o:?}");
    }
}

pub fn forge_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_forge"))
}

#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn last_line(&self) -> &str {
        self.stdout.lines().last().unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

/// A TAP test script: one case per `(name, passes)`.
pub fn tap_script(cases: &[(&str, bool)]) -> String {
    let mut s = String::from("#!/bin/sh\necho 'TAP version 13'\n");
    let mut failed = false;
    for (i, (name, ok)) in cases.iter().enumerate() {
        if *ok {
            s.push_str(&format!("echo 'ok {} - {name}'\n", i + 1));
        } else {
            failed = true;
            s.push_str(&format!("echo 'not ok {} - {name}'\n", i + 1));
        }
    }
    s.push_str(&format!(
        "echo '1..{}'\nexit {}\n",
        cases.len(),
        u8::from(failed)
    ));
    s
}

/// Copies a folder tree (a fixture project) into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Whether the kernel sandbox can run here (`forge sandbox --level`); when not, the test is
/// skipped loudly, or fails under `FORGE_REQUIRE_SANDBOX=1` (CI sets it).
pub fn sandbox_available(test: &str) -> bool {
    let o = Command::new(forge_bin())
        .args(["sandbox", "--level", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    if v["full"] == serde_json::json!(true) {
        return true;
    }
    let why = format!("no full kernel sandbox here ({})", v["describe"]);
    if std::env::var("FORGE_REQUIRE_SANDBOX").is_ok_and(|v| v == "1") {
        panic!("{test}: {why}, and FORGE_REQUIRE_SANDBOX=1");
    }
    eprintln!("\n==== SKIPPED: {test}: {why} ====\n");
    false
}
