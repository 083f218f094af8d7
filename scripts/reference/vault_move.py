#!/usr/bin/env python3
"""An independent SENDER for `vault move`, written from docs/FORMAT.md
("Device move": "Move code", "Key schedule", "Frames", "Handshake",
"Transfer") alone, on the Python standard library and the `cryptography`
package. It never erases anything: its `done` always says "kept".
It speaks both handshakes: version 1 (X25519) and version 2 (hybrid,
X-Wing from vault_hybrid.py: ML-KEM-768 from `cryptography`, and kyber-py
for the deterministic encapsulation of the version-2 test vector).

usage: vault_move.py send   VAULTDIR CODEFILE
       vault_move.py code   CODEFILE          prints the decoded code as JSON
       vault_move.py encode < JSON            prints the text form of a code
                                               (the JSON shape `code` prints)
       vault_move.py check-vector             checks the spec's vectors (the short-code
                                               one too: CPace on libsodium's ristretto255)

`send` connects to the code's addresses in order (the first that accepts
wins), prints "vault_move: security code: NNNNNN" on stderr once the receiver's
confirmation verified, sends the vault's files, and exits 0 only if the
receiver's receipt equals the one computed over what was sent. Errors go to
stderr as one line; exit status 1 (2 for usage).
"""
import base64
import fcntl
import hashlib
import hmac
import ipaddress
import json
import os
import re
import socket
import stat
import struct
import sys

from cryptography.hazmat.primitives.asymmetric import mlkem
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vault_hybrid  # noqa: E402  (X-Wing)


class MoveError(Exception):
    pass


def corrupted():
    # "Device move": every failure to parse, open or confirm reads the same.
    return MoveError("corrupted or tampered")


# --------------------------------------------------------------------------
# Move code ("Move code")

CHECKSUM_LABEL = b"vault v1 move code checksum"
RECEIVER_KEY_LABEL = b"vault v2 move receiver key"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def receiver_key_hash(pk):
    """Version 2's key field: SHA3-256(label || X-Wing public key)."""
    return hashlib.sha3_256(RECEIVER_KEY_LABEL + pk).digest()


def code_checksum(body):
    return hashlib.sha256(CHECKSUM_LABEL + body).digest()[:4]


def encode_code(addresses, port, key_field, token, version=1):
    """The code bytes: version || n || addresses || port || key || token ||
    checksum. The key field is the X25519 public key (version 1) or the
    hash of the X-Wing public key (version 2)."""
    if (version not in (1, 2) or not 1 <= len(addresses) <= 8 or not 1 <= port <= 65535
            or len(key_field) != 32 or len(token) != 16):
        raise MoveError("not a valid move code")
    body = bytes([version, len(addresses)])
    for a in addresses:
        ip = ipaddress.ip_address(a)
        body += (b"\x04" if ip.version == 4 else b"\x06") + ip.packed
    body += struct.pack(">H", port) + key_field + token
    return body + code_checksum(body)


def code_text(raw):
    """Text form: base32 (RFC 4648, no padding) in groups of 4 joined by '-'."""
    b32 = base64.b32encode(raw).decode("ascii").rstrip("=")
    return "-".join(b32[i:i + 4] for i in range(0, len(b32), 4))


def base32_decode_canonical(text):
    """Readers drop leading and trailing white space, ignore ASCII case,
    spaces and '-', read 0/1/8 as O/I/B, and require the canonical encoding
    (a possible length, unused low bits of the last character zero)."""
    if not text.isascii():
        raise MoveError("not a valid move code")
    s = re.sub(r"[ \-]", "", text.strip()).upper().translate(str.maketrans("018", "OIB"))
    if not s or any(c not in B32 for c in s) or len(s) % 8 in (1, 3, 6):
        raise MoveError("not a valid move code")
    bits, value, out = 0, 0, bytearray()
    for c in s:
        value = (value << 5) | B32.index(c)
        bits += 5
        if bits >= 8:
            bits -= 8
            out.append((value >> bits) & 0xFF)
            value &= (1 << bits) - 1
    if value != 0:  # the leftover (< 8) bits of the last character
        raise MoveError("not a valid move code")
    return bytes(out)


class MoveCode:
    def __init__(self, version, addresses, port, key_field, token):
        self.version, self.addresses, self.port, self.key_field, self.token = version, addresses, port, key_field, token

    def as_json(self):
        key = "public_key" if self.version == 1 else "receiver_key_hash"
        return {"version": self.version, "addresses": self.addresses, "port": self.port,
                key: self.key_field.hex(), "token": self.token.hex()}


