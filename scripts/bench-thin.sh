#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory): a thin
# vault against restic, both on the same S3 server (SeaweedFS `weed mini`
# on 127.0.0.1) in the same run (issue 40). The data: BENCH_THIN_MIB MiB
# in folders of about 10 MiB (random and text files). Both back it up to
# S3; then from a thin clone (vault) and from restic's repository:
#   - local disk: the thin vault against the remote's size (restic: its cache)
#   - `list`: remote requests (VAULT_STATS=1)
#   - one 10 MiB folder restored (`snapshots restore --include` against
#     `restic restore --include`): time, and bytes downloaded against the
#     folder's stored bytes
#   - the whole snapshot restored: time against restic's (median of 3,
#     alternated, each after a sync; restic's with a sync after it too)
#   - `check --read-data-subset 10%`: the share of the remote's bytes read
#   - peak RSS of each (GNU time)
#
#   scripts/bench-thin.sh WORK_DIR
#   BENCH_THIN_MIB=1024   the data's size (the issue's figure is 5 GB or more)
#   VAULT=...             the vault binary (default .build/release/vault)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
work=$1/thin
VAULT=${VAULT:-$PWD/.build/release/vault}
MIB=${BENCH_THIN_MIB:-1024}
export VAULT_ALLOW_WEAK_KDF=1
for tool in rclone weed restic; do
    command -v $tool >/dev/null || { echo; echo "$tool not installed (make deps installs it): skipping the thin bench"; exit 0; }
