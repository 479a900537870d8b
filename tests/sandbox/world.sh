#!/usr/bin/env bash
# The decoy world of tests/sandbox.rs. Run as
#
#   unshare --mount --pid --fork --mount-proc --propagation private bash world.sh FORGE WORLD CASES
#
# Inside that throwaway mount and PID namespace it first makes every mount of the real machine
# read-only, then mounts a tmpfs on WORLD (an empty folder) and, for each case in CASES
# (NNN.cmd: the command, NNN.meta: `profile<TAB>extra forge sandbox args<TAB>check`), builds a
# fresh decoy world there — a HOME with dotfiles and keys, a repository with .git/ and .forge/, a
# folder outside it, a sentinel process holding a secret in its environment — runs the command
# for real inside `forge sandbox`, and prints one result line:
#
#   RESULT <id> <exit> <changed-protected-paths> <leaked-secrets> <sentinel-alive> <leftovers> <check>
#
# So a sandbox bug can only hurt a tmpfs in a namespace that vanishes with this script (and a
# signal to everything reaches only this PID namespace).
set -u
FORGE=$1 W=$2 CASES=$3

# The real machine, read-only from here on (deepest mounts first).
findmnt -rno TARGET | sort -r | while read -r m; do
  case "$m" in *'\x20'*) continue ;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null
done
mount -t tmpfs -o size=128m,mode=755 forge-world "$W" || { echo "FATAL cannot mount the world tmpfs"; exit 3; }

export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e
secret() { printf 'FORGE-SECRET-%s-%s' "$1" "$(head -c 9 /dev/urandom | base64 | tr '+/' 'xy')"; }

