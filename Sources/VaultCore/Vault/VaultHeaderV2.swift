import VaultCrypto

// Vault header version 2 (docs/FORMAT.md, "Vault header, version 2"):
//
//   magic "VAULTHDR" (8) || version 0x02 || vault id (16) || options u16be
//   || kem id u16be (0x647A: X-Wing) || vault public key (1216)
//   || slot count u8 (1..8) || slots (KeySlot.swift) || header MAC (32)
//   header MAC = HMAC-SHA256(header MAC key, every byte before it)
//
// The public key is X-Wing's, from the seed HKDF(VMK, "vault v1 x-wing
// seed"); drop-ins are sealed to it with HPKE (DropInEnvelope). Slot names
// are unique; at least one slot is a password or key-file slot.

extension VaultHeader {
    static let v2FixedLength = 8 + 1 + 16 + 2 + 2 + XWing.publicKeyLength + 1
    static let maxSlotLength = 2 + KeySlot.maxNameBytes + 8 + 1 + KeySlot.maxOtherParams + 12 + KeySlot.wrappedLength
    /// The longest header of any version.
    public static let maxLength = v2FixedLength + KeySlot.maxSlots * maxSlotLength + HMACSHA256.length

    static func parseV2(_ b: [UInt8]) throws -> VaultHeader {
        guard b.count > v2FixedLength + HMACSHA256.length, b.count <= maxLength else { throw VaultError.corruptedOrTampered }
        let options = VaultOptions(rawValue: UInt16(b[25]) << 8 | UInt16(b[26]))
        let kem = UInt16(b[27]) << 8 | UInt16(b[28])
        guard VaultOptions.known.contains(options), kem == HPKE.XWingKEM.id else { throw VaultError.corruptedOrTampered }
        let keyEnd = 29 + XWing.publicKeyLength
        let publicKey: XWing.PublicKey
        do { publicKey = try XWing.PublicKey(bytes: Array(b[29..<keyEnd])) } catch { throw VaultError.corruptedOrTampered }
        let count = Int(b[keyEnd])
        guard (1...KeySlot.maxSlots).contains(count) else { throw VaultError.corruptedOrTampered }
        var offset = keyEnd + 1
        var slots: [KeySlot] = []
        let macStart = b.count - HMACSHA256.length
        let body = Array(b[..<macStart])
        for _ in 0..<count { slots.append(try KeySlot.parse(body, offset: &offset)) }
        guard offset == macStart, Set(slots.map(\.name)).count == slots.count,
              slots.contains(where: { if case .other = $0.kind { false } else { true } }) else {
            throw VaultError.corruptedOrTampered
        }
        return VaultHeader(version: 2, vaultID: Array(b[9..<25]), options: options, publicKey: .xwing(publicKey),
                           slots: slots, mac: Array(b[macStart...]), bytes: b)
    }

    /// A version-2 header for `masterKey` with `slots` (already sealed to it), MAC'ed.
    static func seal(vaultID: [UInt8], options: VaultOptions, masterKey: MasterKey, slots: [KeySlot]) throws -> VaultHeader {
        guard (1...KeySlot.maxSlots).contains(slots.count) else {
            throw VaultError.invalidArgument("a vault has 1 to \(KeySlot.maxSlots) key slots")
        }
        let publicKey = try masterKey.xwingKeyPair(vaultID: vaultID).publicKey
        var unsigned = magic + [2] + vaultID
        unsigned += [UInt8(options.rawValue >> 8), UInt8(options.rawValue & 0xff)]
        unsigned += [UInt8(HPKE.XWingKEM.id >> 8), UInt8(HPKE.XWingKEM.id & 0xff)] + publicKey.bytes + [UInt8(slots.count)]
        for s in slots { unsigned += s.bytes }
        let mac = try HMACSHA256.authenticate(key: masterKey.headerMACKey(vaultID: vaultID), data: unsigned)
        return try parseV2(unsigned + mac)
    }

    /// A new version-2 header with one password slot: what `init` writes.
    static func seal(vaultID: [UInt8], options: VaultOptions, masterKey: MasterKey, slotName: String,
                     kdf: Argon2Parameters, salt: [UInt8], kek: KeyEncryptionKey, created: Int64,
                     nonce: [UInt8] = SecureRandom.bytes(12)) throws -> VaultHeader {
        try checkBounds(kdf)
        let slot = try KeySlot.seal(name: slotName, kind: .password(kdf, salt: salt), created: created, kek: kek,
                                    masterKey: masterKey, vaultID: vaultID, nonce: nonce)
        return try seal(vaultID: vaultID, options: options, masterKey: masterKey, slots: [slot])
    }

    /// The same vault (id, options, master key) as a version-2 header with
    /// `slots`: how every slot change is written, and how a version-1
    /// header is upgraded.
    func replacingSlots(_ slots: [KeySlot], masterKey: MasterKey) throws -> VaultHeader {
        try Self.seal(vaultID: vaultID, options: options, masterKey: masterKey, slots: slots)
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
