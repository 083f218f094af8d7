"""Version-2 and version-3 vault headers (key slots, X-Wing public key; version
3 adds a checksum) and X-Wing drop-in envelopes, for vault_read.py and
vault_dropin.py, written from docs/FORMAT.md ("Vault header, version 2",
"Vault header, version 3", "Drop-in envelope", "Test vector: a hybrid vault",
"Test vector: a version-3 header") and draft-connolly-cfrg-xwing-kem-10.

X-Wing is built here from its parts: ML-KEM-768 from Python `cryptography`
(OpenSSL; keys from the seed d || z, decapsulation, random encapsulation) and,
for the deterministic encapsulation the test vector needs, kyber-py's
Encaps_internal; X25519 from `cryptography`; SHA3-256 and SHAKE256 from
hashlib. HPKE's key schedule is vault_read.py's, with the X-Wing suite id.
"""
import hashlib
import hmac
import struct
import unicodedata

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric import mlkem
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

XWING_KEM_ID = 0x647A
XWING_PK_LEN = 1216
XWING_CT_LEN = 1120
XWING_LABEL = b"\\.//^\\"
HPKE_SUITE_XWING = b"HPKE" + struct.pack(">HHH", XWING_KEM_ID, 0x0001, 0x0002)

V2_FIXED = 8 + 1 + 16 + 2 + 2 + XWING_PK_LEN + 1
MAX_SLOT = 2 + 32 + 8 + 1 + 64 + 12 + 48
V2_MAX = V2_FIXED + 8 * MAX_SLOT + 32
V3_CHECKSUM_LABEL = b"vault v3 header checksum"
V3_MAX = V2_MAX + 32


class HybridError(Exception):
    pass


# --------------------------------------------------------------------------
# X-Wing

def _x25519(sk, pk):
    try:
        return X25519PrivateKey.from_private_bytes(sk).exchange(X25519PublicKey.from_public_bytes(pk))
    except ValueError:  # cryptography refuses an all-zero result; X-Wing would go on
        raise HybridError("x25519 low-order point")


def _x25519_base(sk):
    return X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes_raw()


def xwing_expand(seed):
    """(ML-KEM private key, X25519 secret, public key) from the 32-byte seed."""
    expanded = hashlib.shake_256(seed).digest(96)
    sk_m = mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[0:64])
    sk_x = expanded[64:96]
    pk = sk_m.public_key().public_bytes_raw() + _x25519_base(sk_x)
    return sk_m, sk_x, pk


def xwing_combine(ss_m, ss_x, ct_x, pk_x):
    return hashlib.sha3_256(ss_m + ss_x + ct_x + pk_x + XWING_LABEL).digest()


def xwing_decapsulate(seed, ct):
    sk_m, sk_x, pk = xwing_expand(seed)
    ct_m, ct_x = ct[0:1088], ct[1088:1120]
    ss_m = sk_m.decapsulate(ct_m)
    return xwing_combine(ss_m, _x25519(sk_x, ct_x), ct_x, pk[1184:1216])


def xwing_encapsulate(pk, eseed=None):
    """(ct, ss). Random with eseed None (cryptography's ML-KEM); with a
    64-byte eseed, deterministic (kyber-py's Encaps_internal)."""
    pk_m, pk_x = pk[0:1184], pk[1184:1216]
    if eseed is None:
        import secrets
        ek_x = secrets.token_bytes(32)
        ss_m, ct_m = mlkem.MLKEM768PublicKey.from_public_bytes(pk_m).encapsulate()
    else:
        from kyber_py.ml_kem import ML_KEM_768
        ek_x = eseed[32:64]
        ss_m, ct_m = ML_KEM_768._encaps_internal(pk_m, eseed[0:32])
    ct_x = _x25519_base(ek_x)
    ss = xwing_combine(ss_m, _x25519(ek_x, pk_x), ct_x, pk_x)
    return ct_m + ct_x, ss


# --------------------------------------------------------------------------
# HPKE with X-Wing (KEM 0x647A: the shared secret is X-Wing's), base mode

