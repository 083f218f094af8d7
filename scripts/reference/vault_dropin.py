#!/usr/bin/env python3
"""Drops an arbitrary content file into a vault's inbox, as `vault add` does,
written from docs/FORMAT.md ("Drop-in envelope", "Manifest entry", "Item
content") and using only what `vault add` may use: the vault header's public
key and vault id. No password, no secret. To a version-2, -3 or -4 header it seals
an X-Wing envelope (vault_hybrid.py), to a version-1 header an X25519 one.

It is the mirror of vault_read.py's envelope opening (RFC 9180 HPKE base
mode, SetupBaseS + Seal), and lets tests put content into a vault that the
CLI would never write itself, such as a hostile pax archive as a folder item.

usage: vault_dropin.py VAULTDIR NAME KIND < content
       KIND is "file" (kind 0) or "folder" (kind 1: the content is taken as
       a pax archive, item flag bit 1). Prints the new item id in hex.

The entry says: origin 1 (dropped in), mode 0o644 (file) or 0o755 (folder),
added and modified = now; for a file, size = the content length and file
count 1; for a folder, the sum of the sizes and the number of the archive's
regular files (read with Python's tarfile, which only lists the entries).
"""
import os
import io
import secrets
import tarfile
import struct
import sys
import time

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vault_item  # noqa: E402
import vault_hybrid  # noqa: E402
import vault_read  # noqa: E402
from vault_read import (ENV_MAGIC, envelope_info, hpke_seal_base_with_ephemeral,  # noqa: E402
                        parse_header)


def entry_bytes(item_id, file_key, kind, mode, size, count, added, modified, name):
    raw_name = name.encode("utf-8")
    return (item_id + file_key + bytes([kind, 1])
            + struct.pack(">HQQqqH", mode, size, count, added, modified, len(raw_name)) + raw_name)


def write_new(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def drop_in(vaultdir, name, kind, content):
    with open(os.path.join(vaultdir, "vault.header"), "rb") as f:
        header = f.read(vault_hybrid.V2_MAX + 1)
    v = parse_header(header)  # the checks before Argon2; public key and vault id
    item_id, file_key, prefix = secrets.token_bytes(16), secrets.token_bytes(32), secrets.token_bytes(8)
    now = int(time.time())
    folder = kind == 1
    size, count = len(content), 1
    if folder:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:") as tf:
            files = [m for m in tf.getmembers() if m.isreg()]
        size, count = sum(m.size for m in files), len(files)
    entry = entry_bytes(item_id, file_key, kind, 0o755 if folder else 0o644, size, count, now, now, name)
    sealed = vault_item.seal(file_key, item_id, prefix, 0x0002 if folder else 0, content)
    if v.version in (2, 3, 4):
        # X-Wing: magic || 0x02 || 0x02 || enc (1120) || Seal(aad = bytes 0..<1130, entry)
        envelope = vault_hybrid.hpke_seal(vault_read, v.public_key, vault_hybrid.envelope_info(v.vault_id),
                                          ENV_MAGIC + bytes([0x02, 0x02]), entry)
    else:
        # X25519: magic || version || suite || enc || Seal(aad = bytes 0..<42, entry)
        ephemeral = secrets.token_bytes(32)
        enc = X25519PrivateKey.from_private_bytes(ephemeral).public_key().public_bytes_raw()
        aad = ENV_MAGIC + bytes([0x01, 0x01]) + enc
        enc2, ct = hpke_seal_base_with_ephemeral(v.public_key, ephemeral, envelope_info(v.vault_id), aad, entry)
        assert enc2 == enc
        envelope = aad + ct
    inbox = os.path.join(vaultdir, "inbox")
    hexid = item_id.hex()
    # The content first, then the envelope (as `vault add` does): an envelope
    # never names a missing item.
    write_new(os.path.join(inbox, hexid + ".item"), sealed)
    write_new(os.path.join(inbox, hexid + ".env"), envelope)
    dfd = os.open(inbox, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return hexid


def main(argv):
    if len(argv) != 4 or argv[3] not in ("file", "folder"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    content = sys.stdin.buffer.read()
    print(drop_in(argv[1], argv[2], 1 if argv[3] == "folder" else 0, content))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
