import VaultCrypto

/// The keys an unlocked vault works with, all derived from the master key.
package struct VaultKeys: Sendable {
    let master: MasterKey
    package let manifest: SecretBytes
    /// Opens X25519 envelopes (sealed to a version-1 header, or before an upgrade).
    let privateKey: X25519PrivateKey
    /// Opens X-Wing envelopes (version-2 headers). Built once per unlock: one
    /// ML-KEM key generation and one X25519 base multiplication.
    let xwing: XWing.PrivateKey
    /// Names and seals folder index files (FolderIndexFile).
    let folderIndex: FolderIndexKeys

    init(masterKey: MasterKey, vaultID: [UInt8]) throws {
        master = masterKey
        manifest = try masterKey.manifestKey(vaultID: vaultID)
        folderIndex = try FolderIndexKeys(master: masterKey, vaultID: vaultID)
        privateKey = try masterKey.vaultKeyPair(vaultID: vaultID)
        xwing = try masterKey.xwingKeyPair(vaultID: vaultID)
    }
}
