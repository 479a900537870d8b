//! git semantics inside the project — what no sandbox can tell from honest work: history
//! (force pushes, rewritten or deleted refs), branches, discarded uncommitted work, skipped
//! hooks, and configuration that makes git run code or push differently.
//!
//! Long options are matched the way git parses them: any unambiguous prefix counts
//! (`reset --har`, `push --force-w`, `--mirro`, `--del`), short options in clusters (`-anm`).
//! Configuration is gathered from every place it can come from: `-c k=v`, `--config-env`,
//! `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, `GIT_CONFIG_PARAMETERS`, and `git config` itself.

use std::path::Path;

use super::{Judge, Rule, is_long, operands};
use crate::guard::Decision;
use crate::guard::paths::Place;
use crate::guard::shell::{Analysis, Arg, Invocation, Word};

pub const FORCE_PUSH: Rule = Rule {
    id: "git-force-push",
    decision: Decision::Deny,
    summary: "rewriting or deleting remote history: `push --force`/`-f`/`--force-with-lease` (and their prefixes), `+refspec`, `--mirror`, `--delete`, `:branch`, `--prune`; `send-pack` likewise, and with `--all`",
};
pub const PUSH_COMPUTED: Rule = Rule {
    id: "git-push-computed",
    decision: Decision::Ask,
    summary: "a push (`push`, `send-pack`) whose refspec is computed at run time (`\"$(…):main\"`, `--stdin`): it may force or delete, and Forge cannot tell",
};
pub const RESET_HARD: Rule = Rule {
    id: "git-reset-hard",
    decision: Decision::Deny,
    summary: "`git reset --hard` (`--merge`, `--keep`) discards uncommitted work",
};
pub const CLEAN: Rule = Rule {
    id: "git-clean",
    decision: Decision::Deny,
    summary: "`git clean -f` of the repository (also with `clean.requireForce=false`); a subfolder is fine",
};
pub const DISCARD: Rule = Rule {
    id: "git-discard",
    decision: Decision::Deny,
    summary: "discarding uncommitted work in bulk: `checkout -- .`, `restore` of a folder, a glob or pathspec magic (`:(top)`, `'*.rs'`, `\"$PWD\"`), `checkout -f`, `switch --discard-changes`, `read-tree -u --reset`, `checkout-index -a -f`, `rm -r -f .`, `worktree remove --force`, `submodule deinit -f`/`update -f`",
};
pub const STASH_DROP: Rule = Rule {
    id: "git-stash-clear",
    decision: Decision::Deny,
    summary: "`git stash clear` / `git stash drop`: stashed work is lost",
};
pub const DELETE_MAIN: Rule = Rule {
    id: "git-delete-main",
    decision: Decision::Deny,
    summary: "deleting the main/master branch",
};
pub const BRANCH_FORCE: Rule = Rule {
    id: "git-branch-force",
    decision: Decision::Deny,
    summary: "`branch -D`/`-f`/`-M`/`-C`, `checkout -B`, `switch -C`, a `fetch` into local branches with `+`/`--force` or `--prune`: deleting an unmerged branch or moving one by force",
};
pub const HISTORY_REWRITE: Rule = Rule {
    id: "git-history-rewrite",
    decision: Decision::Deny,
    summary: "`filter-branch`, `filter-repo`, `replace`, `reflog expire|delete`, `update-ref` (any write, `--stdin` too), `gc --prune=now` (any date nearer than the default two weeks, or `gc` with `-c gc.*`/`core.*` settings), `fast-import --force`",
};
pub const AMEND: Rule = Rule {
    id: "git-amend",
    decision: Decision::Ask,
    summary: "`commit --amend`, `rebase -i`/`--root`: rewriting local commits (rebasing a local branch onto another is ordinary work)",
};
pub const NO_VERIFY: Rule = Rule {
    id: "no-verify",
    decision: Decision::Deny,
    summary: "skipping the project's hooks: `--no-verify` (and prefixes), `commit -n`, `core.hooksPath`, `commit-tree` (a commit no hook saw, then merged or reset to)",
};
pub const PUSH_ELSEWHERE: Rule = Rule {
    id: "git-push-elsewhere",
    decision: Decision::Ask,
    summary: "sending the project's history where the person did not configure it: `push` to a URL (`https://…`, `git@host:…`), `remote add`/`set-url`, `send-email`",
};
pub const CONFIG_EXEC: Rule = Rule {
    id: "git-config-exec",
    decision: Decision::Deny,
    summary: "git configuration that runs commands or redirects pushes (`alias.*`, `core.fsmonitor`, `core.sshCommand`, `core.pager`, `filter.*`, `remote.*.push`, `remote.*.mirror`, `remote.*.url`, `include.path`, `credential.helper`, …), from `git config`, `-c`, `--config-env`, `GIT_CONFIG_*`",
};

