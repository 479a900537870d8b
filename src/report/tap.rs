//! TAP (13/14, node --test's reporter, tape, node-tap, prove -v): test points
//! `ok N - desc # SKIP|TODO`, YAML diagnostics blocks for failure excerpts, `Bail out!` and a
//! module that failed to load as infrastructure errors.
//!
//! A case's name is its full path: the `# Subtest:` headers it is nested in (node, node-tap),
//! or the `# test name` comment right above a run of assertions (tape prints every assertion
//! as "should be strictly equal": `member discount > should be strictly equal`).
//! Nesting follows TAP 14: an indented subtest's points belong to the parent point that
//! follows them; only leaves count (a parent's result repeats its children's), but a parent's
//! `not ok` with no failing child is its own failure and is never dropped. A stream that ends
//! early is no evidence: a plan (`1..N`) must be there and match the points seen, per file of
//! `prove` and per nesting level that has one; else the report is `incomplete`.

use super::{EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    /// Indents of the test points seen, innermost last: a point whose predecessor was deeper
    /// is that predecessor's parent.
    levels: Vec<usize>,
    /// `# Subtest: name` headers still open, with their indent.
    subtests: Vec<(usize, String)>,
    /// The YAML block after a failed point: its case index, indent and lines.
    yaml: Option<(usize, usize, Vec<String>)>,
    load_errors: Vec<String>,
    /// node's trailer (`# tests 9`, `# pass 3`, …), which counts parents too.
    trailer: Option<super::Counts>,
    /// tape's `# test name` comment just read: it names the points right below it.
    candidate: Option<String>,
    /// The group (tape's test name) the points below belong to.
    group: Option<String>,
    /// Per nesting level still open (indent, innermost last): the points seen there, the
    /// plan, and whether a point there failed (a failed child makes its parent's `not ok` a
    /// repeat).
    open: Vec<Level>,
    /// Why the stream is no evidence (a plan that does not match, no plan).
    short: Vec<String>,
    /// Whether prove's per-file headers were seen (its bare `ok` lines are verdicts then).
    prove: bool,
}

#[derive(Debug, Default)]
struct Level {
    indent: usize,
    points: u64,
    plan: Option<u64>,
    failed: bool,
}

/// Text in diagnostics that means a module never loaded.
const LOAD_MARKERS: [&str; 5] = [
    "ERR_MODULE_NOT_FOUND",
    "Cannot find module",
    "Cannot find package",
    "SyntaxError",
    "ERR_REQUIRE_ESM",
];

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = &line[indent..];
        if let Some((idx, yindent, lines)) = &mut self.yaml {
            if t == "..." && indent == *yindent {
                let idx = *idx;
                let lines = std::mem::take(lines);
                self.yaml = None;
                self.attach_yaml(idx, &lines);
                return;
            }
            if t.is_empty() {
                continue_block(lines);
                return;
            }
            if indent >= *yindent && !t.starts_with("ok ") && !t.starts_with("not ok ") {
                if lines.len() < 60 {
                    // Keep indentation relative to the block: block scalars need it.
                    lines.push(line[*yindent..].to_string());
                }
                return;
            }
            self.yaml = None;
        }
        if t.starts_with("Bail out!") {
            self.report.set_infra(t.to_string());
            return;
        }
        if let Some(name) = t.strip_prefix("# Subtest: ") {
            // Named subtests (node, node-tap): names come from these headers, not comments.
            self.candidate = None;
            self.group = None;
            self.subtests.retain(|(i, _)| *i < indent);
            self.subtests.push((indent, name.to_string()));
            return;
        }
        if indent == 0
            && let Some((key, n)) = t
                .strip_prefix("# ")
                .and_then(|r| r.split_once(' '))
                .and_then(|(k, n)| n.trim().parse::<u64>().ok().map(|n| (k, n)))
            && matches!(
                key,
                "tests" | "pass" | "fail" | "skipped" | "todo" | "cancelled"
            )
        {
            let c = self.trailer.get_or_insert_with(Default::default);
            match key {
                "pass" => c.passed = n,
                "fail" | "cancelled" => c.failed += n,
                "skipped" => c.skipped = n,
                "todo" => c.xfailed = n,
                _ => {}
            }
            return;
        }
        if let Some(c) = t.strip_prefix('#') {
            if LOAD_MARKERS.iter().any(|m| c.contains(m)) && self.load_errors.len() < 5 {
                self.load_errors.push(c.trim().to_string());
            }
            // `# name` (one space, then text) may be a tape test's name; a diagnostic is
            // indented further (`#   Failed test`) and is never followed by a point.
            self.candidate = c
                .strip_prefix(' ')
                .filter(|n| indent == 0 && !n.is_empty() && !n.starts_with(char::is_whitespace))
                .map(|n| n.trim_end().to_string());
            return;
        }
        let candidate = self.candidate.take();
        if let Some(plan) = plan(t) {
            self.plan(indent, plan);
            return;
        }
        if prove_file(line) {
            self.prove = true;
            // prove prints each file's stream under its name: a new stream starts.
            self.close_stream();
            self.group = None;
            return;
        }
        let (ok, rest) = if let Some(r) = t.strip_prefix("ok") {
            (true, r)
        } else if let Some(r) = t.strip_prefix("not ok") {
            (false, r)
        } else {
            return;
        };
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return;
        }
        if rest.is_empty() && ok && self.prove {
            // prove's own verdict on a file (`ok` alone), not a test point.
            return;
        }
        if indent == 0 && candidate.is_some() {
            self.group = candidate;
        }
        self.point(indent, ok, rest.trim_start());
    }

    fn finish(mut self: Box<Self>) -> Report {
        if let Some((idx, _, lines)) = self.yaml.take() {
            self.attach_yaml(idx, &lines);
        }
        self.close_stream();
        if !self.short.is_empty() && self.report.incomplete.is_none() {
            self.report.incomplete = Some(self.short.join("; "));
        }
        self.report.runner_summary = self.trailer;
        if !self.load_errors.is_empty() {
            let msg = format!(
                "test module failed to load:\n{}",
                self.load_errors.join("\n")
            );
            self.report.set_infra(msg);
        }
        self.report
    }
}

