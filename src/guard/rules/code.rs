//! Code Forge cannot read or cannot follow: a line that does not parse, a program computed at
//! run time, a script outside the project (or too large, or not a file), and code handed to an
//! interpreter inline.
//!
//! **The inline-code policy.** Code given to an interpreter on the command line or on its
//! input (`python -c`, `node -e`, `ruby -e`, `perl -e`, `php -r`, `lua -e`, `Rscript -e`,
//! `awk '…'`, `sed 's/…/…/e'`, `python3 - <<EOF`, a script in the temp folder) is allowed when
//! it only computes and processes text: it may read files, print, parse JSON, run regular
//! expressions. When it reaches for the system — starts processes, writes, deletes or renames
//! files, opens network connections, or evaluates code it builds at run time (`eval`,
//! `getattr(os, …)`, `require(x)`, `send(:…)`, `$f()`) — a person is asked, because no static
//! reading of a general-purpose language is complete: the same act can always be spelled
//! another way. Every interpreter gets the same rule; each language's spellings are listed
//! below, and those lists are known to be incomplete. String literals, comments and regular
//! expressions are removed before looking, so `print(platform.system())` or
//! `awk '/spawn/'` are not mistaken for system calls. Inside the session sandbox, inline code
//! that only touches files and processes is contained and allowed with a note; code that
//! opens network connections, or evaluates code it builds (which may be network code in
//! disguise: `exec(bytes.fromhex(…))`, `globalThis['fe'+'tch']`), is asked about either way,
//! since the sandbox leaves the network open.

use super::inline::{Lang, Reach, lang_of, scan};
use super::{Judge, Rule};
use crate::guard::Decision;
use crate::guard::paths::Place;
use crate::guard::shell::{
    Analysis, Arg, Content, Invocation, Opaque, Origin, Stdin, sed_executes, sed_scripts,
};

pub const UNPARSEABLE: Rule = Rule {
    id: "unparseable",
    decision: Decision::Deny,
    summary: "a command line that cannot be parsed (or is too large or deep) is judged as its most dangerous reading; configurable to `ask`",
};
pub const DYNAMIC_PROGRAM: Rule = Rule {
    id: "dynamic-program",
    decision: Decision::Deny,
    summary: "a program name computed at run time (`$(echo rm)`, `bash -c \"$X\"`, `eval \"$X\"`, a script piped into a shell); configurable to `ask`",
};
pub const UNREAD_CODE: Rule = Rule {
    id: "unread-code",
    decision: Decision::Ask,
    summary: "code Forge cannot read: a script or Makefile outside the project (or too large, or unreadable), a patch it cannot see, `sed s///e`, jobs scheduled or run remotely",
};
pub const INLINE_CODE: Rule = Rule {
    id: "inline-code",
    decision: Decision::Ask,
    summary: "inline interpreter code that starts processes, writes files, opens connections or evaluates built code (`python -c`, `node -e`, `ruby -e`, `perl -e`, `php -r`, `lua -e`, `awk`, …); plain computation over files is allowed",
};

pub(super) fn judge_problems(j: &mut Judge, a: &Analysis) {
    for p in &a.problems {
        j.hit(
            &UNPARSEABLE,
            format!("Forge cannot judge this command safely ({p}); write it as plain commands without computed parts"),
        );
    }
}

pub(super) fn judge_opaque(j: &mut Judge, o: &Opaque) {
    if o.downloaded {
        super::net::downloaded_code(j, &o.what, &o.origin);
        return;
    }
    let reason = format!(
        "`{}` runs code Forge cannot read ({}), so a person should look at it first",
        o.what, o.why
    );
    // Jobs that run later, elsewhere or in a container are outside the session sandbox.
    if matches!(
        o.origin,
        Origin::Later(_) | Origin::Remote(_) | Origin::Container(_)
    ) {
        j.hit_at(&UNREAD_CODE, &o.origin, reason);
    } else {
        j.hit_contained(&UNREAD_CODE, &o.origin, reason);
    }
}