pub(super) fn judge(j: &mut Judge, a: &Analysis, inv: &Invocation) {
    if inv.name() != Some("git") {
        return;
    }
    let args: Vec<Option<&str>> = inv.lit_args().collect();
    let shown = inv.display();
    // Global options: `git -C dir -c k=v --no-pager sub …`.
    let mut i = 0;
    let mut config: Vec<(String, Option<String>)> = Vec::new();
    while i < args.len() {
        match args[i] {
            Some("-c") => {
                if let Some(Some(kv)) = args.get(i + 1) {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, "true"));
                    config.push((k.to_ascii_lowercase(), Some(v.to_string())));
                } else {
                    config.push(("(computed)".into(), None));
                }
                i += 2;
            }
            Some("--config-env") => {
                if let Some(Some(kv)) = args.get(i + 1) {
                    let k = kv.split_once('=').map_or(*kv, |(k, _)| k);
                    config.push((k.to_ascii_lowercase(), None));
                }
                i += 2;
            }
            Some(a) if a.starts_with("--config-env=") => {
                let kv = &a["--config-env=".len()..];
                let k = kv.split_once('=').map_or(kv, |(k, _)| k);
                config.push((k.to_ascii_lowercase(), None));
                i += 1;
            }
            Some("-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path") => i += 2,
            Some(a) if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    config.extend(env_config(inv));
    for (n, v) in &inv.env {
        // Hook managers' own off switches.
        let off = match n.as_str() {
            "HUSKY" | "LEFTHOOK" => v.lit().is_some_and(|x| matches!(x, "0" | "false")),
            "HUSKY_SKIP_HOOKS" | "SKIP_HOOKS" | "OVERCOMMIT_DISABLE" | "GIT_HOOKS_DISABLED" => true,
            "SKIP" | "LEFTHOOK_EXCLUDE" => v.lit().is_none_or(|x| !x.is_empty()),
            _ => false,
        };
        if off {
            j.hit_at(&NO_VERIFY, &inv.origin, format!("`{shown}` runs with `{n}={}`, which switches the project's git hooks off; fix what they report instead", v.display()));
        }
        if matches!(
            n.as_str(),
            "GIT_SSH_COMMAND"
                | "GIT_SSH"
                | "GIT_EXTERNAL_DIFF"
                | "GIT_PROXY_COMMAND"
                | "GIT_ASKPASS"
                | "GIT_EXEC_PATH"
                | "GIT_TEMPLATE_DIR"
                | "GIT_EDITOR"
                | "GIT_SEQUENCE_EDITOR"
                | "GIT_PAGER"
                | "GIT_DIR"
                | "GIT_WORK_TREE"
                | "GIT_INDEX_FILE"
        ) && !plain_program(v)
        {
            j.hit_at(&CONFIG_EXEC, &inv.origin, format!("`{shown}` runs with `{n}={}`, which makes git run another program or use another repository; ask the person", v.display()));
        }
    }
    let sub = args.get(i).copied().flatten();
    for (k, v) in &config {
        judge_config(j, inv, k, v.as_deref(), sub, &shown);
    }
    let Some(sub) = sub else {
        if args.get(i).is_some() {
            j.hit_unknown(
                &super::code::DYNAMIC_PROGRAM,
                &inv.origin,
                format!("`{shown}`: the git command is computed at run time"),
            );
        }
        return;
    };
    let rest: &[Word] = &inv.args[i + 1..];
    let r: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
    let has = |long: &str| {
        r.iter()
            .flatten()
            .take_while(|a| **a != "--")
            .any(|a| is_long(a, long))
    };
    let short = |c: char, value_opts: &str| short_flag(&r, c, value_opts);
    if has("--no-verify")
        || (matches!(sub, "commit" | "merge" | "cherry-pick" | "revert" | "am")
            && sub == "commit"
            && short('n', "mFCctS"))
    {
        j.hit_at(
            &NO_VERIFY,
            &inv.origin,
            format!("`{shown}` skips the project's git hooks; fix what they report instead"),
        );
    }
    match sub {
        "push" | "send-pack" => push(j, inv, sub, rest, &r, &shown),
        "fetch" => fetch(j, inv, rest, &r, &shown),
        "commit-tree" => {
            j.hit_at(&NO_VERIFY, &inv.origin, format!("`{shown}` makes a commit without the project's git hooks; commit with `git commit` and fix what the hooks report"));
        }
        "fast-import" if has("--force") => {
            j.hit_at(
                &HISTORY_REWRITE,
                &inv.origin,
                format!(
                    "`{shown}` overwrites branches with whatever its stream says; ask the person"
                ),
            );
        }
        "reset" if has("--hard") || has("--merge") || has("--keep") => {
            j.hit_at(
                &RESET_HARD,
                &inv.origin,
                format!("`{shown}` discards uncommitted work; use `git stash` or commit first"),
            );
        }
        "clean" => {
            let dry =
                has("--dry-run") || has("--interactive") || short('n', "e") || short('i', "e");
            let no_force_needed = config
                .iter()
                .any(|(k, v)| k == "clean.requireforce" && v.as_deref().is_some_and(is_false))
                || a.invocations.iter().any(|x| {
                    x.name() == Some("git")
                        && x.lit_args()
                            .flatten()
                            .any(|s| s.eq_ignore_ascii_case("clean.requireForce"))
                });
            if !dry && (short('f', "e") || has("--force") || no_force_needed) {
                let paths: Vec<&Word> = pathspecs(rest, &["-e", "--exclude"]);
                let limited =
                    !paths.is_empty() && paths.iter().all(|w| narrow_path(j, inv, w, true));
                if !limited {
                    j.hit_at(&CLEAN, &inv.origin, format!("`{shown}` deletes every untracked file; run `git clean -n` and delete what you mean"));
                }
            }
        }
        "checkout" => checkout(j, inv, rest, &r, &shown),
        "restore" => {
            let staged = has("--staged") || short('S', "sp");
            let worktree = has("--worktree") || short('W', "sp");
            if staged && !worktree {
                return;
            }
            let paths = pathspecs(rest, &["-s", "--source", "--pathspec-from-file"]);
            if paths.is_empty() || paths.iter().any(|w| !narrow_path(j, inv, w, false)) {
                j.hit_at(&DISCARD, &inv.origin, format!("`{shown}` discards uncommitted changes in bulk; restore the single files you changed yourself"));
            }
        }
        "switch" => {
            if has("--discard-changes") || has("--force") || short('f', "cc") {
                j.hit_at(
                    &DISCARD,
                    &inv.origin,
                    format!("`{shown}` discards uncommitted changes; commit or stash first"),
                );
            }
            if short('C', "c") || has("--force-create") {
                j.hit_at(
                    &BRANCH_FORCE,
                    &inv.origin,
                    format!("`{shown}` resets an existing branch by force"),
                );
            }
        }
        // `git worktree remove --force`: the worktree's uncommitted changes go with it.
        "worktree"
            if matches!(r.first(), Some(Some("remove" | "rm")))
                && (has("--force") || short('f', "")) =>
        {
            j.hit_at(
                &DISCARD,
                &inv.origin,
                format!("`{shown}` removes a worktree with its uncommitted changes; remove it without `--force`, or ask the person"),
            );
        }
        "remote"
            if matches!(
                r.iter().flatten().find(|a| !a.starts_with('-')).copied(),
                Some("add" | "set-url")
            ) =>
        {
            j.hit_at(
                &PUSH_ELSEWHERE,
                &inv.origin,
                format!("`{shown}` changes where the project's history is pushed; ask the person"),
            );
        }
        "send-email" => {
            j.hit_at(
                &PUSH_ELSEWHERE,
                &inv.origin,
                format!("`{shown}` mails commits out of the project; ask the person"),
            );
        }
        // `submodule deinit -f` / `update -f`: submodules' uncommitted work goes.
        "submodule"
            if matches!(
                r.iter().flatten().find(|a| !a.starts_with('-')).copied(),
                Some("deinit" | "update")
            ) && (has("--force") || short('f', "")) =>
        {
            j.hit_at(
                &DISCARD,
                &inv.origin,
                format!("`{shown}` discards the submodules' uncommitted changes; run it without `--force`, or ask the person"),
            );
        }
        "stash" => {
            if matches!(r.first(), Some(Some("clear" | "drop"))) {
                j.hit_at(
                    &STASH_DROP,
                    &inv.origin,
                    format!("`{shown}` drops stashed work for good"),
                );
            }
        }
        "branch" => {
            let delete = has("--delete") || short('d', "") || short('D', "");
            let force = has("--force")
                || short('f', "")
                || short('D', "")
                || short('M', "")
                || short('C', "");
            let main = r.iter().any(|a| matches!(a, Some("main" | "master")));
            if delete && main {
                j.hit_at(
                    &DELETE_MAIN,
                    &inv.origin,
                    format!("`{shown}` deletes the main branch"),
                );
            } else if force {
                j.hit_at(&BRANCH_FORCE, &inv.origin, format!("`{shown}` deletes an unmerged branch or moves one by force; use `git branch -d` or ask the person"));
            }
        }
        "rebase" if (has("--interactive") || short('i', "xs") || has("--root")) => {
            j.hit_at(&AMEND, &inv.origin, format!("`{shown}` rewrites local commits interactively; make new commits instead, or ask the person"));
        }
        "filter-branch" | "filter-repo" | "replace" => {
            j.hit_at(
                &HISTORY_REWRITE,
                &inv.origin,
                format!("`{shown}` rewrites history; ask the person"),
            );
        }
        "reflog" if matches!(r.first(), Some(Some("expire" | "delete"))) => {
            j.hit_at(
                &HISTORY_REWRITE,
                &inv.origin,
                format!("`{shown}` destroys the reflog, the way back after a mistake"),
            );
        }
        "gc" if r.iter().flatten().any(|a| {
            a.strip_prefix("--prune=")
                .is_some_and(|d| !prunes_after_the_default(d))
        }) || config
            .iter()
            .any(|(k, _)| k.starts_with("gc.") || k.starts_with("core.")) =>
        {
            j.hit_at(
                &HISTORY_REWRITE,
                &inv.origin,
                format!(
                    "`{shown}` deletes unreachable commits at once, the way back after a mistake"
                ),
            );
        }
        "prune" => {
            j.hit_at(
                &HISTORY_REWRITE,
                &inv.origin,
                format!("`{shown}` deletes unreachable commits, the way back after a mistake"),
            );
        }
        "update-ref" => {
            j.hit_at(&HISTORY_REWRITE, &inv.origin, format!("`{shown}` moves or deletes a ref behind git's back; use git's commands, or ask the person"));
        }
        "read-tree"
            if (has("-u") || r.contains(&Some("-u")))
                && (r.contains(&Some("--reset")) || r.contains(&Some("-m"))) =>
        {
            j.hit_at(
                &DISCARD,
                &inv.origin,
                format!("`{shown}` overwrites the working tree, discarding uncommitted work"),
            );
        }
        "checkout-index"
            if (has("--all") || short('a', "")) && (has("--force") || short('f', "")) =>
        {
            j.hit_at(&DISCARD, &inv.origin, format!("`{shown}` overwrites every file with its indexed version, discarding uncommitted work"));
        }
        "rm" if !has("--cached") && (short('r', "") || r.contains(&Some("-r"))) => {
            let paths = pathspecs(rest, &["--pathspec-from-file"]);
            if paths.iter().any(|w| !narrow_path(j, inv, w, true)) {
                j.hit_at(
                    &DISCARD,
                    &inv.origin,
                    format!(
                        "`{shown}` deletes every tracked file it matches from the working tree"
                    ),
                );
            }
        }
        "commit" if has("--amend") => {
            j.hit_at(
                &AMEND,
                &inv.origin,
                format!("`{shown}` rewrites the last commit; make a new commit instead"),
            );
        }
        "config" => config_command(j, inv, rest, &r, &shown),
        "credential" | "credential-store" | "credential-cache"
            if r.iter().flatten().any(|a| matches!(*a, "fill" | "get")) =>
        {
            j.hit_at(
                &super::fs::SECRETS,
                &inv.origin,
                format!("`{shown}` prints stored credentials; agents may not read them"),
            );
        }
        _ => {}
    }
}

