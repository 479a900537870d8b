//! Code a command runs from a file, read so it can be judged like the line itself: shell
//! scripts (run by path, by a shell or sourced), Makefile and justfile recipes, `package.json`
//! scripts (also ones set earlier on the line with `npm pkg set`), and the files a patch
//! touches. Files written earlier on the same line are known from the line (`printf … > x.sh;
//! sh x.sh`), or known to hold downloaded code.
//!
//! Reads are bounded — only inside the repository or the temp folder (symlinks resolved
//! first, so a link out of them is not followed), regular files only (never a FIFO or a
//! device), at most [`MAX_SOURCE`] bytes each and [`super::walk::MAX_SOURCE_FILES`] files per
//! line — because the hook runs on every tool call. Code outside the project, too large or
//! unreadable is [`Opaque`]: unknowable, and said so.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::walk::{Ctx, MAX_SOURCE_BYTES, MAX_SOURCE_FILES, Val, Walker};
use super::{Arg, Cwd, Invocation, Opaque, Origin, Stdin, Word};

/// Largest file read as code.
pub const MAX_SOURCE: usize = 256 * 1024;

/// A code file an interpreter runs from the temp folder, read the same bounded way (regular
/// file, at most [`MAX_SOURCE`] bytes, UTF-8), for the rules to judge like inline code.
pub fn read_code_file(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    if !m.is_file() || m.len() as usize > MAX_SOURCE {
        return None;
    }
    let mut b = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_SOURCE as u64)
        .read_to_end(&mut b)
        .ok()?;
    String::from_utf8(b).ok()
}

/// What is known of a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Text(String),
    /// Written by a downloader earlier on the line: code from the network.
    Downloaded,
    /// Cannot be known; why.
    Unknown(String),
    /// Does not exist (and was not written earlier on the line): nothing runs.
    Missing,
    /// Written earlier on the line by `git diff`: a patch of the repository's own files (as
    /// code, unknowable).
    RepoDiff,
}

