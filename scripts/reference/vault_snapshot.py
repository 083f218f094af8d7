#!/usr/bin/env python3
"""Reads `vault backup` snapshots from docs/FORMAT.md ("Backups") alone,
on top of vault_read.py (the vault, its manifest and items):

    vault_snapshot.py list VAULTDIR PASSWORDFILE             snapshot id, host, files (tab-separated)
    vault_snapshot.py restore VAULTDIR PASSWORDFILE ID DIR   the snapshot's entries under DIR
    vault_snapshot.py plaintext VAULTDIR PASSWORDFILE FILE   every item's content, and every zstd
                                                             frame in it decoded, into FILE (a search
                                                             for bytes that must be gone, issue 44)

Every piece is checked against its id (HMAC-SHA256 under the snapshot's
piece key) before it is written; restore refuses unsafe names and never
writes over anything.
"""
import hashlib
import hmac
import os
import struct
import sys

import zstandard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vault_read  # noqa: E402

# Format 2; format 1 (60-byte references, every piece raw) is still read.
SNAP_MAGICS, TREE_MAGICS = {b"VAULTSN2": 64, b"VAULTSN1": 60}, {b"VAULTTR3": 64, b"VAULTTR2": 64, b"VAULTTR1": 60}
# Windows above 8 MiB are refused (vault writes at most 2 MiB).
DCTX = zstandard.ZstdDecompressor(max_window_size=1 << 23)


class Reader:
    def __init__(self, data, ref_length=64):
        self.data, self.off, self.ref_length = data, 0, ref_length

    def take(self, n):
        if n < 0 or self.off + n > len(self.data):
            raise vault_read.corrupted()
        out = self.data[self.off:self.off + n]
        self.off += n
        return out

    def u(self, fmt):
        return struct.unpack(">" + fmt, self.take(struct.calcsize(">" + fmt)))[0]

    def ref(self):
        pack, offset, length = self.take(16), self.u("Q"), self.u("I")
        stored = self.u("I") if self.ref_length == 64 else length
        if stored > length or (stored == 0 and length > 0):
            raise vault_read.corrupted()
        return (pack, offset, length, stored, self.take(32))

    def end(self):
        if self.off != len(self.data):
            raise vault_read.corrupted()


def parse_snapshot(content):
    r = Reader(content, SNAP_MAGICS.get(content[:8], 0))
    if not r.ref_length:
        raise vault_read.corrupted()
    r.take(8)
    packs = [r.take(16) for _ in range(r.u("I"))]
    s = {"packs": set(packs), "key": r.take(32)}
    s["host"] = r.take(r.u("H")).decode("utf-8")
    s["paths"] = [r.take(r.u("H")) for _ in range(r.u("H"))]
    s["tags"] = [r.take(r.u("H")).decode("utf-8") for _ in range(r.u("H"))]
    s["start"], s["start_ns"], s["end"], s["end_ns"] = r.u("q"), r.u("I"), r.u("q"), r.u("I")
    s["files"], s["dirs"], s["links"], s["bytes"], s["changed"], s["unreadable"] = [r.u("Q") for _ in range(6)]
    s["root"] = r.ref()
    r.end()
    return s


def parse_tree(data):
    r = Reader(data, TREE_MAGICS.get(data[:8], 0))
    if not r.ref_length:
        raise vault_read.corrupted()
    r.take(8)
    entries, last = [], None
    for _ in range(r.u("I")):
        name = r.take(r.u("H"))
        if not name or b"/" in name or b"\0" in name or name in (b".", b"..") or (last is not None and name <= last):
            raise vault_read.corrupted()
        last = name
        e = {"name": name, "type": r.u("B"), "flags": r.u("B"), "mode": r.u("H"), "uid": r.u("I"), "gid": r.u("I"),
             "mtime": r.u("q"), "mtime_ns": r.u("I"), "ctime": r.u("q"), "ctime_ns": r.u("I"), "size": r.u("Q")}
        if e["type"] == 1:
            e["group"] = r.u("I")
            e["pieces"] = [r.ref() for _ in range(r.u("I"))]
            if sum(p[2] for p in e["pieces"]) != e["size"]:
                raise vault_read.corrupted()
        elif e["type"] == 2:
            e["tree"] = r.ref()
        elif e["type"] == 3:
            e["target"] = r.take(r.u("H"))
        else:
            raise vault_read.corrupted()
        e["xattrs"] = []
        if data[:8] == b"VAULTTR3":
            for _ in range(r.u("H")):
                xname = r.take(r.u("B"))
                length = r.u("I")
                if not xname or b"\0" in xname or length > 65536 or (e["xattrs"] and xname <= e["xattrs"][-1][0]):
                    raise vault_read.corrupted()
                e["xattrs"].append((xname, r.take(length)))
        entries.append(e)
    r.end()
    if data[:8] == b"VAULTTR3" and not any(e["xattrs"] for e in entries):
        raise vault_read.corrupted()
    return entries


def unpack(frame, length):
    """A compressed piece: exactly one zstd frame making exactly `length` bytes."""
    try:
        declared = zstandard.get_frame_parameters(frame).content_size
        if declared not in (length, zstandard.CONTENTSIZE_UNKNOWN):
            raise vault_read.corrupted()
        data = DCTX.decompress(frame, max_output_size=length, read_across_frames=False, allow_extra_data=False)
    except zstandard.ZstdError:
        raise vault_read.corrupted()
    if len(data) != length:
        raise vault_read.corrupted()
    return data