/// A short flag in a cluster, stopping at the first option that takes a value (`-m`), whose
/// value is the rest of the cluster.
/// Whether a push target is a repository named by address rather than a configured remote:
/// `scheme://…`, or scp-like `user@host:path` / `host:path` (a remote's name has no `:`).
fn is_url(a: &str) -> bool {
    a.contains("://")
        || a.split_once(':').is_some_and(|(host, path)| {
            !host.is_empty() && !host.contains('/') && !path.starts_with(':') && !a.starts_with('+')
        })
}

fn short_flag(r: &[Option<&str>], c: char, value_opts: &str) -> bool {
    for a in r.iter().flatten() {
        if *a == "--" {
            return false;
        }
        if !a.starts_with('-') || a.starts_with("--") {
            continue;
        }
        for ch in a[1..].chars() {
            if ch == c {
                return true;
            }
            if value_opts.contains(ch) {
                break;
            }
        }
    }
    false
}

/// A value that names a program on PATH with plain arguments (`cat`, `true`, `less -R`, `ssh
/// -i key`), not a path to a script or shell code.
fn plain_program(v: &crate::guard::shell::Arg) -> bool {
    let Some(s) = v.lit() else { return false };
    let first = s.split_whitespace().next().unwrap_or("");
    !first.contains('/')
        && !s.contains(['|', ';', '&', '$', '`', '>', '<', '('])
        && !matches!(
            first,
            "sh" | "bash"
                | "zsh"
                | "dash"
                | "python"
                | "python3"
                | "perl"
                | "ruby"
                | "node"
                | "eval"
                | "env"
        )
}