impl Walker<'_> {
    /// The content of a file a command runs or reads as code.
    pub(super) fn file_content(&mut self, path: &Path) -> Content {
        let real = crate::guard::paths::real(path);
        if let Some(c) = self.files.get(&real).or_else(|| self.files.get(path)) {
            return c.clone();
        }
        let meta = match std::fs::metadata(&real) {
            Ok(m) => m,
            Err(_) => return Content::Missing,
        };
        let inside = real.starts_with(&self.env.root)
            || (real.starts_with(&self.env.temp) && !real.starts_with(&self.env.home));
        if !inside {
            return Content::Unknown(format!(
                "{} is outside the project, where Forge does not read code",
                real.display()
            ));
        }
        if !meta.is_file() {
            return Content::Unknown(format!("{} is not a regular file", real.display()));
        }
        if meta.len() as usize > MAX_SOURCE {
            return Content::Unknown(format!(
                "{} is larger than {} KiB",
                real.display(),
                MAX_SOURCE / 1024
            ));
        }
        if self.files_read >= MAX_SOURCE_FILES
            || self.bytes_read + meta.len() as usize > MAX_SOURCE_BYTES
        {
            return Content::Unknown("the line runs more code files than Forge reads".into());
        }
        let mut bytes = Vec::new();
        let read = std::fs::File::open(&real)
            .and_then(|f| f.take(MAX_SOURCE as u64).read_to_end(&mut bytes));
        if let Err(e) = read {
            return Content::Unknown(format!("cannot read {}: {e}", real.display()));
        }
        self.files_read += 1;
        self.bytes_read += bytes.len();
        match String::from_utf8(bytes) {
            Ok(s) => Content::Text(s),
            // Binaries are programs, not scripts: the caller treats them by name.
            Err(_) => Content::Text("\u{7f}ELF".into()),
        }
    }

    /// Runs a shell script: a fresh shell (or, `sourced`, this one) walks its text.
    pub(super) fn run_script(
        &mut self,
        script: &Word,
        args: &[Word],
        ctx: &mut Ctx,
        depth: usize,
        sourced: bool,
    ) {
        let raw = match &script.arg {
            Arg::Lit(s) => s.clone(),
            Arg::Dyn { raw, programs } => {
                self.out.opaque.push(Opaque {
                    what: raw.clone(),
                    why: "its path is computed at run time".into(),
                    downloaded: programs.iter().any(|p| is_downloader(p)),
                    origin: ctx.origin.clone(),
                });
                return;
            }
        };
        let Some(path) = self.locate(&raw, ctx) else {
            self.out.opaque.push(Opaque {
                what: raw,
                why: "it runs in a folder Forge cannot know".into(),
                downloaded: false,
                origin: ctx.origin.clone(),
            });
            return;
        };
        let text = match self.file_content(&path) {
            Content::Text(t) => t,
            Content::Missing => return,
            Content::Downloaded => {
                self.out.opaque.push(Opaque {
                    what: raw,
                    why: "it was downloaded earlier on this line".into(),
                    downloaded: true,
                    origin: ctx.origin.clone(),
                });
                return;
            }
            Content::Unknown(why) => {
                self.out.opaque.push(Opaque {
                    what: raw,
                    why,
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
                return;
            }
            Content::RepoDiff => {
                self.out.opaque.push(Opaque {
                    what: raw,
                    why: "it is the output of `git diff`, written earlier on this line".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
                return;
            }
        };
        if text.starts_with("\u{7f}ELF") {
            return;
        }
        let mut positional = vec![raw.clone()];
        positional.extend(args.iter().map(|a| a.arg.display().to_string()));
        let origin = Origin::Script(crate::guard::paths::real(&path));
        if sourced {
            let saved = (ctx.positional.take(), ctx.origin.clone());
            ctx.positional = Some(positional);
            ctx.origin = origin;
            self.line(&text, ctx, depth + 1);
            ctx.positional = saved.0;
            ctx.origin = saved.1;
        } else {
            let mut child = ctx.child(origin);
            child.positional = Some(positional);
            self.line(&text, &mut child, depth + 1);
        }
    }

    /// A path a command names, in the folder it runs in (the first of several candidates).
    pub(super) fn locate(&self, raw: &str, ctx: &Ctx) -> Option<PathBuf> {
        if Path::new(raw).is_absolute() {
            return Some(PathBuf::from(raw));
        }
        ctx.cwd.paths().first().map(|c| c.join(raw))
    }

    /// Records what is known of the files a command just wrote through redirections, so a
    /// later `sh x.sh` on the same line can be judged.
    pub(super) fn note_written(&mut self, first_write: usize, inv: Option<&Invocation>) {
        let content = match inv {
            Some(i) if i.name().is_some_and(is_downloader) => Content::Downloaded,
            Some(i)
                if i.name() == Some("git")
                    && i.lit_args().flatten().find(|a| !a.starts_with('-')) == Some("diff") =>
            {
                Content::RepoDiff
            }
            Some(i) => match printed_text(i, &self.files) {
                Some(t) => Content::Text(t),
                None => {
                    Content::Unknown("written at run time by a command Forge cannot replay".into())
                }
            },
            None => Content::Unknown("written by a compound command".into()),
        };
        let targets: Vec<PathBuf> = self.out.writes[first_write..]
            .iter()
            .filter_map(|r| {
                let raw = r.target.arg.lit()?;
                let cwd = r.cwd.one()?;
                Some(crate::guard::paths::real(&cwd.join(raw)))
            })
            .collect();
        for t in targets {
            self.files.insert(t, content.clone());
        }
    }

    /// Files a command copies, moves or `tee`s earlier on the line: known when their source is,
    /// unknown otherwise (a later `sh x.sh` must not find "nothing there").
    pub(super) fn note_copies(&mut self, inv: &Invocation) {
        let Some(name) = inv.name() else { return };
        let Some(cwd) = inv.cwd.one().map(Path::to_path_buf) else {
            return;
        };
        let ops: Vec<&str> = inv
            .args
            .iter()
            .filter_map(|w| w.arg.lit())
            .filter(|a| !a.starts_with('-'))
            .collect();
        let (sources, dests): (Vec<&str>, Vec<&str>) = match name {
            "cp" | "mv" | "install" | "ln" | "rsync" if ops.len() >= 2 => {
                (ops[..ops.len() - 1].to_vec(), vec![ops[ops.len() - 1]])
            }
            "tee" | "sponge" => (vec![], ops.clone()),
            "dd" => (
                inv.lit_args()
                    .flatten()
                    .filter_map(|a| a.strip_prefix("if="))
                    .collect(),
                inv.lit_args()
                    .flatten()
                    .filter_map(|a| a.strip_prefix("of="))
                    .collect(),
            ),
            _ => return,
        };
        let content = if matches!(name, "tee" | "sponge") {
            match &inv.stdin {
                Stdin::Text(Arg::Lit(t)) => Content::Text(t.clone()),
                _ => Content::Unknown("written from input Forge cannot know".into()),
            }
        } else if let [one] = sources.as_slice() {
            match self.file_content(&cwd.join(one)) {
                Content::Missing => {
                    Content::Unknown(format!("copied from {one}, which Forge cannot find"))
                }
                c => c,
            }
        } else {
            Content::Unknown(format!("written by `{name}` earlier on this line"))
        };
        for d in dests {
            let mut p = crate::guard::paths::real(&cwd.join(d));
            if p.is_dir()
                && let Some(src) = sources.first()
            {
                p = p.join(Path::new(src).file_name().unwrap_or_default());
            }
            self.files.insert(p, content.clone());
        }
    }

    /// `curl -o x`, `wget -O x`: files a downloader writes.
    pub(super) fn note_downloads(&mut self, inv: &Invocation) {
        let Some(name) = inv.name() else { return };
        if !is_downloader(name) {
            return;
        }
        let Some(cwd) = inv.cwd.one().map(Path::to_path_buf) else {
            return;
        };
        // curl writes `-o FILE`; wget `-O FILE` (its `-o` is a log); either may sit at the end
        // of a cluster (`-sSLo x`, `-qO x`) or be attached (`-ox`).
        let letter = if name == "wget" { 'O' } else { 'o' };
        let mut it = inv.args.iter().peekable();
        while let Some(w) = it.next() {
            let Some(a) = w.arg.lit() else { continue };
            let value = if a == "--output" || a == "--output-document" {
                it.peek().and_then(|n| n.arg.lit()).map(str::to_string)
            } else if let Some(v) = a
                .strip_prefix("--output=")
                .or_else(|| a.strip_prefix("--output-document="))
            {
                Some(v.to_string())
            } else if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
                match a[1..].find(letter) {
                    Some(p) if p + 2 == a.len() => {
                        it.peek().and_then(|n| n.arg.lit()).map(str::to_string)
                    }
                    Some(p) => Some(a[p + 2..].to_string()),
                    None => None,
                }
            } else {
                None
            };
            if let Some(v) = value
                && v != "-"
            {
                self.files
                    .insert(crate::guard::paths::real(&cwd.join(v)), Content::Downloaded);
            }
        }
    }

    /// `make [targets]`: the recipes of the targets (and their prerequisites), each line in
    /// its own shell in the Makefile's folder.
    pub(super) fn make(&mut self, args: &[Word], ctx: &mut Ctx, depth: usize) {
        let mut dir = ctx.cwd.one().map(Path::to_path_buf);
        let mut file: Option<String> = None;
        let mut targets = Vec::new();
        let mut overrides: HashMap<String, String> = HashMap::new();
        let mut dry = false;
        let mut i = 0;
        let lits: Vec<Option<&str>> = args.iter().map(|w| w.arg.lit()).collect();
        while i < lits.len() {
            let Some(a) = lits[i] else {
                targets.push(None);
                i += 1;
                continue;
            };
            let value = |i: usize| lits.get(i + 1).copied().flatten().map(str::to_string);
            match a {
                "-C" | "--directory" => {
                    dir = match (dir, value(i)) {
                        (Some(d), Some(v)) => Some(d.join(v)),
                        _ => None,
                    };
                    i += 2;
                    continue;
                }
                "-f" | "--file" | "--makefile" => {
                    file = value(i);
                    i += 2;
                    continue;
                }
                "-n" | "--dry-run" | "--just-print" | "--recon" | "-q" | "--question" | "-p"
                | "--print-data-base" => dry = true,
                "-j" | "-l" | "-o" | "-W" | "-I" | "--jobs" | "--load-average" | "--old-file"
                | "--what-if" | "--include-dir" => {
                    i += 2;
                    continue;
                }
                _ if a.starts_with("--directory=") => {
                    dir = dir.map(|d| d.join(&a["--directory=".len()..]));
                }
                _ if a.starts_with("-C") && a.len() > 2 => dir = dir.map(|d| d.join(&a[2..])),
                _ if a.starts_with("--file=") || a.starts_with("--makefile=") => {
                    file = a.split_once('=').map(|(_, v)| v.to_string());
                }
                _ if a.starts_with("-f") && a.len() > 2 => file = Some(a[2..].to_string()),
                _ if a.starts_with("--eval=") => {
                    self.out.opaque.push(Opaque {
                        what: format!("make {a}"),
                        why: "make code given on the command line".into(),
                        downloaded: false,
                        origin: ctx.origin.clone(),
                    });
                }
                _ if a.starts_with('-') => {
                    // Flags; a cluster such as `-nk` may hold `n`.
                    if !a.starts_with("--") && a[1..].contains('n') {
                        dry = true;
                    }
                }
                _ if a.contains('=') => {
                    if let Some((k, v)) = a.split_once('=') {
                        overrides.insert(k.to_string(), v.to_string());
                    }
                }
                _ => targets.push(Some(a.to_string())),
            }
            i += 1;
        }
        let Some(dir) = dir else {
            self.out.opaque.push(Opaque {
                what: "make".into(),
                why: "it runs in a folder Forge cannot know".into(),
                downloaded: false,
                origin: ctx.origin.clone(),
            });
            return;
        };
        if dry {
            return;
        }
        let candidates: Vec<PathBuf> = match &file {
            Some(f) => vec![dir.join(f)],
            None => ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .map(|n| dir.join(n))
                .collect(),
        };
        let Some((path, text)) = self.first_readable(&candidates, "make", ctx) else {
            return;
        };
        let mut mk = Makefile::parse(&text);
        // Included makefiles, read the same bounded way.
        for inc in std::mem::take(&mut mk.includes) {
            if inc.contains('$') {
                mk.unreadable_include = true;
                continue;
            }
            match self.file_content(&dir.join(&inc)) {
                Content::Text(t) => mk.merge(Makefile::parse(&t)),
                Content::Missing => {}
                _ => mk.unreadable_include = true,
            }
        }
        for (k, v) in overrides {
            mk.vars.insert(k, v);
        }
        let goals: Vec<String> = if targets.is_empty() {
            mk.default.clone().into_iter().collect()
        } else {
            targets
                .into_iter()
                .map(|t| t.unwrap_or_else(|| "$(unknown)".into()))
                .collect()
        };
        let mut seen = HashSet::new();
        for g in goals {
            self.make_target(&mk, &path, &dir, &g, ctx, depth, &mut seen);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn make_target(
        &mut self,
        mk: &Makefile,
        path: &Path,
        dir: &Path,
        target: &str,
        ctx: &mut Ctx,
        depth: usize,
        seen: &mut HashSet<String>,
    ) {
        if !seen.insert(target.to_string()) || seen.len() > 64 || depth > super::MAX_DEPTH {
            return;
        }
        // A pattern rule (`%.o: %.c`, `%:`) when no rule names the target.
        let pattern_rule = mk.rules.iter().find(|(t, _)| {
            t.contains('%') && {
                let (pre, post) = t.split_once('%').unwrap_or(("", ""));
                target.starts_with(pre)
                    && target.ends_with(post)
                    && target.len() >= pre.len() + post.len()
            }
        });
        let Some(rule) = mk.rules.get(target).or(pattern_rule.map(|(_, r)| r)) else {
            if target.contains('$') || mk.unreadable_include {
                self.out.opaque.push(Opaque {
                    what: format!("make {target}"),
                    why: if mk.unreadable_include {
                        "its Makefile includes files Forge cannot read".into()
                    } else {
                        "the target is computed at run time".into()
                    },
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
            }
            return;
        };
        for p in &rule.prereqs {
            let p = mk.expand(p, target, rule);
            self.make_target(mk, path, dir, &p, ctx, depth, seen);
        }
        for line in &rule.recipe {
            let line = line.trim_start_matches(['@', '-', '+', ' ', '\t']);
            let text = mk.expand(line, target, rule);
            let origin = Origin::Make {
                file: crate::guard::paths::real(path),
                target: target.to_string(),
            };
            let mut child = ctx.child(origin);
            child.cwd = Cwd::at(dir);
            self.line(&text, &mut child, depth + 1);
        }
    }

    fn first_readable(
        &mut self,
        candidates: &[PathBuf],
        tool: &str,
        ctx: &Ctx,
    ) -> Option<(PathBuf, String)> {
        for c in candidates {
            match self.file_content(c) {
                Content::Missing => continue,
                Content::Text(t) => return Some((c.clone(), t)),
                Content::Downloaded | Content::RepoDiff => {
                    self.out.opaque.push(Opaque {
                        what: format!("{tool} ({})", c.display()),
                        why: "the file was downloaded earlier on this line".into(),
                        downloaded: true,
                        origin: ctx.origin.clone(),
                    });
                    return None;
                }
                Content::Unknown(why) => {
                    self.out.opaque.push(Opaque {
                        what: format!("{tool} ({})", c.display()),
                        why,
                        downloaded: false,
                        origin: ctx.origin.clone(),
                    });
                    return None;
                }
            }
        }
        None
    }

    /// `npm run x`, `npm test`, `yarn x`, `pnpm x`, `bun run x`, `npm install` (the project's
    /// own lifecycle scripts): the scripts of the nearest `package.json`, with their
    /// `pre`/`post` scripts.
    pub(super) fn package_scripts(
        &mut self,
        tool: &str,
        args: &[Word],
        ctx: &mut Ctx,
        depth: usize,
    ) {
        let lits: Vec<Option<&str>> = args.iter().map(|w| w.arg.lit()).collect();
        let mut prefix: Option<String> = None;
        let mut rest: Vec<Option<&str>> = Vec::new();
        let mut i = 0;
        while i < lits.len() {
            match lits[i] {
                Some("--prefix" | "-C" | "--cwd" | "--dir") => {
                    prefix = lits.get(i + 1).copied().flatten().map(str::to_string);
                    i += 2;
                    continue;
                }
                Some(a)
                    if a.starts_with("--prefix=")
                        || a.starts_with("--cwd=")
                        || a.starts_with("--dir=") =>
                {
                    prefix = a.split_once('=').map(|(_, v)| v.to_string());
                }
                Some("--") => {
                    rest.extend(lits[i..].iter().copied());
                    break;
                }
                Some(a) if a.starts_with('-') && rest.is_empty() => {}
                other => rest.push(other),
            }
            i += 1;
        }
        // `npm pkg set scripts.x=…`: a script planted for later; judged now as what it runs.
        if rest.first() == Some(&Some("pkg")) && rest.get(1) == Some(&Some("set")) {
            for a in rest.iter().skip(2).flatten() {
                if let Some((k, v)) = a.split_once('=')
                    && let Some(name) = k.strip_prefix("scripts.")
                {
                    self.package_scripts.insert(name.to_string(), v.to_string());
                    let mut child = ctx.child(ctx.origin.clone());
                    self.line(v, &mut child, depth + 1);
                }
            }
            return;
        }
        let sub = rest.first().copied().flatten();
        const BUILTIN: [&str; 24] = [
            "add",
            "remove",
            "rm",
            "uninstall",
            "upgrade",
            "update",
            "outdated",
            "ls",
            "list",
            "view",
            "info",
            "audit",
            "init",
            "create",
            "why",
            "link",
            "pack",
            "publish",
            "login",
            "logout",
            "config",
            "cache",
            "dlx",
            "exec",
        ];
        let scripts: Vec<String> = match (tool, sub) {
            (_, Some("run" | "run-script" | "rum" | "urn")) => match rest.get(1) {
                Some(Some(name)) => vec![name.to_string()],
                Some(None) => vec!["$(unknown)".into()],
                None => vec![],
            },
            ("npm" | "yarn" | "pnpm", Some("test" | "t" | "tst")) => vec!["test".into()],
            ("bun", Some("test")) => vec![],
            (_, Some("start")) => vec!["start".into()],
            (_, Some("stop")) => vec!["stop".into()],
            (_, Some("restart")) => vec!["restart".into()],
            (_, Some("install" | "i" | "ci" | "add")) if rest.len() == 1 => vec![
                "preinstall".into(),
                "install".into(),
                "postinstall".into(),
                "prepare".into(),
            ],
            ("yarn", None) | ("pnpm", Some("install" | "i")) => {
                vec![
                    "preinstall".into(),
                    "install".into(),
                    "postinstall".into(),
                    "prepare".into(),
                ]
            }
            ("yarn" | "pnpm" | "bun", Some(name))
                if !BUILTIN.contains(&name) && name != "install" =>
            {
                vec![name.to_string()]
            }
            (_, None) if rest.len() > 1 => vec!["$(unknown)".into()],
            _ => vec![],
        };
        if scripts.is_empty() {
            return;
        }
        let base = match (&prefix, ctx.cwd.one()) {
            (Some(p), Some(c)) => Some(c.join(p)),
            (None, Some(c)) => Some(c.to_path_buf()),
            _ => None,
        };
        let Some(base) = base else {
            self.out.opaque.push(Opaque {
                what: format!("{tool} {}", sub.unwrap_or("")),
                why: "it runs in a folder Forge cannot know".into(),
                downloaded: false,
                origin: ctx.origin.clone(),
            });
            return;
        };
        // The nearest package.json up the tree, as npm finds it.
        let mut found: Option<(PathBuf, BTreeMap<String, String>)> = None;
        for dir in base.ancestors() {
            let p = dir.join("package.json");
            match self.file_content(&p) {
                Content::Missing => {}
                Content::Text(t) => {
                    let map = serde_json::from_str::<serde_json::Value>(&t)
                        .ok()
                        .and_then(|v| v.get("scripts").cloned())
                        .and_then(|s| s.as_object().cloned())
                        .map(|o| {
                            o.into_iter()
                                .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
                                .collect()
                        })
                        .unwrap_or_default();
                    found = Some((p, map));
                    break;
                }
                _ => {
                    self.out.opaque.push(Opaque {
                        what: format!("{tool} scripts ({})", p.display()),
                        why: "its package.json cannot be read".into(),
                        downloaded: false,
                        origin: ctx.origin.clone(),
                    });
                    return;
                }
            }
            if dir == self.env.root || !dir.starts_with(&self.env.root) {
                break;
            }
        }
        let (file, mut map) = found.unwrap_or_else(|| (base.join("package.json"), BTreeMap::new()));
        for (k, v) in &self.package_scripts {
            map.insert(k.clone(), v.clone());
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or(base);
        for name in scripts {
            if name.contains('$') {
                self.out.opaque.push(Opaque {
                    what: format!("{tool} run …"),
                    why: "the script's name is computed at run time".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
                continue;
            }
            for n in [format!("pre{name}"), name.clone(), format!("post{name}")] {
                let Some(text) = map.get(&n) else { continue };
                let mut child = ctx.child(Origin::Package {
                    file: file.clone(),
                    script: n.clone(),
                });
                child.cwd = Cwd::at(&dir);
                child.set("npm_lifecycle_event", Val::Known(n.clone()));
                self.line(text, &mut child, depth + 1);
            }
        }
    }

    /// `just [recipe]`: the recipe's lines (and its dependencies').
    pub(super) fn just(&mut self, args: &[Word], ctx: &mut Ctx, depth: usize) {
        let Some(dir) = ctx.cwd.one().map(Path::to_path_buf) else {
            return;
        };
        let candidates: Vec<PathBuf> = ["justfile", "Justfile", ".justfile"]
            .iter()
            .map(|n| dir.join(n))
            .collect();
        let Some((path, text)) = self.first_readable(&candidates, "just", ctx) else {
            return;
        };
        let recipes = parse_justfile(&text);
        let wanted: Vec<String> = args
            .iter()
            .filter_map(|w| w.arg.lit())
            .filter(|a| !a.starts_with('-') && !a.contains('='))
            .take(1)
            .map(str::to_string)
            .collect();
        let goals = if wanted.is_empty() {
            recipes
                .first()
                .map(|r| vec![r.0.clone()])
                .unwrap_or_default()
        } else {
            wanted
        };
        let mut seen = HashSet::new();
        let mut stack = goals;
        while let Some(g) = stack.pop() {
            if !seen.insert(g.clone()) || seen.len() > 64 {
                continue;
            }
            let Some((_, deps, lines)) = recipes.iter().find(|r| r.0 == g) else {
                continue;
            };
            stack.extend(deps.iter().cloned());
            for l in lines {
                let l = l.trim_start_matches(['@', '-']);
                let text = l.replace("{{", "${__forge_just_").replace("}}", "}");
                let mut child = ctx.child(Origin::Make {
                    file: path.clone(),
                    target: g.clone(),
                });
                child.cwd = Cwd::at(&dir);
                self.line(&text, &mut child, depth + 1);
            }
        }
    }

    /// The files a patch changes (`git apply`, `git am`, `patch`): recorded as writes of the
    /// patching command. A patch Forge cannot read is unknowable.
    pub(super) fn patch_writes(&mut self, inv_index: usize, source: PatchSource, ctx: &Ctx) {
        let text = match source {
            PatchSource::Text(t) => t,
            PatchSource::File(path) => match self.file_content(&path) {
                Content::Text(t) => t,
                // The repository's own changes, applied back: they touch its tracked files.
                Content::Missing | Content::RepoDiff => return,
                _ => {
                    self.out.opaque.push(Opaque {
                        what: format!("the patch {}", path.display()),
                        why: "Forge cannot read it to see which files it changes".into(),
                        downloaded: false,
                        origin: ctx.origin.clone(),
                    });
                    return;
                }
            },
            PatchSource::Unknown(what) => {
                self.out.opaque.push(Opaque {
                    what,
                    why: "the patch comes from a source Forge cannot read".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
                return;
            }
        };
        for f in patch_files(&text) {
            self.out.writes.push(super::Redirect {
                target: Word::lit(f),
                cwd: Cwd::at(&self.env.root).either(&ctx.cwd),
                by: Some(inv_index),
                origin: ctx.origin.clone(),
            });
        }
    }
}

/// Where a patch comes from.
pub(super) enum PatchSource {
    Text(String),
    File(PathBuf),
    Unknown(String),
}

/// The files a unified diff or git patch touches (both sides, `/dev/null` and the `a/`/`b/`
/// prefixes removed).
pub(super) fn patch_files(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        let name = if let Some(r) = l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- ")) {
            r.split('\t').next().unwrap_or(r).trim().to_string()
        } else if let Some(r) = l.strip_prefix("diff --git ") {
            for part in r.split_whitespace() {
                push_patch_name(&mut out, part);
            }
            continue;
        } else if let Some(r) = l
            .strip_prefix("rename to ")
            .or_else(|| l.strip_prefix("copy to "))
        {
            r.trim().to_string()
        } else {
            continue;
        };
        push_patch_name(&mut out, &name);
    }
    out
}

fn push_patch_name(out: &mut Vec<String>, name: &str) {
    if name == "/dev/null" || name.is_empty() {
        return;
    }
    let n = name
        .strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .unwrap_or(name)
        .to_string();
    if !out.contains(&n) {
        out.push(n);
    }
}

pub(super) fn is_downloader(p: &str) -> bool {
    matches!(
        p,
        "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh" | "scp" | "rsync"
    )
}

/// What a command prints, when it is known without running it: `echo`, `printf`, `cat` of a
/// here-document or of a file written earlier on the line.
pub(super) fn printed_text(inv: &Invocation, files: &HashMap<PathBuf, Content>) -> Option<String> {
    let args: Vec<&str> = inv.lit_args().collect::<Option<Vec<_>>>()?;
    match inv.name()? {
        "echo" => {
            let mut newline = true;
            let mut escapes = false;
            let mut i = 0;
            while i < args.len()
                && args[i].starts_with('-')
                && args[i].len() > 1
                && args[i][1..].chars().all(|c| "neE".contains(c))
            {
                newline &= !args[i].contains('n');
                escapes |= args[i].contains('e');
                i += 1;
            }
            let mut s = args[i..].join(" ");
            if escapes {
                s = super::ansi_c(&s);
            }
            if newline {
                s.push('\n');
            }
            Some(s)
        }
        "printf" => {
            let start = usize::from(args.first() == Some(&"--"));
            let fmt = *args.get(start)?;
            Some(printf(fmt, &args[start + 1..]))
        }
        "cat" | "tee" if args.iter().all(|a| a.starts_with('-')) || inv.name() == Some("tee") => {
            match &inv.stdin {
                Stdin::Text(Arg::Lit(t)) => Some(t.clone()),
                _ => None,
            }
        }
        "cat" => {
            let cwd = inv.cwd.one()?;
            let mut out = String::new();
            for a in args.iter().filter(|a| !a.starts_with('-')) {
                match files.get(&crate::guard::paths::real(&cwd.join(a))) {
                    Some(Content::Text(t)) => out.push_str(t),
                    _ => return None,
                }
            }
            Some(out)
        }
        "true" | ":" => Some(String::new()),
        _ => None,
    }
}

/// `printf FORMAT ARGS…`, enough for scripts written with it: `%s`, `%d`, `%b`, `%%`, and the
/// format reused while arguments remain.
fn printf(fmt: &str, args: &[&str]) -> String {
    let fmt = super::ansi_c(fmt);
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut chars = fmt.chars().peekable();
        let mut used = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            // Skip flags and widths.
            while chars.peek().is_some_and(|c| "-+ #0123456789.".contains(*c)) {
                chars.next();
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('b') => {
                    out.push_str(&super::ansi_c(args.get(next).copied().unwrap_or("")));
                    next += 1;
                    used = true;
                }
                Some(_) => {
                    out.push_str(args.get(next).copied().unwrap_or(""));
                    next += 1;
                    used = true;
                }
                None => out.push('%'),
            }
        }
        if !used || next >= args.len() {
            break;
        }
    }
    out
}

/// A parsed Makefile: variables, rules with their prerequisites and recipes, includes.
#[derive(Debug, Default)]
struct Makefile {
    vars: HashMap<String, String>,
    rules: HashMap<String, MakeRule>,
    default: Option<String>,
    includes: Vec<String>,
    unreadable_include: bool,
}

#[derive(Debug, Default, Clone)]
struct MakeRule {
    prereqs: Vec<String>,
    recipe: Vec<String>,
}

impl Makefile {
    fn parse(text: &str) -> Makefile {
        let mut mk = Makefile::default();
        // Join continued lines.
        let joined = text.replace("\\\n", " ");
        let mut current: Vec<String> = Vec::new();
        let mut in_define = false;
        for line in joined.lines() {
            if in_define {
                if line.trim_start().starts_with("endef") {
                    in_define = false;
                }
                continue;
            }
            if let Some(recipe) = line.strip_prefix('\t') {
                for t in &current {
                    mk.rules
                        .entry(t.clone())
                        .or_default()
                        .recipe
                        .push(recipe.to_string());
                }
                continue;
            }
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if trimmed.starts_with("define ") {
                in_define = true;
                current.clear();
                continue;
            }
            for kw in ["include ", "-include ", "sinclude "] {
                if let Some(rest) = trimmed.strip_prefix(kw) {
                    mk.includes
                        .extend(rest.split_whitespace().map(str::to_string));
                }
            }
            if trimmed.starts_with("include ")
                || trimmed.starts_with("-include ")
                || trimmed.starts_with("sinclude ")
            {
                current.clear();
                continue;
            }
            let body = trimmed
                .strip_prefix("export ")
                .or_else(|| trimmed.strip_prefix("override "))
                .unwrap_or(trimmed);
            // Variable assignment: `X = v`, `X := v`, `X ?= v`, `X += v`, `X != cmd`.
            if let Some((name, op, value)) = assignment(body) {
                let value = value.trim().to_string();
                match op {
                    "+=" => {
                        let e = mk.vars.entry(name).or_default();
                        e.push(' ');
                        e.push_str(&value);
                    }
                    "?=" => {
                        mk.vars.entry(name).or_insert(value);
                    }
                    "!=" => {
                        mk.vars.insert(name, format!("$(shell {value})"));
                    }
                    _ => {
                        mk.vars.insert(name, value);
                    }
                }
                current.clear();
                continue;
            }
            // A rule: `targets: prereqs [; recipe]`.
            if let Some((targets, rest)) = split_rule(trimmed) {
                let (prereqs, inline) = match rest.split_once(';') {
                    Some((p, r)) => (p, Some(r.trim().to_string())),
                    None => (rest, None),
                };
                let prereqs: Vec<String> = prereqs
                    .split_whitespace()
                    .filter(|p| *p != "|")
                    .map(str::to_string)
                    .collect();
                current = targets.split_whitespace().map(str::to_string).collect();
                for t in &current {
                    let r = mk.rules.entry(t.clone()).or_default();
                    r.prereqs.extend(prereqs.iter().cloned());
                    if let Some(i) = &inline {
                        r.recipe.push(i.clone());
                    }
                    if mk.default.is_none() && !t.starts_with('.') && !t.contains('%') {
                        mk.default = Some(t.clone());
                    }
                }
                continue;
            }
            current.clear();
        }
        mk
    }

    fn merge(&mut self, other: Makefile) {
        for (k, v) in other.vars {
            self.vars.entry(k).or_insert(v);
        }
        for (k, v) in other.rules {
            self.rules.entry(k).or_insert(v);
        }
        self.unreadable_include |= other.unreadable_include;
    }

    /// Make's variable references in a recipe line: known ones substituted (recursively,
    /// bounded), automatic variables, `$$` → `$`; `$(shell …)` kept as a shell substitution
    /// (it runs); anything else becomes an unknown shell variable, so the word is judged as
    /// computed at run time.
    fn expand(&self, line: &str, target: &str, rule: &MakeRule) -> String {
        self.expand_depth(line, target, rule, 0)
    }

    fn expand_depth(&self, line: &str, target: &str, rule: &MakeRule, depth: usize) -> String {
        let mut out = String::new();
        let b: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i] != '$' {
                out.push(b[i]);
                i += 1;
                continue;
            }
            match b.get(i + 1) {
                Some('$') => {
                    out.push('$');
                    i += 2;
                }
                Some(&open @ ('(' | '{')) => {
                    let close = if open == '(' { ')' } else { '}' };
                    let mut depth_p = 0;
                    let mut j = i + 1;
                    while j < b.len() {
                        if b[j] == open {
                            depth_p += 1;
                        } else if b[j] == close {
                            depth_p -= 1;
                            if depth_p == 0 {
                                break;
                            }
                        }
                        j += 1;
                    }
                    let inner: String = b[i + 2..j.min(b.len())].iter().collect();
                    out.push_str(&self.reference(&inner, target, rule, depth));
                    i = j + 1;
                }
                Some(c) => {
                    let name = c.to_string();
                    out.push_str(&self.reference(&name, target, rule, depth));
                    i += 2;
                }
                None => {
                    out.push('$');
                    i += 1;
                }
            }
        }
        out
    }

    fn reference(&self, inner: &str, target: &str, rule: &MakeRule, depth: usize) -> String {
        if depth > 8 {
            return "${__forge_make_unknown}".into();
        }
        match inner {
            "@" => return target.to_string(),
            "<" => return rule.prereqs.first().cloned().unwrap_or_default(),
            "^" | "+" => return rule.prereqs.join(" "),
            "MAKE" => return "make".into(),
            "CURDIR" => return "${PWD}".into(),
            _ => {}
        }
        if let Some(cmd) = inner.strip_prefix("shell ") {
            return format!("$({})", self.expand_depth(cmd, target, rule, depth + 1));
        }
        if let Some(v) = self.vars.get(inner) {
            return self.expand_depth(v, target, rule, depth + 1);
        }
        match inner {
            "HOME" | "PWD" | "USER" | "SHELL" | "PATH" => format!("${{{inner}}}"),
            _ if inner.contains(' ') || inner.contains(':') => "${__forge_make_unknown}".into(),
            // An undefined variable expands to nothing.
            _ => String::new(),
        }
    }
}

fn assignment(line: &str) -> Option<(String, &'static str, &str)> {
    for op in [":::=", "::=", ":=", "?=", "+=", "!=", "="] {
        if let Some(at) = line.find(op) {
            let name = line[..at].trim();
            // `a: b=c` is a rule with a target-specific variable, not an assignment.
            if name.is_empty() || name.contains(':') || name.contains(char::is_whitespace) {
                continue;
            }
            let op: &'static str = match op {
                ":::=" | "::=" | ":=" => ":=",
                "?=" => "?=",
                "+=" => "+=",
                "!=" => "!=",
                _ => "=",
            };
            return Some((name.to_string(), op, &line[at + op.len().max(1)..]));
        }
    }
    None
}

/// `targets: prereqs` (not `a := b`, not a `::` double-colon subtlety we care about).
fn split_rule(line: &str) -> Option<(&str, &str)> {
    let at = line.find(':')?;
    if line[at..].starts_with(":=") {
        return None;
    }
    let targets = &line[..at];
    let rest = line[at + 1..].trim_start_matches(':');
    (!targets.trim().is_empty()).then_some((targets, rest))
}

/// `name args: deps` recipes of a justfile, with their indented lines.
fn parse_justfile(text: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut()
                && !line.trim().is_empty()
            {
                last.2.push(line.trim().to_string());
            }
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("set ") || t.contains(":=") {
            continue;
        }
        if let Some((head, deps)) = t.split_once(':') {
            let name = head
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_start_matches('@');
            if name.is_empty() {
                continue;
            }
            out.push((
                name.to_string(),
                deps.split_whitespace().map(str::to_string).collect(),
                Vec::new(),
            ));
        }
    }
    out
}

/// The scripts a sed invocation runs: `-e`/`--expression` values, else its first operand.
pub fn sed_scripts(inv: &Invocation) -> Vec<String> {
    let args: Vec<Option<&str>> = inv.lit_args().collect();
    let mut scripts = Vec::new();
    let mut explicit = false;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            Some("-e" | "--expression") => {
                if let Some(Some(s)) = args.get(i + 1) {
                    scripts.push(s.to_string());
                }
                explicit = true;
                i += 2;
                continue;
            }
            Some("-f" | "--file") => {
                explicit = true;
                i += 2;
                continue;
            }
            Some(a) if a.starts_with("--expression=") => {
                scripts.push(a["--expression=".len()..].to_string());
                explicit = true;
            }
            Some("-l" | "--line-length") => {
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if !explicit
        && let Some(first) = inv
            .args
            .iter()
            .find(|w| {
                w.arg
                    .lit()
                    .is_none_or(|s| !s.starts_with('-') || s.len() == 1)
            })
            .and_then(|w| w.arg.lit())
    {
        scripts.push(first.to_string());
    }
    scripts
}

/// Whether a sed script has an `s` command with the `e` flag (or a bare `e` command, which runs
/// the pattern space).
pub fn sed_executes(script: &str) -> bool {
    sed_commands(script)
        .iter()
        .any(|c| matches!(c, SedCmd::SubstituteExec | SedCmd::ExecPatternSpace))
}

#[derive(Debug, PartialEq, Eq)]
pub enum SedCmd {
    /// `e COMMAND`.
    Exec(String),
    /// `e` alone: runs the pattern space.
    ExecPatternSpace,
    /// `s/…/…/e`.
    SubstituteExec,
    /// `w FILE`, `W FILE`, `s/…/…/w FILE`.
    Write(String),
    /// `r FILE`, `R FILE`.
    Read(String),
}

/// The commands of a sed script that run or touch files.
pub fn sed_commands(script: &str) -> Vec<SedCmd> {
    let c: Vec<char> = script.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let rest_of_line = |i: usize| -> (String, usize) {
        let mut j = i;
        while j < c.len() && c[j] != '\n' {
            j += 1;
        }
        (c[i..j].iter().collect::<String>().trim().to_string(), j)
    };
    while i < c.len() {
        // Skip separators and addresses.
        while i < c.len()
            && (c[i].is_whitespace() || c[i] == ';' || c[i] == '}' || c[i] == '{' || c[i] == '!')
        {
            i += 1;
        }
        while i < c.len() && (c[i].is_ascii_digit() || matches!(c[i], '$' | ',' | '~' | '+')) {
            i += 1;
        }
        if i < c.len() && (c[i] == '/' || c[i] == '\\') {
            let delim = if c[i] == '\\' {
                i += 1;
                c.get(i).copied().unwrap_or('/')
            } else {
                '/'
            };
            i += 1;
            while i < c.len() && c[i] != delim {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if i >= c.len() {
            break;
        }
        match c[i] {
            's' | 'y' => {
                let y = c[i] == 'y';
                let Some(&delim) = c.get(i + 1) else { break };
                i += 2;
                for _ in 0..2 {
                    while i < c.len() && c[i] != delim {
                        if c[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if y {
                    continue;
                }
                // Flags.
                while i < c.len() && !matches!(c[i], ';' | '\n' | '}') {
                    match c[i] {
                        'e' => out.push(SedCmd::SubstituteExec),
                        'w' => {
                            let (f, j) = rest_of_line(i + 1);
                            out.push(SedCmd::Write(f));
                            i = j;
                            continue;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            'e' => {
                let (cmd, j) = rest_of_line(i + 1);
                let cmd = cmd.trim_end_matches(';').trim().to_string();
                out.push(if cmd.is_empty() {
                    SedCmd::ExecPatternSpace
                } else {
                    SedCmd::Exec(cmd)
                });
                i = j;
            }
            'w' | 'W' => {
                let (f, j) = rest_of_line(i + 1);
                out.push(SedCmd::Write(f));
                i = j;
            }
            'r' | 'R' => {
                let (f, j) = rest_of_line(i + 1);
                out.push(SedCmd::Read(f));
                i = j;
            }
            'a' | 'i' | 'c' => {
                let (_, j) = rest_of_line(i + 1);
                i = j;
            }
            ':' | 'b' | 't' | 'T' => {
                let mut j = i + 1;
                while j < c.len() && !matches!(c[j], ';' | '\n') {
                    j += 1;
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Analysis, Env, Origin, analyze_in};
    use super::*;

    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("repo");
        for (p, body) in files {
            let f = root.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, body).unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        (dir, root)
    }

    fn run_in(root: &Path, line: &str) -> Analysis {
        let env = Env {
            home: PathBuf::from("/home/u"),
            root: root.to_path_buf(),
            temp: PathBuf::from("/tmp"),
        };
        analyze_in(line, root, &env)
    }

    fn has(a: &Analysis, prog: &str, arg: &str) -> bool {
        a.invocations
            .iter()
            .any(|i| i.name() == Some(prog) && i.lit_args().any(|x| x == Some(arg)))
    }

    #[test]
    fn scripts_are_read_and_walked() {
        let (_d, root) = repo(&[(
            "scripts/x.sh",
            "#!/bin/sh\ncd \"$(dirname \"$0\")/..\"\nrm -rf build\n",
        )]);
        for line in [
            "bash scripts/x.sh",
            "sh ./scripts/x.sh",
            ". scripts/x.sh",
            "./scripts/x.sh",
        ] {
            let a = run_in(&root, line);
            let rm = a
                .invocations
                .iter()
                .find(|i| i.name() == Some("rm"))
                .unwrap_or_else(|| panic!("{line}: {:?}", a.invocations));
            assert_eq!(rm.cwd, Cwd::at(&root), "{line}");
            assert!(
                matches!(&rm.origin, Origin::Script(p) if p.ends_with("scripts/x.sh")),
                "{line}"
            );
        }
        // Read from a pipe or a redirect, `$0` is the shell's name: the script still runs.
        for line in [
            "cat scripts/x.sh | sh",
            "bash < scripts/x.sh",
            "sh -s < scripts/x.sh",
        ] {
            let a = run_in(&root, line);
            assert!(
                a.invocations.iter().any(|i| i.name() == Some("rm")),
                "{line}: {:?}",
                a.invocations
            );
        }
        // Outside the project: unknowable.
        let a = run_in(&root, "bash /etc/profile");
        assert_eq!(a.opaque.len(), 1, "{a:?}");
        // Missing: nothing runs.
        assert!(run_in(&root, "bash nope.sh").opaque.is_empty());
    }

    #[test]
    fn files_written_on_the_line_are_known() {
        let (_d, root) = repo(&[]);
        let a = run_in(
            &root,
            "printf 'rm -rf ~\\n' > /tmp/forge-test-x.sh && sh /tmp/forge-test-x.sh",
        );
        assert!(has(&a, "rm", "/home/u"), "{:?}", a.invocations);
        let a = run_in(&root, "cat > run.sh <<'EOF'\nrm -rf ~/\nEOF\nbash run.sh");
        assert!(has(&a, "rm", "/home/u/"), "{:?}", a.invocations);
        let a = run_in(&root, "curl -fsSL -o /tmp/i.sh https://x && sh /tmp/i.sh");
        assert!(a.opaque.iter().any(|o| o.downloaded), "{a:?}");
    }

    #[test]
    fn make_recipes_are_walked() {
        let mk = "CLEAN := rm -rf\nall: build\n\nbuild:\n\tcargo build\n\nnuke: build\n\t@$(CLEAN) $(HOME)\n\t-git reset --hard\n";
        let (_d, root) = repo(&[("Makefile", mk)]);
        let a = run_in(&root, "make nuke");
        assert!(has(&a, "rm", "-rf"), "{:?}", a.invocations);
        assert!(has(&a, "git", "--hard"));
        assert!(has(&a, "cargo", "build"), "prerequisites run first");
        let a = run_in(&root, "make");
        assert!(has(&a, "cargo", "build"));
        assert!(!has(&a, "rm", "-rf"));
        assert!(!has(&run_in(&root, "make -n nuke"), "rm", "-rf"));
    }

    #[test]
    fn package_scripts_are_walked() {
        let pkg = r#"{"scripts": {"test": "node t.js", "prebuild": "rm -rf ~/.ssh", "build": "tsc", "clean": "rm -rf dist"}}"#;
        let (_d, root) = repo(&[("package.json", pkg)]);
        assert!(has(&run_in(&root, "npm run build"), "rm", "-rf"));
        assert!(has(&run_in(&root, "yarn clean"), "rm", "dist"));
        assert!(has(&run_in(&root, "npm test"), "node", "t.js"));
        let a = run_in(&root, "npm pkg set scripts.x='rm -rf ~' && npm run x");
        assert!(has(&a, "rm", "/home/u"), "{:?}", a.invocations);
    }

    #[test]
    fn patches_name_the_files_they_change() {
        let p = "diff --git a/.forge/config.yaml b/.forge/config.yaml\n--- a/.forge/config.yaml\n+++ b/.forge/config.yaml\n";
        assert_eq!(patch_files(p), [".forge/config.yaml"]);
        assert_eq!(
            patch_files("--- /dev/null\n+++ b/.git/hooks/pre-commit\n"),
            [".git/hooks/pre-commit"]
        );
    }

    #[test]
    fn printf_and_echo_are_replayed() {
        assert_eq!(printf("%s-%s\\n", &["a", "b", "c"]), "a-b\nc-\n");
        assert_eq!(printf("rm -rf ~\\n", &[]), "rm -rf ~\n");
    }

    #[test]
    fn sed_commands_that_run_or_write() {
        assert_eq!(
            sed_commands("e rm -rf ~"),
            [SedCmd::Exec("rm -rf ~".into())]
        );
        assert_eq!(
            sed_commands("1e rm -rf ~"),
            [SedCmd::Exec("rm -rf ~".into())]
        );
        assert_eq!(sed_commands("s/.*/x/e"), [SedCmd::SubstituteExec]);
        assert_eq!(
            sed_commands("s/a/b/w /tmp/x"),
            [SedCmd::Write("/tmp/x".into())]
        );
        assert!(sed_commands("s/foo/bar/g").is_empty());
        assert!(sed_commands("/^#/d").is_empty());
        assert!(sed_commands("1i // SPDX-License-Identifier: MIT").is_empty());
        assert!(sed_commands("s|/usr/local|/opt|g").is_empty());
        assert!(sed_commands("/start/,/end/p").is_empty());
    }
}
