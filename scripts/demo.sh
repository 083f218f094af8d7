#!/usr/bin/env bash
# make demo: the main job on a throw-away vault in a temporary directory:
# init, add without the password, list and get with it, check, two
# backups and a restore, an unlock agent, a device move.
set -euo pipefail
bin=$(cd "$(dirname "${1:-.build/release/vault}")" && pwd)/$(basename "${1:-.build/release/vault}")
demo=$(mktemp -d /tmp/vault-demo.XXXXXX)
trap '"$bin" lock --all >/dev/null 2>&1 || true; rm -rf "$demo"' EXIT
cd "$demo"
# The unlock agent's socket goes in $XDG_RUNTIME_DIR/vault: a private one here,
# so the demo runs the same under ssh, sudo or a desktop session.
export XDG_RUNTIME_DIR="$demo/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
# The demo uses a password file and deliberately cheap Argon2id settings so
# it runs in a second; a real `vault init` asks twice and calibrates.
export VAULT_ALLOW_WEAK_KDF=1 VAULT_DIR="$demo/vault"
printf 'demo password\n' > password; chmod 600 password
say() { printf '\n$ %s\n' "$*"; }
vault() { "$bin" "$@"; }
run() { say "$*"; "$@"; }

echo "vault demo in $demo (removed at the end)"
run vault --password-file password init --kdf-memory 8 --kdf-passes 1
printf 'Quarterly tax numbers: 42\n' > taxes.txt
head -c 3145728 /dev/urandom > scan.bin
say "vault add taxes.txt scan.bin        # no password needed"
vault add taxes.txt scan.bin < /dev/null
say "echo 'api-key=s3cr3t' | vault add - --name api-key.txt"
echo 'api-key=s3cr3t' | vault add - --name api-key.txt
run vault info
run vault --password-file password list
run vault --password-file password get taxes.txt
run vault --password-file password get scan.bin -o restored.bin
say "cmp scan.bin restored.bin"
if cmp scan.bin restored.bin; then echo "identical"; else exit 1; fi
say "grep -rF -e 'taxes.txt' -e 'Quarterly tax' vault/     # names and contents are ciphertext"
if grep -rqF -e 'taxes.txt' -e 'Quarterly tax' vault/; then echo "found (unexpected)"; exit 1; else echo "nothing found"; fi
run ls vault vault/items
run vault --password-file password check --read-data

# Backups: no password either; the second run reads only what changed and
# stores only new pieces. The cache goes in the demo's own directory.
export XDG_CACHE_HOME="$demo/cache"
mkdir -p home/docs; cp taxes.txt scan.bin home/docs/; seq 1 20000 > home/docs/log.txt
run vault backup home --tag demo
echo "one more line" >> home/docs/log.txt
run vault backup home --tag demo
run vault --password-file password snapshots list
run vault --password-file password snapshots restore latest --to restored-home
say "diff -r home restored-home/home"
if diff -r home restored-home/home; then echo "identical"; else echo "the restored tree differs"; exit 1; fi
# Forgetting: keep only the newest snapshot; prune deletes the packs nothing
# needs and rewrites those mostly unused (here: the one that held scan.bin).
rm home/docs/scan.bin
run vault backup home --tag demo
run vault --password-file password snapshots forget --keep-last 1 --prune

# Unlocked for a while: the password once, then an agent of yours holds the key.
run vault --password-file password unlock --for 5m
say "vault list                           # no password while it runs"
vault list < /dev/null
run vault lock

# A device move, both ends on this machine over 127.0.0.1: the receiver shows
# a one-time code (here also written to a file), the sender reads it, checks
# and sends the vault, and erases its copy once the receiver confirmed.
say "vault move receive --into moved --listen 127.0.0.1:0 --code-file code &   # the new machine"
vault --password-file password move receive --into "$demo/moved" --listen 127.0.0.1:0 --code-file code 2>&1 \
    | sed -u 's/^/    [receiver] /' &
receiver=$!
for _ in $(seq 100); do [ -s code ] && break; sleep 0.1; done
# --yes: on a terminal the sender would ask whether the receiver shows the
# same security code; here both ends are this script.
say "vault move send --code-file code --yes                 # the old machine"
vault --password-file password move send --code-file code --yes
wait $receiver
run vault --vault moved --password-file password list
echo
echo "demo done: init, add without the password, list/get/check with it, incremental backups and a restore, unlock for a while, move to another place over TCP"
