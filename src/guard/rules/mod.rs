//! The default policy, judged on the analysis of `shell/`. Each file holds one family of rules
//! — its ids, decisions, one-line summaries and the judge functions that raise them — and
//! [`DEFAULT_RULES`] lists every id once (`forge guard rules`, `relaxes:`, docs/guard.md).
//!
//! - `fs.rs`: deletes, writes and reads of files, secrets, disks, permissions;
//! - `git.rs`: history, branches, discarded work, git configuration that runs code;
//! - `net.rs`: code from the network, exfiltration, publishing, other machines, containers;
//! - `code.rs`: code Forge cannot read or parse (scripts outside the project, inline
//!   interpreter code, computed programs);
//! - `forge.rs`: Forge's own state, the agents' settings, commands for a person, killing Forge;
//! - `system.rs`: the machine and its processes (shutdown, fork bombs, privilege, scheduling).
//!
//! Nothing here reads the command line; everything here may read the disk only to place a path
//! (symlinks, globs, whether a file exists).

pub mod code;
pub mod forge;
pub mod fs;
pub mod git;
pub mod inline;
pub mod net;
pub mod system;
pub mod targets;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::paths::Paths;
use super::shell::{Analysis, Arg, Cwd, Invocation, Origin, Word};
use super::{Decision, Finding};

/// A default rule: its stable id, decision and what it covers.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub decision: Decision,
    pub summary: &'static str,
}

/// Every default rule, once. The order is the order of `forge guard rules`.
pub const DEFAULT_RULES: &[&Rule] = &[
    &code::UNPARSEABLE,
    &code::DYNAMIC_PROGRAM,
    &code::UNREAD_CODE,
    &code::INLINE_CODE,
    &fs::RM_REPO,
    &fs::RM_OUTSIDE,
    &fs::RM_UNKNOWN,
    &fs::FIND_DELETE,
    &fs::WRITE_OUTSIDE,
    &fs::WRITE_UNKNOWN,
    &fs::SECRETS,
    &fs::SECRETS_WRITE,
    &fs::DISK_WRECK,
    &fs::PERMISSIONS_WRECK,
    &git::FORCE_PUSH,
    &git::PUSH_COMPUTED,
    &git::RESET_HARD,
    &git::CLEAN,
    &git::DISCARD,
    &git::STASH_DROP,
    &git::DELETE_MAIN,
    &git::BRANCH_FORCE,
    &git::HISTORY_REWRITE,
    &git::AMEND,
    &git::NO_VERIFY,
    &git::PUSH_ELSEWHERE,
    &git::CONFIG_EXEC,
    &net::PIPE_TO_SHELL,
    &net::EXFILTRATION,
    &net::EXFILTRATION_ASK,
    &net::REMOTE_SHELL,
    &net::PUBLISH,
    &net::REMOTE_EXEC,
    &net::CONTAINER_HOST,
    &net::CONTAINER_PRIVILEGED,
    &forge::FORGE_STATE,
    &forge::AGENT_CONFIG,
    &forge::SANDBOX_CONTROL,
    &forge::HUMAN_ONLY,
    &forge::SANDBOX_OFF,
    &forge::KILL_FORGE,
    &system::FORK_BOMB,
    &system::KILL_EVERYTHING,
    &system::SHUTDOWN,
    &system::PRIVILEGE,
    &system::EXTERNAL_DESTROY,
    &system::SCHEDULE,
    &super::phase::RED_SCOPE,
    &super::phase::GREEN_SCOPE,
    &super::phase::READ_ONLY,
];

/// The default rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    DEFAULT_RULES.iter().copied().find(|r| r.id == id)
}

/// What a path argument touches: the word and the folder it is read in.
pub struct Target<'a> {
    pub word: &'a Word,
    pub cwd: &'a Cwd,
    pub origin: &'a Origin,
}

/// Judges one analysis; collects findings and the paths written (for phase scope and project
/// path rules).
pub struct Judge<'a> {
    pub paths: &'a Paths,
    /// Decisions a person changed in config (`guard.decisions`).
    pub decisions: &'a HashMap<String, Decision>,
    /// Links made earlier on the line (`ln -s ~ h`, `ln .forge/config.yaml c`): link → target.
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Files written earlier on the line by a command whose output is sensitive (`env > f`).
    pub tainted: Vec<PathBuf>,
    pub findings: Vec<Finding>,
    pub written: Vec<PathBuf>,
}

impl<'a> Judge<'a> {
    pub fn new(paths: &'a Paths, decisions: &'a HashMap<String, Decision>) -> Self {
        Judge {
            paths,
            decisions,
            links: Vec::new(),
            tainted: Vec::new(),
            findings: Vec::new(),
            written: Vec::new(),
        }
    }

    fn decision(&self, rule: &Rule) -> Decision {
        self.decisions
            .get(rule.id)
            .copied()
            .unwrap_or(rule.decision)
    }

