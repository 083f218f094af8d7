#if canImport(Glibc)
import Glibc
#endif
import VaultCodecs
import VaultCrypto

/// A vault opened with its password (or kit): the manifest decrypted, the
/// writer lock held when it was free. Every change is atomic and ordered so a
/// crash at any instant leaves a vault that opens with every completed item.
public final class UnlockedVault {
    public internal(set) var vault: Vault
    var keys: VaultKeys
    private let lock: WriterLock?
    public internal(set) var manifest: Manifest

    /// Whether this process holds the writer lock (read-only otherwise).
    public var canWrite: Bool { lock != nil }
    var paths: VaultPaths { vault.paths }
    var vaultID: [UInt8] { vault.header.vaultID }

    init(vault: Vault, keys: VaultKeys, lock: WriterLock?) throws {
        self.vault = vault
        self.keys = keys
        self.lock = lock
        let sealed = try vault.pendingRekey?.manifest ?? VaultDirectory.readFile(vault.paths.manifest, limit: Manifest.maxFileSize)
        manifest = try Manifest.open(sealed, key: keys.manifest, vaultID: vault.header.vaultID)
        if lock != nil, let pending = vault.pendingRekey { try pending.apply(vault.paths) }
    }

    func requireLock() throws { guard lock != nil else { throw VaultError.busy } }

    func saveManifest() throws {
        try requireLock()
        try VaultDirectory.atomicWrite(manifest.sealed(key: keys.manifest, vaultID: vaultID), to: paths.manifest)
    }

    public func entry(named name: String) throws -> ManifestEntry {
        guard let e = manifest.entry(named: name) else { throw VaultError.noSuchItem(name: name) }
        return e
    }

    // MARK: Drop-ins

    public struct AbsorbReport: Sendable {
        public var absorbed: [String] = []
        /// Envelopes that failed to open or whose content is missing or damaged; left in place.
        public var rejected: [String] = []
    }

    /// Moves waiting drop-ins into the manifest. Idempotent and crash-safe:
    /// content is renamed into items/ first, then one manifest write adds all
    /// entries, then the envelopes go. An envelope whose item is already in
    /// the manifest is only removed. A name already taken gets " (2)", " (3)"…
    @discardableResult
    public func absorbInbox() throws -> AbsorbReport {
        var report = AbsorbReport()
        guard lock != nil else { return report }
        var done: [String] = []
        for (blob, opened) in try waitingDropIns(openedWith: keys.privateKey) {
            let file = blob + ".env"
            guard var entry = opened else {
                report.rejected.append(file)
                continue
            }
            if manifest.entry(itemID: entry.itemID) != nil { done.append(blob); continue }
            let inboxContent = paths.dropInContent(blob), stored = paths.item(blob)
            if try Syscall.lstat(inboxContent) != nil {
                guard (try? ItemReader(key: entry.fileKey, source: FileHandleFD(readingFrom: inboxContent), threads: 1))?
                        .header.itemID == entry.itemID else {
                    report.rejected.append(file)
                    continue
                }
                try Syscall.rename(inboxContent, stored)
            } else if try Syscall.lstat(stored) == nil {
                report.rejected.append(file)
                continue
            }
            entry.name = manifest.freeName(like: entry.name)
            try manifest.add(entry)
            report.absorbed.append(entry.name)
            done.append(blob)
        }
        guard !done.isEmpty else { return report }
        try Syscall.fsyncDirectory(paths.items)
        try Syscall.fsyncDirectory(paths.inbox)
        if !report.absorbed.isEmpty { try saveManifest() }
        for blob in done { try? Syscall.unlink(paths.dropInEnvelope(blob)) }
        try Syscall.fsyncDirectory(paths.inbox)
        return report
    }

    /// The inbox's envelopes in name order, each opened with `privateKey`
    /// (nil if it does not open, or names another item than its file).
    func waitingDropIns(openedWith privateKey: X25519PrivateKey) throws -> [(blob: String, entry: ManifestEntry?)] {
        try Syscall.listDirectory(paths.inbox).sorted().filter { $0.hasSuffix(".env") && !$0.hasPrefix(".") }.map { file in
            let blob = String(file.dropLast(4))
            let entry = try? DropInEnvelope.open(
                VaultDirectory.readFile(paths.dropInEnvelope(blob), limit: DropInEnvelope.maxLength),
                with: privateKey, vaultID: vaultID)
            return (blob, entry?.blobName == blob ? entry : nil)
        }
    }

    // MARK: Reading

    /// Opens an item's blob. A missing, unreadable or damaged blob is
    /// `itemCorrupted(name)`.
    public func reader(for entry: ManifestEntry) throws -> ItemReader {
        do {
            let r = try ItemReader(key: entry.fileKey, source: FileHandleFD(readingFrom: paths.item(entry.blobName)))
            guard r.header.itemID == entry.itemID else { throw VaultError.corruptedOrTampered }
            return r
        } catch VaultError.corruptedOrTampered, VaultError.system(_, _, ENOENT), VaultError.system(_, _, ELOOP) {
            throw VaultError.itemCorrupted(name: entry.name)
        }
    }