pub(super) fn judge_dynamic(j: &mut Judge, _a: &Analysis, inv: &Invocation) {
    let Arg::Dyn { raw, programs } = &inv.program else {
        return;
    };
    if programs
        .iter()
        .any(|p| super::net::DOWNLOADERS.contains(&p.as_str()))
    {
        j.hit_at(&super::net::PIPE_TO_SHELL, &inv.origin, format!("`{raw}` runs code straight from the network; download the file, review it, then run it"));
        return;
    }
    j.hit_unknown(
        &DYNAMIC_PROGRAM,
        &inv.origin,
        format!("the program `{raw}` is computed at run time, so Forge cannot tell what runs; write the command out"),
    );
}

pub(super) fn judge(j: &mut Judge, a: &Analysis, inv: &Invocation) {
    let Some(name) = inv.name() else { return };
    // A library preloaded into every program the command starts.
    for (n, v) in &inv.env {
        if n == "LD_PRELOAD" {
            j.hit_contained(
                &UNREAD_CODE,
                &inv.origin,
                format!(
                    "`LD_PRELOAD={}` loads code Forge cannot read into `{}`",
                    v.display(),
                    inv.display()
                ),
            );
        }
    }
    if name == "sed" {
        sed(j, inv);
        return;
    }
    let Some(lang) = lang_of(name) else { return };
    let shown = crate::text::clip(&inv.display(), 120);
    for (code, from) in code_of(inv, lang) {
        match code {
            Code::Text(text) => {
                let reach = scan(lang, &text);
                literal_paths(j, inv, &text, &reach, &shown);
                if lang == Lang::Other && !reach.any() {
                    j.hit_contained(
                        &INLINE_CODE,
                        &inv.origin,
                        format!(
                            "`{shown}` runs {from} {name} code, a language Forge does not read, so a person decides (or put it in a file a person reviews)"
                        ),
                    );
                }
                if reach.any() {
                    let reason = format!(
                        "`{shown}` runs {from} {name} code that {}; Forge does not run or fully parse inline code and no list of such calls is complete, so a person decides (or put it in a file a person reviews)",
                        reach.describe()
                    );
                    if reach.network.is_some() || reach.dynamic.is_some() {
                        j.hit_at(&INLINE_CODE, &inv.origin, reason);
                    } else {
                        j.hit_contained(&INLINE_CODE, &inv.origin, reason);
                    }
                }
            }
            Code::File(raw) => script_file(j, a, inv, lang, &raw, name, &shown),
            Code::Unknown(why) => {
                j.hit_contained(
                    &INLINE_CODE,
                    &inv.origin,
                    format!("`{shown}` runs {name} code {why}, which Forge cannot read"),
                );
            }
        }
    }
}

/// Paths named by string literals in inline code: a secret it names is read (`print(open('.env')
/// .read())`); Forge's or the agents' files named by code that writes files are written.
fn literal_paths(j: &mut Judge, inv: &Invocation, code: &str, reach: &Reach, shown: &str) {
    let home = j.paths.home.clone();
    for lit in string_literals(code) {
        if lit.len() < 2 || lit.len() > 300 || lit.contains(char::is_whitespace) {
            continue;
        }
        let mut cands: Vec<std::path::PathBuf> = Vec::new();
        if let Some(rest) = lit.strip_prefix("~/") {
            cands.push(home.join(rest));
        } else if lit.starts_with('/') {
            cands.push(std::path::PathBuf::from(&lit));
            // `homedir() + '/.ssh/id_rsa'`
            if lit.starts_with("/.") {
                cands.push(home.join(lit.trim_start_matches('/')));
            }
        } else {
            cands.extend(inv.cwd.paths().iter().map(|c| c.join(&lit)));
            if lit.starts_with('.') {
                cands.push(home.join(&lit));
            }
        }
        for c in cands {
            let p = j
                .paths
                .resolve(&c.display().to_string(), std::path::Path::new("/"));
            if let Some(kind) = crate::guard::paths::secret_kind(&p, &home) {
                j.hit_at(
                    &super::fs::SECRETS,
                    &inv.origin,
                    format!(
                        "`{shown}` names {} ({kind}) in its code; agents may not read secrets",
                        p.display()
                    ),
                );
                return;
            }
            if reach.files.is_some() {
                let rule = match j.paths.place(&p) {
                    Place::Git | Place::ForgeState | Place::ForgeRunState => {
                        Some(&super::forge::FORGE_STATE)
                    }
                    Place::AgentConfig => Some(&super::forge::AGENT_CONFIG),
                    _ => None,
                };
                if let Some(rule) = rule {
                    j.hit_at(
                        rule,
                        &inv.origin,
                        format!(
                            "`{shown}` writes files and names {}, which agents may not change",
                            p.display()
                        ),
                    );
                    return;
                }
            }
        }
    }
}

