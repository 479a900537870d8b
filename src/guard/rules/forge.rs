//! Forge itself: its state (`.forge/`, `.tmp/.forge/`, `.git/`), the agents' settings where its
//! hooks are wired, the commands only a person may run, and killing Forge or the agent client
//! it supervises. (Where a path lands is decided in `fs.rs`; these are the rules it raises.)

use super::{Judge, Rule};
use crate::guard::Decision;
use crate::guard::shell::{Analysis, Arg, Invocation, Names};

pub const FORGE_STATE: Rule = Rule {
    id: "forge-state",
    decision: Decision::Deny,
    summary: "any agent write to `.forge/`, `.tmp/.forge/` or `.git/` (by any route: redirects, `sed -i`, `git checkout -- .forge`, `tar -x`, hard links, patches)",
};
pub const AGENT_CONFIG: Rule = Rule {
    id: "agent-config",
    decision: Decision::Deny,
    summary: "agent edits of `.claude/`, `.codex/`, `.gemini/` (where Forge's hooks are wired), `.mcp.json`, `.vscode/`, `.idea/`, `.cursor/`, `.zed/`, `.devcontainer/` (what a client or editor starts); an agent's worktree in `.claude/worktrees/` is a working tree of the project, judged as the main tree",
};
pub const SANDBOX_CONTROL: Rule = Rule {
    id: "sandbox-control",
    decision: Decision::Deny,
    summary: "file-tool edits (Write, Edit, …) of what the session sandbox keeps read-only in the project: every `core.hooksPath` folder, files the git config includes, PATH folders inside the project, the tool configs a person's next command reads (`.cargo/`, `rust-toolchain.toml`, `.npmrc`, `.github/workflows/`, …, existing or not) but those `sandbox.session_writable` names",
};
pub const HUMAN_ONLY: Rule = Rule {
    id: "human-only",
    decision: Decision::Deny,
    summary: "commands for a person: `forge verify --reset-breaker|--max-failures`, `forge hooks`, `forge change use`, `forge init --force`, raising a budget, `forge guard allow-once|trust|lift`, `forge run --retry`",
};
pub const SANDBOX_OFF: Rule = Rule {
    id: "sandbox-off",
    decision: Decision::Ask,
    summary: "`forge sandbox --mode off -- CMD`: CMD runs without the kernel sandbox (what CMD does is judged too, as for every launcher)",
};
pub const KILL_FORGE: Rule = Rule {
    id: "kill-forge",
    decision: Decision::Deny,
    summary: "signalling Forge or the agent client (`pkill -f 'forge run'`, `kill $(pgrep forge)`, `killall forge`)",
};

/// Whether `rule` is one of the rules above, which keep Forge's own controls out of an agent's
/// reach: a deny of theirs offers no allow-once command.
pub fn guards_forge(rule: &str) -> bool {
    [
        FORGE_STATE,
        AGENT_CONFIG,
        SANDBOX_CONTROL,
        HUMAN_ONLY,
        KILL_FORGE,
    ]
    .iter()
    .any(|r| r.id == rule)
}

/// What Forge's and the agents' processes look like to `pgrep`/`pkill` (names) and with `-f`
/// (whole command lines).
/// `node` is the process of the agent clients written in JavaScript (Claude Code, Gemini CLI)
/// before they rename themselves, and what `pkill node` stops.
const NAMES: [&str; 5] = ["forge", "claude", "codex", "gemini", "node"];
const COMMAND_LINES: [&str; 6] = [
    "forge run shop --goal x",
    "/usr/local/bin/forge hook claude pre-tool-use",
    "forge sandbox --profile session -- bash -c x",
    "node /usr/local/lib/node_modules/@anthropic-ai/claude-code/cli.js",
    "codex exec --json x",
    "gemini --output-format json",
];

