#!/usr/bin/env python3
"""ML-KEM-768 oracle for the differential tests (Tests/VaultCryptoTests/MLKEMDifferentialTests.swift).

    python3 mlkem_oracle.py kyber-py|cryptography  < requests  > answers

Backends, both independent of the Swift code:
  kyber-py      the pure-Python FIPS 203 implementation (pip package kyber-py)
  cryptography  Python cryptography's ML-KEM-768 (OpenSSL 3.5+ in its wheel); it
                takes keys as the 64-byte seed d || z only, and has no
                deterministic encapsulation.

One request per line, fields in lower-case hex, one answer line per request:
  K d z             key generation from (d, z)    -> ek dk   (dk is "-" for cryptography)
  E ek              a fresh random encapsulation  -> c k
  e ek m            Encaps_internal(ek, m)        -> c k     (kyber-py only)
  D d z dk c        decapsulation of c            -> k       (kyber-py uses dk, cryptography d || z)
A request the backend cannot answer gets "unsupported"; a refused input "error".
"""
import sys


def kyber_py():
    from kyber_py.ml_kem import ML_KEM_768 as kem

    def keygen(d, z):
        ek, dk = kem._keygen_internal(d, z)
        return [ek, dk]

    def encaps(ek):
        k, c = kem.encaps(ek)
        return [c, k]

    def encaps_internal(ek, m):
        k, c = kem._encaps_internal(ek, m)
        return [c, k]

    def decaps(d, z, dk, c):
        return [kem.decaps(dk, c)]

    return {"K": keygen, "E": encaps, "e": encaps_internal, "D": decaps}


def cryptography():
    from cryptography.hazmat.primitives.asymmetric import mlkem

    def keygen(d, z):
        sk = mlkem.MLKEM768PrivateKey.from_seed_bytes(d + z)
        return [sk.public_key().public_bytes_raw(), None]

    def encaps(ek):
        ss, c = mlkem.MLKEM768PublicKey.from_public_bytes(ek).encapsulate()
        return [c, ss]

    def decaps(d, z, dk, c):
        return [mlkem.MLKEM768PrivateKey.from_seed_bytes(d + z).decapsulate(c)]

    return {"K": keygen, "E": encaps, "D": decaps}


def main():
    backend = {"kyber-py": kyber_py, "cryptography": cryptography}[sys.argv[1]]()
    out = sys.stdout
    for line in sys.stdin:
        fields = line.split()
        if not fields:
            continue
        op = backend.get(fields[0])
        if op is None:
            out.write("unsupported\n")
            continue
        args = [bytes.fromhex(f) if f != "-" else b"" for f in fields[1:]]
        try:
            result = op(*args)
        except Exception:
            out.write("error\n")
            continue
        out.write(" ".join("-" if r is None else r.hex() for r in result) + "\n")


if __name__ == "__main__":
    main()
