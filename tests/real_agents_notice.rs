//! One line on stderr, shown by a plain `cargo test` (this target has no test harness, so
//! nothing captures its output): whether the real-client tests of `tests/real_agents.rs` run
//! here, and when they are skipped, why, where the rig is looked for, and how to make a skip a
//! failure. (Those tests pass when they skip, and libtest hides what a passing test prints.)

mod common;

use common::rig;

fn main() {
    let required = std::env::var(rig::REQUIRE_ENV).is_ok_and(|v| v == "1");
    let availability = rig::availability();
    eprintln!("{}", rig::notice(&availability, required));
    if required && availability.is_err() {
        std::process::exit(1);
    }
}