impl Parser {
    fn point(&mut self, indent: usize, ok: bool, rest: &str) {
        let is_parent = self.levels.last().is_some_and(|&l| l > indent);
        while self.levels.last().is_some_and(|&l| l > indent) {
            self.levels.pop();
        }
        if self.levels.last() != Some(&indent) {
            self.levels.push(indent);
        }
        // The deeper levels this point closes: its subtests (TAP 14).
        let mut child_failed = false;
        while self.open.last().is_some_and(|l| l.indent > indent) {
            let l = self.open.pop().expect("a level");
            child_failed |= l.failed;
            self.check_plan(&l);
        }
        if self.open.last().is_none_or(|l| l.indent < indent) {
            self.open.push(Level {
                indent,
                ..Default::default()
            });
        }
        // `3 - desc # SKIP why` → number, description, directive.
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let rest = rest.strip_prefix("- ").unwrap_or(rest);
        let (desc, directive) = match rest.split_once(" # ") {
            Some((d, dir)) => (d.trim(), Some(dir.trim())),
            None => match rest.strip_prefix("# ") {
                Some(dir) => ("", Some(dir.trim())),
                None => (rest.trim(), None),
            },
        };
        let directive = directive.map(|d| d.to_ascii_uppercase());
        let ancestors: Vec<String> = self
            .subtests
            .iter()
            .filter(|(i, _)| *i < indent)
            .map(|(_, n)| n.clone())
            .collect();
        self.subtests.retain(|(i, _)| *i < indent);
        let status = match directive.as_deref() {
            Some(d) if d.starts_with("SKIP") => Status::Skipped,
            // A TODO point is a known failure: it neither fails the run nor passes.
            Some(d) if d.starts_with("TODO") => Status::XFailed,
            _ if ok => Status::Passed,
            _ => Status::Failed,
        };
        if let Some(l) = self.open.last_mut() {
            l.points += 1;
            l.failed |= status == Status::Failed || child_failed;
        }
        // A parent repeats its children's results, except a failure of its own: a `not ok`
        // after subtests that all passed (a hook or an assertion after them failed).
        if is_parent && (status != Status::Failed || child_failed) {
            return;
        }
        let mut name_parts = ancestors;
        if indent == 0
            && let Some(g) = &self.group
        {
            name_parts.insert(0, g.clone());
        }
        name_parts.push(desc.to_string());
        let mut case = TestCase::new(name_parts.join(" > "), status);
        if status == Status::Failed && looks_like_file(desc) && !self.load_errors.is_empty() {
            // node --test reports a file that failed to import as one failing test named by
            // its path, after the import error as comments.
            return;
        }
        if status == Status::Failed {
            self.yaml = Some((self.report.cases.len(), indent + 2, Vec::new()));
        }
        case.file = None;
        self.report.cases.push(case);
    }

