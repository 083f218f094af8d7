import VaultCrypto

// The key hierarchy (docs/FORMAT.md, "Key hierarchy"):
//
//   password --Argon2id(salt, m, t, p)--> KEK --AES-256-GCM wrap--> VMK
//   VMK --HKDF-SHA256(salt = vault id, info = label)--> header MAC key,
//                                                       manifest key,
//                                                       vault X25519 private key
//   manifest (encrypted under the manifest key) --> one random file key per item
//
// Each derived key has exactly one label and one use.

/// HKDF labels: versioned, one per derived key.
enum KeyLabel {
    static let headerMAC = Array("vault v1 header mac".utf8)
    static let manifest = Array("vault v1 manifest key".utf8)
    static let x25519 = Array("vault v1 x25519 private key".utf8)
    static let rekeySwitch = Array("vault v1 rekey switch".utf8)
    static let rekeyProgress = Array("vault v1 rekey progress".utf8)
    static let folderIndexKey = Array("vault v1 folder index key".utf8)
    static let folderIndexName = Array("vault v1 folder index name".utf8)
}

/// The key-encryption key Argon2id makes from a password or kit passphrase.
/// Used only to wrap or unwrap one master key.
public struct KeyEncryptionKey: Sendable {
    public let secret: SecretBytes

    public static func derive(password: SecretBytes, salt: [UInt8], parameters: Argon2Parameters) throws -> KeyEncryptionKey {
        KeyEncryptionKey(secret: try Argon2id.deriveKey(password: password, salt: salt, parameters: parameters))
    }
}

/// The vault master key (VMK): 32 random bytes, the root of every other key.
/// Stored only wrapped (in the header under the password's KEK, in a kit
/// under the kit passphrase's KEK).
public struct MasterKey: Sendable {
    public static let length = 32
    public let secret: SecretBytes

    public init(secret: SecretBytes) throws {
        guard secret.count == Self.length else { throw VaultError.misuse(.masterKeyLength) }
        self.secret = secret
    }

    public static func random() throws -> MasterKey { try MasterKey(secret: .random(count: length)) }

    func derive(_ label: [UInt8], vaultID: [UInt8]) throws -> SecretBytes {
        try HKDF.deriveKey(ikm: secret, salt: vaultID, info: label, length: 32)
    }

    /// HMAC-SHA256 key that authenticates the whole vault header.
    func headerMACKey(vaultID: [UInt8]) throws -> SecretBytes { try derive(KeyLabel.headerMAC, vaultID: vaultID) }

    /// HMAC-SHA256 key that binds a rekey switch to the master key it installs.
    func rekeySwitchKey(vaultID: [UInt8]) throws -> SecretBytes { try derive(KeyLabel.rekeySwitch, vaultID: vaultID) }

    /// AES-256-GCM key of a thin vault's rekey progress (the VMK the rekey
    /// leaves): what a rerun after a kill does not send again.
    func rekeyProgressKey(vaultID: [UInt8]) throws -> SecretBytes { try derive(KeyLabel.rekeyProgress, vaultID: vaultID) }

    /// AES-256-GCM key of the manifest.
    func manifestKey(vaultID: [UInt8]) throws -> SecretBytes { try derive(KeyLabel.manifest, vaultID: vaultID) }

    /// The vault's X25519 key pair, whose public half drop-ins are sealed to.
    /// Derived rather than stored, so there is no second secret to wrap.
    func vaultKeyPair(vaultID: [UInt8]) throws -> X25519PrivateKey {
        try X25519PrivateKey(secret: derive(KeyLabel.x25519, vaultID: vaultID))
    }
}

/// A user password or kit passphrase, NFC-normalised, in guarded memory.
public struct Password: Sendable {
    public let secret: SecretBytes
    public init(secret: SecretBytes) { self.secret = secret }
}

extension MasterKey {
    static let xwingSeedLabel = Array("vault v1 x-wing seed".utf8)

    /// The vault's X-Wing key pair (version-2 headers): its 32-byte seed
    /// from the master key, expanded by X-Wing's own key generation. Only
    /// the seed form exists (draft-connolly-cfrg-xwing-kem, 5.5.1).
    func xwingKeyPair(vaultID: [UInt8]) throws -> XWing.PrivateKey {
        try XWing.PrivateKey(seed: derive(Self.xwingSeedLabel, vaultID: vaultID))
    }

    /// The public key of the kind `like` is, derived from this master key.
    func publicKey(for like: VaultPublicKey, vaultID: [UInt8]) throws -> VaultPublicKey {
        switch like {
        case .x25519: .x25519(try vaultKeyPair(vaultID: vaultID).publicKey)
        case .xwing: .xwing(try xwingKeyPair(vaultID: vaultID).publicKey)
        }
    }
}
