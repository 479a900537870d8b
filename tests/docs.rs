//! The documented sessions are tested: every ```` ```console ```` block of `README.md` and
//! `docs/*.md` is run against the built `forge` and compared (the format, the setups and what is
//! normalised: `tests/doc_checker/mod.rs`).
//!
//! This target has no test harness (`harness = false` in Cargo.toml), so its summary — how many
//! blocks ran, how many were skipped and why — shows on a plain `cargo test`, not only when
//! something fails. `cargo test --test docs -- verify` checks only the files whose path contains
//! `verify`; `FORGE_DOCS=overwrite` writes the actual output into the docs (read the diff).

#[path = "doc_checker/mod.rs"]
mod doc_checker;

use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Arguments libtest would take (`--nocapture`, `--test-threads=2`, …) are accepted and
    // ignored; a bare word filters the files by path.
    // `--list` (asked by `cargo test -- --list` and by nextest) lists no libtest tests here.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut paths: Vec<PathBuf> = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let label = p.strip_prefix(root).unwrap_or(p).display().to_string();
            let text = std::fs::read_to_string(p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
            (label, text)
        })
        .filter(|(label, _)| filters.is_empty() || filters.iter().any(|f| label.contains(f)))
        .collect();
    if files.is_empty() {
        eprintln!("docs: no file matches {filters:?}");
        return;
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let forge = PathBuf::from(env!("CARGO_BIN_EXE_forge"));
    let started = std::time::Instant::now();
    let report = doc_checker::check(&files, &forge, threads);
    let took = started.elapsed();

    if std::env::var("FORGE_DOCS").is_ok_and(|v| v == "overwrite") && !report.mismatches.is_empty()
    {
        for (label, text) in &files {
            let mine: Vec<&doc_checker::Mismatch> = report
                .mismatches
                .iter()
                .filter(|m| &m.file == label)
                .collect();
            if !mine.is_empty() {
                std::fs::write(root.join(label), doc_checker::overwrite(text, &mine))
                    .unwrap_or_else(|e| panic!("cannot write {label}: {e}"));
                eprintln!("docs: overwrote {} command(s) in {label}", mine.len());
            }
        }
    }

    for f in &report.failures {
        eprintln!("\n{f}");
    }
    let summary = report.summary();
    let (first, rest) = summary.split_once('\n').unwrap_or((&summary, ""));
    eprintln!("{first} in {:.1} s", took.as_secs_f64());
    if !rest.is_empty() {
        eprintln!("{rest}");
    }
    if !report.ok() {
        eprintln!(
            "docs: an example no longer matches the binary. Fix the doc or the code; `FORGE_DOCS=overwrite cargo test --test docs` writes the actual output in (read the diff)."
        );
        std::process::exit(1);
    }
}
