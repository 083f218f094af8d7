#!/usr/bin/env bash
# make bench, backup scale (issue 26): a tree of BACKUP_SCALE_FILES
# (1,000,000) small files in 1,000 directories, backed up and then backed up
# again unchanged, as a non-root user whose RLIMIT_MEMLOCK is 8 MiB (a
# desktop user's default). Prints wall time and peak RSS of each run against
# the goal (< 500 MiB). Making the files takes a minute or two; the backups
# run without eatmydata.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build/release/vault}")
FILES=${BACKUP_SCALE_FILES:-1000000}

work=$(mktemp -d /var/tmp/vault-backup-scale.XXXXXX)
trap 'rm -rf "$work"' EXIT
run_as=()
if [ "$(id -u)" = 0 ]; then
    id vaultbench >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin vaultbench
    chown vaultbench: "$work"
    chmod 0755 "$work"
    run_as=(runuser -u vaultbench --)
fi
as_user() { "${run_as[@]}" prlimit --memlock=8388608:8388608 env HOME="$work" XDG_CACHE_HOME="$work/cache" VAULT_ALLOW_WEAK_KDF=1 "$@"; }

measure() {   # measure LABEL CMD...: wall seconds and peak RSS of one run
    local label=$1; shift
    if ! as_user /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/stdout" 2> "$work/stderr"; then
        echo "  $label: FAILED"; sed 's/^/    /' "$work/stderr" | head -5; return 1
    fi
    read -r secs kib < "$work/time"
    printf '  %-30s %7.2f s   peak RSS %4d MiB (goal < 500 MiB)\n' "$label" "$secs" $((kib / 1024))
    grep -h "^vault: snapshot " "$work/stderr" | sed 's/^/    /' || true
}

echo "vault backup scale: $FILES files, as $(${run_as[@]} id -un 2>/dev/null || id -un), memlock 8 MiB"
as_user python3 - "$work/tree" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = "%s/d%03d" % (root, i % 1000)
    if i < 1000:
        os.makedirs(d)
    with open("%s/f%07d.txt" % (d, i), "w") as f:
        f.write("file %d of the backup scale bench\n" % i)
PY
printf 'backup scale password\n' | as_user sh -c "umask 077; cat > '$work/pw'"
as_user "$BIN" --vault "$work/v" --password-file "$work/pw" init --kdf-memory 1 --kdf-passes 1 >/dev/null 2>&1
measure "first backup" "$BIN" --vault "$work/v" backup "$work/tree"
measure "backup, nothing changed" "$BIN" --vault "$work/v" backup "$work/tree"
measure "absorb (snapshots list)" "$BIN" --vault "$work/v" --password-file "$work/pw" snapshots list
grep -q "2 snapshots" "$work/stdout" || { echo "  snapshots list did not show 2 snapshots"; cat "$work/stdout"; exit 1; }