    /// Streams an item's content to `sink`, each chunk authenticated first
    /// (and decompressed, if it was stored compressed). Returns the bytes written.
    @discardableResult
    public func read(_ entry: ManifestEntry, to sink: ByteSink) throws -> UInt64 {
        try read(entry, with: reader(for: entry), to: sink)
    }

    /// The same, with the item already opened (check has opened it to look at
    /// its header; opening again would authenticate the final chunk twice).
    func read(_ entry: ManifestEntry, with r: ItemReader, to sink: ByteSink) throws -> UInt64 {
        do {
            if r.header.flags.contains(.compressed) {
                return try xzError { try pump(XZDecompressor(upstream: r.contentStream()), into: sink) }
            }
            try r.readAll(to: sink)
            return r.contentLength
        } catch VaultError.corruptedOrTampered {
            throw VaultError.itemCorrupted(name: entry.name)
        }
    }

    /// Decrypts an item to a new file at `path`, never over an existing one:
    /// written beside it under a temp name (0600), fsync'ed, then linked into
    /// place only if `path` still does not exist.
    /// `tempFile` is told the temp file's path before the file exists, so
    /// an interrupt handler can remove it whenever the interrupt comes.
    public func export(_ entry: ManifestEntry, to path: String, tempFile: ((String) -> Void)? = nil,
                       progress: ((UInt64) -> Void)? = nil) throws {
        if try Syscall.lstat(path) != nil { throw VaultError.alreadyExists(path: path) }
        let temp: TempFile
        do { temp = try TempFile(beside: path, announce: tempFile) } catch VaultError.system(let op, _, let code) {
            throw VaultError.system(operation: op, path: path, errno: code)   // name the user's path, not ours
        }
        try read(entry, to: progress.map { ProgressSink(temp.file, report: $0) } ?? temp.file)
        do { try temp.commit(to: path, noReplace: true) } catch VaultError.system(_, _, EEXIST) {
            throw VaultError.alreadyExists(path: path)
        }
    }

    // MARK: Changes

    /// Drops items: their keys leave the manifest first (durably), then
    /// their blobs are unlinked. Throws noSuchItem before changing anything.
    public func remove(_ names: [String]) throws {
        try requireLock()
        for name in names where manifest.entry(named: name) == nil { throw VaultError.noSuchItem(name: name) }
        let removed = names.compactMap { manifest.remove(named: $0) }
        try saveManifest()
        for e in removed { try? Syscall.unlink(paths.item(e.blobName)) }
        try Syscall.fsyncDirectory(paths.items)
    }

    public func rename(_ name: String, to newName: String) throws {
        try requireLock()
        try manifest.rename(name, to: newName)
        try saveManifest()
    }

    /// Re-wraps the master key under a new password (new salt, same or new
    /// KDF parameters) and nothing else. The new header is written to a temp
    /// file, read back and unlocked with the new password before it replaces
    /// the old one.
    public func changePassword(to password: Password, kdf: Argon2Parameters? = nil) throws {
        try requireLock()
        let params = kdf ?? vault.header.kdf
        let salt = SecureRandom.bytes(16)
        let kek = try KeyEncryptionKey.derive(password: password.secret, salt: salt, parameters: params)
        let newHeader = try vault.header.rewrapped(masterKey: keys.master, kek: kek, salt: salt, kdf: params)
        try replaceHeader(with: newHeader, verifyWith: password)
    }

    /// Writes `header` beside the old one, reads it back, proves `password`
    /// unlocks it to this vault's master key, then renames it into place.
    func replaceHeader(with header: VaultHeader, verifyWith password: Password) throws {
        let temp = try TempFile(beside: paths.header)
        try header.bytes.withUnsafeBytes { try temp.file.write($0) }
        try temp.file.sync()
        let readBack = try VaultHeader(parsing: VaultDirectory.readFile(temp.path, limit: VaultHeader.length + 1))
        let kek = try KeyEncryptionKey.derive(password: password.secret, salt: readBack.salt, parameters: readBack.kdf)
        guard try readBack.unlock(kek: kek).secret == keys.master.secret else { throw VaultError.corruptedOrTampered }
        try temp.commit(to: paths.header)
    }
}

extension Manifest {
    /// `name` if free, else "stem (2).ext", "stem (3).ext", …
    func freeName(like name: String) -> String {
        guard entry(named: name) != nil else { return name }
        let (stem, ext): (Substring, Substring) = {
            if let dot = name.lastIndex(of: "."), dot != name.startIndex { return (name[..<dot], name[dot...]) }
            return (Substring(name), "")
        }()
        var n = 2
        while entry(named: "\(stem) (\(n))\(ext)") != nil { n += 1 }
        return "\(stem) (\(n))\(ext)"
    }
}
