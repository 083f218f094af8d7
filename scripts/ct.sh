#!/usr/bin/env bash
# make ct: runs ct-mlkem (Fuzz/CT/CTMLKEM) under valgrind's memcheck with the
# secrets marked undefined, then summarises the report: every "Conditional
# jump or move depends on uninitialised value(s)" or "Use of uninitialised
# value of size N" is a branch or a memory index that depends on a secret.
#   scripts/ct.sh BINARY [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1; rounds=${2:-3}
log=.build/ct/memcheck.log
mkdir -p .build/ct
# First prove the harness can see a leak: a deliberate secret-indexed load must be reported.
if ! valgrind --tool=memcheck --log-file=.build/ct/self-test.log "$bin" --self-test; then
    echo "ct: the self-test's deliberate leak was not reported; the check below would prove nothing"; exit 1
fi
set +e
valgrind --tool=memcheck --track-origins=yes --error-limit=no --num-callers=30 \
    --log-file="$log" "$bin" "$rounds"
status=$?
set -e
conditional=$(grep -c 'Conditional jump or move depends on uninitialised value' "$log" || true)
use=$(grep -c 'Use of uninitialised value of size' "$log" || true)
echo "valgrind memcheck, secrets marked undefined: $conditional conditional jumps/moves and $use memory uses depending on secret data"
grep -E 'ERROR SUMMARY' "$log" | tail -1 | sed 's/^==[0-9]*== /  /'
if [ "$conditional" != 0 ] || [ "$use" != 0 ] || [ "$status" != 0 ]; then
    echo "ct: secret-dependent behaviour (or a failed run, status $status); the first reports:"
    grep -A 14 -E 'Conditional jump|Use of uninitialised' "$log" | head -80
    echo "full report: $log"
    exit 1
fi
echo "ct: no secret-dependent branch or memory index (report: $log)"
