#!/usr/bin/env bash
# make bench, scale: a vault of SCALE_ITEMS (100,000) small items plus
# SCALE_DROPINS (30,000) waiting drop-ins, used as a non-root user whose
# RLIMIT_MEMLOCK is 8 MiB (a desktop user's default): every command must
# work, with peak RSS reported for each. Times exclude nothing: the vault
# uses a cheap Argon2id (1 MiB, 1 pass), so the KDF is ~1 ms of each.
#
# Populating uses `vault add` itself, many paths per process, under
# eatmydata (fsync made a no-op) only so that making 130,000 drop-ins does
# not take ten minutes of fsyncs; every measured command runs without it.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build/release/vault}")
ITEMS=${SCALE_ITEMS:-100000}
DROPS=${SCALE_DROPINS:-30000}

work=$(mktemp -d /var/tmp/vault-scale.XXXXXX)
trap 'rm -rf "$work"' EXIT
run_as=()
if [ "$(id -u)" = 0 ]; then
    id vaultbench >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin vaultbench
    chown vaultbench: "$work"
    chmod 0755 "$work"
    run_as=(runuser -u vaultbench --)
fi
# The user, with the memlock limit a desktop session gives.
as_user() { "${run_as[@]}" prlimit --memlock=8388608:8388608 env HOME="$work" VAULT_ALLOW_WEAK_KDF=1 "$@"; }
v() { as_user "$BIN" --vault "$work/v" --password-file "$work/pw" "$@"; }

# measure LABEL CMD...: wall seconds and peak RSS (MiB) of one run.
measure() {
    local label=$1; shift
    local out="$work/time.$$"
    if ! as_user /usr/bin/time -f '%e %M' -o "$out" "$@" > "$work/stdout" 2> "$work/stderr"; then
        echo "  $label: FAILED"; sed 's/^/    /' "$work/stderr" | head -5; return 1
    fi
    read -r secs kib < "$out"
    printf '  %-34s %7.2f s   peak RSS %4d MiB\n' "$label" "$secs" $((kib / 1024))
    last_s=$secs
}

populate() {   # populate COUNT PREFIX: COUNT small files added in batches of 5,000
    local n=$1 prefix=$2
    local dir="$work/src-$prefix"
    as_user mkdir -p "$dir"
    as_user sh -c "cd '$dir' && seq 1 $n | while read i; do printf 'item %s of the scale bench\n' \$i > $prefix\$i.txt; done"
    (cd "$dir" && ls) | sed "s|^|$dir/|" | as_user xargs -n 5000 eatmydata "$BIN" --vault "$work/v" --quiet add
    as_user rm -rf "$dir"
    sync
}

echo "vault scale: $ITEMS items + $DROPS waiting drop-ins, as $(${run_as[@]} id -un 2>/dev/null || id -un), memlock 8 MiB"
printf 'scale bench password\n' | as_user sh -c "umask 077; cat > '$work/pw'"
v init --kdf-memory 1 --kdf-passes 1 >/dev/null 2>&1
populate "$ITEMS" a
measure "absorb $ITEMS drop-ins (list)" "$BIN" --vault "$work/v" --password-file "$work/pw" list
populate "$DROPS" b
measure "absorb $DROPS drop-ins (list)" "$BIN" --vault "$work/v" --password-file "$work/pw" list
absorb_s=$last_s
total=$((ITEMS + DROPS))
measure "list $total items" "$BIN" --vault "$work/v" --password-file "$work/pw" list
list_s=$last_s
# A header line, one line per item, the totals line.
[ "$(wc -l < "$work/stdout")" = "$((total + 2))" ] || { echo "  list printed $(wc -l < "$work/stdout") lines, not $total items + 2"; exit 1; }
measure "list --json" "$BIN" --vault "$work/v" --password-file "$work/pw" list --json
measure "get one item" "$BIN" --vault "$work/v" --password-file "$work/pw" get a777.txt
grep -q "item 777 of" "$work/stdout" || { echo "  get returned the wrong bytes"; exit 1; }
measure "check --read-data" "$BIN" --vault "$work/v" --password-file "$work/pw" check --read-data
measure "kit export" "$BIN" --vault "$work/v" --password-file "$work/pw" kit export --generate --kdf-memory 1 --kdf-passes 1
measure "rekey" "$BIN" --vault "$work/v" --password-file "$work/pw" rekey --yes
rekey_s=$last_s
sync
t0=$(date +%s.%N)
as_user sh -c "cp -r '$work/v/items' '$work/items-copy' && sync"
t1=$(date +%s.%N)
cp_s=$(echo "$t1 - $t0" | bc -l)
as_user rm -rf "$work/items-copy"

# move, both ends on 127.0.0.1, the sender erasing the vault at the end.
code="$work/code"
as_user /usr/bin/time -f '%e %M' -o "$work/time.recv" "$BIN" --vault "$work/moved" --password-file "$work/pw" \
    move receive --listen 127.0.0.1:0 --code-file "$code" --no-verify > /dev/null 2> "$work/recv.err" &
recv=$!
for _ in $(seq 100); do [ -s "$code" ] && break; sleep 0.1; done
measure "move send" "$BIN" --vault "$work/v" --password-file "$work/pw" move send --code-file "$code" --yes
wait "$recv" || { echo "  move receive: FAILED"; sed 's/^/    /' "$work/recv.err" | head -5; exit 1; }
read -r rsecs rkib < "$work/time.recv"
printf '  %-34s %7.2f s   peak RSS %4d MiB\n' "move receive" "$rsecs" $((rkib / 1024))
measure "list after the move" "$BIN" --vault "$work/moved" --password-file "$work/pw" list

echo "scale summary: absorb of $DROPS drop-ins $absorb_s s; list of $total items $list_s s (goal < 1 s);"
printf '  rekey of %d items %.2f s against cp -r items + sync %.2f s = %.2fx\n' \
    "$total" "$rekey_s" "$cp_s" "$(echo "$rekey_s / $cp_s" | bc -l)"
