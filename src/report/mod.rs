//! Test reports: every supported runner's output parsed into test cases (name, status, file
//! when known), with build/compile/import/collection errors reported as an infrastructure error
//! rather than as failing cases — a red phase that "fails" because it does not compile is not a
//! red.
//!
//! Parsers are streaming: a line parser sees one line at a time and keeps only the cases; JUnit
//! XML is read event by event; memory grows with the cases kept, never with the input size.

pub mod compile;
mod gojson;
mod jest;
mod jest_console;
mod junit;
mod libtest;
pub mod live;
mod mocha;
mod nextest;
mod pytest;
mod tap;
mod vitest;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::text::for_each_line;

/// A report format, as named in `.forge/config.yaml` `report:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    #[default]
    Auto,
    Libtest,
    Nextest,
    Pytest,
    Junit,
    GoJson,
    JestJson,
    VitestJson,
    /// Jest's default console output (failures named, passes counted).
    Jest,
    /// Mocha's default `spec` reporter.
    Mocha,
    /// Vitest's default console output (failures named, passes counted).
    Vitest,
    Tap,
    None,
}

impl Format {
    pub const ALL: [Format; 13] = [
        Format::Auto,
        Format::Libtest,
        Format::Nextest,
        Format::Pytest,
        Format::Junit,
        Format::GoJson,
        Format::JestJson,
        Format::VitestJson,
        Format::Jest,
        Format::Mocha,
        Format::Vitest,
        Format::Tap,
        Format::None,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Libtest => "libtest",
            Format::Nextest => "nextest",
            Format::Pytest => "pytest",
            Format::Junit => "junit",
            Format::GoJson => "go-json",
            Format::JestJson => "jest-json",
            Format::VitestJson => "vitest-json",
            Format::Jest => "jest",
            Format::Mocha => "mocha",
            Format::Vitest => "vitest",
            Format::Tap => "tap",
            Format::None => "none",
        }
    }

    /// The formats whose runner writes a report file that `report_path` can point at.
    pub fn reads_file(self) -> bool {
        matches!(
            self,
            Format::Junit | Format::JestJson | Format::VitestJson | Format::GoJson | Format::Tap
        )
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown report format `{s}`; expected one of: {}", names()))
    }
}

/// The accepted format names, for error messages and `--help`.
pub fn names() -> String {
    Format::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Failed,
    Skipped,
    /// An expected failure that failed as expected (pytest `xfail`, TAP `# TODO`): it neither
    /// fails the verdict nor counts as passing.
    XFailed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestCase {
    /// The name as the runner prints it (`tests::adds`, `test_cart.py::test_adds`,
    /// `TestAdd/sub`, `cart adds an item`).
    pub name: String,
    pub status: Status,
    /// The source file, when the runner says it (`null` otherwise).
    pub file: Option<String>,
    /// The group the runner puts the case in: test binary, package, class or suite (`null`
    /// when none).
    pub suite: Option<String>,
    /// A few lines of the failure (assertion, panic message), for failed cases.
    pub message: Option<String>,
}

impl TestCase {
    pub(crate) fn new(name: impl Into<String>, status: Status) -> Self {
        TestCase {
            name: name.into(),
            status,
            file: None,
            suite: None,
            message: None,
        }
    }

    /// Where the failure points in the source: the first `path.ext:line` in the failure text
    /// (a panic's location, pytest's `file.py:14:` locator, a stack frame), preferring one in
    /// the case's own file; else the case's file without a line.
    pub fn location(&self) -> Option<Location> {
        self.message
            .as_deref()
            .and_then(|m| locate(m, self.file.as_deref()))
            .or_else(|| {
                self.file.as_ref().map(|f| Location {
                    file: f.clone(),
                    line: None,
                })
            })
    }
}

/// A place in a source file, as a report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: Option<u32>,
}

/// Source file extensions a location may name.
const SOURCE_EXT: [&str; 21] = [
    "rs", "py", "go", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "rb", "java", "kt",
    "c", "cc", "cpp", "h", "sh", "t", "php",
];

