import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

/// Vaults as earlier versions left them: a version-1 header, and a rekey
/// interrupted with a version-2 switch file (which holds a 182-byte header).
@Suite("Old vaults")
struct OldVaultTests {
    static func write(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    @Test func anInterruptedVersionTwoSwitchIsHonoured() throws {
        let t = TempVault()
        for d in ["", "/items", "/inbox"] {
            try FileManager.default.createDirectory(atPath: t.root + d, withIntermediateDirectories: true)
        }
        let vaultID = SecureRandom.bytes(16)
        func v1(_ master: MasterKey) throws -> VaultHeader {
            let salt = SecureRandom.bytes(16)
            let kek = try KeyEncryptionKey.derive(password: TempVault.password("correct horse").secret, salt: salt,
                                                  parameters: TempVault.weakKDF)
            return try VaultHeader.sealV1(vaultID: vaultID, kdf: TempVault.weakKDF, salt: salt, kek: kek, masterKey: master,
                                          options: [])
        }
        let oldMaster = try MasterKey.random(), newMaster = try MasterKey.random()
        let (old, new) = (try v1(oldMaster), try v1(newMaster))
        try Self.write(old.bytes, t.root + "/vault.header")
        try Self.write(try Manifest().sealed(key: oldMaster.manifestKey(vaultID: vaultID), vaultID: vaultID), t.root + "/manifest")
        // The switch as version 2 wrote it: no header length.
        var switchBytes = RekeySwitch.magic + [2, 0, 0, 0] + (try SHA256.hash(old.bytes)) + new.bytes + [0, 0, 0, 0]
        switchBytes += try Manifest().sealed(key: newMaster.manifestKey(vaultID: vaultID), vaultID: vaultID)
        switchBytes += try HMACSHA256.authenticate(key: newMaster.rekeySwitchKey(vaultID: vaultID), data: switchBytes)
        try Self.write(switchBytes, t.root + "/rekey.pending")

        #expect(try Vault(at: t.root).header == new)
        do { _ = try t.unlock() }  // finishes the switch
        #expect(!FileManager.default.fileExists(atPath: t.root + "/rekey.pending"))
        let header = try Vault(at: t.root).header
        #expect(header.version == 1 && header == new)
        // A tampered MAC is damage, not ignored.
        switchBytes[switchBytes.count - 1] ^= 1
        try Self.write(old.bytes, t.root + "/vault.header")
        try Self.write(switchBytes, t.root + "/rekey.pending")
        #expect(throws: VaultError.corruptedOrTampered) { _ = try t.unlock() }
    }

    /// A version-1 vault: the X25519 drop-in key, the password opens it, a
    /// rekey moves it to the current version (3) with X-Wing, keeping the password.
    @Test func aVersionOneVaultRekeysToTheCurrentVersion() throws {
        let t = TempVault()
        for d in ["", "/items", "/inbox"] {
            try FileManager.default.createDirectory(atPath: t.root + d, withIntermediateDirectories: true)
        }
        let vaultID = SecureRandom.bytes(16), salt = SecureRandom.bytes(16), master = try MasterKey.random()
        let kek = try KeyEncryptionKey.derive(password: TempVault.password("correct horse").secret, salt: salt,
                                              parameters: TempVault.weakKDF)
        let header = try VaultHeader.sealV1(vaultID: vaultID, kdf: TempVault.weakKDF, salt: salt, kek: kek,
                                            masterKey: master, options: [])
        try Self.write(header.bytes, t.root + "/vault.header")
        try Self.write(try Manifest().sealed(key: master.manifestKey(vaultID: vaultID), vaultID: vaultID), t.root + "/manifest")
        _ = try t.add("before", [1, 2, 3])  // an X25519 envelope
        #expect(!(try Vault(at: t.root).header.publicKey.isHybrid))
        do {
            let v = try t.unlock()
            try v.absorbInbox()
            #expect(v.manifest.entries.map(\.name) == ["before"])
            _ = try t.add("during", [4])  // waits in the inbox, X25519, absorbed by the rekey
            try v.rekey(password: TempVault.password("correct horse"))
        }
        let after = try Vault(at: t.root).header
        #expect(after.version == 4 && after.publicKey.isHybrid && after.slots.map(\.name) == ["password"])
        let reopened = try t.unlock()
        #expect(reopened.manifest.entries.map(\.name).sorted() == ["before", "during"])
        #expect(try t.read(reopened, "during") == [4])
    }
}
