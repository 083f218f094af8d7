import VaultCrypto

/// The keys an unlocked vault works with, all derived from the master key.
struct VaultKeys: Sendable {
    let master: MasterKey
    let manifest: SecretBytes
    let privateKey: X25519PrivateKey

    init(masterKey: MasterKey, vaultID: [UInt8]) throws {
        master = masterKey
        manifest = try masterKey.manifestKey(vaultID: vaultID)
        privateKey = try masterKey.vaultKeyPair(vaultID: vaultID)
    }
}
