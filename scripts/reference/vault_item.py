#!/usr/bin/env python3
"""An independent implementation of the vault item format, written from
docs/FORMAT.md ("Item content") alone, on the Python `cryptography` package.

It exists to prove the spec is complete: the test suite checks that this
reader and the Swift implementation agree byte for byte on the published test
vectors, and `make fuzz` uses it to write seed inputs.

usage: vault_item.py seal KEYHEX IDHEX PREFIXHEX FLAGS < plaintext > sealed
       vault_item.py open KEYHEX < sealed > plaintext
"""
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAGIC = b"VAULTITM"
VERSION, SUITE = 1, 1
HEADER_LEN = 36
CHUNK = 1 << 20
TAG = 16


def padme(n):
    if n < 2:
        return n
    e = n.bit_length() - 1
    s = e.bit_length()
    mask = (1 << (e - s)) - 1
    return (n + mask) & ~mask


def seal(key, item_id, prefix, flags, content):
    header = MAGIC + bytes([VERSION, SUITE]) + struct.pack(">H", flags) + item_id + prefix
    stream_len = padme(len(content) + 8)
    stream = content + bytes(stream_len - len(content) - 8) + struct.pack(">Q", len(content))
    chunks = [stream[i:i + CHUNK] for i in range(0, len(stream), CHUNK)]
    out = [header]
    aead = AESGCM(key)
    for i, c in enumerate(chunks):
        final = 1 if i == len(chunks) - 1 else 0
        out.append(aead.encrypt(prefix + struct.pack(">I", i), c, header + struct.pack(">IB", i, final)))
    return b"".join(out)


class Corrupted(Exception):
    pass


class NewerFormat(Corrupted):
    """A flag bit this reader does not know (bits 3 to 15): "a format this
    version cannot read (or damage)", found from the header alone."""
    def __init__(self, flags):
        super().__init__("a format this version cannot read (item flags 0x%x)" % flags)
        self.flags = flags


def open_(key, sealed):
    if len(sealed) < HEADER_LEN + TAG + 8:
        raise Corrupted()
    header = sealed[:HEADER_LEN]
    if header[:8] != MAGIC or header[8] != VERSION or header[9] != SUITE:
        raise Corrupted()
    flags = struct.unpack(">H", header[10:12])[0]
    if flags & ~0x7:  # an unknown bit: reported as such, before the codec rule and any chunk
        raise NewerFormat(flags)
    if (flags & 0x5) == 0x5:  # both codecs (xz, zstd)
        raise Corrupted()
    prefix = header[28:36]
    body = sealed[HEADER_LEN:]
    n = -(-len(body) // (CHUNK + TAG))
    if len(body) - (n - 1) * (CHUNK + TAG) <= TAG:
        raise Corrupted()
    aead = AESGCM(key)
    stream = bytearray()
    for i in range(n):
        c = body[i * (CHUNK + TAG):(i + 1) * (CHUNK + TAG)]
        final = 1 if i == n - 1 else 0
        try:
            stream += aead.decrypt(prefix + struct.pack(">I", i), c, header + struct.pack(">IB", i, final))
        except Exception:
            raise Corrupted()
    length = struct.unpack(">Q", stream[-8:])[0]
    if length > len(stream) - 8 or padme(length + 8) != len(stream) or any(stream[length:-8]):
        raise Corrupted()
    return bytes(stream[:length])


if __name__ == "__main__":
    data = sys.stdin.buffer.read()
    if sys.argv[1] == "seal":
        key, iid, prefix = (bytes.fromhex(a) for a in sys.argv[2:5])
        sys.stdout.buffer.write(seal(key, iid, prefix, int(sys.argv[5]), data))
    elif sys.argv[1] == "open":
        try:
            sys.stdout.buffer.write(open_(bytes.fromhex(sys.argv[2]), data))
        except Corrupted:
            sys.exit("vault_item: corrupted or tampered")
    else:
        sys.exit(__doc__)
