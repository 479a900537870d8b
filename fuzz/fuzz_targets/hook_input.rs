//! Arbitrary bytes as the PreToolUse hook's stdin, for every agent: the answer is empty (allow)
//! or one JSON object, and the handler never panics or hangs.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use forge::hooks::{Agent, Event, handle};
use libfuzzer_sys::fuzz_target;

/// A folder with no `.forge/` config (so no verify or project rules run), kept for the whole run.
fn empty_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().expect("temp dir");
        d.keep()
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = empty_dir();
    for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
        let out = handle(agent, Event::PreToolUse, Ok(data.to_vec()), dir);
        assert_eq!(out.exit, 0, "{agent:?}: exit {}", out.exit);
        if !out.stdout.is_empty() {
            let v: serde_json::Value = serde_json::from_str(&out.stdout)
                .unwrap_or_else(|e| panic!("{agent:?}: answer is not JSON ({e}): {}", out.stdout));
            assert!(
                v.is_object(),
                "{agent:?}: answer is not an object: {}",
                out.stdout
            );
        }
    }
});