fn is_false(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "false" | "no" | "off" | "0" | ""
    )
}

/// Configuration given through the environment.
fn env_config(inv: &Invocation) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (n, v) in &inv.env {
        if let Some(idx) = n.strip_prefix("GIT_CONFIG_KEY_") {
            let value = inv
                .env_var(&format!("GIT_CONFIG_VALUE_{idx}"))
                .and_then(|a| a.lit())
                .map(str::to_string);
            match v.lit() {
                Some(k) => out.push((k.to_ascii_lowercase(), value)),
                None => out.push(("(computed)".into(), None)),
            }
        }
        if n == "GIT_CONFIG_PARAMETERS" {
            match v.lit() {
                Some(p) => {
                    for part in p
                        .split('\'')
                        .filter(|s| !s.trim().is_empty() && !s.contains('=') || s.contains('.'))
                    {
                        let k = part.trim().trim_matches('=');
                        if k.contains('.') {
                            out.push((k.to_ascii_lowercase(), None));
                        }
                    }
                }
                None => out.push(("(computed)".into(), None)),
            }
        }
        if n == "GIT_CONFIG_GLOBAL" || n == "GIT_CONFIG_SYSTEM" || n == "GIT_CONFIG" {
            out.push(("include.path".into(), v.lit().map(str::to_string)));
        }
    }
    out
}

