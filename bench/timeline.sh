#!/usr/bin/env bash
# Timeline and spend benchmarks: append cost from an empty log to 1,000,000 events, filtered
# reads against `grep -c`, chain verification throughput, and incremental transcript ingestion.
#
#   bash bench/timeline.sh               # builds forge --release unless FORGE=path is given
#   BENCH_DIR=/tmp/x RUNS=20 bash bench/timeline.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/forge-bench-timeline}
RUNS=${RUNS:-10}
EVENTS=${EVENTS:-1000000}
mkdir -p "$BENCH_DIR"
if [ -z "${FORGE:-}" ]; then
  (cd "$repo" && cargo build --release --quiet)
  FORGE="${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-gnu/release/forge"
fi
median() { # hyperfine json → median ms of command $2
  python3 -c "import json,sys; print('%.3f' % (json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]['median']*1000))" "$1" "$2"
}

# A project with an empty session and one whose session log has $EVENTS events (a valid chain,
# written exactly as Forge writes lines; 10 changes, so one change is a tenth of the log).
proj="$BENCH_DIR/proj"
if [ ! -f "$proj/.forge/sessions/big/timeline.jsonl" ] || [ "$(wc -l < "$proj/.forge/sessions/big/timeline.jsonl")" -ne "$EVENTS" ]; then
  rm -rf "$proj" && mkdir -p "$proj" && (cd "$proj" && git init -q && "$FORGE" init >/dev/null)
  python3 - "$proj/.forge/sessions/big/timeline.jsonl" "$EVENTS" <<'PY'
import hashlib, json, sys
path, n = sys.argv[1], int(sys.argv[2])
import os; os.makedirs(os.path.dirname(path), exist_ok=True)
prev = "0" * 64
kinds = ["guard", "guard", "guard", "tool", "tool", "verify", "breaker", "budget"]
with open(path, "w") as f:
    for i in range(1, n + 1):
        kind = kinds[i % len(kinds)]
        data = {"decision": "allow", "rule": "default-allow", "tool": "Bash", "target": f"cargo test --all step {i}"} if kind == "guard" else {"i": i, "verdict": "PASS"}
        d = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)
        body = '{"ts":%s,"seq":%d,"session":"big","change":%s,"actor":"claude:big","kind":%s,"data":%s,"prev":"%s"' % (
            d("2026-11-30T%02d:%02d:%02d.%06dZ" % (i // 3600000 % 24, i // 60000 % 60, i // 1000 % 60, i % 1000000)),
            i, d("change-%d" % (i % 10)), d(kind), d(data), prev)
        h = hashlib.sha256((body + "}").encode()).hexdigest()
        f.write(body + ',"hash":"%s"}\n' % h)
        prev = h
PY
fi
log="$proj/.forge/sessions/big/timeline.jsonl"
size=$(stat -c %s "$log")
echo "## Timeline ($EVENTS events, $((size / 1000000)) MB, $(nproc) cores)"
echo

# 1. Append: empty session vs the 1M-event session (the same command, a note).
cd "$proj"
hyperfine -N --warmup 5 --runs $((RUNS * 10)) --export-json "$BENCH_DIR/append.json" \
  "env FORGE_SESSION=fresh-$$ $FORGE timeline note bench" "env FORGE_SESSION=big $FORGE timeline note bench" >/dev/null 2>&1
a0=$(median "$BENCH_DIR/append.json" 0); a1=$(median "$BENCH_DIR/append.json" 1)
echo "| append one event | empty log | $EVENTS-event log | ratio |"
echo "|---|---:|---:|---:|"
echo "| \`forge timeline note\` (whole process) | $a0 ms | $a1 ms | $(awk -v a="$a0" -v b="$a1" 'BEGIN{printf "%.2f×", b/a}') |"
echo
# Restore the chain length the next runs expect (the notes appended above are valid events).

# 2. Filtered read vs grep -c.
# Both write to a file: GNU grep stops at the first match when its output is /dev/null.
hyperfine --warmup 2 --runs "$RUNS" --export-json "$BENCH_DIR/read.json" \
  "grep -c change-3 $log > $BENCH_DIR/grep.out" "$FORGE timeline --change change-3 --json > $BENCH_DIR/forge.out" >/dev/null 2>&1 || true
g=$(median "$BENCH_DIR/read.json" 0); t=$(median "$BENCH_DIR/read.json" 1)
rss=$( { /usr/bin/time -f "%M" "$FORGE" timeline --change change-3 --json >/dev/null; } 2>&1 | tail -1)
echo "| read one change (10% of events) | median | peak RSS |"
echo "|---|---:|---:|"
echo "| \`grep -c change-3\` (the change name) | $g ms | |"
echo "| \`forge timeline --change change-3 --json\` | $t ms ($(awk -v a="$g" -v b="$t" 'BEGIN{printf "%.2f×", b/a}') grep; target ≤ 3×) | $((rss / 1024)) MiB (target < 100 MiB) |"
echo

# 3. Chain verification throughput.
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$BENCH_DIR/verify.json" "$FORGE timeline verify" >/dev/null 2>&1 || true
v=$(median "$BENCH_DIR/verify.json" 0)
echo "| \`forge timeline verify\` | $v ms | $(awk -v s="$size" -v m="$v" 'BEGIN{printf "%.0f MB/s", s/1e6/(m/1000)}') (target ≥ 200 MB/s) |"
echo "|---|---:|---:|"
echo

# 4. Transcript ingestion: 100 MB once, then one new line.
t="$BENCH_DIR/transcript.jsonl"
if [ ! -f "$t" ]; then
  python3 - "$repo/tests/fixtures/spend/claude-transcript.jsonl" "$t" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().splitlines()
size, i = 0, 0
with open(dst, "w") as f:
    while size < 100_000_000:
        for l in lines:
            l = l.replace("msg_0000000000000000000000", "msg_%022d" % i).replace("req_", "req_%d_" % i)
            f.write(l + "\n"); size += len(l) + 1
        i += 1
PY
fi
rm -rf "$proj/.tmp/.forge/transcripts" "$proj/.forge/changes/bench"
mkdir -p "$proj/.forge/changes/bench" && echo "# Change: bench" > "$proj/.forge/changes/bench/spec.md"
first=$( { /usr/bin/time -f "%e %M" "$FORGE" budget record --change bench --from claude-transcript "$t" >/dev/null; } 2>&1 | tail -1)
# Each timed run first appends one new assistant line (a fresh message id).
grep -m1 '"assistant"' "$repo/tests/fixtures/spend/claude-transcript.jsonl" > "$BENCH_DIR/one-line.jsonl"
cat > "$BENCH_DIR/append-line.sh" <<SH
#!/bin/sh
sed "s/msg_/msg_\$(date +%s%N)_/" "$BENCH_DIR/one-line.jsonl" >> "$t"
SH
chmod +x "$BENCH_DIR/append-line.sh"
hyperfine -N --warmup 3 --runs $((RUNS * 5)) --export-json "$BENCH_DIR/ingest.json" \
  --prepare "$BENCH_DIR/append-line.sh" \
  "$FORGE budget record --change bench --from claude-transcript $t" >/dev/null 2>&1 || true
second=$(median "$BENCH_DIR/ingest.json" 0)
echo "| transcript ingestion ($(( $(stat -c %s "$t") / 1000000 )) MB) | time | peak RSS |"
echo "|---|---:|---:|"
echo "| first read of the whole transcript | $(echo "$first" | awk '{printf "%.2f s", $1}') | $(echo "$first" | awk '{printf "%d MiB", $2/1024}') |"
echo "| after one new line (whole process) | $second ms (target < 5 ms) | |"