/// The first `path.ext:line[:col]` in `text`; one whose path matches `prefer` (by suffix) wins.
pub fn locate(text: &str, prefer: Option<&str>) -> Option<Location> {
    let mut first = None;
    for token in text.split(|c: char| c.is_whitespace() || "()'\"`,<>[]".contains(c)) {
        let token = token.trim_start_matches("file://");
        let Some(loc) = location_token(token) else {
            continue;
        };
        if let Some(p) = prefer
            && same_path(&loc.file, p)
        {
            return Some(loc);
        }
        if first.is_none() {
            first = Some(loc);
        }
    }
    first
}

fn location_token(token: &str) -> Option<Location> {
    let (path, rest) = token.split_once(':').and_then(|(p, r)| {
        // `C:` style prefixes do not occur here; a path has an extension before the colon.
        let ext = p.rsplit_once('.')?.1;
        SOURCE_EXT.contains(&ext).then_some((p, r))
    })?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let line = digits.parse::<u32>().ok().filter(|n| *n > 0)?;
    if path.is_empty() || path.ends_with('/') {
        return None;
    }
    Some(Location {
        file: path.to_string(),
        line: Some(line),
    })
}

/// Two paths name the same file when one ends with the other at a `/` (a compiler prints
/// `./x_test.go` or an absolute path for the repository's `x_test.go`).
pub fn same_path(a: &str, b: &str) -> bool {
    let a = a.trim_start_matches("./");
    let b = b.trim_start_matches("./");
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub xfailed: u64,
}

impl Counts {
    fn add(&mut self, status: Status) {
        match status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Skipped => self.skipped += 1,
            Status::XFailed => self.xfailed += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.skipped + self.xfailed
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The format that was parsed (never `auto`; `none` when nothing was recognised).
    pub format: Option<Format>,
    pub cases: Vec<TestCase>,
    /// Outcomes a summary line counted but did not name (pytest's default output names only
    /// failures; nextest counts skipped tests without listing them).
    pub unnamed: Counts,
    /// The runner's own totals where they count something Forge does not (parents of
    /// subtests: go `-json` reports a parent test beside its subtests, node's TAP trailer
    /// counts both). Gates count leaves ([`Report::counts`]); this is shown beside them.
    pub runner_summary: Option<Counts>,
    /// A build, compile, import, collection or setup error: the suite did not run as written.
    pub infra_error: Option<String>,
    /// Set when the report is cut off or damaged (a runner killed mid-write): the cases read
    /// before the damage are kept, but such a report can never back a PASS.
    pub incomplete: Option<String>,
    /// Things a person should know about the report itself.
    pub notes: Vec<String>,
}

impl Report {
    pub fn counts(&self) -> Counts {
        let mut c = self.unnamed;
        for case in &self.cases {
            c.add(case.status);
        }
        c
    }

    /// Whether the report shows that tests ran: at least one case, named or counted by a
    /// summary line. A report without is no evidence of anything (see
    /// `verify::missing_evidence`).
    pub fn has_cases(&self) -> bool {
        !self.cases.is_empty() || self.unnamed.total() > 0
    }

    pub fn failing(&self) -> impl Iterator<Item = &TestCase> {
        self.cases.iter().filter(|c| c.status == Status::Failed)
    }

    /// Names that more than one case carries, with how many (a tape test's assertions, a
    /// parametrized test printed alike). Gates hold every case of a name to the same status
    /// (`gates::case_status`); the note makes such names visible.
    pub fn duplicates(&self) -> Vec<(String, usize)> {
        let mut seen: std::collections::BTreeMap<&str, usize> = Default::default();
        for c in &self.cases {
            *seen.entry(c.name.as_str()).or_default() += 1;
        }
        seen.into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(name, n)| (name.to_string(), n))
            .collect()
    }

    /// Adds a note naming the duplicate case names, if any.
    fn note_duplicates(&mut self) {
        let d = self.duplicates();
        if d.is_empty() {
            return;
        }
        let shown: Vec<String> = d
            .iter()
            .take(5)
            .map(|(n, k)| format!("`{}` ({k}×)", crate::text::clip(n, 120)))
            .collect();
        self.notes.push(format!(
            "{} case name(s) name more than one case: {}{}; a gate holds every case of a name to pass",
            d.len(),
            shown.join(", "),
            if d.len() > 5 { ", …" } else { "" }
        ));
    }

