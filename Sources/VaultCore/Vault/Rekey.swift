import VaultCrypto
import System

extension UnlockedVault {
    /// Makes a new master key (so new manifest key, header MAC key and key
    /// pair) and re-encrypts every item under a new file key and nonce
    /// prefix; the password stays, under a new salt. The switch from the old
    /// state to the new is one atomic file (RekeySwitch.swift); old blobs are
    /// removed only after the new header and manifest are durable. Recovery
    /// kits made before stop working.
    ///
    /// `progress` is told the content bytes re-encrypted so far.
    public func rekey(password: Password, progress: ((UInt64) -> Void)? = nil) throws {
        try requireLock()
        try absorbInbox()
        let oldKeys = keys
        let oldBlobs = manifest.entries.map(\.blobName)
        var done: UInt64 = 0

        // 1. Every item again, under new keys, beside the old blobs.
        var entries: [ManifestEntry] = []
        for var entry in manifest.entries {
            let reader = try reader(for: entry)
            let stored = try storeItem(flags: reader.header.flags, durable: false,
                                       expectedLength: reader.contentLength) { writer in
                try reader.readAll(to: writer)
                done += reader.contentLength
                progress?(done)
                return (entry.size, entry.fileCount)
            }
            entry.itemID = stored.header.itemID
            entry.fileKey = stored.key
            entries.append(entry)
        }
        // One syncfs for every new blob (an fsync each would cost a journal
        // commit per item), then the directory; only then the switch names them.
        try Syscall.syncFileSystem(paths.items)
        try Syscall.fsyncDirectory(paths.items)

        // 2. New master key, header and manifest, written as one switch file.
        let master = try MasterKey.random()
        let old = vault.header
        let salt = SecureRandom.bytes(16)
        let kek = try KeyEncryptionKey.derive(password: password.secret, salt: salt, parameters: old.kdf)
        let header = try VaultHeader.seal(vaultID: old.vaultID, kdf: old.kdf, salt: salt, kek: kek,
                                          masterKey: master, options: old.options)
        let newKeys = try VaultKeys(masterKey: master, vaultID: old.vaultID)
        let newManifest = try Manifest(entries: entries)
        let pending = RekeySwitch(header: header, manifest: try newManifest.sealed(key: newKeys.manifest, vaultID: old.vaultID))
        try VaultDirectory.atomicWrite(pending.bytes, to: paths.rekeyPending)

        // 3. Apply it; from here on the new keys are the vault's.
        try pending.apply(paths)
        keys = newKeys
        vault = try Vault(at: paths.root)
        manifest = newManifest

        // 4. The old blobs, and any drop-in sealed to the old key while this
        //    ran (absorbed with the old key pair, then stored anew).
        for blob in oldBlobs { try? Syscall.unlink(paths.item(blob)) }
        try Syscall.fsyncDirectory(paths.items)
        try absorbLateDropIns(oldKeys: oldKeys)
    }

    /// Drop-ins that an `add` sealed to the old public key during the rekey:
    /// opened with the old key pair and re-stored under the new keys.
    func absorbLateDropIns(oldKeys: VaultKeys) throws {
        for blob in try inboxEnvelopes() {
            guard var entry = openEnvelope(blob, with: oldKeys.privateKey),
                  let reader = try? ItemReader(key: entry.fileKey, source: FileHandleFD(readingFrom: paths.dropInContent(blob))),
                  (try? ItemRules.checkItem(entry, header: reader.header, contentLength: reader.contentLength)) != nil
            else { continue }
            let stored = try storeItem(flags: reader.header.flags) { writer in
                try reader.readAll(to: writer)
                return (entry.size, entry.fileCount)
            }
            entry.itemID = stored.header.itemID
            entry.fileKey = stored.key
            entry.name = manifest.freeName(like: entry.name)
            try manifest.add(entry)
            try saveManifest()
            try? Syscall.unlink(paths.dropInEnvelope(blob))
            try? Syscall.unlink(paths.dropInContent(blob))
        }
    }
}