    /// A plan line (`1..N`) at `indent`: the plan of the level open there, or of a subtest
    /// whose points are still to come.
    fn plan(&mut self, indent: usize, n: u64) {
        while self.open.last().is_some_and(|l| l.indent > indent) {
            let l = self.open.pop().expect("a level");
            self.check_plan(&l);
        }
        match self.open.last_mut() {
            Some(l) if l.indent == indent => {
                if l.plan.is_some() {
                    self.short
                        .push(format!("two plans at one level (the second: 1..{n})"));
                }
                l.plan = Some(n);
            }
            _ => self.open.push(Level {
                indent,
                plan: Some(n),
                ..Default::default()
            }),
        }
    }

    fn check_plan(&mut self, l: &Level) {
        match l.plan {
            Some(n) if n != l.points => self.short.push(format!(
                "the plan says 1..{n} but {} test point(s) ran{}",
                l.points,
                if l.indent > 0 { " in a subtest" } else { "" }
            )),
            // A subtest without a plan is common (older node-tap); the stream's own is not.
            None if l.indent == 0 && l.points > 0 => self.short.push(format!(
                "no plan (`1..N`) after {} test point(s): the stream may have ended early",
                l.points
            )),
            _ => {}
        }
    }

    /// The end of one stream (the output's end, or the next file prove runs).
    fn close_stream(&mut self) {
        while let Some(l) = self.open.pop() {
            self.check_plan(&l);
        }
        self.levels.clear();
        self.subtests.clear();
    }

    fn attach_yaml(&mut self, idx: usize, lines: &[String]) {
        if lines.first().map(String::as_str) != Some("---") {
            return;
        }
        let mut useful = Vec::new();
        let mut location = None;
        let mut in_error = false;
        for l in &lines[1..] {
            if let Some(loc) = l.strip_prefix("location: ") {
                let loc = loc.trim_matches('\'');
                let file = loc.split(':').next().unwrap_or(loc);
                self.report.cases[idx].file = Some(file.to_string());
                location = Some(loc.to_string());
                continue;
            }
            if let Some(e) = l
                .strip_prefix("error: ")
                .or_else(|| l.strip_prefix("message: "))
            {
                in_error = e.starts_with('|');
                if !in_error {
                    useful.push(e.trim_matches('\'').to_string());
                }
                continue;
            }
            if in_error {
                if l.starts_with("  ") || l.trim().is_empty() {
                    useful.push(l.trim().to_string());
                    continue;
                }
                in_error = false;
            }
        }
        let mut message = excerpt(useful.iter().map(String::as_str), EXCERPT_LINES);
        // Where it failed, for annotations: `at file:line:col`.
        if let Some(loc) = location {
            let m = message.get_or_insert_with(String::new);
            if !m.is_empty() {
                m.push('\n');
            }
            m.push_str(&format!("at {loc}"));
        }
        self.report.cases[idx].message = message;
    }
}

/// A blank line inside a YAML block belongs to it (block scalars keep blank lines).
fn continue_block(lines: &mut Vec<String>) {
    if lines.len() < 60 {
        lines.push(String::new());
    }
}

fn looks_like_file(desc: &str) -> bool {
    (desc.starts_with('/') || desc.starts_with("./") || desc.starts_with("file:"))
        && !desc.contains(' ')
}

/// `1..N` (with an optional `# reason`) → N.
fn plan(t: &str) -> Option<u64> {
    let rest = t.strip_prefix("1..")?;
    let digits = rest.split([' ', '#']).next().unwrap_or("");
    digits.parse().ok()
}

/// prove's header for one file's stream: `t/01-add.t .. ` (with `ok` after when not verbose).
fn prove_file(line: &str) -> bool {
    let t = line.trim_end();
    let head = t.strip_suffix(" ok").unwrap_or(t).trim_end();
    let Some((file, dots)) = head.rsplit_once(' ') else {
        return false;
    };
    dots.len() >= 2
        && dots.chars().all(|c| c == '.')
        && file.contains(['.', '/'])
        && !file.contains(' ')
        && !line.starts_with(' ')
}
