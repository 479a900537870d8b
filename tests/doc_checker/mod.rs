//! The docs checker: every fenced ```` ```console ```` block of `README.md` and `docs/*.md` is a
//! session that is run against the built `forge` and compared, so an example can no longer drift
//! from the behaviour. `tests/docs.rs` runs it on the real docs; `tests/docs_checker.rs` proves
//! it (parsing, matching, and that a drifted line fails).
//!
//! # A block
//!
//! ````markdown
//! ```console setup=shop
//! $ forge verify lnt
//! forge: error: no verify command named `lnt` in .forge/config.yaml; the commands are: test, lint
//! # exit 2
//! ```
//! ````
//!
//! - The info string names where the block starts, exactly one of: `setup=NAME` (a fresh
//!   scratch folder prepared by the setup function `NAME` of [`setups::SETUPS`]), `continue`
//!   (the folder the previous block of the same file left, in the state it left it), or
//!   `skip=REASON` (a block that cannot run here; [`SKIP_REASONS`] lists the reasons). A
//!   `needs=PROG,…` attribute skips a block when a program it runs is not installed here
//!   (`PROG --version` does not succeed); `needs=sandbox` when this kernel cannot give
//!   `forge sandbox` its full wall (Landlock with scopes, mount and PID namespaces).
//! - A line starting `$ ` is a command, run with `sh -c` in the block's folder (each command
//!   starts there: a `cd` does not carry over), stdin closed, with the built `forge` first on
//!   `PATH` and a scratch `HOME` and `TMPDIR`; the commands of a block, and of the blocks that
//!   continue it, run in order.
//! - The lines after it, up to the next `$ ` line or the end, are its expected output: stdout
//!   and stderr **merged into one stream in the order they were written**, as a terminal shows
//!   them. `# exit N` after the output says the command exits `N` (no line: it exits 0).
//!   Blank lines just before the next `$ ` line separate commands and are not compared.
//!
//! # What is normalised (and nothing else)
//!
//! - the scratch folder's path is shown as `<tmp>` (its parent, the setup's folder, is named by
//!   the setup: `<tmp>/shop`);
//! - `[..]` in an expected line matches any text within that line (durations, log names,
//!   timestamps, commit hashes: whatever a doc marks);
//! - a line that is exactly `...` matches any number of lines (output a doc leaves out);
//! - trailing whitespace of a line, and trailing blank lines of an output, are not compared.
//!
//! # Why not trycmd
//!
//! trycmd reads the same ```` ```console ```` blocks, but splits each command with shlex and
//! runs it as a registered binary, not a shell: the sessions here need pipes, `&&`,
//! redirections, `git`, `sed` and `cat` between `forge` calls. Its starting state is one
//! static `.in` folder per file, where these blocks need git repositories built by code (a
//! commit, a breaker already counting) and shared between the blocks of a page. Its status
//! line (`? failed`) also comes before the output, where these docs say `# exit N` after it.
//! The format below is trycmd's where it can be (`console`, `$ `, `[..]`, `...`, merged
//! stderr), so the blocks read the same to anyone who knows it.
//!
//! # Updating the docs
//!
//! `FORGE_DOCS=overwrite cargo test --test docs` writes the actual output (normalised) over
//! each command whose expected output or exit code differs, keeping every expected line that
//! still matches (so `[..]` marks survive). Read the diff before committing it.

#![allow(dead_code)]

pub mod setups;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

/// Reasons a block may give for `skip=`: the block is parsed but never run.
pub const SKIP_REASONS: &[(&str, &str)] = &[
    (
        "agent",
        "needs a real agent client (Claude Code, Codex CLI, Gemini CLI) and its model",
    ),
    ("network", "needs the network"),
];

/// A command that runs longer is killed and reported: a doc example is a quick session.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a block starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    Setup(String),
    Continue,
    Skip(String),
}

#[derive(Debug, Clone)]
pub struct Block {
    /// The file as shown in messages (`docs/verify.md`).
    pub file: String,
    /// 1-based line of the opening fence.
    pub line: usize,
    pub start: Start,
    /// Programs that must be on PATH for the block to run.
    pub needs: Vec<String>,
    pub commands: Vec<Cmd>,
}