def parse_code(raw):
    """Refuses any other version, n outside 1...8, another address tag, port
    0, a bad checksum, any byte missing or left over (61 to 192 bytes)."""
    bad = MoveError("not a valid move code")
    if not 61 <= len(raw) <= 192:
        raise bad
    body, checksum = raw[:-4], raw[-4:]
    if not hmac.compare_digest(code_checksum(body), checksum):
        raise bad
    if body[0] not in (0x01, 0x02) or not 1 <= body[1] <= 8:
        raise bad
    off, addresses = 2, []
    for _ in range(body[1]):
        if off >= len(body):
            raise bad
        tag = body[off]
        size = {0x04: 4, 0x06: 16}.get(tag)
        if size is None or off + 1 + size > len(body):
            raise bad
        packed = body[off + 1:off + 1 + size]
        addresses.append(str(ipaddress.IPv4Address(packed) if tag == 0x04 else ipaddress.IPv6Address(packed)))
        off += 1 + size
    if len(body) - off != 2 + 32 + 16:  # port, key, token: nothing missing or left over
        raise bad
    (port,) = struct.unpack(">H", body[off:off + 2])
    if port == 0:
        raise bad
    return MoveCode(body[0], addresses, port, body[off + 2:off + 34], body[off + 34:off + 50])


def read_code_file(path):
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        return parse_code(base32_decode_canonical(f.read()))


# --------------------------------------------------------------------------
# Key schedule ("Key schedule"): HKDF-SHA256 (RFC 5869), spelled out.

def hkdf_extract(salt, ikm):
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, length):
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


class Session:
    """Both sides' keys; `role` is this side's (0x01 sender, 0x02 receiver).
    Version 1 from X25519 keys (the constructor); version 2 from X-Wing's
    shared secret (`hybrid`)."""

    def __init__(self, own_private, peer_public, token, role):
        own_public = X25519PrivateKey.from_private_bytes(own_private).public_key().public_bytes_raw()
        if own_public == peer_public:  # reflection
            raise corrupted()
        try:
            shared = X25519PrivateKey.from_private_bytes(own_private).exchange(
                X25519PublicKey.from_public_bytes(peer_public))
        except ValueError:  # OpenSSL refuses an all-zero result itself
            raise corrupted()
        if shared == bytes(32):
            raise corrupted()
        receiver_pk, sender_pk = (peer_public, own_public) if role == 0x01 else (own_public, peer_public)
        self._derive(b"v1", hkdf_extract(token, shared), receiver_pk + sender_pk)
        self.role = role
        self.own_public = own_public

    @classmethod
    def hybrid(cls, shared, token, pk, ct, role):
        """Version 2: prk from X-Wing's shared secret; info = label || pk hash || ct."""
        if len(shared) != 32 or len(pk) != 1216 or len(ct) != 1120:
            raise corrupted()
        self = cls.__new__(cls)
        self._derive(b"v2", hkdf_extract(token, shared), receiver_key_hash(pk) + ct)
        self.role = role
        return self

    def _derive(self, version, prk, transcript):
        def expand(label, n):
            return hkdf_expand(prk, b"vault " + version + b" move " + label + transcript, n)
        self.s2r_key = expand(b"sender to receiver key", 32)
        self.r2s_key = expand(b"receiver to sender key", 32)
        self.confirm_key = expand(b"confirmation key", 32)
        sas = expand(b"sas", 8)
        self.sas = "%06d" % (struct.unpack(">Q", sas)[0] % 1000000)

    def confirmation(self, role):
        return hmac.new(self.confirm_key, b"vault v1 move key confirmation" + bytes([role]), hashlib.sha256).digest()


# --------------------------------------------------------------------------
# Frames ("Frames")

MIB = 1 << 20
MAX_SEALED = 4 * MIB + 33  # 16 <= L <= 4 MiB + 33


def frame_nonce(i):
    return bytes(4) + struct.pack(">Q", i)


def frame_aad(i, final):
    return struct.pack(">QB", i, 1 if final else 0)