def _key_schedule(vr, shared_secret, info):
    le, lx = vr.labeled_expand, vr.labeled_extract
    s = HPKE_SUITE_XWING
    context = bytes([0]) + lx(s, b"", b"psk_id_hash", b"") + lx(s, b"", b"info_hash", info)
    secret = lx(s, shared_secret, b"secret", b"")
    return le(s, secret, b"key", context, 32), le(s, secret, b"base_nonce", context, 12)


def envelope_info(vault_id):
    return b"vault v1 drop-in" + vault_id + struct.pack(">H", XWING_KEM_ID)


def hpke_open(vr, seed, enc, info, aad, ct):
    key, nonce = _key_schedule(vr, xwing_decapsulate(seed, enc), info)
    return AESGCM(key).decrypt(nonce, ct, aad)


def hpke_seal(vr, pk, info, aad_prefix, pt, eseed=None):
    """(envelope prefix || ct): aad is aad_prefix || enc."""
    enc, ss = xwing_encapsulate(pk, eseed)
    key, nonce = _key_schedule(vr, ss, info)
    aad = aad_prefix + enc
    return aad + AESGCM(key).encrypt(nonce, pt, aad)


# --------------------------------------------------------------------------
# Version-2 header

class Slot:
    pass


def slot_name_valid(name):
    """FORMAT.md "Vault header, version 2": 1 to 32 bytes of UTF-8, each
    scalar Alphabetic, an ASCII digit or one of -_.@. Alphabetic is taken
    here as the letter categories and Nl from Python's unicodedata; the
    Other_Alphabetic marks (and So letters such as circled ones) that
    Unicode's property adds are not covered, so such a name is refused
    here though vault accepts it."""
    return 1 <= len(name.encode("utf-8")) <= 32 and all(
        unicodedata.category(c) in ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl") or c in "0123456789-_.@" for c in name)


def slot_names_unique(names):
    """Unique under canonical equivalence: no two with the same NFC form."""
    return len({unicodedata.normalize("NFC", n) for n in names}) == len(names)


def check_slot_names(format_md):
    """The `slot-names` block of FORMAT.md: valid, invalid, and pairs that
    are the same name."""
    diffs = []
    text = open(format_md, encoding="utf-8").read()
    start, end = text.find("<!-- slot-names -->"), text.find("<!-- end slot-names -->")
    if start < 0 or end < 0:
        return ["slot-names: no block in FORMAT.md"]
    for line in text[start:end].split("\n")[1:]:
        if not line.strip():
            continue
        kind, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        if kind == "valid" and not slot_name_valid(rest):
            diffs.append("slot name %r: refused here, valid in FORMAT.md" % rest)
        elif kind == "invalid" and slot_name_valid(rest):
            diffs.append("slot name %r: accepted here, invalid in FORMAT.md" % rest)
        elif kind == "same":
            pair = rest.split(" ")
            if len(pair) != 2 or pair[0] == pair[1] or slot_names_unique(pair):
                diffs.append("slot names %r: not the same name here" % pair)
        elif kind not in ("valid", "invalid", "same"):
            diffs.append("slot-names: bad line %r" % line)
    return diffs


def v3_checksum(signed):
    return hashlib.sha256(V3_CHECKSUM_LABEL + signed).digest()


def parse_header_v2(vr, h, v):
    """The checks before any KDF; fills v (vault_read's Vault). A version-3
    header's checksum comes first: failing it (or the size) is damage, told
    apart from a wrong password; then it is read as version 2 without it."""
    corrupted = vr.corrupted
    version = h[8]
    counter_len = 8 if version == 4 else 0  # version 4: a header counter u64be before the MAC
    if version in (3, 4):
        if not (V2_FIXED + counter_len + 64 < len(h) <= V3_MAX + counter_len) \
                or not hmac.compare_digest(v3_checksum(h[:-32]), h[-32:]):
            raise vr.VaultError("header damaged")
        h = h[:-32]
    if not (V2_FIXED + counter_len + 32 < len(h) <= V2_MAX + counter_len):
        raise corrupted()
    options, kem = struct.unpack(">HH", h[25:29])
    if options & ~0x0001 or kem != XWING_KEM_ID:
        raise corrupted()
    pk = h[29:29 + XWING_PK_LEN]
    try:
        mlkem.MLKEM768PublicKey.from_public_bytes(pk[0:1184])  # FIPS 203 7.2 check
    except ValueError:
        raise corrupted()
    n = h[V2_FIXED - 1]
    if not 1 <= n <= 8:
        raise corrupted()
    body, off, slots = h[:-32 - counter_len], V2_FIXED, []
    v.counter = struct.unpack(">Q", h[-40:-32])[0] if counter_len else 0
    for _ in range(n):
        s = Slot()
        if off + 2 > len(body):
            raise corrupted()
        start = off
        s.kind, ln = body[off], body[off + 1]
        off += 2
        if s.kind == 0 or not 1 <= ln <= 32 or off + ln + 9 > len(body):
            raise corrupted()
        try:
            s.name = body[off:off + ln].decode("utf-8")
        except UnicodeDecodeError:
            raise corrupted()
        if not slot_name_valid(s.name):
            raise corrupted()
        off += ln
        s.created = struct.unpack(">q", body[off:off + 8])[0]
        plen = body[off + 8]
        off += 9
        s.params = body[off:off + plen]
        off += plen
        if len(s.params) != plen:
            raise corrupted()
        if s.kind == 1:
            if plen != 28:
                raise corrupted()
            s.m, s.t, s.p = struct.unpack(">III", s.params[0:12])
            if not (1 <= s.p <= 8) or not (8 * s.p <= s.m <= 2097152) or not (1 <= s.t <= 16):
                raise corrupted()
            s.salt = s.params[12:28]
        elif s.kind == 2:
            if plen != 16:
                raise corrupted()
            s.salt = s.params
        elif plen > 64:
            raise corrupted()
        s.aad_tail = body[start:off]
        s.nonce, s.wrapped = body[off:off + 12], body[off + 12:off + 60]
        off += 60
        if len(s.wrapped) != 48:
            raise corrupted()
        slots.append(s)
    if off != len(body) or not slot_names_unique([s.name for s in slots]) or not any(s.kind in (1, 2) for s in slots):
        raise corrupted()
    v.header, v.version = h, version  # a version-3/4 header without its checksum: the MAC is its last 32 bytes
    v.vault_id, v.options, v.public_key = h[9:25], options, pk
    v.slots, v.mac = slots, h[-32:]
    return v


def unlock_v2(vr, v, password):
    """Tries each password slot in order."""
    for s in v.slots:
        if s.kind != 1:
            continue
        kek = vr.kek_from_password(password, s.salt, s.m, s.t, s.p)
        try:
            vmk = AESGCM(kek).decrypt(s.nonce, s.wrapped, b"VAULTHDR\x02" + v.vault_id + s.aad_tail)
        except InvalidTag:
            continue
        v.kek, v.vmk, v.slot = kek, vmk, s.name
        v.mac_key, v.manifest_key, v.x_priv, _ = vr.derive_keys(vmk, v.vault_id)
        v.xwing_seed = vr.hkdf(vmk, v.vault_id, b"vault v1 x-wing seed", 32)
        if not hmac.compare_digest(hmac.new(v.mac_key, v.header[:-32], hashlib.sha256).digest(), v.mac):
            raise vr.corrupted()
        if not hmac.compare_digest(xwing_expand(v.xwing_seed)[2], v.public_key):
            raise vr.corrupted()
        return v
    raise vr.VaultError("wrong password")


def open_envelope_v2(vr, v, data, batch=False):
    """The X-Wing envelope's plaintext: version 2 (one entry) or, with
    batch, version 4 (a batch of entries), suite 2."""
    n = 10 + XWING_CT_LEN
    most = vr.BATCH_PAYLOAD_MAX if batch else vr.ENTRY_FIXED + vr.MAX_NAME + 16
    if not (n + 16 < len(data) <= n + most) or data[9] != 2:
        raise vr.corrupted()
    seed = getattr(v, "xwing_seed", None) or vr.hkdf(v.vmk, v.vault_id, b"vault v1 x-wing seed", 32)
    label = b"vault v1 drop-in batch" if batch else b"vault v1 drop-in"
    try:
        return hpke_open(vr, seed, data[10:n], label + v.vault_id + struct.pack(">H", XWING_KEM_ID), data[0:n], data[n:])
    except (InvalidTag, HybridError):
        raise vr.corrupted()


# --------------------------------------------------------------------------
# The hybrid test vector, read from docs/FORMAT.md

def published_vectors(format_md, section="## Test vector: a hybrid vault"):
    text = open(format_md, encoding="utf-8").read()
    i = text.find(section)
    out, current = {}, None
    if i < 0:
        return out
    for line in text[i:].split("\n")[1:]:
        if line.startswith("## "):
            break
        if line.startswith("       ") and current:
            out[current] = out.get(current, "") + line.strip()
        elif line.startswith("`") and line.endswith(":"):
            current = line[:-1].split("`")[1]
        elif line.strip():
            current = None
    return out


def fingerprint(public_key):
    """FORMAT.md "Public key fingerprint": the first 16 bytes of SHA-256 of
    the header's public key field, hex in groups of four joined by '-'."""
    h = hashlib.sha256(public_key).hexdigest()[:32]
    return "-".join(h[i:i + 4] for i in range(0, 32, 4))


def check_vector(vr, format_md):
    """Recomputes every published value from the inputs, independently."""
    diffs = []
    pub = published_vectors(format_md)
    seq = vr._seq
    password = b"correct horse battery staple"
    salt, vault_id, vmk, nonce = seq(0x10, 0x1f), seq(0x20, 0x2f), seq(0x40, 0x5f), seq(0x60, 0x6b)
    eseed = bytes((0xd0 + i) & 0xff for i in range(64))
    kek = vr.kek_from_password(password, salt, 256, 2, 1)
    mac_key, _, _, _ = vr.derive_keys(vmk, vault_id)
    seed = vr.hkdf(vmk, vault_id, b"vault v1 x-wing seed", 32)
    _, _, pk = xwing_expand(seed)
    got = {"x-wing seed": seed.hex(), "SHA-256(x-wing public key)": hashlib.sha256(pk).hexdigest(),
           "public key fingerprint": fingerprint(pk)}
    name = b"password"
    describing = bytes([1, len(name)]) + name + struct.pack(">q", 1767225600) + bytes([28]) \
        + struct.pack(">III", 256, 2, 1) + salt
    wrapped = AESGCM(kek).encrypt(nonce, vmk, b"VAULTHDR\x02" + vault_id + describing)
    unsigned = b"VAULTHDR\x02" + vault_id + struct.pack(">HH", 0, XWING_KEM_ID) + pk + bytes([1]) \
        + describing + nonce + wrapped
    header = unsigned + hmac.new(mac_key, unsigned, hashlib.sha256).digest()
    got["vault.header"] = header.hex()
    entry = vr.VEC_ENTRY
    raw_name = entry["name"].encode()
    payload = vr.VEC_ITEM_ID + vr.VEC_FILE_KEY + bytes([entry["kind"], entry["origin"]]) + struct.pack(
        ">HQQqqH", entry["mode"], entry["size"], entry["count"], entry["added"], entry["modified"],
        len(raw_name)) + raw_name
    envelope = hpke_seal(vr, pk, envelope_info(vault_id), vr.ENV_MAGIC + bytes([2, 2]), payload, eseed)
    got["inbox/707172737475767778797a7b7c7d7e7f.env"] = envelope.hex()
    if set(pub) != set(got):
        diffs.append("hybrid vector names: FORMAT.md has %s" % sorted(pub))
    for k, val in got.items():
        if pub.get(k) != val:
            diffs.append("hybrid %s: got %s, spec says %s" % (k, val[:64] + "...", (pub.get(k) or "-")[:64] + "..."))
    # And it reads back: parse, unlock, open the envelope.
    try:
        v = vr.Vault()
        parse_header_v2(vr, bytes.fromhex(pub.get("vault.header", "")), v)
        unlock_v2(vr, v, password)
        pt = open_envelope_v2(vr, v, bytes.fromhex(pub.get("inbox/707172737475767778797a7b7c7d7e7f.env", "")))
        if pt != payload:
            diffs.append("hybrid envelope payload differs")
    except Exception as err:  # noqa: BLE001  (any failure is a difference)
        diffs.append("hybrid vault: %s" % err)
    diffs += check_slot_names(format_md)
    diffs += check_vector_v3(vr, format_md, unsigned, mac_key, password, vmk)
    diffs += check_vector_v4(vr, format_md, unsigned, mac_key, password, vmk)
    return diffs


def check_vector_v3(vr, format_md, unsigned_v2, mac_key, password, vmk):
    """The version-3 vector: the hybrid header's bytes with 0x03, its own MAC
    and the checksum; it opens, and a flipped bit is damage, not a password."""
    diffs = []
    pub = published_vectors(format_md, "## Test vector: a version-3 header")
    unsigned = unsigned_v2[:8] + b"\x03" + unsigned_v2[9:]
    signed = unsigned + hmac.new(mac_key, unsigned, hashlib.sha256).digest()
    header = signed + v3_checksum(signed)
    got = {"vault.header": header.hex(), "header checksum": header[-32:].hex()}
    if set(pub) != set(got):
        diffs.append("version-3 vector names: FORMAT.md has %s" % sorted(pub))
    for k, val in got.items():
        if pub.get(k) != val:
            diffs.append("v3 %s: got %s, spec says %s" % (k, val[:64] + "...", (pub.get(k) or "-")[:64] + "..."))
    try:
        published = bytes.fromhex(pub.get("vault.header", ""))
        v = unlock_v2(vr, parse_header_v2(vr, published, vr.Vault()), password)
        if v.version != 3 or v.vmk != vmk:
            diffs.append("v3 header: opened as version %d with another VMK" % v.version)
        for i in (9, 1245, 1300, len(published) - 40, len(published) - 1):
            damaged = bytearray(published)
            damaged[i] ^= 0x04
            try:
                parse_header_v2(vr, bytes(damaged), vr.Vault())
                diffs.append("v3 header: a flipped bit at %d parsed" % i)
            except vr.VaultError as err:
                if str(err) != "header damaged":
                    diffs.append("v3 header: a flipped bit at %d read as %s" % (i, err))
    except Exception as err:  # noqa: BLE001  (any failure is a difference)
        diffs.append("v3 header: %s" % err)
    return diffs


V4_COUNTER = 0x0102030405060708


def check_vector_v4(vr, format_md, unsigned_v2, mac_key, password, vmk):
    """The version-4 vector: the hybrid header's bytes with 0x04, the counter
    (u64be) before its own MAC, then the checksum; it opens with its counter,
    and a version-3 relabelling without the counter fails the MAC."""
    diffs = []
    pub = published_vectors(format_md, "## Test vector: a version-4 header")
    unsigned = unsigned_v2[:8] + b"\x04" + unsigned_v2[9:] + struct.pack(">Q", V4_COUNTER)
    signed = unsigned + hmac.new(mac_key, unsigned, hashlib.sha256).digest()
    header = signed + v3_checksum(signed)
    got = {"vault.header": header.hex(), "header counter": header[-72:-64].hex()}
    if set(pub) != set(got):
        diffs.append("version-4 vector names: FORMAT.md has %s" % sorted(pub))
    for k, val in got.items():
        if pub.get(k) != val:
            diffs.append("v4 %s: got %s, spec says %s" % (k, val[:64] + "...", (pub.get(k) or "-")[:64] + "..."))
    try:
        published = bytes.fromhex(pub.get("vault.header", ""))
        v = unlock_v2(vr, parse_header_v2(vr, published, vr.Vault()), password)
        if v.version != 4 or v.vmk != vmk or v.counter != V4_COUNTER:
            diffs.append("v4 header: opened as version %d, counter %d" % (v.version, v.counter))
        body = published[:-32]
        v3 = body[:8] + b"\x03" + body[9:-40] + body[-32:]
        try:
            unlock_v2(vr, parse_header_v2(vr, v3 + v3_checksum(v3), vr.Vault()), password)
            diffs.append("v4 header: relabelled version 3 without its counter, it opened")
        except vr.VaultError:
            pass
    except Exception as err:  # noqa: BLE001  (any failure is a difference)
        diffs.append("v4 header: %s" % err)
    return diffs
