#!/usr/bin/env bash
# Regressions, side by side: the working tree's build against a previous build of Forge, both
# timed in the same run, alternated round by round so both see the same machine. Cases:
# `forge hook claude pre-tool-use` on an ordinary Bash call, on a 10 KB `&&` chain of 300
# commands that name files, on a small and a 1 MB Write (time and peak memory), and the peak
# memory of a 10 MB Write.
#
#   bash bench/ab.sh                      # BASE = the default below, NEW = the working tree
#   BASE=c6173ab bash bench/ab.sh         # any tag or commit
#   BASE_BIN=/path/forge NEW=/path/forge bash bench/ab.sh   # two prebuilt binaries
#
# BASE defaults to the merge-base of HEAD with the latest tag (the previous release), or HEAD~20
# when there is no tag. It is built once, from a `git worktree add` of that commit, with
# `cargo build --release --locked`, and its binary kept in $AB_CACHE/<commit>/forge (default
# AB_CACHE ~/.cache/forge-bench-ab): later runs reuse it. NEW defaults to `cargo build --release
# --locked` of the working tree (${CARGO_TARGET_DIR:-target}).
#
# Environment: ROUNDS (default 6), RUNS spawns per case per round (default 100; the 1 MB Write
# a fifth of it, the 10 MB Write 5), BENCH_DIR (default /tmp/forge-bench-ab-hook). Timing is
# bench/spawn_timer.c: the payload file on stdin, as an agent runs a hook; median wall time and
# the peak RSS of the hook process (wait4). Needs gcc, git, python3.
#
# Prints one line per round and case, then a Markdown table: each build's median over the rounds
# (the range of the round medians), the new/base ratio per round (its range), the peak RSS, and
# each build's Write/Bash ratio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
W=${BENCH_DIR:-/tmp/forge-bench-ab-hook}
ROUNDS=${ROUNDS:-6}
RUNS=${RUNS:-100}
die() { echo "bench/ab: $*" >&2; exit 1; }
log() { echo "bench/ab: $*" >&2; }
case "$W" in "$repo" | "$repo"/*) die "BENCH_DIR must be outside the repository" ;; esac

# --- the two builds (BASE, BASE_BIN, NEW: see bench/builds.sh) ----------------------------
. "$here/builds.sh"

# --- the project and the payloads -------------------------------------------------------------
rm -rf "$W" && mkdir -p "$W/bin-base" "$W/bin-new"
# Both binaries run from copies in the same kind of place: the same binary measured 0.3 ms
# slower per call run from cargo's target folder inside a checkout than from /tmp
# (BENCHMARKS.md §8).
cp "$base_bin" "$W/bin-base/forge" && cp "$new_bin" "$W/bin-new/forge"
base_bin=$W/bin-base/forge new_bin=$W/bin-new/forge
gcc -O2 -o "$W/spawn_timer" "$here/spawn_timer.c"
timer=$W/spawn_timer
# One project per build (each writes its own config cache and timeline), the same files.
for which in base new; do
  bin=$base_bin; [ "$which" = new ] && bin=$new_bin
  p=$W/$which
  mkdir -p "$p" && (cd "$p" && git init -q && "$bin" init >/dev/null)
  python3 - "$repo/tests/fixtures/hooks/claude" "$p" <<'PY'
import json, os, sys
fix, proj = sys.argv[1], sys.argv[2]
for m in range(20):
    os.makedirs(f"{proj}/src/module_{m:02}", exist_ok=True)
    for f in range(5):
        open(f"{proj}/src/module_{m:02}/file_{f}.rs", "w").write("fn f() {}\n")
name = sorted(f for f in os.listdir(fix) if f.startswith("PreToolUse"))[0]
base = json.load(open(os.path.join(fix, name)))
base["cwd"] = proj
def write(out, tool, inp):
    p = dict(base, tool_name=tool, tool_input=inp)
    json.dump(p, open(os.path.join(proj, out), "w"))
write("bash.json", "Bash", {"command": "cargo test --all 2>&1 | tail -20", "description": "run tests"})
# 300 commands that name files (half of them exist), reading, copying, editing, deleting,
# redirecting: ~10 KB.
kinds = [
    "cat src/module_{m:02}/file_{f}.rs",
    "grep -n TODO src/module_{m:02}/file_{f}.rs",
    "cp src/module_{m:02}/file_{f}.rs build/copies/file_{i}.rs",
    "rm -f build/objects/module_{m:02}_{i}.o",
    "sed -i s/old/new/ src/module_{m:02}/gen_{i}.rs",
    "echo done_{i} > out/logs/step_{i}.txt",
]
segs = [kinds[i % 6].format(m=i % 20, f=i % 5, i=i) for i in range(300)]
cmd = " && ".join(segs)
write("chain.json", "Bash", {"command": cmd, "description": "many steps"})
line = "    let value = compute(input, &mut state); // 60 bytes\n"
write("write.json", "Write", {"file_path": f"{proj}/src/new.rs", "content": line * 20})
write("write1m.json", "Write", {"file_path": f"{proj}/src/big.rs", "content": line * (1_000_000 // len(line))})
write("write10m.json", "Write", {"file_path": f"{proj}/src/big.rs", "content": line * (10_000_000 // len(line))})
print(f"bench/ab: chain of {len(segs)} commands, {len(cmd)} bytes", file=sys.stderr)
PY
  # The first call writes the parsed-config cache; the timed runs use it, as agents do.
  "$bin" hook claude pre-tool-use <"$p/bash.json" >/dev/null
  for c in bash chain write write1m; do
    "$bin" hook claude pre-tool-use <"$p/$c.json" >"$W/$which-$c.out" 2>&1 || true
  done
done
# The same decisions, or the comparison is of two different jobs: the answers are compared
# with each binary's path and the sandbox's one-time file names taken out.
python3 - "$W" "$base_bin" "$new_bin" <<'PY'
import re, sys
w, base_bin, new_bin = sys.argv[1:]
def norm(which, binary):
    proj = f"{w}/{which.split('-')[0]}"
    text = open(f"{w}/{which}.out").read().replace(binary, "FORGE").replace(proj, "PROJECT")
    return re.sub(r"\.cwd-\d+-\d+", ".cwd-N", re.sub(r"/(base|new)-[0-9a-f]+/", "/P/", text))
for c in ("bash", "chain", "write", "write1m"):
    if norm(f"base-{c}", base_bin) != norm(f"new-{c}", new_bin):
        print(f"bench/ab: note: the two builds answer {c} differently (see {w}/base-{c}.out, {w}/new-{c}.out)", file=sys.stderr)
PY

# --- alternated rounds ------------------------------------------------------------------------
cases=(bash chain write write1m write10m)
runs_of() { case $1 in write1m) echo $(( (RUNS + 4) / 5 )) ;; write10m) echo 5 ;; *) echo "$RUNS" ;; esac; }
res=$W/results.txt
: >"$res"
for round in $(seq 1 "$ROUNDS"); do
  order="base new"; [ $((round % 2)) = 0 ] && order="new base"
  for c in "${cases[@]}"; do
    for which in $order; do
      bin=$base_bin; [ "$which" = new ] && bin=$new_bin
      read -r med p90 rss < <(cd "$W/$which" && "$timer" "$(runs_of "$c")" "$W/$which/$c.json" "$bin" hook claude pre-tool-use)
      echo "$round $c $which $med $p90 $rss" | tee -a "$res" >&2
    done
  done
done

python3 - "$res" "$base_label" "$new_label" "$ROUNDS" "$RUNS" <<'PY'
import sys
from collections import defaultdict
res, base_label, new_label, rounds, runs = sys.argv[1:]
med = defaultdict(dict); rss = defaultdict(int)
for line in open(res):
    r, c, w, m, p90, kib = line.split()
    med[(c, w)][int(r)] = float(m)
    rss[(c, w)] = max(rss[(c, w)], int(kib))
names = {
    "bash": "Bash `cargo test --all 2>&1 | tail -20`",
    "chain": "Bash, 300-command `&&` chain naming files (~10 KB)",
    "write": "Write, 1.2 KB",
    "write1m": "Write, 1 MB",
    "write10m": "Write, 10 MB (memory)",
}
def rng(xs, fmt="{:.2f}"):
    lo, hi = min(xs), max(xs)
    return fmt.format(lo) if f"{lo:.2f}" == f"{hi:.2f}" else f"{fmt.format(lo)}–{fmt.format(hi)}"
print(f"## Hook A/B: BASE {base_label} vs NEW {new_label} ({rounds} alternated rounds, {runs} spawns per case and round)\n")
print("| case | BASE median | NEW median | NEW / BASE | BASE peak RSS | NEW peak RSS |")
print("|---|---:|---:|---:|---:|---:|")
for c in names:
    b, n = med[(c, "base")], med[(c, "new")]
    if not b:
        continue
    ratios = [n[r] / b[r] for r in b if r in n]
    print(f"| {names[c]} | {rng(b.values())} ms | {rng(n.values())} ms | {rng(ratios)}× | "
          f"{rss[(c, 'base')] / 1024:.1f} MiB | {rss[(c, 'new')] / 1024:.1f} MiB |")
print()
for w, label in (("base", "BASE"), ("new", "NEW")):
    for c in ("write", "write1m"):
        r = [med[(c, w)][k] / med[("bash", w)][k] for k in med[(c, w)]]
        print(f"- {label}: {names[c]} / Bash call: {rng(r)}×")
    extra = rss[("write10m", w)] - rss[("bash", w)]
    print(f"- {label}: 10 MB Write peak RSS {rss[('write10m', w)] / 1024:.1f} MiB "
          f"({extra / 1024 / 9.537:.2f}× the content above a Bash call's)")
PY