T=$W/.template
make_template() {
  mkdir -p "$T"
  local W=$T
  mkdir -p "$W/home" "$W/tmp" "$W/outside/victim/sub" "$W/checkout"
  H=$W/home R=$W/repo O=$W/outside
  echo "keep me" > "$O/victim/a.txt"; echo "deep" > "$O/victim/sub/b.txt"
  # HOME: dotfiles and keys.
  mkdir -p "$H/.ssh" "$H/.aws" "$H/.gnupg/private-keys-v1.d" "$H/.kube" "$H/.docker" \
    "$H/.config/gcloud" "$H/.config/gh" "$H/.cargo/registry" "$H/.claude" "$H/.codex" "$H/.gemini"
  S_SSH=$(secret ssh); echo "$S_SSH" > "$H/.ssh/id_ed25519"; chmod 600 "$H/.ssh/id_ed25519"
  echo "ssh-ed25519 AAAA test" > "$H/.ssh/id_ed25519.pub"
  S_AWS=$(secret aws); printf '[default]\naws_secret_access_key = %s\n' "$S_AWS" > "$H/.aws/credentials"
  S_GPG=$(secret gpg); echo "$S_GPG" > "$H/.gnupg/private-keys-v1.d/k.key"
  S_KUBE=$(secret kube); echo "token: $S_KUBE" > "$H/.kube/config"
  S_DOCKER=$(secret docker); echo "{\"auths\":{\"x\":{\"auth\":\"$S_DOCKER\"}}}" > "$H/.docker/config.json"
  S_GCLOUD=$(secret gcloud); echo "$S_GCLOUD" > "$H/.config/gcloud/credentials.db"
  S_GH=$(secret gh); echo "oauth_token: $S_GH" > "$H/.config/gh/hosts.yml"
  S_NETRC=$(secret netrc); echo "machine x login u password $S_NETRC" > "$H/.netrc"
  S_GITCRED=$(secret gitcred); echo "https://u:$S_GITCRED@x" > "$H/.git-credentials"
  S_CARGO=$(secret cargo); printf '[registry]\ntoken = "%s"\n' "$S_CARGO" > "$H/.cargo/credentials.toml"
  S_NPM=$(secret npm); echo "//registry/:_authToken=$S_NPM" > "$H/.npmrc"
  S_PYPI=$(secret pypi); printf '[pypi]\npassword = %s\n' "$S_PYPI" > "$H/.pypirc"
  S_HIST=$(secret hist); echo "export TOKEN=$S_HIST" > "$H/.bash_history"
  S_CLAUDE=$(secret claude); echo "{\"token\":\"$S_CLAUDE\"}" > "$H/.claude/.credentials.json"
  S_CODEX=$(secret codex); echo "{\"token\":\"$S_CODEX\"}" > "$H/.codex/auth.json"
  S_GEMINI=$(secret gemini); echo "{\"token\":\"$S_GEMINI\"}" > "$H/.gemini/oauth_creds.json"
  S_ENVVAR=$(secret envvar)
  # Red team, round 15: secrets the lists did not name.
  mkdir -p "$H/.minikube/profiles/m" "$H/.docker/machine/certs" "$H/.config/openstack"
  S_MINIKUBE=$(secret minikube); echo "$S_MINIKUBE" > "$H/.minikube/profiles/m/client.key"
  S_DMACHINE=$(secret dmachine); echo "$S_DMACHINE" > "$H/.docker/machine/certs/key.pem"
  S_OPENSTACK=$(secret openstack); echo "password: $S_OPENSTACK" > "$H/.config/openstack/clouds.yaml"
  S_XAUTH=$(secret xauth); echo "$S_XAUTH" > "$H/.Xauthority"
  S_TFRC=$(secret tfrc); echo "token = \"$S_TFRC\"" > "$H/.terraformrc"
  echo "alias ll='ls -l'" > "$H/.bashrc"; printf '[user]\n\tname = t\n' > "$H/.gitconfig"
  # The repository.
  mkdir -p "$R/src" "$R/tests" "$R/.claude"
  (cd "$R" && git init -q -b main . && HOME=$H "$FORGE" init >/dev/null 2>&1)
  [ -f "$R/.forge/config.yaml" ] || { echo "FATAL forge init failed"; exit 3; }
  # The cases name the decoy world by these variables: the sandbox grants the environment by
  # name, as a person grants their own tools' variables.
  printf 'sandbox:\n  env: [REPO, OUTSIDE, SENTINEL]\n' >> "$R/.forge/config.yaml"
  echo 'pub fn f() {}' > "$R/src/lib.rs"; echo 'ok 1' > "$R/tests/a_test.sh"
  echo '{"hooks":{}}' > "$R/.claude/settings.json"
  S_DOTENV=$(secret dotenv); echo "API_KEY=$S_DOTENV" > "$R/.env"; echo "API_KEY=" > "$R/.env.example"
  echo "/.env" >> "$R/.gitignore"
  # Credentials below the top, kept out of git as people keep them (red team, round 15).
  mkdir -p "$R/services/api" "$R/deploy"
  S_NESTENV=$(secret nestenv); echo "DB_PASSWORD=$S_NESTENV" > "$R/services/api/.env.production"
  S_PGPASS=$(secret pgpass); echo "db:5432:*:u:$S_PGPASS" > "$R/deploy/.pgpass"
  printf 'services/api/.env.production\ndeploy/.pgpass\n' >> "$R/.gitignore"
  printf 'clean:\n\trm -rf $(OUTSIDE)\nleak:\n\tcat $(HOME)/.aws/credentials\nhook:\n\techo "rm -rf /" > .git/hooks/pre-commit\n' > "$R/Makefile"
  echo '{"name":"d","version":"1.0.0","scripts":{"wipe":"rm -rf $OUTSIDE","plant":"echo x > .git/hooks/post-checkout","cfg":"echo evil: 1 >> .forge/config.yaml"}}' > "$R/package.json"
  (cd "$R" && git add -A && git commit -qm init)
  mkdir -p "$R/.tmp/.forge/runs/r/outputs/red-1"
  # Forge's own parsed-config cache, written before any case (Forge writes it, not the command).
  (cd "$R" && HOME=$H TMPDIR=$W/tmp "$FORGE" sandbox --explain >/dev/null 2>&1)
  SECRETS="$S_SSH $S_AWS $S_GPG $S_KUBE $S_DOCKER $S_GCLOUD $S_GH $S_NETRC $S_GITCRED $S_CARGO $S_NPM $S_PYPI $S_HIST $S_CLAUDE $S_CODEX $S_GEMINI $S_DOTENV $S_ENVVAR $S_MINIKUBE $S_DMACHINE $S_OPENSTACK $S_XAUTH $S_TFRC $S_NESTENV $S_PGPASS"
}

