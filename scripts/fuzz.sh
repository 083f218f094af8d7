#!/usr/bin/env bash
# make fuzz: runs libFuzzer targets for a bounded time each, from seed
# corpora taken from docs/FORMAT.md's vectors and written by the independent
# reference implementation, plus the small checked-in corpora of
# Fuzz/Corpus/<target>/. Its crash-* files are past findings: each is run
# first, as a regression check, and left out of the fuzzing corpus.
# usage: scripts/fuzz.sh BUILD_DIR [SECONDS [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; seconds=${2:-60}; shift $(( $# < 2 ? $# : 2 ))
targets=${*:-item header manifest envelope archive move-frame move-code move-handshake xz zstd backup-tree item-sealed absorb kit manifest-entries mlkem hpke-xwing listing folder-index}
export SWIFT_BACKTRACE=enable=no   # the Swift backtracer fights ASan's reports
corpus=.build/fuzz-corpus
mkdir -p "$corpus"/{item,header,manifest,envelope,archive,move-frame,move-code,move-handshake,xz,zstd,backup-tree,item-sealed,absorb,kit,manifest-entries,mlkem,hpke-xwing,listing,folder-index}
# The folder index vector's plaintext, for an item of one file (FuzzFolderIndex's input).
python3 - "$corpus" <<'PY'
import re, sys
doc = open("docs/FORMAT.md").read()
section = doc[doc.index("## Folder indexes"):]
plain = re.search(r"(?m)^    plain  = ([0-9a-f]+)$", section).group(1)
open(sys.argv[1] + "/folder-index/vector", "wb").write(b"\x01" + bytes.fromhex(plain))
PY
# A listing as rclone writes it (Rclone.parseListing).
printf '[\n{"Path":"vault.header","Name":"vault.header","Size":1425,"IsDir":false},\n{"Path":"items/00112233445566778899aabbccddeeff","Name":"x","Size":42,"IsDir":false}\n]\n' > "$corpus/listing/vault"
ref=scripts/reference/vault_item.py
k=$(printf '00%.0s' {1..32}); id=$(printf 'a0%.0s' {1..16}); np=$(printf 'c0%.0s' {1..8})
printf '' | python3 $ref seal $k $id $np 0 > "$corpus/item/empty"
printf 'hello, vault' | python3 $ref seal $k $id $np 1 > "$corpus/item/hello"
head -c 1100000 /dev/zero | python3 $ref seal $k $id $np 2 > "$corpus/item/two-chunks"
# The complete-vault vector's files, from the spec itself.
python3 - "$corpus" <<'PY'
import re, sys
doc = open("docs/FORMAT.md").read()
def block(title):
    m = re.search(re.escape(title) + r"[^\n]*\n\n((?:       [0-9a-f]+\n)+)", doc)
    return bytes.fromhex("".join(m.group(1).split()))
out = sys.argv[1]
open(out + "/header/vector", "wb").write(block("`vault.header`:"))
open(out + "/manifest/vector", "wb").write(block("`manifest` (holding the one entry"))
open(out + "/envelope/vector", "wb").write(block("`inbox/707172737475767778797a7b7c7d7e7f.env`"))
# The version-2 (hybrid) vault's header and X-Wing envelope.
hybrid = doc[doc.index("## Test vector: a hybrid vault"):]
def hblock(title):
    m = re.search(re.escape(title) + r"[^\n]*\n\n((?:       [0-9a-f]+\n)+)", hybrid)
    return bytes.fromhex("".join(m.group(1).split()))
