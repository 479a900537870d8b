#!/usr/bin/env bash
# What the undo journal adds to the PreToolUse hook (issue 34, point 4; BENCHMARKS.md §11):
# `forge hook claude pre-tool-use` on an ordinary Bash call (`cargo test 2>&1 | tail -20`, a
# captured Claude Code payload) in a Forge project of 10,000 committed files, with the journal
# on and off (`undo.journal`), alternated round by round so both see the same machine; a base
# build (BASE_BIN, or BASE=<commit> as in bench/ab.sh) runs in the same rounds when given.
#
#   bash bench/undo.sh                       # NEW = the working tree's release build
#   BASE=a22fd38 bash bench/undo.sh          # and the build before the journal
#
# Cases: "steady" (nothing changed since the last call: every call after the first),
# "one edit" (a file rewritten before each call: hyperfine --prepare), "first" (no journal yet:
# every file read and kept; --prepare removes .tmp/.forge/undo). Environment: ROUNDS (default
# 3), RUNS (default 30), BENCH_DIR (default /tmp/forge-bench-undo), FILES (default 10000).
# Needs hyperfine, git, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
W=${BENCH_DIR:-/tmp/forge-bench-undo}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-30}
FILES=${FILES:-10000}
die() { echo "bench/undo: $*" >&2; exit 1; }
log() { echo "bench/undo: $*" >&2; }
case "$W" in "$repo" | "$repo"/*) die "BENCH_DIR must be outside the repository" ;; esac

if [ -n "${NEW:-}" ]; then
  new_bin=$(realpath "$NEW")
else
  (cd "$repo" && cargo build --release --locked --quiet)
  new_bin=${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-gnu/release/forge
fi
base_bin=
if [ -n "${BASE_BIN:-}" ] || [ -n "${BASE:-}" ]; then
  NEW=$new_bin . "$here/builds.sh"
fi

rm -rf "$W" && mkdir -p "$W/bin"
cp "$new_bin" "$W/bin/forge-new"
[ -n "$base_bin" ] && cp "$base_bin" "$W/bin/forge-base"
# One project per configuration, the same files.
make_project() {
  local p=$1 journal=$2
  mkdir -p "$p" && (cd "$p" && git init -q -b main && "$W/bin/forge-new" init >/dev/null)
  python3 - "$p" "$FILES" <<'PY'
import os, sys
proj, n = sys.argv[1], int(sys.argv[2])
per = 100
for i in range(n):
    d = f"{proj}/src/m{i // per:03}"
    os.makedirs(d, exist_ok=True)
    open(f"{d}/f{i % per:03}.rs", "w").write(f"// file {i}\nfn f{i}() -> u32 {{ {i} }}\n")
PY
  printf 'undo:\n  journal: %s\n' "$journal" >> "$p/.forge/config.yaml"
  (cd "$p" && git add -A && git -c user.name=b -c user.email=b@b commit -qm files)
  python3 - "$repo/tests/fixtures/hooks/claude/PreToolUse-1796004613973515118.json" "$p" > "$p.payload" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
v["cwd"] = sys.argv[2]
v["tool_input"] = {"command": "cargo test 2>&1 | tail -20", "description": "test"}
print(json.dumps(v))
PY
}
make_project "$W/on" true
make_project "$W/off" false
[ -n "$base_bin" ] && make_project "$W/base" true
hook() { echo "$1 hook claude pre-tool-use < $2.payload > /dev/null"; }
# The first call of each (it journals everything once in "on").
for p in on off; do sh -c "$(hook "$W/bin/forge-new" "$W/$p")"; done
[ -n "$base_bin" ] && sh -c "$(hook "$W/bin/forge-base" "$W/base")"

for round in $(seq 1 "$ROUNDS"); do
  cmds=("$(hook "$W/bin/forge-new" "$W/on")" "$(hook "$W/bin/forge-new" "$W/off")")
  names=(journal-on journal-off)
  if [ -n "$base_bin" ]; then
    cmds+=("$(hook "$W/bin/forge-base" "$W/base")"); names+=(base)
  fi
  # Alternate which goes first.
  if [ $((round % 2)) = 0 ]; then
    cmds=("${cmds[@]:1}" "${cmds[0]}"); names=("${names[@]:1}" "${names[0]}")
  fi
  args=()
  for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
  log "round $round: steady"
  hyperfine --style basic --warmup 2 --runs "$RUNS" --export-json "$W/steady-$round.json" "${args[@]}" | grep -E '^\s*(Time|[a-z-]+:|Benchmark)' || true
  log "round $round: one edit before each call"
  hyperfine --style basic --warmup 2 --runs "$RUNS" \
    --prepare "date +%N > $W/on/src/m000/f000.rs; date +%N > $W/off/src/m000/f000.rs; ${base_bin:+date +%N > $W/base/src/m000/f000.rs}" \
    --export-json "$W/edit-$round.json" "${args[@]}" | grep -E '^\s*(Time|Benchmark)' || true
done
log "first call (no journal yet: every file read and kept)"
hyperfine --style basic --runs 5 --prepare "rm -rf $W/on/.tmp/.forge/undo" \
  --export-json "$W/first.json" -n first "$(hook "$W/bin/forge-new" "$W/on")" | grep -E '^\s*(Time|Benchmark)' || true
python3 - "$W" "$ROUNDS" <<'PY'
import json, sys, statistics
W, rounds = sys.argv[1], int(sys.argv[2])
print("\n| case | build | median per round (ms) |")
print("|---|---|---|")
for case in ["steady", "edit"]:
    per = {}
    for r in range(1, rounds + 1):
        for res in json.load(open(f"{W}/{case}-{r}.json"))["results"]:
            per.setdefault(res["command"], []).append(statistics.median(res["times"]) * 1000)
    for name, ms in per.items():
        print(f"| {case} | {name} | " + ", ".join(f"{m:.1f}" for m in ms) + " |")
first = json.load(open(f"{W}/first.json"))["results"][0]["times"]
print(f"| first | journal-on | {statistics.median(first) * 1000:.1f} (median of 5) |")
PY
du -sh "$W/on/.tmp/.forge/undo" | sed 's/^/journal size after the runs: /'
