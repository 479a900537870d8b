#!/usr/bin/env bash
# What the clean room costs on a real crate (issue 31, point 8): `forge run` on the vendored
# semver 1.0.26 (tests/fixtures/projects/semver) with `forge init`'s config and the scripted
# agent of the end-to-end test (tests/fixtures/run/semver_script.json: two slices, each a new
# method). Forge books every check's wall time in run.json (`check_ms`) and, of it, the clean
# room's runs of the verify commands (`clean_room_ms`: with the code, without it, with its
# functions made to fail where the language has a row). Printed per run: both, and the clean
# room's time against the other checks'.
#
#   bash bench/clean_room.sh
#
# Environment: FORGE (default: `cargo build --release`, then that binary), RUNS (default 3),
# BENCH_DIR (default /tmp/forge-bench-clean-room). Every run starts from the same commit with
# Forge's run state removed; Forge removes the checks' checkout (and its `target` cache) at the
# end of each run, so each run compiles the crate afresh in it, as a person's run does.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
W=${BENCH_DIR:-/tmp/forge-bench-clean-room}
RUNS=${RUNS:-3}
die() { echo "bench/clean_room: $*" >&2; exit 1; }
log() { echo "bench/clean_room: $*" >&2; }
for tool in git python3 cargo; do command -v "$tool" >/dev/null || die "$tool not found"; done
case "$W" in "$ROOT" | "$ROOT"/*) die "BENCH_DIR must be outside the repository" ;; esac
if [ -z "${FORGE:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked >&2)
  FORGE=${CARGO_TARGET_DIR:-$ROOT/target}/x86_64-unknown-linux-gnu/release/forge
fi
[ -x "$FORGE" ] || die "no forge binary at $FORGE"
unset CARGO_TARGET_DIR

repo=$W/semver
rm -rf "$W" && mkdir -p "$repo"
cp -R "$ROOT/tests/fixtures/projects/semver/." "$repo/"
cd "$repo"
printf '/target\n' > .gitignore
git init -q -b main
git config user.name Bench && git config user.email bench@example.com
git add -A && git commit -qm "chore: import the crate"
"$FORGE" init >/dev/null
cmd="PROJECT_SCRIPT='$ROOT/tests/fixtures/run/semver_script.json' python3 $ROOT/tests/fixtures/run/project_agent.py"
printf '\nagents:\n  default:\n    command: %s\n    timeout: 300\n' \
  "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$cmd")" >> .forge/config.yaml
git add -A && git commit -qm "chore: forge"
base=$(git rev-parse HEAD)

for i in $(seq 1 "$RUNS"); do
  git reset -q --hard "$base"
  rm -rf .tmp/.forge .forge/changes .forge/sessions
  start=$(date +%s%N)
  "$FORGE" run bumps --goal "bump a version" >/dev/null || die "run $i failed: see $repo/.tmp/.forge/runs/bumps"
  end=$(date +%s%N)
  read -r check room < <(python3 -c 'import json; m=json.load(open(".tmp/.forge/runs/bumps/run.json")); print(m["check_ms"], m["clean_room_ms"])')
  wall=$(( (end - start) / 1000000 ))
  other=$(( check - room ))
  echo "| run $i | wall ${wall} ms | checks ${check} ms | clean room ${room} ms | $(awk -v r="$room" -v o="$other" 'BEGIN { printf "%.2f", (o + r) / o }')× the other checks |"
done
