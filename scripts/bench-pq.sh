#!/usr/bin/env bash
# ML-KEM-768 and X-Wing speed (issue 17's crypto core): our Swift ML-KEM-768
# against OpenSSL's C implementation through Python cryptography (a wheel
# with OpenSSL 3.5+), measured in the same run, alternating, best of
# BENCH_PQ_RUNS runs of BENCH_PQ_SECONDS per operation. Printed as ops/s and
# as time ratios (ours / OpenSSL; lower is better, the goal is <= 3).
# OpenSSL's figures include a Python call per operation (well under 1 us).
# X-Wing has no reference here (OpenSSL 3.x has none); its figures are ours only.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=.build/release/vault-bench
seconds=${BENCH_PQ_SECONDS:-1}; runs=${BENCH_PQ_RUNS:-2}

reference() {
    python3 - "$seconds" <<'PY'
import os, sys, time
from cryptography.hazmat.primitives.asymmetric import mlkem
budget = float(sys.argv[1])
def ops(f):
    for _ in range(20): f()
    best, spent = 0.0, 0.0
    while spent < budget:
        t = time.perf_counter()
        for _ in range(50): f()
        t = time.perf_counter() - t
        spent += t; best = max(best, 50 / t)
    return best
sk = mlkem.MLKEM768PrivateKey.generate(); pk = sk.public_key(); _, ct = pk.encapsulate()
print("mlkem768-keygen %.0f" % ops(mlkem.MLKEM768PrivateKey.generate))
print("mlkem768-encaps %.0f" % ops(pk.encapsulate))
print("mlkem768-decaps %.0f" % ops(lambda: sk.decapsulate(ct)))
PY
}

declare -A ours theirs
for _ in $(seq "$runs"); do
    while read -r name value; do
        [ "${ours[$name]:-0}" -lt "$value" ] && ours[$name]=$value
    done < <("$BENCH" pq "$seconds")
    if out=$(reference 2>/dev/null); then
        while read -r name value; do
            [ "${theirs[$name]:-0}" -lt "$value" ] && theirs[$name]=$value
        done <<< "$out"
    fi
done

echo "ML-KEM-768 and X-Wing, one core (ops/s, best of $runs; ratio = our time / OpenSSL's, lower is better):"
if [ ${#theirs[@]} -eq 0 ]; then
    echo "  (python3 cryptography without ML-KEM: no OpenSSL reference; make deps installs one)"
fi
for op in keygen encaps decaps; do
    name=mlkem768-$op
    if [ -n "${theirs[$name]:-}" ]; then
        printf '  ML-KEM-768 %-6s vault %6d/s  OpenSSL %6d/s  = %sx\n' "$op" "${ours[$name]}" "${theirs[$name]}" \
            "$(printf '%.2f' "$(echo "${theirs[$name]} / ${ours[$name]}" | bc -l)")"
    else
        printf '  ML-KEM-768 %-6s vault %6d/s\n' "$op" "${ours[$name]}"
    fi
done
for op in keygen encaps decaps; do
    printf '  X-Wing     %-6s vault %6d/s\n' "$op" "${ours[xwing-$op]}"
done