done
rm -rf "$work"; mkdir -p "$work"
weed_pid=
trap '[ -n "$weed_pid" ] && kill "$weed_pid" 2>/dev/null; wait 2>/dev/null; [ -n "${BENCH_THIN_KEEP:-}" ] || rm -rf "$work"' EXIT
unset AWS_CA_BUNDLE   # breaks rclone's S3 backend
now() { date +%s.%N; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
# timed OUT CMD...: runs CMD with GNU time; sets secs and rss (MiB); CMD's stderr into OUT.
timed() {
    local out=$1; shift
    local t0 t1
    t0=$(now); /usr/bin/time -f 'rss %M' -o "$work/time" "$@" >/dev/null 2>"$out"; t1=$(now)
    secs=$(printf '%.3f' "$(echo "$t1 - $t0" | bc -l)")
    rss=$(( $(awk '/^rss/ {print $2}' "$work/time") / 1024 ))
}
reads() { awk '/remote reads:/ {print $4" "$6}' "$1" | tail -1; }

. scripts/weed-s3.sh
export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret RESTIC_PASSWORD=bench RESTIC_CACHE_DIR=$work/restic-cache

# The data: folders of ~10 MiB, half random (incompressible), half text.
python3 - "$work/data" "$MIB" <<'PY'
import os, random, sys
root, mib = sys.argv[1], int(sys.argv[2])
random.seed(40)
words = [b"thin", b"vault", b"remote", b"range", b"block", b"cache", b"chunk"]
for d in range(max(1, mib // 10)):
    folder = os.path.join(root, "d%03d" % d)
    os.makedirs(folder)
    for f in range(10):
        with open(os.path.join(folder, "f%02d" % f), "wb") as out:
            if f % 2:
                out.write(os.urandom(1 << 20))
            else:
                out.write(b" ".join(random.choice(words) for _ in range(200000))[: 1 << 20])
PY
pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"
v() { "$VAULT" --password-file "$pw" "$@"; }
full=$work/full thin=$work/thin-vault
v --vault "$full" init --kdf-memory 64 --kdf-passes 1 >/dev/null 2>&1
(cd "$work" && v --vault "$full" backup data >/dev/null 2>&1)
v --vault "$full" snapshots list >/dev/null 2>&1
v --vault "$full" remote add s3 B:bench/vault >/dev/null 2>&1
v --vault "$full" push s3 >/dev/null 2>&1
repo=s3:http://127.0.0.1:$s3_port/bench/restic
restic -r "$repo" init -q >/dev/null
(cd "$work" && restic -r "$repo" backup -q data >/dev/null)
remote_bytes=$(rclone size --json B:bench/vault | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')
restic_bytes=$(rclone size --json B:bench/restic | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')

echo
echo "thin vault on S3 against restic on the same server ($MIB MiB of data; SeaweedFS on 127.0.0.1):"
timed "$work/clone.err" "$VAULT" --password-file "$pw" clone --thin --cache-size 64M B:bench/vault "$thin"
printf '  clone --thin: %.3f s, peak RSS %s MiB\n' "$secs" "$rss"
export VAULT_STATS=1
timed "$work/list.err" "$VAULT" --password-file "$pw" --vault "$thin" list
printf '  list: %s remote requests (goal <= 2), peak RSS %s MiB\n' "$(reads "$work/list.err" | cut -d' ' -f1 | grep . || echo 0)" "$rss"
timed "$work/ls.err" "$VAULT" --password-file "$pw" --vault "$thin" snapshots ls latest
printf '  snapshots ls: %s requests, %.3f s; again (from the cache): ' "$(reads "$work/ls.err" | cut -d' ' -f1)" "$secs"
timed "$work/ls2.err" "$VAULT" --password-file "$pw" --vault "$thin" snapshots ls latest
printf '%s requests, %.3f s\n' "$(reads "$work/ls2.err" | cut -d' ' -f1)" "$secs"

# One folder of ~10 MiB.
folder=data/d007
# Its stored bytes: the random files as they are, the text ones as zstd -3 leaves them (what vault stores).
stored=$(for f in "$work/$folder"/*; do zstd -3 -c "$f" | wc -c; done | awk '{s += $1} END {print s}')
sync; timed "$work/one.err" "$VAULT" --password-file "$pw" --vault "$thin" snapshots restore latest --to "$work/one-v" --include "$folder"
t_one=$secs rss_one=$rss got_one=$(reads "$work/one.err" | cut -d' ' -f2)
sync; timed "$work/one-r.err" restic -r "$repo" restore latest --target "$work/one-r" --include "/$folder"
t_one_r=$secs
printf '  restore one 10 MiB folder (%s bytes stored): %.3f s, %s bytes down (%sx, goal <= 2); restic --include %.3f s: %sx its time (goal <= 1.0), peak RSS %s MiB\n' \
    "$stored" "$t_one" "$got_one" "$(ratio "$got_one" "$stored")" "$t_one_r" "$(ratio "$t_one" "$t_one_r")" "$rss_one"

# The whole snapshot: 3 rounds, the order alternated, each after a `sync`
# (vault syncs what it restored before naming it, and a syncfs would also
# wait for what the setup above left dirty); restic does not sync, so its
# time with a `sync` after it is shown too. Medians.
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
tv=() tr=() trs=() rv=()
# Each restore is deleted once timed: at BENCH_THIN_MIB=5120, six kept
# would need 30 GB.
restore_v() {
    sync; timed "$work/all.err" "$VAULT" --password-file "$pw" --vault "$thin" snapshots restore latest --to "$work/all-v$1"; tv+=("$secs") rv+=("$rss")
    rm -rf "$work/all-v$1"
}
restore_r() {
    sync; timed "$work/all-r.err" restic -r "$repo" restore latest --target "$work/all-r$1"; tr+=("$secs")
    local t0; t0=$(now); sync; trs+=("$(printf '%.3f' "$(echo "$secs + $(now) - $t0" | bc -l)")")
    rm -rf "$work/all-r$1"
}
for round in 1 2 3; do
    if [ $((round % 2)) = 1 ]; then restore_v $round; restore_r $round; else restore_r $round; restore_v $round; fi
done
t_all=$(median "${tv[@]}") t_r=$(median "${tr[@]}") t_rs=$(median "${trs[@]}")
printf '  restore the whole snapshot (median of 3): %.3f s; restic %.3f s: %sx its time (goal <= 1.0); restic and a sync %.3f s: %sx; peak RSS %s MiB (restic %s MiB)\n' \
    "$t_all" "$t_r" "$(ratio "$t_all" "$t_r")" "$t_rs" "$(ratio "$t_all" "$t_rs")" "$(printf '%s\n' "${rv[@]}" | sort -n | tail -1)" "$rss"

timed "$work/sub.err" "$VAULT" --password-file "$pw" --vault "$thin" check --read-data-subset 10%
printf '  check --read-data-subset 10%%: %s of %s bytes read (%s%%, goal about 10), %.3f s, peak RSS %s MiB\n' \
    "$(reads "$work/sub.err" | cut -d' ' -f2)" "$remote_bytes" \
    "$(printf '%.1f' "$(echo "100 * $(reads "$work/sub.err" | cut -d' ' -f2) / $remote_bytes" | bc -l)")" "$secs" "$rss"

local_bytes=$(du -sb --exclude=cache "$thin" | cut -f1) cache_bytes=$(du -sb "$RESTIC_CACHE_DIR" | cut -f1)
printf '  local disk: thin vault %s bytes without its cache (%s in it, bound 64 MiB) = %s%% of the remote'"'"'s %s (goal <= 2%% + the cache bound); restic'"'"'s cache %s bytes = %s%% of its %s\n' \
    "$local_bytes" "$(du -sb "$thin/cache" | cut -f1)" "$(printf '%.2f' "$(echo "100 * $local_bytes / $remote_bytes" | bc -l)")" "$remote_bytes" \
    "$cache_bytes" "$(printf '%.2f' "$(echo "100 * $cache_bytes / $restic_bytes" | bc -l)")" "$restic_bytes"
