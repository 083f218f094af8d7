#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory): the
# first backup against its floor, `tar -cf - DIR | zstd -3 -T0 > /dev/null`
# (read every file, compress on every core, store nothing), on two trees
# copied from this machine (issue 45):
#   - small: its documentation, manual pages and perl libraries (mostly
#     small files);
#   - mixed: its shared data and libraries plus a 1 GiB disk image (half
#     random, half zeros).
# Each: median of 3, order alternated, each run after a sync, a fresh
# vault each time. vault also writes and fsyncs what it stores; the floor
# writes nothing, so on a slow disk vault's figure includes the disk's.
#   scripts/bench-first.sh WORK_DIR
#   VAULT=...   the vault binary (default .build/release/vault)
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
