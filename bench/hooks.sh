#!/usr/bin/env bash
# Hook latency benchmarks: `forge hook claude pre-tool-use` on a typical Bash payload, whole
# process, against a no-op static binary, a Node.js hook (tdd-guard) and a one-file Python hook;
# and the cost of 1,000 project rules.
#
#   bash bench/hooks.sh                 # builds forge --release unless FORGE=path is given
#   RUNS=500 BENCH_DIR=/tmp/x bash bench/hooks.sh
#   BASE=/path/to/older/forge bash bench/hooks.sh   # adds the older build's rows, same runs
#
# Needs: gcc (with static glibc), python3, node + npm (tdd-guard is installed from the npm
# registry into $BENCH_DIR on first use). Timing is done by bench/spawn_timer.c: it spawns the
# hook with the payload file on stdin, as an agent does, and reports the median and p90 wall time
# and the peak RSS (wait4) of the hook process.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/forge-bench-hooks}
RUNS=${RUNS:-400}
mkdir -p "$BENCH_DIR"

if [ -z "${FORGE:-}" ]; then
  (cd "$repo" && cargo build --release --quiet)
  FORGE="${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-gnu/release/forge"
fi
gcc -O2 -o "$BENCH_DIR/spawn_timer" "$here/spawn_timer.c"
gcc -O2 -static -o "$BENCH_DIR/noop" "$here/hooks/noop.c"
timer="$BENCH_DIR/spawn_timer"

# A project with Forge's default config, and the same with 1,000 project rules.
make_project() { # dir rules
  rm -rf "$1" && mkdir -p "$1" && (cd "$1" && git init -q && "$FORGE" init >/dev/null)
  if [ "$2" -gt 0 ]; then
    python3 - "$1/.forge/config.yaml" "$2" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
rules = []
for i in range(n):
    k = i % 4
    if k == 0: rules.append(f"    - {{id: r{i}, decision: deny, reason: 'no tool{i}', program: tool{i}, args: ['--danger{i}*']}}")
    elif k == 1: rules.append(f"    - {{id: r{i}, decision: ask, reason: 'review area {i}', path: 'area{i}/**'}}")
    elif k == 2: rules.append(f"    - {{id: r{i}, decision: deny, reason: 'no edits {i}', tool: [Write, Edit], path: 'gen{i}/*.rs'}}")
    else: rules.append(f"    - {{id: r{i}, decision: allow, reason: 'fine {i}', program: git, args: [reset, --hard, 'HEAD~{i}'], relaxes: [git-reset-hard]}}")
with open(path, "a") as f:
    f.write("guard:\n  rules:\n" + "\n".join(rules) + "\n")
PY
  fi
  # A real captured Claude Code PreToolUse payload, pointed at this project, with a typical
  # command.
  python3 - "$repo/tests/fixtures/hooks/claude" "$1" <<'PY'
import json, os, sys
fix, proj = sys.argv[1], sys.argv[2]
name = sorted(f for f in os.listdir(fix) if f.startswith("PreToolUse"))[0]
p = json.load(open(os.path.join(fix, name)))
p["cwd"] = proj
p["tool_name"] = "Bash"
p["tool_input"] = {"command": "cargo test --all 2>&1 | tail -20", "description": "run tests"}
json.dump(p, open(os.path.join(proj, "payload.json"), "w"))
PY
}
make_project "$BENCH_DIR/p0" 0
make_project "$BENCH_DIR/p1000" 1000
# A heavier line for the guard: it reads a Makefile recipe and a project script, and looks at
# inline Python, as it does for `make test && sh scripts/check.sh && python3 -c …`.
mkdir -p "$BENCH_DIR/p0/scripts"
printf 'test:\n\tcargo test --all\nlint:\n\tcargo clippy -- -D warnings\n' > "$BENCH_DIR/p0/Makefile"
printf '#!/bin/sh\nset -e\nfor f in src/*.rs; do grep -q "fn " "$f"; done\nrm -rf target/tmp\n' > "$BENCH_DIR/p0/scripts/check.sh"
python3 - "$BENCH_DIR/p0" <<'PY'
import json, os, sys
proj = sys.argv[1]
p = json.load(open(os.path.join(proj, "payload.json")))
p["tool_input"] = {"command": "make test && sh scripts/check.sh && python3 -c 'import json; print(json.load(open(\"package.json\")))' | head", "description": "check"}
json.dump(p, open(os.path.join(proj, "heavy.json"), "w"))
PY
# The first call of each writes the parsed-config cache; the timed runs use it, as agents do.
"$FORGE" hook claude pre-tool-use < "$BENCH_DIR/p0/payload.json" >/dev/null
"$FORGE" hook claude pre-tool-use < "$BENCH_DIR/p1000/payload.json" >/dev/null
if [ -n "${BASE:-}" ]; then
  "$BASE" hook claude pre-tool-use < "$BENCH_DIR/p1000/payload.json" >/dev/null