#[derive(Debug, Clone)]
pub struct Cmd {
    /// 1-based line of the `$ ` line.
    pub line: usize,
    pub text: String,
    /// Expected output lines (without the `# exit` line and the trailing blank separators).
    pub expected: Vec<String>,
    pub exit: i32,
    /// The lines `expected` and the `# exit` line occupy: `[first, end)`, 1-based.
    pub span: (usize, usize),
}

/// Finds every ```` ```console ```` block of a markdown file. Other fenced blocks are skipped
/// whole, so a console block shown inside a ```` ````markdown ```` block is not one.
pub fn parse(file: &str, text: &str) -> Result<Vec<Block>, Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut errors = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((fence, info)) = opening_fence(lines[i]) else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - lines[i].trim_start().len();
        let open = i;
        let mut close = i + 1;
        while close < lines.len() && !closes(lines[close], &fence) {
            close += 1;
        }
        let body = &lines[(open + 1).min(lines.len())..close.min(lines.len())];
        let lang = info.split_whitespace().next().unwrap_or("");
        if lang != "console" && lang != "markdown" && body.iter().any(|l| l.starts_with("$ forge"))
        {
            // A session shown in another block would escape the check.
            errors.push(format!(
                "{file}:{}: a block showing `$ forge …` is a session: tag it ```console (with setup=…) so it is checked",
                open + 1
            ));
        }
        if lang == "console" {
            let at = |n: usize| format!("{file}:{n}");
            if indent > 0 {
                errors.push(format!(
                    "{}: a console block must start at the beginning of the line (indented blocks are not checked)",
                    at(open + 1)
                ));
            } else if close >= lines.len() {
                errors.push(format!(
                    "{}: the console block is never closed",
                    at(open + 1)
                ));
            } else {
                match parse_block(file, open + 1, info, body) {
                    Ok(b) => blocks.push(b),
                    Err(e) => errors.push(e),
                }
            }
        }
        i = close + 1;
    }
    if errors.is_empty() {
        Ok(blocks)
    } else {
        Err(errors)
    }
}

/// ```` ``` ```` or `~~~` (three or more), up to three spaces in, and the info string.
fn opening_fence(line: &str) -> Option<(String, &str)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    if n < 3 {
        return None;
    }
    let info = t[n..].trim();
    if c == '`' && info.contains('`') {
        return None;
    }
    Some((t[..n].to_string(), info))
}

fn closes(line: &str, fence: &str) -> bool {
    let t = line.trim();
    let c = fence.chars().next().unwrap_or('`');
    t.len() >= fence.len() && t.chars().all(|x| x == c)
}

