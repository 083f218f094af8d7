#!/usr/bin/env bash
# Compression bench (issue 4: "compressible 1 GiB text-like data with
# --compress against xz -T2 -0/-1 on the same data: within 15% of xz's time
# and size"). Generates the data, measures xz's own time and size, then
# vault's through `vault_compress_cmd` (below: the lead fills it in) and
# prints vault/xz ratios.
#
#   scripts/bench-xz.sh [WORK_DIR]      (default: a fresh directory, removed after)
#   BENCH_XZ_SIZE_MIB=1024  data size     BENCH_XZ_RUNS=1  runs per figure (best kept)
#   BENCH_XZ_LEVELS="0 1"   xz presets    BENCH_XZ_THREADS=2
#
# Builds no vault code; it compiles a ~100-line C text generator with cc.
set -euo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------------------
# vault_compress_cmd LEVEL INPUT: store INPUT through vault compressed at xz
# preset LEVEL, and print the number of bytes vault stored for it as the last
# line of stdout. Its wall time is what gets compared with xz's, so keep
# unrelated work (init, KDF) out of it or make it small (weak KDF).
# Return 2 while not implemented. For example, once `add --compress` exists:
#
#   VAULT=$PWD/.build/release/vault; export VAULT_ALLOW_WEAK_KDF=1
#   rm -rf "$work/vx"; "$VAULT" --vault "$work/vx" --password-file "$pw" \
#       init --kdf-memory 8 --kdf-passes 1 >/dev/null 2>&1
#   "$VAULT" --vault "$work/vx" add "$2" --name text --compress="$1" >/dev/null
#   du -sb "$work/vx/items" | cut -f1
vault_compress_cmd() {
    local level=$1 input=$2 vault=$PWD/.build/release/vault dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/vault-bench-xz.XXXXXX")
    printf 'bench\n' > "$dir/pw"
    VAULT_ALLOW_WEAK_KDF=1 "$vault" --vault "$dir/v" --password-file "$dir/pw" init --kdf-memory 8 --kdf-passes 1 >/dev/null 2>&1
    "$vault" --vault "$dir/v" add "$input" --name data --compress="$level" >/dev/null 2>&1 || return 1
    stat -c %s "$dir"/v/inbox/*.item
    rm -rf "$dir"
}
# ---------------------------------------------------------------------------

SIZE_MIB=${BENCH_XZ_SIZE_MIB:-1024}
RUNS=${BENCH_XZ_RUNS:-1}
LEVELS=${BENCH_XZ_LEVELS:-"0 1"}
THREADS=${BENCH_XZ_THREADS:-2}
if [ $# -ge 1 ]; then
    work=$1
    mkdir -p "$work"
else
    work=$(mktemp -d /var/tmp/vault-bench-xz.XXXXXX)
    trap 'rm -rf "$work"' EXIT
fi
pw=$work/pw; printf 'bench password\n' > "$pw"
now() { date +%s.%N; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
mbps() { printf '%.1f' "$(echo "$SIZE_MIB * 1.048576 / $1" | bc -l)"; }

# gen_text BYTES: writes English-like text to stdout: words from a
# 30,000-word made-up vocabulary with Zipf frequencies (as in real text),
# each word with favourite followers (so phrases recur), sentences of varying
# length with capitals, commas and numbers, lines wrapped at 72 columns,
# paragraphs. Never repeats at any distance. xz -1 shrinks it to ~38%,
# xz -6 to ~27%, gzip -6 to ~41%: a little harder than real prose.
gen_text() {
    local gen=$work/gen-text
    if [ ! -x "$gen" ]; then
        cat > "$work/gen-text.c" <<'EOF'
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define VOCAB 30000
static uint64_t s = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) {            /* splitmix64 */
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static const char *on[] = {"b","c","d","f","g","h","j","k","l","m","n","p","r","s","t","v","w",
    "st","tr","pr","ch","th","sh","br","cl","gr","pl","","","",""};
static const char *nu[] = {"a","e","i","o","u","a","e","o","ea","ou","ai","io","y"};
static const char *co[] = {"","","","","","","n","r","s","t","l","nd","rt","ng","st","m","ck","ll"};
static char words[VOCAB][24];
static int lens[VOCAB];
static double cdf[VOCAB];
static int next[VOCAB][8];                 /* each word's usual followers: phrases recur */
static int zipf(void) {
    double u = (double)(rnd() >> 11) / 9007199254740992.0;
    int lo = 0, hi = VOCAB - 1;
    while (lo < hi) { int m = (lo + hi) / 2; if (cdf[m] < u) lo = m + 1; else hi = m; }
    return lo;
}
int main(int argc, char **argv) {
    long long want = atoll(argv[1]);
    for (int i = 0; i < VOCAB; i++) {        /* frequent words are short, as in English */
        int syl = 1 + (i > 300) + (i > 6000) + (rnd() % 4 == 0);
        char *w = words[i]; w[0] = 0;
        for (int k = 0; k < syl && strlen(w) < 16; k++) {
            strcat(w, on[rnd() % (sizeof on / sizeof *on)]);
            strcat(w, nu[rnd() % (sizeof nu / sizeof *nu)]);
            strcat(w, co[rnd() % (sizeof co / sizeof *co)]);
        }
        lens[i] = (int)strlen(w);
    }
    double t = 0;
    for (int i = 0; i < VOCAB; i++) { t += 1.0 / pow(i + 2.7, 1.07); cdf[i] = t; }
    for (int i = 0; i < VOCAB; i++) cdf[i] /= t;
    for (int i = 0; i < VOCAB; i++) for (int k = 0; k < 8; k++) next[i][k] = zipf();
    static char buf[1 << 20];
    size_t n = 0; long long out = 0; int col = 0, inSentence = 0, sentences = 0, prev = 0;
    while (out < want) {
        char tmp[48]; int len;
        uint64_t r = rnd();
        if (r % 53 == 0) len = sprintf(tmp, "%llu", (unsigned long long)((r >> 8) % (r % 3 ? 100 : 100000)));
        else {
            int w = inSentence && r % 8 < 3 ? next[prev][(r >> 3) % 8] : zipf();
            memcpy(tmp, words[w], lens[w] + 1); len = lens[w]; prev = w;
            if (!inSentence && tmp[0] >= 'a') tmp[0] -= 32;
        }
        inSentence++;
        uint64_t p = rnd() % 100;
        if (inSentence > 4 && p < 9) { tmp[len++] = '.'; inSentence = 0; sentences++; }
        else if (p < 14) tmp[len++] = ',';
        if (col + len > 72) { buf[n++] = '\n'; col = 0;
            if (sentences > 3 + (int)(rnd() % 6) && !inSentence) { buf[n++] = '\n'; sentences = 0; } }
        else if (col) { buf[n++] = ' '; col++; }
        memcpy(buf + n, tmp, len); n += len; col += len;
        if (n > sizeof buf - 128) {
            if ((long long)n > want - out) n = (size_t)(want - out);
            fwrite(buf, 1, n, stdout); out += n; n = 0;
        }
    }
    return 0;
}
EOF
        cc -O2 -o "$gen" "$work/gen-text.c" -lm
    fi
    "$gen" "$1"
}