/// Keys whose value git runs as a command, or that change what a push or a hook does.
fn exec_key(k: &str) -> bool {
    let parts: Vec<&str> = k.split('.').collect();
    let (first, last) = (parts[0], *parts.last().unwrap_or(&""));
    match first {
        "alias" | "filter" | "include" | "includeif" => true,
        "core" => matches!(
            last,
            "fsmonitor"
                | "sshcommand"
                | "pager"
                | "editor"
                | "askpass"
                | "gitproxy"
                | "worktree"
                | "hookspath"
                | "alternaterefscommand"
        ),
        "sequence" => last == "editor",
        "diff" => matches!(last, "external" | "textconv" | "command"),
        "merge" | "mergetool" | "difftool" => matches!(last, "driver" | "cmd" | "path"),
        "credential" => last == "helper",
        "gpg" => last == "program",
        "remote" => matches!(
            last,
            "push" | "mirror" | "receivepack" | "uploadpack" | "proxy" | "vcs" | "url" | "pushurl"
        ),
        "uploadpack" => last == "packobjectshook",
        "protocol" => last == "allow",
        "pager" | "man" | "web" | "browser" | "ssh" => true,
        "url" => last == "insteadof" || last == "pushinsteadof",
        "(computed)" => true,
        _ => false,
    }
}

fn judge_config(
    j: &mut Judge,
    inv: &Invocation,
    k: &str,
    v: Option<&str>,
    sub: Option<&str>,
    shown: &str,
) {
    if k == "core.hookspath" {
        j.hit_at(&NO_VERIFY, &inv.origin, format!("`{shown}` switches the project's git hooks to other ones (`core.hooksPath`); fix what the hooks report instead"));
    } else if k == "clean.requireforce" {
        if sub == Some("clean") || v.is_none_or(is_false) {
            j.hit_at(&CLEAN, &inv.origin, format!("`{shown}` turns off `clean.requireForce`, so `git clean` deletes untracked files without `-f`"));
        }
    } else if k.starts_with("alias.") {
        j.hit_at(&CONFIG_EXEC, &inv.origin, format!("`{shown}` defines a git alias on the spot, which hides the command that runs; write the git command out"));
    } else if exec_key(k) {
        j.hit_at(&CONFIG_EXEC, &inv.origin, format!("`{shown}` sets `{k}`, which makes git run a command or push differently; ask the person"));
    }
}