class Sealer:
    def __init__(self, key):
        self.aead, self.i, self.finished = AESGCM(key), 0, False

    def seal(self, plaintext, final=False):
        if self.finished:  # "A sealer refuses to seal after the final frame."
            raise MoveError("sealing after the final frame")
        if len(plaintext) + 16 > MAX_SEALED:
            raise MoveError("frame too large")
        ct = self.aead.encrypt(frame_nonce(self.i), plaintext, frame_aad(self.i, final))
        self.i += 1
        self.finished = final
        return struct.pack(">I", len(ct)) + ct


class Opener:
    """Reads frames i = 0, 1, 2, ... of one direction from a socket."""

    def __init__(self, key, sock):
        self.aead, self.i, self.sock, self.finished, self.dead = AESGCM(key), 0, sock, False, False

    def _read_exact(self, n, inside):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 16))
            if not chunk:
                self.dead = True
                raise MoveError("connection ended inside a frame" if inside or buf
                                else "connection ended before the final frame")
            buf += chunk
        return bytes(buf)

    def open(self):
        """Returns (plaintext, final)."""
        if self.dead or self.finished:
            raise corrupted()
        (length,) = struct.unpack(">I", self._read_exact(4, inside=False))
        if not 16 <= length <= MAX_SEALED:  # checked from the prefix alone
            self.dead = True
            raise corrupted()
        body = self._read_exact(length, inside=True)
        # The final flag is not sent: try 0x00, then 0x01.
        for final in (False, True):
            try:
                pt = self.aead.decrypt(frame_nonce(self.i), body, frame_aad(self.i, final))
            except InvalidTag:
                continue
            self.i += 1
            self.finished = final
            return pt, final
        self.dead = True
        raise corrupted()


# --------------------------------------------------------------------------
# Messages ("Transfer")

OFFER, FILE, DATA, FILE_END, END, DONE, RECEIPT, REFUSED = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x11, 0x12
DATA_MAX = 4 * MIB
REFUSAL_REASONS = {0x01: "the target is not empty", 0x02: "no space", 0x03: "the received vault failed its check",
                   0x04: "wrong password", 0x05: "write failed"}


def msg_offer(count, total):
    return struct.pack(">BIQ", OFFER, count, total)


def msg_file(path, size):
    raw = path.encode("ascii")
    return struct.pack(">BQB", FILE, size, len(raw)) + raw


def msg_file_end(digest):
    return bytes([FILE_END]) + digest


RECEIPT_LABEL = b"vault v1 move receipt"


def receipt_part(path, size, digest):
    raw = path.encode("ascii")
    return bytes([len(raw)]) + raw + struct.pack(">Q", size) + digest


# --------------------------------------------------------------------------
# The vault's files ("Vault layout", "Transfer": what is moved, in what order)

HEX32 = re.compile(r"[0-9a-f]{32}")


