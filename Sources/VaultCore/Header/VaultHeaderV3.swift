import VaultCrypto

// Vault header version 3 (docs/FORMAT.md, "Vault header, version 3"):
//
//   version 2's layout with version 0x03 (VaultHeaderV2.swift)
//   || checksum (32)
//   header MAC = HMAC-SHA256(header MAC key, every byte before it)
//   checksum   = SHA-256("vault v3 header checksum" || every byte before it)
//
// The checksum is unkeyed: anyone can recompute it, so it proves nothing
// about who wrote the header (the MAC does that, once a slot has opened).
// It exists so that a reader can tell accidental damage (a flipped bit, a
// truncated copy) from a wrong password before any KDF runs: without it both
// end at the same unwrap failure, and damage would count toward the attempt
// delay. A version-3 header that is too short, too long or fails the
// checksum is `headerDamaged`; one whose checksum matches but whose shape is
// wrong was edited on purpose and is `corruptedOrTampered`, as in version 2.
//
// The slots' wrap AAD keeps the byte 0x02 (KeySlot.aad): slots are the same
// bytes in a version-2 and a version-3 header, so `vault upgrade` moves every
// slot of a version-2 vault without any slot's secret.

extension VaultHeader {
    static let checksumLabel = Array("vault v3 header checksum".utf8)
    static let checksumLength = SHA256.length

    /// SHA-256("vault v3 header checksum" || `signed`).
    static func checksum(of signed: [UInt8]) throws -> [UInt8] {
        let h = try SHA256()
        try h.update(checksumLabel)
        try h.update(signed)
        return try h.finish()
    }

    /// A version-3 or version-4 header: the checksum first (damage), then
    /// version 2's checks (and version 4's counter).
    static func parseV3(_ b: [UInt8]) throws -> VaultHeader {
        let version = b[8]
        let trailer = version == 4 ? counterLength : 0
        guard b.count > v2FixedLength + trailer + HMACSHA256.length + checksumLength,
              b.count <= v2MaxLength + trailer + checksumLength else {
            throw VaultError.headerDamaged
        }
        let end = b.count - checksumLength
        let signed = Array(b[..<end]), stored = Array(b[end...])
        guard try checksum(of: signed) == stored else { throw VaultError.headerDamaged }
        return try parseV2(signed, version: version, checksum: stored)
    }

    /// Where the MAC starts: it covers every byte before it (the checksum,
    /// in versions 3 and 4, comes after it and is not covered).
    var macOffset: Int { bytes.count - HMACSHA256.length - (version >= 3 ? Self.checksumLength : 0) }
}
