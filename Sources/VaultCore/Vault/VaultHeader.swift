import VaultCrypto

// Vault header, file `vault.header` (docs/FORMAT.md, "Vault header"), 182 bytes:
//
//   magic "VAULTHDR" (8) || version 0x01 || kdf 0x01 (Argon2id v1.3)
//   || wrap aead 0x01 (AES-256-GCM) || hpke suite 0x01 || vault id (16)
//   || argon2 memory KiB u32be || passes u32be || lanes u32be || salt (16)
//   || wrap nonce (12) || wrapped VMK (32 + 16 tag)
//   || vault public key (32) || options u16be || header MAC (32)
//
// wrapped VMK = AES-256-GCM(KEK, wrap nonce, aad = bytes 0..<56, VMK)
// header MAC  = HMAC-SHA256(header MAC key, bytes 0..<150)
//
// The parser accepts only this exact shape and bounded KDF parameters, all
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

public struct VaultHeader: Equatable, Sendable {
    public static let magic = Array("VAULTHDR".utf8)
    public static let version: UInt8 = 1
    public static let length = 182
    static let wrapAADLength = 56
    static let macOffset = 150

    /// Work factors a header may ask for (KDFLimits). Above these the header
    /// is refused before any allocation: 2 GiB, 16 passes, 8 lanes.
    public static let maxMemoryKiB: UInt32 = KDFLimits.maxMemoryMiB * 1024
    public static let maxPasses: UInt32 = KDFLimits.maxPasses
    public static let maxLanes: UInt32 = KDFLimits.maxLanes

    public let vaultID: [UInt8]
    public let kdf: Argon2Parameters
    public let salt: [UInt8]
    public let wrapNonce: [UInt8]
    public let wrappedMasterKey: [UInt8]
    public let publicKey: X25519PublicKey
    public let options: VaultOptions
    public let mac: [UInt8]

    /// Checks `kdf` against the header bounds.
    public static func checkBounds(_ kdf: Argon2Parameters) throws {
        guard kdf.memoryKiB <= maxMemoryKiB, kdf.passes <= maxPasses, kdf.lanes <= maxLanes else {
            throw VaultError.invalidArgument("Argon2 parameters above the header limits (2 GiB, 16 passes, 8 lanes)")
        }
    }

    /// A new header for `masterKey`, wrapped under `kek`, MAC'ed.
    static func seal(vaultID: [UInt8], kdf: Argon2Parameters, salt: [UInt8], kek: KeyEncryptionKey,
                     masterKey: MasterKey, options: VaultOptions,
                     nonce: [UInt8] = SecureRandom.bytes(12)) throws -> VaultHeader {
        try checkBounds(kdf)
        let publicKey = try masterKey.vaultKeyPair(vaultID: vaultID).publicKey
        let prefix = fixedPrefix(vaultID: vaultID, kdf: kdf, salt: salt)
        let wrapped = try AEAD(.aes256GCM, key: kek.secret).seal(nonce: nonce, aad: prefix, plaintext: masterKey.secret)
        var unsigned = prefix + nonce + wrapped + publicKey.bytes
        unsigned += [UInt8(options.rawValue >> 8), UInt8(options.rawValue & 0xff)]
        let mac = try HMACSHA256.authenticate(key: masterKey.headerMACKey(vaultID: vaultID), data: unsigned)
        return try VaultHeader(parsing: unsigned + mac)
    }

    static func fixedPrefix(vaultID: [UInt8], kdf: Argon2Parameters, salt: [UInt8]) -> [UInt8] {
        var b = magic + [version, 1, 1, 1] + vaultID
        for v in [kdf.memoryKiB, kdf.passes, kdf.lanes] { b += withUnsafeBytes(of: v.bigEndian, Array.init) }
        return b + salt
    }

    public var bytes: [UInt8] {
        var b = Self.fixedPrefix(vaultID: vaultID, kdf: kdf, salt: salt) + wrapNonce + wrappedMasterKey + publicKey.bytes
        b += [UInt8(options.rawValue >> 8), UInt8(options.rawValue & 0xff)]
        return b + mac
    }

    /// Parses exactly `length` bytes. A header of another version says so
    /// (`unsupportedVersion`); any other deviation is `corruptedOrTampered`.
    public init(parsing b: [UInt8]) throws {
        guard b.count >= 9, Array(b[0..<8]) == Self.magic else { throw VaultError.notAVault }
        guard b[8] == Self.version else { throw VaultError.unsupportedVersion(Int(b[8])) }
        guard b.count == Self.length, b[9] == 1, b[10] == 1, b[11] == 1 else { throw VaultError.corruptedOrTampered }
        func u32(_ o: Int) -> UInt32 { b[o..<o + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let (m, t, p) = (u32(28), u32(32), u32(36))
        guard let kdf = try? Argon2Parameters(memoryKiB: m, passes: t, lanes: p),
              (try? Self.checkBounds(kdf)) != nil else { throw VaultError.corruptedOrTampered }
        let options = VaultOptions(rawValue: UInt16(b[148]) << 8 | UInt16(b[149]))
        guard VaultOptions.known.contains(options) else { throw VaultError.corruptedOrTampered }
        vaultID = Array(b[12..<28])
        self.kdf = kdf
        salt = Array(b[40..<56])
        wrapNonce = Array(b[56..<68])
        wrappedMasterKey = Array(b[68..<116])
        publicKey = try X25519PublicKey(bytes: Array(b[116..<148]))
        self.options = options
        mac = Array(b[150..<182])
    }

    /// Unwraps the master key with the password's KEK, then checks the MAC
    /// over the whole header and that the public key is the one the master
    /// key derives. A wrong password and a tampered header both fail here;
    /// they are told apart only by which check failed first (the tag of the
    /// wrapped key is the only password verifier).
    public func unlock(kek: KeyEncryptionKey) throws -> MasterKey {
        let vmk: SecretBytes
        do {
            vmk = try AEAD(.aes256GCM, key: kek.secret).openSecret(
                nonce: wrapNonce, aad: Self.fixedPrefix(vaultID: vaultID, kdf: kdf, salt: salt), sealed: wrappedMasterKey)
        } catch CryptoError.authenticationFailed {
            throw VaultError.wrongPassword
        }
        let key = try MasterKey(secret: vmk)
        try verify(masterKey: key)
        return key
    }

    /// Checks the header MAC and public key against a master key (from the
    /// password, or from a recovery kit).
    public func verify(masterKey key: MasterKey) throws {
        let b = bytes
        guard try HMACSHA256.verify(mac, key: key.headerMACKey(vaultID: vaultID), data: Array(b[..<Self.macOffset])),
              try key.vaultKeyPair(vaultID: vaultID).publicKey == publicKey else {
            throw VaultError.corruptedOrTampered
        }
    }

    /// The same header with the master key re-wrapped under a new KEK (and
    /// new salt and parameters); the MAC is recomputed.
    func rewrapped(masterKey: MasterKey, kek: KeyEncryptionKey, salt: [UInt8], kdf: Argon2Parameters) throws -> VaultHeader {
        try Self.seal(vaultID: vaultID, kdf: kdf, salt: salt, kek: kek, masterKey: masterKey, options: options)
    }

    /// A short fingerprint of the vault public key for humans to compare:
    /// the first 16 bytes of SHA-256(public key), hex in groups of four.
    public var fingerprint: String {
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
