//! The deterministic gates of the slice loop (`002_…`). Each check here is a pure function of
//! evidence Forge gathered itself (content snapshots, the bytes a check printed, the agent's
//! answer file), so it can be proven to pass and to fail in a unit test; the phase files gather
//! the evidence and apply the recovery. An agent never decides a gate.
//!
//! One file per moment of the loop: [`plan`] (clean start, the plan, the harness), [`scope`]
//! (what an agent call may change), [`red`] (one failing case, the verifier, the evidence a
//! report must carry), [`land`] (checkpoint and final ancestry).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::glob;

mod clean;
mod land;
mod plan;
mod red;
mod scope;

pub use clean::*;
pub use land::*;
pub use plan::*;
pub use red::*;
pub use scope::*;

/// Gate names, stable: they name the result files and timeline events.
pub const CLEAN_START: &str = "clean-start";
pub const RUN_ARTIFACT: &str = "run-artifact";
pub const PLANNING_OUTPUT: &str = "planning-output";
pub const PRE_RED_BASELINE: &str = "pre-red-baseline";
pub const RED_FILE_SCOPE: &str = "red-file-scope";
pub const SINGLE_RED_FAILURE: &str = "single-red-failure";
pub const VERIFIED_RED: &str = "verified-red";
pub const RED_CHECKPOINT: &str = "red-checkpoint";
pub const GREEN_FILE_SCOPE: &str = "green-file-scope";
pub const GREEN_CHECKS: &str = "green-checks";
pub const CLEAN_ROOM: &str = "clean-room";
pub const MILESTONE_CHECKS: &str = "milestone-checks";
pub const FINAL_ANCESTRY: &str = "final-ancestry";

/// One gate result: the schema of `002_…`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateResult {
    pub gate: String,
    /// `pass` or `fail`.
    pub status: String,
    pub evidence: Value,
    /// Whether Forge must stop before calling the next agent.
    pub blocks: bool,
    /// The next safe action.
    pub recovery: String,
}

impl GateResult {
    pub fn pass(gate: &str, evidence: Value) -> GateResult {
        GateResult {
            gate: gate.into(),
            status: "pass".into(),
            evidence,
            blocks: false,
            recovery: String::new(),
        }
    }

    pub fn fail(gate: &str, evidence: Value, blocks: bool, recovery: &str) -> GateResult {
        GateResult {
            gate: gate.into(),
            status: "fail".into(),
            evidence,
            blocks,
            recovery: recovery.into(),
        }
    }

    pub fn passed(&self) -> bool {
        self.status == "pass"
    }

    /// The evidence's `reason`, for one-line reports.
    pub fn reason(&self) -> String {
        self.evidence
            .get("reason")
            .and_then(|r| r.as_str())
            .unwrap_or("")
            .to_string()
    }
}

/// Files Forge itself owns: its config, specs and ledgers, and its ignored run state. The
/// scope gates leave them to the state protection (`run/mod.rs`), and clean-start allows them.
pub fn is_forge_path(p: &str) -> bool {
    crate::evidence::snapshot::is_forge_path(p)
}

pub fn in_areas(areas: &[String], path: &str) -> bool {
    areas.iter().any(|g| glob::matches(g, path))
}

/// Whether `path` is a test by the conventions of the common test runners, whatever a plan
/// says: a file under a `test/`, `tests/`, `spec/` or `__tests__/` folder, or named as a test
/// (`test_cart.py`, `cart_test.go`, `cart.test.ts`, `cart.spec.js`, `cart_spec.rb`,
/// `CartTest.java`, `CartTests.cs`). The planner is an agent: the test areas it names are not
/// the only tests (red team, round 16: a plan that listed the existing `tests/card_test.sh` as
/// a code area let green weaken it).
pub fn is_test_file(path: &str) -> bool {
    const FOLDERS: [&str; 7] = [
        "test",
        "tests",
        "spec",
        "specs",
        "__tests__",
        "e2e",
        "testdata",
    ];
    let mut parts = path.split('/');
    let name = parts.next_back().unwrap_or("");
    if parts.any(|d| FOLDERS.contains(&d.to_ascii_lowercase().as_str())) {
        return true;
    }
    let stem = name.split('.').next().unwrap_or("");
    let lower = stem.to_ascii_lowercase();
    let dotted = |w: &str| name.to_ascii_lowercase().split('.').skip(1).any(|p| p == w);
    lower.starts_with("test_")
        || ["_test", "_tests", "_spec", "-test", "-spec"]
            .iter()
            .any(|s| lower.ends_with(s))
        || (stem.len() > 4 && (stem.ends_with("Test") || stem.ends_with("Tests")))
        || dotted("test")
        || dotted("spec")
}

#[cfg(test)]
mod tests {
    #[test]
    fn tests_are_known_by_their_runners_conventions() {
        for t in [
            "tests/card_test.sh",
            "tests/lib/helpers.sh",
            "src/__tests__/cart.js",
            "test_cart.py",
            "pkg/cart_test.go",
            "web/cart.test.ts",
            "web/cart.spec.js",
            "spec/cart_spec.rb",
            "src/main/java/CartTest.java",
            "Cart.Tests/CartTests.cs",
        ] {
            assert!(super::is_test_file(t), "{t}");
        }
        for c in [
            "src/cart.sh",
            "src/contest.py",
            "src/latest.rs",
            "scripts/test",
            "src/Test.java",
            "testing.md",
            "src/attest/mod.rs",
        ] {
            assert!(!super::is_test_file(c), "{c}");
        }
    }
}
