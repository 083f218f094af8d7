import ByteLayout
import VaultCrypto

// Vault header, file `vault.header` (docs/FORMAT.md, "Vault header").
//
// Version 1 (read, and written only by earlier versions), 182 bytes:
//
//   magic "VAULTHDR" (8) || version 0x01 || kdf 0x01 (Argon2id v1.3)
//   || wrap aead 0x01 (AES-256-GCM) || hpke suite 0x01 || vault id (16)
//   || argon2 memory KiB u32be || passes u32be || lanes u32be || salt (16)
//   || wrap nonce (12) || wrapped VMK (32 + 16 tag)
//   || vault public key (32) || options u16be || header MAC (32)
//
//   wrapped VMK = AES-256-GCM(KEK, wrap nonce, aad = bytes 0..<56, VMK)
//   header MAC  = HMAC-SHA256(header MAC key, bytes 0..<150)
//
// Version 2 (VaultHeaderV2.swift): an X-Wing public key and up to 8 key
// slots. Version 3 (VaultHeaderV3.swift): version 2 with a checksum that
// tells damage from a wrong password. Version 4 (VaultHeaderV4.swift, what
// this code writes): version 3 with a header counter. All are one
// `VaultHeader`; a version-1 header reads as one password slot named
// "password".
//
// The parsers accept only exact shapes and bounded KDF parameters, all
// checked before Argon2 runs, so an edited header cannot make the tool
// allocate attacker-chosen memory or time.

/// Vault-wide settings kept in the header (authenticated by its MAC).
public struct VaultOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// New items are xz-compressed unless the add says otherwise.
    public static let compressByDefault = VaultOptions(rawValue: 1 << 0)
    public static let known: VaultOptions = [.compressByDefault]
}

/// The key drop-ins are sealed to: X25519 (version-1 headers) or X-Wing.
public enum VaultPublicKey: Equatable, Sendable {
    case x25519(X25519PublicKey)
    case xwing(XWing.PublicKey)

    public var bytes: [UInt8] {
        switch self {
        case .x25519(let k): k.bytes
        case .xwing(let k): k.bytes
        }
    }

    /// The HPKE KEM, as `info` shows it.
    public var kemName: String {
        switch self {
        case .x25519: "DHKEM(X25519, HKDF-SHA256) (HPKE KEM 0x0020)"
        case .xwing: "X-Wing, ML-KEM-768 + X25519 (HPKE KEM 0x647A)"
        }
    }

    public var isHybrid: Bool { if case .xwing = self { true } else { false } }
}

public struct VaultHeader: Equatable, Sendable {
    public static let magic = Array("VAULTHDR".utf8)
    /// The version this code writes.
    public static let currentVersion: UInt8 = 4
    static let v1Length = 182
    /// The shortest header of any version (version 1's); `maxLength` is the longest.
    public static var minLength: Int { v1Length }
    static let v1WrapAADLength = 56
    static let v1MACOffset = 150

    /// Work factors a header may ask for (KDFLimits). Above these the header
    /// is refused before any allocation: 2 GiB, 16 passes, 8 lanes.
    public static let maxMemoryKiB: UInt32 = KDFLimits.maxMemoryMiB * 1024
    public static let maxPasses: UInt32 = KDFLimits.maxPasses
    public static let maxLanes: UInt32 = KDFLimits.maxLanes

    public let version: UInt8
    public let vaultID: [UInt8]
    public let options: VaultOptions
    public let publicKey: VaultPublicKey
    /// A version-1 header has one: "password".
    public let slots: [KeySlot]
    /// Version 4's header counter (VaultHeaderV4.swift): one more than the
    /// header it replaced; 0 for versions 1 to 3.
    public let counter: UInt64
    public let mac: [UInt8]
    /// The exact bytes, a version-3 header's checksum included (what a
    /// rekey switch's hash covers).
    public let bytes: [UInt8]

