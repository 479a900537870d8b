//! A shell command line, parsed for real (brush-parser's bash grammar) and flattened into the
//! commands it would run: program and arguments after quote removal, wrappers (`sudo`, `env`,
//! `xargs`, …) peeled off, `bash -c '…'`, `eval` and command substitutions parsed recursively,
//! redirections collected as writes, and the working folder followed through `cd`.
//!
//! Whatever cannot be known statically is marked dynamic so the policy can judge its most
//! dangerous reading: a program name computed at run time, a path from a variable.

use std::path::{Path, PathBuf};

use brush_parser::ast;
use brush_parser::word::{self, Parameter, ParameterExpr, TildeExpr, WordPiece};
use brush_parser::{Parser, ParserOptions};

/// Longest command line analysed; longer ones are refused unread.
pub const MAX_LINE: usize = 64 * 1024;
/// Deepest nesting of `bash -c`, `eval` and substitutions followed.
const MAX_DEPTH: usize = 12;

/// One argument as the command would receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Known exactly (quotes removed, `~`/`$HOME`/`$PWD` expanded).
    Lit(String),
    /// Computed at run time. `programs` are the commands run to compute it, if any.
    Dyn { raw: String, programs: Vec<String> },
}

impl Arg {
    pub fn lit(&self) -> Option<&str> {
        match self {
            Arg::Lit(s) => Some(s),
            Arg::Dyn { .. } => None,
        }
    }

    /// The text to show a person.
    pub fn display(&self) -> &str {
        match self {
            Arg::Lit(s) => s,
            Arg::Dyn { raw, .. } => raw,
        }
    }
}

/// A word with whether it has unquoted glob characters (`*`, `?`, `[`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub arg: Arg,
    pub glob: bool,
    /// Unquoted `{a,b}` that bash expands into several words.
    pub brace: bool,
}

impl Word {
    /// A word known exactly, with no glob or brace to expand.
    pub fn lit(s: impl Into<String>) -> Word {
        Word {
            arg: Arg::Lit(s.into()),
            glob: false,
            brace: false,
        }
    }
}

/// One command the line would run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The program, after wrappers; a literal is reduced to its base name (`/bin/rm` → `rm`).
    pub program: Arg,
    pub args: Vec<Word>,
    /// Wrappers peeled off, outermost first (`sudo`, `env`, `xargs`, …).
    pub wrappers: Vec<String>,
    /// The folder it runs in; `None` once a `cd` to an unknown place happened.
    pub cwd: Option<PathBuf>,
    /// Programs earlier in the same pipeline, whose output this one reads.
    pub upstream: Vec<String>,
    /// Arguments appended at run time (`xargs`, `find -exec … {}`).
    pub dynamic_tail: bool,
}

impl Invocation {
    pub fn name(&self) -> Option<&str> {
        self.program.lit()
    }

    /// Literal arguments, with dynamic ones as `None`.
    pub fn lit_args(&self) -> impl Iterator<Item = Option<&str>> {
        self.args.iter().map(|w| w.arg.lit())
    }

    /// The command as a person would write it, for messages.
    pub fn display(&self) -> String {
        let mut parts = vec![self.program.display().to_string()];
        parts.extend(self.args.iter().map(|a| a.arg.display().to_string()));
        crate::text::clip(&parts.join(" "), 200)
    }
}

/// Where a command's standard input comes from, for shells that would run it as a script.
#[derive(Debug, Clone)]
enum Stdin {
    None,
    /// An earlier pipeline stage.
    Pipe,
    /// A here-document or here-string, literal or computed.
    Text(Arg),
    /// `< file`: a script file Forge does not read.
    File,
}

/// A file written by a redirection (`>`, `>>`, `&>`, `tee` is a program).
#[derive(Debug, Clone)]
pub struct Redirect {
    pub target: Word,
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Default)]
pub struct Analysis {
    pub invocations: Vec<Invocation>,
    pub writes: Vec<Redirect>,
    /// Files read by `<` redirections.
    pub reads: Vec<Redirect>,
    /// Why (part of) the line could not be understood.
    pub problems: Vec<String>,
    /// A function that calls itself in a pipeline or in the background: `:(){ :|:& };:`.
    pub fork_bomb: bool,
}

/// Parses `line` as bash would, in `cwd`, with `home` for `~`.
pub fn analyze(line: &str, cwd: &Path, home: &Path) -> Analysis {
    let mut w = Walker {
        home: home.to_path_buf(),
        out: Analysis::default(),
        functions: Vec::new(),
    };
    if line.len() > MAX_LINE {
        w.out.problems.push(format!(
            "the command is {} bytes long; Forge judges at most {MAX_LINE}",
            line.len()
        ));
        return w.out;
    }
    w.line(line, Some(cwd.to_path_buf()), 0);
    w.out
}

struct Walker {
    home: PathBuf,
    out: Analysis,
    /// Functions being defined, innermost last (for fork-bomb detection).
    functions: Vec<String>,
}

/// Deepest bracket nesting (`(`, `{`, `[`) and most `case` clauses a line may have: brush-parser
/// overflows its stack on a few thousand nested groups and takes exponential time on unclosed
/// `(` runs and repeated case items (found by fuzzing). Real commands stay far below.
const MAX_NESTING: usize = 16;
const MAX_CASES: usize = 12;

