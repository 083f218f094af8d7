#!/usr/bin/env bash
# make bench: measures vault against references run in the same session
# (openssl speed, age, cp), and prints each figure as a ratio, because these
# shared VMs are too noisy for absolute numbers. Each timing is the best of 3.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=.build/release/vault-bench
SIZE_MIB=${BENCH_SIZE_MIB:-1024}
work=$(mktemp -d /var/tmp/vault-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
# best_of CMD...: runs CMD 3 times, prints the fastest wall time in seconds.
best_of() {
    local best=999999 t0 t1 t
    for _ in 1 2 3; do
        t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
        t=$(echo "$t1 - $t0" | bc -l)
        best=$(echo "if ($t < $best) $t else $best" | bc -l)
    done
    printf '%.3f' "$best"
}
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }

echo "vault bench: $SIZE_MIB MiB of random data in $work ($(nproc) cores)"
head -c "${SIZE_MIB}M" /dev/urandom > "$work/in"
cat "$work/in" > /dev/null

# Reference: OpenSSL's own AES-256-GCM speed on 1 MiB buffers, one core.
ossl_kbs=$(openssl speed -evp aes-256-gcm -bytes 1048576 -seconds 3 2>/dev/null | awk '/^AES-256-GCM/ {print $2}' | tr -d k)
ossl_s=$(echo "$SIZE_MIB * 1048576 / ($ossl_kbs * 1000)" | bc -l)
printf 'openssl speed aes-256-gcm (1 core): %.0f MB/s\n' "$(echo "$ossl_kbs / 1000" | bc -l)"

"$BENCH" item-encrypt "$work/in" "$work/item" >/dev/null   # leaves item + key for decrypt
enc_null=$(best_of "$BENCH" item-encrypt "$work/in" /dev/null)
dec_null=$(best_of "$BENCH" item-decrypt "$work/item" /dev/null)
enc_file=$(best_of sh -c "rm -f '$work/item2'; '$BENCH' item-encrypt '$work/in' '$work/item2'")
dec_file=$(best_of sh -c "rm -f '$work/out'; '$BENCH' item-decrypt '$work/item' '$work/out'")
cp_file=$(best_of sh -c "rm -f '$work/cp'; cp '$work/in' '$work/cp'")
enc1=$(VAULT_BENCH_THREADS=1 best_of "$BENCH" item-encrypt "$work/in" /dev/null)

echo
echo "item cipher, page cache -> nowhere (throughput as a fraction of openssl speed; higher is better):"
printf '  encrypt 2 threads %.3f s  = %sx openssl   (1 thread: %.3f s = %sx)\n' "$enc_null" "$(ratio "$ossl_s" "$enc_null")" "$enc1" "$(ratio "$ossl_s" "$enc1")"
printf '  decrypt 2 threads %.3f s  = %sx openssl\n' "$dec_null" "$(ratio "$ossl_s" "$dec_null")"
echo "item cipher, page cache -> new file (time as a multiple of cp; lower is better):"
printf '  encrypt %.3f s = %sx cp (%.3f s);  decrypt %.3f s = %sx cp\n' "$enc_file" "$(ratio "$enc_file" "$cp_file")" "$cp_file" "$dec_file" "$(ratio "$dec_file" "$cp_file")"

if command -v age >/dev/null && command -v age-keygen >/dev/null; then
    rm -f "$work/age.key"; age-keygen -o "$work/age.key" 2>/dev/null
    recip=$(age-keygen -y "$work/age.key")
    age_enc=$(best_of sh -c "rm -f '$work/age.out'; age -r '$recip' -o '$work/age.out' '$work/in'")
    age_dec=$(best_of age -d -i "$work/age.key" -o /dev/null "$work/age.out")
    echo "against age (same file, same disk; time ratio, lower is better):"
    printf '  encrypt to file: vault %.3f s, age %.3f s = %sx\n' "$enc_file" "$age_enc" "$(ratio "$enc_file" "$age_enc")"
    printf '  decrypt to /dev/null: vault %.3f s, age %.3f s = %sx\n' "$dec_null" "$age_dec" "$(ratio "$dec_null" "$age_dec")"
else
    echo "age not installed (make deps installs it): skipping the age comparison"
fi

echo
echo "Argon2id (best of 3):"
"$BENCH" argon2 64 3 | sed 's/^/  /'
echo
echo "memory stays flat (4 GiB through the item cipher):"
"$BENCH" stream-rss 4 | sed 's/^/  /'
scripts/bench-vault.sh "$work"
rm -f "$work"/in* "$work"/item* "$work"/out
echo
scripts/bench-zstd.sh "$work/zstd"
scripts/bench-first.sh "$work"
echo
scripts/bench-xz.sh "$work/xz"
scripts/bench-move.sh "$work"
scripts/bench-many.sh "$work"
echo
scripts/bench-days.sh "$work"
scripts/bench-remote.sh "$work"
scripts/bench-thin.sh "$work"
scripts/bench-mount.sh "$work"
echo
scripts/bench-pq.sh
echo
# The scale run (100,000 items + 30,000 drop-ins as a non-root user with an
# 8 MiB memlock limit) takes several minutes; BENCH_SCALE=0 skips it.
if [ "${BENCH_SCALE:-1}" != 0 ]; then
    scripts/bench-scale.sh
    echo
    scripts/bench-backup-scale.sh
else
    echo "scale: skipped (BENCH_SCALE=0)"
fi
echo
# vault backup against restic on the same data (issue 26's goals; also
# `make bench-backup` alone).
scripts/bench-backup.sh
