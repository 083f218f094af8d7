#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory): the
# first backup against its floor, `tar -cf - DIR | zstd -3 -T0 > /dev/null`
# (read every file, compress on every core, store nothing), on two trees
# copied from this machine (issue 45):
#   - small: its documentation, manual pages and perl libraries (mostly
#     small files);
#   - mixed: its shared data and libraries plus a 1 GiB disk image (half
#     random, half zeros);
# and the first backup of BENCH_FIRST_MANY (500,000) small files against
# `restic backup` of them (goal <= 0.8x), made right before, as the issue's.
# Each: median of 3, order alternated, each run after a sync, a fresh
# vault each time. vault also writes and fsyncs what it stores; the floor
# writes nothing, so on a slow disk vault's figure includes the disk's.
#   scripts/bench-first.sh WORK_DIR
#   VAULT=...   the vault binary (default .build/release/vault)
#   BENCH_FIRST_MANY=500000   0 skips the many-files figure
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
work=$1/first
VAULT=${VAULT:-$PWD/.build/release/vault}
export VAULT_ALLOW_WEAK_KDF=1
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"

mkdir -p "$work/small" "$work/mixed"
cp -a --parents /usr/share/doc /usr/share/man /usr/share/perl /usr/share/perl5 \
    /usr/lib/x86_64-linux-gnu/perl /usr/lib/x86_64-linux-gnu/perl-base "$work/small" 2>/dev/null || true
cp -a --parents /usr/share /usr/lib/x86_64-linux-gnu "$work/mixed" 2>/dev/null || true
{ head -c 512M /dev/urandom; head -c 512M /dev/zero; } > "$work/mixed/disk.img"

# vault_first DIR: seconds of a first backup of DIR into a fresh vault.
vault_first() {
    rm -rf "$work/v"
    "$VAULT" --password-file "$pw" --vault "$work/v" init --kdf-memory 64 --kdf-passes 1 >/dev/null 2>&1
    sync
    local t0; t0=$(now)
    "$VAULT" --vault "$work/v" backup "$1" >/dev/null 2>&1
    printf '%.3f' "$(echo "$(now) - $t0" | bc -l)"
}
floor() {
    sync
    local t0; t0=$(now)
    tar -cf - "$1" 2>/dev/null | zstd -3 -T0 -q > /dev/null
    printf '%.3f' "$(echo "$(now) - $t0" | bc -l)"
}

echo
echo "first backup against tar | zstd -3 -T0 > /dev/null (median of 3, alternated):"
for tree in small mixed; do
    dir=$work/$tree
    files=$(find "$dir" -type f | wc -l) bytes=$(du -sb "$dir" | cut -f1)
    tv=() tf=()
    for round in 1 2 3; do
        if [ $((round % 2)) = 1 ]; then tv+=("$(vault_first "$dir")"); tf+=("$(floor "$dir")")
        else tf+=("$(floor "$dir")"); tv+=("$(vault_first "$dir")"); fi
    done
    v=$(median "${tv[@]}") f=$(median "${tf[@]}")
    printf '  %s (%s files, %s MB): vault backup %.3f s, tar | zstd %.3f s: %sx (goal <= 1.05)\n' \
        "$tree" "$files" "$((bytes / 1000000))" "$v" "$f" "$(ratio "$v" "$f")"
done
rm -rf "$work/v"

many=${BENCH_FIRST_MANY:-500000}
if [ "$many" -gt 0 ] && command -v restic >/dev/null; then
    rm -rf "$work/small" "$work/mixed"
    python3 - "$work/many" "$many" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(45)
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 500))
    if i % 500 == 0:
        os.makedirs(d)
    size = random.randint(100, 3000)
    with open(os.path.join(d, "f%04d" % (i % 500)), "wb") as f:
        f.write((b"vault restic many small files %d " % i) * (size // 40) + os.urandom(size % 40))
PY
    export RESTIC_PASSWORD=bench RESTIC_CACHE_DIR=$work/restic-cache
    restic_first() {
        rm -rf "$work/r" "$RESTIC_CACHE_DIR"; restic init -q -r "$work/r" >/dev/null
        sync
        local t0; t0=$(now)
        restic -r "$work/r" backup -q "$work/many" >/dev/null 2>&1
        printf '%.3f' "$(echo "$(now) - $t0" | bc -l)"
    }
    tv=() tr=()
    for round in 1 2 3; do
        if [ $((round % 2)) = 1 ]; then tv+=("$(vault_first "$work/many")"); tr+=("$(restic_first)")
        else tr+=("$(restic_first)"); tv+=("$(vault_first "$work/many")"); fi
    done
    v=$(median "${tv[@]}") r=$(median "${tr[@]}")
    printf '  %s small files: vault backup %.3f s, restic backup %.3f s: %sx (goal <= 0.8)\n' "$many" "$v" "$r" "$(ratio "$v" "$r")"
    rm -rf "$work/many" "$work/r" "$work/v"
fi