fi

python=$(python3 -c 'import sys; print(sys.executable)')
if [ ! -x "$BENCH_DIR/node/node_modules/.bin/tdd-guard" ] && command -v npm >/dev/null; then
  mkdir -p "$BENCH_DIR/node" && (cd "$BENCH_DIR/node" && npm install --silent tdd-guard@1.7.0 >/dev/null 2>&1) || true
fi

measure() { # label command...
  local label=$1 payload=$2; shift 2
  read -r med p90 rss < <("$timer" "$RUNS" "$payload" "$@")
  printf '%s|%s|%s|%s\n' "$label" "$med" "$p90" "$rss"
}

rows=()
rows+=("$(measure "no-op static binary" "$BENCH_DIR/p0/payload.json" "$BENCH_DIR/noop")")
rows+=("$(measure "forge hook claude pre-tool-use" "$BENCH_DIR/p0/payload.json" "$FORGE" hook claude pre-tool-use)")
rows+=("$(measure "forge, 1,000 project rules" "$BENCH_DIR/p1000/payload.json" "$FORGE" hook claude pre-tool-use)")
rows+=("$(measure "forge, a line that reads a Makefile and a script" "$BENCH_DIR/p0/heavy.json" "$FORGE" hook claude pre-tool-use)")
if [ -n "${BASE:-}" ]; then
  rows+=("$(measure "BASE hook claude pre-tool-use" "$BENCH_DIR/p0/payload.json" "$BASE" hook claude pre-tool-use)")
  rows+=("$(measure "BASE, 1,000 project rules" "$BENCH_DIR/p1000/payload.json" "$BASE" hook claude pre-tool-use)")
fi
rows+=("$(measure "Python one-file hook" "$BENCH_DIR/p0/payload.json" "$python" "$here/hooks/py_guard.py")")
if [ -x "$BENCH_DIR/node/node_modules/.bin/tdd-guard" ]; then
  node=$(command -v node)
  rows+=("$(RUNS=$((RUNS / 10)) measure "tdd-guard 1.7.0 (Node.js)" "$BENCH_DIR/p0/payload.json" "$node" "$BENCH_DIR/node/node_modules/tdd-guard/dist/cli/tdd-guard.js")")
fi

base=$(echo "${rows[0]}" | cut -d'|' -f2)
forge=$(echo "${rows[1]}" | cut -d'|' -f2)
echo "## Hook latency (payload: a real Claude Code PreToolUse, Bash \`cargo test --all 2>&1 | tail -20\`; $RUNS runs)"
echo
echo "| hook | median | p90 | × no-op | × forge | peak RSS |"
echo "|---|---:|---:|---:|---:|---:|"
for r in "${rows[@]}"; do
  IFS='|' read -r label med p90 rss <<<"$r"
  awk -v l="$label" -v m="$med" -v p="$p90" -v r="$rss" -v b="$base" -v f="$forge" \
    'BEGIN { printf "| %s | %.2f ms | %.2f ms | %.2f× | %.2f× | %.1f MiB |\n", l, m, p, m / b, m / f, r / 1024 }'
done
rules=$(echo "${rows[2]}" | cut -d'|' -f2)
rss=$(echo "${rows[1]}" | cut -d'|' -f4)
echo
awk -v f="$forge" -v b="$base" -v r="$rules" -v rss="$rss" 'BEGIN {
  printf "- forge vs no-op static binary: %.2f× (target ≤ 3×): %s\n", f / b, (f / b <= 3 ? "PASS" : "FAIL")
  printf "- forge peak RSS: %.1f MiB (target < 10 MiB): %s\n", rss / 1024, (rss < 10240 ? "PASS" : "FAIL")
  printf "- 1,000 project rules: %.2f× the decision without rules (target ≤ 2×): %s\n", r / f, (r / f <= 2 ? "PASS" : "FAIL")
}'
