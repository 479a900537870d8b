//! What an agent call may change, judged on the paths it changed (a content diff of the
//! snapshots just before and just after it), never on `git status`.
//!
//! Red changes only test areas, and only adds to existing test files; green changes only code
//! areas, never a test or the verified test; the planner, the verifier and the coverage
//! reviewer change nothing. Nobody changes the test harness (the files that run the checks),
//! creates a nested repository, changes a submodule, or links to a file outside the tree.

use serde::Serialize;
use serde_json::json;

use super::GateResult;
use super::in_areas;
use crate::evidence::{Change, Entry};

/// The rules of one phase.
pub enum Phase<'a> {
    Red {
        test_areas: &'a [String],
        harness: &'a [String],
    },
    Green {
        code_areas: &'a [String],
        test_areas: &'a [String],
        red_tests: &'a [String],
        harness: &'a [String],
    },
    /// The planner, the verifier, the coverage reviewer.
    ReadOnly { role: &'a str },
}

/// Why `phase` may not make `change`, or `None` if it may. `link_target` is the target of a
/// symbolic link the change creates, when it does.
pub fn disallowed(phase: &Phase, change: &Change, link_target: Option<&[u8]>) -> Option<String> {
    let p = change.path.as_str();
    if let Phase::ReadOnly { role } = phase {
        return Some(format!("the {role} is read-only"));
    }
    if matches!(change.after, Some(Entry::Nested)) {
        return Some("a nested git repository".into());
    }
    if let Some(Entry::TooLarge { size }) = change.after {
        return Some(format!(
            "a file of {size} bytes, too large for Forge to judge"
        ));
    }
    if matches!(change.after, Some(Entry::Gitlink { .. }))
        || matches!(change.before, Some(Entry::Gitlink { .. }))
    {
        return Some("a submodule".into());
    }
    if let Some(t) = link_target
        && escapes(p, t)
    {
        return Some("a link to a file outside the repository".into());
    }
    if let Some(t) = link_target
        && let Some(why) = link_across(phase, p, t)
    {
        return Some(why);
    }
    match phase {
        Phase::Red {
            test_areas,
            harness,
        } => {
            if !in_areas(test_areas, p) {
                return Some(format!("red may change only {}", test_areas.join(", ")));
            }
            if harness.iter().any(|h| h == p) {
                return Some("part of the test harness (it runs the checks)".into());
            }
        }
        Phase::Green {
            code_areas,
            test_areas,
            red_tests,
            harness,
        } => {
            if red_tests.iter().any(|t| t == p) {
                return Some("the verified red test, which must stay byte-identical".into());
            }
            if in_areas(test_areas, p) || super::is_test_file(p) {
                return Some("a test file: green may not change tests".into());
            }
            if !in_areas(code_areas, p) {
                return Some(format!("green may change only {}", code_areas.join(", ")));
            }
            if harness.iter().any(|h| h == p) {
                return Some("part of the test harness (it runs the checks)".into());
            }
        }
        Phase::ReadOnly { .. } => unreachable!(),
    }
    None
}

/// Why a link an agent made at `path` to `target` would join the areas (issue 31): a file
/// reached through it would be a test by one name and code by another, so red could write code
/// or green a test. A link may lead only within its phase's own areas, never into the other
/// side's, and may not stand on an area's own path.
fn link_across(phase: &Phase, path: &str, target: &[u8]) -> Option<String> {
    let dest = link_dest(path, target)?;
    let (own, other): (&[String], &[String]) = match phase {
        Phase::Red { test_areas, .. } => (test_areas, &[]),
        Phase::Green {
            code_areas,
            test_areas,
            ..
        } => (code_areas, test_areas),
        Phase::ReadOnly { .. } => return None,
    };
    if let Some(a) = own.iter().chain(other).find(|a| on_path(a, path)) {
        return Some(format!(
            "a link on the path of the area `{a}`: an area is never reached through a link"
        ));
    }
    if touches(other, &dest) || super::is_test_file(&dest) && matches!(phase, Phase::Green { .. }) {
        return Some(format!(
            "a link into the test areas (to `{dest}`): a file reached through it would be a test by one name and code by another"
        ));
    }
    if !in_areas(own, &dest) {
        return Some(format!(
            "a link out of the phase's own areas (to `{dest}`): a file reached through it would belong to another area"
        ));
    }
    None
}