    /// Checks `kdf` against the header bounds.
    public static func checkBounds(_ kdf: Argon2Parameters) throws {
        guard kdf.memoryKiB <= maxMemoryKiB, kdf.passes <= maxPasses, kdf.lanes <= maxLanes else {
            throw VaultError.kdfAboveLimits
        }
    }

    init(version: UInt8, vaultID: [UInt8], options: VaultOptions, publicKey: VaultPublicKey, slots: [KeySlot],
         counter: UInt64 = 0, mac: [UInt8], bytes: [UInt8]) {
        (self.version, self.vaultID, self.options, self.publicKey, self.slots, self.counter, self.mac, self.bytes)
            = (version, vaultID, options, publicKey, slots, counter, mac, bytes)
    }

    /// Parses a header of any version. A header of another version says so
    /// (`unsupportedVersion`); a version-3 header whose checksum fails is
    /// `headerDamaged`; any other deviation is `corruptedOrTampered`.
    public init(parsing b: [UInt8]) throws {
        guard b.count >= 9, Array(b[0..<8]) == Self.magic else { throw VaultError.notAVault }
        switch b[8] {
        case 1: self = try Self.parseV1(b)
        case 2: self = try Self.parseV2(b)
        case 3, 4: self = try Self.parseV3(b)
        default: throw VaultError.unsupportedVersion(Int(b[8]))
        }
    }

    /// A version-1 header (exactly 182 bytes), its one wrapped key as a slot
    /// named "password".
    static func parseV1(_ b: [UInt8]) throws -> VaultHeader {
        guard b.count == v1Length else { throw VaultError.corruptedOrTampered }
        var r = ByteReader(b)
        let vaultID: [UInt8], kdf: Argon2Parameters, salt: [UInt8], nonce: [UInt8], wrapped: [UInt8]
        let publicKey: [UInt8], options: VaultOptions, mac: [UInt8]
        do {
            try r.skip(magic.count)  // checked by init(parsing:)
            try r.expect([1, 1, 1, 1])  // version, kdf, wrap aead, hpke suite
            vaultID = try r.bytes(16)
            let (m, t, p) = (try r.u32(), try r.u32(), try r.u32())
            // Stored costs out of bounds are damage, whichever bound they break.
            guard let k = try? Argon2Parameters(memoryKiB: m, passes: t, lanes: p),
                  (try? Self.checkBounds(k)) != nil else { throw VaultError.corruptedOrTampered }
            kdf = k
            (salt, nonce, wrapped) = (try r.bytes(16), try r.bytes(12), try r.bytes(48))
            publicKey = try r.bytes(32)
            options = VaultOptions(rawValue: try r.u16())
            mac = try r.bytes(HMACSHA256.length)
            try r.finish()
        } catch is ByteLayoutError { throw VaultError.corruptedOrTampered }
        guard VaultOptions.known.contains(options) else { throw VaultError.corruptedOrTampered }
        let slot = KeySlot(name: "password", kind: .password(kdf, salt: salt), created: 0,
                           wrapNonce: nonce, wrapped: wrapped)
        return VaultHeader(version: 1, vaultID: vaultID, options: options,
                           publicKey: .x25519(try X25519PublicKey(bytes: publicKey)),
                           slots: [slot], mac: mac, bytes: b)
    }

    /// Writes a version-1 header (the vectors of earlier versions, and tests
    /// of old vaults; the tool itself writes version 3).
    static func sealV1(vaultID: [UInt8], kdf: Argon2Parameters, salt: [UInt8], kek: KeyEncryptionKey,
                       masterKey: MasterKey, options: VaultOptions,
                       nonce: [UInt8] = SecureRandom.bytes(12)) throws -> VaultHeader {
        try checkBounds(kdf)
        let publicKey = try masterKey.vaultKeyPair(vaultID: vaultID).publicKey
        var w = ByteWriter(magic + [1, 1, 1, 1] + vaultID)
        w.u32(kdf.memoryKiB); w.u32(kdf.passes); w.u32(kdf.lanes)
        w.bytes(salt)
        let wrapped = try AEAD(.aes256GCM, key: kek.secret).seal(nonce: nonce, aad: w.bytes, plaintext: masterKey.secret)
        w.bytes(nonce); w.bytes(wrapped); w.bytes(publicKey.bytes)
        w.u16(options.rawValue)
        let mac = try HMACSHA256.authenticate(key: masterKey.headerMACKey(vaultID: vaultID), data: w.bytes)
        return try parseV1(w.bytes + mac)
    }

