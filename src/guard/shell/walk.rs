//! The walk over brush-parser's AST: lists, pipelines, compound commands, functions and
//! aliases, carrying what the shell itself carries from one command to the next — the working
//! folder (through `cd`, `pushd`, `popd`, `eval cd`, function bodies and every branch of
//! `if`/`case`/loops), variables with known values, exported variables — and recording every
//! command it would start. Branches that may or may not run are merged: a folder that differs
//! between them is either of them ([`Cwd::either`]), a variable that differs is unknown.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions};

use super::sources::Content;
use super::{Analysis, Arg, Cwd, Env, Invocation, MAX_DEPTH, Names, Origin, Redirect, Stdin, Word};

pub(super) fn analyze(line: &str, cwd: &Path, env: &Env) -> Analysis {
    let mut w = Walker::new(env);
    if line.len() > super::MAX_LINE {
        w.out.problems.push(format!(
            "the command is {} bytes long; Forge judges at most {}",
            line.len(),
            super::MAX_LINE
        ));
        return w.out;
    }
    let mut ctx = Ctx::new(Cwd::at(cwd));
    w.line(line, &mut ctx, 0);
    w.out.files = std::mem::take(&mut w.files);
    w.out
}

/// A variable's value, when the line itself set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Val {
    Known(String),
    /// A `for` variable over a glob: each file the pattern matches.
    Glob(String),
    Unknown,
}

/// What the shell carries from one command to the next.
#[derive(Debug, Clone)]
pub(super) struct Ctx {
    pub cwd: Cwd,
    pub oldpwd: Cwd,
    /// `pushd`'s stack, top last.
    pub dirs: Vec<Cwd>,
    /// Variables set on the line (or in a script it runs).
    pub vars: HashMap<String, Val>,
    pub exported: HashSet<String>,
    /// `$0`, `$1`, … when known (a script run with literal arguments).
    pub positional: Option<Vec<String>>,
    pub origin: Origin,
    /// `shopt -s cdable_vars`: `cd NAME` may go to `$NAME`.
    pub cdable_vars: bool,
}

impl Ctx {
    pub fn new(cwd: Cwd) -> Ctx {
        Ctx {
            cwd,
            oldpwd: Cwd::unknown(),
            dirs: Vec::new(),
            vars: HashMap::new(),
            exported: HashSet::new(),
            positional: None,
            origin: Origin::Line,
            cdable_vars: false,
        }
    }

    /// A fresh shell started by this one (a script, `bash -c`): exported variables and the
    /// folder carry over, nothing else.
    pub fn child(&self, origin: Origin) -> Ctx {
        let mut c = Ctx::new(self.cwd.clone());
        c.origin = origin;
        for n in &self.exported {
            if let Some(v) = self.vars.get(n) {
                c.vars.insert(n.clone(), v.clone());
            }
            c.exported.insert(n.clone());
        }
        c
    }

    /// After a branch that may or may not have run: what holds either way.
    pub fn merge(&mut self, other: &Ctx) {
        self.cwd = self.cwd.either(&other.cwd);
        self.oldpwd = self.oldpwd.either(&other.oldpwd);
        if self.dirs != other.dirs {
            self.dirs = vec![Cwd::unknown(); self.dirs.len().max(other.dirs.len())];
        }
        let names: HashSet<String> = self.vars.keys().chain(other.vars.keys()).cloned().collect();
        for n in names {
            if self.vars.get(&n) != other.vars.get(&n) {
                self.vars.insert(n, Val::Unknown);
            }
        }
        self.exported.extend(other.exported.iter().cloned());
        self.cdable_vars |= other.cdable_vars;
    }

    pub fn set(&mut self, name: &str, v: Val) {
        self.vars.insert(name.to_string(), v);
    }
}

/// How a command is placed in its pipeline.
#[derive(Debug, Clone, Default)]
pub(super) struct Stage {
    /// Invocations of the earlier stages.
    pub upstream: Vec<usize>,
    /// Runs at the same time as others (a pipeline stage or `&`): a function calling itself
    /// here is a fork bomb.
    pub concurrent: bool,
}

/// Files read from disk while judging one line, at most.
pub(super) const MAX_SOURCE_FILES: usize = 32;
/// Bytes read from disk while judging one line, at most.
pub(super) const MAX_SOURCE_BYTES: usize = 1024 * 1024;