pub(super) fn judge(j: &mut Judge, a: &Analysis, inv: &Invocation) {
    let Some(name) = inv.name() else { return };
    match name {
        "forge" => forge(j, inv),
        "kill" | "pkill" | "killall" | "skill" | "slay" | "tkill" => kill(j, a, inv, name),
        "fuser" => fuser(j, inv),
        _ => {}
    }
}

fn forge(j: &mut Judge, inv: &Invocation) {
    let args: Vec<&str> = inv.lit_args().flatten().collect();
    let has = |s: &str| args.iter().any(|a| super::is_long(a, s));
    let human = match args.first().copied() {
        // Raising the threshold is as much a person's call as resetting the breaker.
        Some("verify") => has("--reset-breaker") || has("--max-failures"),
        Some("hooks") => true,
        Some("change") => args.get(1) == Some(&"use"),
        Some("budget") => args
            .iter()
            .any(|a| matches!(*a, "raise" | "set" | "limit" | "reset")),
        Some("init") => has("--force"),
        Some("guard") => {
            matches!(
                args.get(1).copied(),
                Some("allow-once" | "trust" | "untrust" | "lift" | "phase")
            ) && args.get(2).copied() != Some("--show")
        }
        Some("run") => has("--retry") || has("--abandon"),
        Some("sandbox") => {
            if sandbox_off(&inv.lit_args().collect::<Vec<_>>()) {
                j.hit_at(
                    &SANDBOX_OFF,
                    &inv.origin,
                    format!(
                        "`{}` runs its command outside the kernel sandbox: ask the person",
                        inv.display()
                    ),
                );
            }
            false
        }
        _ => false,
    };
    if human {
        j.hit_at(
            &HUMAN_ONLY,
            &inv.origin,
            format!(
                "`{}` is for the person supervising the agent: stop and ask them",
                inv.display()
            ),
        );
    }
}

/// Whether `forge sandbox`'s own options (before `--`) turn the sandbox off, or may: a mode
/// computed at run time (`--mode "$M"`) could be `off`.
fn sandbox_off(args: &[Option<&str>]) -> bool {
    let own = args
        .iter()
        .position(|a| *a == Some("--"))
        .unwrap_or(args.len());
    let own = &args[..own];
    own.iter().enumerate().any(|(i, a)| match a {
        Some("--mode") => matches!(own.get(i + 1), Some(Some("off") | None)),
        Some(a) => a.strip_prefix("--mode=").is_some_and(|m| m == "off"),
        None => false,
    })
}

/// Whether an extended regular expression (`pgrep`/`pkill` patterns, `killall -r`) matches
/// Forge or an agent client.
pub(crate) fn pattern_hits_forge(pattern: &str, full: bool, ignore_case: bool) -> bool {
    let pat = if ignore_case {
        format!("(?i){pattern}")
    } else {
        pattern.to_string()
    };
    let Ok(re) = regex_automata::meta::Regex::new(&pat) else {
        // A pattern Forge cannot read: judged by whether it names Forge at all.
        return pattern.to_ascii_lowercase().contains("forg") || pattern.contains("claude");
    };
    let cands: Vec<&str> = if full {
        NAMES.iter().chain(COMMAND_LINES.iter()).copied().collect()
    } else {
        NAMES.to_vec()
    };
    cands.iter().any(|c| re.is_match(c))
}

/// A pattern that matches every process (`.`, `''`, `.*`).
pub(crate) fn pattern_matches_all(pattern: &str) -> bool {
    let Ok(re) = regex_automata::meta::Regex::new(pattern) else {
        return false;
    };
    ["a", "x", "init", "1"].iter().all(|c| re.is_match(c))
}