/// Where a link at `path` with `target` leads, repository-relative, read as the kernel would
/// from the link's own folder when no link is on the way (`""` for the root); `None` when it
/// leaves the tree ([`escapes`] judges that).
pub fn link_dest(path: &str, target: &[u8]) -> Option<String> {
    let t = String::from_utf8_lossy(target);
    if t.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    for part in t.split('/') {
        match part {
            ".." => {
                parts.pop()?;
            }
            "" | "." => {}
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The part of an area before its first wildcard, without a trailing `/`: the folder (or
/// file) every path of the area lies in.
pub fn area_root(area: &str) -> &str {
    let a = area.trim_start_matches("./");
    let fixed = match a.find(['*', '?', '[']) {
        Some(i) => a[..i].rsplit_once('/').map(|(d, _)| d).unwrap_or(""),
        None => a,
    };
    fixed.trim_end_matches('/')
}

/// Whether `link` (a path) lies on the way to `area`: the area's root is the link or below it.
pub fn on_path(area: &str, link: &str) -> bool {
    let root = area_root(area);
    !link.is_empty() && (root == link || root.starts_with(&format!("{link}/")))
}

/// Whether `dest` (where a link leads) is in one of `areas`, or is a folder that holds one.
pub fn touches(areas: &[String], dest: &str) -> bool {
    in_areas(areas, dest)
        || areas.iter().any(|a| {
            let root = area_root(a);
            dest.is_empty() || root == dest || root.starts_with(&format!("{dest}/"))
        })
}

/// The planning-output gate's rule on links (issue 31): no area of a slice is reached through a
/// link (a link on its path, `tests/lnk/y/` under `tests/lnk` → elsewhere), and no link inside a
/// test area leads into a code area, nor one inside a code area into a test area. `links`: the
/// links of the tree and on the areas' paths, each with its target. The problems, empty when
/// none.
pub fn area_links(tests: &[String], code: &[String], links: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut problems = Vec::new();
    for a in tests.iter().chain(code) {
        if let Some((l, _)) = links.iter().find(|(l, _)| on_path(a, l)) {
            problems.push(format!(
                "the area `{a}` is reached through the link {l}: name the folder it leads to, or remove the link"
            ));
        }
    }
    for (l, t) in links {
        let Some(dest) = link_dest(l, t) else {
            continue;
        };
        for (from, to, what) in [(tests, code, "a code area"), (code, tests, "a test area")] {
            if in_areas(from, l) && touches(to, &dest) {
                problems.push(format!(
                    "the link {l} leads into {what} (`{dest}`): a file reached through it would be a test by one name and code by another"
                ));
            }
        }
    }
    problems
}

/// Whether a link at `path` with `target` may point outside the tree: an absolute target, one
/// whose leading `..` climb above the repository root, or one with a `..` after a name. The
/// kernel resolves `name/..` from wherever `name` leads, so when `name` is itself a link
/// (`src/d -> ..`) a climb counted on the target's text is wrong: `d/src/d/../../..` leaves the
/// tree in three steps its text says stay inside (red team, round 16). Leading climbs start
/// from the link's own folder, a real folder of the tree, and names after them only descend —
/// into folders or links judged by the same rule — so a target of that shape stays inside.
fn escapes(path: &str, target: &[u8]) -> bool {
    let t = String::from_utf8_lossy(target);
    if t.starts_with('/') || t.is_empty() {
        return true;
    }
    let mut depth: i64 = path.matches('/').count() as i64;
    let mut named = false;
    for part in t.split('/') {
        match part {
            ".." if named => return true,
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            "" | "." => {}
            _ => named = true,
        }
    }
    false
}

/// Red only adds: every line of the test file as it was at START_SHA is still there, in order,
/// and no name the file defined is defined again (a later `def test_x` silently replaces the
/// first in Python, a later shell function the earlier). A name counts as defined again when
/// red's change raised the number of its definitions: a file may already define a name twice
/// (two local `class FalsyError` in different test methods), and what red did not add is not
/// red's to answer for. `Err` says what changed, naming definitions as the file writes them.
pub fn only_adds(old: &[u8], new: &[u8]) -> Result<(), String> {
    let old = String::from_utf8_lossy(old);
    let new = String::from_utf8_lossy(new);
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    // Greedy subsequence match: the old lines, in order, among the new.
    let mut j = 0;
    for (i, l) in old_lines.iter().enumerate() {
        while j < new_lines.len() && new_lines[j] != *l {
            j += 1;
        }
        if j == new_lines.len() {
            return Err(format!(
                "line {} (`{}`) was changed or removed",
                i + 1,
                crate::text::inert(l.trim(), 80)
            ));
        }
        j += 1;
    }
    let before = definitions(&old_lines);
    let after = definitions(&new_lines);
    let again = after.iter().find(|(key, (n, _))| {
        let had = before.get(*key).map_or(0, |(c, _)| *c);
        had > 0 && *n > had
    });
    if let Some((_, (_, shown))) = again {
        return Err(format!(
            "`{}` is defined again, replacing the existing one",
            crate::text::inert(shown, 80)
        ));
    }
    Ok(())
}

/// Each name `lines` define, by its key: how many times, and the first as written.
fn definitions(lines: &[&str]) -> std::collections::BTreeMap<String, (usize, String)> {
    let mut out: std::collections::BTreeMap<String, (usize, String)> = Default::default();
    for d in lines.iter().filter_map(|l| definition(l)) {
        out.entry(d.key).or_insert((0, d.shown)).0 += 1;
    }
    out
}

/// Whether `path` is a shell script, whose functions share one namespace with every other
/// file the same runner sources.
pub fn is_shell(path: &str) -> bool {
    [".sh", ".bash", ".bats"].iter().any(|e| path.ends_with(e))
}

/// The shell functions a script defines (`check() {`, `function check {`).
pub fn shell_functions(text: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(definition)
        .filter_map(|d| {
            d.key
                .strip_prefix("sh ")
                .or_else(|| d.key.strip_prefix("function"))
                .map(str::to_string)
        })
        .collect()
}

/// Red only adds, across files too: a shell function its change defines that another test
/// file or the harness already defines replaces that one for every file sourced after it (red
/// team, round 16: a new `tests/aaa_test.sh` whose `check` passed "guest pays by card"
/// whatever it got, sourced before the existing tests by `tests/run.sh`). `old` is the file
/// before the change, `elsewhere` the functions of the other files, by name. `Err` names it.
pub fn redefines(
    new: &[u8],
    old: Option<&[u8]>,
    elsewhere: &std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    let had = old.map(shell_functions).unwrap_or_default();
    match shell_functions(new)
        .into_iter()
        .filter(|n| !had.contains(n))
        .find_map(|n| elsewhere.get(&n).map(|f| (n, f)))
    {
        Some((n, f)) => Err(format!(
            "it defines `{}` again, which {f} defines: the existing tests would run with the new one",
            crate::text::inert(&n, 80)
        )),
        None => Ok(()),
    }
}

/// One definition on a line: `key` tells definitions apart (the same name under another
/// keyword is another thing: `def f` and `class f`), `shown` is how the file writes it, for
/// the person reading why.
struct Definition {
    key: String,
    shown: String,
}

/// The definition on a line, in the common test languages: `def f(`, `fn f(`, `func F(`,
/// `function f`, `f() {`, `class C`, `it("…"`, `test("…"`, `describe("…"`.
fn definition(line: &str) -> Option<Definition> {
    let t = line.trim_start();
    for kw in [
        "async def ",
        "def ",
        "pub fn ",
        "fn ",
        "func ",
        "function ",
        "class ",
    ] {
        if let Some(rest) = t.strip_prefix(kw) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            return (!name.is_empty()).then(|| Definition {
                key: format!("{}{name}", kw.trim()),
                shown: format!("{kw}{name}"),
            });
        }
    }
    for kw in ["it(", "test(", "describe(", "it.only(", "test.only("] {
        if let Some(rest) = t.strip_prefix(kw) {
            let q = rest.chars().next()?;
            if matches!(q, '"' | '\'' | '`') {
                let body: String = rest[1..].chars().take_while(|c| *c != q).collect();
                return Some(Definition {
                    key: format!("{}{body}", kw.trim_end_matches('(')),
                    shown: format!("{kw}{q}{body}{q})"),
                });
            }
        }
    }
    // A shell function: `name() {`.
    if let Some(i) = t.find("()")
        && t[i + 2..].trim_start().starts_with('{')
    {
        let name = &t[..i];
        if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Some(Definition {
                key: format!("sh {name}"),
                shown: format!("{name}()"),
            });
        }
    }
    None
}

/// What a scope gate saw and undid.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Scope {
    /// Paths the agent changed that the phase may change: kept.
    pub changed: Vec<String>,
    /// Paths the phase may not change, with why: put back as they were before the call.
    pub disallowed: Vec<(String, String)>,
    /// Commits that appeared on the run's branch during the call; undone.
    pub commits: Vec<String>,
    /// Protected things the agent changed, put back: Forge's files, git's control files, refs,
    /// object-store files, the spend ledgers; an invalid cost report.
    pub restored: Vec<String>,
    /// The agent switched HEAD to another branch (or detached it); switched back.
    pub head_moved: Option<String>,
}

pub fn scope_result(gate: &str, scope: &Scope, areas: &[String], phase: &str) -> GateResult {
    let mut reasons = Vec::new();
    if let Some(h) = &scope.head_moved {
        reasons.push(h.clone());
    }
    if !scope.commits.is_empty() {
        reasons.push(format!(
            "{} commit(s) appeared during {phase} (Forge makes the commits); undone",
            scope.commits.len()
        ));
    }
    if !scope.disallowed.is_empty() {
        let list: Vec<String> = scope
            .disallowed
            .iter()
            .map(|(p, why)| format!("{p} ({why})"))
            .collect();
        let may = if areas.is_empty() {
            "nothing in the repository".to_string()
        } else {
            areas.join(", ")
        };
        reasons.push(format!(
            "{phase} may change only {may} — reverted: {}",
            list.join(", ")
        ));
    }
    if !scope.restored.is_empty() {
        reasons.push(format!(
            "Forge's own state and git's settings, refs and objects may not be changed — put back: {}",
            scope.restored.join(", ")
        ));
    }
    let reason = if reasons.is_empty() && scope.changed.is_empty() {
        // A retry that leaves the files an earlier attempt wrote as they are changes nothing.
        format!("{phase} changed no file in this call")
    } else if reasons.is_empty() {
        format!("{phase} changed only {}", scope.changed.join(", "))
    } else {
        reasons.join("; ")
    };
    let evidence = json!({
        "reason": reason,
        "changed": scope.changed,
        "disallowed": scope.disallowed.iter().map(|(p, w)| json!({"path": p, "why": w})).collect::<Vec<_>>(),
        "commits": scope.commits,
        "restored": scope.restored,
        "head_moved": scope.head_moved,
    });
    if reasons.is_empty() {
        GateResult::pass(gate, evidence)
    } else {
        GateResult::fail(
            gate,
            evidence,
            false,
            &format!(
                "the disallowed changes were reverted; the reason goes back to the same {phase} agent"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(p: &str, after: Option<Entry>) -> Change {
        Change {
            path: p.into(),
            before: None,
            after,
        }
    }

    fn file() -> Option<Entry> {
        Some(Entry::File {
            oid: "1".into(),
            exec: false,
        })
    }

    #[test]
    fn each_phase_keeps_to_its_files() {
        let tests = vec!["tests/".to_string()];
        let code = vec!["src/".to_string()];
        let harness = vec!["tests/run.sh".to_string(), "conftest.py".to_string()];
        let red = Phase::Red {
            test_areas: &tests,
            harness: &harness,
        };
        assert!(disallowed(&red, &change("tests/a_test.sh", file()), None).is_none());
        assert!(disallowed(&red, &change("src/a.sh", file()), None).is_some());
        assert!(
            disallowed(&red, &change("tests/run.sh", file()), None)
                .unwrap()
                .contains("harness")
        );
        assert!(disallowed(&red, &change("tests/lib", Some(Entry::Nested)), None).is_some());
        let rt = vec!["tests/a_test.sh".to_string()];
        let green = Phase::Green {
            code_areas: &code,
            test_areas: &tests,
            red_tests: &rt,
            harness: &harness,
        };
        assert!(disallowed(&green, &change("src/a.sh", file()), None).is_none());
        assert!(disallowed(&green, &change("tests/a_test.sh", file()), None).is_some());
        assert!(disallowed(&green, &change("README.md", file()), None).is_some());
        let link = Some(Entry::Symlink { oid: "2".into() });
        assert!(disallowed(&green, &change("src/l", link.clone()), Some(b"/etc/passwd")).is_some());
        assert!(disallowed(&green, &change("src/l", link.clone()), Some(b"../../x")).is_some());
        assert!(disallowed(&green, &change("src/l", link.clone()), Some(b"../src/a.sh")).is_none());
        assert!(disallowed(&green, &change("src/l", link.clone()), Some(b"a.sh")).is_none());
        // Red team, round 16: with `src/d -> ..` in the tree, this target leads to
        // `<repo>/../../home/.profile`, though its climbs counted as text stay inside.
        let hop = b"d/src/d/src/d/src/d/src/d/../../../../../home/.profile";
        assert!(disallowed(&green, &change("src/e", link.clone()), Some(hop)).is_some());
        assert!(disallowed(&green, &change("src/e", link.clone()), Some(b"d/..")).is_some());
        // `src/d -> ..` stays inside, but the root holds the test areas.
        assert!(
            disallowed(&green, &change("src/d", link), Some(b".."))
                .unwrap()
                .contains("a link into the test areas")
        );
        let ro = Phase::ReadOnly { role: "verifier" };
        assert!(disallowed(&ro, &change("src/a.sh", file()), None).is_some());
    }

    /// Issue 31: an area reached through a link, either way, is refused at every scope gate.
    #[test]
    fn a_link_never_joins_a_test_area_and_a_code_area() {
        let tests = vec!["tests/".to_string()];
        let code = vec!["src/".to_string()];
        let none: Vec<String> = Vec::new();
        let link = || Some(Entry::Symlink { oid: "2".into() });
        let red = Phase::Red {
            test_areas: &tests,
            harness: &none,
        };
        let green = Phase::Green {
            code_areas: &code,
            test_areas: &tests,
            red_tests: &none,
            harness: &none,
        };
        // Within its own areas: a fixture, a helper.
        assert_eq!(
            disallowed(
                &red,
                &change("tests/data", link()),
                Some(b"fixtures/a.json")
            ),
            None
        );
        assert_eq!(
            disallowed(&green, &change("src/l", link()), Some(b"lib/a.sh")),
            None
        );
        // Red links from a test area into the code; green from the code into the tests.
        let why = disallowed(&red, &change("tests/helpers", link()), Some(b"../src")).unwrap();
        assert!(
            why.contains("out of the phase's own areas (to `src`)"),
            "{why}"
        );
        let why = disallowed(&green, &change("src/t", link()), Some(b"../tests")).unwrap();
        assert!(why.contains("into the test areas (to `tests`)"), "{why}");
        let why = disallowed(
            &green,
            &change("src/t.sh", link()),
            Some(b"../x/cart_test.sh"),
        )
        .unwrap();
        assert!(why.contains("into the test areas"), "{why}");
        // A link standing where an area's path goes.
        let unit = vec!["tests/unit/".to_string()];
        let red_unit = Phase::Red {
            test_areas: &unit,
            harness: &none,
        };
        let why = disallowed(&red_unit, &change("tests/unit", link()), Some(b"real")).unwrap();
        assert!(
            why.contains("on the path of the area `tests/unit/`"),
            "{why}"
        );
    }

    #[test]
    fn the_plan_refuses_areas_reached_through_a_link() {
        let tests = vec!["tests/lnk/y/".to_string(), "tests/*_test.sh".to_string()];
        let code = vec!["src/".to_string()];
        let l = |p: &str, t: &str| (p.to_string(), t.as_bytes().to_vec());
        assert!(area_links(&tests, &code, &[l("docs/x", "../README.md")]).is_empty());
        assert!(area_links(&tests, &code, &[l("tests/data", "fixtures")]).is_empty());
        // The area's own path has a link on the way.
        let p = area_links(&tests, &code, &[l("tests/lnk", "../build/t")]);
        assert_eq!(
            p,
            [
                "the area `tests/lnk/y/` is reached through the link tests/lnk: name the folder it leads to, or remove the link"
            ]
        );
        // A link inside a test area into the code, and the other way round.
        let p = area_links(&tests, &code, &[l("tests/src_test.sh", "../src/cart.sh")]);
        assert!(
            p[0].contains("leads into a code area (`src/cart.sh`)"),
            "{p:?}"
        );
        let p = area_links(&tests, &code, &[l("src/t", "../tests")]);
        assert!(p[0].contains("leads into a test area (`tests`)"), "{p:?}");
        // Areas' roots: the fixed part before a wildcard.
        assert_eq!(area_root("tests/*_test.sh"), "tests");
        assert_eq!(area_root("src/"), "src");
        assert_eq!(area_root("**/*.py"), "");
        assert_eq!(link_dest("src/d", b".."), Some(String::new()));
        assert_eq!(link_dest("a/b", b"../../.."), None);
    }

    #[test]
    fn a_call_that_changed_nothing_says_so() {
        let r = scope_result(
            "red-file-scope",
            &Scope::default(),
            &["tests/".into()],
            "red",
        );
        assert!(r.passed());
        assert_eq!(r.reason(), "red changed no file in this call");
        let scope = Scope {
            changed: vec!["tests/a_test.sh".into()],
            ..Default::default()
        };
        let r = scope_result("red-file-scope", &scope, &["tests/".into()], "red");
        assert_eq!(r.reason(), "red changed only tests/a_test.sh");
    }

    #[test]
    fn red_only_adds() {
        let old = b"check a 1 1\ncheck b 2 2\n";
        assert!(only_adds(old, b"check a 1 1\ncheck b 2 2\ncheck c 3 4\n").is_ok());
        assert!(only_adds(old, b"check new 0 1\ncheck a 1 1\ncheck b 2 2\n").is_ok());
        let e = only_adds(old, b"check a 1 1\ncheck b 2 3\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(only_adds(old, b"check a 1 1\n").is_err());
        // Shadowing an existing test by defining it again is not adding.
        let py = b"def test_total():\n    assert total(100) == 95\n";
        let shadow =
            b"def test_total():\n    assert total(100) == 95\ndef test_total():\n    pass\n";
        let e = only_adds(py, shadow).unwrap_err();
        assert_eq!(
            e, "`def test_total` is defined again, replacing the existing one",
            "names as the file writes them"
        );
        let sh = b"check() { [ \"$2\" = \"$3\" ]; }\n";
        let e = only_adds(sh, b"check() { [ \"$2\" = \"$3\" ]; }\ncheck() { :; }\n").unwrap_err();
        assert!(e.starts_with("`check()` is defined again"), "{e}");
        let js = b"it('adds', () => { expect(1).toBe(1) })\n";
        assert!(
            only_adds(
                js,
                b"it('adds', () => { expect(1).toBe(1) })\nit('adds', () => {})\n"
            )
            .is_err()
        );
        assert!(only_adds(py, b"def test_total():\n    assert total(100) == 95\ndef test_member():\n    assert 0\n").is_ok());
    }

    /// A name the file already defined twice is not red's doing (issue 29: two local `class
    /// FalsyError` in more-itertools' tests/test_more.py refused every added test).
    #[test]
    fn red_answers_only_for_the_definitions_it_adds() {
        let old = b"class A(TestCase):\n    def test_a(self):\n        class FalsyError(Exception):\n            pass\n\n\nclass B(TestCase):\n    def test_b(self):\n        class FalsyError(Exception):\n            pass\n";
        let mut added = old.to_vec();
        added.extend_from_slice(
            b"\n\nclass C(TestCase):\n    def test_c(self):\n        self.assertTrue(c())\n",
        );
        assert_eq!(only_adds(old, &added), Ok(()));
        // One more of a name the file already defines raises its count: that is a redefinition,
        // named as written, never by Forge's internal key.
        let mut third = old.to_vec();
        third.extend_from_slice(b"class FalsyError(Exception):\n    pass\n");
        let e = only_adds(old, &third).unwrap_err();
        assert_eq!(
            e,
            "`class FalsyError` is defined again, replacing the existing one"
        );
        assert!(!e.contains("classFalsyError"), "{e}");
        // A name defined twice for the first time by red's own lines is new, not a replacement.
        let twice = b"class A(TestCase):\n    def test_a(self):\n        pass\n\nclass C(TestCase):\n    def test_c(self):\n        class Local: pass\n    def test_d(self):\n        class Local: pass\n";
        assert_eq!(
            only_adds(
                b"class A(TestCase):\n    def test_a(self):\n        pass\n",
                twice
            ),
            Ok(())
        );
        // Test titles and shell functions are shown as written too.
        let js = b"it('adds', () => {})\nit('adds', () => {})\n";
        assert_eq!(
            only_adds(
                js,
                b"it('adds', () => {})\nit('adds', () => {})\nit('sums', () => {})\n"
            ),
            Ok(())
        );
        let e = only_adds(
            js,
            b"it('adds', () => {})\nit('adds', () => {})\nit('adds', () => 1)\n",
        )
        .unwrap_err();
        assert!(e.starts_with("`it('adds')` is defined again"), "{e}");
    }

    #[test]
    fn red_redefines_no_function_another_file_defines() {
        let elsewhere: std::collections::BTreeMap<String, String> =
            [("check".to_string(), "tests/run.sh".to_string())].into();
        let mute = b"check() {\n  echo \"ok $n - $1\"\n}\n";
        let e = redefines(mute, None, &elsewhere).unwrap_err();
        assert!(
            e.contains("`check` again, which tests/run.sh defines"),
            "{e}"
        );
        assert!(redefines(b"function check {\n :\n}\n", None, &elsewhere).is_err());
        // Its own helpers, and calls of the shared one, are fine.
        assert!(redefines(b"member() { :; }\ncheck a 1 1\n", None, &elsewhere).is_ok());
        // A function the file already had before the change is that file's own.
        assert!(redefines(mute, Some(mute), &elsewhere).is_ok());
    }
}
