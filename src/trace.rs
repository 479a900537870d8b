//! `FORGE_TRACE=1`: where Forge's own time goes, one line per measured step on stderr. For the
//! benchmarks (BENCHMARKS.md) and for a person asking why a run is slow; off, it costs one
//! environment lookup per process.

use std::sync::OnceLock;
use std::time::Instant;

fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FORGE_TRACE").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Measures until dropped.
pub struct Span(Option<(&'static str, Instant)>);

pub fn span(what: &'static str) -> Span {
    Span(on().then(|| (what, Instant::now())))
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((what, t)) = self.0 {
            eprintln!(
                "forge-trace {what} {:.1} ms",
                t.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}