open(out + "/header/vector-v2", "wb").write(hblock("`vault.header`"))
open(out + "/envelope/vector-xwing", "wb").write(hblock("`inbox/707172737475767778797a7b7c7d7e7f.env`"))
# The version-3 header (the hybrid one with 0x03, its MAC and checksum).
v3 = doc[doc.index("## Test vector: a version-3 header"):]
m = re.search(r"`vault.header`[^\n]*\n\n((?:       [0-9a-f]+\n)+)", v3)
open(out + "/header/vector-v3", "wb").write(bytes.fromhex("".join(m.group(1).split())))
# The version-4 header (the hybrid one with 0x04, a counter, its MAC and checksum).
v4 = doc[doc.index("## Test vector: a version-4 header"):]
m = re.search(r"`vault.header`[^\n]*\n\n((?:       [0-9a-f]+\n)+)", v4)
open(out + "/header/vector-v4", "wb").write(bytes.fromhex("".join(m.group(1).split())))
PY
# Device move: the code vector (bytes and text) and the frame vector, from the
# spec; more frames sealed under its s2r and r2s keys. A move-frame input is
# flags (1) || step (1) || payload: flags 0 the raw stream the receiver reads,
# 2 the sender's, +4 read as MoveChannel does; flags 1/3 a list of
# control (1) || u16be length || plaintext, sealed by the target itself
# (see Fuzz/FuzzMoveFrame).
python3 - "$corpus" <<'PY'
import re, struct, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
doc = open("docs/FORMAT.md").read()
doc = doc[doc.index("## Device move"):]
out = sys.argv[1]
m = re.search(r"\(78 bytes\):\n\n((?:    [0-9a-f]+\n)+)\n((?:    [A-Z2-7-]+\n)+)", doc)
open(out + "/move-code/vector", "wb").write(bytes.fromhex("".join(m.group(1).split())))
open(out + "/move-code/vector-text", "w").write("".join(m.group(2).split()))
open(out + "/move-code/vector-text-lower", "w").write(" ".join("".join(m.group(2).split()).lower().split("-")))
val = lambda name: bytes.fromhex(re.search(re.escape(name) + r" +([0-9a-f]+)\n", doc).group(1))
vector = bytes.fromhex(re.search(r"final flag set:\n`([0-9a-f]+)`", doc).group(1))
def seal(key, plaintexts):
    a, frames = AESGCM(key), b""
    for i, (p, final) in enumerate(plaintexts):
        c = a.encrypt(b"\0" * 4 + struct.pack(">Q", i), p, struct.pack(">QB", i, final))
        frames += struct.pack(">I", len(c)) + c
    return frames
hid = bytes(range(0x70, 0x80)).hex()
s2r = [(val("sender confirmation"), 0), (b"\x01" + struct.pack(">IQ", 2, 70), 0),
       (b"\x02" + struct.pack(">Q", 64) + bytes([12]) + b"vault.header", 0), (b"\x03" + bytes(64), 0),
       (b"\x04" + bytes(32), 0), (b"\x02" + struct.pack(">Q", 6) + bytes([43]) + f"inbox/{hid}.item".encode(), 0),
       (b"\x03hello!", 0), (b"\x04" + bytes(32), 0), (b"\x05", 0), (b"\x06\x01", 1)]
r2s = [(val("receiver confirmation"), 0), (b"\x11" + bytes(32), 1)]
refused = [(val("receiver confirmation"), 0), (b"\x12\x04", 1)]
chunks = lambda flags, ps: bytes([flags, 0]) + b"".join(bytes([f]) + struct.pack(">H", len(p)) + p for p, f in ps)
seeds = {
    "vector": bytes([0, 0]) + vector, "vector-channel": bytes([4, 0]) + vector, "vector-bytewise": bytes([0, 1]) + vector,
    "transfer": bytes([0, 0]) + seal(val("s2r key"), s2r),
    "transfer-channel": bytes([4, 7]) + seal(val("s2r key"), s2r),
    "receipt": bytes([2, 0]) + seal(val("r2s key"), r2s), "refused": bytes([6, 3]) + seal(val("r2s key"), refused),
    "sealed-transfer": chunks(1, s2r), "sealed-transfer-channel": chunks(5, s2r),
    "sealed-receipt": chunks(3, r2s), "sealed-refused": chunks(3, refused),
}
for name, data in seeds.items():
    open(out + "/move-frame/" + name, "wb").write(data)
# The hybrid handshake vector's key messages (mode byte, see
# Fuzz/FuzzMoveHandshake), and its version-2 code.
hybrid = doc[doc.index("### Test vector: hybrid handshake"):]
def hblock(title):
    m = re.search(re.escape(title) + r"[^\n]*\n\n((?:       [0-9a-fA-Z2-7-]+\n)+)", hybrid)
    return "".join(m.group(1).split())
rkey, skey = bytes.fromhex(hblock("`receiver key message`")), bytes.fromhex(hblock("`sender key message`"))
for name, data in {"receiver-key": b"\0" + rkey, "sender-key": b"\1" + skey, "receiver-key-xor": b"\2" + bytes(8),
                   "sender-key-xor": b"\3" + bytes(1088) + b"\1", "sender-key-cut": b"\7" + bytes(1100)}.items():
    open(out + "/move-handshake/" + name, "wb").write(data)
