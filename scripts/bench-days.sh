#!/usr/bin/env bash
# make bench, a long history (issue 45): BENCH_DAYS_FILES small files
# (50,000) backed up on BENCH_DAYS (40) days, 3 % of them changed each day,
# by vault and by restic side by side; then the newest snapshot is restored
# whole by each, alternating, 3 times, into a fresh ext4 file system (as
# root: one that had files deleted a moment ago makes ext4's inode
# allocator crawl for both). The newest of many snapshots reads its pieces
# from a pack per day that changed something, which is what this measures.
# Last, the backup after a prune: all but the newest 10 forgotten and
# pruned by each, then one more day backed up; what that day stored
# against a normal day's, and the share of each repository the prune freed.
# Usage: scripts/bench-days.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath .build/release/vault)
FILES=${BENCH_DAYS_FILES:-50000}
DAYS=${BENCH_DAYS:-40}
base=${1:-/var/tmp}
# BENCH_DAYS_REUSE=DIR: the restores only, of a directory an earlier run kept (BENCH_DAYS_KEEP=1).
work=${BENCH_DAYS_REUSE:-$(mktemp -d "$base/vault-days.XXXXXX")}
cleanup() { mountpoint -q "$work/out" 2>/dev/null && umount "$work/out"; [ -n "${BENCH_DAYS_KEEP:-}" ] && echo "  kept $work" || rm -rf "$work"; }
trap cleanup EXIT
command -v restic >/dev/null || { echo "restic not installed (make deps): skipping the long-history restore"; exit 0; }