    /// Raises `unnamed` so that the totals match a summary line's counts, when the summary
    /// counted more than the lines that named cases. A summary that counts fewer of a kind
    /// than the lines named is not the run's own (lines printed to look like results, or two
    /// runs in one output): the report is incomplete.
    fn reconcile(&mut self, summary: Counts) {
        let mut named = Counts::default();
        for case in &self.cases {
            named.add(case.status);
        }
        // By total: a case named passed whose teardown then failed moves between kinds.
        if named.total() > summary.total() && self.incomplete.is_none() {
            self.incomplete = Some(format!(
                "the runner's closing summary counts {} case(s) but its lines name {}: lines that look like results are not all the run's",
                summary.total(),
                named.total()
            ));
        }
        self.unnamed = Counts {
            passed: summary.passed.saturating_sub(named.passed),
            failed: summary.failed.saturating_sub(named.failed),
            skipped: summary.skipped.saturating_sub(named.skipped),
            xfailed: summary.xfailed.saturating_sub(named.xfailed),
        };
    }

    fn set_infra(&mut self, message: impl Into<String>) {
        if self.infra_error.is_none() {
            self.infra_error = Some(message.into());
        }
    }
}

/// A parser fed one line at a time.
trait LineParser {
    fn line(&mut self, line: &str);
    fn finish(self: Box<Self>) -> Report;
}

fn line_parser(format: Format) -> Option<Box<dyn LineParser>> {
    Some(match format {
        Format::Libtest => Box::new(libtest::Parser::default()),
        Format::Nextest => Box::new(nextest::Parser::default()),
        Format::Pytest => Box::new(pytest::Parser::default()),
        Format::GoJson => Box::new(gojson::Parser::default()),
        Format::Tap => Box::new(tap::Parser::default()),
        Format::Vitest => Box::new(vitest::Parser::default()),
        Format::Jest => Box::new(jest_console::Parser::default()),
        Format::Mocha => Box::new(mocha::Parser::default()),
        Format::JestJson | Format::VitestJson => Box::new(jest::StdoutParser::new(format)),
        Format::Junit | Format::Auto | Format::None => return None,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("report file {path} does not exist — did the command write it? Check `report_path`")]
    Missing { path: String },
    #[error("cannot read report {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("report {path} is not valid {format}: {message}")]
    Malformed {
        path: String,
        format: Format,
        message: String,
    },
}

/// Parses a command's captured output (stdout and stderr interleaved).
pub fn parse_output(log: &Path, format: Format) -> Result<Report, ReportError> {
    let format = match format {
        Format::None => return Ok(Report::default()),
        Format::Auto => match detect_output(log)? {
            Some(f) => f,
            None => return Ok(Report::default()),
        },
        f => f,
    };
    if format == Format::Junit {
        return parse_file(log, Format::Junit);
    }
    let file = open(log)?;
    parse_lines(BufReader::with_capacity(256 * 1024, file), format).map_err(|e| ReportError::Io {
        path: log.display().to_string(),
        source: e,
    })
}

/// Parses a command's output as Forge read it from the pipe: the bytes themselves, never a log
/// reopened by path (which anything the command left behind could have rewritten).
pub fn parse_bytes(bytes: &[u8], format: Format) -> Result<Report, ReportError> {
    let format = match format {
        Format::None => return Ok(Report::default()),
        Format::Auto => match detect_reader(bytes).map_err(|e| io_error("(output)", e))? {
            Some(f) => f,
            None => return Ok(Report::default()),
        },
        f => f,
    };
    if format == Format::Junit {
        return junit::parse(bytes, Path::new("(command output)"));
    }
    parse_lines(bytes, format).map_err(|e| io_error("(output)", e))
}

fn io_error(path: &str, source: std::io::Error) -> ReportError {
    ReportError::Io {
        path: path.to_string(),
        source,
    }
}

/// Parses a report file a runner wrote (`report_path`).
pub fn parse_file(path: &Path, format: Format) -> Result<Report, ReportError> {
    let format = match format {
        Format::Auto => detect_file(path)?,
        f => f,
    };
    let file = open(path)?;
    let reader = BufReader::with_capacity(256 * 1024, file);
    match format {
        Format::None => Ok(Report::default()),
        Format::Junit => junit::parse(reader, path),
        Format::JestJson | Format::VitestJson => match jest::parse_file(reader, path, format) {
            // Not a JSON document at all: a captured output with the JSON on one of its lines,
            // as `forge verify` reads a command's output. (A document cut short stays an
            // error.)
            Err(ReportError::Malformed { .. }) if !starts_with_brace(path) => {
                let reader = BufReader::with_capacity(256 * 1024, open(path)?);
                parse_lines(reader, format).map_err(|e| ReportError::Io {
                    path: path.display().to_string(),
                    source: e,
                })
            }
            other => other,
        },
        f => parse_lines(reader, f).map_err(|e| ReportError::Io {
            path: path.display().to_string(),
            source: e,
        }),
    }
}

/// Whether the file's first non-blank byte is `{`.
fn starts_with_brace(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 512];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{')
}

fn open(path: &Path) -> Result<File, ReportError> {
    File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ReportError::Missing {
                path: path.display().to_string(),
            }
        } else {
            ReportError::Io {
                path: path.display().to_string(),
                source: e,
            }
        }
    })
}