/// The contents of the quoted strings in code (`'…'`, `"…"`, `` `…` ``).
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut s = String::new();
        let mut closed = false;
        while let Some(d) = chars.next() {
            if d == '\\' {
                if let Some(e) = chars.next() {
                    s.push(e);
                }
                continue;
            }
            if d == c {
                closed = true;
                break;
            }
            s.push(d);
        }
        if closed {
            out.push(s);
        }
    }
    out
}

enum Code {
    Text(String),
    /// A script file operand.
    File(String),
    Unknown(&'static str),
}

/// The code an interpreter invocation runs, with where it comes from ("inline", "its input").
fn code_of(inv: &Invocation, lang: Lang) -> Vec<(Code, &'static str)> {
    let args: Vec<Option<&str>> = inv.lit_args().collect();
    let name = inv.name().unwrap_or("");
    let mut out = Vec::new();
    // Compilers that run one source file: that file, nothing inline (`cmake -E`, `go build`
    // and `java -jar` are not code here).
    let files = |ext: &str| -> Vec<(Code, &'static str)> {
        args.iter()
            .flatten()
            .filter(|a| !a.starts_with('-') && a.ends_with(ext))
            .map(|a| (Code::File(a.to_string()), "file"))
            .collect()
    };
    match name {
        "java" => return files(".java"),
        "go" if args.iter().flatten().find(|a| !a.starts_with('-')) == Some(&"run") => {
            return files(".go");
        }
        "go" => return out,
        "cmake" => {
            return args
                .iter()
                .enumerate()
                .filter_map(|(k, a)| match a {
                    Some("-P") => args.get(k + 1).copied().flatten(),
                    Some(a) if a.starts_with("-P") && a.len() > 2 => Some(&a[2..]),
                    _ => None,
                })
                .map(|f| (Code::File(f.to_string()), "file"))
                .collect();
        }
        _ => {}
    }
    let mut i = 0;
    let mut script_given = false;
    // Options that take a value (not code) per interpreter.
    let value_opts: &[&str] = match lang {
        Lang::Python => &["-W", "-X", "-Q"],
        Lang::Js => &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--input-type",
            "-C",
            "--conditions",
        ],
        Lang::Ruby => &["-r", "-I", "-C", "-E", "-F"],
        Lang::Perl => &["-I", "-C"],
        Lang::Awk => &["-F", "-v", "-f"],
        _ => &[],
    };
    let code_opts: &[&str] = match lang {
        Lang::Python => &["-c"],
        Lang::Js => &["-e", "--eval", "-p", "--print"],
        Lang::Ruby | Lang::Lua | Lang::R => &["-e"],
        Lang::Perl => &["-e", "-E"],
        Lang::Php => &["-r"],
        Lang::Other => &[
            "-e",
            "-E",
            "-c",
            "-Command",
            "-command",
            "-eval",
            "--eval",
            "-x",
            "--execute",
        ],
        Lang::Awk => &[],
    };
    while i < args.len() {
        let Some(a) = args[i] else {
            if !script_given {
                out.push((Code::Unknown("computed at run time"), "inline"));
            }
            break;
        };
        if a == "--" {
            i += 1;
            break;
        }
        if lang == Lang::Js && name == "deno" && a == "eval" {
            if let Some(c) = args.get(i + 1) {
                out.push((
                    c.map_or(Code::Unknown("computed at run time"), |c| {
                        Code::Text(c.to_string())
                    }),
                    "inline",
                ));
            }
            return out;
        }
        if let Some(v) = a
            .strip_prefix("--eval=")
            .or_else(|| a.strip_prefix("--print="))
        {
            out.push((Code::Text(v.to_string()), "inline"));
            script_given = true;
            i += 1;
            continue;
        }
        // `python -m tools.gen`: a module of the project runs like its file.
        if lang == Lang::Python && (a == "-m" || (a.starts_with("-m") && a.len() > 2)) {
            let module = if a == "-m" {
                args.get(i + 1).copied().flatten()
            } else {
                Some(&a[2..])
            };
            if let Some(m) = module.filter(|m| !m.contains('/')) {
                let path = m.replace('.', "/");
                out.push((Code::File(format!("{path}.py")), "file"));
                out.push((Code::File(format!("{path}/__main__.py")), "file"));
            }
            return out;
        }
        // `perl -MFile::Path=rmtree`, `ruby -rfileutils`: modules loaded.
        if lang == Lang::Perl
            && let Some(m) = a.strip_prefix("-M").or_else(|| a.strip_prefix("-m"))
        {
            out.push((
                Code::Text(format!("use {};", m.replace('=', " "))),
                "inline",
            ));
            i += 1;
            continue;
        }
        if lang == Lang::Ruby
            && let Some(m) = a.strip_prefix("-r").filter(|m| !m.is_empty())
        {
            out.push((Code::Text(format!("require '{m}'")), "inline"));
            i += 1;
            continue;
        }
        let is_code_opt = code_opts.contains(&a)
            || (matches!(lang, Lang::Perl | Lang::Ruby | Lang::Python)
                && a.starts_with('-')
                && !a.starts_with("--")
                && a.len() > 2
                && code_opts.iter().any(|o| a.ends_with(&o[1..])));
        if is_code_opt {
            match args.get(i + 1) {
                Some(Some(c)) => out.push((Code::Text(c.to_string()), "inline")),
                Some(None) => out.push((Code::Unknown("computed at run time"), "inline")),
                None => {}
            }
            script_given = true;
            i += 2;
            continue;
        }
        if value_opts.contains(&a) {
            if lang == Lang::Awk && a == "-f" {
                if let Some(Some(f)) = args.get(i + 1) {
                    out.push((Code::File(f.to_string()), "file"));
                }
                script_given = true;
            }
            i += 2;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += 1;
            continue;
        }
        break;
    }
    if !script_given {
        match args.get(i).copied() {
            Some(Some(first)) if lang == Lang::Awk => {
                out.push((Code::Text(first.to_string()), "inline"))
            }
            Some(None) if lang == Lang::Awk => {
                out.push((Code::Unknown("computed at run time"), "inline"))
            }
            Some(Some("-")) | None => match &inv.stdin {
                Stdin::Text(Arg::Lit(t)) => out.push((Code::Text(t.clone()), "its input's")),
                Stdin::Text(Arg::Dyn { .. }) => out.push((
                    Code::Unknown("from input computed at run time"),
                    "its input's",
                )),
                Stdin::Pipe => {
                    if lang != Lang::Awk {
                        out.push((Code::Unknown("from a pipe"), "its input's"));
                    }
                }
                Stdin::File(w) => {
                    if let Some(f) = w.arg.lit() {
                        out.push((Code::File(f.to_string()), "file"));
                    }
                }
                Stdin::None => {}
            },
            Some(Some(file)) => out.push((Code::File(file.to_string()), "file")),
            Some(None) => out.push((Code::Unknown("from a file named at run time"), "file")),
        }
    }
    out
}