build_world() {
  find "$W" -mindepth 1 -maxdepth 1 ! -name .template -exec rm -rf {} + 2>/dev/null
  cp -a "$T"/. "$W"/
  # The repository's git files name the template's path nowhere (git stores none), so the
  # copy is a repository of its own.
  # A process outside the sandbox, holding a secret in its environment.
  env SENTINEL_SECRET="$S_ENVVAR" sleep 100000 &
  SENTINEL=$!
}

# Every file and folder a profile must leave as it was: type, mode, link target, content hash.
snapshot() { # profile
  local prune=()
  case "$1" in
    session) prune=(-path "$W/repo" -prune -o) ;;
    red) prune=(-path "$W/repo/tests" -prune -o -path "$W/repo/.tmp/.forge/runs/r/outputs/red-1" -prune -o -path "$W/home/.claude" -prune -o) ;;
    green) prune=(-path "$W/repo/src" -prune -o -path "$W/repo/.tmp/.forge/runs/r/outputs/red-1" -prune -o -path "$W/home/.claude" -prune -o) ;;
    review) prune=(-path "$W/repo/.tmp/.forge/runs/r/outputs/red-1" -prune -o -path "$W/home/.claude" -prune -o) ;;
    check) prune=(-path "$W/checkout" -prune -o) ;;
  esac
  {
    find "$W" -path "$T" -prune -o -path "$W/tmp" -prune -o -path "$W/home/.cargo/registry" -prune -o "${prune[@]}" -printf '%y %m %p -> %l\n' 2>/dev/null
    if [ "$1" = session ]; then
      find "$W/repo/.forge" "$W/repo/.claude" "$W/repo/.tmp/.forge" "$W/repo/.git/config" "$W/repo/.git/hooks" \
        "$W/repo/.git/info" "$W/repo/.env" -printf '%y %m %p -> %l\n' 2>/dev/null
      for p in "$W/repo" "$W/repo/.git"; do [ -d "$p" ] && echo "dir-present $p"; done
    fi
  } | sort | while read -r line; do
    set -- $line
    if [ "$1" = f ]; then echo "$line $(sha256sum < "$3" | cut -c1-16)"; else echo "$line"; fi
  done
}

make_template
for meta in "$CASES"/*.meta; do
  id=$(basename "$meta" .meta)
  IFS=$'\t' read -r profile args check < "$meta"
  build_world
  before=$(snapshot "$profile")
  export HOME=$W/home TMPDIR=$W/tmp OUTSIDE=$W/outside REPO=$W/repo SENTINEL AWS_SECRET_ACCESS_KEY=$S_ENVVAR
  out=$(cd "$W/repo" && eval "timeout 30 \"\$FORGE\" sandbox --profile $profile $args -- bash \"\$CASES/$id.cmd\"" 2>&1 </dev/null)
  rc=$?
  unset AWS_SECRET_ACCESS_KEY
  case "$args" in *--contain*) sleep 0.4 ;; esac
  after=$(snapshot "$profile")
  changed=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{ if ($2 == "dir-present") print $3; else print $4 }' | sort -u | tr '\n' ',')
  leaked=""
  own=""
  case "$args" in *"--client claude"*) own=$S_CLAUDE ;; esac
  for s in $SECRETS; do
    [ "$s" = "$own" ] && continue
    case "$out" in *"$s"*) leaked="$leaked$s," ;; esac
  done
  alive=no; kill -0 "$SENTINEL" 2>/dev/null && alive=yes
  leftovers=$(pgrep -f 'sleep 77[0-9][0-9]' | tr '\n' ',')
  ok=yes
  if [ -n "$check" ]; then (cd "$W/repo" && eval "$check") >/dev/null 2>&1 || ok=no; fi
  kill -9 "$SENTINEL" 2>/dev/null; wait "$SENTINEL" 2>/dev/null
  pkill -9 -f 'sleep 77[0-9][0-9]' 2>/dev/null
  printf 'RESULT %s %s %s %s %s %s %s\n' "$id" "$rc" "${changed:--}" "${leaked:--}" "$alive" "${leftovers:--}" "$ok"
  printf 'OUTPUT %s %s\n' "$id" "$(printf '%s' "$out" | head -c 600 | tr '\n' '|')"
done
