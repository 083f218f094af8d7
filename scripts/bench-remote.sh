#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory): off-site
# copies against a real S3 server (SeaweedFS `weed mini` on 127.0.0.1, free
# ports, generated credentials), each figure a ratio to a reference run in
# the same session against the same server:
#   - push of a vault with one BIG item vs `rclone copy` of the same vault
#     directory (goal: >= 0.95x its throughput, issue 28)
#   - push of SMALL small items vs `rclone copy` of that vault (goal: <= 1.5x its time)
#   - clone of the big vault vs `rclone copy` back (the clone also checks every byte)
#   - restic backup of the same big file to the same S3, for users choosing between tools
# Every push and copy goes to a fresh prefix; each figure is the best of 2.
#
#   scripts/bench-remote.sh WORK_DIR
#   BENCH_REMOTE_MIB=256      size of the big item in MiB (the issue's figure is 1024)
#   BENCH_REMOTE_SMALL=2000   number of small items (the issue's figure is 10000)
#   VAULT=...                 the vault binary (default .build/release/vault)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
work=$1/remote
VAULT=${VAULT:-$PWD/.build/release/vault}
MIB=${BENCH_REMOTE_MIB:-256}
SMALL=${BENCH_REMOTE_SMALL:-2000}
export VAULT_ALLOW_WEAK_KDF=1
for tool in rclone weed; do
    command -v $tool >/dev/null || { echo; echo "$tool not installed (make deps installs it): skipping the remote bench"; exit 0; }
done
rm -rf "$work"; mkdir -p "$work"
weed_pid=
trap '[ -n "$weed_pid" ] && kill "$weed_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
unset AWS_CA_BUNDLE   # breaks rclone's S3 backend
now() { date +%s.%N; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
mbs() { printf '%.0f' "$(echo "$1 / $2 / 1000000" | bc -l)"; }
# best2 CMD...: runs CMD twice (CMD gets the run number as its last argument), prints the faster time.
best2() {
    local best=999999 t0 t1 t i
    for i in 1 2; do
        t0=$(now); "$@" "$i" >/dev/null 2>&1; t1=$(now)
        t=$(echo "$t1 - $t0" | bc -l)
        best=$(echo "if ($t < $best) $t else $best" | bc -l)
    done
    printf '%.3f' "$best"
}

# The server.
. scripts/weed-s3.sh

pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"
v() { "$VAULT" --password-file "$pw" "$@"; }
rclone_flags=(--transfers 8 --checkers 16)

echo
echo "off-site copies (S3: SeaweedFS on 127.0.0.1; $MIB MiB item, $SMALL small items; best of 2):"
big=$work/big
v --vault "$big" init --kdf-memory 1 --kdf-passes 1 >/dev/null 2>&1
head -c "${MIB}M" /dev/urandom > "$work/big.bin"
v --vault "$big" add "$work/big.bin" >/dev/null 2>&1; v --vault "$big" list >/dev/null
bytes=$(du -sb "$big" | cut -f1)
push_big() { v --vault "$big" remote remove b >/dev/null 2>&1 || true; v --vault "$big" remote add b "B:bench/push-$1"; v --vault "$big" push b; }
copy_big() { rclone copy "$big" "B:bench/copy-$1" "${rclone_flags[@]}"; }
t_push=$(best2 push_big); t_copy=$(best2 copy_big)
printf '  push %s MiB: %.3f s (%s MB/s); rclone copy %.3f s (%s MB/s): %sx its throughput (goal >= 0.95)\n' \
    "$MIB" "$t_push" "$(mbs "$bytes" "$t_push")" "$t_copy" "$(mbs "$bytes" "$t_copy")" "$(ratio "$t_copy" "$t_push")"

clone_big() { rm -rf "$work/clone"; v clone "B:bench/push-1" "$work/clone"; }
back_big() { rm -rf "$work/back"; rclone copy "B:bench/copy-1" "$work/back" "${rclone_flags[@]}"; }
t_clone=$(best2 clone_big); t_back=$(best2 back_big)
printf '  clone %s MiB (every byte checked): %.3f s; rclone copy back %.3f s: %sx its time\n' \
    "$MIB" "$t_clone" "$t_back" "$(ratio "$t_clone" "$t_back")"

if command -v restic >/dev/null; then
    export RESTIC_PASSWORD=bench AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret
    restic_backup() {
        local repo="s3:http://127.0.0.1:$s3_port/bench/restic-$1"
        restic -r "$repo" init >/dev/null 2>&1 && restic -r "$repo" backup "$work/big.bin"
    }
    t_restic=$(best2 restic_backup)
    printf '  restic backup of the same file: %.3f s; vault push %s: %sx its time\n' "$t_restic" \
        "$(printf '%.3f s' "$t_push")" "$(ratio "$t_push" "$t_restic")"
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
else
    echo "  restic not installed (make deps installs it): skipping the restic comparison"
fi
rm -rf "$big" "$work/big.bin" "$work/clone" "$work/back"

small=$work/small
v --vault "$small" init --kdf-memory 1 --kdf-passes 1 >/dev/null 2>&1
mkdir -p "$work/files"
python3 -c "import os,sys
for i in range($SMALL): open(os.path.join(sys.argv[1], 'f%05d' % i), 'wb').write(os.urandom(1000 + i % 3000))" "$work/files"
(cd "$work/files" && ls | xargs "$VAULT" --vault "$small" add >/dev/null 2>&1)
v --vault "$small" list >/dev/null
push_small() { v --vault "$small" remote remove s >/dev/null 2>&1 || true; v --vault "$small" remote add s "B:bench/spush-$1"; v --vault "$small" push s; }
copy_small() { rclone copy "$small" "B:bench/scopy-$1" "${rclone_flags[@]}"; }
t_spush=$(best2 push_small); t_scopy=$(best2 copy_small)
printf '  push %s small items: %.3f s; rclone copy %.3f s: %sx its time (goal <= 1.5)\n' \
    "$SMALL" "$t_spush" "$t_scopy" "$(ratio "$t_spush" "$t_scopy")"
