//! bash's word expansions, as far as they can be known before the command runs: quote removal,
//! `$'…'` (with `\x`, octal, `\u`, `\U`, `\c`), brace expansion (`r{m,}`, `{a..c}`), tilde
//! expansion (at the start, after `NAME=` and after `:` in such words), variables the line set
//! and the few the environment fixes (`HOME`, `PWD`, `OLDPWD`, `TMPDIR`, `$$`), command
//! substitutions whose output is known (`$(pwd)`, `$(mktemp -d)`, `$(git rev-parse
//! --show-toplevel)`, `$(dirname "$0")`, `$(echo …)`), field splitting of unquoted expansions,
//! and globs (kept as patterns; [`shell_glob_matches`] finds what they match on disk).
//!
//! A word with any part that cannot be known is [`Arg::Dyn`]: the rules judge its most
//! dangerous reading.

use std::path::Path;

use brush_parser::ParserOptions;
use brush_parser::ast;
use brush_parser::word::{self, Parameter, ParameterExpr, SpecialParameter, TildeExpr, WordPiece};

use super::pattern::glob_match;
use super::walk::{Ctx, Val, Walker};
use super::{Arg, Word};

/// One character of a word being expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ch {
    c: char,
    /// Quoted or escaped: no brace expansion, splitting or globbing.
    quoted: bool,
    /// From an unquoted expansion: subject to field splitting.
    split: bool,
}

fn chars(s: &str, quoted: bool, split: bool) -> impl Iterator<Item = Ch> + '_ {
    s.chars().map(move |c| Ch { c, quoted, split })
}

/// What a word's pieces expanded to.
#[derive(Default)]
struct Expansion {
    chars: Vec<Ch>,
    dynamic: bool,
    programs: Vec<String>,
}

/// A value standing for a number the shell computes (`$$`, `$RANDOM`, `$((…))`): digits only,
/// so a path built from it stays in its folder.
const SOME_NUMBER: &str = "4242";

/// The value `$PPID` stands for: the shell's parent, which is the agent client or Forge that
/// started it. A number like [`SOME_NUMBER`] (so `/proc/$PPID/environ` is a path), but its own,
/// so `kill $PPID` can be told apart.
pub const PARENT_PID: &str = "4241";

