#!/usr/bin/env bash
# Compression bench (issue "Compression on by default, at the speed of the
# disk"): vault's default add (zstd, raw where it does not pay) against the
# CLI tools on the same bytes in the same run, as ratios.
#
#   scripts/bench-zstd.sh [WORK_DIR]     (default: a fresh directory, removed after)
#   BENCH_ZSTD_RANDOM_MIB=1024   size of the incompressible file
#
# Data: a tar of this machine's text (headers, Python and Perl sources,
# documentation), 1 GiB of random bytes, and a home-like folder (that text
# unpacked, logs, "photos" of random bytes) for the restic comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
VAULT=$PWD/.build/release/vault
RANDOM_MIB=${BENCH_ZSTD_RANDOM_MIB:-1024}
if [ $# -ge 1 ]; then work=$1; mkdir -p "$work"; else work=$(mktemp -d /var/tmp/vault-bench-zstd.XXXXXX); trap 'rm -rf "$work"' EXIT; fi
export VAULT_ALLOW_WEAK_KDF=1 RESTIC_PASSWORD=bench-password
pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"
now() { date +%s.%N; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
# best_of CMD...: the fastest wall time of 3 runs, in seconds.
best_of() {
    local best=999999 t0 t1 t
    for _ in 1 2 3; do
        t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
        t=$(echo "$t1 - $t0" | bc -l); best=$(echo "if ($t < $best) $t else $best" | bc -l)
    done
    printf '%.3f' "$best"
}
fresh_vault() { rm -rf "$1"; "$VAULT" --vault "$1" --password-file "$pw" init --kdf-memory 8 --kdf-passes 1 >/dev/null 2>&1; }
# add_once DIR ARGS...: a fresh vault, then one add (what is timed).
add_once() { local v=$1; shift; fresh_vault "$v"; "$VAULT" --vault "$v" add "$@"; }
blob_bytes() { du -sb --apparent-size "$1"/inbox "$1"/items 2>/dev/null | awk '{s += $1} END {print s}'; }

echo "compression (zstd by default; ratios against the CLI tools, same run):"
tar -cf "$work/text.tar" /usr/include /usr/lib/python3/dist-packages /usr/share/perl /usr/share/doc 2>/dev/null || true
text_mb=$(( $(stat -c %s "$work/text.tar") / 1000000 ))
cat "$work/text.tar" > /dev/null
zstd_t=$(best_of zstd -3 -T0 -q -f "$work/text.tar" -o "$work/text.zst")
zstd_b=$(stat -c %s "$work/text.zst")
vault_t=$(best_of add_once "$work/vt" "$work/text.tar" --name text)
vault_b=$(stat -c %s "$work"/vt/inbox/*.item)
printf '  add %s MB of text: vault %.3f s, zstd -3 -T0 %.3f s = %sx its throughput; stored %s MB vs %s MB = %sx its size\n' \
    "$text_mb" "$vault_t" "$zstd_t" "$(ratio "$zstd_t" "$vault_t")" "$((vault_b / 1000000))" "$((zstd_b / 1000000))" "$(ratio "$vault_b" "$zstd_b")"
"$VAULT" --vault "$work/vt" --password-file "$pw" list >/dev/null 2>&1   # absorb, so get reads items/
get_t=$(best_of sh -c "rm -f '$work/out'; '$VAULT' --vault '$work/vt' --password-file '$pw' get text -o '$work/out'")
unzstd_t=$(best_of sh -c "rm -f '$work/out2'; zstd -d -q -f '$work/text.zst' -o '$work/out2'")
cmp -s "$work/out" "$work/text.tar" || { echo "  get of the zstd item returned other bytes"; exit 1; }
printf '  get of that item: vault %.3f s, zstd -d %.3f s = %sx its throughput\n' "$get_t" "$unzstd_t" "$(ratio "$unzstd_t" "$get_t")"
rm -rf "$work/vt" "$work/out" "$work/out2" "$work/text.zst"

head -c "${RANDOM_MIB}M" /dev/urandom > "$work/random"
export VAULT pw; export -f fresh_vault add_once
auto_t=$(best_of bash -c "add_once '$work/vr' '$work/random' --name r && sync")
off_t=$(best_of bash -c "add_once '$work/vr' '$work/random' --name r --compression off && sync")
cp_t=$(best_of sh -c "rm -f '$work/cp'; cp '$work/random' '$work/cp' && sync")
printf '  add %s MiB of random bytes (+ sync): auto %.3f s, off %.3f s = %sx; cp + sync %.3f s = %sx\n' \
    "$RANDOM_MIB" "$auto_t" "$off_t" "$(ratio "$auto_t" "$off_t")" "$cp_t" "$(ratio "$auto_t" "$cp_t")"
rm -rf "$work/vr" "$work/cp" "$work/random"

if command -v restic >/dev/null; then
    home=$work/home; mkdir -p "$home/src" "$home/logs" "$home/photos"
    tar -xf "$work/text.tar" -C "$home/src" 2>/dev/null || true
    # Log lines that never repeat whole (restic's deduplication would make
    # repeated copies free, which is its backup's job, not compression's).
    awk 'BEGIN { srand(7); for (i = 0; i < 600000; i++) printf "2026-11-%02d %02d:%02d:%02d web%d nginx[%d]: GET /api/v1/items/%d 200 %d ms\n", i % 30 + 1, i % 24, i % 60, (i * 7) % 60, i % 5, 1000 + i % 97, int(rand() * 1e6), int(rand() * 900) }' > "$home/logs/access.log"
    for i in $(seq 1 40); do head -c 3M /dev/urandom > "$home/photos/IMG_$i.jpg"; done
    home_mb=$(( $(du -sb "$home" | cut -f1) / 1000000 ))
    v_t=$(best_of add_once "$work/vh" "$home" --name home)
    v_b=$(blob_bytes "$work/vh")
    r_t=$(best_of sh -c "rm -rf '$work/restic'; restic init -q --repo '$work/restic' && restic backup -q --repo '$work/restic' '$home'")
    r_b=$(du -sb --apparent-size "$work/restic" | cut -f1)
    printf '  a home-like folder (%s MB: text, logs, photos): vault %.3f s, restic backup %.3f s = %sx its time; stored %s MB vs %s MB = %sx its size\n' \
        "$home_mb" "$v_t" "$r_t" "$(ratio "$v_t" "$r_t")" "$((v_b / 1000000))" "$((r_b / 1000000))" "$(ratio "$v_b" "$r_b")"
    rm -rf "$home" "$work/vh" "$work/restic"
else
    echo "  restic not installed (make deps installs it): skipping the home-folder comparison"
fi
rm -f "$work/text.tar"
