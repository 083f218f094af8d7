import System
import VaultCrypto

/// A drop-in written piece by piece and landed when the caller says: what
/// `Vault.dropIn` does in one call, split so that `vault backup` can fill a
/// pack as it walks a tree and land it when it is full. Content first
/// (written, synced, renamed into the inbox), then the envelope sealed to
/// the vault's key as it is at that moment, under the drop lock (DropIns.swift
/// says why). Dropped without `land`, the temp file goes and nothing is left.
public final class StreamedDropIn {
    public let itemID: [UInt8]
    private let vault: Vault
    private let kind: ItemKind
    private let name: String
    private let fileKey: FileKey
    private let content: TempFile
    private let writer: ItemWriter
    private var landed = false
    private var finished = false

    /// `name(itemID)`: the item's name, which may depend on its id (a pack's
    /// does). `memory`: the sealing buffers, kept by a caller that drops
    /// one item after another (ItemWriterMemory); used by one at a time.
    public init(into vault: Vault, kind: ItemKind, name: ([UInt8]) -> String, expectedLength: UInt64? = nil,
                memory: ItemWriterMemory? = nil) throws {
        let header = try ItemHeader.random(flags: [])
        (self.vault, self.kind, self.itemID) = (vault, kind, header.itemID)
        self.name = name(header.itemID)
        try ManifestEntry.checkName(self.name)
        fileKey = try FileKey.random()
        content = try TempFile(beside: vault.paths.dropInContent(Hex.encode(header.itemID)), mode: vault.dropInFileMode)
        writer = try ItemWriter(key: fileKey, header: header, sink: content.file, expectedLength: expectedLength,
                                memory: memory)
    }

    /// Content bytes written so far.
    public var length: UInt64 { writer.contentLength }
    /// Sealed bytes written so far (what the inbox grows by).
    public var sealedLength: UInt64 { writer.sealedLength }

    public func write(_ bytes: UnsafeRawBufferPointer) throws { try writer.write(bytes) }

    /// Seals the last chunk: the sealing memory is free for the next item
    /// once this returns (`land` does it if it was not done).
    public func finish() throws {
        guard !finished else { return }
        finished = true
        try writer.finish()
    }

    /// Seals the last chunk, lands the content and then the envelope; both
    /// are durable when this returns.
    @discardableResult
    public func land(modified: Int64) throws -> ManifestEntry {
        precondition(!landed, "a drop-in lands once")
        landed = true
        try finish()
        let blob = Hex.encode(itemID)
        try content.commit(to: vault.paths.dropInContent(blob))
        let entry = try ManifestEntry(itemID: itemID, fileKey: fileKey, kind: kind, origin: .droppedIn, mode: 0o600,
                                      size: writer.contentLength, fileCount: 1, added: Syscall.now(),
                                      modified: modified, name: name)
        let dropLock = try DropLock(vault.paths, exclusive: false)
        let current = try Vault(at: vault.paths.root).header
        let envelope = try DropInEnvelope.seal(entry, to: current.publicKey, vaultID: current.vaultID)
        let target = vault.paths.dropInEnvelope(blob), mode = vault.dropInFileMode
        try VaultDirectory.atomicWrite(envelope, to: target, mode: mode)
        // Another user's drop-in holds no lock a rekey waits for: it looks again.
        try dropLock.confirm([DropLock.Landed(stem: blob) { try DropInEnvelope.seal(entry, to: $0.publicKey, vaultID: $0.vaultID) }],
                             sealedTo: current.publicKey) { _, envelope in try VaultDirectory.atomicWrite(envelope, to: target, mode: mode) }
        withExtendedLifetime((dropLock, content)) {}
        return entry
    }
}