def _is_regular(path):
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _require(path, want_dir):
    """"Vault layout": a vault is refused if one of its five paths is a
    symbolic link or of the wrong type."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise MoveError("not a vault: %s is missing" % path)
    if not (stat.S_ISDIR if want_dir else stat.S_ISREG)(st.st_mode):
        raise MoveError("corrupted or tampered: %s" % path)


def list_vault(vaultdir):
    """The files to send, as (relative path, absolute path, size), in the
    order "Transfer" gives: items/, inbox/ (a .item only with its envelope), then
    rekey.pending if present, manifest, vault.header last.
    ASSUMPTION (gap): the names inside items/ and inbox/ are sent in byte
    order, items/ before inbox/; names outside the layout (.tmp-*, an .item
    without its .env, anything else) are skipped, not refused."""
    _require(vaultdir, True)
    for name in ("vault.header", "manifest"):
        _require(os.path.join(vaultdir, name), False)
    for name in ("items", "inbox"):
        _require(os.path.join(vaultdir, name), True)
    out = []
    items = os.path.join(vaultdir, "items")
    for name in sorted(os.listdir(items), key=os.fsencode):
        if HEX32.fullmatch(name) and _is_regular(os.path.join(items, name)):
            out.append("items/" + name)
    inbox = os.path.join(vaultdir, "inbox")
    names = set(os.listdir(inbox))
    for name in sorted(names, key=os.fsencode):
        # <id>.env, <id>.item, or a batch drop-in's <batch id>.<id>.item,
        # whose envelope is <batch id>.env.
        m = re.fullmatch(r"([0-9a-f]{32})(\.[0-9a-f]{32})?\.(env|item)", name)
        if not m or (m.group(2) and m.group(3) == "env") or not _is_regular(os.path.join(inbox, name)):
            continue
        if m.group(3) == "item" and m.group(1) + ".env" not in names:
            continue  # a drop-in still being written stays
        out.append("inbox/" + name)
    if _is_regular(os.path.join(vaultdir, "rekey.pending")):
        out.append("rekey.pending")
    out += ["manifest", "vault.header"]
    return [(rel, os.path.join(vaultdir, rel), os.lstat(os.path.join(vaultdir, rel)).st_size) for rel in out]


def lock_vault(vaultdir):
    """ASSUMPTION (gap): the spec does not say the sender takes the writer
    lock; we hold an exclusive flock on `lock` (if present) for the whole
    move, so no absorb, rekey or edit changes the listed files under us."""
    path = os.path.join(vaultdir, "lock")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise MoveError("the vault is in use by another process")
    return fd


# --------------------------------------------------------------------------
# Connection and handshake ("Handshake")

CONNECT_TIMEOUT = 10  # ASSUMPTION (gap): the spec gives the sender no timeouts
IO_TIMEOUT = 300      # covers the receiver's syncfs + full check before its receipt


def connect(code):
    """ASSUMPTION (gap): addresses are tried one after another in code order;
    the first that accepts is used."""
    last = None
    for a in code.addresses:
        family = socket.AF_INET if ipaddress.ip_address(a).version == 4 else socket.AF_INET6
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(CONNECT_TIMEOUT)
        try:
            s.connect((a, code.port))
        except OSError as err:
            s.close()
            last = err
            continue
        s.settimeout(IO_TIMEOUT)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s
    raise MoveError("cannot connect to %s port %d: %s" % (", ".join(code.addresses), code.port, last))


RECEIVER_KEY_TAG, SENDER_KEY_TAG = 0x21, 0x22
HANDSHAKE_TIMEOUT = 30  # "Handshake": each side gives the other 30 seconds


def read_receiver_key(sock, code):
    """Version 2: exactly 0x21 || X-Wing public key (1216), whose hash is
    the code's key field (constant-time compare) and whose ML-KEM part
    passes FIPS 203's check; else "corrupted or tampered"."""
    sock.settimeout(HANDSHAKE_TIMEOUT)
    buf = bytearray()
    while len(buf) < 1 + vault_hybrid.XWING_PK_LEN:
        try:
            chunk = sock.recv(1 + vault_hybrid.XWING_PK_LEN - len(buf))
        except socket.timeout:
            chunk = b""
        if not chunk:
            raise MoveError("corrupted or tampered: the receiver's key message is cut short")
        buf += chunk
    sock.settimeout(IO_TIMEOUT)
    pk = bytes(buf[1:])
    if buf[0] != RECEIVER_KEY_TAG or not hmac.compare_digest(receiver_key_hash(pk), code.key_field):
        raise MoveError("corrupted or tampered: the receiver's key does not match the move code")
    try:
        mlkem.MLKEM768PublicKey.from_public_bytes(pk[:1184])  # FIPS 203 7.2 check
    except ValueError:
        raise MoveError("corrupted or tampered: the receiver's key fails its check")
    return pk


def handshake(sock, code):
    """Version 1: sender -> receiver: own public key (clear), frame 0 =
    sender's confirmation. Version 2: receiver -> sender: its X-Wing public
    key; sender -> receiver: 0x22 || X-Wing ciphertext, frame 0 = sender's
    confirmation. Both: receiver -> sender: frame 0 = receiver's
    confirmation, checked in constant time before anything else is sent."""
    if code.version == 1:
        own = X25519PrivateKey.generate().private_bytes_raw()
        session = Session(own, code.key_field, code.token, role=0x01)
        first = session.own_public
    else:
        pk = read_receiver_key(sock, code)
        ct, shared = vault_hybrid.xwing_encapsulate(pk)
        session = Session.hybrid(shared, code.token, pk, ct, role=0x01)
        first = bytes([SENDER_KEY_TAG]) + ct
    sealer, opener = Sealer(session.s2r_key), Opener(session.r2s_key, sock)
    sock.sendall(first + sealer.seal(session.confirmation(0x01)))
    try:
        answer, final = opener.open()
    except MoveError as err:
        if str(err).startswith("connection ended"):
            # "closed without an answer": the receiver did not hold our keys
            raise MoveError("corrupted or tampered: the receiver closed the connection without confirming "
                            "(the code's token or public key is not the receiver's)")
        raise
    if final or not hmac.compare_digest(answer, session.confirmation(0x02)):
        raise corrupted()
    return session, sealer, opener


