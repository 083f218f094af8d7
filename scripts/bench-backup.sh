#!/bin/sh
# `make bench-backup`: vault backup against restic on the same data in the
# same run (issue 26's goals, smaller): a tree of small text files and a
# large random file; then BENCH_DAYS "days" (50 files edited, 5 deleted,
# 10 added, 1 MiB appended to the large file); a copy of the large file
# under a second name; 1 MiB appended alone; a folder of 10,000 small files;
# restore and dump; and a day's push (vault push to a local rclone remote
# against restic copy to a second repository). Prints times, sizes and
# ratios (vault / restic; lower is better for vault).
#   BENCH_DIR (default: a fresh temporary directory), BENCH_FILES (10000),
#   BENCH_BIG_MIB (256), BENCH_DAYS (5); VAULT (default .build/release/vault).
set -eu
VAULT=${VAULT:-$(pwd)/.build/release/vault}
command -v restic >/dev/null || { echo "bench-backup: restic is not installed (apt-get install restic)"; exit 1; }
dir=${BENCH_DIR:-$(mktemp -d /tmp/vault-bench-backup.XXXXXX)}
files=${BENCH_FILES:-10000}
big=${BENCH_BIG_MIB:-256}
days=${BENCH_DAYS:-5}
cd "$dir"
export HOME="$dir" XDG_CACHE_HOME="$dir/cache" VAULT_ALLOW_WEAK_KDF=1 RESTIC_PASSWORD=bench RESTIC_CACHE_DIR="$dir/rcache"
python3 - "$files" "$big" <<'PY'
import os, random, sys
n, big = int(sys.argv[1]), int(sys.argv[2])
random.seed(26)
words = ["vault", "backup", "piece", "pack", "tree", "snapshot"]
def text(k):
    return " ".join(random.choice(words) for _ in range(k)).encode()
for i in range(n):
    d = "data/d%03d" % (i // 1000)
    os.makedirs(d, exist_ok=True)
    with open("%s/f%05d.txt" % (d, i), "wb") as f:
        f.write(text(random.randint(5, 800)))
with open("data/big.bin", "wb") as f:
    f.write(os.urandom(big << 20))
for i in range(10000):
    d = "small/s%02d" % (i // 500)
    os.makedirs(d, exist_ok=True)
    with open("%s/f%05d.txt" % (d, i), "wb") as f:
        f.write(text(random.randint(100, 2000)))
PY
printf 'bench password\n' > pw; printf 'bench\n' > rpw; chmod 600 pw rpw
V() { "$VAULT" --vault v "$@"; }
V --password-file pw init --kdf-memory 64 --kdf-passes 3 2>/dev/null
restic init -r r -q
# The push reference: a second repository with the same chunker, filled by restic copy.
restic init -r r2 -q --copy-chunker-params --from-repo r --from-password-file rpw
mkdir remote; V --password-file pw remote add usb "$dir/remote" >/dev/null 2>&1
secs() { s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "scale=2; ($e - $s) / 1" | bc; }
size() { du -sb "$1" | cut -f1; }
mb() { echo "scale=2; $1 / 1000000" | bc; }
row() { printf '%-38s %10s %10s %7s\n' "$1" "$2" "$3" "$(echo "scale=2; $2 / $3" | bc 2>/dev/null || echo -)"; }
absorb() { V --password-file pw snapshots >/dev/null 2>&1; }
growth() {   # a backup of data by each; what each repository grew by
  v0=$(size v); r0=$(size r)
  "$VAULT" --vault v backup data >/dev/null 2>&1; absorb
  restic -r r backup data >/dev/null 2>&1
  row "$1 (MB)" "$(mb $(( $(size v) - v0 )))" "$(mb $(( $(size r) - r0 )))"
}
day() {
  python3 - "$1" <<'PY'
import os, random, sys
random.seed(1000 + int(sys.argv[1]))
names = sorted(os.path.join(d, f) for d, _, fs in os.walk("data") for f in fs if f.endswith(".txt"))
for p in random.sample(names, 50):
    with open(p, "ab") as f: f.write(b" edited")
for p in random.sample(names, 5): os.remove(p)
for i in range(10):
    with open("data/d000/new-%s-%d.txt" % (sys.argv[1], i), "wb") as f: f.write(b"new " * random.randint(10, 500))
with open("data/big.bin", "ab") as f: f.write(os.urandom(1 << 20))
PY
}
printf '%-38s %10s %10s %7s\n' "" vault restic ratio
row "first backup (s)" "$(secs "$VAULT" --vault v backup data)" "$(secs restic -r r backup data)"
absorb
row "repository after it (MB)" "$(mb $(size v))" "$(mb $(size r))"
row "nothing changed (s)" "$(secs "$VAULT" --vault v backup data)" "$(secs restic -r r backup data)"
absorb
# The push reference: both copies in step before the measured day.
V --password-file pw push usb >/dev/null 2>&1; restic -r r2 copy -q --from-repo r --from-password-file rpw >/dev/null 2>&1
vt=0; rt=0; v0=$(size v); r0=$(size r)
for d in $(seq 1 "$days"); do
  day "$d"
  vt=$(echo "$vt + $(secs "$VAULT" --vault v backup data)" | bc); absorb
  rt=$(echo "$rt + $(secs restic -r r backup data)" | bc)
  if [ "$d" = 1 ]; then
    pv=$(V --password-file pw push usb --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')
    c0=$(size r2)
    restic -r r2 copy -q --from-repo r --from-password-file rpw >/dev/null 2>&1
    row "a day's push (MB; restic copy growth)" "$(mb "$pv")" "$(mb $(( $(size r2) - c0 )))"
  fi
done
row "a day, average (s)" "$(echo "scale=2; $vt / $days" | bc)" "$(echo "scale=2; $rt / $days" | bc)"
row "growth per day, average (MB)" "$(mb $(( ($(size v) - v0) / days )))" "$(mb $(( ($(size r) - r0) / days )))"
row "repository after $days days (MB)" "$(mb $(size v))" "$(mb $(size r))"
cp data/big.bin data/big-copy.bin
growth "the big file under a second name"
rm data/big-copy.bin
head -c 1048576 /dev/urandom >> data/big.bin
growth "1 MiB appended to the big file"
rm -rf out1 out2
row "whole restore (s)" "$(secs V --password-file pw snapshots restore latest --to out1)" "$(secs restic -r r restore latest --target out2)"
f=$(cd data && find . -name '*.txt' | sort | head -1 | cut -c3-)
row "one small file, dump (s)" "$(secs V --password-file pw snapshots dump latest "data/$f")" "$(secs restic -r r dump latest "/data/$f")"
row "the big file, dump (s)" "$(secs V --password-file pw snapshots dump latest data/big.bin)" "$(secs restic -r r dump latest /data/big.bin)"
row "10,000 small files, first (s)" "$(secs "$VAULT" --vault v backup small)" "$(secs restic -r r backup small)"
absorb
row "repository before the prune (MB)" "$(mb $(size v))" "$(mb $(size r))"
# Forget all but each group's newest and prune: vault deletes unused packs
# and rewrites those at least half unused; restic repacks to its default 5%.
row "forget all but the last, prune (s)" "$(secs V --password-file pw snapshots forget --keep-last 1 --prune)" "$(secs restic -r r forget --keep-last 1 --prune)"
row "repository after the prune (MB)" "$(mb $(size v))" "$(mb $(size r))"
diff -r --no-dereference out1/data data >/dev/null && echo "restored tree identical: yes" || echo "restored tree identical: NO"
echo "(data in $dir)"
