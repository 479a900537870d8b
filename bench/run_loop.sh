#!/usr/bin/env bash
# Forge's own work per slice of `forge run` on a repository of 10,000 files (issue #5).
#
#   bash bench/run_loop.sh
#
# A copy of the sample shop (tests/fixtures/run/shop) plus 10,000 generated files, committed;
# the scripted agent (tests/fixtures/run/agent.sh) plays every role, so agents and tests take a
# few milliseconds and almost all of the wall time is Forge: its gates, git calls, state writes
# and timeline. Each run is the honest two-slice run. Forge records the wall time it spent in
# agents and in checks (run.json `agent_ms`, `check_ms`); Forge's own work per slice is
#   (wall time of `forge run` - agent_ms - check_ms) / 2 slices.
# The target: under 5 % of a slice whose agents and tests take 10 s, i.e. under 500 ms.
# A run leaves the checks' checkout of a tree this large for the project's next run, so the
# first run of each build writes it (cold) and the later ones verify it (warm): read the runs
# apart, not only the median.
#
# Environment:
#   FORGE=path     forge binary (default: `cargo build --release`, then the release binary)
#   BENCH_DIR=dir  where the repository goes (default /tmp/forge-bench)
#   RUNS=n         runs (default 7); the median and the range are printed
#   FILES=n        generated files (default 10000)
#   BASE=rev, BASE_BIN=path   also run a previous build, alternated run by run with the working
#                  tree's (NEW=path for a prebuilt one): see bench/builds.sh; the medians of
#                  both and their ratio are printed
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/forge-bench}
RUNS=${RUNS:-7}
FILES=${FILES:-10000}

die() { echo "bench: $*" >&2; exit 1; }
log() { echo "bench: $*" >&2; }
for tool in git python3; do command -v "$tool" >/dev/null || die "$tool not found"; done
case "$BENCH_DIR" in "$ROOT"|"$ROOT"/*) die "BENCH_DIR must be outside the repository" ;; esac

if [ -n "${BASE:-}${BASE_BIN:-}" ]; then
  repo=$ROOT
  . "$ROOT/bench/builds.sh"
  builds=("$base_bin" "$new_bin") labels=("base: $base_label" "new: $new_label")
else
  if [ -z "${FORGE:-}" ]; then
    (cd "$ROOT" && cargo build --release --locked >&2)
    FORGE=${CARGO_TARGET_DIR:-$ROOT/target}/x86_64-unknown-linux-gnu/release/forge
  fi
  [ -x "$FORGE" ] || die "no forge binary at $FORGE"
  builds=("$FORGE") labels=("$FORGE")
fi

repo=$BENCH_DIR/run-loop-$FILES
rm -rf "$repo"
mkdir -p "$repo"
cp -R "$ROOT/tests/fixtures/run/shop/." "$repo/"
log "generating $FILES files in $repo"
python3 - "$repo" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "lib", f"m{i // 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i % 100:03d}.sh"), "w") as f:
        f.write(f"# generated module {i}\nvalue_{i}() {{ echo {i}; }}\n")
PY
cd "$repo"
git init -q -b main
git config user.name Bench
git config user.email bench@example.com
git config gc.auto 0   # no background gc racing the explicit one below
mkdir -p .forge
cat > .forge/config.yaml <<YAML
verify:
  commands:
    - name: test
      run: sh tests/run.sh
      timeout: 60
      report: tap
agents:
  default:
    command: sh $ROOT/tests/fixtures/run/agent.sh
    timeout: 60
YAML
printf '.tmp/.forge/\n' > .gitignore
git add -A
git commit -qm "chore: sample shop and $FILES files"
# Packed, as a cloned repository is: 10,000 loose objects would make every look at the
# object store (before and after each agent call and check) cost a stat per object.
git gc -q
base=$(git rev-parse HEAD)
log "$(git ls-files | wc -l) tracked files"

# A copy of the repository per build: the checks' checkout is the project's (a folder in the
# temp folder named by the project's path), and one build's run must not find the other's
# checkout there, nor pay for the files the other removed (BENCHMARKS.md §6).
cd "$BENCH_DIR"
for k in "${!builds[@]}"; do
  rm -rf "$repo-$k"
  cp -a "$repo" "$repo-$k"
  # No checkout left from an earlier benchmark: each build's first run starts cold.
  tag=$(printf '%s' "$repo-$k" | sha256sum | cut -c1-12)
  rm -rf "${TMPDIR:-/tmp}/forge-check-$tag"
done
declare -A results
for i in $(seq 1 "$RUNS"); do
  for k in "${!builds[@]}"; do
    cd "$repo-$k"
    git reset -q --hard "$base"
    rm -rf .tmp/.forge .forge/changes .forge/sessions
    start=$(date +%s%N)
    "${builds[$k]}" run bench --goal "members get 10% off; receipts name the amount" >/dev/null
    end=$(date +%s%N)
    read -r agent check room < <(python3 -c 'import json,sys; m=json.load(open(".tmp/.forge/runs/bench/run.json")); print(m["agent_ms"], m["check_ms"], m.get("clean_room_ms", 0))')
    wall=$(( (end - start) / 1000000 ))
    own=$(( (wall - agent - check) / 2 ))
    log "run $i, ${labels[$k]}: wall ${wall} ms, agents ${agent} ms, checks ${check} ms (clean room ${room} ms) -> Forge ${own} ms per slice"
    results[$k]="${results[$k]:-} $own"
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}'; }
for k in "${!builds[@]}"; do
  read -r med min max < <(echo "${results[$k]}" | median)
  pct=$(awk -v m="$med" 'BEGIN { printf "%.1f", m / 10000 * 100 }')
  echo "| forge run, Forge's own work per slice, $FILES-file repository, ${labels[$k]} | median ${med} ms (range ${min}–${max} ms, $RUNS runs) | ${pct} % of a 10 s slice | target < 5 % (500 ms) |"
  meds[$k]=$med
done
if [ "${#builds[@]}" = 2 ]; then
  awk -v b="${meds[0]}" -v n="${meds[1]}" 'BEGIN { printf "new/base: %.2f×\n", n / b }'
fi