# --------------------------------------------------------------------------
# Transfer ("Transfer")

def read_answer(opener):
    """The receiver's one message: `receipt` or `refused`, as its final frame."""
    pt, final = opener.open()
    if not final:
        raise corrupted()
    if len(pt) == 33 and pt[0] == RECEIPT:
        return pt[1:]
    if len(pt) == 2 and pt[0] == REFUSED and pt[1] in REFUSAL_REASONS:
        raise MoveError("the receiver refused the vault: " + REFUSAL_REASONS[pt[1]])
    raise corrupted()


def send_files(sock, sealer, files):
    """offer; per file: file, data (4 MiB each, the last shorter; none for an
    empty file), file end; then end. Returns the receipt over what was sent.
    ASSUMPTION (gap): data messages are as large as allowed (4 MiB) except a
    file's last one."""
    total = sum(size for _, _, size in files)
    if not 1 <= len(files) <= 1 << 20 or total > 1 << 50:
        raise MoveError("the vault is too large to move")
    sock.sendall(sealer.seal(msg_offer(len(files), total)))
    receipt = hashlib.sha256(RECEIPT_LABEL)
    for rel, path, size in files:
        if len(rel) > 76:
            raise MoveError("path too long: " + rel)
        sock.sendall(sealer.seal(msg_file(rel, size)))
        h, left = hashlib.sha256(), size
        with open(path, "rb") as f:
            while left > 0:
                chunk = f.read(min(left, DATA_MAX))
                if not chunk:
                    raise MoveError("%s changed while it was sent" % rel)
                h.update(chunk)
                left -= len(chunk)
                sock.sendall(sealer.seal(bytes([DATA]) + chunk))
            if f.read(1):
                raise MoveError("%s changed while it was sent" % rel)
        digest = h.digest()
        sock.sendall(sealer.seal(msg_file_end(digest)))
        receipt.update(receipt_part(rel, size, digest))
    sock.sendall(sealer.seal(bytes([END])))
    return receipt.digest()


def cmd_send(vaultdir, codefile):
    code = read_code_file(codefile)
    lock = lock_vault(vaultdir)
    try:
        files = list_vault(vaultdir)
        sock = connect(code)
        with sock:
            session, sealer, opener = handshake(sock, code)
            # "both then print the SAS" (prefixed like our other lines)
            print("vault_move: security code: %s" % session.sas, file=sys.stderr, flush=True)
            try:
                ours = send_files(sock, sealer, files)
            except (BrokenPipeError, ConnectionResetError):
                # ASSUMPTION (gap): the spec does not say whether a receiver
                # may answer `refused` before `end` (e.g. "no space" after
                # the offer); if our sending fails, read what it said.
                read_answer(opener)
                raise MoveError("connection ended")
            theirs = read_answer(opener)
            if not hmac.compare_digest(ours, theirs):
                # ASSUMPTION (gap): on a receipt mismatch no `done` is sent.
                raise MoveError("corrupted or tampered: the receiver's receipt differs from ours")
            # Step 4, with --keep: nothing is erased; `done` is our final frame.
            sock.sendall(sealer.seal(bytes([DONE, 0x02]), final=True))
            sock.shutdown(socket.SHUT_WR)
            # "any byte after the final frame" is refused: the receiver's
            # direction must now end cleanly.
            if sock.recv(1):
                raise corrupted()
    finally:
        if lock is not None:
            os.close(lock)
    print("vault_move: moved %d files; the receipt matched; this vault was kept" % len(files), file=sys.stderr)


# --------------------------------------------------------------------------
# The spec's vectors ("Device move" > "Transfer" and "Test vectors")

def _seq(a, b):
    return bytes(range(a, b + 1))


