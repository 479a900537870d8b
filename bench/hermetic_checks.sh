#!/usr/bin/env bash
# Hermetic checks (a clean checkout of the candidate tree, its target/ kept as a configured
# cache) against `cargo test` in the working tree, on a real Cargo project, after the first
# build; each round edits one source file first, as a green attempt does. Target: <= 1.3x.
#
#   bash bench/hermetic_checks.sh
#
# Environment: BENCH_DIR (default /tmp/forge-bench), ROUNDS (default 9), MODULES (default 40).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/forge-bench}
ROUNDS=${ROUNDS:-9}
MODULES=${MODULES:-40}
command -v cargo >/dev/null || { echo "bench: cargo not found" >&2; exit 1; }
repo=$BENCH_DIR/hermetic-cargo
rm -rf "$repo"
mkdir -p "$repo/src" "$repo/tests"
cd "$repo"
cat > Cargo.toml <<'TOML'
[package]
name = "shop"
version = "0.1.0"
edition = "2021"
TOML
# A crate of $MODULES modules, each with a few functions and unit tests, and an integration
# test: a few seconds of compile, a few hundred test cases.
: > src/lib.rs
for i in $(seq 1 "$MODULES"); do
  echo "pub mod m$i;" >> src/lib.rs
  {
    for f in 1 2 3 4 5; do
      echo "pub fn price_$f(amount: u64, rate: u64) -> u64 { amount * (100 + rate * $f) / 100 + $i }"
    done
    echo "#[cfg(test)] mod tests { use super::*;"
    for f in 1 2 3 4 5; do
      echo "  #[test] fn price_${f}_is_monotonic() { assert!(price_$f(200, 3) > price_$f(100, 3)); }"
    done
    echo "}"
  } > "src/m$i.rs"
done
echo 'use shop::m1::price_1; #[test] fn integration() { assert!(price_1(100, 2) >= 100); }' > tests/it.rs
printf 'target/\n' > .gitignore
git init -q -b main && git add -A
git -c user.name=Bench -c user.email=bench@example.com commit -qm "chore: a cargo project"
cd "$ROOT"
cargo bench --locked --bench hermetic_checks -- "$repo" "$ROUNDS" cargo test -q
