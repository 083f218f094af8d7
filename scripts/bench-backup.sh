#!/bin/sh
# `make bench-backup`: vault backup against restic on the same data in the
# same run (issue 26's table, smaller): a tree of small files and a large
# random file, then one "day" (files edited, 1 MiB appended, a 32 MiB file
# under two names). Prints times, repository sizes and ratios.
#   BENCH_DIR (default: a fresh temporary directory), BENCH_FILES (10000),
#   BENCH_BIG_MIB (256); VAULT (default .build/release/vault).
set -eu
VAULT=${VAULT:-$(pwd)/.build/release/vault}
command -v restic >/dev/null || { echo "bench-backup: restic is not installed (apt-get install restic)"; exit 1; }
dir=${BENCH_DIR:-$(mktemp -d /tmp/vault-bench-backup.XXXXXX)}
files=${BENCH_FILES:-10000}
big=${BENCH_BIG_MIB:-256}
cd "$dir"
export HOME="$dir" XDG_CACHE_HOME="$dir/cache" VAULT_ALLOW_WEAK_KDF=1 RESTIC_PASSWORD=bench RESTIC_CACHE_DIR="$dir/rcache"
python3 - "$files" "$big" <<'PY'
import os, random, sys
n, big = int(sys.argv[1]), int(sys.argv[2])
random.seed(26)
for i in range(n):
    d = "data/d%03d" % (i // 1000)
    os.makedirs(d, exist_ok=True)
    with open("%s/f%05d.txt" % (d, i), "wb") as f:
        f.write((" ".join(random.choice(["vault", "backup", "piece", "pack", "tree", "snapshot"]) for _ in range(random.randint(5, 800)))).encode())
with open("data/big.bin", "wb") as f:
    f.write(os.urandom(big << 20))
PY
printf 'bench password\n' > pw; chmod 600 pw
"$VAULT" --vault v --password-file pw init --kdf-memory 64 --kdf-passes 3 2>/dev/null
restic init -r r -q
secs() { s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "scale=2; ($e - $s) / 1" | bc; }
size() { du -sb "$1" | cut -f1; }
row() { printf '%-34s %10s %10s %7s\n' "$1" "$2" "$3" "$(echo "scale=2; $2 / $3" | bc 2>/dev/null || echo -)"; }
absorb() { "$VAULT" --vault v --password-file pw snapshots; }
printf '%-34s %10s %10s %7s\n' "" vault restic ratio
row "first backup (s)" "$(secs "$VAULT" --vault v backup data)" "$(secs restic -r r backup data)"
absorb >/dev/null 2>&1
row "repository after it (MB)" "$(( $(size v) / 1000000 ))" "$(( $(size r) / 1000000 ))"
row "nothing changed (s)" "$(secs "$VAULT" --vault v backup data)" "$(secs restic -r r backup data)"
for f in $(find data -name '*.txt' | head -50); do echo edit >> "$f"; done
head -c 1048576 /dev/urandom >> data/big.bin
head -c 33554432 /dev/urandom > data/dup1.bin; cp data/dup1.bin data/dup2.bin
v0=$(size v); r0=$(size r)
row "a day (s)" "$(secs "$VAULT" --vault v backup data)" "$(secs restic -r r backup data)"
absorb >/dev/null 2>&1
row "growth in a day (MB)" "$(( ($(size v) - v0) / 1000000 ))" "$(( ($(size r) - r0) / 1000000 ))"
rm -rf out1 out2
row "whole restore (s)" "$(secs "$VAULT" --vault v --password-file pw snapshots restore latest --to out1)" "$(secs restic -r r restore latest --target out2)"
row "one small file, dump (s)" "$(secs "$VAULT" --vault v --password-file pw snapshots dump latest data/d000/f00000.txt)" "$(secs restic -r r dump latest /data/d000/f00000.txt)"
row "the big file, dump (s)" "$(secs "$VAULT" --vault v --password-file pw snapshots dump latest data/big.bin)" "$(secs restic -r r dump latest /data/big.bin)"
diff -r --no-dereference out1/data data >/dev/null && echo "restored tree identical: yes" || echo "restored tree identical: NO"
echo "(data in $dir)"
