//! Files: what a command deletes, writes and reads, placed against the repository, HOME and
//! the temp folder — recursive and mass deletes, writes outside the repository, secrets, disks
//! and permissions. Forge's and the agents' own files are placed here too; their rules live in
//! `forge.rs`.

use std::path::{Path, PathBuf};

use super::{
    Judge, Rule, Target, could_reach, glob_dir, has_flag, is_long, matches_everything, operands,
    option_values,
};
use crate::guard::Decision;
use crate::guard::paths::Place;
use crate::guard::shell::{Arg, Cwd, Invocation, Names, Word};

pub const RM_REPO: Rule = Rule {
    id: "rm-repo",
    decision: Decision::Deny,
    summary: "recursive or mass delete (or move away) of the repository, an ancestor of it, `.git` or `.forge` — `rm -rf .`, `rm -rf *`, `find . -delete`, `git ls-files | xargs rm`, `rsync --delete` into it, archivers that remove what they pack (`tar --remove-files`, `zip -m`, `7z -sdel`, `gzip -r`, `zstd -r --rm`)",
};
pub const RM_OUTSIDE: Rule = Rule {
    id: "rm-outside-repo",
    decision: Decision::Deny,
    summary: "recursive delete outside the repository (the temp folder is allowed; HOME never counts as temp)",
};
pub const RM_UNKNOWN: Rule = Rule {
    id: "rm-unknown-target",
    decision: Decision::Deny,
    summary: "recursive delete of a path computed at run time, or in a folder that cannot be known",
};
pub const FIND_DELETE: Rule = Rule {
    id: "find-delete",
    decision: Decision::Deny,
    summary: "`find … -delete` of everything under the repository, or of anything outside it; `-type f`, and a `-name`/`-path` under `!`/`-not`, narrow nothing, and `find *` is the folder itself",
};
pub const WRITE_OUTSIDE: Rule = Rule {
    id: "write-outside-repo",
    decision: Decision::Deny,
    summary: "writing outside the repository (dotfiles, `/etc`, other projects) — through redirects, `dd of=`, `--target-directory=`, `sort -o`, `tar -C`, links; the temp folder is allowed",
};
pub const WRITE_UNKNOWN: Rule = Rule {
    id: "write-unknown-target",
    decision: Decision::Ask,
    summary: "writing to a path computed at run time, files named by input (`xargs`), a hard link whose other names Forge cannot see",
};
pub const SECRETS: Rule = Rule {
    id: "secrets",
    decision: Decision::Deny,
    summary: "reading or copying secrets: `.env` and direnv's `.envrc` (not `.env.example`), in any case, private keys (not `*.pub` or certificates), `~/.ssh`, cloud and agent credentials, `~/.pgpass`, process environments, shell histories",
};
pub const SECRETS_WRITE: Rule = Rule {
    id: "secrets-write",
    decision: Decision::Ask,
    summary: "overwriting or deleting an existing secrets file",
};
pub const DISK_WRECK: Rule = Rule {
    id: "disk-wreck",
    decision: Decision::Deny,
    summary: "`dd` to a device, `mkfs`, partitioning, writes to `/dev/…`",
};
pub const PERMISSIONS_WRECK: Rule = Rule {
    id: "permissions-wreck",
    decision: Decision::Deny,
    summary: "recursive `chmod`/`chown`/`chgrp`/`setfacl`/`chattr` outside the repository or of it as a whole",
};

/// Programs that delete what they are given.
const DELETERS: [&str; 6] = ["rm", "rmdir", "unlink", "shred", "rimraf", "trash-put"];

pub(super) fn judge(j: &mut Judge, inv: &Invocation) {
    let Some(name) = inv.name() else { return };
    let shown = inv.display();
    match name {
        n if DELETERS.contains(&n) => rm(j, inv, n),
        "find" => find(j, inv),
        "tar" | "bsdtar" | "gtar" | "zip" | "7z" | "7za" | "7zr" | "gzip" | "bzip2" | "xz"
        | "zstd" | "lzip" | "lz4" => {
            for w in archived_and_removed(inv, name) {
                delete_target(j, inv, &w, &shown);
            }
        }
        "mv" => mv(j, inv),
        "rsync" => rsync(j, inv),
        "mkfs" | "fdisk" | "sfdisk" | "cfdisk" | "parted" | "wipefs" | "mkswap" | "sgdisk"
        | "blkdiscard" | "mke2fs" => {
            j.hit(
                &DISK_WRECK,
                format!("`{shown}` rewrites a disk or partition table"),
            );
        }
        n if n.starts_with("mkfs.") => {
            j.hit(&DISK_WRECK, format!("`{shown}` formats a file system"));
        }
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" | "chcon" => perms(j, inv, name),
        _ => {}
    }
    // Files named at run time by `xargs` or `find -exec … {} +`.
    names(j, inv, name);
    super::targets::file_operands(j, inv, name);
    super::targets::links(j, inv, name);
}

