#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for a bounded time each, from a seed
# corpus written by the independent reference implementation.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; seconds=${2:-60}
corpus=.build/fuzz-corpus
mkdir -p "$corpus/item"
ref=scripts/reference/vault_item.py
k=$(printf '00%.0s' {1..32}); id=$(printf 'a0%.0s' {1..16}); np=$(printf 'c0%.0s' {1..8})
printf '' | python3 $ref seal $k $id $np 0 > "$corpus/item/empty"
printf 'hello, vault' | python3 $ref seal $k $id $np 1 > "$corpus/item/hello"
head -c 1100000 /dev/zero | python3 $ref seal $k $id $np 2 > "$corpus/item/two-chunks"
for target in item; do
    echo "fuzzing $target for $seconds s"
    "$dir/fuzz-$target" "$corpus/$target" -max_total_time="$seconds" -max_len=2200000 \
        -rss_limit_mb=4096 -print_final_stats=1 2>&1 | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|crash' || true
    if ls crash-* leak-* 2>/dev/null | grep -q .; then echo "fuzz: findings written (crash-*)"; exit 1; fi
done
