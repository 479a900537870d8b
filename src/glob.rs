//! Path globs, shared by the guard (project rules, phase scopes) and `forge run`'s gates (test
//! and code areas): `*` and `?` stay within one path segment, `**` crosses segments, a trailing
//! `/` means everything below. Hand-written because a rule set is loaded on every hook call:
//! compiling a thousand regexes would cost more than the decision. `overlap.rs`: whether two
//! globs can match one path.

pub mod overlap;

/// Whether `path` (repository-relative, `/`-separated) matches `pattern`.
pub fn matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches("./");
    let path = path.trim_start_matches("./");
    if let Some(dir) = pattern.strip_suffix('/') {
        return path == dir
            || path.starts_with(&format!("{dir}/"))
            || matches(&format!("{dir}/**"), path);
    }
    // A plain folder name covers what is under it, like `.gitignore`.
    if !pattern.contains(['*', '?', '[']) {
        return path == pattern || path.starts_with(&format!("{pattern}/"));
    }
    wild(pattern.as_bytes(), path.as_bytes(), true)
}

/// Whether a command argument matches a pattern (`*` matches anything, `/` included).
pub fn matches_arg(pattern: &str, arg: &str) -> bool {
    wild(pattern.as_bytes(), arg.as_bytes(), false)
}

fn wild(p: &[u8], s: &[u8], segments: bool) -> bool {
    // Dynamic programming over (pattern, text) positions: patterns and paths are short, and this
    // stays linear in their product whatever mix of `*` and `**` a rule uses.
    let (m, n) = (p.len(), s.len());
    // row[j]: pattern prefix matched so far matches text prefix of length j.
    let mut row = vec![false; n + 1];
    row[0] = true;
    let mut pi = 0;
    while pi < m {
        let mut next = vec![false; n + 1];
        if p[pi] == b'*' {
            let double = p.get(pi + 1) == Some(&b'*');
            let crosses = double || !segments;
            let width = if double { 2 } else { 1 };
            // `**/` also matches no folder at all.
            let slash_after = double && p.get(pi + 2) == Some(&b'/');
            for j in 0..=n {
                next[j] = row[j] || (j > 0 && next[j - 1] && (crosses || s[j - 1] != b'/'));
            }
            if slash_after {
                // Either `**/` consumes a run ending in `/`, or nothing at all.
                let mut after = vec![false; n + 1];
                for j in 0..=n {
                    after[j] = row[j] || (j > 0 && next[j - 1] && s[j - 1] == b'/');
                }
                row = after;
                pi += 3;
                continue;
            }
            row = next;
            pi += width;
            continue;
        }
        for j in 1..=n {
            let c = s[j - 1];
            let ok = if p[pi] == b'?' {
                !(segments && c == b'/')
            } else {
                p[pi] == c
            };
            next[j] = row[j - 1] && ok;
        }
        row = next;
        pi += 1;
    }
    row[n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_globs() {
        assert!(matches("tests/**", "tests/a/b.rs"));
        assert!(matches("tests/**", "tests/a.rs"));
        assert!(!matches("tests/**", "src/tests.rs"));
        assert!(matches("src/*.rs", "src/lib.rs"));
        assert!(!matches("src/*.rs", "src/a/lib.rs"));
        assert!(matches("**/*_test.go", "pkg/x/a_test.go"));
        assert!(matches("**/*_test.go", "a_test.go"));
        assert!(matches("tests/", "tests/x/y"));
        assert!(matches("tests", "tests/x"));
        assert!(!matches("tests", "testsuite"));
        assert!(matches("src/?.rs", "src/a.rs"));
        assert!(!matches("*.md", "docs/a.md"));
        assert!(matches("migrations/**", "migrations/001.sql"));
    }

    #[test]
    fn arg_globs() {
        assert!(matches_arg("--force*", "--force-with-lease"));
        assert!(matches_arg("prod*", "prod/db"));
        assert!(!matches_arg("prod", "production"));
    }
}