/// Recursive deletes, judged by where they land; plain deletes are writes (judged below).
fn rm(j: &mut Judge, inv: &Invocation, name: &str) {
    let recursive = name == "rimraf"
        || (name == "rm" && has_flag(&inv.args, 'r', &["--recursive"]))
        || has_flag(&inv.args, 'R', &[]);
    if !recursive {
        return;
    }
    let shown = inv.display();
    for w in operands(&inv.args) {
        delete_target(j, inv, w, &shown);
    }
}

/// What an archiver or compressor deletes once it has packed it, as `rm -r` would: the sources
/// of `tar --remove-files`, `zip -m`/`--move`, `7z -sdel`, and of a recursive `gzip`, `bzip2`,
/// `xz` (which replace each file) or `zstd --rm`. Empty when it keeps its sources.
fn archived_and_removed(inv: &Invocation, name: &str) -> Vec<Word> {
    let args = &inv.args;
    let lits: Vec<&str> = inv.lit_args().flatten().collect();
    let long = |l: &str| {
        lits.iter()
            .take_while(|a| **a != "--")
            .any(|a| is_long(a, l))
    };
    match name {
        "tar" | "bsdtar" | "gtar" if long("--remove-files") => tar_sources(args),
        "zip" if has_flag(args, 'm', &["--move"]) => {
            // `zip [opts] ARCHIVE SOURCES…`; `-x`/`-i` lists are patterns, not sources.
            const VALUES: [&str; 9] = ["-b", "-t", "-tt", "-n", "-P", "-Z", "-O", "-s", "-ds"];
            let mut ops: Vec<Word> = Vec::new();
            let mut i = 0;
            while i < args.len() {
                match args[i].arg.lit() {
                    Some(s) if VALUES.contains(&s) => i += 1,
                    Some("-x" | "-i" | "--exclude" | "--include") => break,
                    Some(s) if s.starts_with('-') && s.len() > 1 => {}
                    _ => ops.push(args[i].clone()),
                }
                i += 1;
            }
            ops.into_iter().skip(1).collect()
        }
        "7z" | "7za" | "7zr" if lits.iter().any(|a| a.eq_ignore_ascii_case("-sdel")) => {
            // `7z a ARCHIVE SOURCES…`; with no sources it packs the whole folder.
            let ops: Vec<Word> = operands(args).into_iter().skip(2).cloned().collect();
            if ops.is_empty() {
                vec![Word::lit(".")]
            } else {
                ops
            }
        }
        "gzip" | "bzip2" | "xz" | "zstd" | "lzip" | "lz4" => {
            let recursive = has_flag(args, 'r', &["--recursive"]);
            let keeps = has_flag(args, 'k', &["--keep"])
                || has_flag(args, 'c', &["--stdout", "--to-stdout"])
                || has_flag(args, 'd', &["--decompress", "--uncompress"])
                || has_flag(args, 't', &["--test"])
                || has_flag(args, 'l', &["--list"]);
            let removes = match name {
                "zstd" | "lz4" => long("--rm"),
                _ => !keeps,
            };
            if recursive && removes {
                operands(args).into_iter().cloned().collect()
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

/// The files a `tar` packs: its operands, less the values of its options (the archive of
/// `-f`, `cf ARCHIVE` in the old style), taken in the folder of `-C`.
fn tar_sources(args: &[Word]) -> Vec<Word> {
    // Short options that take a value, and long ones given it as the next word.
    const SHORT_VALUES: &str = "fCTXbHKNgVLI";
    const LONG_VALUES: [&str; 8] = [
        "--file",
        "--directory",
        "--files-from",
        "--exclude-from",
        "--exclude",
        "--transform",
        "--format",
        "--owner",
    ];
    let mut out = Vec::new();
    let mut dir: Option<String> = None;
    let mut i = 0;
    // The old style: `tar cf ARCHIVE …`, keys without a dash, their values after them.
    if let Some(first) = args.first().and_then(|w| w.arg.lit())
        && !first.starts_with('-')
        && first.chars().all(|c| c.is_ascii_alphabetic())
    {
        let mut v = 1;
        for c in first.chars().filter(|c| SHORT_VALUES.contains(*c)) {
            if c == 'C' {
                dir = args.get(v).and_then(|w| w.arg.lit()).map(str::to_string);
            }
            v += 1;
        }
        i = v;
    }
    let mut after = false;
    while i < args.len() {
        let w = &args[i];
        match w.arg.lit() {
            Some("--") if !after => after = true,
            Some(s) if !after && s.starts_with("--") => {
                let name = s.split('=').next().unwrap_or(s);
                let takes = LONG_VALUES.iter().any(|l| is_long(name, l));
                if is_long(name, "--directory") {
                    dir = match s.split_once('=') {
                        Some((_, v)) => Some(v.to_string()),
                        None => args
                            .get(i + 1)
                            .and_then(|w| w.arg.lit())
                            .map(str::to_string),
                    };
                }
                if takes && !s.contains('=') {
                    i += 1;
                }
            }
            Some(s) if !after && s.starts_with('-') && s.len() > 1 => {
                for (k, c) in s[1..].char_indices() {
                    if SHORT_VALUES.contains(c) {
                        let rest = &s[1 + k + c.len_utf8()..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i).and_then(|w| w.arg.lit()).map(str::to_string)
                        } else {
                            Some(rest.to_string())
                        };
                        if c == 'C' {
                            dir = value;
                        }
                        break;
                    }
                }
            }
            _ => out.push(match (&dir, &w.arg) {
                (Some(d), Arg::Lit(s)) if !s.starts_with('/') => {
                    Word::lit(format!("{}/{s}", d.trim_end_matches('/')))
                }
                _ => w.clone(),
            }),
        }
        i += 1;
    }
    out
}

/// One path a recursive delete removes.
fn delete_target(j: &mut Judge, inv: &Invocation, w: &Word, shown: &str) {
    let raw = match &w.arg {
        Arg::Lit(s) => s.as_str(),
        Arg::Dyn { .. } => {
            j.hit_unknown(
                &RM_UNKNOWN,
                &inv.origin,
                format!("`{shown}` deletes a path computed at run time; write the path out"),
            );
            return;
        }
    };
    let targets: Vec<(PathBuf, bool)> = if let Some(pattern) = &w.pattern {
        glob_targets(j, pattern, raw, &inv.cwd)
    } else {
        j.resolve_all(raw, &inv.cwd, &inv.origin)
            .into_iter()
            .map(|p| (p, false))
            .collect()
    };
    if targets.is_empty() {
        j.hit_unknown(
            &RM_UNKNOWN,
            &inv.origin,
            format!("`{shown}` deletes `{raw}` after a `cd` to a folder computed at run time"),
        );
        return;
    }
    for (path, contents) in targets {
        delete_place(j, inv, &path, contents, shown);
    }
}

/// What a glob deletes: every match on disk, and the folder's whole contents when the glob
/// matches everything in it; plus protected paths the pattern could reach even when they do
/// not exist yet (`.forg?/`).
fn glob_targets(j: &Judge, pattern: &str, raw: &str, cwd: &Cwd) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for c in cwd_or_root(raw, cwd) {
        if matches_everything(pattern) {
            out.push((j.paths.resolve(glob_dir(raw), &c), true));
        }
        for m in crate::guard::shell::shell_glob_matches(pattern, &c) {
            out.push((j.paths.resolve(&m.display().to_string(), &c), false));
        }
        let abs = if pattern.starts_with('/') {
            pattern.to_string()
        } else {
            format!("{}/{pattern}", c.display())
        };
        for p in protected(j) {
            if could_reach(&abs, &p) && !out.iter().any(|(x, _)| *x == p) {
                out.push((p, false));
            }
        }
        // A narrowing pattern still deletes entries of its folder: judged as one of them.
        if out.is_empty() {
            out.push((j.paths.resolve(&format!("{}/_", glob_dir(raw)), &c), false));
        }
    }
    out
}

/// The folders a path may be relative to: its cwd candidates, or `/` for an absolute one.
pub(super) fn cwd_or_root(raw: &str, cwd: &Cwd) -> Vec<PathBuf> {
    if raw.starts_with('/') {
        vec![PathBuf::from("/")]
    } else {
        cwd.paths().to_vec()
    }
}

/// Paths whose loss matters most, for patterns that do not match anything on disk yet.
pub(super) fn protected(j: &Judge) -> Vec<PathBuf> {
    let r = &j.paths.root;
    let h = &j.paths.home;
    vec![
        r.clone(),
        r.join(".git"),
        r.join(".forge"),
        r.join(".tmp/.forge"),
        r.join(".claude"),
        r.join(".codex"),
        r.join(".gemini"),
        h.clone(),
        h.join(".ssh"),
        h.join(".bashrc"),
        h.join(".profile"),
    ]
}

fn delete_place(j: &mut Judge, inv: &Invocation, path: &Path, contents: bool, shown: &str) {
    let what = if contents { "the contents of " } else { "" };
    match j.paths.place(path) {
        Place::RepoRoot => j.hit_at(
            &RM_REPO,
            &inv.origin,
            format!(
                "`{shown}` deletes {what}the repository {}; delete only the files you mean",
                path.display()
            ),
        ),
        Place::RepoAncestor => j.hit_at(
            &RM_REPO,
            &inv.origin,
            format!(
                "`{shown}` deletes {what}{}, which contains the repository",
                path.display()
            ),
        ),
        Place::Git | Place::ForgeState | Place::ForgeRunState => j.hit_at(
            &RM_REPO,
            &inv.origin,
            format!(
                "`{shown}` deletes {}, the repository's history or Forge's state",
                path.display()
            ),
        ),
        Place::AgentConfig => j.hit_at(
            &super::forge::AGENT_CONFIG,
            &inv.origin,
            format!(
                "`{shown}` deletes {}, the agent settings where Forge's hooks are wired",
                path.display()
            ),
        ),
        Place::Outside | Place::Device | Place::Network => j.hit_at(
            &RM_OUTSIDE,
            &inv.origin,
            format!(
                "`{shown}` deletes {what}{}, outside the repository {}; delete only inside it",
                path.display(),
                j.paths.root.display()
            ),
        ),
        Place::InRepo(_) | Place::Temp | Place::NullDevice => {}
    }
}

fn find(j: &mut Judge, inv: &Invocation) {
    let args: Vec<Option<&str>> = inv.lit_args().collect();
    if !args.contains(&Some("-delete")) {
        return;
    }
    let roots: Vec<&Word> = inv
        .args
        .iter()
        .take_while(|a| {
            a.arg
                .lit()
                .is_none_or(|s| !s.starts_with('-') && s != "(" && s != "!")
        })
        .collect();
    let filtered = crate::guard::shell::find_filtered(&inv.args);
    let dot = Word::lit(".");
    let roots: Vec<&Word> = if roots.is_empty() { vec![&dot] } else { roots };
    let shown = inv.display();
    for r in roots {
        let Some(raw) = r.arg.lit() else {
            j.hit_unknown(
                &FIND_DELETE,
                &inv.origin,
                format!("`{shown}` deletes under a path computed at run time"),
            );
            continue;
        };
        // `find * -delete` searches every entry of the folder: the folder itself.
        let raw = match &r.pattern {
            Some(p) if matches_everything(p) => glob_dir(raw),
            _ => raw,
        };
        let paths = j.resolve_all(raw, &inv.cwd, &inv.origin);
        if paths.is_empty() {
            j.hit_unknown(
                &FIND_DELETE,
                &inv.origin,
                format!("`{shown}` deletes under `{raw}` in a folder that cannot be known"),
            );
        }
        for path in paths {
            let bad = match j.paths.place(&path) {
                Place::RepoRoot => !filtered,
                Place::RepoAncestor
                | Place::Outside
                | Place::Git
                | Place::ForgeState
                | Place::ForgeRunState
                | Place::AgentConfig
                | Place::Device
                | Place::Network => true,
                _ => false,
            };
            if bad {
                j.hit_at(&FIND_DELETE, &inv.origin, format!("`{shown}` deletes files under {}; limit it to a folder inside the repository and a `-name` pattern", path.display()));
            }
        }
    }
}

/// `mv` deletes its sources from where they were: moving the repository (or `.git`) away is
/// deleting it.
fn mv(j: &mut Judge, inv: &Invocation) {
    let ops = operands(&inv.args);
    let has_t = !option_values(&inv.args, &["-t"], &["--target-directory"]).is_empty();
    let sources: Vec<&Word> = if has_t {
        ops
    } else {
        ops.iter()
            .take(ops.len().saturating_sub(1))
            .copied()
            .collect()
    };
    let shown = inv.display();
    for s in sources {
        let Some(raw) = s.arg.lit() else { continue };
        for p in j.resolve_all(raw, &inv.cwd, &inv.origin) {
            if matches!(j.paths.place(&p), Place::RepoRoot | Place::RepoAncestor) {
                j.hit_at(
                    &RM_REPO,
                    &inv.origin,
                    format!(
                        "`{shown}` moves {} away, which holds the repository",
                        p.display()
                    ),
                );
            }
        }
    }
}

/// `rsync --delete` (and `--del`, `--delete-after`, …) empties the destination of everything
/// the source lacks; `--remove-source-files` deletes the sources.
fn rsync(j: &mut Judge, inv: &Invocation) {
    let lits: Vec<&str> = inv.lit_args().flatten().collect();
    let ops: Vec<&Word> = operands(&inv.args)
        .into_iter()
        .filter(|w| w.arg.lit().is_none_or(|s| !is_remote(s)))
        .collect();
    let shown = inv.display();
    if lits.iter().any(|a| a.starts_with("--del"))
        && let Some(dest) = operands(&inv.args).last()
        && dest.arg.lit().is_none_or(|s| !is_remote(s))
    {
        delete_target(j, inv, dest, &shown);
    }
    if lits.iter().any(|a| is_long(a, "--remove-source-files")) {
        let all = operands(&inv.args);
        for s in all.iter().take(all.len().saturating_sub(1)) {
            if ops.contains(s) {
                delete_target(j, inv, s, &shown);
            }
        }
    }
}

/// `host:path` or `user@host:path` (rsync, scp): another machine's path.
pub(super) fn is_remote(s: &str) -> bool {
    match s.find(':') {
        Some(i) => {
            let head = &s[..i];
            !head.is_empty() && !head.contains('/') && !s.starts_with('/')
        }
        None => false,
    }
}

fn perms(j: &mut Judge, inv: &Invocation, name: &str) {
    let recursive = has_flag(&inv.args, 'R', &["--recursive"])
        || (name == "chattr" && has_flag(&inv.args, 'R', &[]));
    if !recursive {
        return;
    }
    let skip = usize::from(matches!(
        name,
        "chmod" | "chown" | "chgrp" | "chattr" | "chcon"
    )) * usize::from(
        !inv.lit_args()
            .flatten()
            .any(|a| a.starts_with("--reference")),
    );
    let value_opts: &[&str] = if name == "setfacl" {
        &[
            "-m",
            "-x",
            "-M",
            "-X",
            "--set",
            "--set-file",
            "--modify",
            "--remove",
        ]
    } else {
        &[]
    };
    let ops = operands_skipping(&inv.args, value_opts);
    let shown = inv.display();
    for w in ops.into_iter().skip(skip) {
        let Some(raw) = w.arg.lit() else {
            j.hit_unknown(
                &PERMISSIONS_WRECK,
                &inv.origin,
                format!(
                    "`{shown}` changes permissions recursively under a path computed at run time"
                ),
            );
            continue;
        };
        let raw = if w.glob() { glob_dir(raw) } else { raw };
        let paths = j.resolve_all(raw, &inv.cwd, &inv.origin);
        if paths.is_empty() {
            j.hit_unknown(
                &PERMISSIONS_WRECK,
                &inv.origin,
                format!(
                    "`{shown}` changes permissions recursively in a folder that cannot be known"
                ),
            );
        }
        for path in paths {
            if matches!(
                j.paths.place(&path),
                Place::RepoRoot
                    | Place::RepoAncestor
                    | Place::Outside
                    | Place::Device
                    | Place::Git
                    | Place::ForgeState
                    | Place::ForgeRunState
            ) {
                j.hit_at(&PERMISSIONS_WRECK, &inv.origin, format!("`{name} -R` on {} changes permissions of far more than your change; name the files", path.display()));
            }
        }
    }
}

/// Operands, skipping the values of the given options.
pub(super) fn operands_skipping<'w>(args: &'w [Word], value_opts: &[&str]) -> Vec<&'w Word> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut after = false;
    while i < args.len() {
        match args[i].arg.lit() {
            Some("--") if !after => after = true,
            Some(s) if !after && value_opts.contains(&s) => i += 1,
            Some(s) if !after && s.starts_with('-') && s.len() > 1 => {}
            _ => out.push(&args[i]),
        }
        i += 1;
    }
    out
}

