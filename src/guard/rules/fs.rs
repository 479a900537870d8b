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
use crate::guard::paths::{Place, secret_kind};
use crate::guard::shell::{Arg, Cwd, Invocation, Names, Word};

pub const RM_REPO: Rule = Rule {
    id: "rm-repo",
    decision: Decision::Deny,
    summary: "recursive or mass delete (or move away) of the repository, an ancestor of it, `.git` or `.forge` — `rm -rf .`, `rm -rf *`, `find . -delete`, `git ls-files | xargs rm`, `rsync --delete` into it",
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
    summary: "`find … -delete` of everything under the repository, or of anything outside it",
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
    summary: "reading or copying secrets: `.env` (not `.env.example`), private keys (not `*.pub` or certificates), `~/.ssh`, cloud and agent credentials, `~/.pgpass`, process environments, shell histories",
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
    file_operands(j, inv, name);
    links(j, inv, name);
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
fn cwd_or_root(raw: &str, cwd: &Cwd) -> Vec<PathBuf> {
    if raw.starts_with('/') {
        vec![PathBuf::from("/")]
    } else {
        cwd.paths().to_vec()
    }
}

/// Paths whose loss matters most, for patterns that do not match anything on disk yet.
fn protected(j: &Judge) -> Vec<PathBuf> {
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
    {
        if dest.arg.lit().is_none_or(|s| !is_remote(s)) {
            delete_target(j, inv, dest, &shown);
        }
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
fn operands_skipping<'w>(args: &'w [Word], value_opts: &[&str]) -> Vec<&'w Word> {
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
    let writes = deletes
        || matches!(
            name,
            "touch" | "cp" | "chmod" | "chown" | "tee" | "sed" | "perl" | "dd" | "install" | "ln"
        ) && (name != "sed" && name != "perl" || has_flag(&inv.args, 'i', &["--in-place"]));
    if !writes {
        return;
    }
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

/// What the common file commands write and read.
fn file_operands(j: &mut Judge, inv: &Invocation, name: &str) {
    let ops = operands(&inv.args);
    let no_clobber = matches!(name, "cp" | "mv" | "ln" | "install")
        && has_flag(&inv.args, 'n', &["--no-clobber", "--update=none"]);
    let mut writes: Vec<Word> = match name {
        "touch" | "mkdir" | "tee" | "rm" | "rmdir" | "unlink" | "shred" | "mkfifo" | "mknod"
        | "sponge" | "trash-put" => ops.iter().map(|w| (*w).clone()).collect(),
        "truncate" | "fallocate" => operands_skipping(
            &inv.args,
            &[
                "-s",
                "--size",
                "-l",
                "-o",
                "-r",
                "--reference",
                "--length",
                "--offset",
            ],
        )
        .into_iter()
        .cloned()
        .collect(),
        "chmod" | "chown" | "chgrp" | "chattr" | "chcon" => {
            let skip = usize::from(
                !inv.lit_args()
                    .flatten()
                    .any(|a| a.starts_with("--reference")),
            );
            ops.iter().skip(skip).map(|w| (*w).clone()).collect()
        }
        "setfacl" => operands_skipping(
            &inv.args,
            &[
                "-m",
                "-x",
                "-M",
                "-X",
                "--set",
                "--set-file",
                "--modify",
                "--remove",
            ],
        )
        .into_iter()
        .cloned()
        .collect(),
        // `mv` deletes its sources as surely as it writes its destination.
        "mv" => {
            let mut v: Vec<Word> = ops.iter().map(|w| (*w).clone()).collect();
            v.extend(option_values(&inv.args, &["-t"], &["--target-directory"]));
            v
        }
        "cp" | "install" | "ln" | "rsync" | "scp" => {
            let t = option_values(&inv.args, &["-t"], &["--target-directory"]);
            if !t.is_empty() {
                t.into_iter().map(|w| in_folder(&w)).collect()
            } else if name == "install" && has_flag(&inv.args, 'd', &["--directory"]) {
                ops.iter().map(|w| (*w).clone()).collect()
            } else {
                ops.last()
                    .filter(|w| ops.len() > 1 || name == "ln")
                    .filter(|w| w.arg.lit().is_none_or(|s| !is_remote(s)))
                    .map(|w| (*w).clone())
                    .into_iter()
                    .collect()
            }
        }
        "patch" => {
            let out = option_values(&inv.args, &["-o"], &["--output"]);
            if out.is_empty() {
                ops.first().map(|w| (*w).clone()).into_iter().collect()
            } else {
                out
            }
        }
        "sed" | "perl" | "ruby" if has_flag(&inv.args, 'i', &["--in-place"]) => {
            // sed's first operand is its script unless `-e`/`-f` gave one.
            let scripted = name == "sed"
                && inv.lit_args().flatten().any(|a| {
                    a == "-e"
                        || a == "-f"
                        || a.starts_with("--expression")
                        || a.starts_with("--file")
                });
            let skip = usize::from(name == "sed" && !scripted);
            let data = code_operand_count(inv, name);
            ops.iter()
                .skip(skip.max(data))
                .map(|w| (*w).clone())
                .collect()
        }
        "yq" if has_flag(&inv.args, 'i', &["--inplace"]) => {
            ops.iter().skip(1).map(|w| (*w).clone()).collect()
        }
        "curl" => {
            let mut v = option_values(
                &inv.args,
                &["-o", "-D", "-c"],
                &[
                    "--output",
                    "--dump-header",
                    "--cookie-jar",
                    "--trace",
                    "--trace-ascii",
                    "--libcurl",
                ],
            );
            v.extend(
                option_values(&inv.args, &[], &["--output-dir"])
                    .into_iter()
                    .map(|w| in_folder(&w)),
            );
            if has_flag(&inv.args, 'O', &["--remote-name", "--remote-name-all"])
                && option_values(&inv.args, &[], &["--output-dir"]).is_empty()
            {
                v.push(Word::lit("./_"));
            }
            v
        }
        "wget" => {
            let mut v = option_values(
                &inv.args,
                &["-O", "-o", "-a"],
                &["--output-document", "--output-file", "--append-output"],
            );
            v.extend(
                option_values(&inv.args, &["-P"], &["--directory-prefix"])
                    .into_iter()
                    .map(|w| in_folder(&w)),
            );
            v.retain(|w| w.arg.lit() != Some("-"));
            v
        }
        "tar" | "bsdtar" | "gtar" => tar_writes(inv),
        "unzip" => {
            let d = option_values(&inv.args, &["-d"], &[]);
            if d.is_empty() {
                vec![Word::lit("./_")]
            } else {
                d.into_iter().map(|w| in_folder(&w)).collect()
            }
        }
        "7z" | "7za" | "7zr" => option_values(&inv.args, &["-o"], &[])
            .into_iter()
            .map(|w| in_folder(&w))
            .collect(),
        "cpio" => {
            let d = option_values(&inv.args, &["-D"], &["--directory"]);
            d.into_iter().map(|w| in_folder(&w)).collect()
        }
        "sort" | "gpg" | "pandoc" | "gcc" | "cc" | "clang" | "go" | "rustc" | "objcopy" => {
            option_values(&inv.args, &["-o"], &["--output"])
        }
        "uniq" => ops.get(1).map(|w| (*w).clone()).into_iter().collect(),
        "split" | "csplit" => ops
            .get(1)
            .map(|w| Word::lit(format!("{}_", w.arg.display())))
            .into_iter()
            .collect(),
        "openssl" => option_values(&inv.args, &["-out", "-keyout"], &[]),
        "ssh-keygen" if !has_flag(&inv.args, 'l', &[]) && !has_flag(&inv.args, 'y', &[]) => {
            option_values(&inv.args, &["-f"], &[])
        }
        "dd" => inv
            .lit_args()
            .flatten()
            .filter_map(|a| a.strip_prefix("of="))
            .map(Word::lit)
            .collect(),
        "git" => {
            let mut v = super::git::written(inv);
            v.extend(option_values(
                &inv.args,
                &["-o"],
                &["--output", "--output-directory"],
            ));
            v
        }
        "find" => option_values(&inv.args, &["-fprint", "-fprint0", "-fprintf", "-fls"], &[]),
        "docker" | "podman" | "kubectl" if inv.lit_args().any(|a| a == Some("cp")) => ops
            .last()
            .filter(|w| w.arg.lit().is_none_or(|s| !s.contains(':')))
            .map(|w| (*w).clone())
            .into_iter()
            .collect(),
        "script" => ops.first().map(|w| (*w).clone()).into_iter().collect(),
        _ => vec![],
    };
    // Hard links and copies into an existing folder write a file inside it.
    for w in writes.iter_mut() {
        if matches!(name, "cp" | "mv" | "install" | "ln" | "rsync" | "scp")
            && let Some(raw) = w.arg.lit()
            && !raw.ends_with("/_")
            && (raw.ends_with('/')
                || inv
                    .cwd
                    .paths()
                    .first()
                    .is_some_and(|c| j.paths.resolve(raw, c).is_dir()))
        {
            *w = in_folder(w);
        }
    }
    let verb = match name {
        "rm" | "rmdir" | "unlink" | "shred" | "trash-put" => "deletes",
        "mv" => "moves files to",
        "cp" | "install" | "rsync" | "scp" => "copies files to",
        "tar" | "unzip" | "7z" | "7za" | "cpio" | "bsdtar" | "gtar" => "extracts files into",
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" | "chcon" => "changes permissions of",
        _ => "writes",
    };
    for w in &writes {
        j.write(
            &Target {
                word: w,
                cwd: &inv.cwd,
                origin: &inv.origin,
            },
            verb,
            no_clobber,
        );
    }
    if matches!(
        name,
        "echo" | "printf" | ":" | "true" | "false" | "test" | "["
    ) {
        return;
    }
    if METADATA_ONLY.contains(&name) {
        return;
    }
    let data = data_args(inv, name);
    // A copy's or move's destination is written, not read; its sources are read (copying a
    // secret is reading it).
    let dest: Option<&Word> = if matches!(name, "cp" | "mv" | "install" | "rsync" | "scp" | "ln") {
        if option_values(&inv.args, &["-t"], &["--target-directory"]).is_empty() {
            ops.last().copied()
        } else {
            None
        }
    } else {
        None
    };
    for w in inv.args.iter() {
        let skip = (writes.iter().any(|x| x == w)
            && !matches!(name, "mv" | "cp" | "install" | "rsync" | "scp" | "ln"))
            || dest.is_some_and(|d| std::ptr::eq(d, w))
            || data.iter().any(|d| std::ptr::eq(*d, w));
        if skip {
            continue;
        }
        j.read(&Target {
            word: w,
            cwd: &inv.cwd,
            origin: &inv.origin,
        });
    }
}

/// `tar` writes its archive (create) or the members into a folder (extract).
fn tar_writes(inv: &Invocation) -> Vec<Word> {
    let lits: Vec<&str> = inv.lit_args().flatten().collect();
    let first = lits.first().copied().unwrap_or("");
    let mode = |c: char, long: &str| {
        lits.iter().any(|a| is_long(a, long))
            || (!first.starts_with('-') && first.contains(c))
            || lits
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    };
    if mode('x', "--extract") || mode('x', "--get") {
        let d = option_values(&inv.args, &["-C"], &["--directory"]);
        let dir = d.first().and_then(|w| w.arg.lit()).map(str::to_string);
        let mut out: Vec<Word> = match &dir {
            None => vec![Word::lit("./_")],
            Some(_) => d.iter().map(in_folder).collect(),
        };
        // Members named on the command line land there too (`tar xf x.tar .forge/config.yaml`).
        let archive = option_values(&inv.args, &["-f"], &["--file"]);
        let mut ops: Vec<&Word> = operands(&inv.args);
        if !first.starts_with('-') && !ops.is_empty() {
            ops.remove(0);
            if first.contains('f') && archive.is_empty() && !ops.is_empty() {
                ops.remove(0);
            }
        }
        for m in ops {
            if archive.iter().any(|a| a == m) || d.iter().any(|x| x == m) {
                continue;
            }
            if let Some(s) = m.arg.lit() {
                out.push(Word::lit(match &dir {
                    Some(d) => format!("{}/{s}", d.trim_end_matches('/')),
                    None => s.to_string(),
                }));
            }
        }
        return out;
    }
    if mode('c', "--create") || mode('r', "--append") || mode('u', "--update") {
        let mut f = option_values(&inv.args, &["-f"], &["--file"]);
        if f.is_empty() && !first.starts_with('-') && first.contains('f') {
            // `tar czf out.tgz dir`: the archive is the first operand after the mode word.
            if let Some(w) = inv.args.get(1) {
                f.push(w.clone());
            }
        }
        f.retain(|w| w.arg.lit() != Some("-"));
        return f;
    }
    vec![]
}

/// `dir` → `dir/_`: a file written inside a folder.
fn in_folder(w: &Word) -> Word {
    match &w.arg {
        Arg::Lit(s) => Word::lit(format!("{}/_", s.trim_end_matches('/'))),
        d => Word {
            arg: d.clone(),
            pattern: None,
        },
    }
}

/// Commands that look at files without reading their content (names, sizes, types, hashes).
const METADATA_ONLY: [&str; 22] = [
    "ls",
    "stat",
    "file",
    "du",
    "touch",
    "mkdir",
    "rmdir",
    "chmod",
    "chown",
    "chgrp",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "find",
    "wc",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "test",
    "tree",
    "ln",
];

/// How many leading operands of an interpreter are its code, not files (`perl -pi -e CODE
/// file`: none; `perl -pi 's/a/b/' file`: one).
fn code_operand_count(inv: &Invocation, name: &str) -> usize {
    let has_e = inv
        .lit_args()
        .flatten()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.ends_with('e'));
    usize::from(matches!(name, "perl" | "ruby") && !has_e)
}

/// Arguments that are data, not files: messages, patterns, expressions, code.
fn data_args<'i>(inv: &'i Invocation, name: &str) -> Vec<&'i Word> {
    let mut out = Vec::new();
    let args = &inv.args;
    for (i, a) in args.iter().enumerate() {
        let Some(s) = a.arg.lit() else { continue };
        let takes_data = match name {
            "git" => matches!(
                s,
                "-m" | "--message" | "-e" | "-S" | "-G" | "--grep" | "--author"
            ),
            "grep" | "rg" | "egrep" | "fgrep" | "ag" | "ack" | "git-grep" => {
                matches!(
                    s,
                    "-e" | "--regexp" | "-g" | "--glob" | "--include" | "--exclude"
                )
            }
            "sed" => matches!(s, "-e" | "--expression"),
            "awk" | "gawk" | "mawk" | "nawk" => matches!(s, "-v" | "-F"),
            "python" | "python3" | "python2" | "pypy3" => s == "-c",
            "node" | "nodejs" | "bun" | "deno" => matches!(s, "-e" | "--eval" | "-p" | "--print"),
            "ruby" | "lua" | "luajit" | "Rscript" | "julia" | "osascript" => s == "-e",
            "perl" => {
                s.starts_with('-') && !s.starts_with("--") && (s.ends_with('e') || s.ends_with('E'))
            }
            "php" => s == "-r",
            "docker" | "podman" => matches!(s, "--env-file" | "-e" | "--env" | "--label" | "-l"),
            "ssh" | "scp" | "sftp" => s == "-i" || s == "-o",
            "curl" => matches!(
                s,
                "-H" | "--header" | "-A" | "--user-agent" | "-u" | "--user" | "-X" | "--request"
            ),
            "jq" | "yq" | "gojq" | "jaq" | "xq" | "tomlq" | "dasel" => {
                matches!(s, "--arg" | "--argjson" | "-e" | "--expression")
            }
            "find" => true,
            _ => false,
        };
        if takes_data && let Some(v) = args.get(i + 1) {
            out.push(v);
        }
        // `--env-file=.env` and the like.
        if (name == "docker" || name == "podman") && s.starts_with("--env-file=") {
            out.push(a);
        }
    }
    let ops = operands(args);
    // The first operand of grep-like tools, sed/awk scripts and jq/yq expressions is data.
    let explicit_pattern = args.iter().any(|w| {
        w.arg
            .lit()
            .is_some_and(|s| matches!(s, "-e" | "--regexp" | "-f" | "--file" | "--expression"))
    });
    if matches!(
        name,
        "grep"
            | "rg"
            | "egrep"
            | "fgrep"
            | "ag"
            | "ack"
            | "sed"
            | "awk"
            | "gawk"
            | "mawk"
            | "nawk"
            | "jq"
            | "yq"
            | "gojq"
            | "jaq"
            | "xq"
            | "tomlq"
            | "dasel"
            | "mlr"
    ) && !explicit_pattern
        && let Some(first) = ops.first()
    {
        out.push(first);
    }
    // `yq e EXPR file`, `yq eval EXPR file`.
    if name == "yq"
        && let [first, second, ..] = ops.as_slice()
        && matches!(first.arg.lit(), Some("e" | "eval" | "ea" | "eval-all"))
    {
        out.push(second);
    }
    if matches!(name, "perl" | "ruby")
        && code_operand_count(inv, name) == 1
        && let Some(first) = ops.first()
    {
        out.push(first);
    }
    out
}

