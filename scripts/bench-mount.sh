#!/usr/bin/env bash
# Part of `make bench` (called by bench.sh with its work directory):
# the first `cat` of an item through `vault mount` against `vault get` of the
# same item to /dev/null (issue 28's goal: >= 0.8x its throughput), random
# 4 KiB reads a second through the mount, and `cp -r` of a folder item out
# of the mount against `vault restore` of it (goal: >= 0.7x its speed),
# from the first mount after the add (the index its dropper wrote, kept at
# absorb), from a mount with no index kept, and from the first mount of a
# clone (the index fetched from the remote), with that copy's two parts
# (the index pass, FUSE's own cost) beside it,
# and the same two reads from the FUSE floor (scripts/fuse-floor.c: a file
# system with vault mount's options that does no work, its bytes from memory),
# which is as fast as any FUSE file system can serve them on this machine.
# Each run mounts afresh, so the kernel's page cache holds nothing of the
# item (a mount lets the kernel keep what it read: the content never
# changes while mounted). Median of 3, the order of the two alternated.
#
#   scripts/bench-mount.sh WORK_DIR
#   BENCH_MOUNT_MIB=256   size of the item (small by default; 1024 for the issue's figure)
#   VAULT=...             the vault binary (default .build/release/vault)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
work=$1/mount
VAULT=${VAULT:-$PWD/.build/release/vault}
SIZE_MIB=${BENCH_MOUNT_MIB:-256}
export VAULT_ALLOW_WEAK_KDF=1 XDG_STATE_HOME=$work/state
if [ ! -e /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
    echo "no /dev/fuse or fusermount3 (make deps installs fuse3): skipping the mount bench"; exit 0
fi
rm -rf "$work"; mkdir -p "$work/mnt"
mount_pid=
unmount() {
    if [ -n "$mount_pid" ] && kill -0 "$mount_pid" 2>/dev/null; then
        fusermount3 -u "$work/mnt" 2>/dev/null || true
        wait "$mount_pid" 2>/dev/null || true
    fi
    mount_pid=
}
trap 'unmount; rm -rf "$work"' EXIT
pw=$work/pw; printf 'bench password\n' > "$pw"; chmod 600 "$pw"
v() { "$VAULT" --vault "$work/v" --password-file "$pw" --quiet "$@"; }
now() { date +%s.%N; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
elapsed() { echo "$2 - $1" | bc -l; }
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

v init --kdf-memory 8 --kdf-passes 1 >/dev/null 2>&1
head -c "${SIZE_MIB}M" /dev/urandom > "$work/item.bin"
v add "$work/item.bin" >/dev/null
rm "$work/item.bin"
v list >/dev/null
# The item's gigabyte is written back before any timing, not during it.
sync

mount_fresh() {
    if [ "${1:-}" = clone ]; then
        "$VAULT" --vault "$work/v2" --password-file "$pw" --quiet mount "$work/mnt" 2>/dev/null &
    elif [ "${1:-}" = floor ]; then
        # (its libfuse says "not mounted" when the bench's fusermount3 -u got there first)
        "$work/fuse-floor" "$work/mnt" "$((SIZE_MIB << 20))" 300 400000 2>/dev/null &
    else
        v mount "$work/mnt" 2>/dev/null &
    fi
    mount_pid=$!
    for _ in $(seq 1 600); do
        mountpoint -q "$work/mnt" && return 0
        sleep 0.05
    done
    echo "bench-mount: not mounted" >&2; return 1
}

# Built with the system's cc, else the clang that comes with Swift.
floor=
for c in cc clang; do
    if command -v "$c" >/dev/null && "$c" -O2 -o "$work/fuse-floor" scripts/fuse-floor.c $(pkg-config --cflags --libs fuse3) 2>/dev/null; then
        floor=1; break
    fi
done
[ -n "$floor" ] || echo "bench-mount: no C compiler or libfuse3-dev: the FUSE floor is not measured"

gets=() cats=() floor_cats=()
run_get() { local t0; t0=$(now); v get item.bin > /dev/null; gets+=("$(elapsed "$t0" "$(now)")"); }
run_cat() {
    local t0
    mount_fresh
    t0=$(now); cat "$work/mnt/item.bin" > /dev/null; cats+=("$(elapsed "$t0" "$(now)")")
    unmount
}
run_floor_cat() {
    [ -n "$floor" ] || return 0
    local t0
    mount_fresh floor
    t0=$(now); cat "$work/mnt/item.bin" > /dev/null; floor_cats+=("$(elapsed "$t0" "$(now)")")
    unmount
}
for i in 1 2 3; do
    if [ $((i % 2)) = 1 ]; then run_get; run_cat; run_floor_cat; else run_floor_cat; run_cat; run_get; fi
done
med_get=$(median "${gets[@]}") med_cat=$(median "${cats[@]}")
mount_fresh
reads=$(python3 - "$work/mnt/item.bin" <<'EOF'
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
n, t0 = 0, time.monotonic()
while time.monotonic() - t0 < 3:
    os.pread(fd, 4096, random.randrange(0, size - 4096) & ~4095)
    n += 1
print("%.0f" % (n / (time.monotonic() - t0)))
EOF
)
unmount

# A folder item of 300 files of 400 KB (the issue's photo folder): `cp -r`
# out of the mount against `vault restore` of the same folder (goal >= 0.7x
# its speed). Each copy lands on fresh names; each mount is fresh.
mkdir -p "$work/photos"
for i in $(seq 1 300); do head -c 400000 /dev/urandom > "$work/photos/p$i.jpg"; done
v add "$work/photos" --no-compress >/dev/null
rm -rf "$work/photos"
v list >/dev/null
sync
# A second machine's copy: pushed to a plain-directory remote and cloned,
# which fetches the folder's index from there (FORMAT.md "Folder indexes",
# "On a remote"). Without rclone, no clone line.
cloned=
if command -v rclone >/dev/null && v remote add origin "$work/remote" >/dev/null 2>&1 && v push >/dev/null 2>&1 \
    && "$VAULT" --password-file "$pw" --quiet clone "$work/remote" "$work/v2" >/dev/null 2>&1; then
    cloned=1
fi
restores=() cps=() firsts=() floor_cps=() clone_cps=()
run_restore() {
    local t0; t0=$(now); v restore photos --to "$work/r$1" >/dev/null; restores+=("$(elapsed "$t0" "$(now)")")
    rm -rf "$work/r$1"
}
# The copy from a mount with the folder's index kept (FORMAT.md "Folder
# indexes": the one `add` wrote beside the folder, kept by the `list` above
# that absorbed it, as after any add), and from a mount with none kept (a
# folder added by an earlier version, or whose remote withheld its index: the index
# pass decrypts the whole archive before the copy).
run_cp() {
    local t0
    [ "$2" = first ] && rm -rf "$work/v/indexes"
    [ "$2" = clone ] && [ -z "$cloned" ] && return 0
    if [ "$2" = clone ]; then mount_fresh clone; else mount_fresh; fi
    t0=$(now); cp -r "$work/mnt/photos" "$work/c$1"
    case $2 in
        first) firsts+=("$(elapsed "$t0" "$(now)")") ;;
        clone) clone_cps+=("$(elapsed "$t0" "$(now)")") ;;
        *) cps+=("$(elapsed "$t0" "$(now)")") ;;
    esac
    unmount
    rm -rf "$work/c$1"
}
run_floor_cp() {
    [ -n "$floor" ] || return 0
    local t0
    mount_fresh floor
    t0=$(now); cp -r "$work/mnt/photos" "$work/f$1"; floor_cps+=("$(elapsed "$t0" "$(now)")")
    unmount
    rm -rf "$work/f$1"
}
for i in 1 2 3; do
    if [ $((i % 2)) = 1 ]; then run_restore "$i"; run_cp "$i" first; run_cp "$i" kept; run_cp "$i" clone; run_floor_cp "$i"
    else run_floor_cp "$i"; run_cp "$i" clone; run_cp "$i" first; run_cp "$i" kept; run_restore "$i"; fi