    /// A rule matched.
    pub fn hit(&mut self, rule: &Rule, reason: String) {
        self.findings.push(Finding {
            decision: self.decision(rule),
            rule: rule.id.to_string(),
            reason,
            contained: false,
        });
    }

    /// A rule matched on code that runs somewhere: the message says where it came from.
    pub fn hit_at(&mut self, rule: &Rule, origin: &Origin, reason: String) {
        let reason = format!("{reason}{}", origin.suffix(&self.paths.root));
        self.hit(rule, reason);
    }

    /// A finding that exists only because Forge cannot know what runs, where what runs would
    /// stay inside the session sandbox (when there is one): the sandbox may contain it.
    pub fn hit_contained(&mut self, rule: &Rule, origin: &Origin, reason: String) {
        let reason = format!("{reason}{}", origin.suffix(&self.paths.root));
        self.findings.push(Finding {
            decision: self.decision(rule),
            rule: rule.id.to_string(),
            reason,
            contained: true,
        });
    }

    /// A finding about something computed at run time. Inside code Forge read from a file (a
    /// script, a recipe), computed values are ordinary — the person wrote that code — so it
    /// asks rather than denies.
    pub fn hit_unknown(&mut self, rule: &Rule, origin: &Origin, reason: String) {
        let from_file = matches!(
            origin,
            Origin::Script(_) | Origin::Make { .. } | Origin::Package { .. }
        );
        let reason = format!("{reason}{}", origin.suffix(&self.paths.root));
        let mut decision = self.decision(rule);
        if from_file && decision == Decision::Deny {
            decision = Decision::Ask;
        }
        self.findings.push(Finding {
            decision,
            rule: rule.id.to_string(),
            reason,
            contained: false,
        });
    }

    /// Every path `raw` may name in `cwd` (several when the folder depends on a branch), as the
    /// kernel would open it, through links made earlier on the line. Empty when a relative
    /// path's folder is unknown.
    pub fn resolve_all(&self, raw: &str, cwd: &Cwd, origin: &Origin) -> Vec<PathBuf> {
        let scratch = self
            .paths
            .temp
            .first()
            .map(|t| t.join(".forge-container"))
            .unwrap_or_default();
        let mapped = origin.host_path(raw, &scratch);
        let raw = mapped.as_str();
        if Path::new(raw).is_absolute() {
            return vec![self.through_links(self.paths.resolve(raw, Path::new("/")))];
        }
        cwd.paths()
            .iter()
            .map(|c| self.through_links(self.paths.resolve(raw, c)))
            .collect()
    }

    fn through_links(&self, p: PathBuf) -> PathBuf {
        for (link, target) in self.links.iter().rev() {
            if let Ok(rest) = p.strip_prefix(link) {
                return if rest.as_os_str().is_empty() {
                    target.clone()
                } else {
                    target.join(rest)
                };
            }
        }
        p
    }

    pub fn analysis(&mut self, a: &Analysis) {
        code::judge_problems(self, a);
        if a.fork_bomb {
            self.hit(
                &system::FORK_BOMB,
                "this defines a function that spawns copies of itself".into(),
            );
        }
        for o in &a.opaque {
            code::judge_opaque(self, o);
        }
        // In the order things happen: a link made by a command is followed by the redirections
        // of later ones (`ln .forge/config.yaml c && echo x > c`).
        self.redirections(a, None);
        for (i, inv) in a.invocations.iter().enumerate() {
            self.invocation(a, i, inv);
            self.redirections(a, Some(i));
        }
    }

    fn redirections(&mut self, a: &Analysis, by: Option<usize>) {
        for r in a.writes.iter().filter(|r| r.by == by) {
            let inv = r.by.map(|i| &a.invocations[i]);
            self.write(
                &Target {
                    word: &r.target,
                    cwd: &r.cwd,
                    origin: &r.origin,
                },
                "redirects output to",
                false,
            );
            net::judge_redirect(self, a, r, inv);
        }
        for r in a.reads.iter().filter(|r| r.by == by) {
            self.read(&Target {
                word: &r.target,
                cwd: &r.cwd,
                origin: &r.origin,
            });
        }
    }

    fn invocation(&mut self, a: &Analysis, i: usize, inv: &Invocation) {
        if let Arg::Dyn { .. } = &inv.program {
            code::judge_dynamic(self, a, inv);
            return;
        }
        system::judge(self, a, inv);
        forge::judge(self, a, inv);
        git::judge(self, a, inv);
        net::judge(self, a, i, inv);
        code::judge(self, a, inv);
        fs::judge(self, inv);
    }
}

/// Operands: arguments that are not options (everything after `--`).
pub fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut after_dashdash = false;
    for a in args {
        match a.arg.lit() {
            Some("--") if !after_dashdash => after_dashdash = true,
            Some(s) if !after_dashdash && s.starts_with('-') && s.len() > 1 => {}
            _ => out.push(a),
        }
    }
    out
}

