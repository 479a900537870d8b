//! Launchers as data: programs that run a command given after their own arguments
//! (`prlimit --nofile=10 -- CMD`, `doppler run -- CMD`, `forge sandbox … -- CMD`), one row
//! each, with the lines that prove the row beside it (a test runs every row's examples).
//! `wrappers.rs` peels them with [`Launcher::command_at`]; nothing here walks or judges.
//!
//! Also the other half of "an unknown program that takes a command after `--`": the programs
//! known to take plain arguments there ([`ARGS_AFTER_DASHES`]), whose `--` starts no command.

use super::Word;

/// What follows a launcher's own arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Then {
    /// The command and its arguments.
    Command,
    /// The arguments of `/bin/bash`, after a `--` that must be there (`capsh -- -c CMD`).
    ShellArgs,
}

/// One program that runs a command.
pub(super) struct Launcher {
    /// The names it goes by.
    pub names: &'static [&'static str],
    /// The subcommand that makes it run one (`doppler run`, `forge sandbox`); any other
    /// first word runs nothing.
    pub verb: Option<&'static str>,
    /// Operands before its options (`setarch ARCH [options] CMD`).
    pub operands: usize,
    /// Its options that take the next word as their value.
    pub value_opts: &'static [&'static str],
    /// Words after the options that are skipped, with options after them again (`dotenv
    /// [-f F] run [--override] CMD`).
    pub skip_words: &'static [&'static str],
    /// Words after the options that mean no command runs (`dotenv list`).
    pub not_a_run: &'static [&'static str],
    /// Options whose value is a command line run by a shell (`doppler run --command 'CMD'`).
    pub shell_opts: &'static [&'static str],
    pub then: Then,
    /// Whether the launcher itself is judged too (`forge sandbox --mode off` asks).
    pub judged_too: bool,
    /// Lines denied because of the command they launch (read by the tests below).
    #[cfg_attr(not(test), allow(dead_code))]
    pub denied: &'static [&'static str],
    /// Lines of ordinary use, allowed.
    #[cfg_attr(not(test), allow(dead_code))]
    pub allowed: &'static [&'static str],
}

const ROW: Launcher = Launcher {
    names: &[],
    verb: None,
    operands: 0,
    value_opts: &[],
    skip_words: &[],
    not_a_run: &[],
    shell_opts: &[],
    then: Then::Command,
    judged_too: false,
    denied: &[],
    allowed: &[],
};