done
med_restore=$(median "${restores[@]}") med_cp=$(median "${cps[@]}") med_first=$(median "${firsts[@]}")
# Where a copy's time goes: the first listing alone (the index pass, which
# decrypts the whole archive once), and `cp -r` once the kernel's page cache
# holds every file (nothing decrypted: FUSE's own cost per file and page).
lists=() kept_lists=() warms=()
for i in 1 2 3; do
    rm -rf "$work/v/indexes"
    mount_fresh
    t0=$(now); ls -f "$work/mnt/photos" >/dev/null; lists+=("$(elapsed "$t0" "$(now)")")
    unmount
    mount_fresh
    t0=$(now); ls -f "$work/mnt/photos" >/dev/null; kept_lists+=("$(elapsed "$t0" "$(now)")")
    cat "$work/mnt/photos"/* >/dev/null
    t0=$(now); cp -r "$work/mnt/photos" "$work/w$i"; warms+=("$(elapsed "$t0" "$(now)")")
    unmount
    rm -rf "$work/w$i"
done
med_list=$(median "${lists[@]}") med_kept_list=$(median "${kept_lists[@]}") med_warm=$(median "${warms[@]}")

echo
echo "vault mount (speed as a fraction of the reference's, higher is better; median of 3, order alternated):"
printf '  first cat of a %d MiB item through the mount %.3f s, vault get %.3f s = %sx (goal >= 0.8x)\n' \
    "$SIZE_MIB" "$med_cat" "$med_get" "$(ratio "$med_get" "$med_cat")"
printf '  random 4 KiB reads through the mount: %s a second (each may decrypt a 1 MiB chunk)\n' "$reads"
printf '  cp -r of a folder item (300 files, 115 MiB) out of the mount %.3f s, vault restore %.3f s = %sx (goal >= 0.7x)\n' \
    "$med_cp" "$med_restore" "$(ratio "$med_restore" "$med_cp")"
printf '    from a mount with no index kept (a folder added by an earlier version: the index pass included) %.3f s = %sx\n' \
    "$med_first" "$(ratio "$med_restore" "$med_first")"
printf '    its parts: the first listing: %.3f s with the index pass, %.3f s with the index kept; cp -r with every page already cached (no decrypting) %.3f s\n' \
    "$med_list" "$med_kept_list" "$med_warm"
if [ -n "$floor" ]; then
    med_floor_cat=$(median "${floor_cats[@]}") med_floor_cp=$(median "${floor_cps[@]}")
    echo "  the FUSE floor (scripts/fuse-floor.c: the same API, options and sizes, no work, bytes from memory handed over where they lie):"
    printf '    first cat %.3f s = %sx vault get (vault mount: %sx the floor'"'"'s speed)\n' \
        "$med_floor_cat" "$(ratio "$med_get" "$med_floor_cat")" "$(ratio "$med_floor_cat" "$med_cat")"
    printf '    cp -r %.3f s = %sx vault restore (vault mount: %sx the floor'"'"'s speed; %sx with no index kept)\n' \
        "$med_floor_cp" "$(ratio "$med_restore" "$med_floor_cp")" "$(ratio "$med_floor_cp" "$med_cp")" "$(ratio "$med_floor_cp" "$med_first")"
    if [ -n "$cloned" ]; then
        med_clone=$(median "${clone_cps[@]}")
        printf '    cp -r from the first mount of a clone of the vault (the index fetched from its remote) %.3f s: %sx the floor'"'"'s speed\n' \
            "$med_clone" "$(ratio "$med_floor_cp" "$med_clone")"
    fi
fi
