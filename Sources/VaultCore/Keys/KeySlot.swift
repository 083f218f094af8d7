import ByteLayout
import VaultCrypto

// Key slots of a version-2 or version-3 header (docs/FORMAT.md, "Vault header, version 2").
// Each slot wraps the same master key under its own key-encryption key:
//
//   slot = kind u8 || name length u8 || name (UTF-8, 1..32) || created i64be
//          || params length u8 || params || wrap nonce (12) || wrapped VMK (32 + 16)
//   kind 1 (password): params = m u32be || t u32be || p u32be || salt (16)
//        KEK = Argon2id(password, salt, m, t, p)
//   kind 2 (key file): params = salt (16)
//        KEK = HKDF-SHA256(ikm = key file bytes, salt = salt, info = "vault v1 key file slot")
//   any other kind: params of at most 64 bytes, kept as they are and never
//        tried (room for a hardware-derived secret, e.g. a FIDO2 hmac-secret)
//
// The wrapped VMK's AAD is "VAULTHDR" || 0x02 || vault id || the slot's bytes
// before its nonce, so a slot cannot be moved to another vault, renamed, or
// given other KDF parameters without the wrap failing. The 0x02 stays in
// version-3 headers: a slot is the same bytes in both (VaultHeaderV3.swift).

public struct KeySlot: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case password(Argon2Parameters, salt: [UInt8])
        case keyFile(salt: [UInt8])
        /// A kind this version does not know: kept, listed, never used.
        case other(UInt8, params: [UInt8])

        var code: UInt8 {
            switch self {
            case .password: 1
            case .keyFile: 2
            case .other(let k, _): k
            }
        }

        var params: [UInt8] {
            switch self {
            case .password(let kdf, let salt):
                var w = ByteWriter()
                w.u32(kdf.memoryKiB); w.u32(kdf.passes); w.u32(kdf.lanes)
                w.bytes(salt)
                return w.bytes
            case .keyFile(let salt): return salt
            case .other(_, let params): return params
            }
        }
    }

    public static let maxSlots = 8
    public static let maxNameBytes = 32
    static let maxOtherParams = 64
    static let saltLength = 16
    static let wrappedLength = MasterKey.length + 16

    public let name: String
    public let kind: Kind
    /// Unix seconds when the slot was added (informational, authenticated by the header MAC).
    public let created: Int64
    let wrapNonce: [UInt8]
    let wrapped: [UInt8]

    /// The name rule: 1 to 32 bytes of UTF-8, letters, digits and `-_.@`.
    public static func checkName(_ name: String) throws {
        let ok = !name.isEmpty && name.utf8.count <= maxNameBytes
            && name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.@".unicodeScalars.contains($0) }
        guard ok else { throw VaultError.invalidKeySlotName }
    }

    /// The bytes before the wrap nonce.
    var describingBytes: [UInt8] {
        let n = Array(name.utf8)
        var w = ByteWriter([kind.code, UInt8(n.count)] + n)
        w.i64(created)
        let p = kind.params
        w.u8(UInt8(p.count))
        w.bytes(p)
        return w.bytes
    }

    var bytes: [UInt8] { describingBytes + wrapNonce + wrapped }

    static func aad(vaultID: [UInt8], describing: [UInt8]) -> [UInt8] {
        VaultHeader.magic + [2] + vaultID + describing
    }

    /// A new slot wrapping `masterKey` under `kek`.
    static func seal(name: String, kind: Kind, created: Int64, kek: KeyEncryptionKey, masterKey: MasterKey,
                     vaultID: [UInt8], nonce: [UInt8] = SecureRandom.bytes(12)) throws -> KeySlot {
        try checkName(name)
        let unsealed = KeySlot(name: name, kind: kind, created: created, wrapNonce: nonce, wrapped: [])
        let wrapped = try AEAD(.aes256GCM, key: kek.secret).seal(
            nonce: nonce, aad: aad(vaultID: vaultID, describing: unsealed.describingBytes), plaintext: masterKey.secret)
        return KeySlot(name: name, kind: kind, created: created, wrapNonce: nonce, wrapped: wrapped)
    }

    /// The master key, if `kek` is this slot's; `wrongPassword` if not.
    func unwrap(kek: KeyEncryptionKey, vaultID: [UInt8]) throws -> MasterKey {
        do {
            return try MasterKey(secret: AEAD(.aes256GCM, key: kek.secret).openSecret(
                nonce: wrapNonce, aad: Self.aad(vaultID: vaultID, describing: describingBytes), sealed: wrapped))
        } catch CryptoError.authenticationFailed {
            throw VaultError.wrongPassword
        }
    }

    /// Reads one slot from `r` (exact shapes, bounded lengths, KDF
    /// parameters within the header limits); `corruptedOrTampered` otherwise.
    static func parse(_ r: inout ByteReader) throws -> KeySlot {
        do {
            let code = try r.u8(), nameLength = Int(try r.u8())
            guard code != 0, (1...maxNameBytes).contains(nameLength),
                  let name = String(validating: try r.bytes(nameLength), as: UTF8.self),
                  (try? checkName(name)) != nil else { throw VaultError.corruptedOrTampered }   // a stored name out of the rule is damage
            let created = try r.i64()
            let params = try r.lengthPrefixed(UInt8.self)
            let kind: Kind
            switch code {
            case 1:
                guard params.count == 12 + saltLength else { throw VaultError.corruptedOrTampered }
                var p = ByteReader(params)
                let (m, t, l) = (try p.u32(), try p.u32(), try p.u32())
                // Stored costs out of bounds are damage, whichever bound they break.
                guard let kdf = try? Argon2Parameters(memoryKiB: m, passes: t, lanes: l),
                      (try? VaultHeader.checkBounds(kdf)) != nil else { throw VaultError.corruptedOrTampered }
                kind = .password(kdf, salt: p.rest())
            case 2:
                guard params.count == saltLength else { throw VaultError.corruptedOrTampered }
                kind = .keyFile(salt: params)
            default:
                guard params.count <= maxOtherParams else { throw VaultError.corruptedOrTampered }
                kind = .other(code, params: params)
            }
            let nonce = try r.bytes(12), wrapped = try r.bytes(wrappedLength)
            return KeySlot(name: name, kind: kind, created: created, wrapNonce: nonce, wrapped: wrapped)
        } catch is ByteLayoutError {
            throw VaultError.corruptedOrTampered
        }
    }
}