impl Walker<'_> {
    /// The words a shell word becomes.
    pub(super) fn expand(&mut self, w: &ast::Word, ctx: &mut Ctx, depth: usize) -> Vec<Word> {
        self.expand_with(w, ctx, depth, false)
    }

    /// A word after the command name that looks like an assignment (`of=~/x`): bash expands a
    /// `~` after its `=`.
    pub(super) fn expand_assignment_word(
        &mut self,
        w: &ast::Word,
        ctx: &mut Ctx,
        depth: usize,
    ) -> Vec<Word> {
        self.expand_with(w, ctx, depth, true)
    }

    fn expand_with(
        &mut self,
        w: &ast::Word,
        ctx: &mut Ctx,
        depth: usize,
        _assignment: bool,
    ) -> Vec<Word> {
        let raw = &w.value;
        // Fast path: plain text needs no word parser.
        if raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./,:+@%^".contains(&b))
        {
            return vec![Word::lit(raw.clone())];
        }
        let Some(mut x) = self.parse_pieces(raw, ctx, depth) else {
            return vec![dynamic(raw, vec![])];
        };
        if x.dynamic {
            return vec![dynamic(raw, x.programs)];
        }
        self.tilde_after_assignment(&mut x.chars, ctx);
        let mut out = Vec::new();
        for word in brace_expand(&x.chars) {
            let word = self.leading_tilde(word, ctx);
            let ifs = match ctx.vars.get("IFS") {
                Some(Val::Known(v)) => v.clone(),
                _ => " \t\n".to_string(),
            };
            for field in split_fields(&word, &ifs) {
                out.push(to_word(&field));
            }
        }
        out
    }

    /// A word expanded to exactly one (a redirection target); an ambiguous one keeps its first.
    pub(super) fn expand_one(&mut self, w: &ast::Word, ctx: &mut Ctx, depth: usize) -> Word {
        let mut v = self.expand(w, ctx, depth);
        if v.is_empty() {
            return Word::lit("");
        }
        v.swap_remove(0)
    }

    /// An assignment's value: no brace expansion, splitting or globbing; `~` after `=` and `:`.
    pub(super) fn expand_value(&mut self, w: &ast::Word, ctx: &mut Ctx, depth: usize) -> Arg {
        let raw = &w.value;
        let Some(mut x) = self.parse_pieces(raw, ctx, depth) else {
            return Arg::Dyn {
                raw: raw.clone(),
                programs: vec![],
            };
        };
        if x.dynamic {
            return Arg::Dyn {
                raw: raw.clone(),
                programs: x.programs,
            };
        }
        let home = self.home(ctx);
        let mut out: Vec<Ch> = Vec::new();
        for (i, ch) in x.chars.iter().enumerate() {
            let after_colon = i > 0 && x.chars[i - 1].c == ':' && !x.chars[i - 1].quoted;
            let ends = x.chars.get(i + 1).is_none_or(|n| n.c == '/' || n.c == ':');
            if ch.c == '~' && !ch.quoted && after_colon && ends {
                out.extend(chars(&home, true, false));
            } else {
                out.push(*ch);
            }
        }
        x.chars = out;
        Arg::Lit(x.chars.iter().map(|c| c.c).collect())
    }

    /// Text (a here-document body) with its substitutions run: known text or [`Arg::Dyn`].
    pub(super) fn heredoc_text(&mut self, body: &str, ctx: &mut Ctx, depth: usize) -> Arg {
        let opts = ParserOptions::default();
        match word::parse_heredoc(body, &opts) {
            Ok(pieces) => {
                let mut x = Expansion::default();
                self.pieces(&pieces, ctx, depth, &mut x, true);
                if x.dynamic {
                    Arg::Dyn {
                        raw: "<<here-document>>".into(),
                        programs: x.programs,
                    }
                } else {
                    Arg::Lit(x.chars.iter().map(|c| c.c).collect())
                }
            }
            Err(_) => {
                self.problem(ctx, "a here-document that cannot be parsed".into());
                Arg::Dyn {
                    raw: "<<here-document>>".into(),
                    programs: vec![],
                }
            }
        }
    }

    /// Shell text expanded as a whole word (a `${x:-default}` default): known text or `None`.
    fn expand_text(&mut self, text: &str, ctx: &mut Ctx, depth: usize) -> Option<String> {
        let x = self.parse_pieces(text, ctx, depth)?;
        (!x.dynamic).then(|| x.chars.iter().map(|c| c.c).collect())
    }

    fn parse_pieces(&mut self, raw: &str, ctx: &mut Ctx, depth: usize) -> Option<Expansion> {
        let opts = ParserOptions::default();
        let pieces = word::parse(raw, &opts).ok()?;
        let mut x = Expansion::default();
        self.pieces(&pieces, ctx, depth, &mut x, false);
        Some(x)
    }

    fn home(&self, ctx: &Ctx) -> String {
        match ctx.vars.get("HOME") {
            Some(Val::Known(h)) => h.clone(),
            _ => self.env.home.display().to_string(),
        }
    }

    fn pieces(
        &mut self,
        pieces: &[word::WordPieceWithSource],
        ctx: &mut Ctx,
        depth: usize,
        x: &mut Expansion,
        quoted: bool,
    ) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => x.chars.extend(chars(s, quoted, false)),
                WordPiece::SingleQuotedText(s) => x.chars.extend(chars(s, true, false)),
                WordPiece::AnsiCQuotedText(s) => x.chars.extend(chars(&ansi_c(s), true, false)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, ctx, depth, x, true);
                }
                WordPiece::EscapeSequence(s) => {
                    let c = s.strip_prefix('\\').unwrap_or(s);
                    // Inside double quotes only `$`, `` ` ``, `"`, `\` and newline are escaped.
                    if quoted && !c.starts_with(['$', '`', '"', '\\', '\n']) {
                        x.chars.extend(chars(s, true, false));
                    } else if c != "\n" {
                        x.chars.extend(chars(c, true, false));
                    }
                }
                WordPiece::TildeExpansion(t) => {
                    let v = match t {
                        TildeExpr::Home => Some(self.home(ctx)),
                        TildeExpr::UserHome(u) => Some(user_home(u, &self.env.home)),
                        TildeExpr::WorkingDir => ctx.cwd.one().map(|p| p.display().to_string()),
                        TildeExpr::OldWorkingDir => {
                            ctx.oldpwd.one().map(|p| p.display().to_string())
                        }
                        _ => None,
                    };
                    match v {
                        Some(v) => x.chars.extend(chars(&v, true, false)),
                        None => x.dynamic = true,
                    }
                }
                WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                    parameter:
                        Parameter::Special(SpecialParameter::AllPositionalParameters {
                            concatenate: false,
                        }),
                    indirect: false,
                }) if quoted => match &ctx.positional {
                    // `"$@"`: one word per parameter, even with spaces inside them.
                    Some(p) => {
                        for (i, a) in p.iter().skip(1).enumerate() {
                            if i > 0 {
                                x.chars.push(Ch {
                                    c: ' ',
                                    quoted: false,
                                    split: true,
                                });
                            }
                            x.chars.extend(chars(a, true, false));
                        }
                    }
                    None => x.dynamic = true,
                },
                WordPiece::ParameterExpansion(e) => match self.param(e, ctx, depth) {
                    Some(v) => {
                        // A loop variable over a glob (`for f in build/*`) stands for each
                        // match: it globs even inside quotes.
                        let glob = matches!(e, ParameterExpr::Parameter { parameter: Parameter::Named(n), .. } if matches!(ctx.vars.get(n), Some(Val::Glob(_))));
                        x.chars.extend(chars(&v, quoted && !glob, !quoted));
                    }
                    None => x.dynamic = true,
                },
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    let (value, programs) = self.substitute(s, ctx, depth);
                    x.programs.extend(programs);
                    match value {
                        Some(v) => x
                            .chars
                            .extend(chars(v.trim_end_matches('\n'), quoted, !quoted)),
                        None => x.dynamic = true,
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    if e.value.contains("$(") || e.value.contains('`') {
                        let mut sub = ctx.clone();
                        self.substitutions_in(&e.value, &mut sub, depth + 1);
                    }
                    x.chars.extend(chars(SOME_NUMBER, quoted, false));
                }
            }
        }
    }

    /// The value of a parameter expansion, when known.
    fn param(&mut self, e: &ParameterExpr, ctx: &mut Ctx, depth: usize) -> Option<String> {
        match e {
            ParameterExpr::Parameter {
                parameter,
                indirect: false,
            } => self.param_value(parameter, ctx),
            ParameterExpr::UseDefaultValues {
                parameter,
                indirect: false,
                default_value,
                ..
            }
            | ParameterExpr::AssignDefaultValues {
                parameter,
                indirect: false,
                default_value,
                ..
            } => {
                let set_in_line =
                    matches!(parameter, Parameter::Named(n) if ctx.vars.contains_key(n));
                match self.param_value(parameter, ctx) {
                    Some(v) if !v.is_empty() => Some(v),
                    Some(_) => self.expand_text(default_value.as_deref().unwrap_or(""), ctx, depth),
                    None if set_in_line => None,
                    // Unknown: the environment may hold anything, or nothing and the default.
                    None => None,
                }
            }
            ParameterExpr::UseAlternativeValue {
                parameter,
                indirect: false,
                alternative_value,
                ..
            } => match self.param_value(parameter, ctx) {
                Some(v) if !v.is_empty() => {
                    self.expand_text(alternative_value.as_deref().unwrap_or(""), ctx, depth)
                }
                Some(_) => Some(String::new()),
                None => None,
            },
            ParameterExpr::ParameterLength { .. } => Some(SOME_NUMBER.into()),
            ParameterExpr::RemoveSmallestSuffixPattern {
                parameter,
                indirect: false,
                pattern,
            }
            | ParameterExpr::RemoveLargestSuffixPattern {
                parameter,
                indirect: false,
                pattern,
            }
            | ParameterExpr::RemoveSmallestPrefixPattern {
                parameter,
                indirect: false,
                pattern,
            }
            | ParameterExpr::RemoveLargestPrefixPattern {
                parameter,
                indirect: false,
                pattern,
            } => {
                let v = self.param_value(parameter, ctx)?;
                let pat: Vec<char> = pattern.as_deref().unwrap_or("").chars().collect();
                let s: Vec<char> = v.chars().collect();
                let largest = matches!(
                    e,
                    ParameterExpr::RemoveLargestSuffixPattern { .. }
                        | ParameterExpr::RemoveLargestPrefixPattern { .. }
                );
                let suffix = matches!(
                    e,
                    ParameterExpr::RemoveSmallestSuffixPattern { .. }
                        | ParameterExpr::RemoveLargestSuffixPattern { .. }
                );
                let cuts: Vec<usize> = if suffix {
                    (0..=s.len())
                        .filter(|&i| glob_match(&pat, &s[i..], false))
                        .collect()
                } else {
                    (0..=s.len())
                        .filter(|&i| glob_match(&pat, &s[..i], false))
                        .collect()
                };
                let cut = if suffix == largest {
                    cuts.first().copied()
                } else {
                    cuts.last().copied()
                };
                Some(match (cut, suffix) {
                    (None, _) => v,
                    (Some(i), true) => s[..i].iter().collect(),
                    (Some(i), false) => s[i..].iter().collect(),
                })
            }
            _ => None,
        }
    }

    fn param_value(&self, p: &Parameter, ctx: &Ctx) -> Option<String> {
        match p {
            Parameter::Named(n) => self.var(n, ctx),
            Parameter::NamedWithIndex { name, index } => {
                if name == "BASH_SOURCE" && index == "0" {
                    return ctx.positional.as_ref().and_then(|p| p.first().cloned());
                }
                match (ctx.vars.get(name), index.as_str()) {
                    (Some(Val::Known(v)), "0") => Some(v.clone()),
                    _ => None,
                }
            }
            Parameter::NamedWithAllIndices { name, .. } => match ctx.vars.get(name) {
                Some(Val::Known(v)) => Some(v.clone()),
                _ if name == "BASH_SOURCE" => {
                    ctx.positional.as_ref().and_then(|p| p.first().cloned())
                }
                _ => None,
            },
            Parameter::Positional(n) => ctx
                .positional
                .as_ref()
                .and_then(|p| p.get(*n as usize).cloned()),
            Parameter::Special(s) => match s {
                SpecialParameter::ProcessId | SpecialParameter::LastBackgroundProcessId => {
                    Some(SOME_NUMBER.into())
                }
                SpecialParameter::LastExitStatus => Some("0".into()),
                SpecialParameter::CurrentOptionFlags => Some("hB".into()),
                SpecialParameter::PositionalParameterCount => ctx
                    .positional
                    .as_ref()
                    .map(|p| p.len().saturating_sub(1).to_string()),
                SpecialParameter::ShellName => Some(
                    ctx.positional
                        .as_ref()
                        .and_then(|p| p.first().cloned())
                        .unwrap_or_else(|| "bash".into()),
                ),
                SpecialParameter::AllPositionalParameters { .. } => ctx
                    .positional
                    .as_ref()
                    .map(|p| p.iter().skip(1).cloned().collect::<Vec<_>>().join(" ")),
            },
        }
    }

    /// A variable's value: set on the line, or one the environment fixes.
    pub(super) fn var(&self, n: &str, ctx: &Ctx) -> Option<String> {
        match ctx.vars.get(n) {
            Some(Val::Known(v)) | Some(Val::Glob(v)) => return Some(v.clone()),
            Some(Val::Unknown) => return None,
            None => {}
        }
        match n {
            "HOME" => Some(self.env.home.display().to_string()),
            "PWD" => ctx.cwd.one().map(|p| p.display().to_string()),
            "OLDPWD" => ctx.oldpwd.one().map(|p| p.display().to_string()),
            "TMPDIR" => Some(self.env.temp.display().to_string()),
            "USER" | "LOGNAME" => std::env::var(n).ok(),
            "IFS" => Some(" \t\n".into()),
            "PPID" => Some(PARENT_PID.into()),
            "RANDOM" | "SRANDOM" | "SECONDS" | "EPOCHSECONDS" | "BASHPID" | "UID" | "EUID"
            | "LINENO" => Some(SOME_NUMBER.into()),
            _ => None,
        }
    }

    /// Runs a command substitution's commands (in a subshell) and returns its output when it
    /// is known, with the programs it ran.
    pub(super) fn substitute(
        &mut self,
        text: &str,
        ctx: &mut Ctx,
        depth: usize,
    ) -> (Option<String>, Vec<String>) {
        let first = self.out.invocations.len();
        let mut sub = ctx.clone();
        self.line(text, &mut sub, depth + 1);
        let programs = self.names_since(first);
        if let Some(t) = self.produced_text(first) {
            return (Some(t), programs);
        }
        let Some(last) = self.out.invocations[first..]
            .iter()
            .rposition(|i| i.upstream.is_empty())
            .map(|i| first + i)
        else {
            return (None, programs);
        };
        let value = self.known_output(last);
        (value, programs)
    }

    /// The output of one command whose output Forge can know without running it.
    fn known_output(&mut self, i: usize) -> Option<String> {
        let inv = self.out.invocations[i].clone();
        let args: Vec<&str> = inv.lit_args().collect::<Option<Vec<_>>>()?;
        let cwd = inv.cwd.one().map(Path::to_path_buf);
        let first_operand = || args.iter().find(|a| !a.starts_with('-')).copied();
        match inv.name()? {
            "pwd" => cwd.map(|c| c.display().to_string()),
            "git" if args.contains(&"rev-parse") => {
                let root = self.env.root.display().to_string();
                if args.contains(&"--show-toplevel") {
                    Some(root)
                } else if args
                    .iter()
                    .any(|a| matches!(*a, "--git-dir" | "--absolute-git-dir" | "--git-common-dir"))
                {
                    Some(format!("{root}/.git"))
                } else if args.iter().any(|a| a.starts_with("--git-path")) {
                    None
                } else if args
                    .iter()
                    .any(|a| matches!(*a, "--show-cdup" | "--show-prefix"))
                {
                    Some(String::new())
                } else if args
                    .iter()
                    .any(|a| !a.starts_with('-') && *a != "rev-parse")
                {
                    // A revision: a hash.
                    Some("0000000000".into())
                } else {
                    None
                }
            }
            "mktemp" => Some(mktemp_path(&args, &self.env.temp)),
            "dirname" => {
                let p = first_operand()?;
                let p = p.trim_end_matches('/');
                Some(match p.rfind('/') {
                    Some(0) => "/".into(),
                    Some(i) => p[..i].to_string(),
                    None => ".".into(),
                })
            }
            "basename" => {
                let p = first_operand()?.trim_end_matches('/');
                Some(p.rsplit('/').next().unwrap_or(p).to_string())
            }
            "realpath" | "readlink" => {
                let p = first_operand()?;
                let base = cwd?;
                Some(
                    crate::guard::paths::real(&base.join(p))
                        .display()
                        .to_string(),
                )
            }
            "which" | "type" => first_operand().map(|p| format!("/usr/bin/{p}")),
            "command" if args.first() == Some(&"-v") => {
                args.get(1).map(|p| format!("/usr/bin/{p}"))
            }
            "date" | "nproc" | "wc" | "id" if !args.contains(&"-un") && !args.contains(&"-nu") => {
                Some(SOME_NUMBER.into())
            }
            "whoami" | "id" => std::env::var("USER").ok(),
            "uname" if args.is_empty() || args == ["-s"] => Some("Linux".into()),
            "cat" if args.len() == 1 => {
                let path = cwd?.join(args[0]);
                match self.file_content(&path) {
                    super::sources::Content::Text(t) => Some(t),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `{~,x}`, `~/a` after brace expansion: bash expands a tilde that starts a word.
    fn leading_tilde(&self, word: Vec<Ch>, ctx: &Ctx) -> Vec<Ch> {
        let starts = word.first().is_some_and(|c| c.c == '~' && !c.quoted);
        if !starts {
            return word;
        }
        let end = word.iter().position(|c| c.c == '/').unwrap_or(word.len());
        let user: String = word[1..end].iter().map(|c| c.c).collect();
        if word[1..end].iter().any(|c| c.quoted) {
            return word;
        }
        let home = if user.is_empty() {
            self.home(ctx)
        } else {
            user_home(&user, &self.env.home)
        };
        let mut out: Vec<Ch> = chars(&home, true, false).collect();
        out.extend_from_slice(&word[end..]);
        out
    }

    /// `of=~/x`, `PATH=~/bin:~/x` as arguments: a tilde after the first `=` of a word that
    /// starts with a name, and after `:` in it.
    fn tilde_after_assignment(&self, word: &mut Vec<Ch>, ctx: &Ctx) {
        let Some(eq) = word.iter().position(|c| c.c == '=' && !c.quoted) else {
            return;
        };
        let name: String = word[..eq].iter().map(|c| c.c).collect();
        let is_name = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_name {
            return;
        }
        let home = self.home(ctx);
        let mut out: Vec<Ch> = word[..=eq].to_vec();
        let mut i = eq + 1;
        while i < word.len() {
            let c = word[i];
            let at_start = i == eq + 1 || (word[i - 1].c == ':' && !word[i - 1].quoted);
            let ends = word.get(i + 1).is_none_or(|n| n.c == '/' || n.c == ':');
            if c.c == '~' && !c.quoted && at_start && ends {
                out.extend(chars(&home, true, false));
            } else {
                out.push(c);
            }
            i += 1;
        }
        *word = out;
    }
}

fn dynamic(raw: &str, programs: Vec<String>) -> Word {
    Word {
        arg: Arg::Dyn {
            raw: raw.to_string(),
            programs,
        },
        pattern: None,
    }
}

/// `~user`: that user's home (`/root` for root), beside the current HOME otherwise.
pub(crate) fn user_home(user: &str, home: &Path) -> String {
    if user == "root" {
        return "/root".into();
    }
    if std::env::var("USER").is_ok_and(|u| u == user) {
        return home.display().to_string();
    }
    format!("/home/{user}")
}

/// The path `mktemp` prints: in the temp folder (or `-p DIR`), its `X`s as digits.
fn mktemp_path(args: &[&str], temp: &Path) -> String {
    let mut dir: Option<String> = None;
    let mut template: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-p" || a == "--tmpdir" {
            dir = args.get(i + 1).map(|s| s.to_string());
            i += 2;
            continue;
        }
        if let Some(d) = a.strip_prefix("--tmpdir=") {
            dir = Some(d.to_string());
        } else if let Some(d) = a.strip_prefix("-p").filter(|d| !d.is_empty()) {
            dir = Some(d.to_string());
        } else if !a.starts_with('-') {
            template = Some(a);
        }
        i += 1;
    }
    let t = template.unwrap_or("tmp.XXXXXXXXXX").replace('X', "0");
    if t.contains('/') && dir.is_none() {
        return t;
    }
    let d = dir.unwrap_or_else(|| temp.display().to_string());
    format!("{}/{t}", d.trim_end_matches('/'))
}

/// Brace expansion (`{a,b}`, `{1..3}`, `{a..c}`), nesting from the inside out, at most 256
/// words; only unquoted braces that did not come from an expansion count.
fn brace_expand(word: &[Ch]) -> Vec<Vec<Ch>> {
    let mut out = Vec::new();
    brace_into(word.to_vec(), &mut out);
    out
}

const MAX_BRACE_WORDS: usize = 256;

fn brace_into(word: Vec<Ch>, out: &mut Vec<Vec<Ch>>) {
    let active = |c: &Ch, want: char| c.c == want && !c.quoted && !c.split;
    for open in (0..word.len()).filter(|&i| active(&word[i], '{')) {
        // `${…}` is not a brace expansion.
        if open > 0 && word[open - 1].c == '$' && !word[open - 1].quoted {
            continue;
        }
        let mut depth = 0;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, c) in word.iter().enumerate().skip(open) {
            if active(c, '{') {
                depth += 1;
            } else if active(c, '}') {
                depth -= 1;
                if depth == 0 {
                    close = Some(j);
                    break;
                }
            } else if active(c, ',') && depth == 1 {
                commas.push(j);
            }
        }
        let Some(close) = close else { continue };
        let (pre, post) = (&word[..open], &word[close + 1..]);
        let mut parts: Vec<Vec<Ch>> = Vec::new();
        if commas.is_empty() {
            let inner: String = word[open + 1..close].iter().map(|c| c.c).collect();
            match sequence(&inner) {
                Some(items) => {
                    parts.extend(items.into_iter().map(|s| chars(&s, false, false).collect()))
                }
                None => continue,
            }
        } else {
            let mut from = open + 1;
            for c in commas.iter().copied().chain([close]) {
                parts.push(word[from..c].to_vec());
                from = c + 1;
            }
        }
        for p in parts {
            if out.len() >= MAX_BRACE_WORDS {
                return;
            }
            let mut w = pre.to_vec();
            w.extend(p);
            w.extend_from_slice(post);
            brace_into(w, out);
        }
        return;
    }
    if out.len() < MAX_BRACE_WORDS {
        out.push(word);
    }
}

