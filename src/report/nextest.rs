//! cargo-nextest's human output: one status line per test (`PASS [ 0.004s] (1/4) bin name`),
//! captured output blocks (which contain libtest's own `test result:` lines — not a summary),
//! and the `Summary […] N tests run: …` line, after which the failures are listed again.

use super::{Counts, EXCERPT_LINES, LineParser, Report, Status, TestCase, excerpt};

#[derive(Default)]
pub struct Parser {
    report: Report,
    summary: Option<Counts>,
    after_summary: bool,
    /// The failed case whose captured output is being read, and those lines.
    capture: Option<(usize, Vec<String>)>,
    compile_error: Vec<String>,
}

const FAIL_WORDS: [&str; 5] = ["FAIL", "SIGSEGV", "SIGABRT", "TIMEOUT", "ABORT"];

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("Summary [") {
            self.close_capture();
            self.after_summary = true;
            self.summary = Some(summary_counts(rest));
            return;
        }
        if self.after_summary {
            return;
        }
        if let Some((status, rest)) = status_line(t) {
            self.close_capture();
            let (suite, name) = match rest.split_once(' ') {
                Some((bin, name)) => (Some(bin.to_string()), name.to_string()),
                None => (None, rest.to_string()),
            };
            let mut case = TestCase::new(name, status);
            case.file = suite.as_deref().and_then(binary_file);
            case.suite = suite;
            self.report.cases.push(case);
            if status == Status::Failed {
                self.capture = Some((self.report.cases.len() - 1, Vec::new()));
            }
            return;
        }
        if let Some((_, lines)) = &mut self.capture {
            if (t.starts_with("thread '") || (!lines.is_empty() && lines.len() < 20))
                && !t.starts_with("note: run with `RUST_BACKTRACE")
                && !t.starts_with('─')
            {
                lines.push(t.to_string());
            }
            return;
        }
        let compile_line =
            line.starts_with("error[E") || line.starts_with("error: could not compile");
        // The `--> file:line:col` under a compiler error says where it is.
        let location = !self.compile_error.is_empty() && t.starts_with("--> ");
        if (compile_line || location) && self.compile_error.len() < 8 {
            self.compile_error.push(line.to_string());
        }
    }

    fn finish(mut self: Box<Self>) -> Report {
        self.close_capture();
        if !self.compile_error.is_empty() {
            let msg = format!("compile error:\n{}", self.compile_error.join("\n"));
            self.report.set_infra(msg);
        }
        if let Some(summary) = self.summary {
            self.report.reconcile(summary);
        }
        self.report
    }
}

impl Parser {
    fn close_capture(&mut self) {
        if let Some((idx, lines)) = self.capture.take() {
            self.report.cases[idx].message =
                excerpt(lines.iter().map(String::as_str), EXCERPT_LINES);
        }
    }
}

/// `PASS [   0.006s] (1/4) crate tests::x` → (Passed, "crate tests::x"). Retried tests print
/// `TRY 2 FAIL`; their final line decides, and `FLAKY` counts as passed.
fn status_line(t: &str) -> Option<(Status, &str)> {
    let (word, rest) = t.split_once(" [")?;
    let word = word.rsplit(' ').next().unwrap_or(word);
    let status = match word {
        "PASS" | "FLAKY" | "LEAK" => Status::Passed,
        "SKIP" => Status::Skipped,
        w if FAIL_WORDS.contains(&w) || w.starts_with("SIG") || w == "LEAK-FAIL" => Status::Failed,
        _ => return None,
    };
    if t.starts_with("TRY ") {
        return None;
    }
    let (_, rest) = rest.split_once("] ")?;
    let rest = rest.trim_start();
    // Newer versions print a progress counter: `(3/4) `.
    let rest = match rest.strip_prefix('(') {
        Some(r) => r.split_once(") ").map(|(_, r)| r).unwrap_or(rest),
        None => rest,
    };
    Some((status, rest.trim()))
}

/// The crate root a test binary is built from, by cargo's conventions, as libtest's
/// `Running …` line names it: `shop` → `src/lib.rs`, `shop::checkout` → `tests/checkout.rs`,
/// `shop::bin/shop` → `src/main.rs`, `shop::bin/tool` → `src/bin/tool.rs`. A target with a
/// custom `path` in Cargo.toml is not followed (examples and benches are not tests here).
fn binary_file(binary_id: &str) -> Option<String> {
    let Some((krate, target)) = binary_id.split_once("::") else {
        return Some("src/lib.rs".into());
    };
    if let Some(bin) = target.strip_prefix("bin/") {
        let same = bin.replace('-', "_") == krate.replace('-', "_");
        return Some(if same {
            "src/main.rs".into()
        } else {
            format!("src/bin/{bin}.rs")
        });
    }
    (!target.contains('/')).then(|| format!("tests/{target}.rs"))
}

/// `0.012s] 4 tests run: 2 passed, 2 failed, 1 skipped` → counts.
fn summary_counts(rest: &str) -> Counts {
    let mut c = Counts::default();
    let tail = rest.split_once(':').map(|(_, t)| t).unwrap_or(rest);
    for part in tail.split(',') {
        let mut it = part.split_whitespace();
        let (Some(n), Some(word)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "passed" => c.passed += n,
            "failed" | "timed" => c.failed += n,
            "skipped" => c.skipped += n,
            _ => {}
        }
    }
    c
}