open(out + "/move-code/vector-v2", "wb").write(bytes.fromhex(hblock("`move code`")))
open(out + "/move-code/vector-v2-text", "w").write(hblock("`move code text`"))
PY
# A small folder as pax, the format folder items hold.
seed=$(mktemp -d); mkdir -p "$seed/d/sub"; echo hi > "$seed/d/a.txt"; ln -s a.txt "$seed/d/link"; echo x > "$seed/d/sub/b"
tar --format=pax -C "$seed/d" -cf "$corpus/archive/folder.pax" . ; rm -rf "$seed"
# xz streams as the vault writes them: one block, several blocks (what the
# threaded encoder makes), empty, and each preset's dictionary size.
seed=$(mktemp -d); seq 1 20000 > "$seed/text"
xz -T1 -1 -c "$seed/text" > "$corpus/xz/one-block"
xz -T2 -1 --block-size=16384 -c "$seed/text" > "$corpus/xz/blocks"
printf '' | xz -c > "$corpus/xz/empty"
for p in 0 3 6; do head -c 3000 "$seed/text" | xz -$p -c > "$corpus/xz/preset-$p"; done
rm -rf "$seed"
# ML-KEM-768 and HPKE with X-Wing: the published vectors in the test bundle,
# with the case byte each fuzz target reads first (see Fuzz/FuzzMLKEM and
# Fuzz/FuzzHPKEXWing).
python3 - "$corpus" <<'PY'
import json, sys
out, vec = sys.argv[1], "Tests/VaultCryptoTests/Vectors/"
m = json.load(open(vec + "mlkem768-fips203.json"))
for t in m["decapsulation"]["tests"][:2]:
    open(f"{out}/mlkem/ct-{t['tcId']}", "wb").write(b"\x00" + bytes.fromhex(t["c"]))
for t in m["encapsulationKeyCheck"]["tests"][:2]:
    open(f"{out}/mlkem/ek-{t['tcId']}", "wb").write(b"\x01" + bytes.fromhex(t["ek"]))
for t in m["decapsulationKeyCheck"]["tests"][:3]:
    open(f"{out}/mlkem/dk-{t['tcId']}", "wb").write(b"\x02" + bytes.fromhex(t["dk"]))
t = m["keyGen"]["tests"][0]
open(f"{out}/mlkem/seeds", "wb").write(b"\x03" + bytes.fromhex(t["d"] + t["z"]) + bytes(range(33)))
h = json.load(open(vec + "hpke-xwing.json"))[0]
open(f"{out}/hpke-xwing/vector", "wb").write(b"\x00" + bytes.fromhex(h["enc"] + h["encryptions"][0]["ct"]))
open(f"{out}/hpke-xwing/seal", "wb").write(b"\x01" + bytes.fromhex(h["ikmE"]) + b"hello, vault")
PY
# The targets that seal their own inputs (Fuzz/FuzzItemSealed, FuzzAbsorb,
# FuzzKit, FuzzManifestEntries; each file documents its input layout).
python3 - "$corpus" <<'PY'
import hashlib, re, struct, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
out = sys.argv[1]
doc = open("docs/FORMAT.md").read()
# item-sealed: mode || flags || tail || body; forged records control || u16be length || plaintext.
rec = lambda control, plain, extra=b"": bytes([control]) + struct.pack(">H", len(plain)) + plain + extra
vector4 = bytes(j % 251 for j in range(4000))
for name, data in {
    "honest-vector4": bytes([1, 0x10, 0, 0]) + vector4, "honest-three-chunks": bytes([7, 0, 0, 127]) + vector4[:251],
    "forged-hello": bytes([0, 0, 0, 0]) + rec(0x11, b"hello, vault", b"\0"),
    "forged-three-chunks": bytes([0x08, 0, 0, 0]) + rec(0x08, b"a") + rec(0x08, b"b") + rec(0x31, bytes(32760), b"\0"),
}.items():
    open(out + "/item-sealed/" + name, "wb").write(data)
# absorb: the complete-vault vector's entry, as a file and as a folder.
def drop(kind, size, control, name, body, count=1):
    return (struct.pack(">BBHQQqq", kind, 1, 0o644, size, count, 1767225600, 1767139200)
            + bytes([control, 0]) + struct.pack(">H", len(name)) + name + body)