pub(super) const LAUNCHERS: &[Launcher] = &[
    // util-linux: every limit option takes its value optionally and only glued (`-n10`,
    // `--nofile=10`); only the pid and the output columns take the next word.
    Launcher {
        names: &["prlimit"],
        value_opts: &["-p", "--pid", "-o", "--output"],
        denied: &[
            "prlimit --nofile=10 -- rm -rf ~",
            "prlimit -n10 rm -rf ~",
            "prlimit --as=1000000 git push --force origin main",
        ],
        allowed: &["prlimit --nofile=4096 cargo test", "prlimit -p 1234"],
        ..ROW
    },
    Launcher {
        names: &["numactl"],
        value_opts: &[
            "-i",
            "-p",
            "-m",
            "-N",
            "-C",
            "-P",
            "-w",
            "--interleave",
            "--preferred",
            "--preferred-many",
            "--weighted-interleave",
            "--membind",
            "--cpunodebind",
            "--physcpubind",
        ],
        denied: &[
            "numactl --interleave=all rm -rf ~",
            "numactl -N 0 -m 0 -- rm -rf ~",
        ],
        allowed: &["numactl --hardware", "numactl -N 0 cargo bench"],
        ..ROW
    },
    Launcher {
        names: &["setarch"],
        operands: 1,
        denied: &["setarch x86_64 -R rm -rf ~", "setarch $(uname -m) rm -rf ~"],
        allowed: &["setarch x86_64 -R ./target/debug/app", "setarch --list"],
        ..ROW
    },
    // setarch's own links, named after the architecture they set.
    Launcher {
        names: &["linux32", "linux64", "i386", "x86_64"],
        denied: &["linux32 rm -rf ~", "x86_64 -R -- rm -rf ~"],
        allowed: &["linux32 make"],
        ..ROW
    },
    Launcher {
        names: &["eatmydata"],
        denied: &["eatmydata rm -rf ~", "eatmydata -- rm -rf ~"],
        allowed: &["eatmydata cargo test"],
        ..ROW
    },
    // Every option of capsh is one word (`--drop=cap_x`); `--` hands the rest to bash.
    Launcher {
        names: &["capsh"],
        then: Then::ShellArgs,
        denied: &[
            "capsh -- -c 'rm -rf ~'",
            "capsh --drop=cap_sys_admin -- -c 'git push --force origin main'",
        ],
        allowed: &[
            "capsh --print",
            "capsh --drop=cap_net_raw -- -c 'cargo test'",
        ],
        ..ROW
    },
    Launcher {
        names: &["ssh-agent"],
        value_opts: &["-a", "-E", "-O", "-P", "-t"],
        denied: &["ssh-agent rm -rf ~", "ssh-agent -t 60 bash -c 'rm -rf ~'"],
        allowed: &["ssh-agent -s", "ssh-agent -k", "ssh-agent cargo test"],
        ..ROW
    },
    // python-dotenv (`dotenv [-f F] run CMD`) and dotenv-cli (`dotenv [-e F] [--] CMD`).
    Launcher {
        names: &["dotenv"],
        value_opts: &[
            "-f", "--file", "-e", "-v", "-p", "-q", "--quote", "--export",
        ],
        skip_words: &["run"],
        not_a_run: &["list", "get", "set", "unset"],
        denied: &[
            "dotenv -f .env.test run rm -rf ~",
            "dotenv run -- rm -rf ~",
            "dotenv -e .env -- rm -rf ~",
            "dotenv rm -rf ~",
        ],
        allowed: &[
            "dotenv -e .env.test -- npm test",
            "dotenv list",
            "dotenv run pytest",
        ],
        ..ROW
    },
    Launcher {
        names: &["doppler"],
        verb: Some("run"),
        value_opts: &[
            "-p",
            "--project",
            "-c",
            "--config",
            "--token",
            "--scope",
            "--config-dir",
            "--api-host",
            "--dashboard-host",
            "--name-transformer",
            "--mount",
            "--mount-format",
            "--mount-template",
            "--mount-max-reads",
            "--fallback",
        ],
        shell_opts: &["--command"],
        denied: &[
            "doppler run -- rm -rf ~",
            "doppler run -p web -c dev -- rm -rf ~",
            "doppler run --command 'rm -rf ~'",
        ],
        allowed: &["doppler run -- npm start", "doppler secrets"],
        ..ROW
    },
    // Forge's own launcher: CMD is judged as CMD, and the launcher too (`--mode off`).
    Launcher {
        names: &["forge"],
        verb: Some("sandbox"),
        value_opts: &[
            "--profile",
            "--project",
            "--write",
            "--answer",
            "--tmpdir",
            "--client",
            "--cache",
            "--mode",
            "--layer",
            "--layer-keep",
            "--layer-env",
        ],
        judged_too: true,
        denied: &[
            "forge sandbox -- rm -rf ~",
            "forge sandbox --profile session -- git push --force origin main",
            "forge sandbox --mode=require --contain -- bash -c 'rm -rf ~'",
        ],
        allowed: &[
            "forge sandbox -- cargo test",
            "forge sandbox --explain --json",
        ],
        ..ROW
    },
];

/// The row of `prog`, if it is a launcher.
pub(super) fn launcher(prog: &str) -> Option<&'static Launcher> {
    LAUNCHERS.iter().find(|l| l.names.contains(&prog))
}

