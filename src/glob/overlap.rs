//! Whether two path globs can match the same path: a search's file pattern against the shapes
//! of secret files (`paths::pattern_reaches_secret`). Globs as ripgrep, Node's `glob` and
//! Gemini read them: `*`, `?` and `[…]` within one segment, `**` across segments, `{a,b}`
//! alternatives, `\` escaping; names compared without case, as a case-insensitive disk opens
//! them. The product of the two patterns' automata is searched, so no path is ever listed.

use std::collections::HashSet;

/// One path segment of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// `**`: any number of segments.
    Any,
    /// One segment, as tokens.
    One(Vec<Tok>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// `*`: any run of characters but `/`.
    Star,
    /// `?`: one character.
    One,
    Lit(char),
    /// `[…]`: negated or not, with its ranges.
    Set(bool, Vec<(char, char)>),
}

/// The most alternatives `{…}` expands to; past it the rest is kept as written.
const MAX_ALTERNATIVES: usize = 64;

/// `a{b,c}d` as `abd`, `acd` (nested too).
pub fn braces(p: &str) -> Vec<String> {
    let mut out = vec![p.to_string()];
    let mut i = 0;
    while i < out.len() {
        let s = out[i].clone();
        if let Some((open, close)) = innermost_braces(&s)
            && out.len() < MAX_ALTERNATIVES
        {
            let inner = &s[open + 1..close];
            let alts: Vec<String> = inner
                .split(',')
                .map(|a| format!("{}{a}{}", &s[..open], &s[close + 1..]))
                .collect();
            out.splice(i..=i, alts);
            continue;
        }
        i += 1;
    }
    let mut seen = HashSet::new();
    out.retain(|a| seen.insert(a.clone()));
    out
}

fn innermost_braces(s: &str) -> Option<(usize, usize)> {
    let mut open = None;
    for (i, c) in s.char_indices() {
        match c {
            '{' => open = Some(i),
            '}' => {
                if let Some(o) = open {
                    return Some((o, i));
                }
            }
            _ => {}
        }
    }
    None
}

/// A glob's segments (`.` and empty ones dropped, `..` taking one back).
pub fn segments(p: &str) -> Vec<Seg> {
    let mut out: Vec<Seg> = Vec::new();
    for s in p.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            "**" => out.push(Seg::Any),
            _ => out.push(Seg::One(tokens(s))),
        }
    }
    out
}

/// A path's own segments, every character literal.
pub fn literal(p: &str) -> Vec<Seg> {
    p.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(|s| {
            Seg::One(
                s.chars()
                    .flat_map(char::to_lowercase)
                    .map(Tok::Lit)
                    .collect(),
            )
        })
        .collect()
}

/// Whether the segment has a wildcard.
pub fn is_wild(s: &Seg) -> bool {
    match s {
        Seg::Any => true,
        Seg::One(t) => t.iter().any(|t| !matches!(t, Tok::Lit(_))),
    }
}

fn tokens(s: &str) -> Vec<Tok> {
    let c: Vec<char> = s.chars().flat_map(char::to_lowercase).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '*' => {
                if out.last() != Some(&Tok::Star) {
                    out.push(Tok::Star);
                }
            }
            '?' => out.push(Tok::One),
            '\\' if i + 1 < c.len() => {
                i += 1;
                out.push(Tok::Lit(c[i]));
            }
            '[' => match set(&c[i + 1..]) {
                Some((t, used)) => {
                    out.push(t);
                    i += used;
                }
                None => out.push(Tok::Lit('[')),
            },
            ch => out.push(Tok::Lit(ch)),
        }
        i += 1;
    }
    out
}

