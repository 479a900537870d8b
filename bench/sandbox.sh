#!/usr/bin/env bash
# Cost of `forge sandbox` (issue #10): what the launcher adds to `true`, per profile, with the
# two ways of keeping control files read-only inside a writable repository (a private mount
# namespace with read-only binds, the default; or one Landlock rule per entry,
# `--carve-by-rules`), and containment (`--contain`, a PID namespace).
#
#   bash bench/sandbox.sh              # builds forge --release unless FORGE=path is given
#   RUNS=1000 BENCH_DIR=/tmp/x bash bench/sandbox.sh
#   OTHER=/path/to/forge bash bench/sandbox.sh   # adds that build's launcher and session rows
#                                                # (a musl build, say: see BENCHMARKS.md §7)
#
# Two no-op rows show what any process start costs here: a static binary linked with glibc
# (glibc probes the CPU before main; each `cpuid` traps to the hypervisor on this VM) and one
# with no C library at all (bench/noop_nolibc.S).
#
# Needs: hyperfine, python3, git; Linux with Landlock and namespaces (root, or unprivileged user
# namespaces). Prints a Markdown table; the target is "session adds at most 1 ms median over true".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/forge-bench-sandbox}
RUNS=${RUNS:-500}
command -v hyperfine >/dev/null || { echo "bench: hyperfine not found (apt-get install -y hyperfine)" >&2; exit 1; }
if [ -z "${FORGE:-}" ]; then
  (cd "$repo" && cargo build --release --quiet)
  FORGE="${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-gnu/release/forge"
fi
"$FORGE" sandbox --level
mkdir -p "$BENCH_DIR"
gcc -O2 -static -o "$BENCH_DIR/noop-glibc" "$here/hooks/noop.c"
gcc -nostdlib -static -o "$BENCH_DIR/noop-nolibc" "$here/noop_nolibc.S"
other=()
if [ -n "${OTHER:-}" ]; then
  other=(-n 'OTHER launcher only (--mode off)' "$OTHER sandbox --mode off -- true"
         -n 'OTHER session (mount namespace)' "$OTHER sandbox --profile session -- true")
fi

# A project like the ones agents work in: a git repository with Forge's config and hooks wired.
p="$BENCH_DIR/project"
rm -rf "$p" && mkdir -p "$p/src" "$p/tests"
(cd "$p" && git init -q && "$FORGE" init >/dev/null && "$FORGE" hooks install claude --bin "$FORGE" >/dev/null \
  && echo 'fn main() {}' > src/main.rs && git add -A && git -c user.name=b -c user.email=b@b commit -qm init)
# The same project with `sandbox.reuse: false`: a namespace per call, as before the keeper.
p2="$BENCH_DIR/project-reuse-off"
rm -rf "$p2" && cp -a "$p" "$p2" && printf 'sandbox:\n  reuse: false\n' >> "$p2/.forge/config.yaml"
(cd "$p2" && git add -A && git -c user.name=b -c user.email=b@b commit -qm reuse-off)
"$FORGE" sandbox --project "$p2" -- true
cd "$p"
"$FORGE" sandbox -- true # creates the TMPDIR and the placeholder folders once, as the first call does
# A kept plan is vouched for only by a call made two seconds after the last change it was read
# from (src/sandbox/keeper.rs, RACY): a session's calls come seconds apart; a benchmark's do not.
sleep 2.5
"$FORGE" sandbox -- true

hyperfine -N --warmup 30 --runs "$RUNS" --export-json "$BENCH_DIR/sandbox.json" \
  -n 'true' 'true' \
  -n 'no-op, static, glibc' "$BENCH_DIR/noop-glibc" \
  -n 'no-op, static, no libc' "$BENCH_DIR/noop-nolibc" \
  -n 'launcher only (--mode off)' "$FORGE sandbox --mode off -- true" \
  -n 'session (mount namespace)' "$FORGE sandbox --profile session -- true" \
  -n 'session, reuse off' "$FORGE sandbox --profile session --project $p2 -- true" \
  -n 'session (--carve-by-rules)' "$FORGE sandbox --profile session --carve-by-rules -- true" \
  -n 'red (--write tests/**)' "$FORGE sandbox --profile red --write tests/** -- true" \
  -n 'session --contain' "$FORGE sandbox --profile session --contain -- true" \
  "${other[@]}" >/dev/null

python3 - "$BENCH_DIR/sandbox.json" "$RUNS" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
rows = [(r["command"], statistics.median(r["times"]) * 1e3, min(r["times"]) * 1e3,
         sorted(r["times"])[int(len(r["times"]) * 0.9)] * 1e3) for r in d["results"]]
base = rows[0][1]
print(f"## forge sandbox cost ({sys.argv[2]} runs each, `hyperfine -N`)\n")
print("| command | median | min | p90 | added to `true` (median) |")
print("|---|---:|---:|---:|---:|")
for name, med, mn, p90 in rows:
    print(f"| {name} | {med:.2f} ms | {mn:.2f} ms | {p90:.2f} ms | {med - base:+.2f} ms |")
session = next(m for n, m, _, _ in rows if n.startswith("session (mount"))
print(f"\n- session adds {session - base:.2f} ms median over `true` (target ≤ 1 ms): "
      f"{'PASS' if session - base <= 1.0 else 'FAIL'}")
med = {n: m for n, m, _, _ in rows}
print(f"- glibc's start-up alone (static no-op with glibc minus one with no libc): "
      f"{med['no-op, static, glibc'] - med['no-op, static, no libc']:.2f} ms")
if "OTHER session (mount namespace)" in med:
    o = med["OTHER session (mount namespace)"] - base
    print(f"- OTHER's session adds {o:.2f} ms median over `true`: {'PASS' if o <= 1.0 else 'FAIL'}")
PY