fn kill(j: &mut Judge, a: &Analysis, inv: &Invocation, name: &str) {
    let shown = inv.display();
    let lits: Vec<Option<&str>> = inv.lit_args().collect();
    if lits
        .iter()
        .any(|x| matches!(x, Some("-l" | "-L" | "--list" | "-0" | "-s0")))
        && name == "kill"
    {
        return;
    }
    let hit = |j: &mut Judge| {
        j.hit_at(&KILL_FORGE, &inv.origin, format!("`{shown}` signals Forge or the agent it supervises; stop only processes you started, by their pid"));
    };
    match name {
        "kill" => {
            // Targets named by a command Forge saw earlier: `kill $(pgrep forge)`,
            // `pgrep -f forge | xargs kill`, `ps | grep forge | … | xargs kill`.
            let computed = inv.args.iter().any(|w| matches!(&w.arg, Arg::Dyn { .. }))
                || !matches!(inv.names, Names::None | Names::Known(_));
            if computed && a.invocations.iter().any(looks_for_forge) {
                hit(j);
            }
            if let Names::Known(words) = &inv.names
                && words.iter().any(|w| NAMES.contains(&w.as_str()))
            {
                hit(j);
            }
            // `kill 0`: every process of the caller's process group, the agent client's.
            if super::system::kill_targets(&lits).contains(&"0") {
                hit(j);
            }
            // `kill $PPID`: the shell's parent is the agent client (or Forge) that started it.
            if inv.args.iter().any(|w| {
                w.arg
                    .lit()
                    .is_some_and(|a| a.trim_start_matches('-') == crate::guard::shell::PARENT_PID)
            }) {
                hit(j);
            }
        }
        "pkill" | "killall" | "skill" | "slay" | "tkill" => {
            let (patterns, full, icase, regex) = kill_patterns(inv, name);
            if patterns.iter().any(|p| match p {
                Some(p) if regex => pattern_hits_forge(p, full, icase),
                Some(p) => NAMES.iter().any(|n| {
                    if icase {
                        n.eq_ignore_ascii_case(p)
                    } else {
                        n == p
                    }
                }),
                None => true,
            }) {
                hit(j);
            }
        }
        _ => {}
    }
}

/// `fuser -k PATH` signals every process using PATH (`-m`: its whole filesystem): in the
/// project that is Forge and the agent, whose working folder it is. A port (`8080/tcp`) is a
/// dev server's.
fn fuser(j: &mut Judge, inv: &Invocation) {
    let lits: Vec<Option<&str>> = inv.lit_args().collect();
    let kills = lits
        .iter()
        .flatten()
        .any(|a| *a == "--kill" || (a.starts_with('-') && !a.starts_with("--") && a.contains('k')));
    let paths = lits.iter().any(|a| match a {
        None => true,
        Some(a) => {
            !a.starts_with('-')
                && !a.split_once('/').is_some_and(|(port, proto)| {
                    matches!(proto, "tcp" | "udp")
                        && port
                            .split(',')
                            .next()
                            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                })
        }
    });
    if kills && paths {
        j.hit_at(
            &KILL_FORGE,
            &inv.origin,
            format!(
                "`{}` signals every process using those files, which may be Forge or the agent; stop only processes you started, by their pid",
                inv.display()
            ),
        );
    }
}

