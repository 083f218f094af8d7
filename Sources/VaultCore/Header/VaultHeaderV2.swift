import ByteLayout
import VaultCrypto

// Vault header version 2 (docs/FORMAT.md, "Vault header, version 2"):
//
//   magic "VAULTHDR" (8) || version 0x02 || vault id (16) || options u16be
//   || kem id u16be (0x647A: X-Wing) || vault public key (1216)
//   || slot count u8 (1..8) || slots (KeySlot.swift) || header MAC (32)
//   header MAC = HMAC-SHA256(header MAC key, every byte before it)
//
// Version 3 (VaultHeaderV3.swift) is this layout with version 0x03 and an
// unkeyed checksum after the MAC; this file parses and seals both.
//
// The public key is X-Wing's, from the seed HKDF(VMK, "vault v1 x-wing
// seed"); drop-ins are sealed to it with HPKE (DropInEnvelope). Slot names
// are unique; at least one slot is a password or key-file slot.

extension VaultHeader {
    static let v2FixedLength = 8 + 1 + 16 + 2 + 2 + XWing.publicKeyLength + 1
    static let maxSlotLength = 2 + KeySlot.maxNameBytes + 8 + 1 + KeySlot.maxOtherParams + 12 + KeySlot.wrappedLength
    /// The longest version-2 header (a version-3 one is 32 bytes longer).
    static let v2MaxLength = v2FixedLength + KeySlot.maxSlots * maxSlotLength + HMACSHA256.length
    /// The longest header of any version (version 4's).
    public static let maxLength = v2MaxLength + counterLength + checksumLength

    /// A version-2 header, or the part of a version-3 or -4 header before
    /// its checksum (`version` 3 or 4, checksum already checked). Version 4
    /// has its counter (u64be) between the slots and the MAC.
    static func parseV2(_ b: [UInt8], version: UInt8 = 2, checksum: [UInt8] = []) throws -> VaultHeader {
        let trailer = version == 4 ? counterLength : 0
        guard b.count > v2FixedLength + trailer + HMACSHA256.length, b.count <= v2MaxLength + trailer else {
            throw VaultError.corruptedOrTampered
        }
        // The slots end where the counter (version 4) and the MAC begin.
        let slotsEnd = b.count - trailer - HMACSHA256.length
        var r = ByteReader(b[..<slotsEnd]), tail = ByteReader(b[slotsEnd...])
        let vaultID: [UInt8], options: VaultOptions, keyBytes: [UInt8], count: Int, counter: UInt64, mac: [UInt8]
        do {
            try r.skip(magic.count)  // checked by init(parsing:)
            try r.expect([version])
            vaultID = try r.bytes(16)
            options = VaultOptions(rawValue: try r.u16())
            let kem = try r.u16()
            guard VaultOptions.known.contains(options), kem == HPKE.XWingKEM.id else { throw VaultError.corruptedOrTampered }
            keyBytes = try r.bytes(XWing.publicKeyLength)
            count = Int(try r.u8())
            counter = version == 4 ? try tail.u64() : 0
            mac = try tail.bytes(HMACSHA256.length)
            try tail.finish()
        } catch is ByteLayoutError { throw VaultError.corruptedOrTampered }
        let publicKey: XWing.PublicKey
        do { publicKey = try XWing.PublicKey(bytes: keyBytes) } catch { throw VaultError.corruptedOrTampered }
        guard (1...KeySlot.maxSlots).contains(count) else { throw VaultError.corruptedOrTampered }
        var slots: [KeySlot] = []
        for _ in 0..<count { slots.append(try KeySlot.parse(&r)) }
        guard r.isAtEnd, Set(slots.map(\.name)).count == slots.count,
              slots.contains(where: { if case .other = $0.kind { false } else { true } }) else {
            throw VaultError.corruptedOrTampered
        }
        return VaultHeader(version: version, vaultID: vaultID, options: options, publicKey: .xwing(publicKey),
                           slots: slots, counter: counter, mac: mac, bytes: b + checksum)
    }

    /// A header for `masterKey` with `slots` (already sealed to it), MAC'ed:
    /// version 4 with `counter` and its checksum, or version 3 or 2 (only the
    /// vectors and tests of vaults earlier versions wrote ask for those).
    static func seal(vaultID: [UInt8], options: VaultOptions, masterKey: MasterKey, slots: [KeySlot],
                     counter: UInt64 = 1, version: UInt8 = currentVersion) throws -> VaultHeader {
        guard (2...4).contains(version) else { throw VaultError.misuse(.headerVersionNotWritten(version)) }
        guard (1...KeySlot.maxSlots).contains(slots.count) else {
            throw VaultError.misuse(.keySlotCount)
        }
        let publicKey = try masterKey.xwingKeyPair(vaultID: vaultID).publicKey
        var w = ByteWriter(magic + [version] + vaultID)
        w.u16(options.rawValue)
        w.u16(HPKE.XWingKEM.id)
        w.bytes(publicKey.bytes)
        w.u8(UInt8(slots.count))
        for s in slots { w.bytes(s.bytes) }
        if version == 4 { w.u64(counter) }
        let unsigned = w.bytes
        let mac = try HMACSHA256.authenticate(key: masterKey.headerMACKey(vaultID: vaultID), data: unsigned)
        let signed = unsigned + mac
        return try Self(parsing: version >= 3 ? signed + checksum(of: signed) : signed)
    }

    /// A new header (version 4, counter 1, unless told) with one password slot: what `init` writes.
    static func seal(vaultID: [UInt8], options: VaultOptions, masterKey: MasterKey, slotName: String,
                     kdf: Argon2Parameters, salt: [UInt8], kek: KeyEncryptionKey, created: Int64,
                     nonce: [UInt8] = SecureRandom.bytes(12), counter: UInt64 = 1,
                     version: UInt8 = currentVersion) throws -> VaultHeader {
        try checkBounds(kdf)
        let slot = try KeySlot.seal(name: slotName, kind: .password(kdf, salt: salt), created: created, kek: kek,
                                    masterKey: masterKey, vaultID: vaultID, nonce: nonce)
        return try seal(vaultID: vaultID, options: options, masterKey: masterKey, slots: [slot], counter: counter,
                        version: version)
    }

    /// The same vault (id, options, master key) as a current-version header
    /// with `slots` and the next counter: how every slot change is written,
    /// and how an older header is upgraded.
    func replacingSlots(_ slots: [KeySlot], masterKey: MasterKey) throws -> VaultHeader {
        try Self.seal(vaultID: vaultID, options: options, masterKey: masterKey, slots: slots, counter: try nextCounter())
    }

    /// The counter the header that replaces this one carries.
    func nextCounter() throws -> UInt64 {
        guard counter < UInt64.max else { throw VaultError.headerCounterExhausted }
        return counter + 1
    }
}

extension VaultHeader {
    /// The cost of the first password slot (what `info` shows as the vault's
    /// Argon2id parameters), if there is one.
    public var firstPasswordKDF: Argon2Parameters? {
        for s in slots { if case .password(let kdf, _) = s.kind { return kdf } }
        return nil
    }
}
