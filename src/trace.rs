//! `FORGE_TRACE=1`: where Forge's own time goes, one line per measured step on stderr. For the
//! benchmarks (BENCHMARKS.md) and for a person asking why a run is slow; off, it costs one
//! environment lookup per process.

use std::sync::OnceLock;
use std::time::Instant;

fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let on = std::env::var_os("FORGE_TRACE").is_some_and(|v| !v.is_empty() && v != "0");
        if on {
            epoch();
        }
        on
    })
}

/// When tracing started: each line says when its step ended, so the gaps between steps show.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Measures until dropped.
pub struct Span(Option<(&'static str, String, Instant)>);

pub fn span(what: &'static str) -> Span {
    Span(on().then(|| (what, String::new(), Instant::now())))
}

/// A span whose line also says which one it was (`git` calls name their subcommand); the
/// detail is only built when tracing is on.
pub fn span_of(what: &'static str, detail: impl FnOnce() -> String) -> Span {
    Span(on().then(|| (what, detail(), Instant::now())))
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((what, detail, t)) = &self.0 {
            let sep = if detail.is_empty() { "" } else { " " };
            eprintln!(
                "forge-trace {what} {:.1} ms (at {:.1} ms){sep}{detail}",
                t.elapsed().as_secs_f64() * 1000.0,
                epoch().elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}