fn links(j: &mut Judge, inv: &Invocation, name: &str) {
    // Record a link only after judging the command itself (its own path is a write). A
    // relative symlink target is relative to the link's folder, as the kernel reads it; a hard
    // link is another name for the same file.
    let hard_cp = name == "cp" && has_flag(&inv.args, 'l', &["--link"]);
    if name != "ln" && !hard_cp {
        return;
    }
    let Some(cwd) = inv.cwd.one() else { return };
    let symbolic = name == "ln" && has_flag(&inv.args, 's', &["--symbolic"]);
    let ops = operands(&inv.args);
    let (Some(t), Some(l)) = (
        ops.first().and_then(|w| w.arg.lit()),
        ops.get(1).and_then(|w| w.arg.lit()),
    ) else {
        return;
    };
    let mut link = j.paths.resolve(l, cwd);
    if link.is_dir() {
        link = link.join(Path::new(t).file_name().unwrap_or_default());
    }
    let target = if symbolic {
        let base = link
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| cwd.to_path_buf());
        j.paths.resolve(t, &base)
    } else {
        j.paths.resolve(t, cwd)
    };
    j.links.push((link, target));
}

impl Judge<'_> {
    /// A path the command writes (redirect, `cp` destination, `touch`, …). `no_clobber`: it
    /// never overwrites an existing file (`cp -n`).
    pub fn write(&mut self, t: &Target, verb: &str, no_clobber: bool) {
        let raw = match &t.word.arg {
            Arg::Lit(s) => s.as_str(),
            Arg::Dyn { raw, .. } => {
                self.hit_unknown(
                    &WRITE_UNKNOWN,
                    t.origin,
                    format!("this {verb} `{raw}`, a path computed at run time; write the path out so it can be checked"),
                );
                return;
            }
        };
        let mut paths = self.resolve_all(raw, t.cwd, t.origin);
        if paths.is_empty() {
            // Unknown folder: a name that is itself protected is still recognised.
            if let Some(kind) = secret_kind(Path::new(raw), &self.paths.home) {
                self.hit_at(
                    &SECRETS_WRITE,
                    t.origin,
                    format!("this {verb} `{raw}`, {kind}, in a folder that cannot be known"),
                );
            }
            self.hit_unknown(
                &WRITE_UNKNOWN,
                t.origin,
                format!("this {verb} `{raw}` after a `cd` to a folder computed at run time"),
            );
            return;
        }
        // A glob in a written path (`> .forg?/config.yaml`): what it matches, and protected
        // paths it could reach.
        if let Some(pattern) = &t.word.pattern {
            for c in cwd_or_root(raw, t.cwd) {
                for m in crate::guard::shell::shell_glob_matches(pattern, &c) {
                    paths.push(self.paths.resolve(&m.display().to_string(), &c));
                }
                let abs = if pattern.starts_with('/') {
                    pattern.to_string()
                } else {
                    format!("{}/{pattern}", c.display())
                };
                for p in protected(self) {
                    if could_reach(&abs, &p) {
                        paths.push(p.join("_"));
                    }
                }
            }
        }
        for path in paths {
            self.write_path(&path, verb, no_clobber, t);
        }
    }

    fn write_path(&mut self, path: &Path, verb: &str, no_clobber: bool, t: &Target) {
        self.written.push(path.to_path_buf());
        // Placeholders stand for "a file in this folder" (`cp x dir/`, `find DIR -exec … {}`):
        // name the folder in messages.
        let shown_path = match path.file_name().and_then(|n| n.to_str()) {
            Some("_") | Some("{}") => path.parent().map(|p| format!("a file in {}", p.display())),
            _ => None,
        };
        let shown = shown_path.unwrap_or_else(|| path.display().to_string());
        let exists = std::fs::symlink_metadata(path).ok();
        match self.paths.place(path) {
            Place::InRepo(_) | Place::Temp | Place::NullDevice | Place::RepoRoot => {
                if let Some(kind) = secret_kind(path, &self.paths.home)
                    && exists.is_some()
                    && !no_clobber
                {
                    self.hit_at(&SECRETS_WRITE, t.origin, format!("this {verb} {shown}, {kind}"));
                }
                // A hard link: the same file has another name Forge cannot see.
                #[cfg(unix)]
                if let Some(m) = &exists
                    && !no_clobber
                {
                    use std::os::unix::fs::MetadataExt;
                    if m.is_file() && m.nlink() > 1 {
                        self.hit_at(&WRITE_UNKNOWN, t.origin, format!("this {verb} {shown}, a file with {} names (a hard link): Forge cannot tell which other file it changes", m.nlink()));
                    }
                }
            }
            Place::Git => self.hit_at(
                &super::forge::FORGE_STATE,
                t.origin,
                format!("this {verb} {shown} inside .git/; use git commands instead of editing its files"),
            ),
            Place::ForgeState | Place::ForgeRunState => self.hit_at(
                &super::forge::FORGE_STATE,
                t.origin,
                format!("this {verb} {shown}, Forge's own state: agents may not change it; ask the person"),
            ),
            Place::AgentConfig => self.hit_at(
                &super::forge::AGENT_CONFIG,
                t.origin,
                format!("this {verb} {shown}, the agent settings where Forge's hooks are wired; ask the person"),
            ),
            Place::Device => self.hit_at(&DISK_WRECK, t.origin, format!("this {verb} the device {shown}")),
            Place::Network => {}
            Place::RepoAncestor | Place::Outside => self.hit_at(
                &WRITE_OUTSIDE,
                t.origin,
                format!("this {verb} {shown}, outside the repository {}; keep changes inside it (the temp folder is fine)", self.paths.root.display()),
            ),
        }
    }

    /// An operand the command may read: secrets may not be read or copied.
    pub fn read(&mut self, t: &Target) {
        let Arg::Lit(raw) = &t.word.arg else { return };
        // `--file=.env`, `@.env` (curl data), `name=@file` (curl forms) name files too.
        let raw = raw.rsplit_once('=').map_or(raw.as_str(), |(_, v)| v);
        let raw = raw.strip_prefix('@').unwrap_or(raw);
        let raw = raw.strip_prefix("file://").unwrap_or(raw);
        if raw.is_empty() || raw.starts_with('-') {
            return;
        }
        if super::net::metadata_endpoint(raw) {
            self.hit_at(&SECRETS, t.origin, format!("`{raw}` is a cloud metadata endpoint, which hands out the machine's credentials; agents may not read them"));
            return;
        }
        let mut hits = self.resolve_all(raw, t.cwd, t.origin);
        if hits.is_empty() {
            // Unknown folder: go by the name alone.
            if let Some(kind) = secret_kind(Path::new(raw), &self.paths.home) {
                self.hit_at(
                    &SECRETS,
                    t.origin,
                    format!("this reads `{raw}`, {kind}; agents may not read or copy secrets"),
                );
            }
            return;
        }
        if let Some(pattern) = &t.word.pattern {
            for c in cwd_or_root(raw, t.cwd) {
                hits.extend(
                    crate::guard::shell::shell_glob_matches(pattern, &c)
                        .into_iter()
                        .map(|m| self.paths.resolve(&m.display().to_string(), &c)),
                );
            }
        }
        for p in hits {
            if let Some(kind) = secret_kind(&p, &self.paths.home) {
                self.hit_at(
                    &SECRETS,
                    t.origin,
                    format!("this reads {}, {kind}; agents may not read or copy secrets (use the `.example` file or ask the person)", p.display()),
                );
                return;
            }
        }
    }
}