/// A key file's secret: its bytes, 32 to 4,096 of them (read with a limit,
/// so a device or a huge file cannot make vault read without end).
public struct KeyFileSecret: Sendable {
    public static let minLength = 32
    public static let maxLength = 4096
    static let label = Array("vault v1 key file slot".utf8)
    public let secret: SecretBytes

    public init(secret: SecretBytes) throws {
        guard (Self.minLength...Self.maxLength).contains(secret.count) else {
            throw VaultError.keyFileLength(path: nil, bytes: secret.count)
        }
        self.secret = secret
    }

    /// KEK = HKDF-SHA256(key file, salt, "vault v1 key file slot"): the file is
    /// already high-entropy, so no password stretching.
    func kek(salt: [UInt8]) throws -> KeyEncryptionKey {
        KeyEncryptionKey(secret: try HKDF.deriveKey(ikm: secret, salt: salt, info: Self.label, length: 32))
    }
}

extension KeyFileSecret {
    /// Reads a key file: a regular file (symlinks followed: it is the user's
    /// path; a FIFO or device is refused before a byte is read, see
    /// `FileHandleFD.regularFile`), at most 4,096 bytes, copied into guarded
    /// memory and the buffer zeroed. `readableByOthers`: group or others may
    /// read the file, which the caller warns about (the file is as good as
    /// the password).
    public static func read(path: String) throws -> (secret: KeyFileSecret, readableByOthers: Bool) {
        let file = try FileHandleFD.regularFile(path, what: .keyFile)
        let readableByOthers = try file.status().mode & 0o044 != 0
        var bytes = try file.readAll(limit: maxLength)
        defer { SecureZero.zero(&bytes) }
        guard bytes.count >= minLength else {
            throw VaultError.keyFileLength(path: path, bytes: bytes.count)
        }
        return (try KeyFileSecret(secret: SecretBytes(consuming: &bytes)), readableByOthers)
    }

    /// Writes a new key file of 64 random bytes (mode 0600, never over an
    /// existing file, never half-written) and returns its secret.
    public static func generate(to path: String) throws -> KeyFileSecret {
        let secret = try SecretBytes.random(count: 64)
        var bytes = secret.withUnsafeBytes { Array($0) }
        defer { SecureZero.zero(&bytes) }
        try UserFiles.writeNew(bytes, to: path)
        return try KeyFileSecret(secret: secret)
    }
}
