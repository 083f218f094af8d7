#!/usr/bin/env python3
"""The backup chunker of docs/FORMAT.md ("Backups: chunking"), written from
the spec alone: prints the gear table's first and last entries and the
piece lengths of the published test input, so the Swift chunker's vector
(Tests/VaultBackupTests/ChunkerTests.swift) can be checked independently.

    python3 scripts/reference/vault_chunker.py
"""
import hashlib
import struct

MIN, AVG, MAX = 256 << 10, 1 << 20, 4 << 20
MASK64 = (1 << 64) - 1
HARD = (MASK64 << (64 - 22)) & MASK64
EASY = (MASK64 << (64 - 18)) & MASK64
GEAR = [int.from_bytes(hashlib.sha256(b"vault gear v1" + bytes([i])).digest()[:8], "big") for i in range(256)]


def test_input(length):
    """SHA-256("vault chunker vector" || u32be(i)) for i = 0, 1, ... concatenated."""
    out = bytearray()
    i = 0
    while len(out) < length:
        out += hashlib.sha256(b"vault chunker vector" + struct.pack(">I", i)).digest()
        i += 1
    return bytes(out[:length])


def cut(data):
    n = len(data)
    if n <= MIN:
        return n
    normal, end = min(n, AVG), min(n, MAX)
    h, i = 0, MIN
    while i < normal:
        h = ((h << 1) + GEAR[data[i]]) & MASK64
        if h & HARD == 0:
            return i + 1
        i += 1
    while i < end:
        h = ((h << 1) + GEAR[data[i]]) & MASK64
        if h & EASY == 0:
            return i + 1
        i += 1
    return end


def pieces(data):
    out, start = [], 0
    while start < len(data):
        n = cut(data[start:start + MAX])
        out.append(n)
        start += n
    return out


if __name__ == "__main__":
    print("gear[0] = %016x, gear[255] = %016x" % (GEAR[0], GEAR[255]))
    data = test_input(8 << 20)
    lengths = pieces(data)
    print("pieces of the 8 MiB test input:", lengths)
    print("sha256 of the input:", hashlib.sha256(data).hexdigest())
