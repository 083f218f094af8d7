import VaultCrypto

// Drop-in envelope, file `inbox/<item id hex>.env` (docs/FORMAT.md, "Drop-in"):
//
//   magic "VAULTENV" (8) || version 0x01 || suite 0x01 || enc (32) || ct
//   ct = HPKE base-mode seal to the vault public key (RFC 9180;
//        DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM),
//        info = "vault v1 drop-in" || vault id, aad = bytes 0..<42,
//        plaintext = one manifest entry (ManifestEntry.swift), origin = dropped in
//
// It carries the content's file key and metadata. The content itself is a
// sealed item beside it, `inbox/<item id hex>.item`.

public enum DropInEnvelope {
    public static let magic = Array("VAULTENV".utf8)
    public static let version: UInt8 = 1
    static let prefixLength = 42
    static let info = Array("vault v1 drop-in".utf8)
    public static let maxLength = prefixLength + ManifestEntry.fixedLength + ManifestEntry.maxNameLength + 16

    /// Seals `entry` to the vault's public key. Needs no secret of the vault.
    public static func seal(_ entry: ManifestEntry, to publicKey: X25519PublicKey, vaultID: [UInt8]) throws -> [UInt8] {
        var payload = [UInt8]()
        payload.reserveCapacity(entry.encodedLength)
        entry.encode(into: &payload)
        defer { SecureZero.zero(&payload) }
        let (enc, sender) = try HPKE.setupSender(recipient: publicKey, info: info + vaultID, aead: .aes256GCM)
        let prefix = magic + [version, 1] + enc
        return prefix + (try sender.seal(payload, aad: prefix))
    }

    /// Opens an envelope with the vault's private key. Exact shape, bounded
    /// size, authenticated, one entry and nothing after it.
    public static func open(_ file: [UInt8], with privateKey: X25519PrivateKey, vaultID: [UInt8]) throws -> ManifestEntry {
        guard file.count > prefixLength + 16, file.count <= maxLength,
              Array(file[0..<8]) == magic, file[8] == version, file[9] == 1 else {
            throw VaultError.corruptedOrTampered
        }
        let prefix = Array(file[0..<prefixLength])
        let payload: SecretBytes
        do {
            let r = try HPKE.setupRecipient(encapsulatedKey: Array(file[10..<42]), recipient: privateKey,
                                            info: info + vaultID, aead: .aes256GCM)
            payload = try r.openSecret(Array(file[prefixLength...]), aad: prefix)
        } catch { throw VaultError.corruptedOrTampered }
        return try payload.withUnsafeBytes { b in
            var offset = 0
            let e = try ManifestEntry.decode(b, offset: &offset)
            guard offset == b.count, e.origin == .droppedIn else { throw VaultError.corruptedOrTampered }
            return e
        }
    }
}