pub(super) struct Walker<'e> {
    pub env: &'e Env,
    pub out: Analysis,
    pub functions: HashMap<String, Rc<ast::FunctionBody>>,
    /// Functions being defined, innermost last (for fork-bomb detection).
    pub defining: Vec<String>,
    /// Functions being called, to stop recursion.
    pub calling: Vec<String>,
    pub aliases: HashMap<String, String>,
    /// Files written earlier on the line, by path: what is known of their content.
    pub files: HashMap<PathBuf, Content>,
    /// The first command earlier on the line that may write files Forge does not model (a
    /// test runner, a build tool, a program it does not know): a code file the line names that
    /// is missing when the line is judged may be there when it runs, so its content is
    /// unknowable, not "nothing runs".
    pub unknown_writer: Option<String>,
    /// The first command earlier on the line that puts unknown content in place of files (`tar
    /// x`, `unzip`, `git checkout other -- x.sh`, a folder copy): every code file the line runs
    /// afterwards is unknowable, whether it exists now or not.
    pub replacer: Option<String>,
    /// `package.json` scripts set earlier on the line (`npm pkg set scripts.x=…`).
    pub package_scripts: HashMap<String, String>,
    pub files_read: usize,
    pub bytes_read: usize,
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
    max > MAX_NESTING || case_words(line) > MAX_CASES
}