/// Whether `arg` names the long option `long`, written out or as the unambiguous prefix GNU
/// tools and git accept (`--recur` for `--recursive`, `--har` for `--hard`), with or without
/// `=value`.
pub fn is_long(arg: &str, long: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name == long || (name.len() > 3 && name.starts_with("--") && long.starts_with(name))
}

/// Whether a short flag letter (in any cluster like `-rf`) or a long flag is present, before
/// `--`.
pub fn has_flag(args: &[Word], short: char, long: &[&str]) -> bool {
    args.iter()
        .filter_map(|a| a.arg.lit())
        .take_while(|a| *a != "--")
        .any(|a| {
            long.iter().any(|l| is_long(a, l))
                || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short))
        })
}

/// The values of an option: `-o V`, `-oV`, `--opt V`, `--opt=V` (and long prefixes).
pub fn option_values(args: &[Word], short: &[&str], long: &[&str]) -> Vec<Word> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let Some(s) = args[i].arg.lit() else {
            i += 1;
            continue;
        };
        if s == "--" {
            break;
        }
        if short.contains(&s) || long.contains(&s) {
            if let Some(v) = args.get(i + 1) {
                out.push(v.clone());
            }
            i += 2;
            continue;
        }
        if let Some((name, v)) = s.split_once('=')
            && name.starts_with("--")
            && long.iter().any(|l| is_long(name, l))
        {
            out.push(Word::lit(v));
        } else if s.starts_with("--") && long.iter().any(|l| is_long(s, l)) {
            if let Some(v) = args.get(i + 1) {
                out.push(v.clone());
            }
            i += 2;
            continue;
        } else if s.starts_with('-') && !s.starts_with("--") && s.len() > 2 {
            // A cluster: `-tDIR` (attached) or `-Dt DIR` (the value-taking letter last).
            for sh in short.iter().filter(|sh| sh.len() == 2) {
                let letter = sh.chars().nth(1).unwrap_or(' ');
                if let Some(p) = s[1..].find(letter) {
                    if p + 2 == s.len() {
                        if let Some(v) = args.get(i + 1) {
                            out.push(v.clone());
                        }
                        i += 1;
                    } else if p == 0 {
                        out.push(Word::lit(&s[2..]));
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    out
}

/// The folder part of a glob: `build/*.o` → `build`, `*` → `.`.
pub fn glob_dir(raw: &str) -> &str {
    let cut = raw.find(['*', '?', '[']).unwrap_or(raw.len());
    let prefix = &raw[..cut];
    match prefix.rfind('/') {
        Some(0) => "/",
        Some(i) => &raw[..i],
        None => ".",
    }
}

/// Whether a glob's last part matches every name in its folder (`*`, `.*`, `.[!.]*`, `?*`):
/// deleting it deletes the folder's contents.
pub fn matches_everything(pattern: &str) -> bool {
    let last = pattern
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    matches!(
        last,
        "*" | "?*" | "*?" | ".*" | ".[!.]*" | ".[^.]*" | ".??*" | "..?*" | "**" | "*.*" | "[!.]*"
    )
}

/// Whether a glob pattern (absolute) could reach `target` or one of its ancestors: each of its
/// parts matches the corresponding part of the target's path.
pub fn could_reach(pattern_abs: &str, target: &Path) -> bool {
    let p: Vec<&str> = pattern_abs.split('/').filter(|s| !s.is_empty()).collect();
    let t: Vec<String> = target
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if p.is_empty() || p.len() > t.len() {
        return false;
    }
    p.iter().zip(&t).all(|(pp, tt)| {
        if pp.contains(['*', '?', '[']) {
            super::shell::component_could_match(pp, tt)
        } else {
            pp == tt
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_is_listed_once() {
        let mut ids: Vec<&str> = DEFAULT_RULES.iter().map(|r| r.id).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "a rule id appears twice");
        assert!(rule("rm-repo").is_some());
    }

    #[test]
    fn long_options_match_their_prefixes() {
        assert!(is_long("--har", "--hard"));
        assert!(is_long("--force-w", "--force-with-lease"));
        assert!(is_long("--force-with-lease=main", "--force-with-lease"));
        assert!(!is_long("--", "--hard"));
        assert!(!is_long("--follow-tags", "--force"));
        let w: Vec<Word> = ["-t/x", "--target-directory=/y", "--target", "/z"]
            .iter()
            .map(|s| Word::lit(*s))
            .collect();
        let v: Vec<String> = option_values(&w, &["-t"], &["--target-directory"])
            .iter()
            .map(|w| w.arg.display().to_string())
            .collect();
        assert_eq!(v, ["/x", "/y", "/z"]);
    }

    #[test]
    fn globs_that_cover_a_folder() {
        assert!(matches_everything("*"));
        assert!(matches_everything("/tmp/*"));
        assert!(!matches_everything("/tmp/app-test-*"));
        assert!(could_reach("/r/.forg?", Path::new("/r/.forge/config.yaml")));
        assert!(could_reach("/tmp/h*", Path::new("/tmp/home/u")));
        assert!(!could_reach("/tmp/app-*", Path::new("/tmp/home")));
    }
}