# timed_size CMD...: runs CMD RUNS times; prints "SECONDS SIZE" for the
# fastest run, SIZE being the last line CMD printed.
timed_size() {
    local best=999999 size=0 t0 t1 t out
    for _ in $(seq 1 "$RUNS"); do
        t0=$(now); out=$("$@" | tail -1) || return 1; t1=$(now)
        t=$(echo "$t1 - $t0" | bc -l)
        if [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; size=$out; fi
    done
    printf '%.3f %s\n' "$best" "$size"
}
xz_cmd() { xz -T"$THREADS" -"$1" -c "$2" > "$work/out.xz"; stat -c %s "$work/out.xz"; rm -f "$work/out.xz"; }

text=$work/text
if [ ! -s "$text" ] || [ "$(stat -c %s "$text")" != $((SIZE_MIB << 20)) ]; then
    t0=$(now); gen_text $((SIZE_MIB << 20)) > "$text"; t1=$(now)
    printf 'generated %s MiB of text-like data in %.1f s\n' "$SIZE_MIB" "$(echo "$t1 - $t0" | bc -l)"
fi
cat "$text" > /dev/null

echo "compression of $SIZE_MIB MiB of text-like data, $THREADS threads, best of $RUNS ($(nproc) cores):"
for level in $LEVELS; do
    read -r xt xs < <(timed_size xz_cmd "$level" "$text")
    printf '  xz -T%s -%s: %.1f s (%s MB/s), %s bytes (%.1f%%)\n' "$THREADS" "$level" "$xt" "$(mbps "$xt")" \
        "$xs" "$(echo "100 * $xs / ($SIZE_MIB * 1048576)" | bc -l)"
    set +e; vt_vs=$(timed_size vault_compress_cmd "$level" "$text"); rc=$?; set -e
    if [ "$rc" -ne 0 ] || [ "$(echo "$vt_vs" | cut -d' ' -f2)" = "" ]; then
        echo "  vault --compress=$level: not measured (fill in vault_compress_cmd in $0)"
        continue
    fi
    read -r vt vs <<< "$vt_vs"
    printf '  vault --compress=%s: %.1f s (%s MB/s), %s bytes: time %sx xz, size %sx xz (goal: both <= 1.15)\n' \
        "$level" "$vt" "$(mbps "$vt")" "$vs" "$(ratio "$vt" "$xt")" "$(ratio "$vs" "$xs")"
done