/// `case` as a shell word (not inside `--ignore-case` or `testcase`).
fn case_words(line: &str) -> usize {
    let b = line.as_bytes();
    line.match_indices("case")
        .filter(|(i, _)| {
            let before = if *i == 0 { b' ' } else { b[i - 1] };
            let after = b.get(i + 4).copied().unwrap_or(b' ');
            b" \t\n;&|(".contains(&before) && b" \t\n".contains(&after)
        })
        .count()
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
        let at = i + p;
        let mut j = at + 2;
        if b.get(j) == Some(&b'<') {
            i = j + 1;
            continue;
        }
        // `$((1 << 4))`: a shift inside arithmetic, not a here-document.
        if line[..at]
            .rfind("((")
            .is_some_and(|o| !line[o..at].contains("))"))
        {
            i = j;
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

impl<'e> Walker<'e> {
    fn new(env: &'e Env) -> Walker<'e> {
        Walker {
            env,
            out: Analysis::default(),
            functions: HashMap::new(),
            defining: Vec::new(),
            calling: Vec::new(),
            aliases: HashMap::new(),
            files: HashMap::new(),
            unknown_writer: None,
            replacer: None,
            package_scripts: HashMap::new(),
            files_read: 0,
            bytes_read: 0,
        }
    }

    /// What earlier commands may have written that later code runs: whether it changed tells
    /// a loop to walk its body once more.
    fn taint(&self) -> (bool, bool, usize) {
        (
            self.unknown_writer.is_some(),
            self.replacer.is_some(),
            self.files.len(),
        )
    }

    /// A problem understanding part of the line. Inside code read from a file (a script, a
    /// recipe), it makes that code unknowable rather than the line unparseable.
    pub fn problem(&mut self, ctx: &Ctx, why: String) {
        match &ctx.origin {
            Origin::Line => self.out.problems.push(why),
            o => self.out.opaque.push(super::Opaque {
                what: o
                    .suffix(&self.env.root)
                    .trim()
                    .trim_matches(['(', ')'])
                    .to_string(),
                why: format!("Forge could not follow it: {why}"),
                downloaded: false,
                origin: o.clone(),
            }),
        }
    }

    /// Parses and walks shell text in `ctx`.
    pub fn line(&mut self, line: &str, ctx: &mut Ctx, depth: usize) {
        if depth > MAX_DEPTH {
            self.problem(
                ctx,
                format!("commands nested more than {MAX_DEPTH} levels deep"),
            );
            return;
        }
        if known_runaway(line) {
            self.problem(ctx, format!(
                "a here-document without a delimiter word, brackets nested deeper than {MAX_NESTING} or more than {MAX_CASES} case clauses"
            ));
            return;
        }
        let opts = ParserOptions::default();
        let mut parser = Parser::new(std::io::Cursor::new(line.as_bytes()), &opts);
        match parser.parse_program() {
            Ok(program) => {
                for list in &program.complete_commands {
                    self.list(list, ctx, depth);
                }
            }
            Err(e) => {
                self.problem(
                    ctx,
                    format!("cannot parse `{}`: {e}", crate::text::clip(line, 80)),
                );
            }
        }
    }

    /// A sequence of and-or lists.
    pub fn list(&mut self, list: &ast::CompoundList, ctx: &mut Ctx, depth: usize) {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            let background = matches!(sep, ast::SeparatorOperator::Async);
            if background {
                // `… &` runs in a subshell: nothing it does carries over.
                let mut sub = ctx.clone();
                self.and_or(and_or, &mut sub, depth, true);
            } else {
                self.and_or(and_or, ctx, depth, false);
            }
        }
    }

    /// `a && b || c`: `a` always runs; `b` runs in the state `a` left when it succeeded, `c`
    /// in a state where something failed; afterwards the shell is in either. A command that
    /// fails is taken to have kept the folder it started in (a failed `cd`) while its
    /// assignments happened.
    fn and_or(&mut self, ao: &ast::AndOrList, ctx: &mut Ctx, depth: usize, background: bool) {
        let failed = |before: &Ctx, after: &Ctx| {
            let mut f = after.clone();
            f.cwd = before.cwd.clone();
            f.oldpwd = before.oldpwd.clone();
            f.dirs = before.dirs.clone();
            f
        };
        let before = ctx.clone();
        self.pipeline(&ao.first, ctx, depth, background);
        if ao.additional.is_empty() {
            return;
        }
        let mut fail = failed(&before, ctx);
        for next in &ao.additional {
            match next {
                ast::AndOr::And(p) => {
                    let b = ctx.clone();
                    self.pipeline(p, ctx, depth, background);
                    fail.merge(&failed(&b, ctx));
                }
                ast::AndOr::Or(p) => {
                    let b = fail.clone();
                    let mut alt = fail.clone();
                    self.pipeline(p, &mut alt, depth, background);
                    ctx.merge(&alt);
                    fail = failed(&b, &alt);
                }
            }
        }
        ctx.merge(&fail);
    }

    fn pipeline(&mut self, p: &ast::Pipeline, ctx: &mut Ctx, depth: usize, background: bool) {
        if p.seq.len() == 1 {
            let stage = Stage {
                upstream: vec![],
                concurrent: background,
            };
            self.command(&p.seq[0], ctx, depth, &stage);
            return;
        }
        // Each stage of a multi-stage pipeline runs in a subshell: its `cd` does not last.
        let mut upstream: Vec<usize> = Vec::new();
        for cmd in &p.seq {
            let first = self.out.invocations.len();
            let mut sub = ctx.clone();
            let stage = Stage {
                upstream: upstream.clone(),
                concurrent: true,
            };
            self.command(cmd, &mut sub, depth, &stage);
            upstream.extend(first..self.out.invocations.len());
        }
    }

    fn command(&mut self, cmd: &ast::Command, ctx: &mut Ctx, depth: usize, stage: &Stage) {
        match cmd {
            ast::Command::Simple(s) => self.simple(s, ctx, depth, stage),
            ast::Command::Compound(c, redirects) => {
                let first_write = self.out.writes.len();
                if let Some(r) = redirects {
                    for io in &r.0 {
                        let _ = self.redirect(io, ctx, depth);
                    }
                }
                let _ = first_write;
                self.compound(c, ctx, depth, stage);
            }
            ast::Command::Function(f) => {
                let name = f.fname.value.clone();
                self.functions.insert(name.clone(), Rc::new(f.body.clone()));
                self.defining.push(name);
                let ast::FunctionBody(body, redirects) = &f.body;
                if let Some(r) = redirects {
                    for io in &r.0 {
                        let _ = self.redirect(io, ctx, depth);
                    }
                }
                // A function body runs only when called; it is also judged where it is defined
                // (the most dangerous reading: a function defined but called by a trap, a
                // script, or `xargs`), in a copy of the shell so nothing carries over.
                let mut sub = ctx.clone();
                self.compound(body, &mut sub, depth, &Stage::default());
                self.defining.pop();
            }
            ast::Command::ExtendedTest(test, redirects) => {
                if let Some(r) = redirects {
                    for io in &r.0 {
                        let _ = self.redirect(io, ctx, depth);
                    }
                }
                // `[[ $(rm -rf /) ]]`: substitutions in a test run.
                self.substitutions_in(&test.to_string(), ctx, depth);
            }
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand, ctx: &mut Ctx, depth: usize, stage: &Stage) {
        use ast::CompoundCommand as C;
        match c {
            C::BraceGroup(b) => self.list(&b.list, ctx, depth),
            C::Subshell(s) => {
                let mut sub = ctx.clone();
                self.list(&s.list, &mut sub, depth);
            }
            C::ForClause(f) => {
                let mut values = Vec::new();
                match &f.values {
                    Some(ws) => {
                        for w in ws {
                            values.extend(self.expand(w, ctx, depth));
                        }
                    }
                    None => values.push(Word {
                        arg: Arg::Dyn {
                            raw: "\"$@\"".into(),
                            programs: vec![],
                        },
                        pattern: None,
                    }),
                }
                let v = match values.as_slice() {
                    [w] if !w.glob() => w.arg.lit().map(|s| Val::Known(s.to_string())),
                    [w] => w.pattern.clone().map(Val::Glob),
                    _ => None,
                }
                .unwrap_or(Val::Unknown);
                let mut body = ctx.clone();
                body.set(&f.variable_name, v);
                let seen = self.taint();
                self.list(&f.body.list, &mut body, depth);
                // A second pass runs what the first one wrote or unpacked (`for i in 1 2; do
                // sh x.sh; tar xf k.tar; done`).
                if self.taint() != seen {
                    let mut again = body.clone();
                    self.list(&f.body.list, &mut again, depth);
                    body.merge(&again);
                }
                ctx.set(&f.variable_name, Val::Unknown);
                ctx.merge(&body);
            }
            C::CaseClause(c) => {
                self.expand(&c.value, ctx, depth);
                let before = ctx.clone();
                let mut merged: Option<Ctx> = None;
                let mut has_default = false;
                for item in &c.cases {
                    if item.patterns.iter().any(|p| p.value == "*") {
                        has_default = true;
                    }
                    let mut arm = before.clone();
                    if let Some(list) = &item.cmd {
                        self.list(list, &mut arm, depth);
                    }
                    match &mut merged {
                        Some(m) => m.merge(&arm),
                        None => merged = Some(arm),
                    }
                }
                if let Some(m) = merged {
                    *ctx = m;
                }
                if !has_default {
                    ctx.merge(&before);
                }
            }
            C::IfClause(i) => {
                self.list(&i.condition, ctx, depth);
                let after_cond = ctx.clone();
                let mut then = after_cond.clone();
                self.list(&i.then, &mut then, depth);
                let mut merged = then;
                let mut has_else = false;
                let mut chain = after_cond.clone();
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond, &mut chain, depth);
                    } else {
                        has_else = true;
                    }
                    let mut body = chain.clone();
                    self.list(&e.body, &mut body, depth);
                    merged.merge(&body);
                }
                if !has_else {
                    merged.merge(&chain);
                }
                *ctx = merged;
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0, ctx, depth);
                let mut body = ctx.clone();
                let seen = self.taint();
                self.list(&w.1.list, &mut body, depth);
                if self.taint() != seen {
                    let mut again = body.clone();
                    self.list(&w.0, &mut again, depth);
                    self.list(&w.1.list, &mut again, depth);
                    body.merge(&again);
                }
                // The condition runs again after the body: in whatever folder it left.
                let mut again = body.clone();
                self.list(&w.0, &mut again, depth);
                ctx.merge(&again);
            }
            C::Arithmetic(a) => {
                // `(( $(rm -rf /) ))`: substitutions in arithmetic run too.
                self.substitutions_in(&a.expr.value, ctx, depth);
            }
            C::ArithmeticForClause(f) => {
                self.substitutions_in(&c.to_string(), ctx, depth);
                let mut body = ctx.clone();
                self.list(&f.body.list, &mut body, depth);
                ctx.merge(&body);
            }
            C::Coprocess(co) => {
                let mut sub = ctx.clone();
                let stage = Stage {
                    upstream: stage.upstream.clone(),
                    concurrent: true,
                };
                self.command(&co.body, &mut sub, depth, &stage);
            }
        }
    }

    /// Records a redirection; returns what it feeds to stdin, if it does.
    pub fn redirect(&mut self, io: &ast::IoRedirect, ctx: &mut Ctx, depth: usize) -> Option<Stdin> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match io {
            R::File(_, kind, target) => match target {
                T::Filename(w) | T::Duplicate(w) => {
                    let dup = matches!(target, T::Duplicate(_));
                    let word = self.expand_one(w, ctx, depth);
                    // `>&2`, `<&-`: descriptors, not files.
                    if dup
                        && word
                            .arg
                            .lit()
                            .is_some_and(|s| s == "-" || s.bytes().all(|b| b.is_ascii_digit()))
                    {
                        return None;
                    }
                    let r = Redirect {
                        target: word.clone(),
                        cwd: ctx.cwd.clone(),
                        by: None,
                        origin: ctx.origin.clone(),
                    };
                    match kind {
                        K::Write
                        | K::Append
                        | K::Clobber
                        | K::ReadAndWrite
                        | K::DuplicateOutput => {
                            self.out.writes.push(r);
                            None
                        }
                        K::Read | K::DuplicateInput => {
                            self.out.reads.push(r);
                            Some(Stdin::File(word))
                        }
                    }
                }
                T::ProcessSubstitution(_, sub) => {
                    let first = self.out.invocations.len();
                    let mut c = ctx.clone();
                    self.list(&sub.list, &mut c, depth + 1);
                    let programs = self.names_since(first);
                    matches!(kind, K::Read).then(|| {
                        Stdin::Text(self.produced_text(first).map(Arg::Lit).unwrap_or(Arg::Dyn {
                            raw: "<(…)".into(),
                            programs,
                        }))
                    })
                }
                T::Fd(_) => None,
            },
            R::OutputAndError(w, _) => {
                let word = self.expand_one(w, ctx, depth);
                self.out.writes.push(Redirect {
                    target: word,
                    cwd: ctx.cwd.clone(),
                    by: None,
                    origin: ctx.origin.clone(),
                });
                None
            }
            R::HereDocument(_, doc) => {
                let body = &doc.doc.value;
                if doc.requires_expansion && (body.contains('$') || body.contains('`')) {
                    Some(Stdin::Text(self.heredoc_text(body, ctx, depth)))
                } else {
                    Some(Stdin::Text(Arg::Lit(body.clone())))
                }
            }
            R::HereString(_, w) => {
                let word = self.expand_one(w, ctx, depth);
                let arg = match word.arg {
                    Arg::Lit(s) => Arg::Lit(format!("{s}\n")),
                    d => d,
                };
                Some(Stdin::Text(arg))
            }
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand, ctx: &mut Ctx, depth: usize, stage: &Stage) {
        use ast::CommandPrefixOrSuffixItem as I;
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
        // Aliases apply to an unquoted first word, before anything is expanded.
        if let Some(w) = &s.word_or_name
            && let Some(value) = self.aliases.get(&w.value).cloned()
            && s.prefix.is_none()
        {
            let rest: Vec<String> = s
                .suffix
                .iter()
                .flat_map(|x| x.0.iter().map(|i| i.to_string()))
                .collect();
            let text = format!("{value} {}", rest.join(" "));
            // An alias that names itself is expanded once, as bash does.
            let saved = self.aliases.remove(&w.value);
            self.line(&text, ctx, depth + 1);
            if let Some(v) = saved {
                self.aliases.insert(w.value.clone(), v);
            }
            return;
        }
        let mut stdin = if stage.upstream.is_empty() {
            Stdin::None
        } else {
            match self.produced_text_of(&stage.upstream) {
                Some(t) => Stdin::Text(Arg::Lit(t)),
                None => Stdin::Pipe,
            }
        };
        let mut argv: Vec<Word> = Vec::new();
        let mut assigns: Vec<(String, Val, Arg)> = Vec::new();
        let first_write = self.out.writes.len();
        let first_read = self.out.reads.len();
        for (item, is_arg) in items {
            match item {
                I::IoRedirect(io) => {
                    if let Some(s) = self.redirect(io, ctx, depth) {
                        stdin = s;
                    }
                }
                I::Word(w) => argv.extend(self.expand(w, ctx, depth)),
                I::AssignmentWord(_, w) if is_arg || !argv.is_empty() => {
                    argv.extend(self.expand_assignment_word(w, ctx, depth))
                }
                I::AssignmentWord(a, _) => {
                    let name = match &a.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                    };
                    match &a.value {
                        ast::AssignmentValue::Scalar(w) if !a.append => {
                            let word = self.expand_value(w, ctx, depth);
                            let v = match &word {
                                Arg::Lit(s) => Val::Known(s.clone()),
                                Arg::Dyn { .. } if name == "PATH" => path_prefix(&w.value),
                                Arg::Dyn { .. } => Val::Unknown,
                            };
                            let word = match (&v, name.as_str()) {
                                (Val::Known(p), "PATH") => Arg::Lit(p.clone()),
                                _ => word,
                            };
                            assigns.push((name, v, word));
                        }
                        ast::AssignmentValue::Scalar(w) => {
                            self.expand_value(w, ctx, depth);
                            assigns.push((name.clone(), Val::Unknown, dyn_arg(&name)));
                        }
                        ast::AssignmentValue::Array(ws) => {
                            for (_, w) in ws {
                                self.expand(w, ctx, depth);
                            }
                            assigns.push((name.clone(), Val::Unknown, dyn_arg(&name)));
                        }
                    }
                }
                I::ProcessSubstitution(kind, sub) => {
                    let first = self.out.invocations.len();
                    let mut c = ctx.clone();
                    self.list(&sub.list, &mut c, depth + 1);
                    let programs = self.names_since(first);
                    let known = matches!(kind, ast::ProcessSubstitutionKind::Read)
                        .then(|| self.produced_text(first))
                        .flatten();
                    let arg = Arg::Dyn {
                        raw: "<(…)".into(),
                        programs,
                    };
                    if let Some(text) = known {
                        // A script that runs `<(echo 'rm -rf ~')` reads known text: keep it
                        // where `source`/`bash` look for it.
                        let path = PathBuf::from(format!("/dev/fd/63-{}", self.files.len()));
                        self.files.insert(path.clone(), Content::Text(text));
                        argv.push(Word::lit(path.display().to_string()));
                    } else {
                        argv.push(Word { arg, pattern: None });
                    }
                }
            }
        }
        if argv.is_empty() {
            // Plain assignments: they last for the rest of the shell.
            for (name, v, _) in assigns {
                self.assigned(&name, &v, ctx, depth);
                ctx.set(&name, v);
            }
            return;
        }
        if let Some(f) = self.defining.last()
            && argv[0].arg.lit() == Some(f.as_str())
            && stage.concurrent
        {
            self.out.fork_bomb = true;
        }
        let mut env: Vec<(String, Arg)> = ctx
            .exported
            .iter()
            .map(|n| {
                let v = match ctx.vars.get(n) {
                    Some(Val::Known(s)) => Arg::Lit(s.clone()),
                    _ => dyn_arg(n),
                };
                (n.clone(), v)
            })
            .collect();
        env.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, v, arg) in &assigns {
            self.assigned(name, v, ctx, depth);
            env.push((name.clone(), arg.clone()));
        }
        // Prefix assignments are the command's environment; they also expand in its words
        // only through the environment, which bash does not do for the words themselves.
        let first = self.out.invocations.len();
        let call = super::wrappers::Call {
            argv,
            wrappers: Vec::new(),
            env,
            stdin,
            upstream: stage.upstream.clone(),
            names: Names::None,
        };
        // A function call runs its body here, in this shell.
        if let Some(name) = call.argv[0].arg.lit().map(str::to_string)
            && let Some(body) = self.functions.get(&name).cloned()
            && !self.calling.contains(&name)
        {
            self.calling.push(name.clone());
            let ast::FunctionBody(body, _) = &*body;
            let mut positional = vec![name.clone()];
            positional.extend(call.argv[1..].iter().map(|w| w.arg.display().to_string()));
            let known = call.argv[1..].iter().all(|w| w.arg.lit().is_some());
            let saved = std::mem::replace(&mut ctx.positional, known.then_some(positional));
            self.compound(body, ctx, depth + 1, stage);
            ctx.positional = saved;
            self.calling.pop();
            return;
        }
        self.invoke(call, ctx, depth);
        let name = |i: &Invocation| i.name().unwrap_or("a computed program").to_string();
        if self.unknown_writer.is_none() {
            self.unknown_writer = self.out.invocations[first..]
                .iter()
                .find(|i| super::sources::may_write_unknown_files(i))
                .map(name);
        }
        if self.replacer.is_none() {
            self.replacer = self.out.invocations[first..]
                .iter()
                .find(|i| super::sources::replaces_files(i))
                .map(name);
        }
        let inv = self.out.invocations.get(first).cloned();
        self.note_written(first_write, inv.as_ref());
        if let Some(i) = &inv {
            self.note_copies(i);
        }
        // The redirections belong to the command just recorded (its last top-level
        // invocation), for rules that follow data from a command into a file.
        if self.out.invocations.len() > first {
            let by = first;
            for r in &mut self.out.writes[first_write..] {
                r.by.get_or_insert(by);
            }
            for r in &mut self.out.reads[first_read..] {
                r.by.get_or_insert(by);
            }
        }
    }

    /// A variable set on the line whose value bash or git runs as a command
    /// (`GIT_SSH_COMMAND`, `PAGER`, …): judged as the command it will be.
    pub(super) fn assigned(&mut self, name: &str, v: &Val, ctx: &mut Ctx, depth: usize) {
        const COMMAND_VARS: [&str; 14] = [
            "GIT_SSH_COMMAND",
            "GIT_SSH",
            "GIT_EXTERNAL_DIFF",
            "GIT_PAGER",
            "GIT_EDITOR",
            "GIT_SEQUENCE_EDITOR",
            "GIT_ASKPASS",
            "GIT_PROXY_COMMAND",
            "SSH_ASKPASS",
            "PAGER",
            "EDITOR",
            "VISUAL",
            "LESSOPEN",
            "PROMPT_COMMAND",
        ];
        if COMMAND_VARS.contains(&name)
            && let Val::Known(cmd) = v
        {
            let mut sub = ctx.clone();
            self.line(cmd, &mut sub, depth + 1);
        }
        // A script every non-interactive bash reads first.
        if matches!(name, "BASH_ENV" | "ENV")
            && let Val::Known(path) = v
        {
            let w = Word::lit(path.clone());
            self.run_script(&w, &[], ctx, depth, false);
        }
    }

    /// Command substitutions inside text that expands (a here-document body, a test).
    pub fn substitutions_in(&mut self, body: &str, ctx: &mut Ctx, depth: usize) {
        if !body.contains("$(") && !body.contains('`') {
            return;
        }
        let _ = self.heredoc_text(body, ctx, depth);
    }

    pub fn push(&mut self, inv: Invocation) -> usize {
        self.out.invocations.push(inv);
        self.out.invocations.len() - 1
    }

    pub fn names_since(&self, first: usize) -> Vec<String> {
        self.out.invocations[first..]
            .iter()
            .map(|i| i.program.display().to_string())
            .collect()
    }

    /// The text the invocations since `first` print, when it is known: `echo`/`printf` with
    /// literal arguments, `cat` of a here-document or a known file.
    pub fn produced_text(&mut self, first: usize) -> Option<String> {
        let idx: Vec<usize> = (first..self.out.invocations.len()).collect();
        self.produced_text_of(&idx)
    }

    /// What the given invocations print, concatenated, when every one of them prints known
    /// text (`crontab -l` and the like print the person's own, known-harmless text).
    pub fn produced_text_of(&mut self, idx: &[usize]) -> Option<String> {
        if idx.is_empty() {
            return None;
        }
        let mut out = String::new();
        for &i in idx {
            let inv = self.out.invocations[i].clone();
            // A stage that reads its input passes it on unchanged only when it is `cat` or
            // `tee`; anything else (`base64 -d`, `sed`) makes it unknown.
            if !inv.upstream.is_empty() && !matches!(inv.name(), Some("echo" | "printf")) {
                let plain = inv.lit_args().flatten().all(|a| a.starts_with('-'));
                if matches!(inv.name(), Some("cat") if plain) || inv.name() == Some("tee") {
                    continue;
                }
                return None;
            }
            // `cat FILE`: the file, read the bounded way.
            let files: Vec<&str> = inv
                .lit_args()
                .flatten()
                .filter(|a| !a.starts_with('-'))
                .collect();
            if inv.name() == Some("cat")
                && !files.is_empty()
                && inv.args.iter().all(|w| w.arg.lit().is_some())
            {
                let cwd = inv.cwd.one()?.to_path_buf();
                for f in files {
                    match self.file_content(&cwd.join(f)) {
                        super::sources::Content::Text(t) => out.push_str(&t),
                        _ => return None,
                    }
                }
                continue;
            }
            out.push_str(&super::sources::printed_text(&inv, &self.files)?);
        }
        Some(out)
    }
}