/// `git config …`: writes outside the repository, and keys that run code.
fn config_command(j: &mut Judge, inv: &Invocation, rest: &[Word], r: &[Option<&str>], shown: &str) {
    let reading = r.iter().flatten().any(|a| {
        matches!(
            *a,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--list"
                | "-l"
                | "--get-urlmatch"
                | "--show-origin"
                | "--show-scope"
                | "get"
                | "list"
        ) || a.starts_with("--unset")
            || *a == "unset"
            || *a == "--remove-section"
    });
    if reading {
        return;
    }
    let ops: Vec<&str> = operands(rest)
        .iter()
        .filter_map(|w| w.arg.lit())
        .filter(|a| !matches!(*a, "set"))
        .collect();
    let file = super::option_values(rest, &["-f"], &["--file"]);
    if ops.len() < 2
        && !r
            .iter()
            .flatten()
            .any(|a| matches!(*a, "--add" | "--replace-all"))
    {
        return; // `git config key`: a read
    }
    if r.iter()
        .flatten()
        .any(|a| matches!(*a, "--global" | "--system"))
    {
        j.hit_at(
            &super::fs::WRITE_OUTSIDE,
            &inv.origin,
            format!("`{shown}` changes git settings outside the repository; ask the person"),
        );
    }
    for f in &file {
        j.write(
            &super::Target {
                word: f,
                cwd: &inv.cwd,
                origin: &inv.origin,
            },
            "writes git settings to",
            false,
        );
    }
    if let [key, value, ..] = ops.as_slice() {
        let k = key.to_ascii_lowercase();
        judge_config(j, inv, &k, Some(value), None, shown);
    }
}

/// Whether `gc --prune=DATE` keeps unreachable objects at least as long as git's default (two
/// weeks): `never`, or `N.unit.ago` of two weeks or more. Anything else (`now`, `0`,
/// `1.second.ago`, a date) may destroy the history only the reflog still held.
fn prunes_after_the_default(date: &str) -> bool {
    let d = date.to_ascii_lowercase();
    if d == "never" || d == "false" {
        return true;
    }
    let parts: Vec<&str> = d.split(['.', ' ']).filter(|p| !p.is_empty()).collect();
    let [n, unit, "ago"] = parts.as_slice() else {
        return false;
    };
    let Ok(n) = n.parse::<u64>() else {
        return false;
    };
    let day = 86_400;
    let per = match unit.trim_end_matches('s') {
        "week" => 7 * day,
        "month" => 30 * day,
        "year" => 365 * day,
        "day" => day,
        _ => return false,
    };
    n.saturating_mul(per) >= 14 * day
}

/// `git fetch` writes the local refs on the right of its refspecs' `:` (a bare name is a
/// branch): forced (`+src:dst`, `--force`) it moves a branch anywhere, and `--prune` deletes
/// every local branch the source lacks.
fn fetch(j: &mut Judge, inv: &Invocation, rest: &[Word], r: &[Option<&str>], shown: &str) {
    let has = |long: &str| {
        r.iter()
            .flatten()
            .take_while(|a| **a != "--")
            .any(|a| is_long(a, long))
    };
    let force = has("--force") || short_flag(r, 'f', "jo");
    let prune = has("--prune") || short_flag(r, 'p', "jo");
    let specs = pathspecs(
        rest,
        &[
            "-j",
            "--jobs",
            "-o",
            "--server-option",
            "--depth",
            "--deepen",
            "--shallow-since",
            "--shallow-exclude",
            "--upload-pack",
            "--negotiation-tip",
            "--refmap",
            "--filter",
            "--recurse-submodules-default",
        ],
    );
    for w in specs.iter().skip(1) {
        let Some(spec) = w.arg.lit() else { continue };
        let Some((src, dst)) = spec.split_once(':') else {
            continue;
        };
        let dst = dst.trim_start_matches('+');
        let branch =
            dst.starts_with("refs/heads/") || (!dst.is_empty() && !dst.starts_with("refs/"));
        let forced = src.starts_with('+') || force;
        if branch && (forced || prune) {
            j.hit_at(&BRANCH_FORCE, &inv.origin, format!("`{shown}` overwrites or deletes local branches (`{spec}`); fetch into `refs/remotes/…`, or ask the person"));
            return;
        }
    }
}