/// Where a launcher's command starts in its arguments.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Start {
    /// At this index of the arguments.
    At(usize),
    /// The word at this index, from this byte on, is a command line for a shell
    /// (`--command CMD` at 0, `--command=CMD` past the `=`).
    ShellString(usize, usize),
    /// The words from this index on are the arguments of a shell.
    ShellArgs(usize),
    /// It runs no command.
    None,
}

impl Launcher {
    /// Where the command starts in `rest` (the arguments after the program's name).
    pub(super) fn command_at(&self, rest: &[Word]) -> Start {
        let lit = |i: usize| rest.get(i).and_then(|w| w.arg.lit());
        let mut i = 0;
        if let Some(verb) = self.verb {
            if lit(0) != Some(verb) {
                return Start::None;
            }
            i = 1;
        }
        i += self.operands;
        loop {
            let mut j = i;
            let mut dashes = false;
            while let Some(a) = lit(j) {
                if let Some(o) = self.shell_opts.iter().find(|o| is_opt(a, o)) {
                    return if a.len() > o.len() {
                        Start::ShellString(j, o.len() + 1)
                    } else {
                        Start::ShellString(j + 1, 0)
                    };
                }
                if a == "--" {
                    dashes = true;
                    j += 1;
                    break;
                }
                if !a.starts_with('-') || a == "-" {
                    break;
                }
                j += if self.value_opts.contains(&a) { 2 } else { 1 };
            }
            if self.then == Then::ShellArgs {
                return if dashes {
                    Start::ShellArgs(j)
                } else {
                    Start::None
                };
            }
            if !dashes && let Some(w) = lit(j) {
                if self.skip_words.contains(&w) {
                    i = j + 1;
                    continue;
                }
                if self.not_a_run.contains(&w) {
                    return Start::None;
                }
            }
            return if j < rest.len() {
                Start::At(j)
            } else {
                Start::None
            };
        }
    }
}

/// `a` is option `o`, alone or with its value glued on (`--command=x`).
fn is_opt(a: &str, o: &str) -> bool {
    a == o || a.strip_prefix(o).is_some_and(|r| r.starts_with('='))
}