export RESTIC_PASSWORD=bench VAULT_ALLOW_WEAK_KDF=1
echo "long history: $FILES files, $DAYS daily backups, 3 % changed a day ($(nproc) cores)"
change() {   # change DAY: day DAY's files (all on day 0, 3 % after)
    python3 - "$work/tree" "$FILES" "$1" <<'PY'
import os, random, sys
root, n, day = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def path(i):
    return "%s/d%03d/e%02d/f%07d" % (root, i % 200, (i // 200) % 10, i)
def content(i, v):
    r = random.Random(i * 7919 + v)
    size = int(r.expovariate(1 / 4000)) + 10
    if i % 2:   # half random, half text
        return r.randbytes(min(size, 20000))
    words = [b"alpha", b"beta", b"gamma", b"delta", str(i).encode(), str(v).encode()]
    out = bytearray()
    while len(out) < size:
        out += r.choice(words) + b" "
    return bytes(out[:size])
if day == 0:
    changed = range(n)
else:
    r = random.Random(1000 + day)
    changed = [r.randrange(n) for _ in range(n * 3 // 100)]
for i in changed:
    os.makedirs(os.path.dirname(path(i)), exist_ok=True)
    with open(path(i), "wb") as f:
        f.write(content(i, day))
PY
}
added() {   # added vault|restic: what the backup just run stored, in bytes (its JSON's last line)
    if [ "$1" = vault ]; then python3 -c 'import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])["bytes_stored"])' <"$work/json"
    else python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin if "summary" in l][-1]["data_added"])' <"$work/json"; fi
}
if [ -z "${BENCH_DAYS_REUSE:-}" ]; then
printf 'long history bench\n' > "$work/pw"; chmod 600 "$work/pw"
"$BIN" --vault "$work/v" --password-file "$work/pw" init --kdf-memory 1 --kdf-passes 1 >/dev/null 2>&1
restic init -r "$work/restic" -q
: >"$work/days-added"
for day in $(seq 0 $((DAYS - 1))); do
    change "$day"
    "$BIN" --vault "$work/v" backup --json "$work/tree" >"$work/json" 2>/dev/null; vday=$(added vault)
    restic -r "$work/restic" backup --json "$work/tree" >"$work/json"; rday=$(added restic)
    [ "$day" -ge $((DAYS - 5)) ] && echo "$vday $rday" >>"$work/days-added"
done
# A normal day: the median of the last five days' (days differ by 30 %).
mid=$(( ($(wc -l <"$work/days-added") + 1) / 2 ))
echo "$(cut -d' ' -f1 "$work/days-added" | sort -n | sed -n ${mid}p) $(cut -d' ' -f2 "$work/days-added" | sort -n | sed -n ${mid}p)" >"$work/normal-day"
fi
printf '  repository: vault %s, restic %s\n' "$(du -sh "$work/v" | cut -f1)" "$(du -sh "$work/restic" | cut -f1)"

rm -rf "$work/out" "$work/fs.img"; mkdir "$work/out"   # (a reused directory: the last run's restores go)
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null; then
    truncate -s 16G "$work/fs.img"
    mkfs.ext4 -q -i 4096 "$work/fs.img"   # 4 M inodes: six restores of the tree
    mount -o loop "$work/fs.img" "$work/out"
else
    echo "  (not root: restoring into $work/out, on whatever file system that is)"
fi
now() { date +%s.%N; }
declare -a tv tr
run() {   # run vault|restic K: one whole restore of the newest snapshot into out/K: seconds, seconds with a sync after, peak MiB
    local k=$2
    mkdir "$work/out/$k"; sync
    local t0 t1 t2
    t0=$(now)
    if [ "$1" = vault ]; then
        cmd=("$BIN" --vault "$work/v" --password-file "$work/pw" snapshots restore latest --to "$work/out/$k")
    else
        cmd=(restic -r "$work/restic" restore latest --target "$work/out/$k" -q)
    fi
    if ! /usr/bin/time -f '%M' -o "$work/rss" "${cmd[@]}" >/dev/null 2>"$work/err"; then
        echo "  $1's restore FAILED:" >&2; tail -5 "$work/err" >&2; return 1
    fi
    t1=$(now); sync; t2=$(now)
    printf '%.3f %.3f %d' "$(echo "$t1 - $t0" | bc -l)" "$(echo "$t2 - $t0" | bc -l)" "$(($(cat "$work/rss") / 1024))"
}
set +e
for i in 1 2 3; do
    # vault's restores go to out/1, 3, 5; restic's to out/2, 4, 6; the order alternates.
    if [ $((i % 2)) = 1 ]; then tv[$i]=$(run vault $((2 * i - 1))); tr[$i]=$(run restic $((2 * i)))
    else tr[$i]=$(run restic $((2 * i))); tv[$i]=$(run vault $((2 * i - 1))); fi
done
set -e
for i in 1 2 3; do [ -n "${tv[$i]:-}" ] && [ -n "${tr[$i]:-}" ] || exit 1; done
field() { echo "$1" | cut -d' ' -f"$2"; }
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
for f in 1 2; do
    v=$(median "$(field "${tv[1]}" $f)" "$(field "${tv[2]}" $f)" "$(field "${tv[3]}" $f)")
    r=$(median "$(field "${tr[1]}" $f)" "$(field "${tr[2]}" $f)" "$(field "${tr[3]}" $f)")
    what=$([ $f = 1 ] && echo "as each exits" || echo "with a sync after (restic does not sync; vault does, as it writes)")
    printf '  restore the newest snapshot, %s: vault %.2f s, restic %.2f s = %.2fx (median of 3; goal <= 1.0x)\n' \
        "$what" "$v" "$r" "$(echo "$v / $r" | bc -l)"
done
printf '  peak RSS: vault %s MiB, restic %s MiB\n' "$(field "${tv[1]}" 3)" "$(field "${tr[1]}" 3)"
if diff -r "$work/out/1/tree" "$work/out/2$work/tree" >/dev/null; then echo "  the two restores are equal"; else echo "  the restores DIFFER"; exit 1; fi

# The backup after a prune (issue 45): all but the newest 10 snapshots
# forgotten and pruned at once by each (vault: --grace 0; restic prunes at
# once), then one more day's change backed up. A normal day is the median
# of the history's last five; what the prune freed is each repository's share.
# A reused directory is for the restores only: its history is kept as it is.
[ -n "${BENCH_DAYS_REUSE:-}" ] && exit 0
read -r vday rday <"$work/normal-day"
vb=$(du -sb "$work/v" | cut -f1); rb=$(du -sb "$work/restic" | cut -f1)
"$BIN" --vault "$work/v" --password-file "$work/pw" snapshots forget --keep-last 10 --prune --grace 0 >/dev/null 2>&1
restic -r "$work/restic" forget --keep-last 10 --prune -q >/dev/null
va=$(du -sb "$work/v" | cut -f1); ra=$(du -sb "$work/restic" | cut -f1)
change "$DAYS"
"$BIN" --vault "$work/v" backup --json "$work/tree" >"$work/json" 2>/dev/null; vnext=$(added vault)
restic -r "$work/restic" backup --json "$work/tree" >"$work/json"; rnext=$(added restic)
mib() { printf '%.1f' "$(echo "$1 / 1048576" | bc -l)"; }
printf '  the backup after forget --keep-last 10 --prune: vault stored %s MiB = %.2fx its normal day (%s MiB; goal <= 1.5x), restic %s MiB = %.2fx (%s MiB)\n' \
    "$(mib "$vnext")" "$(echo "$vnext / $vday" | bc -l)" "$(mib "$vday")" "$(mib "$rnext")" "$(echo "$rnext / $rday" | bc -l)" "$(mib "$rday")"
printf '  what that prune freed: vault %s -> %s MiB (-%.1f %%), restic %s -> %s MiB (-%.1f %%) (goal: at least restic'"'"'s share)\n' \
    "$(mib "$vb")" "$(mib "$va")" "$(echo "100 * ($vb - $va) / $vb" | bc -l)" "$(mib "$rb")" "$(mib "$ra")" "$(echo "100 * ($rb - $ra) / $rb" | bc -l)"