def check_vector():
    diffs = []

    def eq(what, got, want):
        if got != want:
            diffs.append("%s: got %s, want %s" % (what, got.hex() if isinstance(got, bytes) else got,
                                                   want.hex() if isinstance(want, bytes) else want))
    h = bytes.fromhex
    rsk, ssk, token = _seq(0x00, 0x1f), _seq(0x20, 0x3f), _seq(0x40, 0x4f)
    rpk = X25519PrivateKey.from_private_bytes(rsk).public_key().public_bytes_raw()
    eq("receiver public key", rpk, h("8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"))
    sender = Session(ssk, rpk, token, 0x01)
    eq("sender public key", sender.own_public, h("358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254"))
    receiver = Session(rsk, sender.own_public, token, 0x02)
    for s in (sender, receiver):
        eq("s2r key", s.s2r_key, h("dbf02472dcb771033a487495d8143a05a16709ac5202436cae1830796e570dad"))
        eq("r2s key", s.r2s_key, h("115c5b28e258aa79dcfde5fff57c6daefe4322c5dbd6fe43627954c98101bef3"))
        eq("confirm key", s.confirm_key, h("a9104f37fec016c111424966fe04201e0a6f8c7ed437c260574a5ef2a5ab1be8"))
        eq("SAS", s.sas, "467506")
    eq("sender confirmation", sender.confirmation(0x01),
       h("94a6881dac3f3d9e3e9029ecac656071602d8cf942da303b9b950ed13a4f7641"))
    eq("receiver confirmation", sender.confirmation(0x02),
       h("78e81aa54318175ecdb654d2dc5e6dbdf90bc46f9422d4dfeec7b1147cf5f7a3"))
    eq("frame 0", Sealer(sender.s2r_key).seal(b"hello", final=True),
       h("000000157b2c05cfa76dbea97f3ea468cfc9fa6be195f489b8"))
    # Move code
    raw = h("0102047f0000010600000000000000000000000000000001b0438f40c5adb68f25624ae5b214ea767a6ec94d"
            "829d3d7b5e1ad1ba6f3e2138285f404142434445464748494a4b4c4d4e4f9fe3b62d")
    text = ("AEBA-I7YA-AAAQ-MAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AANQ-IOHU-BRNN-W2HS-KYSK-4WZB-J2TW-"
            "PJXM-STMC-TU6X-WXQ2-2G5G-6PRB-HAUF-6QCB-IJBU-IRKG-I5EE-SSSL-JRGU-4T47-4O3C-2")
    eq("code bytes", encode_code(["127.0.0.1", "::1"], 45123, rpk, token), raw)
    eq("code text", code_text(raw), text)
    eq("code text decoded", base32_decode_canonical(text.lower().replace("O", "0")), raw)
    c = parse_code(raw)
    eq("code fields", json.dumps(c.as_json()),
       json.dumps({"version": 1, "addresses": ["127.0.0.1", "::1"], "port": 45123, "public_key": rpk.hex(),
                   "token": token.hex()}))
    for what, bad in [("bad checksum", raw[:-1] + bytes([raw[-1] ^ 1])), ("byte left over", raw + b"\0"),
                      ("byte missing", raw[:-1])]:
        try:
            parse_code(bad)
            diffs.append("code with a %s accepted" % what)
        except MoveError:
            pass
    try:
        base32_decode_canonical(text[:-1] + "3")  # '3' = 27: low bits set in the last character
        diffs.append("non-canonical base32 accepted")
    except MoveError:
        pass
    # Transfer
    eq("offer", msg_offer(3, 6), h("01000000030000000000000006"))
    eq("file", msg_file("manifest", 3), h("020000000000000003086d616e6966657374"))
    r = hashlib.sha256(RECEIPT_LABEL)
    for path, content in [("items/000102030405060708090a0b0c0d0e0f", b"abc"), ("manifest", b""),
                          ("vault.header", b"hdr")]:
        r.update(receipt_part(path, len(content), hashlib.sha256(content).digest()))
    eq("receipt", r.digest(), h("d69f0cf493ee434aa4a20d12516e514586dd44fc316ff7316c819d50f6056861"))
    diffs += check_hybrid_vector()
    diffs += check_short_code_vector()
    return diffs


def published_hybrid_vector():
    return published_vector("### Test vector: hybrid handshake")