/// The patterns (or names) a `pkill`/`killall` targets, whether they match whole command
/// lines, ignore case, and are regular expressions.
pub(crate) fn kill_patterns(
    inv: &Invocation,
    name: &str,
) -> (Vec<Option<String>>, bool, bool, bool) {
    let lits: Vec<Option<&str>> = inv.lit_args().collect();
    let value_opts: &[&str] = if name == "killall" {
        &[
            "-s",
            "--signal",
            "-u",
            "--user",
            "-o",
            "--older-than",
            "-y",
            "--younger-than",
            "-n",
            "--ns",
            "-Z",
            "--context",
        ]
    } else {
        &[
            "-s",
            "--signal",
            "-u",
            "--euid",
            "-U",
            "--uid",
            "-g",
            "--pgroup",
            "-G",
            "--group",
            "-P",
            "--parent",
            "-t",
            "--terminal",
            "-F",
            "--pidfile",
            "--ns",
            "--nslist",
            "-q",
            "--queue",
        ]
    };
    let mut patterns = Vec::new();
    let (mut full, mut icase, mut regex) = (false, false, name != "killall");
    let mut i = 0;
    while i < lits.len() {
        match lits[i] {
            Some(a) if value_opts.contains(&a) => {
                i += 2;
                continue;
            }
            Some(a) if a.starts_with("--") => {
                full |= a == "--full";
                icase |= a == "--ignore-case";
                regex |= a == "--regexp";
            }
            Some(a) if a.starts_with('-') && a.len() > 1 => {
                let flags = &a[1..];
                if flags.chars().all(|c| c.is_ascii_digit())
                    || flags.chars().all(|c| c.is_ascii_uppercase())
                {
                    // A signal: `-9`, `-KILL`.
                } else {
                    full |= flags.contains('f') && name != "killall";
                    icase |= flags.contains('i') || flags.contains('I');
                    regex |= name == "killall" && flags.contains('r');
                }
            }
            Some(p) => patterns.push(Some(p.to_string())),
            None => patterns.push(None),
        }
        i += 1;
    }
    (patterns, full, icase, regex)
}

/// A command that finds Forge's processes (or reads a pid file of Forge's), whose output a
/// `kill` may use.
fn looks_for_forge(x: &Invocation) -> bool {
    let Some(name) = x.name() else { return false };
    let lits: Vec<&str> = x.lit_args().flatten().collect();
    match name {
        "pgrep" | "pidof" => {
            let (patterns, full, icase, _) = kill_patterns(x, "pkill");
            name == "pidof"
                && patterns
                    .iter()
                    .flatten()
                    .any(|p| NAMES.contains(&p.as_str()))
                || name == "pgrep"
                    && patterns.iter().any(|p| {
                        p.as_deref()
                            .is_none_or(|p| pattern_hits_forge(p, full, icase))
                    })
        }
        "grep" | "egrep" | "rg" => lits
            .iter()
            .filter(|a| !a.starts_with('-'))
            .take(1)
            .any(|p| pattern_hits_forge(p, true, true)),
        "cat" | "head" | "tail" => lits
            .iter()
            .any(|a| a.contains(".tmp/.forge") || a.contains("forge") && a.ends_with(".pid")),
        // `lsof -t .`, `lsof -t +D .`: the processes using files there, Forge's and the
        // agent's among them when it is the project (a port, `-i :3000`, is a server's).
        "lsof" => {
            let terse = lits
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('t'));
            let mut files = false;
            let mut k = 0;
            while k < lits.len() {
                let a = lits[k];
                if matches!(a, "-i" | "-p" | "-u" | "-c" | "-g" | "-s" | "-d" | "-F") {
                    k += 1;
                } else if matches!(a, "+D" | "+d") || !(a.starts_with(['-', '+', ':'])) {
                    files = true;
                }
                k += 1;
            }
            terse && files
        }
        // `ps -C forge`, `ps -o pid= -C claude`; `ps -o ppid= -p $$`: the shell's parent, the
        // agent client that started it.
        "ps" => lits
            .iter()
            .any(|a| NAMES.iter().any(|n| a.contains(n)) || a.contains("ppid")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_that_reach_forge() {
        assert!(pattern_hits_forge("forge run", true, false));
        assert!(pattern_hits_forge("forg", false, false));
        assert!(pattern_hits_forge("f.rge", false, false));
        assert!(pattern_hits_forge("claude", true, false));
        assert!(!pattern_hits_forge("node server.js", true, false));
        assert!(!pattern_hits_forge("vite", true, false));
        assert!(!pattern_hits_forge("python -m http.server", true, false));
        assert!(pattern_matches_all("."));
        assert!(pattern_matches_all(""));
        assert!(!pattern_matches_all("forge"));
    }
}