def repack_table(content, pack):
    """A repack's table ("Repacking"): [(old offset, length, start)], exact shape."""
    r = Reader(content)
    if r.take(8) != b"VAULTRP1" or r.take(16) != pack:
        raise vault_read.corrupted()
    count = r.u("I")
    if not 1 <= count <= 1 << 22 or 28 + 16 * count > len(content):
        raise vault_read.corrupted()
    table, start, previous_end = [], 28 + 16 * count, -1
    for _ in range(count):
        old, length = r.u("Q"), r.u("Q")
        if length < 1 or old <= previous_end or old + length > 2 ** 64 - 1:
            raise vault_read.corrupted()
        table.append((old, length, start))
        start, previous_end = start + length, old + length
    if start != len(content):
        raise vault_read.corrupted()
    return table


def place(table, offset, stored):
    for old, length, start in table:
        if old <= offset and offset + stored <= old + length:
            return start + offset - old
    return None


class Snapshot:
    def __init__(self, v, entry):
        self.v, self.s, self.packs = v, parse_snapshot(vault_read.read_item(v, entry)), {}

    def sources(self, pack):
        """The pack's content, else its repacks' (newest version first), each
        with its table of (old offset, length, start) or None for a pack."""
        if pack not in self.packs:
            found = [e for e in self.v.entries if e.name == "pack-" + pack.hex() and e.kind == 2]
            if not found:
                found = sorted((e for e in self.v.entries if e.name == "repack-" + pack.hex() and e.kind == 4),
                               key=lambda e: -e.version)
            if not found:
                raise vault_read.corrupted()
            out = []
            for e in found:
                content = vault_read.read_item(self.v, e)
                out.append((content, repack_table(content, pack) if e.kind == 4 else None))
            self.packs[pack] = out
        return self.packs[pack]

    def piece(self, ref):
        pack, offset, length, stored, pid = ref
        if pack not in self.s["packs"]:
            raise vault_read.corrupted()
        for content, table in self.sources(pack):
            at = offset if table is None else place(table, offset, stored)
            if at is not None:
                data = content[at:at + stored]
                break
        else:
            raise vault_read.corrupted()
        if len(data) != stored:
            raise vault_read.corrupted()
        if stored < length:
            data = unpack(data, length)
        if not hmac.compare_digest(hmac.new(self.s["key"], data, hashlib.sha256).digest(), pid):
            raise vault_read.corrupted()
        return data

    def tree(self, ref):
        return parse_tree(self.piece(ref))


def snapshots(v):
    return [e for e in v.entries if e.kind == 3]


def cmd_list(vaultdir, pwfile, out):
    v = vault_read.open_vault(vaultdir, vault_read.read_password(pwfile))
    for e in sorted(snapshots(v), key=lambda e: e.name):
        s = Snapshot(v, e).s
        out.write("%s\t%s\t%d\n" % (e.name[len("snapshot-"):], s["host"], s["files"]))


def set_xattrs(path, e):
    """The entry's extended attributes, as far as this user may set them."""
    for name, value in e["xattrs"]:
        try:
            os.setxattr(path, name, value, follow_symlinks=False)
        except OSError:
            pass


def restore(snap, ref, target, links):
    for e in snap.tree(ref):
        path = os.path.join(target, e["name"])
        if e["type"] == 2:
            os.mkdir(path, 0o700)
            restore(snap, e["tree"], path, links)
            set_xattrs(path, e)
            os.chmod(path, e["mode"] & 0o1777)
        elif e["type"] == 3:
            os.symlink(e["target"], path)
        elif e["group"] and e["group"] in links:
            os.link(links[e["group"]], path)
            continue
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                for p in e["pieces"]:
                    f.write(snap.piece(p))
            set_xattrs(path, e)
            os.chmod(path, e["mode"] & 0o1777)
            if e["group"]:
                links[e["group"]] = path
        ns = e["mtime"] * 10**9 + e["mtime_ns"]
        os.utime(path, ns=(ns, ns), follow_symlinks=False)


def cmd_restore(vaultdir, pwfile, snapshot_id, target):
    v = vault_read.open_vault(vaultdir, vault_read.read_password(pwfile))
    matches = [e for e in snapshots(v) if e.name[len("snapshot-"):].startswith(snapshot_id)]
    if len(matches) != 1:
        raise vault_read.VaultError("no such snapshot")
    snap = Snapshot(v, matches[0])
    restore(snap, snap.s["root"], os.fsencode(target), {})


def cmd_plaintext(vaultdir, pwfile, target):
    """Everything the vault holds, decrypted: each item of the manifest and
    each one waiting in the inbox, and, wherever a zstd frame starts in one
    (a compressed piece in a pack or repack), that frame decoded too."""
    v = vault_read.open_vault(vaultdir, vault_read.read_password(pwfile))
    with open(target, "wb") as out:
        for e in list(v.entries) + list(v.waiting):
            content = vault_read.read_item(v, e)
            out.write(content)
            at = content.find(b"\x28\xb5\x2f\xfd")
            while at >= 0:
                try:
                    out.write(DCTX.decompress(content[at:], max_output_size=1 << 26, read_across_frames=False, allow_extra_data=True))
                except zstandard.ZstdError:
                    pass  # four bytes that only look like a frame's start
                at = content.find(b"\x28\xb5\x2f\xfd", at + 1)


def main(argv):
    try:
        if len(argv) == 4 and argv[1] == "list":
            cmd_list(argv[2], argv[3], sys.stdout)
            return 0
        if len(argv) == 5 and argv[1] == "plaintext":
            cmd_plaintext(argv[2], argv[3], argv[4])
            return 0
        if len(argv) == 6 and argv[1] == "restore":
            cmd_restore(argv[2], argv[3], argv[4], argv[5])
            return 0
        print(__doc__.strip(), file=sys.stderr)
        return 2
    except (vault_read.VaultError, OSError) as err:
        print("vault_snapshot: %s" % err, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
