#!/usr/bin/env bash
# The experiment behind docs/sandbox.md "Git's objects: why they are not grow-only" (issue 34,
# point 4): does ordinary git work when git's object folder may grow but not shrink — every
# Landlock write right but LANDLOCK_ACCESS_FS_REMOVE_FILE and _REMOVE_DIR?
#
#   bash bench/objects_grow_only.sh            # prints each command, its exit and git's warnings
#
# Landlock grants by hierarchy and cannot take a right back below a folder that has it: a rule
# on the project (which the session may write, deletes included) covers `.git/objects` too. So
# the object folder is moved out of the project (`.git/objects` a link to it) and granted alone,
# without the remove rights; the repository gets every right. Landlock is applied by a small
# Python helper (ctypes: landlock_create_ruleset, _add_rule, _restrict_self), the whole
# machine read-only besides. Needs python3, git and a kernel with Landlock.
set -u
W=${BENCH_DIR:-/tmp/forge-objects-grow-only}
rm -rf "$W" && mkdir -p "$W/home"
cat > "$W/ll.py" <<'PY'
import ctypes, os, sys, struct
libc = ctypes.CDLL(None, use_errno=True)
ALL = (1 << 15) - 1                    # every file-system right of ABI 3 and later
READ = 1 | 4 | 8                       # EXECUTE, READ_FILE, READ_DIR
GROW = ALL & ~(16 | 32)                # all but REMOVE_DIR, REMOVE_FILE
attr = struct.pack("Q", ALL)
fd = libc.syscall(444, attr, len(attr), 0)
assert fd >= 0, "no Landlock here"
def rule(path, access):
    pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    assert libc.syscall(445, fd, 1, struct.pack("=Qi", access, pfd), 0) == 0, path
    os.close(pfd)
rule("/", READ)
rule("/dev/null", 4 | 2 | (1 << 14))
for p in filter(None, os.environ["RW"].split(":")): rule(p, ALL)
for p in filter(None, os.environ["GROW"].split(":")): rule(p, GROW)
assert libc.prctl(38, 1, 0, 0, 0) == 0 and libc.syscall(446, fd, 0) == 0
os.execvp(sys.argv[1], sys.argv[1:])
PY
export HOME=$W/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b \
  GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
cd "$W"
git init -q -b main remote
(cd remote && for i in $(seq 1 150); do echo "$i" > "f$i"; done && git add -A && git commit -qm base)
git clone -q remote repo
mkdir objs && mv repo/.git/objects/* objs/ && rmdir repo/.git/objects && ln -s "$W/objs" repo/.git/objects
# 120 commits to fetch: more objects than transfer.unpackLimit, so the fetch keeps a pack.
(cd remote && for i in $(seq 1 120); do echo "x$i" > "g$i"; git add "g$i"; git commit -qm "c$i"; done)
cd repo
export RW=$PWD GROW=$W/objs
run() {
  printf '\n$ %s\n' "$*"
  python3 "$W/ll.py" "$@" > "$W/out" 2>&1
  local rc=$?
  sed 's/^/    /' "$W/out" | head -6
  echo "    exit $rc; leftover temporary files in objects/: $(find "$W/objs" -name 'tmp_*' -o -name '.tmp-*' -o -name '*.keep' -o -name '*.lock' | wc -l)"
}
run rm -f "$(find "$W/objs" -type f -path '*/[0-9a-f][0-9a-f]/*' | head -1)"
echo hello > new.txt
run git add new.txt
run git commit -qm add
echo change >> new.txt
run git stash
run git stash pop
run git fetch -q origin
run git gc -q --prune=now
printf '\ngit fsck (outside the sandbox):\n'
git fsck 2>&1 | sed 's/^/    /' | tail -3
printf 'objects: %s in %s files\n' "$(du -sh "$W/objs" | cut -f1)" "$(find "$W/objs" -type f | wc -l)"
