#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for a bounded time each, from seed
# corpora taken from docs/FORMAT.md's vectors and written by the independent
# reference implementation.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; seconds=${2:-60}
corpus=.build/fuzz-corpus
mkdir -p "$corpus"/{item,header,manifest,envelope,archive}
ref=scripts/reference/vault_item.py
k=$(printf '00%.0s' {1..32}); id=$(printf 'a0%.0s' {1..16}); np=$(printf 'c0%.0s' {1..8})
printf '' | python3 $ref seal $k $id $np 0 > "$corpus/item/empty"
printf 'hello, vault' | python3 $ref seal $k $id $np 1 > "$corpus/item/hello"
head -c 1100000 /dev/zero | python3 $ref seal $k $id $np 2 > "$corpus/item/two-chunks"
# The complete-vault vector's files, from the spec itself.
python3 - "$corpus" <<'PY'
import re, sys
doc = open("docs/FORMAT.md").read()
def block(title):
    m = re.search(re.escape(title) + r"[^\n]*\n\n((?:       [0-9a-f]+\n)+)", doc)
    return bytes.fromhex("".join(m.group(1).split()))
out = sys.argv[1]
open(out + "/header/vector", "wb").write(block("`vault.header`:"))
open(out + "/manifest/vector", "wb").write(block("`manifest` (holding the one entry):"))
open(out + "/envelope/vector", "wb").write(block("`inbox/707172737475767778797a7b7c7d7e7f.env`"))
PY
# A small folder as pax, the format folder items hold.
seed=$(mktemp -d); mkdir -p "$seed/d/sub"; echo hi > "$seed/d/a.txt"; ln -s a.txt "$seed/d/link"; echo x > "$seed/d/sub/b"
tar --format=pax -C "$seed/d" -cf "$corpus/archive/folder.pax" . ; rm -rf "$seed"
status=0
for target in item header manifest envelope archive; do
    echo "fuzzing $target for $seconds s"
    (cd "$corpus" && "$OLDPWD/$dir/fuzz-$target" "$target" -max_total_time="$seconds" -max_len=2200000 \
        -rss_limit_mb=4096 -print_final_stats=1 2>&1) | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|crash-' || true
    if ls "$corpus"/crash-* "$corpus"/leak-* "$corpus"/oom-* 2>/dev/null | grep -q .; then
        echo "fuzz: $target found an input that fails: see $corpus"; status=1
    fi
done
exit $status