fn too_deep(line: &str) -> bool {
    let (mut depth, mut max, mut quote) = (0usize, 0usize, false);
    for b in line.bytes() {
        match b {
            b'\'' => quote = !quote,
            b'(' | b'{' | b'[' if !quote => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' | b']' if !quote => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max > MAX_NESTING || line.matches("case").count() > MAX_CASES
}

/// Inputs known to send brush-parser's tokenizer into a loop or unbounded allocation: a here-doc
/// operator with no delimiter word (`$(<< ;#`), and nesting deeper than [`MAX_NESTING`].
/// Refused before parsing.
fn known_runaway(line: &str) -> bool {
    if too_deep(line) {
        return true;
    }
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(p) = line[i..].find("<<") {
        let mut j = i + p + 2;
        if b.get(j) == Some(&b'<') {
            i = j + 1;
            continue;
        }
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        while b.get(j).is_some_and(|c| *c == b' ' || *c == b'\t') {
            j += 1;
        }
        match b.get(j) {
            None => return true,
            Some(c) if b";&|()<>#\n`".contains(c) => return true,
            _ => {}
        }
        i = j;
    }
    false
}

impl Walker {
    fn line(&mut self, line: &str, cwd: Option<PathBuf>, depth: usize) -> Option<PathBuf> {
        if depth > MAX_DEPTH {
            self.out
                .problems
                .push(format!("commands nested more than {MAX_DEPTH} levels deep"));
            return cwd;
        }
        if known_runaway(line) {
            self.out.problems.push(format!(
                "a here-document without a delimiter word, brackets nested deeper than {MAX_NESTING} or more than {MAX_CASES} case clauses"
            ));
            return cwd;
        }
        let opts = ParserOptions::default();
        let mut parser = Parser::new(std::io::Cursor::new(line.as_bytes()), &opts);
        match parser.parse_program() {
            Ok(program) => {
                let mut cwd = cwd;
                for list in &program.complete_commands {
                    cwd = self.list(list, cwd, depth);
                }
                cwd
            }
            Err(e) => {
                self.out.problems.push(format!(
                    "cannot parse `{}`: {e}",
                    crate::text::clip(line, 80)
                ));
                cwd
            }
        }
    }

    /// A sequence of and-or lists; `cd` carries over from one to the next.
    fn list(
        &mut self,
        list: &ast::CompoundList,
        mut cwd: Option<PathBuf>,
        depth: usize,
    ) -> Option<PathBuf> {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            let background = matches!(sep, ast::SeparatorOperator::Async);
            let after = self.pipeline(&and_or.first, cwd.clone(), depth, background);
            cwd = after;
            for next in &and_or.additional {
                let p = match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
                };
                cwd = self.pipeline(p, cwd, depth, background);
            }
        }
        cwd
    }

    fn pipeline(
        &mut self,
        p: &ast::Pipeline,
        cwd: Option<PathBuf>,
        depth: usize,
        background: bool,
    ) -> Option<PathBuf> {
        let multi = p.seq.len() > 1;
        let mut upstream: Vec<String> = Vec::new();
        let mut result = cwd.clone();
        for cmd in &p.seq {
            let first = self.out.invocations.len();
            // Each stage of a multi-stage pipeline runs in a subshell: its `cd` does not last.
            let stage_cwd = self.command(cmd, cwd.clone(), depth, &upstream, multi || background);
            if !multi {
                result = stage_cwd;
            }
            let names: Vec<String> = self.out.invocations[first..]
                .iter()
                .filter_map(|i| i.name().map(str::to_string))
                .collect();
            upstream.extend(names);
        }
        result
    }

    fn command(
        &mut self,
        cmd: &ast::Command,
        cwd: Option<PathBuf>,
        depth: usize,
        upstream: &[String],
        concurrent: bool,
    ) -> Option<PathBuf> {
        match cmd {
            ast::Command::Simple(s) => self.simple(s, cwd, depth, upstream, concurrent),
            ast::Command::Compound(c, redirects) => {
                if let Some(r) = redirects {
                    for io in &r.0 {
                        let _ = self.redirect(io, &cwd, depth);
                    }
                }
                self.compound(c, cwd, depth)
            }
            ast::Command::Function(f) => {
                self.functions.push(f.fname.value.clone());
                let ast::FunctionBody(body, redirects) = &f.body;
                if let Some(r) = redirects {
                    for io in &r.0 {
                        let _ = self.redirect(io, &cwd, depth);
                    }
                }
                // A function body runs only when called; judging it as if it ran is the most
                // dangerous reading, and the one that catches `f(){ rm -rf /; }; f`.
                self.compound(body, cwd.clone(), depth);
                self.functions.pop();
                cwd
            }
            ast::Command::ExtendedTest(test, redirects) => {
                if let Some(r) = redirects {
                    for io in &r.0 {
                        let _ = self.redirect(io, &cwd, depth);
                    }
                }
                // `[[ $(rm -rf /) ]]`: substitutions in a test run.
                self.substitutions_in(&test.to_string(), &cwd, depth, false);
                cwd
            }
        }
    }

    fn compound(
        &mut self,
        c: &ast::CompoundCommand,
        cwd: Option<PathBuf>,
        depth: usize,
    ) -> Option<PathBuf> {
        use ast::CompoundCommand as C;
        match c {
            C::BraceGroup(b) => self.list(&b.list, cwd, depth),
            C::Subshell(s) => {
                self.list(&s.list, cwd.clone(), depth);
                cwd
            }
            C::ForClause(f) => {
                if let Some(values) = &f.values {
                    for v in values {
                        self.word(v, &cwd, depth);
                    }
                }
                self.list(&f.body.list, cwd.clone(), depth);
                cwd
            }
            C::CaseClause(c) => {
                self.word(&c.value, &cwd, depth);
                for item in &c.cases {
                    if let Some(list) = &item.cmd {
                        self.list(list, cwd.clone(), depth);
                    }
                }
                cwd
            }
            C::IfClause(i) => {
                self.list(&i.condition, cwd.clone(), depth);
                self.list(&i.then, cwd.clone(), depth);
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond, cwd.clone(), depth);
                    }
                    self.list(&e.body, cwd.clone(), depth);
                }
                cwd
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0, cwd.clone(), depth);
                self.list(&w.1.list, cwd.clone(), depth);
                cwd
            }
            C::Arithmetic(_) | C::ArithmeticForClause(_) => {
                // `(( $(rm -rf /) ))`: substitutions in arithmetic run too.
                self.substitutions_in(&c.to_string(), &cwd, depth, false);
                if let C::ArithmeticForClause(f) = c {
                    self.list(&f.body.list, cwd.clone(), depth);
                }
                cwd
            }
            C::Coprocess(_) => {
                // brush does not expose a coprocess's body: judge it as unknown.
                self.out.problems.push("a coprocess".to_string());
                cwd
            }
        }
    }

    /// Records a redirection; returns what it feeds to stdin, if it does.
    fn redirect(
        &mut self,
        io: &ast::IoRedirect,
        cwd: &Option<PathBuf>,
        depth: usize,
    ) -> Option<Stdin> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match io {
            R::File(_, kind, target) => match target {
                T::Filename(w) => {
                    let word = self.word(w, cwd, depth);
                    let r = Redirect {
                        target: word,
                        cwd: cwd.clone(),
                    };
                    match kind {
                        K::Write | K::Append | K::Clobber | K::ReadAndWrite => {
                            self.out.writes.push(r);
                            None
                        }
                        K::Read => {
                            self.out.reads.push(r);
                            Some(Stdin::File)
                        }
                        K::DuplicateInput | K::DuplicateOutput => None,
                    }
                }
                T::ProcessSubstitution(_, sub) => {
                    let first = self.out.invocations.len();
                    self.list(&sub.list, cwd.clone(), depth + 1);
                    let programs = self.names_since(first);
                    matches!(kind, K::Read).then(|| {
                        Stdin::Text(Arg::Dyn {
                            raw: "<(…)".into(),
                            programs,
                        })
                    })
                }
                T::Fd(_) | T::Duplicate(_) => None,
            },
            R::OutputAndError(w, _) => {
                let word = self.word(w, cwd, depth);
                self.out.writes.push(Redirect {
                    target: word,
                    cwd: cwd.clone(),
                });
                None
            }
            R::HereDocument(_, doc) => {
                let body = &doc.doc.value;
                if doc.requires_expansion && (body.contains('$') || body.contains('`')) {
                    let first = self.out.invocations.len();
                    self.substitutions_in(body, cwd, depth, true);
                    let programs = self.names_since(first);
                    Some(Stdin::Text(Arg::Dyn {
                        raw: "<<here-document>>".into(),
                        programs,
                    }))
                } else {
                    Some(Stdin::Text(Arg::Lit(body.clone())))
                }
            }
            R::HereString(_, w) => {
                let word = self.word(w, cwd, depth);
                Some(Stdin::Text(word.arg))
            }
        }
    }

    fn simple(
        &mut self,
        s: &ast::SimpleCommand,
        cwd: Option<PathBuf>,
        depth: usize,
        upstream: &[String],
        concurrent: bool,
    ) -> Option<PathBuf> {
        use ast::CommandPrefixOrSuffixItem as I;
        let mut argv: Vec<Word> = Vec::new();
        // (item, after the command name): `x=1` before the name is an assignment, after it an
        // ordinary argument (`dd of=/dev/sda`).
        let mut items: Vec<(&I, bool)> = Vec::new();
        if let Some(p) = &s.prefix {
            items.extend(p.0.iter().map(|i| (i, false)));
        }
        let name_item;
        if let Some(w) = &s.word_or_name {
            name_item = I::Word(w.clone());
            items.push((&name_item, true));
        }
        if let Some(sfx) = &s.suffix {
            items.extend(sfx.0.iter().map(|i| (i, true)));
        }
        let mut stdin = if upstream.is_empty() {
            Stdin::None
        } else {
            Stdin::Pipe
        };
        for (item, is_arg) in items {
            match item {
                I::IoRedirect(io) => {
                    if let Some(s) = self.redirect(io, &cwd, depth) {
                        stdin = s;
                    }
                }
                I::Word(w) => argv.push(self.word(w, &cwd, depth)),
                I::AssignmentWord(_, w) if is_arg => argv.push(self.word(w, &cwd, depth)),
                I::AssignmentWord(a, _) => {
                    // `X=$(cmd) prog`: the substitution runs.
                    match &a.value {
                        ast::AssignmentValue::Scalar(w) => {
                            self.word(w, &cwd, depth);
                        }
                        ast::AssignmentValue::Array(ws) => {
                            for (_, w) in ws {
                                self.word(w, &cwd, depth);
                            }
                        }
                    }
                }
                I::ProcessSubstitution(_, sub) => {
                    let first = self.out.invocations.len();
                    self.list(&sub.list, cwd.clone(), depth + 1);
                    let programs = self.names_since(first);
                    argv.push(Word {
                        arg: Arg::Dyn {
                            raw: "<(…)".into(),
                            programs,
                        },
                        glob: false,
                        brace: false,
                    });
                }
            }
        }
        if argv.is_empty() {
            return cwd;
        }
        // `rm -rf {~,x}`: bash expands braces in arguments before the command sees them.
        if argv.iter().skip(1).any(|w| w.brace) {
            let mut out = vec![argv[0].clone()];
            for w in argv.into_iter().skip(1) {
                match (&w.arg, w.brace) {
                    (Arg::Lit(s), true) => out.extend(expand_braces(s).into_iter().map(|x| {
                        // Tilde expansion comes after brace expansion: `{~,x}` deletes the home.
                        let x = match x.strip_prefix('~') {
                            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                                format!("{}{rest}", self.home.display())
                            }
                            _ => x,
                        };
                        Word {
                            arg: Arg::Lit(x),
                            glob: w.glob,
                            brace: false,
                        }
                    })),
                    _ => out.push(w),
                }
            }
            argv = out;
        }
        if let Some(f) = self.functions.last()
            && argv[0].arg.lit() == Some(f.as_str())
            && concurrent
        {
            self.out.fork_bomb = true;
        }
        self.invoke(argv, Vec::new(), cwd, depth, upstream, stdin)
    }

    /// Records one command after peeling wrappers; follows `cd`, `bash -c`, `eval`,
    /// `find -exec`. Returns the folder after it.
    fn invoke(
        &mut self,
        mut argv: Vec<Word>,
        mut wrappers: Vec<String>,
        mut cwd: Option<PathBuf>,
        depth: usize,
        upstream: &[String],
        stdin: Stdin,
    ) -> Option<PathBuf> {
        let mut dynamic_tail = false;
        loop {
            let Some(first) = argv.first() else {
                return cwd;
            };
            let Some(prog) = first.arg.lit().map(base_name) else {
                break;
            };
            // `env -S 'rm -rf /'` splits a string into the command; `env -C dir` changes folder.
            if prog == "env" {
                let pos = argv
                    .iter()
                    .position(|w| matches!(w.arg.lit(), Some("-S" | "--split-string")));
                if let Some(i) = pos
                    && let Some(Arg::Lit(split)) = argv.get(i + 1).map(|w| w.arg.clone())
                {
                    let words: Vec<Word> = split
                        .split_whitespace()
                        .map(|x| Word::lit(x.to_string()))
                        .collect();
                    let tail: Vec<Word> = argv[i + 2..].to_vec();
                    argv.truncate(i);
                    argv.extend(words);
                    argv.extend(tail);
                    continue;
                }
                let pos = argv
                    .iter()
                    .position(|w| matches!(w.arg.lit(), Some("-C" | "--chdir")));
                if let Some(i) = pos {
                    let dir = argv.get(i + 1).map(|w| w.arg.clone());
                    cwd = match (dir, &cwd) {
                        (Some(Arg::Lit(d)), Some(c)) => Some(join_path(c, &self.home, &d)),
                        _ => None,
                    };
                    argv.drain(i..(i + 2).min(argv.len()));
                    continue;
                }
            }
            let rest = &argv[1..];
            let skip = match prog.as_str() {
                "sudo" | "doas" => Some(skip_options(
                    rest,
                    &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
                )),
                "env" => Some(skip_env(rest)),
                "command" => {
                    if rest
                        .first()
                        .and_then(|w| w.arg.lit())
                        .is_some_and(|a| a == "-v" || a == "-V")
                    {
                        return cwd; // a lookup, not a run
                    }
                    Some(skip_options(rest, &[]))
                }
                "exec" => Some(skip_options(rest, &["-a"])),
                "nohup" | "builtin" | "unbuffer" | "setsid" | "nocache" => Some(0),
                "watch" => Some(skip_options(rest, &["-n", "-d", "--interval"])),
                "flock" => Some(skip_options(rest, &["-w", "-E", "--timeout"]).saturating_add(1)),
                "npx" | "pnpx" | "bunx" => Some(skip_options(rest, &["-p", "--package", "-c"])),
                "busybox" => Some(0),
                "time" => Some(skip_options(rest, &["-f", "-o"])),
                "nice" => Some(skip_options(rest, &["-n"])),
                "ionice" => Some(skip_options(rest, &["-c", "-n", "-p"])),
                "stdbuf" => Some(skip_options(rest, &["-i", "-o", "-e"])),
                "chrt" | "taskset" => Some(skip_options(rest, &[]).saturating_add(1)),
                "timeout" => Some(
                    skip_options(rest, &["-s", "-k", "--signal", "--kill-after"]).saturating_add(1),
                ),
                // `python -m twine upload`: the module is the program.
                "python" | "python3" | "python2"
                    if rest.first().and_then(|w| w.arg.lit()) == Some("-m") && rest.len() > 1 =>
                {
                    Some(1)
                }
                "xargs" => {
                    dynamic_tail = true;
                    Some(skip_options(
                        rest,
                        &[
                            "-I",
                            "-i",
                            "-n",
                            "-P",
                            "-L",
                            "-l",
                            "-d",
                            "-E",
                            "-e",
                            "-s",
                            "-a",
                            "--max-args",
                            "--max-procs",
                            "--delimiter",
                            "--arg-file",
                            "--replace",
                        ],
                    ))
                }
                _ => None,
            };
            match skip {
                Some(n) => {
                    wrappers.push(prog);
                    let n = (n + 1).min(argv.len());
                    argv.drain(..n);
                    if argv.is_empty() {
                        if wrappers.last().is_some_and(|w| w == "sudo" || w == "doas") {
                            // `sudo -s` / `sudo -i`: an interactive root shell.
                            self.push(
                                Arg::Lit("sudo".into()),
                                vec![],
                                wrappers,
                                cwd.clone(),
                                upstream,
                                false,
                            );
                        }
                        return cwd;
                    }
                }
                None => break,
            }
        }

        let program = match argv[0].arg.clone() {
            // `{rm,-rf,/}`: bash brace-expands the program name itself.
            Arg::Lit(p) if !argv[0].glob && p.starts_with('{') && p.contains(',') => Arg::Dyn {
                raw: p,
                programs: vec![],
            },
            Arg::Lit(p) => Arg::Lit(base_name(&p)),
            d => d,
        };
        let args: Vec<Word> = argv[1..].to_vec();
        let name = program.lit().map(str::to_string);
        match name.as_deref() {
            Some("cd") | Some("pushd") => {
                let target = args
                    .iter()
                    .find(|a| a.arg.lit().is_none_or(|s| !s.starts_with('-')));
                let next = match target.map(|w| &w.arg) {
                    None => Some(self.home.clone()),
                    Some(Arg::Lit(s)) if s == "-" => None,
                    Some(Arg::Lit(s)) => cwd.as_ref().map(|c| join_path(c, &self.home, s)),
                    Some(Arg::Dyn { .. }) => None,
                };
                self.push(program, args, wrappers, cwd, upstream, dynamic_tail);
                return next;
            }
            Some("bash" | "sh" | "zsh" | "dash" | "ksh" | "fish") => {
                // `bash $OPTS "…"`: options computed at run time may include `-c`.
                if let Some(d) = args
                    .iter()
                    .take_while(|a| a.arg.lit().is_none_or(|s| s.starts_with('-')))
                    .find(|a| a.arg.lit().is_none())
                {
                    self.push_computed(d.arg.clone(), wrappers, &cwd, upstream, dynamic_tail);
                    return cwd;
                }
                if let Some(script) = shell_c_arg(&args) {
                    match &script.arg {
                        Arg::Lit(s) => {
                            let s = s.clone();
                            self.push(program, args, wrappers, cwd.clone(), upstream, dynamic_tail);
                            self.line(&s, cwd.clone(), depth + 1);
                            return cwd;
                        }
                        Arg::Dyn { .. } => {
                            // `bash -c "$X"`: the program run is computed at run time.
                            let raw = script.arg.clone();
                            self.push_computed(raw, wrappers, &cwd, upstream, dynamic_tail);
                            return cwd;
                        }
                    }
                }
                // No `-c` and no script file: the shell runs whatever arrives on stdin.
                let has_script = args
                    .iter()
                    .any(|a| a.arg.lit().is_none_or(|s| !s.starts_with('-')));
                if !has_script {
                    match stdin {
                        Stdin::Text(Arg::Lit(text)) => {
                            self.push(program, args, wrappers, cwd.clone(), upstream, dynamic_tail);
                            self.line(&text, cwd.clone(), depth + 1);
                            return cwd;
                        }
                        Stdin::Text(Arg::Dyn { raw, programs }) => {
                            self.push_computed(
                                Arg::Dyn { raw, programs },
                                wrappers,
                                &cwd,
                                upstream,
                                dynamic_tail,
                            );
                            return cwd;
                        }
                        Stdin::Pipe => {
                            let raw = format!("{} | {}", upstream.join(" | "), program.display());
                            self.push_computed(
                                Arg::Dyn {
                                    raw,
                                    programs: upstream.to_vec(),
                                },
                                wrappers,
                                &cwd,
                                upstream,
                                dynamic_tail,
                            );
                            return cwd;
                        }
                        Stdin::None | Stdin::File => {}
                    }
                }
            }
            // `su -c 'cmd'`, `script -c 'cmd'`, `trap 'cmd' EXIT`: a string that runs as code.
            Some("su" | "script" | "runuser") | Some("trap") => {
                let code = if name.as_deref() == Some("trap") {
                    args.iter()
                        .find(|a| a.arg.lit().is_none_or(|s| !s.starts_with('-')))
                } else {
                    args.iter()
                        .position(|a| matches!(a.arg.lit(), Some("-c" | "--command")))
                        .and_then(|i| args.get(i + 1))
                };
                match code.map(|w| &w.arg) {
                    Some(Arg::Lit(code)) => {
                        let code = code.clone();
                        self.push(program, args, wrappers, cwd.clone(), upstream, dynamic_tail);
                        self.line(&code, cwd.clone(), depth + 1);
                        return cwd;
                    }
                    Some(Arg::Dyn { raw, programs }) => {
                        self.push_computed(
                            Arg::Dyn {
                                raw: raw.clone(),
                                programs: programs.clone(),
                            },
                            wrappers,
                            &cwd,
                            upstream,
                            dynamic_tail,
                        );
                        return cwd;
                    }
                    None => {}
                }
            }
            // Programs run in another root or by a job runner: what they run cannot be placed.
            Some("chroot" | "parallel" | "nsenter" | "unshare") => {
                let raw = format!("{} …", name.as_deref().unwrap_or(""));
                self.push_computed(
                    Arg::Dyn {
                        raw,
                        programs: vec![],
                    },
                    wrappers,
                    &cwd,
                    upstream,
                    dynamic_tail,
                );
                return cwd;
            }
            Some("source" | ".") => {
                if let Some(Arg::Dyn { raw, programs }) = args.first().map(|a| a.arg.clone()) {
                    self.push_computed(
                        Arg::Dyn { raw, programs },
                        wrappers,
                        &cwd,
                        upstream,
                        dynamic_tail,
                    );
                    return cwd;
                }
            }
            Some("eval") => {
                if args.iter().all(|a| a.arg.lit().is_some()) {
                    let s: Vec<&str> = args.iter().filter_map(|a| a.arg.lit()).collect();
                    let s = s.join(" ");
                    self.line(&s, cwd.clone(), depth + 1);
                } else {
                    let raw = Arg::Dyn {
                        raw: "eval …".into(),
                        programs: args
                            .iter()
                            .flat_map(|a| match &a.arg {
                                Arg::Dyn { programs, .. } => programs.clone(),
                                Arg::Lit(_) => vec![],
                            })
                            .collect(),
                    };
                    self.push_computed(raw, wrappers, &cwd, upstream, dynamic_tail);
                }
                return cwd;
            }
            Some("find") => {
                self.find_exec(&args, &wrappers, &cwd, depth, upstream);
            }
            _ => {}
        }
        self.push(program, args, wrappers, cwd.clone(), upstream, dynamic_tail);
        cwd
    }

    /// `find ROOT … -exec cmd {} ;`: the nested command, with `{}` standing for files under ROOT.
    fn find_exec(
        &mut self,
        args: &[Word],
        wrappers: &[String],
        cwd: &Option<PathBuf>,
        depth: usize,
        upstream: &[String],
    ) {
        let root = args
            .iter()
            .take_while(|a| {
                a.arg
                    .lit()
                    .is_none_or(|s| !s.starts_with('-') && s != "(" && s != "!")
            })
            .map(|a| a.arg.clone())
            .next()
            .unwrap_or(Arg::Lit(".".into()));
        let mut i = 0;
        while i < args.len() {
            let is_exec = args[i]
                .arg
                .lit()
                .is_some_and(|s| matches!(s, "-exec" | "-execdir" | "-ok" | "-okdir"));
            if !is_exec {
                i += 1;
                continue;
            }
            let mut nested = Vec::new();
            i += 1;
            while i < args.len() {
                let a = &args[i];
                if a.arg.lit().is_some_and(|s| s == ";" || s == "+") {
                    break;
                }
                let replaced = match (&a.arg, &root) {
                    (Arg::Lit(s), Arg::Lit(r)) if s.contains("{}") => Word {
                        arg: Arg::Lit(
                            s.replace("{}", &format!("{}/{{}}", r.trim_end_matches('/'))),
                        ),
                        glob: false,
                        brace: false,
                    },
                    (Arg::Lit(s), Arg::Dyn { .. }) if s.contains("{}") => Word {
                        arg: Arg::Dyn {
                            raw: s.clone(),
                            programs: vec![],
                        },
                        glob: false,
                        brace: false,
                    },
                    _ => a.clone(),
                };
                nested.push(replaced);
                i += 1;
            }
            if !nested.is_empty() {
                let mut w = wrappers.to_vec();
                w.push("find".into());
                self.invoke(nested, w, cwd.clone(), depth + 1, upstream, Stdin::None);
            }
            i += 1;
        }
    }

    /// Records a command whose program is computed at run time (`bash -c "$X"`, a script read
    /// from a pipe, `chroot …`): the policy judges it as its most dangerous reading.
    fn push_computed(
        &mut self,
        program: Arg,
        wrappers: Vec<String>,
        cwd: &Option<PathBuf>,
        upstream: &[String],
        dynamic_tail: bool,
    ) {
        self.push(
            program,
            vec![],
            wrappers,
            cwd.clone(),
            upstream,
            dynamic_tail,
        );
    }

    fn push(
        &mut self,
        program: Arg,
        args: Vec<Word>,
        wrappers: Vec<String>,
        cwd: Option<PathBuf>,
        upstream: &[String],
        dynamic_tail: bool,
    ) {
        self.out.invocations.push(Invocation {
            program,
            args,
            wrappers,
            cwd,
            upstream: upstream.to_vec(),
            dynamic_tail,
        });
    }

    fn names_since(&self, first: usize) -> Vec<String> {
        self.out.invocations[first..]
            .iter()
            .map(|i| i.program.display().to_string())
            .collect()
    }

    /// Evaluates a word: quotes removed, known expansions done, substitutions parsed and walked.
    fn word(&mut self, w: &ast::Word, cwd: &Option<PathBuf>, depth: usize) -> Word {
        let raw = &w.value;
        // Fast path: plain text needs no word parser.
        if raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=,:+@%^".contains(&b))
        {
            return Word::lit(raw.clone());
        }
        let opts = ParserOptions::default();
        let pieces = match word::parse(raw, &opts) {
            Ok(p) => p,
            Err(_) => {
                return Word {
                    arg: Arg::Dyn {
                        raw: raw.clone(),
                        programs: vec![],
                    },
                    glob: false,
                    brace: false,
                };
            }
        };
        let mut text = String::new();
        let mut dynamic = false;
        let mut glob = false;
        let mut programs = Vec::new();
        self.pieces(
            &pieces,
            cwd,
            depth,
            &mut text,
            &mut dynamic,
            &mut glob,
            &mut programs,
            false,
        );
        Word {
            arg: if dynamic {
                Arg::Dyn {
                    raw: raw.clone(),
                    programs,
                }
            } else {
                Arg::Lit(text)
            },
            glob,
            // Braces bash would expand: unquoted (no quote or escape anywhere in the word).
            brace: !raw.contains(['\'', '"', '\\', '$', '`'])
                && raw.contains('{')
                && raw.contains(',')
                && raw.contains('}'),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pieces(
        &mut self,
        pieces: &[word::WordPieceWithSource],
        cwd: &Option<PathBuf>,
        depth: usize,
        text: &mut String,
        dynamic: &mut bool,
        glob: &mut bool,
        programs: &mut Vec<String>,
        quoted: bool,
    ) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => {
                    if !quoted && s.contains(['*', '?', '[']) {
                        *glob = true;
                    }
                    text.push_str(s);
                }
                WordPiece::SingleQuotedText(s) => text.push_str(s),
                WordPiece::AnsiCQuotedText(s) => text.push_str(&ansi_c(s)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, cwd, depth, text, dynamic, glob, programs, true);
                }
                WordPiece::EscapeSequence(s) => text.push_str(s.strip_prefix('\\').unwrap_or(s)),
                WordPiece::TildeExpansion(t) => match t {
                    TildeExpr::Home => text.push_str(&self.home.display().to_string()),
                    TildeExpr::UserHome(u) => text.push_str(&format!("/home/{u}")),
                    TildeExpr::WorkingDir => match cwd {
                        Some(c) => text.push_str(&c.display().to_string()),
                        None => *dynamic = true,
                    },
                    _ => *dynamic = true,
                },
                WordPiece::ParameterExpansion(e) => match e {
                    ParameterExpr::Parameter {
                        parameter: Parameter::Named(n),
                        indirect: false,
                    } if n == "HOME" => text.push_str(&self.home.display().to_string()),
                    ParameterExpr::Parameter {
                        parameter: Parameter::Named(n),
                        indirect: false,
                    } if n == "PWD" && cwd.is_some() => {
                        text.push_str(&cwd.as_ref().expect("checked").display().to_string())
                    }
                    _ => *dynamic = true,
                },
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    *dynamic = true;
                    let first = self.out.invocations.len();
                    self.line(s, cwd.clone(), depth + 1);
                    programs.extend(self.names_since(first));
                }
                WordPiece::ArithmeticExpression(_) => *dynamic = true,
            }
        }
    }

    /// Command substitutions inside a here-document body that expands.
    fn substitutions_in(
        &mut self,
        body: &str,
        cwd: &Option<PathBuf>,
        depth: usize,
        _heredoc: bool,
    ) {
        if !body.contains("$(") && !body.contains('`') {
            return;
        }
        let opts = ParserOptions::default();
        if let Ok(pieces) = word::parse_heredoc(body, &opts) {
            let (mut t, mut d, mut g, mut p) = (String::new(), false, false, Vec::new());
            self.pieces(&pieces, cwd, depth, &mut t, &mut d, &mut g, &mut p, true);
        } else {
            self.out
                .problems
                .push("a here-document that cannot be parsed".into());
        }
    }
}