open(out + "/absorb/vector", "wb").write(drop(0, 12, 0, b"hello.txt", b"hello, vault"))
open(out + "/absorb/vector-folder", "wb").write(drop(1, 0, 0x1a, b"hello", bytes([0, 9]) + b"hello.txt" + bytes([12]) + b"hello, vault"))
# kit: an armored kit of the vector's vault id and KDF parameters.
A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
payload = b"VAULTKIT\1\1\0\0" + bytes(range(0x20, 0x30)) + struct.pack(">III", 256, 2, 1) + bytes(range(0x10, 0x20)) + bytes(60)
bits = "".join(f"{x:08b}" for x in payload) + "00"
text = "".join(A[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))
lines = ["-----BEGIN VAULT RECOVERY KIT-----"]
for n, i in enumerate(range(0, len(text), 20), 1):
    c = text[i:i + 20]
    h = hashlib.sha256(b"vault v1 kit line" + bytes([n]) + c.encode()).digest()
    sum10 = h[0] << 2 | h[1] >> 6
    lines.append(f"{n:02d} " + " ".join(c[j:j + 4] for j in range(0, len(c), 4)) + " " + A[sum10 >> 5] + A[sum10 & 31])
open(out + "/kit/vector-text", "wb").write(b"\0" + "\n".join(lines + ["-----END VAULT RECOVERY KIT-----"]).encode())
open(out + "/kit/vector-edits", "wb").write(b"\1" + payload + bytes([0, 1, 0, 1, 5, 9, 2, 2, 2, 4, 7, 7, 6, 0, 0]))
# manifest-entries: the vector's manifest plaintext (opened with its manifest key), then changes.
block = lambda title: bytes.fromhex("".join(re.search(re.escape(title) + r"[^\n]*\n\n((?:       [0-9a-f]+\n)+)", doc).group(1).split()))
key = bytes.fromhex(re.search(r"manifest key += ([0-9a-f]+)", doc).group(1))
m = block("`manifest` (holding the one entry")
# Manifest v2: magic, version, 3 zero bytes, generation (8), nonce (12), sealed.
plain = AESGCM(key).decrypt(m[20:32], m[32:], bytes(range(0x20, 0x30)) + m[:32])
op = lambda o, i, name: bytes([o, i]) + struct.pack(">H", len(name)) + name
open(out + "/manifest-entries/vector", "wb").write(bytes([0]) + struct.pack(">H", len(plain)) + plain
    + op(2, 0, b"hello.txt") + op(0, 1, b"hello (3).txt") + op(2, 0, b"hello.txt") + op(3, 0, b""))
PY
status=0
for target in $targets; do
    # Past findings first: each must no longer crash.
    for c in Fuzz/Corpus/"$target"/crash-*; do
        [ -e "$c" ] || continue
        if ! "$dir/fuzz-$target" "$c" >/dev/null 2>&1; then echo "fuzz: $target still fails on $c"; status=1; fi
    done
    find Fuzz/Corpus/"$target" -maxdepth 1 -type f ! -name 'crash-*' -exec cp {} "$corpus/$target/" \; 2>/dev/null || true
    echo "fuzzing $target for $seconds s"
    # The move parsers must never allocate more than one frame (4 MiB + 33) at a time.
    case $target in move-*) malloc=64 ;; xz) malloc=512 ;; *) malloc=4096 ;; esac
    # absorb and item-sealed cap their inputs (a run handles at most a few MiB).
    case $target in absorb) len=65536 ;; item-sealed|manifest-entries) len=70000 ;; zstd) len=262144 ;; kit) len=4096 ;; *) len=2200000 ;; esac
    (cd "$corpus" && "$OLDPWD/$dir/fuzz-$target" "$target" -max_total_time="$seconds" -max_len=$len -timeout=10 \
        -rss_limit_mb=4096 -malloc_limit_mb=$malloc -print_final_stats=1 -artifact_prefix="$target-" 2>&1) \
        | grep -E 'stat::number_of_executed_units|DONE|ERROR|SUMMARY|Fatal error|crash-|leak-|oom-|timeout-' || true
    # (Not `ls … | grep -q`: with pipefail, ls fails whenever one kind is missing.)
    found=$(find "$corpus" -maxdepth 1 \( -name "$target-crash-*" -o -name "$target-leak-*" -o -name "$target-oom-*" -o -name "$target-timeout-*" \))
    if [ -n "$found" ]; then
        echo "fuzz: $target found an input that fails: see $corpus"; status=1
    fi
done
exit $status
