#!/usr/bin/env bash
# `forge verify` overhead, two builds alternated so both see the same machine: wall median
# against `sh -c true`, and CPU per run (user+sys), which stays comparable on a busy machine.
#
#   BASE=path/to/old/forge NEW=path/to/new/forge bash bench/verify_ab.sh
#
# Environment: ROUNDS (default 8), RUNS per hyperfine call (default 300), BENCH_DIR (default
# /tmp/forge-bench-ab; never the repository). Needs hyperfine, git, python3.
set -euo pipefail
: "${BASE:?set BASE to the baseline forge binary}" "${NEW:?set NEW to the forge binary to measure}"
BASE=$(realpath "$BASE") NEW=$(realpath "$NEW")
W=${BENCH_DIR:-/tmp/forge-bench-ab}
rm -rf "$W" && mkdir -p "$W"
cfg='verify:
  commands:
    - name: test
      run: "true"
      report: none
'
for round in $(seq 1 "${ROUNDS:-8}"); do
  for which in base new; do
    bin=$BASE; [ "$which" = new ] && bin=$NEW
    d=$W/$which-$round
    mkdir -p "$d/.forge" && printf '%s' "$cfg" >"$d/.forge/config.yaml" && echo x >"$d/README"
    (cd "$d" && git init -q && git add -A &&
      GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.invalid GIT_COMMITTER_NAME=b \
      GIT_COMMITTER_EMAIL=b@example.invalid git -c commit.gpgsign=false commit -qm bench)
    (cd "$d" && "$bin" verify >/dev/null 2>&1)
    (cd "$d" && hyperfine -N --style none --warmup 5 --runs "${RUNS:-300}" \
      --export-json "$W/$which-$round.json" 'sh -c true' "$bin verify" >/dev/null 2>&1)
    python3 - "$W/$which-$round.json" "$which" "$round" <<'PY'
import json, sys
sh, fv = json.load(open(sys.argv[1]))["results"]
cpu = lambda r: (r["user"] + r["system"]) * 1000
print(f"{sys.argv[2]:4} round {sys.argv[3]:>2}: wall sh {sh['median']*1000:.3f} ms, verify "
      f"{fv['median']*1000:.3f} ms, {fv['median']/sh['median']:.2f}x | cpu verify {cpu(fv):.3f} ms")
PY
  done
done