fn push(
    j: &mut Judge,
    inv: &Invocation,
    sub: &str,
    rest: &[Word],
    r: &[Option<&str>],
    shown: &str,
) {
    let has = |long: &str| {
        r.iter()
            .flatten()
            .take_while(|a| **a != "--")
            .any(|a| is_long(a, long))
    };
    let words = pathspecs(
        rest,
        &["-o", "--push-option", "--repo", "--receive-pack", "--exec"],
    );
    let refspecs: Vec<&str> = words.iter().filter_map(|w| w.arg.lit()).collect();
    // A refspec computed at run time may be `+main` or `:main`: written as `":$(…)"`, it
    // deletes; otherwise Forge cannot tell.
    let computed: Vec<String> = words
        .iter()
        .skip(1)
        .filter_map(|w| match &w.arg {
            Arg::Dyn { raw, .. } => Some(raw.trim_start_matches(['"', '\'']).to_string()),
            Arg::Lit(_) => None,
        })
        .collect();
    let stdin = sub == "send-pack" && has("--stdin");
    let wildcard = refspecs.iter().any(|s| s.contains('*'));
    let force = has("--force")
        || has("--force-with-lease")
        || has("--force-if-includes")
        || short_flag(r, 'f', "o")
        || has("--mirror")
        || (sub == "send-pack" && has("--all"))
        || computed
            .iter()
            .any(|s| s.starts_with('+') || s.starts_with(':'))
        || has("--delete")
        || short_flag(r, 'd', "o")
        || (has("--prune") && (wildcard || has("--all") || has("--mirror") || refspecs.len() <= 1))
        || refspecs
            .iter()
            .skip(1)
            .any(|s| s.starts_with('+') || s.starts_with(':'));
    // The first operand is the remote, unless it is itself a refspec.
    let force = force
        || refspecs
            .first()
            .is_some_and(|s| s.starts_with('+') || (s.starts_with(':') && s.len() > 1));
    if force {
        j.hit_at(&FORCE_PUSH, &inv.origin, format!("`{shown}` rewrites or deletes remote history; push without force, or ask the person"));
    } else if !computed.is_empty() || stdin {
        j.hit_at(&PUSH_COMPUTED, &inv.origin, format!("`{shown}` pushes a refspec computed at run time, which may force or delete a branch; write the refspec out"));
    }
    let repo = r
        .iter()
        .enumerate()
        .find_map(|(k, a)| match a {
            Some("--repo") => Some(r.get(k + 1).copied().flatten().unwrap_or("(computed)")),
            Some(a) => a.strip_prefix("--repo="),
            None => None,
        })
        .or_else(|| refspecs.first().copied());
    // The repository is the first operand: computed (`git push "$U" main`), it may be any.
    let computed = rest
        .iter()
        .find(|w| w.arg.lit().is_none_or(|a| !a.starts_with('-')))
        .is_some_and(|w| w.arg.lit().is_none());
    if computed || repo.is_some_and(|r| r == "(computed)" || is_url(r)) {
        j.hit_at(&PUSH_ELSEWHERE, &inv.origin, format!("`{shown}` sends the project's history to a repository that is not one of its remotes; push to a configured remote, or ask the person"));
    }
}

fn checkout(j: &mut Judge, inv: &Invocation, rest: &[Word], r: &[Option<&str>], shown: &str) {
    let has = |long: &str| {
        r.iter()
            .flatten()
            .take_while(|a| **a != "--")
            .any(|a| is_long(a, long))
    };
    if has("--force") || short_flag(r, 'f', "bBt") {
        j.hit_at(
            &DISCARD,
            &inv.origin,
            format!("`{shown}` discards uncommitted changes; commit or stash first"),
        );
    }
    if short_flag(r, 'B', "") {
        j.hit_at(
            &BRANCH_FORCE,
            &inv.origin,
            format!("`{shown}` resets an existing branch by force"),
        );
    }
    if short_flag(r, 'b', "")
        || short_flag(r, 'B', "")
        || has("--orphan")
        || short_flag(r, 'p', "")
        || has("--patch")
    {
        return;
    }
    // Paths: after `--`, or operands that name files (the first may be a tree-ish).
    let dashdash = r.iter().position(|a| *a == Some("--"));
    let paths: Vec<&Word> = match dashdash {
        Some(d) => rest[d + 1..].iter().collect(),
        None => {
            let ops = pathspecs(rest, &["--conflict", "--pathspec-from-file"]);
            let Some(first) = ops.first() else { return };
            // `git checkout main` switches branch; `git checkout .` or a file restores.
            let first_is_path = first.arg.lit().is_some_and(|s| {
                s == "."
                    || s.starts_with(':')
                    || first.glob()
                    || inv
                        .cwd
                        .one()
                        .is_some_and(|c| crate::guard::paths::exists(&c.join(s)))
            });
            if first_is_path {
                ops
            } else {
                ops[1..].to_vec()
            }
        }
    };
    if paths.iter().any(|w| !narrow_path(j, inv, w, false)) {
        j.hit_at(&DISCARD, &inv.origin, format!("`{shown}` discards uncommitted changes in bulk; restore the single files you changed yourself"));
    }
}