fn parse_lines<R: BufRead>(reader: R, format: Format) -> std::io::Result<Report> {
    let mut parser = line_parser(format).expect("a line format");
    for_each_line(reader, |l| parser.line(l))?;
    let mut report = parser.finish();
    report.format = Some(format);
    report.note_duplicates();
    Ok(report)
}

/// How far into the output auto-detection looks before deciding nothing is recognisable.
const DETECT_BYTES: u64 = 16 * 1024 * 1024;

/// Recognises the runner from its output's own markers.
///
/// Output often holds more than one runner's marks: a vitest run prints the TAP of a file that
/// imports `node:test`, a pytest run prints a cargo build. The runner that printed the closing
/// summary is the one that ran the suite, so the last summary line decides; without any, the
/// first line that only a runner prints.
fn detect_output(log: &Path) -> Result<Option<Format>, ReportError> {
    detect_reader(open(log)?).map_err(|e| io_error(&log.display().to_string(), e))
}

/// [`detect_output`] on any reader (a log, or the bytes Forge read from a command's pipe).
fn detect_reader<R: std::io::Read>(r: R) -> std::io::Result<Option<Format>> {
    let mut first_mark = None;
    let mut last_summary = None;
    for_each_line(
        BufReader::new(r.take(DETECT_BYTES)),
        |l| match detect_line(l) {
            Some(Mark::Summary(f)) => last_summary = Some(f),
            Some(Mark::Start(f)) if first_mark.is_none() => first_mark = Some(f),
            _ => {}
        },
    )?;
    Ok(last_summary.or(first_mark))
}

/// What one line proves about the runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// A line only this runner prints, anywhere in its output.
    Start(Format),
    /// The runner's closing summary (or a whole report on one line).
    Summary(Format),
}