/// A `[…]` class after its `[`: the token and how many characters it used.
fn set(c: &[char]) -> Option<(Tok, usize)> {
    let mut i = 0;
    let neg = matches!(c.first(), Some('!') | Some('^'));
    if neg {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    while i < c.len() {
        if c[i] == ']' && !first {
            return Some((Tok::Set(neg, ranges), i + 1));
        }
        first = false;
        let lo = c[i];
        if i + 2 < c.len() && c[i + 1] == '-' && c[i + 2] != ']' {
            ranges.push((lo, c[i + 2]));
            i += 3;
        } else {
            ranges.push((lo, lo));
            i += 1;
        }
    }
    None
}

fn admits(t: &Tok, ch: char) -> bool {
    match t {
        Tok::Star | Tok::One => ch != '/',
        Tok::Lit(c) => *c == ch,
        Tok::Set(neg, r) => r.iter().any(|(a, b)| *a <= ch && ch <= *b) != *neg,
    }
}

/// Some character both tokens take.
fn meet(a: &Tok, b: &Tok) -> bool {
    match (a, b) {
        (Tok::Lit(c), t) | (t, Tok::Lit(c)) => admits(t, *c),
        (Tok::Star | Tok::One, t) | (t, Tok::Star | Tok::One) => {
            (' '..='~').any(|c| c != '/' && admits(t, c)) || admits(t, 'é')
        }
        (x, y) => (' '..='~').any(|c| admits(x, c) && admits(y, c)),
    }
}

/// Some segment both match.
fn seg_meet(a: &[Tok], b: &[Tok]) -> bool {
    let mut seen = HashSet::new();
    let mut todo = vec![(0, 0)];
    while let Some((i, j)) = todo.pop() {
        if !seen.insert((i, j)) {
            continue;
        }
        if i == a.len() && j == b.len() {
            return true;
        }
        if a.get(i) == Some(&Tok::Star) {
            todo.push((i + 1, j));
        }
        if b.get(j) == Some(&Tok::Star) {
            todo.push((i, j + 1));
        }
        if i < a.len() && j < b.len() && meet(&a[i], &b[j]) {
            let ni = if a[i] == Tok::Star { i } else { i + 1 };
            let nj = if b[j] == Tok::Star { j } else { j + 1 };
            todo.push((ni, nj));
        }
    }
    false
}

/// Whether some path matches both `a` and `b`.
pub fn overlap(a: &[Seg], b: &[Seg]) -> bool {
    let mut seen = HashSet::new();
    let mut todo = vec![(0, 0)];
    while let Some((i, j)) = todo.pop() {
        if !seen.insert((i, j)) {
            continue;
        }
        if i == a.len() && j == b.len() {
            return true;
        }
        let sa = a.get(i);
        let sb = b.get(j);
        if sa == Some(&Seg::Any) {
            todo.push((i + 1, j));
            if sb.is_some() {
                todo.push((i, j + 1));
            }
        }
        if sb == Some(&Seg::Any) {
            todo.push((i, j + 1));
            if sa.is_some() {
                todo.push((i + 1, j));
            }
        }
        if let (Some(Seg::One(x)), Some(Seg::One(y))) = (sa, sb)
            && seg_meet(x, y)
        {
            todo.push((i + 1, j + 1));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(a: &str, b: &str) -> bool {
        overlap(&segments(a), &segments(b))
    }

    #[test]
    fn globs_overlap_when_one_path_matches_both() {
        assert!(both("**/.env*", "**/.env"));
        assert!(both(".e*", ".env"));
        assert!(both("*", "*.key"));
        assert!(both(".ss?/id_*", ".ssh/id_rsa"));
        assert!(both("**/[st]erraform.tfstat[e]", "**/*.tfstate"));
        assert!(both("**/*.KEY", "**/*.key"));
        assert!(!both("**/*.rs", "**/*.key"));
        assert!(!both("src/*.ts", ".env"));
        assert!(
            both("**/*.rs", ".ssh/**"),
            "ripgrep may be run with `--hidden`"
        );
        assert!(!both("src/**/*.rs", ".ssh/**"));
        assert!(!both("[!.]*", ".env"));
    }

    #[test]
    fn braces_expand() {
        assert_eq!(braces("*.{env,key}"), ["*.env", "*.key"]);
        assert_eq!(braces("{a,{b,c}}x"), ["ax", "bx", "cx"]);
        assert_eq!(braces("plain"), ["plain"]);
    }
}
