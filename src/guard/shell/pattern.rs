//! Shell patterns: matching a glob against names (`*`, `?`, `[…]` with `!`/`^` and ranges,
//! `\\` escapes) and finding what a glob matches on disk, bounded, as bash would.

use std::path::{Path, PathBuf};

/// Whether `s` matches the shell pattern `p` (`*`, `?`, `[…]` with `!`/`^` and ranges, `\`
/// escapes). With `path`, `*` and `?` do not match `/`.
pub(crate) fn glob_match(p: &[char], s: &[char], path: bool) -> bool {
    // Backtracking with memo over (pattern, text) positions: both are short.
    let mut memo = vec![None; (p.len() + 1) * (s.len() + 1)];
    fn go(
        p: &[char],
        s: &[char],
        pi: usize,
        si: usize,
        path: bool,
        memo: &mut Vec<Option<bool>>,
    ) -> bool {
        let key = pi * (s.len() + 1) + si;
        if let Some(v) = memo[key] {
            return v;
        }
        let r = if pi == p.len() {
            si == s.len()
        } else {
            match p[pi] {
                '*' => {
                    go(p, s, pi + 1, si, path, memo)
                        || (si < s.len()
                            && !(path && s[si] == '/')
                            && go(p, s, pi, si + 1, path, memo))
                }
                '?' => {
                    si < s.len() && !(path && s[si] == '/') && go(p, s, pi + 1, si + 1, path, memo)
                }
                '[' => match class(p, pi) {
                    Some((set, negate, end)) => {
                        si < s.len()
                            && s[si] != '/'
                            && (set_has(&set, s[si]) != negate)
                            && go(p, s, end, si + 1, path, memo)
                    }
                    None => si < s.len() && s[si] == '[' && go(p, s, pi + 1, si + 1, path, memo),
                },
                '\\' if pi + 1 < p.len() => {
                    si < s.len() && s[si] == p[pi + 1] && go(p, s, pi + 2, si + 1, path, memo)
                }
                c => si < s.len() && s[si] == c && go(p, s, pi + 1, si + 1, path, memo),
            }
        };
        memo[key] = Some(r);
        r
    }
    go(p, s, 0, 0, path, &mut memo)
}

/// A `[…]` class at `p[at]`: its members (as ranges), whether negated, and where it ends.
/// A bracket class: its ranges, whether it is negated, and where it ends.
type Class = (Vec<(char, char)>, bool, usize);

fn class(p: &[char], at: usize) -> Option<Class> {
    let mut i = at + 1;
    let negate = matches!(p.get(i), Some('!') | Some('^'));
    if negate {
        i += 1;
    }
    let mut set = Vec::new();
    let start = i;
    while i < p.len() {
        if p[i] == ']' && i > start {
            return Some((set, negate, i + 1));
        }
        let c = if p[i] == '\\' && i + 1 < p.len() {
            i += 1;
            p[i]
        } else {
            p[i]
        };
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            set.push((c, p[i + 2]));
            i += 3;
        } else {
            set.push((c, c));
            i += 1;
        }
    }
    None
}

fn set_has(set: &[(char, char)], c: char) -> bool {
    set.iter().any(|&(a, b)| a <= c && c <= b)
}

/// Entries read per folder while matching a glob, at most.
const MAX_DIR_ENTRIES: usize = 5000;

/// Matches returned for one glob, at most.
const MAX_MATCHES: usize = 256;

/// The files a glob pattern (as in [`Word::pattern`]) matches on disk, relative to `cwd`,
/// sorted as bash sorts them; a leading `.` must be matched explicitly.
pub fn shell_glob_matches(pattern: &str, cwd: &Path) -> Vec<PathBuf> {
    let (mut bases, rest) = if let Some(r) = pattern.strip_prefix('/') {
        (vec![PathBuf::from("/")], r)
    } else {
        (vec![cwd.to_path_buf()], pattern)
    };
    let parts: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    for part in parts {
        let pat: Vec<char> = part.chars().collect();
        let is_glob = has_glob(&pat);
        let mut next = Vec::new();
        for b in &bases {
            if !is_glob {
                next.push(b.join(unescape(part)));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(b) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .take(MAX_DIR_ENTRIES)
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| {
                    (!n.starts_with('.') || part.starts_with('.'))
                        && glob_match(&pat, &n.chars().collect::<Vec<_>>(), true)
                })
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| b.join(n)));
            if next.len() > MAX_MATCHES {
                break;
            }
        }
        next.truncate(MAX_MATCHES);
        bases = next;
    }
    bases.retain(|p| crate::guard::paths::symlink_metadata(p).is_some());
    bases
}

fn has_glob(p: &[char]) -> bool {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => i += 2,
            '*' | '?' | '[' => return true,
            _ => i += 1,
        }
    }
    false
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut esc = false;
    for c in s.chars() {
        if c == '\\' && !esc {
            esc = true;
            continue;
        }
        esc = false;
        out.push(c);
    }
    out
}

/// Whether a glob pattern could match `name` as one path component (for names that do not
/// exist yet, such as `.forge` in a fresh checkout).
pub(crate) fn component_could_match(pattern_component: &str, name: &str) -> bool {
    let p: Vec<char> = pattern_component.chars().collect();
    let s: Vec<char> = name.chars().collect();
    (!name.starts_with('.') || pattern_component.starts_with('.')) && glob_match(&p, &s, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_are_kept_as_patterns_and_matched_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".forge")).unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        let m = |p: &str| {
            shell_glob_matches(p, dir.path())
                .iter()
                .map(|x| x.file_name().unwrap().to_string_lossy().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(m(".forg?"), [".forge"]);
        assert_eq!(m(".f*"), [".forge"]);
        assert_eq!(m("*"), ["a.rs"], "a leading dot needs a dot");
        assert_eq!(m(".en[v]"), [".env"]);
        assert_eq!(m("[!a]*"), Vec::<String>::new());
        assert!(component_could_match(".forg?", ".forge"));
        assert!(!component_could_match("*", ".forge"));
        assert!(glob_match(
            &"r[l-n]".chars().collect::<Vec<_>>(),
            &"rm".chars().collect::<Vec<_>>(),
            true
        ));
    }
}