/// Names a command gets at run time: `find ROOT | xargs rm`, `find ROOT -exec rm {} +`,
/// `echo a b | xargs rm`.
fn names(j: &mut Judge, inv: &Invocation, name: &str) {
    let deletes = DELETERS.contains(&name)
        || matches!(name, "truncate" | "mv")
        || (name == "git" && inv.lit_args().any(|a| a == Some("rm")));
    // A shell or an interpreter handed the files found (`find . -exec sh -c ': > "$1"' _ {} \;`)
    // may do anything to each of them.
    let runs_code = crate::guard::shell::is_code_runner(name);
    let writes = deletes
        || matches!(
            name,
            "touch" | "cp" | "chmod" | "chown" | "tee" | "sed" | "perl" | "dd" | "install" | "ln"
        ) && (name != "sed" && name != "perl" || has_flag(&inv.args, 'i', &["--in-place"]));
    if !(writes || runs_code && matches!(inv.names, Names::Under { .. })) {
        return;
    }
    let deletes = deletes || runs_code;
    let shown = inv.display();
    match &inv.names {
        Names::None => {}
        Names::Known(words) => {
            for w in words {
                let word = Word::lit(w.clone());
                if deletes {
                    delete_target(j, inv, &word, &shown);
                }
                j.write(
                    &Target {
                        word: &word,
                        cwd: &inv.cwd,
                        origin: &inv.origin,
                    },
                    "changes",
                    false,
                );
            }
        }
        Names::Under {
            root,
            cwd,
            filtered,
        } => {
            let Arg::Lit(r) = root else {
                j.hit_unknown(
                    &RM_UNKNOWN,
                    &inv.origin,
                    format!("`{shown}` changes every file under a folder computed at run time"),
                );
                return;
            };
            // `find * | xargs rm`: every entry of the folder is the folder.
            let r = if matches_everything(r) {
                glob_dir(r)
            } else {
                r
            };
            let paths = j.resolve_all(r, cwd, &inv.origin);
            if paths.is_empty() {
                j.hit_unknown(
                    &WRITE_UNKNOWN,
                    &inv.origin,
                    format!("`{shown}` changes files under `{r}` in a folder that cannot be known"),
                );
            }
            for p in paths {
                // Filtered, the names are some entries under the folder; unfiltered, all of it.
                let p = if *filtered { p.join("_") } else { p };
                let place = j.paths.place(&p);
                let whole = !*filtered && matches!(place, Place::RepoRoot | Place::RepoAncestor);
                if deletes && whole {
                    j.hit_at(&RM_REPO, &inv.origin, format!("`{shown}` changes or deletes every file under {}, the repository; name a pattern", p.display()));
                } else if matches!(place, Place::Outside | Place::RepoAncestor | Place::Device) {
                    let rule = if deletes { &RM_OUTSIDE } else { &WRITE_OUTSIDE };
                    j.hit_at(
                        rule,
                        &inv.origin,
                        format!(
                            "`{shown}` changes files under {}, outside the repository {}",
                            p.display(),
                            j.paths.root.display()
                        ),
                    );
                } else if matches!(place, Place::Git | Place::ForgeState | Place::ForgeRunState) {
                    j.hit_at(
                        &super::forge::FORGE_STATE,
                        &inv.origin,
                        format!(
                            "`{shown}` changes files under {}, Forge's or git's own state",
                            p.display()
                        ),
                    );
                } else if matches!(place, Place::AgentConfig) {
                    j.hit_at(&super::forge::AGENT_CONFIG, &inv.origin, format!("`{shown}` changes files under {}, the agent settings where Forge's hooks are wired", p.display()));
                } else {
                    j.written.push(p.join("_"));
                }
            }
        }
        Names::Unknown => {
            let recursive = name == "rm" && has_flag(&inv.args, 'r', &["--recursive"]);
            if recursive && operands(&inv.args).is_empty() {
                j.hit_unknown(&RM_UNKNOWN, &inv.origin, format!("`{shown}` deletes recursively whatever its input names; list the paths explicitly"));
            } else {
                j.hit_unknown(&WRITE_UNKNOWN, &inv.origin, format!("`{shown}` changes files named by its input at run time; list them explicitly"));
            }
        }
    }
}