/// Bash brace expansion of a literal word (`{a,b}c` → `ac`, `bc`; several groups multiply;
/// nesting is expanded from the inside out), capped at 256 words.
pub fn expand_braces(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    // Find the first `{` whose matching `}` encloses a top-level `,`.
    for open in (0..b.len()).filter(|&i| b[i] == b'{') {
        let mut depth = 0;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
        let (Some(close), false) = (close, commas.is_empty()) else {
            continue;
        };
        let (pre, post) = (&s[..open], &s[close + 1..]);
        let mut parts = Vec::new();
        let mut from = open + 1;
        for c in commas.iter().copied().chain([close]) {
            parts.push(&s[from..c]);
            from = c + 1;
        }
        let mut out = Vec::new();
        for p in parts {
            for tail in expand_braces(&format!("{pre}{p}{post}")) {
                if out.len() < 256 {
                    out.push(tail);
                }
            }
        }
        return out;
    }
    vec![s.to_string()]
}

/// `/usr/bin/rm` → `rm`; also strips a leading `\` used to bypass aliases.
fn base_name(p: &str) -> String {
    let p = p.trim_start_matches('\\');
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// How many leading arguments are options (and the values of `with_value` options).
fn skip_options(args: &[Word], with_value: &[&str]) -> usize {
    let mut i = 0;
    while i < args.len() {
        let Some(a) = args[i].arg.lit() else { break };
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if with_value.contains(&a) {
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

/// `env [-i] [-u NAME] [NAME=value]… cmd`.
fn skip_env(args: &[Word]) -> usize {
    let mut i = 0;
    while i < args.len() {
        let Some(a) = args[i].arg.lit() else { break };
        if a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" {
            i += 2;
        } else if a.starts_with('-') || (a.contains('=') && !a.starts_with('=')) {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The script of `sh -c SCRIPT` (options may come before, e.g. `bash -lc`, `sh -ec`).
fn shell_c_arg(args: &[Word]) -> Option<&Word> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].arg.lit()?;
        if !a.starts_with('-') {
            return None;
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if a[1..].contains('c') {
            // `bash -c -- 'script'`: `--` ends the options, the script follows.
            return match args.get(i + 1) {
                Some(w) if w.arg.lit() == Some("--") => args.get(i + 2),
                other => other,
            };
        }
        if a == "-o" || a == "-O" {
            i += 2;
            continue;
        }
        i += 1;
    }
    None
}

/// Joins `s` to `cwd` the way the shell would see the path (`~` already expanded by parsing).
fn join_path(cwd: &Path, _home: &Path, s: &str) -> PathBuf {
    let p = Path::new(s);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Decodes `$'…'` escapes, so `$'\x72\x6d'` is seen as `rm`.
fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('e') | Some('E') => out.push('\u{1b}'),
            Some('a') => out.push('\u{7}'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('x') => {
                let mut hex = String::new();
                while hex.len() < 2 && chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                    hex.push(chars.next().expect("peeked"));
                }
                if let Ok(v) = u8::from_str_radix(&hex, 16) {
                    out.push(v as char);
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
    use super::*;

    fn run(line: &str) -> Analysis {
        analyze(line, Path::new("/repo"), Path::new("/home/u"))
    }

    fn progs(a: &Analysis) -> Vec<String> {
        a.invocations
            .iter()
            .map(|i| i.program.display().to_string())
            .collect()
    }

    #[test]
    fn lists_pipes_subshells_and_substitutions() {
        let a = run("cd src && (make; echo ok) | tee log.txt || echo $(whoami) `date`");
        assert_eq!(
            progs(&a),
            ["cd", "make", "echo", "tee", "whoami", "date", "echo"]
        );
        assert_eq!(
            a.invocations[1].cwd.as_deref(),
            Some(Path::new("/repo/src"))
        );
        assert_eq!(a.invocations[3].upstream, ["make", "echo"]);
        assert!(a.problems.is_empty());
    }

    #[test]
    fn quotes_escapes_and_paths_are_removed() {
        let a = run(r#""rm" -rf r\m /usr/bin/rm $'\x72m' ~/x "$HOME"/y"#);
        let i = &a.invocations[0];
        assert_eq!(i.name(), Some("rm"));
        let args: Vec<_> = i.lit_args().map(|a| a.unwrap().to_string()).collect();
        assert_eq!(
            args,
            ["-rf", "rm", "/usr/bin/rm", "rm", "/home/u/x", "/home/u/y"]
        );
    }

    #[test]
    fn wrappers_are_peeled() {
        for line in [
            "sudo -u root rm -rf /",
            "env -i FOO=1 rm -rf /",
            "command rm -rf /",
            "nohup nice -n 5 timeout 10 rm -rf /",
            "exec rm -rf /",
            "time rm -rf /",
        ] {
            let a = run(line);
            let last = a.invocations.last().unwrap();
            assert_eq!(last.name(), Some("rm"), "{line}");
            assert_eq!(last.args[1].arg.lit(), Some("/"), "{line}");
        }
        let a = run("find . -name '*.o' | xargs rm -f");
        assert!(a.invocations[1].dynamic_tail);
        assert_eq!(a.invocations[1].wrappers, ["xargs"]);
    }

    #[test]
    fn shell_c_and_eval_are_parsed_recursively() {
        let a = run(r#"bash -c "sh -c 'rm -rf /'""#);
        assert_eq!(progs(&a), ["bash", "sh", "rm"]);
        let a = run("eval 'rm -rf /'");
        assert_eq!(progs(&a), ["rm"]);
        let a = run(r#"bash -c "$CMD""#);
        assert!(matches!(a.invocations[0].program, Arg::Dyn { .. }));
    }

    #[test]
    fn dynamic_program_names_are_dynamic() {
        let a = run("$(echo rm) -rf /");
        let last = a.invocations.last().unwrap();
        assert!(matches!(&last.program, Arg::Dyn { programs, .. } if programs == &["echo"]));
    }

    #[test]
    fn redirects_are_writes() {
        let a = run("echo hi > out.txt 2>&1; cat < in.txt >> ~/.bashrc; ls &> /tmp/x");
        let w: Vec<_> = a
            .writes
            .iter()
            .map(|r| r.target.arg.display().to_string())
            .collect();
        assert_eq!(w, ["out.txt", "/home/u/.bashrc", "/tmp/x"]);
        assert_eq!(a.reads[0].target.arg.lit(), Some("in.txt"));
    }

    #[test]
    fn data_arguments_are_not_commands() {
        let a = run(r#"echo "rm -rf /" && grep -r "rm -rf" docs/ && git commit -m "rm -rf /""#);
        assert_eq!(progs(&a), ["echo", "grep", "git"]);
    }

    #[test]
    fn find_exec_and_heredoc_substitutions() {
        let a = run("find /etc -exec rm -rf {} +");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert_eq!(rm.args[1].arg.lit(), Some("/etc/{}"));
        assert_eq!(rm.wrappers, ["find"]);
        let a = run("cat <<EOF\n$(rm -rf /)\nEOF");
        assert!(progs(&a).contains(&"rm".to_string()), "{:?}", progs(&a));
        let a = run("cat <<'EOF'\n$(rm -rf /)\nEOF\necho done");
        assert!(!progs(&a).contains(&"rm".to_string()));
    }

    #[test]
    fn fork_bomb_and_functions() {
        assert!(run(":(){ :|:& };:").fork_bomb);
        assert!(!run("f(){ echo hi; }; f").fork_bomb);
        let a = run("wipe(){ rm -rf /; }; wipe");
        assert!(progs(&a).contains(&"rm".to_string()));
    }

    #[test]
    fn garbage_and_runaways_are_problems_not_panics() {
        for line in [
            "$(<< ;#",
            "echo 'unterminated",
            "((((",
            "if then fi",
            "a <<",
            "x <<-\t;",
        ] {
            let a = run(line);
            assert!(
                !a.problems.is_empty() || a.invocations.is_empty(),
                "{line}: {a:?}"
            );
        }
        let deep = format!("{}true{}", "$(echo ".repeat(40), ")".repeat(40));
        assert!(!run(&deep).problems.is_empty());
        assert!(!run(&"x".repeat(MAX_LINE + 1)).problems.is_empty());
    }

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(expand_braces("{~,x}"), ["~", "x"]);
        assert_eq!(expand_braces("/{etc,usr}/x"), ["/etc/x", "/usr/x"]);
        assert_eq!(expand_braces("x{,/../..}"), ["x", "x/../.."]);
        assert_eq!(expand_braces("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        assert_eq!(expand_braces("{single}"), ["{single}"]);
        let a = run("rm -rf {/etc,x}");
        let args: Vec<_> = a.invocations[0]
            .lit_args()
            .map(|x| x.unwrap().to_string())
            .collect();
        assert_eq!(args, ["-rf", "/etc", "x"]);
        assert_eq!(run("rm -rf '{/etc,x}'").invocations[0].args.len(), 2);
    }

    #[test]
    fn cd_to_unknown_makes_cwd_unknown() {
        let a = run("cd $DIR && rm -rf build");
        assert_eq!(a.invocations[1].cwd, None);
        let a = run("(cd /tmp); rm x");
        assert_eq!(a.invocations[1].cwd.as_deref(), Some(Path::new("/repo")));
    }
}