/// `1..3`, `a..c`, `10..1..3`: the items of a sequence expression.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = parts
        .get(2)
        .map_or(Some(1i64), |s| s.parse().ok())?
        .abs()
        .max(1);
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let mut v = Vec::new();
        let mut x = a;
        while v.len() < MAX_BRACE_WORDS {
            v.push(x.to_string());
            if x == b {
                break;
            }
            x += if a < b { step } else { -step };
            if (a < b && x > b) || (a > b && x < b) {
                break;
            }
        }
        return Some(v);
    }
    let (a, b) = (parts[0], parts[1]);
    if a.chars().count() == 1 && b.chars().count() == 1 {
        let (a, b) = (a.chars().next()? as u32, b.chars().next()? as u32);
        let range: Vec<u32> = if a <= b {
            (a..=b).step_by(step as usize).collect()
        } else {
            (b..=a).rev().step_by(step as usize).collect()
        };
        return Some(
            range
                .into_iter()
                .take(MAX_BRACE_WORDS)
                .filter_map(char::from_u32)
                .map(String::from)
                .collect(),
        );
    }
    None
}

/// Field splitting: unquoted expansion results split on whitespace; empty fields that came
/// only from expansions disappear.
fn split_fields(word: &[Ch], ifs: &str) -> Vec<Vec<Ch>> {
    let mut out: Vec<Vec<Ch>> = Vec::new();
    let mut cur: Vec<Ch> = Vec::new();
    let mut has_content = false;
    for c in word {
        if c.split && ifs.contains(c.c) {
            if has_content {
                out.push(std::mem::take(&mut cur));
                has_content = false;
            }
            continue;
        }
        cur.push(*c);
        has_content = true;
    }
    if has_content || (out.is_empty() && word.iter().any(|c| !c.split)) {
        out.push(cur);
    }
    if word.is_empty() {
        out.push(Vec::new());
    }
    out
}

