//! Makefile recipes: `make [targets]` runs the recipes of its targets (and their prerequisites,
//! and pattern rules), each line in its own shell in the Makefile's folder, with make's
//! variables substituted; what Forge cannot expand becomes a value computed at run time.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::sources::Content;
use super::walk::{Ctx, Walker};
use super::{Cwd, Opaque, Origin, Word};

impl Walker<'_> {
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

    pub(super) fn first_readable(
        &mut self,
        candidates: &[PathBuf],
        tool: &str,
        ctx: &Ctx,
    ) -> Option<(PathBuf, String)> {
        for c in candidates {
            match self.looked_up_content(c) {
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

#[cfg(test)]
mod tests {
    use super::super::sources::tests::{has, repo, run_in};

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
}