/// The mark a single line carries, if any. Ordered from most to least specific.
fn detect_line(line: &str) -> Option<Mark> {
    use Mark::{Start, Summary};
    let t = line.trim_start();
    if t.starts_with("{\"Time\":")
        || t.starts_with("{\"ImportPath\":")
        || t.starts_with("{\"Action\":")
    {
        // A package's own pass/fail event closes its run.
        let package_end = !t.contains("\"Test\":")
            && (t.contains("\"Action\":\"pass\"") || t.contains("\"Action\":\"fail\""));
        return Some(if package_end {
            Summary(Format::GoJson)
        } else {
            Start(Format::GoJson)
        });
    }
    if t.starts_with('{') && t.contains("\"numTotalTests\"") {
        return Some(Summary(if t.contains("\"numRuntimeErrorTestSuites\"") {
            Format::JestJson
        } else {
            Format::VitestJson
        }));
    }
    if t.starts_with("<?xml") || t.starts_with("<testsuites") || t.starts_with("<testsuite") {
        return Some(Summary(Format::Junit));
    }
    if t.starts_with("Summary [") && t.contains(" run: ") {
        return Some(Summary(Format::Nextest));
    }
    if t.starts_with("Nextest run ID")
        || (t.starts_with("Starting ") && t.contains(" tests across "))
    {
        return Some(Start(Format::Nextest));
    }
    if line.starts_with("test result: ") {
        return Some(Summary(Format::Libtest));
    }
    if t.starts_with("running ") && (t.ends_with(" tests") || t.ends_with(" test")) && line == t {
        return Some(Start(Format::Libtest));
    }
    if t.starts_with("Running unittests ")
        || t.starts_with("Doc-tests ")
        || line.starts_with("error[E")
        || line.starts_with("error: could not compile")
    {
        return Some(Start(Format::Libtest));
    }
    if t.starts_with('=') && t.contains(" test session starts ") {
        return Some(Start(Format::Pytest));
    }
    if line.starts_with("ImportError while loading conftest") {
        return Some(Summary(Format::Pytest));
    }
    if (line.starts_with('=')
        && line.ends_with('=')
        && pytest::is_final_counts(line.trim_matches('=').trim()))
        || (line.starts_with(|c: char| c.is_ascii_digit()) && pytest::is_final_counts(line))
    {
        return Some(Summary(Format::Pytest));
    }
    if let Some(rest) = t.strip_prefix("Tests ")
        && line.starts_with("      Tests ")
        && (rest.trim_end().ends_with(')') || rest.trim() == "no tests")
    {
        return Some(Summary(Format::Vitest));
    }
    if line.starts_with("Tests:") && line.trim_end().ends_with(" total") {
        return Some(Summary(Format::Jest));
    }
    if line.starts_with("  ")
        && let Some((n, rest)) = line.trim().split_once(' ')
        && n.parse::<u64>().is_ok()
        && rest.starts_with("passing (")
    {
        return Some(Summary(Format::Mocha));
    }
    if line.trim_start().starts_with("Exception during run:") {
        return Some(Summary(Format::Mocha));
    }
    if line.starts_with(" RUN  v") {
        return Some(Start(Format::Vitest));
    }
    if line.starts_with("TAP version ") {
        return Some(Start(Format::Tap));
    }
    if line.starts_with("# tests ")
        || line.starts_with("Result: PASS")
        || line.starts_with("Result: FAIL")
    {
        return Some(Summary(Format::Tap));
    }
    None
}

fn detect_file(path: &Path) -> Result<Format, ReportError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "xml" {
        return Ok(Format::Junit);
    }
    if ext == "json" {
        // Report files are often pretty-printed, so look at the head as a whole.
        use std::io::Read;
        let mut head = Vec::new();
        open(path)?
            .take(64 * 1024)
            .read_to_end(&mut head)
            .map_err(|e| ReportError::Io {
                path: path.display().to_string(),
                source: e,
            })?;
        let head = String::from_utf8_lossy(&head);
        if head.contains("\"testResults\"") || head.contains("\"numTotalTests\"") {
            return Ok(if head.contains("\"numRuntimeErrorTestSuites\"") {
                Format::JestJson
            } else {
                Format::VitestJson
            });
        }
    }
    Ok(detect_output(path)?.unwrap_or(Format::None))
}

/// Joins up to `max_lines` non-empty lines into a failure excerpt.
fn excerpt<'a>(lines: impl IntoIterator<Item = &'a str>, max_lines: usize) -> Option<String> {
    let kept: Vec<String> = lines
        .into_iter()
        .map(|l| l.trim_end())
        .filter(|l| !l.trim().is_empty())
        .take(max_lines)
        .map(|l| crate::text::clip(l, 300))
        .collect();
    (!kept.is_empty()).then(|| kept.join("\n"))
}

/// Lines kept per failure excerpt.
const EXCERPT_LINES: usize = 6;

#[cfg(test)]
mod tests;