fn to_word(field: &[Ch]) -> Word {
    let text: String = field.iter().map(|c| c.c).collect();
    // `[` starts a class only when a `]` closes it (`[ -f x ]` is the test command).
    let globbing = field.iter().enumerate().any(|(i, c)| {
        !c.quoted
            && (matches!(c.c, '*' | '?')
                || (c.c == '[' && field[i + 1..].iter().skip(1).any(|d| d.c == ']')))
    });
    let pattern = globbing.then(|| {
        let mut p = String::new();
        for c in field {
            if c.quoted && matches!(c.c, '*' | '?' | '[' | ']' | '\\') {
                p.push('\\');
            }
            p.push(c.c);
        }
        p
    });
    Word {
        arg: Arg::Lit(text),
        pattern,
    }
}

/// Bash brace expansion of a literal, unquoted word (`{a,b}c` → `ac`, `bc`).
pub fn expand_braces(s: &str) -> Vec<String> {
    let word: Vec<Ch> = chars(s, false, false).collect();
    brace_expand(&word)
        .into_iter()
        .map(|w| w.iter().map(|c| c.c).collect())
        .collect()
}

/// Decodes `$'…'` escapes, so `$'\x72\x6d'`, `$'\162\155'` and `$'\u0072m'` are seen as `rm`.
pub fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars>, max: usize| {
        let mut h = String::new();
        while h.len() < max && chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            h.push(chars.next().expect("peeked"));
        }
        u32::from_str_radix(&h, 16).ok().and_then(char::from_u32)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('v') => out.push('\u{b}'),
            Some('f') => out.push('\u{c}'),
            Some('b') => out.push('\u{8}'),
            Some('e') | Some('E') => out.push('\u{1b}'),
            Some('a') => out.push('\u{7}'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('?') => out.push('?'),
            Some('x') => out.extend(hex(&mut chars, 2)),
            Some('u') => out.extend(hex(&mut chars, 4)),
            Some('U') => out.extend(hex(&mut chars, 8)),
            Some('c') => {
                if let Some(x) = chars.next() {
                    out.push(char::from((x as u8) & 0x1f));
                }
            }
            Some(d @ '0'..='7') => {
                let mut oct = String::from(d);
                while oct.len() < 3 && chars.peek().is_some_and(|c| ('0'..='7').contains(c)) {
                    oct.push(chars.next().expect("peeked"));
                }
                if let Ok(v) = u8::from_str_radix(&oct, 8) {
                    out.push(v as char);
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::analyze;
    use super::*;

    fn words(line: &str) -> Vec<String> {
        let a = analyze(line, Path::new("/repo"), Path::new("/home/u"));
        let inv = a.invocations.last().expect("an invocation");
        let mut v = vec![inv.program.display().to_string()];
        v.extend(inv.args.iter().map(|w| w.arg.display().to_string()));
        v
    }

    #[test]
    fn quotes_escapes_and_ansi_c_are_removed() {
        assert_eq!(
            words(r#""rm" -rf r\m $'\x72m' $'\u0072m' $'\U00000072m' $'\162\155' ~/x "$HOME"/y"#),
            [
                "rm",
                "-rf",
                "rm",
                "rm",
                "rm",
                "rm",
                "rm",
                "/home/u/x",
                "/home/u/y"
            ]
        );
    }

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(expand_braces("{~,x}"), ["~", "x"]);
        assert_eq!(expand_braces("/{etc,usr}/x"), ["/etc/x", "/usr/x"]);
        assert_eq!(expand_braces("x{,/../..}"), ["x", "x/../.."]);
        assert_eq!(expand_braces("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        assert_eq!(expand_braces("{single}"), ["{single}"]);
        assert_eq!(expand_braces("{1..3}"), ["1", "2", "3"]);
        assert_eq!(expand_braces("{a..c}"), ["a", "b", "c"]);
        // The program name too: `r{m,} -rf ~` runs `rm r -rf ~`.
        assert_eq!(words("r{m,} -rf ~"), ["rm", "r", "-rf", "/home/u"]);
        assert_eq!(words("\"r\"{m,} -rf x"), ["rm", "r", "-rf", "x"]);
        assert_eq!(words("rm -rf {~,x}"), ["rm", "-rf", "/home/u", "x"]);
        assert_eq!(words("rm -rf '{/etc,x}'"), ["rm", "-rf", "{/etc,x}"]);
        assert_eq!(
            words("echo ${x}"),
            ["echo", "$x"].map(String::from).to_vec()[..1]
                .iter()
                .cloned()
                .chain(["${x}".to_string()])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn variables_set_on_the_line_expand() {
        assert_eq!(words("c=rm; $c -rf ~"), ["rm", "-rf", "/home/u"]);
        assert_eq!(words("h=~; rm -rf \"$h\""), ["rm", "-rf", "/home/u"]);
        assert_eq!(words("X='a b'; touch $X"), ["touch", "a", "b"]);
        assert_eq!(words("X='a b'; touch \"$X\""), ["touch", "a b"]);
        assert_eq!(
            words("rm -rf /tmp/work-$$"),
            ["rm", "-rf", "/tmp/work-4242"]
        );
        assert_eq!(words("dd of=~/x"), ["dd", "of=/home/u/x"]);
        assert_eq!(words("echo \"of=~/x\""), ["echo", "of=~/x"]);
        assert_eq!(words("rm -rf ${X:-/etc}")[2], "${X:-/etc}");
        assert_eq!(words("X=; rm -rf ${X:-/etc}"), ["rm", "-rf", "/etc"]);
        assert_eq!(
            words("f=a/b/c.txt; echo ${f%/*} ${f##*/}"),
            ["echo", "a/b", "c.txt"]
        );
    }

    #[test]
    fn known_substitutions_have_values() {
        assert_eq!(words("rm -rf \"$(pwd)/x\""), ["rm", "-rf", "/repo/x"]);
        assert_eq!(
            words("rm -rf \"$(git rev-parse --show-toplevel)/target\""),
            ["rm", "-rf", "/repo/target"]
        );
        assert_eq!(words("cd \"$(mktemp -d)\"; touch a")[0], "touch");
        assert_eq!(
            words("rm -rf $(mktemp -d)"),
            ["rm", "-rf", "/tmp/tmp.0000000000"]
        );
        assert_eq!(
            words("rm -rf \"$(mktemp -d /tmp/app-test-XXXX)\""),
            ["rm", "-rf", "/tmp/app-test-0000"]
        );
        assert_eq!(words("$(echo rm) -rf x"), ["rm", "-rf", "x"]);
        assert_eq!(words("$(which rm) -rf x"), ["rm", "-rf", "x"]);
        assert_eq!(words("rm -rf $(cat list)")[2], "$(cat list)");
    }
}
