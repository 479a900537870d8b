//! What a command writes and reads, for the common file commands (destinations, `-t`,
//! `--target-directory=`, `-o`, `of=`, `tar -C`, archive members, in-place edits, links), and
//! how a written or read path is judged ([`Judge::write`], [`Judge::read`]).

use std::path::Path;

use super::fs::{
    DISK_WRECK, SECRETS, SECRETS_WRITE, WRITE_OUTSIDE, WRITE_UNKNOWN, cwd_or_root, is_remote,
    operands_skipping, protected,
};
use super::{Judge, Target, could_reach, has_flag, is_long, operands, option_values};
use crate::guard::paths::{Place, secret_kind};
use crate::guard::shell::{Arg, Invocation, Word};

/// What the common file commands write and read.
pub(super) fn file_operands(j: &mut Judge, inv: &Invocation, name: &str) {
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
                    .filter(|_w| ops.len() > 1 || name == "ln")
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
                    .is_some_and(|c| crate::guard::paths::is_dir(&j.paths.resolve(raw, c))))
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
pub(super) fn tar_writes(inv: &Invocation) -> Vec<Word> {
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
pub(super) fn in_folder(w: &Word) -> Word {
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
pub(super) fn code_operand_count(inv: &Invocation, name: &str) -> usize {
    let has_e = inv
        .lit_args()
        .flatten()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.ends_with('e'));
    usize::from(matches!(name, "perl" | "ruby") && !has_e)
}

/// Arguments that are data, not files: messages, patterns, expressions, code.
pub(super) fn data_args<'i>(inv: &'i Invocation, name: &str) -> Vec<&'i Word> {
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
            // Patterns of what to leave out or take in, not files read.
            "tar" | "bsdtar" | "gtar" => matches!(s, "--exclude" | "--include"),
            "rsync" => matches!(s, "--exclude" | "--include" | "--filter" | "-f"),
            "zip" => matches!(s, "-x" | "-i" | "--exclude" | "--include"),
            _ => false,
        };
        if takes_data && let Some(v) = args.get(i + 1) {
            out.push(v);
        }
        if matches!(name, "tar" | "bsdtar" | "gtar" | "rsync" | "zip")
            && ["--exclude=", "--include=", "--filter="]
                .iter()
                .any(|o| s.starts_with(o))
        {
            out.push(a);
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

pub(super) fn links(j: &mut Judge, inv: &Invocation, name: &str) {
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
        let exists = crate::guard::paths::symlink_metadata(path);
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
        // A `file:` URL in every spelling a client accepts (`FILE://`, `%2eenv`), read as the
        // file tools' are (red team, round 13).
        match crate::guard::paths::file_url_paths(raw) {
            Some(paths) => {
                for p in paths {
                    self.read_path(&p, t);
                }
            }
            None => self.read_path(raw, t),
        }
    }

    fn read_path(&mut self, raw: &str, t: &Target) {
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