fn parse_block(file: &str, line: usize, info: &str, body: &[&str]) -> Result<Block, String> {
    let at = |n: usize| format!("{file}:{n}");
    let mut start = None;
    let mut needs = Vec::new();
    for attr in info.split_whitespace().skip(1) {
        let s = match attr.split_once('=') {
            Some(("setup", name)) if !name.is_empty() => Start::Setup(name.to_string()),
            Some(("skip", reason)) => {
                if !SKIP_REASONS.iter().any(|(r, _)| *r == reason) {
                    return Err(format!(
                        "{}: `skip={reason}` is not a known reason; use one of: {}",
                        at(line),
                        SKIP_REASONS
                            .iter()
                            .map(|(r, why)| format!("{r} ({why})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                Start::Skip(reason.to_string())
            }
            Some(("needs", progs)) if !progs.is_empty() => {
                needs.extend(progs.split(',').map(str::to_string));
                continue;
            }
            None if attr == "continue" => Start::Continue,
            _ => {
                return Err(format!(
                    "{}: unknown console block attribute `{attr}`: use setup=NAME, continue, skip=REASON or needs=PROG",
                    at(line)
                ));
            }
        };
        if start.replace(s).is_some() {
            return Err(format!(
                "{}: a console block takes one of setup=NAME, continue, skip=REASON",
                at(line)
            ));
        }
    }
    let Some(start) = start else {
        return Err(format!(
            "{}: the console block names no starting state: add setup=NAME (see tests/doc_checker/setups.rs), continue, or skip=REASON after `console`",
            at(line)
        ));
    };
    let mut commands: Vec<Cmd> = Vec::new();
    let mut exit_seen = false;
    for (k, text) in body.iter().enumerate() {
        let n = line + 1 + k;
        if let Some(cmd) = text.strip_prefix("$ ") {
            commands.push(Cmd {
                line: n,
                text: cmd.to_string(),
                expected: Vec::new(),
                exit: 0,
                span: (n + 1, n + 1),
            });
            exit_seen = false;
            continue;
        }
        let Some(c) = commands.last_mut() else {
            return Err(format!(
                "{}: a console block starts with a command: `$ …`, got `{text}`",
                at(n)
            ));
        };
        if exit_seen {
            if text.trim().is_empty() {
                continue;
            }
            return Err(format!(
                "{}: output after `# exit {}`: the exit line comes last, after the command's output",
                at(n),
                c.exit
            ));
        }
        if let Some(code) = text.strip_prefix("# exit ") {
            c.exit = code.trim().parse().map_err(|_| {
                format!("{}: `# exit` takes a number, got `{}`", at(n), code.trim())
            })?;
            if c.exit == 0 {
                return Err(format!(
                    "{}: `# exit 0` is the default: leave the line out",
                    at(n)
                ));
            }
            exit_seen = true;
            c.span.1 = n + 1;
        } else {
            c.expected.push(text.to_string());
            if !text.trim().is_empty() {
                c.span.1 = n + 1;
            }
        }
    }
    if commands.is_empty() {
        return Err(format!("{}: a console block without a command", at(line)));
    }
    for c in &mut commands {
        // Blank lines before the next command (or `# exit`) separate; they are not output.
        while c.expected.last().is_some_and(|l| l.trim().is_empty()) {
            c.expected.pop();
        }
    }
    Ok(Block {
        file: file.to_string(),
        line,
        start,
        needs,
        commands,
    })
}

/// Does one expected line match one actual line? `[..]` matches any text within the line.
pub fn line_matches(expected: &str, actual: &str) -> bool {
    let expected = expected.trim_end();
    let actual = actual.trim_end();
    let parts: Vec<&str> = expected.split("[..]").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first)
        || !actual.ends_with(last)
        || actual.len() < first.len() + last.len()
    {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(p) => rest = &rest[p + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Do the expected lines match the actual ones? A line that is exactly `...` matches any
/// number of lines.
pub fn output_matches(expected: &[String], actual: &[String]) -> bool {
    // ok[i][j]: expected[i..] matches actual[j..].
    let (n, m) = (expected.len(), actual.len());
    let mut ok = vec![vec![false; m + 1]; n + 1];
    ok[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            ok[i][j] = if expected[i] == "..." {
                ok[i + 1][j] || (j < m && ok[i][j + 1])
            } else {
                j < m && line_matches(&expected[i], &actual[j]) && ok[i + 1][j + 1]
            };
        }
    }
    ok[0][0]
}

/// The actual output as a doc shows it: the scratch folder as `<tmp>`, trailing whitespace
/// and trailing blank lines dropped.
pub fn normalise(output: &str, scratch: &[String]) -> Vec<String> {
    let mut text = output.to_string();
    for s in scratch {
        if !s.is_empty() {
            text = text.replace(s.as_str(), "<tmp>");
        }
    }
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// One scratch folder and the environment its commands run in.
pub struct Scratch {
    dir: tempfile::TempDir,
    /// Where the block's commands run (the setup chooses it).
    pub cwd: PathBuf,
    forge: PathBuf,
}

impl Scratch {
    pub fn new(forge: &Path) -> std::io::Result<Scratch> {
        let dir = tempfile::Builder::new().prefix("forge-docs-").tempdir()?;
        let root = dir.path().to_path_buf();
        for d in ["bin", "home", "tmp"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        std::os::unix::fs::symlink(forge, root.join("bin/forge"))?;
        // A person's git identity, as `git init` in a block would find it.
        std::fs::write(
            root.join("home/.gitconfig"),
            "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n",
        )?;
        Ok(Scratch {
            cwd: root.clone(),
            dir,
            forge: forge.to_path_buf(),
        })
    }

    /// The folder shown as `<tmp>`.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The spellings of the scratch folder that output may contain, longest first.
    fn spellings(&self) -> Vec<String> {
        let mut s = vec![self.root().display().to_string()];
        if let Ok(c) = self.root().canonicalize() {
            s.push(c.display().to_string());
        }
        s.sort_by_key(|x| std::cmp::Reverse(x.len()));
        s.dedup();
        s
    }

    /// A process with the block's environment: nothing of the test's own (no agent's markers,
    /// no cargo variables), the built forge first on PATH, a scratch HOME and TMPDIR, UTC.
    pub fn process(&self, program: &str) -> Process {
        let root = self.root();
        let mut p = Process::new(program);
        p.env_clear()
            .current_dir(&self.cwd)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    root.join("bin").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("HOME", root.join("home"))
            .env("TMPDIR", root.join("tmp"))
            .env("TZ", "UTC")
            .env("LANG", "C.UTF-8")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        // rustup finds its toolchains from the real home (a block may run cargo).
        for (var, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
            let v = std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(default)));
            if let Some(v) = v {
                p.env(var, v);
            }
        }
        p
    }

    /// Runs `sh -c line` as a block's command: stdout and stderr through one pipe, in the order
    /// written. Returns the exit code (or -signal) and the raw output.
    pub fn run(&self, line: &str) -> Result<(i32, String), String> {
        let (mut reader, writer) = std::io::pipe().map_err(|e| e.to_string())?;
        let mut p = self.process("sh");
        p.arg("-c")
            .arg(line)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().map_err(|e| e.to_string())?)
            .stderr(writer);
        std::os::unix::process::CommandExt::process_group(&mut p, 0);
        let mut child = p.spawn().map_err(|e| format!("cannot run sh: {e}"))?;
        drop(p);
        let pgid = child.id() as i32;
        let read = std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = reader.read_to_end(&mut out);
            out
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait().map_err(|e| e.to_string())? {
                Some(s) => break Some(s),
                None if started.elapsed() > COMMAND_TIMEOUT => break None,
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        let Some(status) = status else {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = child.wait();
            return Err(format!(
                "did not finish within {} s (killed)",
                COMMAND_TIMEOUT.as_secs()
            ));
        };
        // Whatever the command left running holds the pipe open: it goes with the command.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
        let out = read.join().unwrap_or_default();
        let code = status.code().unwrap_or_else(|| {
            -std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
        });
        Ok((code, String::from_utf8_lossy(&out).into_owned()))
    }

    /// Runs `forge args…` for a setup (not shown in any doc); fails loudly.
    pub fn forge(&self, args: &[&str]) -> String {
        let o = self
            .process(&self.forge.display().to_string())
            .args(args)
            .output()
            .expect("run forge");
        assert!(
            o.status.success(),
            "setup: forge {args:?} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Runs `git args…` in the block's folder for a setup; fails loudly.
    pub fn git(&self, args: &[&str]) {
        let o = self.process("git").args(args).output().expect("run git");
        assert!(
            o.status.success(),
            "setup: git {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// Writes a file relative to the block's folder (folders created).
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.cwd.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("create folder");
        std::fs::write(p, text).expect("write file");
    }
}

/// What one command did, when it did not match.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub file: String,
    pub cmd: Cmd,
    pub actual: Vec<String>,
    pub code: i32,
    pub message: String,
}

/// The result of checking some files.
#[derive(Debug, Default)]
pub struct Report {
    pub files: usize,
    pub blocks: usize,
    pub ran_blocks: usize,
    pub commands: usize,
    /// `(file:line, why)` of every skipped block.
    pub skipped: Vec<(String, String)>,
    /// Parse errors, setup errors and mismatches, each ready to print.
    pub failures: Vec<String>,
    pub mismatches: Vec<Mismatch>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// The summary line(s) `cargo test` shows.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "docs: {} console block(s) in {} file(s): {} run ({} command(s)), {} skipped, {} failure(s)",
            self.blocks,
            self.files,
            self.ran_blocks,
            self.commands,
            self.skipped.len(),
            self.failures.len()
        );
        let mut reasons: Vec<&str> = self.skipped.iter().map(|(_, w)| w.as_str()).collect();
        reasons.sort();
        reasons.dedup();
        for why in reasons {
            let at: Vec<&str> = self
                .skipped
                .iter()
                .filter(|(_, w)| w == why)
                .map(|(a, _)| a.as_str())
                .collect();
            s.push_str(&format!(
                "\n  skipped {} block(s): {why}: {}",
                at.len(),
                at.join(", ")
            ));
        }
        s
    }
}

/// A block and the ones that continue it: one scratch folder, in order.
struct Session {
    blocks: Vec<Block>,
}

/// Checks markdown files given as `(label, text)`, running sessions on `threads` threads.
pub fn check(files: &[(String, String)], forge: &Path, threads: usize) -> Report {
    let mut report = Report {
        files: files.len(),
        ..Default::default()
    };
    let mut sessions: Vec<Session> = Vec::new();
    for (label, text) in files {
        let blocks = match parse(label, text) {
            Ok(b) => b,
            Err(errors) => {
                report.failures.extend(errors);
                continue;
            }
        };
        report.blocks += blocks.len();
        // Whether the previous block of this file runs (a `continue` block needs it to).
        let mut previous: Option<Result<(), String>> = None;
        for b in blocks {
            let at = format!("{}:{}", b.file, b.line);
            let missing: Vec<&String> = b.needs.iter().filter(|p| !runs(p, forge)).collect();
            let runs = match &b.start {
                Start::Skip(r) => Err(SKIP_REASONS
                    .iter()
                    .find(|(k, _)| k == r)
                    .map(|(_, w)| w.to_string())
                    .unwrap_or_default()),
                Start::Continue => match &previous {
                    None => {
                        report.failures.push(format!(
                            "{at}: `continue` but no console block comes before it in {}",
                            b.file
                        ));
                        previous = Some(Err("its session could not start".into()));
                        continue;
                    }
                    Some(Err(_)) => Err("continues a skipped block".to_string()),
                    Some(Ok(())) => Ok(()),
                },
                Start::Setup(name) => {
                    if setups::find(name).is_none() {
                        report.failures.push(format!(
                            "{at}: no setup named `{name}`; the setups are: {}",
                            setups::SETUPS
                                .iter()
                                .map(|s| s.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                        previous = Some(Err("its setup is unknown".into()));
                        continue;
                    }
                    Ok(())
                }
            };
            let runs = runs.and_then(|()| match missing.is_empty() {
                true => Ok(()),
                false => Err(format!(
                    "needs {} (not installed here)",
                    missing
                        .iter()
                        .map(|p| match p.as_str() {
                            "sandbox" => "the full kernel sandbox".to_string(),
                            _ => format!("`{p}`"),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            });
            match &runs {
                Err(why) => report.skipped.push((at, why.clone())),
                Ok(()) => {
                    report.ran_blocks += 1;
                    report.commands += b.commands.len();
                    match b.start {
                        Start::Continue => sessions
                            .last_mut()
                            .expect("a session to continue")
                            .blocks
                            .push(b),
                        _ => sessions.push(Session { blocks: vec![b] }),
                    }
                }
            }
            // A block skipped for a missing program ends its session for the blocks after it.
            previous = Some(runs);
        }
    }
    let results = run_sessions(sessions, forge, threads.max(1));
    for r in results {
        for m in r {
            report.failures.push(m.message.clone());
            if !m.cmd.text.is_empty() {
                report.mismatches.push(m);
            }
        }
    }
    report
}

/// Is `program` installed and does it run? (`PROG --version` exits 0: a rustup proxy for a
/// component that is not installed is on PATH but does not run.)
fn runs(program: &str, forge: &Path) -> bool {
    if program == "sandbox" {
        // The block's output is what the full wall prints; `--level --json` says if it is here.
        return Process::new(forge)
            .args(["sandbox", "--level", "--json"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
            .is_some_and(|v| v["full"] == true);
    }
    Process::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs the sessions on a few threads; each returns its mismatches.
fn run_sessions(sessions: Vec<Session>, forge: &Path, threads: usize) -> Vec<Vec<Mismatch>> {
    let queue = std::sync::Mutex::new(sessions.into_iter().enumerate().collect::<Vec<_>>());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue").pop();
                    let Some((i, session)) = next else { break };
                    let r = run_session(&session, forge);
                    results.lock().expect("results").push((i, r));
                }
            });
        }
    });
    let mut r = results.into_inner().expect("results");
    r.sort_by_key(|(i, _)| *i);
    r.into_iter().map(|(_, m)| m).collect()
}

fn run_session(session: &Session, forge: &Path) -> Vec<Mismatch> {
    let first = &session.blocks[0];
    let at = format!("{}:{}", first.file, first.line);
    let Start::Setup(name) = &first.start else {
        unreachable!("a session starts with a setup")
    };
    let setup = setups::find(name).expect("checked");
    let fail = |message: String| Mismatch {
        file: first.file.clone(),
        cmd: Cmd {
            line: first.line,
            text: String::new(),
            expected: Vec::new(),
            exit: 0,
            span: (0, 0),
        },
        actual: Vec::new(),
        code: 0,
        message,
    };
    let mut scratch = match Scratch::new(forge) {
        Ok(s) => s,
        Err(e) => return vec![fail(format!("{at}: cannot make a scratch folder: {e}"))],
    };
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (setup.make)(&mut scratch);
    }));
    if made.is_err() {
        return vec![fail(format!(
            "{at}: setup `{name}` failed (see the panic above)"
        ))];
    }
    let spellings = scratch.spellings();
    let mut mismatches = Vec::new();
    for b in &session.blocks {
        for c in &b.commands {
            let (code, raw) = match scratch.run(&c.text) {
                Ok(r) => r,
                Err(e) => {
                    mismatches.push(fail(format!("{}:{}: `{}` {e}", b.file, c.line, c.text)));
                    return mismatches;
                }
            };
            let actual = normalise(&raw, &spellings);
            let same_output = output_matches(&c.expected, &actual);
            if same_output && code == c.exit {
                continue;
            }
            mismatches.push(Mismatch {
                file: b.file.clone(),
                cmd: c.clone(),
                message: describe(&b.file, c, &actual, code),
                actual,
                code,
            });
        }
    }
    mismatches
}

/// A mismatch as a person reads it: where, what differs first, and the whole actual output.
fn describe(file: &str, c: &Cmd, actual: &[String], code: i32) -> String {
    let mut s = format!("{file}:{}: `$ {}`", c.line, c.text);
    if code != c.exit {
        s.push_str(&format!(" exited {code}, the doc says {}", c.exit));
    }
    if !output_matches(&c.expected, actual) {
        let first = c
            .expected
            .iter()
            .zip(actual)
            .position(|(e, a)| e == "..." || !line_matches(e, a));
        match first {
            Some(k) if c.expected[k] != "..." => s.push_str(&format!(
                "\n  output differs at {file}:{}:\n    doc:    {}\n    actual: {}",
                c.span.0 + k,
                c.expected[k],
                actual[k]
            )),
            _ => s.push_str(&format!(
                "\n  output differs: the doc shows {} line(s), the command printed {}",
                c.expected.len(),
                actual.len()
            )),
        }
    }
    s.push_str("\n  actual output (normalised):");
    for l in actual {
        s.push_str(&format!("\n    | {l}"));
    }
    if code != 0 {
        s.push_str(&format!("\n    | # exit {code}"));
    }
    s
}

/// Writes the actual output over the expected output of each mismatched command, keeping the
/// expected lines that still match line for line (so `[..]` marks survive). Returns the new
/// text of the file.
pub fn overwrite(text: &str, mismatches: &[&Mismatch]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut ms: Vec<&&Mismatch> = mismatches.iter().collect();
    ms.sort_by_key(|m| std::cmp::Reverse(m.cmd.span.0));
    for m in ms {
        let mut new: Vec<String> = m
            .actual
            .iter()
            .enumerate()
            .map(|(k, a)| match m.cmd.expected.get(k) {
                Some(e) if line_matches(e, a) => e.clone(),
                _ => a.clone(),
            })
            .collect();
        if m.code != 0 {
            new.push(format!("# exit {}", m.code));
        }
        let (from, to) = (m.cmd.span.0 - 1, m.cmd.span.1 - 1);
        lines.splice(from..to, new);
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}
