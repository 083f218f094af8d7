import ByteLayout
import VaultCrypto

// Recovery kit payload (docs/FORMAT.md, "Recovery kit"), 116 bytes:
//
//   magic "VAULTKIT" (8) || version 0x01 || kdf 0x01 (Argon2id v1.3) || 00 00
//   || vault id (16) || m u32be || t u32be || p u32be || salt (16)
//   || nonce (12) || AES-256-GCM(KEK, nonce, aad = bytes 0..<56, VMK) (48)
//   KEK = Argon2id(kit passphrase, salt, m, t, p)
//
// The kit holds the master key (not the data), sealed under its own
// passphrase, so it works after any number of password changes and stops
// after a rekey. Armored as base32 lines with per-line checksums (KitArmor).

public struct RecoveryKit: Sendable {
    public static let magic = Array("VAULTKIT".utf8)
    public static let version: UInt8 = 1
    public static let length = 116
    static let aadLength = 56

    public let vaultID: [UInt8]
    public let kdf: Argon2Parameters
    let salt: [UInt8]
    let nonce: [UInt8]
    let sealedKey: [UInt8]

    /// Seals `masterKey` under `passphrase` with Argon2id at `kdf`.
    static func seal(masterKey: MasterKey, vaultID: [UInt8], passphrase: Password, kdf: Argon2Parameters) throws -> RecoveryKit {
        try VaultHeader.checkBounds(kdf)
        let salt = SecureRandom.bytes(16), nonce = SecureRandom.bytes(12)
        let kek = try KeyEncryptionKey.derive(password: passphrase.secret, salt: salt, parameters: kdf)
        let prefix = Self.prefix(vaultID: vaultID, kdf: kdf, salt: salt)
        let sealed = try AEAD(.aes256GCM, key: kek.secret).seal(nonce: nonce, aad: prefix, plaintext: masterKey.secret)
        return RecoveryKit(vaultID: vaultID, kdf: kdf, salt: salt, nonce: nonce, sealedKey: sealed)
    }

    private init(vaultID: [UInt8], kdf: Argon2Parameters, salt: [UInt8], nonce: [UInt8], sealedKey: [UInt8]) {
        (self.vaultID, self.kdf, self.salt, self.nonce, self.sealedKey) = (vaultID, kdf, salt, nonce, sealedKey)
    }

    static func prefix(vaultID: [UInt8], kdf: Argon2Parameters, salt: [UInt8]) -> [UInt8] {
        var w = ByteWriter(magic + [version, 1, 0, 0] + vaultID, capacity: aadLength)
        w.u32(kdf.memoryKiB); w.u32(kdf.passes); w.u32(kdf.lanes)
        w.bytes(salt)
        return w.bytes
    }

    public var bytes: [UInt8] { Self.prefix(vaultID: vaultID, kdf: kdf, salt: salt) + nonce + sealedKey }

    /// Exact shape, bounded Argon2 parameters (checked before Argon2 runs).
    public init(parsing b: [UInt8]) throws {
        guard b.count == Self.length else { throw VaultError.kitDamaged }
        var r = ByteReader(b)
        let vaultID: [UInt8], m: UInt32, t: UInt32, p: UInt32, salt: [UInt8], nonce: [UInt8], sealedKey: [UInt8]
        do {
            try r.expect(Self.magic + [Self.version, 1, 0, 0])
            vaultID = try r.bytes(16)
            (m, t, p) = (try r.u32(), try r.u32(), try r.u32())
            (salt, nonce, sealedKey) = (try r.bytes(16), try r.bytes(12), try r.bytes(48))
            try r.finish()
        } catch { throw VaultError.kitDamaged }
        // Costs a kit carries out of bounds are damage, whichever bound they break.
        guard let kdf = try? Argon2Parameters(memoryKiB: m, passes: t, lanes: p),
              (try? VaultHeader.checkBounds(kdf)) != nil else { throw VaultError.kitDamaged }
        self.init(vaultID: vaultID, kdf: kdf, salt: salt, nonce: nonce, sealedKey: sealedKey)
    }

    /// The master key, if `passphrase` is the kit's.
    func open(passphrase: Password) throws -> MasterKey {
        let kek = try KeyEncryptionKey.derive(password: passphrase.secret, salt: salt, parameters: kdf)
        do {
            return try MasterKey(secret: AEAD(.aes256GCM, key: kek.secret).openSecret(
                nonce: nonce, aad: Self.prefix(vaultID: vaultID, kdf: kdf, salt: salt), sealed: sealedKey))
        } catch CryptoError.authenticationFailed {
            throw VaultError.wrongPassword
        }
    }
}

extension UnlockedVault {
    /// A recovery kit for this vault's current master key.
    public func exportKit(passphrase: Password, kdf: Argon2Parameters) throws -> RecoveryKit {
        try RecoveryKit.seal(masterKey: keys.master, vaultID: vaultID, passphrase: passphrase, kdf: kdf)
    }
}

extension Vault {
    /// Opens the vault with a recovery kit (for `kit recover`): the kit must
    /// be this vault's (else `kitForAnotherVault`), its passphrase right
    /// (else `wrongPassword`, with the attempt delay), and its master key the
    /// current one (else `kitStale`: the vault was rekeyed since).
    public func unlock(kit: RecoveryKit, passphrase: Password, clock: UnlockClock = SystemClock(),
                       rollbackGuard: RollbackGuard? = nil) throws -> UnlockedVault {
        guard kit.vaultID == header.vaultID else { throw VaultError.kitForAnotherVault }
        // A generated passphrase typed loosely (lower case, no dashes) is
        // tried in its canonical form first, then as typed: one attempt.
        let candidates = (try KitArmor.canonicalPassphrase(passphrase.secret).map { [Password(secret: $0)] } ?? []) + [passphrase]
        let masterKey = try AttemptThrottle(path: paths.attempts, clock: clock).run { () throws -> MasterKey in
            for candidate in candidates.dropLast() {
                do { return try kit.open(passphrase: candidate) } catch VaultError.wrongPassword { continue }
            }
            return try kit.open(passphrase: passphrase)
        }
        do { try header.verify(masterKey: masterKey) } catch VaultError.corruptedOrTampered { throw VaultError.kitStale }
        return try unlock(masterKey: masterKey, forWriting: true, rollbackGuard: rollbackGuard)
    }
}