def published_vector(heading):
    """The blocks of one FORMAT.md vector section: a line `name`: followed
    by indented lines, joined."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "FORMAT.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find(heading)
    if start < 0:
        return {}
    out, current = {}, None
    for line in text[start:].split("\n")[1:]:
        if line.startswith("#"):
            break
        if line.startswith("       ") and current:
            out[current] = out.get(current, "") + line.strip()
        elif line.startswith("`") and line.endswith(":"):
            current = line[1:].split("`")[0]
        elif line.strip():
            current = None
    return out


def check_hybrid_vector():
    """Rebuilds the version-2 handshake vector from its inputs: X-Wing seed
    00..1f, token 40..4f, encapsulation seed 60..9f (kyber-py's
    deterministic ML-KEM encapsulation), addresses 127.0.0.1 and ::1, port
    45123; both sides' keys from the same transcript."""
    diffs = []
    want = published_hybrid_vector()
    seed, token, eseed = _seq(0x00, 0x1f), _seq(0x40, 0x4f), _seq(0x60, 0x9f)
    _, _, pk = vault_hybrid.xwing_expand(seed)
    ct, ss = vault_hybrid.xwing_encapsulate(pk, eseed)
    ss_receiver = vault_hybrid.xwing_decapsulate(seed, ct)
    raw = encode_code(["127.0.0.1", "::1"], 45123, receiver_key_hash(pk), token, version=2)
    sender = Session.hybrid(ss, token, pk, ct, 0x01)
    receiver = Session.hybrid(ss_receiver, token, pk, ct, 0x02)
    got = {
        "receiver key message": (bytes([RECEIVER_KEY_TAG]) + pk).hex(),
        "receiver key hash": receiver_key_hash(pk).hex(),
        "move code": raw.hex(),
        "move code text": code_text(raw),
        "sender key message": (bytes([SENDER_KEY_TAG]) + ct).hex(),
        "s2r key": receiver.s2r_key.hex(),
        "r2s key": receiver.r2s_key.hex(),
        "confirm key": receiver.confirm_key.hex(),
        "sender confirmation": sender.confirmation(0x01).hex(),
        "receiver confirmation": receiver.confirmation(0x02).hex(),
        "SAS": sender.sas,
        "sender frame 0, final, hello": Sealer(sender.s2r_key).seal(b"hello", final=True).hex(),
    }
    if os.environ.get("VAULT_PRINT_VECTORS"):
        for k in sorted(got):
            print("VECTOR %s = %s" % (k, got[k]))
    if sorted(want) != sorted(got):
        diffs.append("hybrid vector names: FORMAT.md has %s" % sorted(want))
    for k in got:
        if want.get(k) != got[k]:
            diffs.append("hybrid %s: got %s, want %s" % (k, got[k], want.get(k)))
    for k in ("s2r_key", "r2s_key", "confirm_key", "sas"):
        if getattr(sender, k) != getattr(receiver, k):
            diffs.append("hybrid: the two sides' %s differ" % k)
    c = parse_code(base32_decode_canonical(got["move code text"]))
    if c.version != 2 or c.key_field != receiver_key_hash(pk) or c.token != token:
        diffs.append("hybrid code does not read back")
    return diffs


# Short code (version 3): CPace from FORMAT.md's "Short code (version 3)",
# on libsodium's ristretto255 through ctypes (the `cryptography` package has
# no ristretto255) and hashlib's SHA-512. Only the published vector is
# rebuilt: this reference does not send over a short code.

def _sodium():
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("sodium")
    if not name:
        raise MoveError("libsodium not found (for the short-code vector)")
    lib = ctypes.CDLL(name)
    if lib.sodium_init() < 0:
        raise MoveError("sodium_init failed")
    return lib, ctypes


def ristretto_from_hash(h64):
    lib, ctypes = _sodium()
    out = ctypes.create_string_buffer(32)
    if lib.crypto_core_ristretto255_from_hash(out, h64) != 0:
        raise corrupted()
    return out.raw


def ristretto_scalarmult(scalar, point):
    """scalar_mult_vfy: libsodium refuses a non-canonical point and an identity result."""
    lib, ctypes = _sodium()
    out = ctypes.create_string_buffer(32)
    if lib.crypto_scalarmult_ristretto255(out, scalar, point) != 0:
        raise corrupted()
    return out.raw


def leb128(n):
    out = b""
    while True:
        out += bytes([(n & 0x7f) | (0x80 if n >= 0x80 else 0)])
        n >>= 7
        if n == 0:
            return out


def lv_cat(*parts):
    return b"".join(leb128(len(p)) + p for p in parts)


CPACE_DSI = b"CPaceRistretto255"
SHORT_CODE_CI = b"vault v3 move short code"


def cpace_share(password, sid, scalar):
    g = ristretto_from_hash(hashlib.sha512(cpace_generator_string(password, sid)).digest())
    return ristretto_scalarmult(scalar, g)