    /// The AAD `slot`'s wrapped master key was sealed with.
    func wrapAAD(of slot: KeySlot) -> [UInt8] {
        version == 1 ? Array(bytes[0..<Self.v1WrapAADLength]) : KeySlot.aad(vaultID: vaultID, describing: slot.describingBytes)
    }

    /// Unwraps the master key from `slot` with its KEK (`wrongPassword` if
    /// it is not the slot's), then checks the MAC over the whole header and
    /// that the public key is the one the master key derives. A wrong
    /// password and a tampered header are told apart only by which check
    /// failed first (the tag of the wrapped key is the only verifier).
    public func unlock(slot: KeySlot, kek: KeyEncryptionKey) throws -> MasterKey {
        let vmk: SecretBytes
        do {
            vmk = try AEAD(.aes256GCM, key: kek.secret).openSecret(nonce: slot.wrapNonce, aad: wrapAAD(of: slot),
                                                                  sealed: slot.wrapped)
        } catch CryptoError.authenticationFailed {
            throw VaultError.wrongPassword
        }
        let key = try MasterKey(secret: vmk)
        try verify(masterKey: key)
        return key
    }

    /// The first password slot (a version-1 header's only one) with `kek`.
    public func unlock(kek: KeyEncryptionKey) throws -> MasterKey {
        guard let slot = slots.first(where: { if case .password = $0.kind { true } else { false } }) else {
            throw VaultError.wrongPassword
        }
        return try unlock(slot: slot, kek: kek)
    }

    /// Checks the header MAC and public key against a master key (from a
    /// slot, or from a recovery kit).
    public func verify(masterKey key: MasterKey) throws {
        let signed = Array(bytes[..<macOffset])
        guard try HMACSHA256.verify(mac, key: key.headerMACKey(vaultID: vaultID), data: signed),
              try key.publicKey(for: publicKey, vaultID: vaultID) == publicKey else {
            throw VaultError.corruptedOrTampered
        }
    }

    /// Password slots, or only the one named `name` (`noSuchKeySlot` if none, `notAPasswordSlot` if it is another kind).
    public func passwordSlots(named name: String? = nil) throws -> [KeySlot] {
        let all = slots.filter { if case .password = $0.kind { true } else { false } }
        guard let name else { return all }
        guard let slot = slots.first(where: { $0.name == name }) else { throw VaultError.noSuchKeySlot(name: name) }
        guard case .password = slot.kind else {
            throw VaultError.notAPasswordSlot(name: name, kind: slot.kind)
        }
        return [slot]
    }

    public func slot(named name: String) -> KeySlot? { slots.first { $0.name == name } }

    /// A short fingerprint of the vault public key for humans to compare:
    /// the first 16 bytes of SHA-256(public key), hex in groups of four.
    public var fingerprint: String {
        // SHA-256 fails only if OpenSSL cannot allocate: an empty fingerprint, which no one given matches.
        let h = (try? SHA256.hash(publicKey.bytes)) ?? []
        let hex = h.prefix(16).map { String($0, radix: 16).leftPadded(2) }.joined()
        return stride(from: 0, to: hex.count, by: 4).map { i in
            let s = hex.index(hex.startIndex, offsetBy: i)
            return String(hex[s..<hex.index(s, offsetBy: 4)])
        }.joined(separator: "-")
    }
}

extension String {
    func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