/// An interpreter running a file (`python3 x.py`, `node tools/gen.js`, a `#!/usr/bin/env ruby`
/// script run by path): read, bounded, and judged by the inline-code policy when it is in the
/// project or the temp folder, or was written earlier on the line; code elsewhere is
/// unknowable. The same policy as for inline code, because a file is how inline code is
/// disguised: `printf '…' > x.py && python3 x.py`, or a file written by an earlier call.
fn script_file(
    j: &mut Judge,
    a: &Analysis,
    inv: &Invocation,
    lang: Lang,
    raw: &str,
    name: &str,
    shown: &str,
) {
    let paths = j.resolve_all(raw, &inv.cwd, &inv.origin);
    for p in paths {
        let real = crate::guard::paths::real(&p);
        let (text, whence) = match a.files.get(&real).or_else(|| a.files.get(&p)) {
            Some(Content::Text(t)) => (t.clone(), "written earlier on this line"),
            Some(Content::Downloaded) => {
                super::net::downloaded_code(j, shown, &inv.origin);
                continue;
            }
            Some(Content::Unknown(why)) => {
                j.hit_contained(
                    &UNREAD_CODE,
                    &inv.origin,
                    format!(
                        "`{shown}` runs {}, which Forge cannot read ({why})",
                        p.display()
                    ),
                );
                continue;
            }
            Some(Content::RepoDiff | Content::Missing) => continue,
            None => {
                let whence = match j.paths.place(&real) {
                    Place::InRepo(_) | Place::RepoRoot => "in the project",
                    Place::Temp => "in the temp folder",
                    Place::NullDevice => continue,
                    Place::Outside | Place::RepoAncestor
                        if crate::guard::paths::exists(&real)
                            && !real.starts_with("/usr")
                            && !real.starts_with("/opt") =>
                    {
                        j.hit_contained(
                            &UNREAD_CODE,
                            &inv.origin,
                            format!(
                                "`{shown}` runs {}, outside the project, where Forge does not read code",
                                p.display()
                            ),
                        );
                        continue;
                    }
                    _ => continue,
                };
                // Nothing there, or a folder (`node --test test/`, `bun test`): runners that
                // take folders run the project's tests.
                if !crate::guard::paths::exists(&real) || crate::guard::paths::is_dir(&real) {
                    continue;
                }
                match crate::guard::shell::read_code_file(&real) {
                    Some(t) => (t, whence),
                    None => {
                        j.hit_contained(
                            &UNREAD_CODE,
                            &inv.origin,
                            format!(
                                "`{shown}` runs {}, which Forge cannot read (not a regular UTF-8 file of at most {} KiB)",
                                p.display(),
                                crate::guard::shell::MAX_SOURCE / 1024
                            ),
                        );
                        continue;
                    }
                }
            }
        };
        // A language Forge has no reader for: the project's own files are the project's code
        // (`julia test/runtests.jl`); one in the temp folder or written on this line is inline
        // code in disguise.
        if lang == Lang::Other {
            if whence != "in the project" {
                j.hit_contained(
                    &INLINE_CODE,
                    &inv.origin,
                    format!(
                        "`{shown}` runs {} ({whence}), {name} code, a language Forge does not read, so a person decides",
                        p.display()
                    ),
                );
            }
            continue;
        }
        let reach = scan(lang, &text);
        literal_paths(j, inv, &text, &reach, shown);
        if reach.any() {
            let reason = format!(
                "`{shown}` runs {} ({whence}), {name} code that {}; Forge does not run or fully parse code and no list of such calls is complete, so a person decides",
                p.display(),
                reach.describe()
            );
            if reach.network.is_some() || reach.dynamic.is_some() {
                j.hit_at(&INLINE_CODE, &inv.origin, reason);
            } else {
                j.hit_contained(&INLINE_CODE, &inv.origin, reason);
            }
        }
    }
}

/// GNU sed runs commands: `e cmd` (walked as a command by the analysis), `s/…/…/e` (runs the
/// substituted text, unknowable). Its `w`/`r` files are recorded by the analysis.
fn sed(j: &mut Judge, inv: &Invocation) {
    let scripts = sed_scripts(inv);
    for s in scripts {
        if sed_executes(&s) {
            let shown = crate::text::clip(&inv.display(), 120);
            j.hit_contained(&INLINE_CODE, &inv.origin, format!("`{shown}` runs the text it substitutes as a shell command (`s///e`); Forge cannot know that text, so a person decides"));
            return;
        }
    }
}
