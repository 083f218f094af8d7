#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory): where
# users wait on many files, against restic on the same data in the same run
# (issue 28's goals). Each figure is the median of 3, vault and restic
# alternating, on data made here:
#   - `vault add` of many small files + the absorb at the next `vault list`
#     vs `restic backup` of them (goal: <= 2.0x its time)
#   - a tree of ~50 KB files restored, as a folder item (`vault restore`)
#     and from a backup snapshot (`vault snapshots restore`), vs `restic
#     restore` of it (goal: <= 1.0x its time)
#
#   scripts/bench-many.sh WORK_DIR
#   BENCH_MANY_FILES=5000   small files (~6.9 KB each; the issue's figure is 10000)
#   BENCH_TREE_MIB=200      the restored tree's size (the issue's figure is 1060)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1/many
VAULT=${VAULT:-$PWD/.build/release/vault}
FILES=${BENCH_MANY_FILES:-5000}
TREE_MIB=${BENCH_TREE_MIB:-200}
command -v restic >/dev/null || { echo; echo "restic not installed (make deps installs it): skipping the many-files bench"; exit 0; }
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
export VAULT_ALLOW_WEAK_KDF=1 RESTIC_PASSWORD=bench RESTIC_CACHE_DIR=$work/restic-cache
pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"
now() { date +%s.%N; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
# timed CMD...: wall seconds of one run.
timed() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
fresh_vault() { rm -rf "$1"; "$VAULT" --vault "$1" --password-file "$pw" init --kdf-memory 8 --kdf-passes 1 >/dev/null 2>&1; }

# Small files: half text (compressible, mail-like), half random.
python3 - "$work/small" "$FILES" <<'EOF'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2]); os.makedirs(d)
r = random.Random(28); words = [b'mail', b'from', b'the', b'vault', b'subject', b'regards', b'meeting', b'2026']
for i in range(n):
    size = 3450 + (i * 7919) % 6900
    data = os.urandom(size) if i % 2 else b' '.join(r.choice(words) for _ in range(size // 5))[:size]
    open(os.path.join(d, 'm%05d' % i), 'wb').write(data)
EOF
echo
echo "many files against restic (median of 3, alternating; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)):"
# Each run with a state directory (and HOME) of its own: the rollback memory
# of earlier runs' vaults would otherwise grow from run to run.
vault_small() {
    local a l
    rm -rf "$work/state"; mkdir -p "$work/state/home"
    (
        export XDG_STATE_HOME=$work/state HOME=$work/state/home
        fresh_vault "$work/v"
        a=$(cd "$work/small" && timed "$VAULT" --vault "$work/v" add m*)
        l=$(timed "$VAULT" --vault "$work/v" --password-file "$pw" list)
        echo "$a + $l" | bc -l
    )
}
restic_small() { rm -rf "$work/r"; restic init -r "$work/r" >/dev/null 2>&1; (cd "$work/small" && timed restic -r "$work/r" backup .); }
va=() ra=()
for i in 1 2 3; do
    if [ $((i % 2)) = 1 ]; then va+=("$(vault_small)"); ra+=("$(restic_small)"); else ra+=("$(restic_small)"); va+=("$(vault_small)"); fi
done
v_t=$(median3 "${va[@]}") r_t=$(median3 "${ra[@]}")
printf '  add %s small files + absorb: vault %.2f s, restic backup %.2f s = %sx its time (goal <= 2.0)\n' \
    "$FILES" "$v_t" "$r_t" "$(ratio "$v_t" "$r_t")"
# The same files back out: one item each (`vault restore '*'`) and from restic's snapshot.
vault_out() { rm -rf "$work/out"; timed "$VAULT" --vault "$work/v" --password-file "$pw" restore '*' --to "$work/out"; }
restic_out() { rm -rf "$work/out"; timed restic -r "$work/r" restore latest --target "$work/out"; }
va=() ra=()
for i in 1 2 3; do
    if [ $((i % 2)) = 1 ]; then va+=("$(vault_out)"); ra+=("$(restic_out)"); else ra+=("$(restic_out)"); va+=("$(vault_out)"); fi
done
v_t=$(median3 "${va[@]}") r_t=$(median3 "${ra[@]}")
printf '  restore of those %s items: vault %.2f s, restic restore %.2f s = %sx its time (goal <= 1.0)\n' \
    "$FILES" "$v_t" "$r_t" "$(ratio "$v_t" "$r_t")"
rm -rf "$work/v" "$work/r" "$work/small" "$work/out"

# A tree of ~50 KB files (the issue's 1.06 GB / 21,466 files), half text.
python3 - "$work/tree" "$TREE_MIB" <<'EOF2'
import os, random, sys
d, mib = sys.argv[1], int(sys.argv[2]); r = random.Random(28)
total, i = 0, 0
while total < mib << 20:
    sub = os.path.join(d, 'd%03d' % (i // 200)); os.makedirs(sub, exist_ok=True)
    size = r.randint(1, 100000)
    data = os.urandom(size) if i % 2 else (b'line of text %d\n' % i) * (size // 16 + 1)
    open(os.path.join(sub, 'f%05d' % i), 'wb').write(data[:size])
    total += size; i += 1
EOF2
tree_files=$(find "$work/tree" -type f | wc -l)
fresh_vault "$work/v"
"$VAULT" --vault "$work/v" add "$work/tree" >/dev/null 2>&1
"$VAULT" --vault "$work/v" --password-file "$pw" list >/dev/null
rm -rf "$work/r"; restic init -r "$work/r" >/dev/null 2>&1; (cd "$work" && restic -r "$work/r" backup tree >/dev/null 2>&1)
vault_restore() { rm -rf "$work/out"; timed "$VAULT" --vault "$work/v" --password-file "$pw" restore tree --to "$work/out"; }
restic_restore() { rm -rf "$work/out"; timed restic -r "$work/r" restore latest --target "$work/out"; }
va=() ra=()
for i in 1 2 3; do
    if [ $((i % 2)) = 1 ]; then va+=("$(vault_restore)"); ra+=("$(restic_restore)"); else ra+=("$(restic_restore)"); va+=("$(vault_restore)"); fi
done
v_t=$(median3 "${va[@]}") r_t=$(median3 "${ra[@]}")
printf '  restore of a %s MiB tree (%s files) as a folder item: vault %.2f s, restic restore %.2f s = %sx its time (goal <= 1.0)\n' \
    "$TREE_MIB" "$tree_files" "$v_t" "$r_t" "$(ratio "$v_t" "$r_t")"
# The same tree from a backup snapshot (`vault backup`), as restic stores it.
(cd "$work" && XDG_CACHE_HOME=$work/cache "$VAULT" --vault "$work/v" backup tree >/dev/null 2>&1)
"$VAULT" --vault "$work/v" --password-file "$pw" snapshots >/dev/null 2>&1
vault_snapshot() { rm -rf "$work/out"; timed "$VAULT" --vault "$work/v" --password-file "$pw" snapshots restore latest --to "$work/out"; }
va=() ra=()
for i in 1 2 3; do
    if [ $((i % 2)) = 1 ]; then va+=("$(vault_snapshot)"); ra+=("$(restic_restore)"); else ra+=("$(restic_restore)"); va+=("$(vault_snapshot)"); fi
done
v_t=$(median3 "${va[@]}") r_t=$(median3 "${ra[@]}")
printf '  restore of that tree from a backup snapshot: vault %.2f s, restic restore %.2f s = %sx its time (goal <= 1.0)\n' \
    "$v_t" "$r_t" "$(ratio "$v_t" "$r_t")"
