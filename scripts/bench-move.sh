#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory):
# `vault move send` -> `vault move receive` of a 1 GiB vault over 127.0.0.1,
# against socat piping the vault's item blob (all but a few hundred bytes of it) into a file + sync.
# Target: move throughput >= 0.7x socat + sync, the receiver's unlock-and-check
# excluded (and reported on its own). Each figure is the best of 3. The move
# runs the hybrid (X-Wing) handshake `move receive` makes; the handshake's own
# cost is measured apart (vault-bench move-handshake: hybrid against the
# classic X25519-only one, in the same run).
#
#   scripts/bench-move.sh WORK_DIR
#   BENCH_SIZE_MIB=1024   size of the vault's one item (as bench.sh)
#   VAULT=...             the vault binary (default .build/release/vault)
#   VAULT_BENCH=...       vault-bench (default .build/release/vault-bench)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
work=$1/move
VAULT=${VAULT:-$PWD/.build/release/vault}
VAULT_BENCH=${VAULT_BENCH:-$PWD/.build/release/vault-bench}
SIZE_MIB=${BENCH_SIZE_MIB:-1024}
export VAULT_ALLOW_WEAK_KDF=1
command -v socat >/dev/null || { echo; echo "socat not installed (make deps installs it): skipping the move bench"; exit 0; }
rm -rf "$work"; mkdir -p "$work"
trap 'stop_receiver; rm -rf "$work"' EXIT
pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"
src=$work/src dst=$work/dst
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
min() { echo "if ($1 < $2) $1 else $2" | bc -l; }
mbs() { printf '%.0f' "$(echo "$1 / $2 / 1000000" | bc -l)"; }
# stamp: prefixes each line of stdin with the wall time it arrived.
stamp() { local line; while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
# stop_receiver: ends a receiver left waiting (a failed run), by its pid.
stop_receiver() {
    local p
    p=$(cat "$work/recv.pid" 2>/dev/null) || return 0
    kill -0 "$p" 2>/dev/null || return 0
    pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true
}
# wait_for TEST PID: polls TEST (up to 60 s) while PID runs.
wait_for() {
    local i
    for i in $(seq 1 1200); do
        eval "$1" && return 0
        kill -0 "$2" 2>/dev/null || { echo "bench-move: the listener exited early" >&2; return 1; }
        sleep 0.05
    done
    echo "bench-move: timed out waiting for the listener" >&2; return 1
}

# The vault: one random item, absorbed into items/ (as after a normal add + unlock).
head -c "${SIZE_MIB}M" /dev/urandom > "$work/in"
"$VAULT" --vault "$src" --password-file "$pw" init --kdf-memory 8 --kdf-passes 1 >/dev/null 2>&1
"$VAULT" --vault "$src" add "$work/in" --name big >/dev/null 2>&1
"$VAULT" --vault "$src" --password-file "$pw" list >/dev/null
rm -f "$work/in"
# What move sends: items/, inbox/, manifest, vault.header.
bytes=$(find "$src/items" "$src/inbox" "$src/manifest" "$src/vault.header" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
blob=$src/items/$(ls -S "$src/items" | head -1)
blob_bytes=$(stat -c %s "$blob")
cat "$src"/items/* > /dev/null   # both sides start from the page cache

# Reference: socat sends the item's blob over 127.0.0.1 into a new file,
# then sync: from the sender's start to the sync done (listener already up).
ref_once() {
    local lpid t0 t1 port
    rm -f "$work/ref.out" "$work/socat.log"
    socat -d -d -u TCP-LISTEN:0,bind=127.0.0.1,reuseaddr OPEN:"$work/ref.out",creat,trunc 2>"$work/socat.log" & lpid=$!
    wait_for "grep -qs 'listening on' '$work/socat.log'" "$lpid"
    port=$(sed -n 's/.*listening on .*:\([0-9][0-9]*\)$/\1/p' "$work/socat.log")
    t0=$EPOCHREALTIME
    socat -u FILE:"$blob" TCP:127.0.0.1:"$port"
    wait "$lpid"
    sync "$work/ref.out"
    t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc -l
}

# One move of $src into a fresh $dst, receiver flags in "$@". Both sides'
# notes are timestamped as they arrive. Prints, in seconds:
#   wall   the whole `move send --keep` command
#   pre    its start to its "connected" note: unlock + check --read-data
#   sxfer  sender's "connected" to its "moved" note: send, then the receiver's
#          fsyncs (+ its check without --no-verify), rename and receipt
#   rxfer  receiver's "connected" to its "received" note: receive, hash,
#          write, fsync (the T of its line, to the microsecond)
#   check  receiver's "received" to its "opened and checked" note (0 with --no-verify)
#   scpu rcpu   user+sys CPU of the sender (its check included) and the receiver
move_once() {
    local rpid t0 t1 sc sm rc rr rk
    rm -rf "$dst" "$work/code" "$work/recv.pid"
    ( ( echo "$BASHPID" > "$work/recv.pid"
        exec /usr/bin/time -f '%U %S' -o "$work/recv.cpu" \
            "$VAULT" --vault "$dst" --password-file "$pw" move receive --listen 127.0.0.1:0 --code-file "$work/code" "$@"
      ) 2>&1 >/dev/null | stamp > "$work/recv.log" ) & rpid=$!
    wait_for "[ -s '$work/code' ]" "$rpid"
    t0=$EPOCHREALTIME
    if ! ( /usr/bin/time -f '%U %S' -o "$work/send.cpu" \
               "$VAULT" --vault "$src" --password-file "$pw" move send --code-file "$work/code" --keep --yes \
           2>&1 >/dev/null | stamp > "$work/send.log" ); then
        stop_receiver; wait "$rpid" || true; rm -f "$work/recv.pid"
        echo "bench-move: move send failed:" >&2; cat "$work/send.log" "$work/recv.log" >&2; return 1
    fi
    t1=$EPOCHREALTIME
    wait "$rpid" || { echo "bench-move: move receive failed:" >&2; cat "$work/recv.log" >&2; return 1; }
    rm -f "$work/recv.pid"
    at() { awk -v p="$2" 'index($0, p) {print $1; exit}' "$1"; }
    sc=$(at "$work/send.log" "vault: connected to"); sm=$(at "$work/send.log" "vault: moved ")
    rc=$(at "$work/recv.log" "vault: connected to"); rr=$(at "$work/recv.log" "vault: received ")
    rk=$(at "$work/recv.log" "vault: opened and checked"); rk=${rk:-$rr}
    [ -n "$sc" ] && [ -n "$sm" ] && [ -n "$rc" ] && [ -n "$rr" ] || {
        echo "bench-move: notes missing:" >&2; cat "$work/send.log" "$work/recv.log" >&2; return 1; }
    echo "$(echo "$t1 - $t0; $sc - $t0; $sm - $sc; $rr - $rc; $rk - $rr" | bc -l | tr '\n' ' ')" \
         "$(tail -1 "$work/send.cpu" | awk '{print $1 + $2}')" "$(tail -1 "$work/recv.cpu" | awk '{print $1 + $2}')"
}

# socat and vault runs alternate, so drift in this VM's speed hits both alike.
ref=999999 wall=999999 pre=999999 sxfer=999999 rxfer=999999 scpu=999999 rcpu=999999
for _ in 1 2 3; do
    t=$(ref_once); ref=$(min "$t" "$ref")
    rm -f "$work/ref.out"
    run=$(move_once --no-verify); read -r w p s r _ sc rc <<< "$run"
    wall=$(min "$w" "$wall"); pre=$(min "$p" "$pre"); sxfer=$(min "$s" "$sxfer"); rxfer=$(min "$r" "$rxfer")
    scpu=$(min "$sc" "$scpu"); rcpu=$(min "$rc" "$rcpu")
done
vcheck=999999 vsxfer=999999
for _ in 1 2 3; do
    run=$(move_once); read -r _ _ s _ c _ _ <<< "$run"
    vcheck=$(min "$c" "$vcheck"); vsxfer=$(min "$s" "$vsxfer")
done
rm -rf "$dst"
check_t=999999
for _ in 1 2 3; do
    t0=$EPOCHREALTIME
    "$VAULT" --vault "$src" --password-file "$pw" check --read-data >/dev/null 2>&1
    t1=$EPOCHREALTIME
    t=$(echo "$t1 - $t0" | bc -l); check_t=$(min "$t" "$check_t")
done

# Throughput ratio = (vault bytes / vault time) / (socat bytes / socat time).
tput() { ratio "$(echo "$bytes / $1" | bc -l)" "$(echo "$blob_bytes / $ref" | bc -l)"; }
echo
echo "vault move of a $SIZE_MIB MiB vault over 127.0.0.1 ($bytes bytes; throughput as a fraction of socat + sync's, higher is better; target >= 0.7):"
printf '  socat + sync of the item blob: %.3f s (%s MB/s)\n' "$ref" "$(mbs "$blob_bytes" "$ref")"
printf '  move, sender connected -> receipt (--no-verify; the target figure): %.3f s (%s MB/s) = %sx socat\n' \
    "$sxfer" "$(mbs "$bytes" "$sxfer")" "$(tput "$sxfer")"
printf '  move, receiver connected -> all received and fsynced (--no-verify): %.3f s (%s MB/s) = %sx socat\n' \
    "$rxfer" "$(mbs "$bytes" "$rxfer")" "$(tput "$rxfer")"
printf '  whole move send --keep: %.3f s = %sx socat, of which before connecting (unlock, check --read-data, connect): %.3f s (check --read-data alone: %.3f s)\n' \
    "$wall" "$(tput "$wall")" "$pre" "$check_t"
printf '  receiver unlock-and-check (not in the figures above): %.3f s; sender connected -> receipt with it: %.3f s\n' "$vcheck" "$vsxfer"
printf '  CPU user+sys: sender %.2f s (its check included), receiver %.2f s (--no-verify)\n' "$scpu" "$rcpu"
# The handshake alone: N of each version, alternating, both ends in one process.
read -r _ _ hs_classic _ hs_hybrid _ hs_keygen _ hs_n <<< "$("$VAULT_BENCH" move-handshake 200)"
printf '  handshake, connect -> both sides confirmed (median of %d): hybrid %.2f ms, classic X25519-only %.2f ms (+%.2f ms); the receiver'"'"'s X-Wing key pair (before the code is shown) %.2f ms\n' \
    "$hs_n" "$hs_hybrid" "$hs_classic" "$(echo "$hs_hybrid - $hs_classic" | bc -l)" "$hs_keygen"