/// Programs whose words after `--` are plain arguments (files, patterns, the arguments of
/// a program they build or a script they run), never a command line of theirs: `git log --
/// path`, `cargo run -- args`, `npm run x -- args`, `rg pattern -- file`. Any other program
/// followed, after `--`, by a name the rules know (`foo --bar -- rm -rf ~`) has that part
/// judged as a command too. Programs the walker knows ([`super::wrappers::KNOWN_PROGRAMS`])
/// are judged by their own rows and never count as unknown.
pub(super) const ARGS_AFTER_DASHES: &[&str] = &[
    // Builders and package managers that pass arguments on to what they run.
    "cargo",
    "rustc",
    "rustup",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "go",
    "just",
    "make",
    "gradle",
    "mvn",
    "dotnet",
    "swift",
    "zig",
    "mix",
    "stack",
    "cabal",
    "pytest",
    "pip",
    "uvx",
    "tox",
    "nox",
    "composer",
    "php",
    "lua",
    "java",
    // Searching, reading and listing files.
    "rg",
    "grep",
    "egrep",
    "fgrep",
    "ag",
    "ack",
    "fd",
    "ls",
    "cat",
    "bat",
    "less",
    "more",
    "head",
    "tail",
    "wc",
    "sort",
    "uniq",
    "cut",
    "diff",
    "cmp",
    "file",
    "stat",
    "du",
    "jq",
    "yq",
    "touch",
    "mkdir",
    "ln",
    "install",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "sha256sum",
    "md5sum",
    "zip",
    "unzip",
    "gzip",
    "gunzip",
    "xz",
    "zstd",
    // Printing, and shell builtins whose `--` ends their options.
    "echo",
    "printf",
    "set",
    "getopt",
    "getopts",
    "test",
    "[",
    "read",
    "printenv",
    "unset",
    // Editors: file names.
    "vim",
    "nvim",
    "vi",
    "emacs",
    "nano",
    "code",
    // What runs elsewhere (a container, a cluster) is judged by its own rules.
    "docker",
    "podman",
    "kubectl",
    "helm",
    "oc",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Decision;

    #[test]
    fn every_launcher_has_examples_both_ways() {
        for l in LAUNCHERS {
            assert!(
                !l.denied.is_empty() && !l.allowed.is_empty(),
                "{:?} needs examples",
                l.names
            );
        }
    }

    fn guard() -> (tempfile::TempDir, crate::guard::Guard) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        let home = dir.path().join("home");
        let g = crate::guard::Guard::new(&root, &home, None, None);
        (dir, g)
    }

    /// Each row's examples: the launched command is judged as if it ran alone.
    #[test]
    fn each_launcher_is_judged_by_what_it_launches() {
        let (dir, g) = guard();
        let root = dir.path().join("repo");
        for l in LAUNCHERS {
            for line in l.denied {
                let r = g.check_command(line, &root);
                assert_eq!(
                    r.decision,
                    Decision::Deny,
                    "{line} → {} {}",
                    r.rule,
                    r.reason
                );
            }
            for line in l.allowed {
                let r = g.check_command(line, &root);
                assert_eq!(
                    r.decision,
                    Decision::Allow,
                    "{line} → {} {}",
                    r.rule,
                    r.reason
                );
            }
        }
    }

    #[test]
    fn forge_sandbox_with_the_mode_off_asks() {
        let (dir, g) = guard();
        let root = dir.path().join("repo");
        for line in [
            "forge sandbox --mode off -- cargo test",
            "forge sandbox --mode=off -- ls",
            "forge sandbox --profile session --mode \"$M\" -- ls",
        ] {
            let r = g.check_command(line, &root);
            assert_eq!(
                (r.decision, r.rule.as_str()),
                (Decision::Ask, "sandbox-off"),
                "{line}: {}",
                r.reason
            );
        }
        // What it runs is judged all the same: never the default allow.
        let r = g.check_command("forge sandbox --mode off -- rm -rf ~", &root);
        assert_eq!(
            (r.decision, r.rule.as_str()),
            (Decision::Deny, "rm-outside-repo")
        );
        // `off` as an argument of CMD is CMD's business.
        let r = g.check_command("forge sandbox -- grep --mode off src", &root);
        assert_eq!(r.decision, Decision::Allow, "{}", r.reason);
    }

    /// An unknown program's `--` followed by a name the rules know starts a command; the
    /// programs known to take plain arguments there do not.
    #[test]
    fn an_unknown_program_runs_what_follows_its_dashes() {
        let (dir, g) = guard();
        let root = dir.path().join("repo");
        for line in [
            "foo --bar -- rm -rf ~",
            "op run --env-file=.env -- rm -rf ~",
            "aws-vault exec prod -- git push --force origin main",
            "./tools/with-env -- bash -c 'rm -rf ~'",
        ] {
            let r = g.check_command(line, &root);
            assert_eq!(
                r.decision,
                Decision::Deny,
                "{line} → {} {}",
                r.rule,
                r.reason
            );
        }
        for line in [
            "git log -- src/main.rs",
            "git checkout main -- src/lib.rs",
            "cargo run -- rm -rf ~",
            "npm run lint -- rm -rf ~",
            "rg pattern -- rm",
            "rg -n TODO -- src",
            "foo --bar -- file.txt",
            "echo -- rm -rf ~",
            "docker exec app -- rm -rf /tmp/cache",
            "cargo test -- --nocapture",
            "npm test -- --watch",
            "foo -- ls",
        ] {
            let r = g.check_command(line, &root);
            assert_eq!(
                r.decision,
                Decision::Allow,
                "{line} → {} {}",
                r.rule,
                r.reason
            );
        }
    }

    #[test]
    fn no_program_is_two_rows() {
        let mut seen = std::collections::HashSet::new();
        for name in LAUNCHERS
            .iter()
            .flat_map(|l| l.names)
            .chain(ARGS_AFTER_DASHES)
        {
            assert!(seen.insert(*name), "{name} is listed twice");
        }
    }
}