/// `PATH=/tmp/x:$PATH`: the folders put first are known even when the rest is not (the rest
/// are the system's; only the first matter for what a bare name runs).
pub(super) fn path_prefix(raw: &str) -> Val {
    let value = raw
        .split_once('=')
        .map_or(raw, |(_, v)| v)
        .trim_matches('"');
    let known: Vec<&str> = value
        .split(':')
        .take_while(|d| !d.contains('$') && !d.contains('`'))
        .collect();
    if known.is_empty() {
        Val::Unknown
    } else {
        Val::Known(known.join(":"))
    }
}

/// An argument standing for an unknown variable.
pub(super) fn dyn_arg(name: &str) -> Arg {
    Arg::Dyn {
        raw: format!("${name}"),
        programs: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Cwd, analyze};
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

    fn cwd_of(a: &Analysis, prog: &str) -> Cwd {
        a.invocations
            .iter()
            .find(|i| i.name() == Some(prog))
            .unwrap_or_else(|| panic!("no {prog} in {:?}", progs(a)))
            .cwd
            .clone()
    }

    #[test]
    fn lists_pipes_subshells_and_substitutions() {
        let a = run("cd src && (make; echo ok) | tee log.txt || echo $(whoami) `date`");
        assert_eq!(
            progs(&a),
            ["cd", "make", "echo", "tee", "whoami", "date", "echo"]
        );
        assert_eq!(a.invocations[1].cwd, Cwd::at("/repo/src"));
        assert_eq!(a.invocations[3].upstream, [1, 2]);
        assert!(a.problems.is_empty());
    }

    #[test]
    fn data_arguments_are_not_commands() {
        let a = run(r#"echo "rm -rf /" && grep -r "rm -rf" docs/ && git commit -m "rm -rf /""#);
        assert_eq!(progs(&a), ["echo", "grep", "git"]);
    }

    #[test]
    fn heredoc_substitutions_run_unless_quoted() {
        let a = run("cat <<EOF\n$(rm -rf /)\nEOF");
        assert!(progs(&a).contains(&"rm".to_string()), "{:?}", progs(&a));
        let a = run("cat <<'EOF'\n$(rm -rf /)\nEOF\necho done");
        assert!(!progs(&a).contains(&"rm".to_string()));
    }

    #[test]
    fn fork_bomb_and_functions() {
        assert!(run(":(){ :|:& };:").fork_bomb);
        assert!(run("bomb(){ bomb|bomb& }; bomb").fork_bomb);
        assert!(!run("f(){ echo hi; }; f").fork_bomb);
        let a = run("wipe(){ rm -rf /; }; wipe");
        assert!(progs(&a).contains(&"rm".to_string()));
        // Recursion stops.
        let a = run("f(){ f; echo x; }; f");
        assert!(a.problems.is_empty());
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
        assert!(
            !run(&"x".repeat(super::super::MAX_LINE + 1))
                .problems
                .is_empty()
        );
        // Arithmetic shifts and words that merely contain `case` are not runaways.
        assert!(run("echo $((1 << 4))").problems.is_empty());
        let many = "grep --ignore-case x f; ".repeat(20);
        assert!(run(&many).problems.is_empty());
    }

    #[test]
    fn the_folder_follows_every_branch() {
        // Known after an unconditional cd; either folder after a conditional one.
        assert_eq!(cwd_of(&run("cd src; ls"), "ls"), Cwd::at("/repo/src"));
        assert_eq!(
            cwd_of(&run("if true; then cd /etc; fi; ls"), "ls"),
            Cwd::at("/repo").either(&Cwd::at("/etc"))
        );
        assert_eq!(
            cwd_of(&run("case x in x) cd /etc;; esac; ls"), "ls"),
            Cwd::at("/etc").either(&Cwd::at("/repo"))
        );
        assert_eq!(
            cwd_of(&run("for d in /etc; do cd $d; done; ls"), "ls"),
            Cwd::at("/repo").either(&Cwd::at("/etc"))
        );
        assert_eq!(
            cwd_of(&run("go(){ cd /etc; }; go; ls"), "ls"),
            Cwd::at("/etc")
        );
        assert_eq!(cwd_of(&run("eval cd /etc; ls"), "ls"), Cwd::at("/etc"));
        assert_eq!(cwd_of(&run("pushd /etc; ls"), "ls"), Cwd::at("/etc"));
        assert_eq!(
            cwd_of(&run("pushd /etc; pushd /usr; popd; ls"), "ls"),
            Cwd::at("/etc")
        );
        assert_eq!(cwd_of(&run("{ cd /etc; }; ls"), "ls"), Cwd::at("/etc"));
        assert_eq!(cwd_of(&run("(cd /etc); ls"), "ls"), Cwd::at("/repo"));
        assert_eq!(cwd_of(&run("cd /etc | true; ls"), "ls"), Cwd::at("/repo"));
        assert!(!cwd_of(&run("cd $DIR && ls"), "ls").is_known());
        assert!(!cwd_of(&run("cd -; ls"), "ls").is_known());
        assert!(!cwd_of(&run("CDPATH=/ cd etc; ls"), "ls").is_known());
        assert!(
            !cwd_of(&run("shopt -s cdable_vars; h=/etc; cd h; ls"), "ls").is_known()
                || cwd_of(&run("shopt -s cdable_vars; h=/etc; cd h; ls"), "ls")
                    .paths()
                    .contains(&PathBuf::from("/etc"))
        );
        assert_eq!(cwd_of(&run("HOME=/etc; cd; ls"), "ls"), Cwd::at("/etc"));
        assert_eq!(cwd_of(&run("cd; ls"), "ls"), Cwd::at("/home/u"));
        assert_eq!(cwd_of(&run("cd src && cd ..; ls"), "ls").paths().len(), 2);
    }

    #[test]
    fn aliases_expand() {
        let a = run("shopt -s expand_aliases; alias ll='rm -rf /'; ll");
        assert!(progs(&a).contains(&"rm".to_string()), "{:?}", progs(&a));
        let a = run("alias ls='ls -la'; ls");
        assert_eq!(progs(&a).last().map(String::as_str), Some("ls"));
    }
}