def cpace_isk(scalar, sid, peer_share, ya, yb):
    k = ristretto_scalarmult(scalar, peer_share)
    return hashlib.sha512(lv_cat(CPACE_DSI + b"_ISK", sid, k) + lv_cat(ya, b"") + lv_cat(yb, b"")).digest()


def cpace_generator_string(password, sid):
    zpad = max(0, 128 - 1 - len(leb128(len(password)) + password) - len(leb128(len(CPACE_DSI)) + CPACE_DSI))
    return lv_cat(CPACE_DSI, password, bytes(zpad), SHORT_CODE_CI, sid)


SHORT_CODE_INPUTS = ("ya", "yb")


def check_short_code_vector():
    """Rebuilds FORMAT.md's "Test vector: short-code handshake": password
    41237-guitar-orbit-velvet, sid 80..8f, the draft's ya and yb (read from
    the section: its inputs), and the hybrid vector's X-Wing seed and eseed."""
    diffs = []
    want = published_vector("### Test vector: short-code handshake")
    password, sid = b"41237-guitar-orbit-velvet", _seq(0x80, 0x8f)
    ya, yb = bytes.fromhex(want.get("ya", "")), bytes.fromhex(want.get("yb", ""))
    want = {k: v for k, v in want.items() if k not in SHORT_CODE_INPUTS}
    share_a, share_b = cpace_share(password, sid, ya), cpace_share(password, sid, yb)
    isk = cpace_isk(ya, sid, share_b, share_a, share_b)
    generator_string = cpace_generator_string(password, sid)
    k = ristretto_scalarmult(ya, share_b)
    if ristretto_scalarmult(yb, share_a) != k:
        diffs.append("short code: the two sides' K differ")
    isk_input = lv_cat(CPACE_DSI + b"_ISK", sid, k) + lv_cat(share_a, b"") + lv_cat(share_b, b"")
    if hashlib.sha512(isk_input).digest() != isk:
        diffs.append("short code: ISK is not SHA-512 of the ISK input")
    if cpace_isk(yb, sid, share_a, share_a, share_b) != isk:
        diffs.append("short code: the two sides' ISK differ")
    _, _, pk = vault_hybrid.xwing_expand(_seq(0x00, 0x1f))
    ct, ss = vault_hybrid.xwing_encapsulate(pk, _seq(0x60, 0x9f))
    prk = hkdf_extract(isk, ss)
    s = Session.__new__(Session)
    s._derive(b"v3", prk, sid + share_a + share_b + receiver_key_hash(pk) + ct)
    got = {
        "generator string": generator_string.hex(),
        "g": ristretto_from_hash(hashlib.sha512(generator_string).digest()).hex(),
        "K": k.hex(),
        "ISK input": isk_input.hex(),
        "sender share message": (b"\x31" + sid + share_a).hex(),
        "receiver share message, first 33 bytes": (b"\x32" + share_b).hex(),
        "ISK": isk.hex(),
        "s2r key": s.s2r_key.hex(),
        "r2s key": s.r2s_key.hex(),
        "confirm key": s.confirm_key.hex(),
        "sender confirmation": s.confirmation(0x01).hex(),
        "receiver confirmation": s.confirmation(0x02).hex(),
        "SAS": s.sas,
    }
    if sorted(want) != sorted(got):
        diffs.append("short-code vector names: FORMAT.md has %s" % sorted(want))
    for k in got:
        if want.get(k) != got[k]:
            diffs.append("short code %s: got %s, want %s" % (k, got[k], want.get(k)))
    return diffs


def main(argv):
    try:
        if len(argv) == 4 and argv[1] == "send":
            cmd_send(argv[2], argv[3])
            return 0
        if len(argv) == 3 and argv[1] == "code":
            print(json.dumps(read_code_file(argv[2]).as_json()))
            return 0
        if len(argv) == 2 and argv[1] == "encode":
            j = json.load(sys.stdin)
            version = j.get("version", 1)
            key = j["public_key"] if version == 1 else j["receiver_key_hash"]
            print(code_text(encode_code(j["addresses"], j["port"], bytes.fromhex(key), bytes.fromhex(j["token"]),
                                        version)))
            return 0
        if len(argv) == 2 and argv[1] == "check-vector":
            diffs = check_vector()
            for d in diffs:
                print(d)
            if diffs:
                return 1
            print("ok")
            return 0
        print(__doc__.strip(), file=sys.stderr)
        return 2
    except MoveError as err:
        print("vault_move: %s" % err, file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as err:
        print("vault_move: %s" % err, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