/// Operands, skipping the values of the given options.
fn pathspecs<'w>(rest: &'w [Word], value_opts: &[&str]) -> Vec<&'w Word> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut after = false;
    while i < rest.len() {
        match rest[i].arg.lit() {
            Some("--") if !after => after = true,
            Some(s) if !after && value_opts.contains(&s) => i += 1,
            Some(s) if !after && s.starts_with('-') && s.len() > 1 => {}
            _ => out.push(&rest[i]),
        }
        i += 1;
    }
    out
}

/// Whether a pathspec names one file (or, `dirs_ok`, a subfolder) rather than a bulk: no
/// pathspec magic (`:(top)`, `:/`, `:!x`), no glob, not the repository or an ancestor, not a
/// folder unless allowed, not computed at run time.
fn narrow_path(j: &Judge, inv: &Invocation, w: &Word, dirs_ok: bool) -> bool {
    let Some(s) = w.arg.lit() else { return false };
    if s.starts_with(':') || w.glob() || s.contains(['*', '?', '[']) || s.is_empty() {
        return false;
    }
    let paths = j.resolve_all(s, &inv.cwd, &inv.origin);
    if paths.is_empty() {
        return false;
    }
    paths.iter().all(|p| match j.paths.place(p) {
        Place::RepoRoot | Place::RepoAncestor => false,
        Place::InRepo(_) => dirs_ok || !crate::guard::paths::is_dir(p),
        _ => true,
    })
}

/// The paths a git command changes in the working tree (pathspecs of `rm`, `mv`, `checkout`,
/// `restore`, the folder of `clone`, `init`, `worktree add`), for the write rules: `git rm
/// .forge/…` is as much an edit of Forge's state as `rm` is.
pub(super) fn written(inv: &Invocation) -> Vec<Word> {
    let args = &inv.args;
    let mut i = 0;
    let mut dir: Option<String> = None;
    while i < args.len() {
        match args[i].arg.lit() {
            Some("-C") => {
                dir = args
                    .get(i + 1)
                    .and_then(|w| w.arg.lit())
                    .map(str::to_string);
                i += 2;
            }
            Some("-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env") => i += 2,
            Some(a) if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(|w| w.arg.lit()) else {
        return vec![];
    };
    let ops = operands(&args[i + 1..]);
    let prefix = |w: &Word| -> Word {
        match (&dir, &w.arg) {
            (Some(d), Arg::Lit(s)) if !Path::new(s).is_absolute() => Word::lit(format!("{d}/{s}")),
            _ => w.clone(),
        }
    };
    let picked: Vec<&Word> = match sub {
        "rm" | "mv" | "checkout" | "restore" | "init" => ops,
        // `git stash push -- .forge`: those files go back to HEAD.
        "stash"
            if ops
                .first()
                .and_then(|w| w.arg.lit())
                .is_some_and(|s| matches!(s, "push" | "save")) =>
        {
            ops[1..].to_vec()
        }
        "clone" => ops.get(1).copied().into_iter().collect(),
        "worktree" if ops.first().and_then(|w| w.arg.lit()) == Some("add") => {
            ops.get(1).copied().into_iter().collect()
        }
        _ => vec![],
    };
    // `git checkout main` names a branch, not a file: only paths that exist, or come after
    // `--`, are written.
    picked
        .into_iter()
        .filter(|w| {
            !matches!(sub, "checkout" | "restore")
                || w.arg.lit().is_some_and(|s| {
                    s.starts_with(".forge")
                        || s.starts_with(".git")
                        || s.starts_with(".claude")
                        || s.contains('/')
                        || s.contains('.')
                })
        })
        .map(prefix)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_stop_at_options_that_take_values() {
        assert!(short_flag(&[Some("-anm"), Some("x")], 'n', "mFCctS"));
        assert!(!short_flag(&[Some("-mnice")], 'n', "mFCctS"));
        assert!(short_flag(&[Some("-uf")], 'f', "o"));
    }

    #[test]
    fn config_keys_that_run_code() {
        for k in [
            "alias.st",
            "core.fsmonitor",
            "core.sshcommand",
            "filter.x.clean",
            "remote.origin.push",
            "remote.origin.mirror",
            "include.path",
            "credential.helper",
            "diff.x.textconv",
        ] {
            assert!(exec_key(k), "{k}");
        }
        for k in [
            "user.name",
            "user.email",
            "core.autocrlf",
            "pull.rebase",
            "init.defaultbranch",
        ] {
            assert!(!exec_key(k), "{k}");
        }
    }
}
