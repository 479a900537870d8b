# The two builds a side-by-side benchmark compares (sourced by bench/ab.sh and
# bench/run_loop.sh): sets base_bin, base_label, new_bin, new_label.
#
# BASE_BIN=/path/forge, or BASE=<tag or commit> (default: the merge-base of HEAD with the latest
# tag, or HEAD~20 when there is no tag), built once from a `git worktree add` of that commit with
# `cargo build --release --locked` and kept in $AB_CACHE/<commit>/forge (default AB_CACHE
# ~/.cache/forge-bench-ab). NEW=/path/forge, or the working tree's `cargo build --release
# --locked` (${CARGO_TARGET_DIR:-target}). Needs $repo (the checkout), die and log.
AB_CACHE=${AB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forge-bench-ab}
if [ -n "${BASE_BIN:-}" ]; then
  base_bin=$(realpath "$BASE_BIN") base_label="BASE_BIN=$BASE_BIN"
else
  if [ -z "${BASE:-}" ]; then
    if tag=$(git -C "$repo" describe --tags --abbrev=0 2>/dev/null); then
      BASE=$(git -C "$repo" merge-base HEAD "$tag")
    else
      BASE=HEAD~20
    fi
  fi
  sha=$(git -C "$repo" rev-parse --verify "$BASE^{commit}") || die "BASE=$BASE is no commit here"
  base_bin=$AB_CACHE/$sha/forge base_label="$(git -C "$repo" log -1 --format='%h %cs' "$sha")"
  if [ ! -x "$base_bin" ]; then
    log "building BASE $base_label once into $AB_CACHE/$sha (git worktree + cargo build --release)"
    mkdir -p "$AB_CACHE/$sha"
    src=$AB_CACHE/$sha/src
    [ -d "$src" ] || git -C "$repo" worktree add --detach "$src" "$sha" >/dev/null
    (cd "$src" && CARGO_TARGET_DIR=$AB_CACHE/target cargo build --release --locked --quiet)
    cp "$AB_CACHE/target/x86_64-unknown-linux-gnu/release/forge" "$base_bin.tmp"
    mv "$base_bin.tmp" "$base_bin"
    git -C "$repo" worktree remove --force "$src"
  fi
fi
if [ -n "${NEW:-}" ]; then
  new_bin=$(realpath "$NEW") new_label="NEW=$NEW"
else
  (cd "$repo" && cargo build --release --locked --quiet)
  new_bin=${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-gnu/release/forge
  new_label="working tree ($(git -C "$repo" log -1 --format='%h' HEAD)$(git -C "$repo" diff --quiet HEAD || echo '+changes'))"
fi
[ -x "$base_bin" ] && [ -x "$new_bin" ] || die "missing binary: $base_bin or $new_bin"

