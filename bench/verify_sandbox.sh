#!/usr/bin/env bash
# What running the verify commands in the kernel sandbox (the default since issue 31, point 7)
# costs `forge verify`: the same binary, one trivial command, with `verify.sandbox: off` and
# with the default, alternated so both see the same machine; medians against `sh -c true`.
#
#   FORGE=path/to/forge bash bench/verify_sandbox.sh
#
# Environment: ROUNDS (default 6), RUNS per hyperfine call (default 200), BENCH_DIR (default
# /tmp/forge-bench-verify-sandbox; never the repository). Needs hyperfine, git, python3.
set -euo pipefail
: "${FORGE:?set FORGE to the forge binary to measure}"
FORGE=$(realpath "$FORGE")
W=${BENCH_DIR:-/tmp/forge-bench-verify-sandbox}
rm -rf "$W" && mkdir -p "$W"
for round in $(seq 1 "${ROUNDS:-6}"); do
  for mode in off default; do
    d=$W/$mode-$round
    extra=""; [ "$mode" = off ] && extra="  sandbox: off
"
    mkdir -p "$d/.forge"
    printf 'verify:\n  commands:\n    - name: test\n      run: "true"\n      report: none\n%s' "$extra" >"$d/.forge/config.yaml"
    echo x >"$d/README"
    (cd "$d" && git init -q && git add -A &&
      GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.invalid GIT_COMMITTER_NAME=b \
      GIT_COMMITTER_EMAIL=b@example.invalid git -c commit.gpgsign=false commit -qm bench)
    (cd "$d" && "$FORGE" verify >/dev/null 2>&1)
    (cd "$d" && hyperfine -N --style none --warmup 5 --runs "${RUNS:-200}" \
      --export-json "$W/$mode-$round.json" 'sh -c true' "$FORGE verify" >/dev/null 2>&1)
    python3 - "$W/$mode-$round.json" "$mode" "$round" <<'PY'
import json, sys
sh, fv = json.load(open(sys.argv[1]))["results"]
print(f"sandbox {sys.argv[2]:7} round {sys.argv[3]:>2}: sh {sh['median']*1000:.3f} ms, "
      f"verify {fv['median']*1000:.3f} ms, {fv['median']/sh['median']:.2f}x")
PY
  done
done
