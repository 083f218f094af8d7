import System
import VaultCodecs
import VaultCrypto

// Making a drop-in: what `vault add` does without the password.

extension Vault {
    /// Adds a file's (or stdin's) content without the password; see the
    /// general form below.
    @discardableResult
    public func dropIn(from source: FileHandleFD, name: String, mode: UInt16, modified: Int64) throws -> ManifestEntry {
        try dropIn(name: name, kind: .file, flags: [], mode: mode, modified: modified,
                   expectedLength: source.isRegularFile ? source.size : nil) { writer in
            (try writer.consume(source), 1)
        }
    }

    /// Adds content without the password: `produce` writes the content
    /// stream (already compressed or archived, as `flags` say) into a sealed
    /// item under a fresh file key in the inbox and returns the content's
    /// size before compression and its file count; then the file key and
    /// metadata are sealed to the vault's public key (HPKE). The content's
    /// temp file stays flock'ed until the envelope has landed, so cleanup
    /// never takes a half-done drop-in. With `batch`, the envelope lands
    /// when the batch does (`landed` says when); without, before this returns.
    /// `folderIndex`: a folder's index as its writer made it, asked for
    /// once `produce` is done; sealed under the file key beside the content
    /// (DroppedFolderIndex), so the owner's first mount need not find it.
    @discardableResult
    public func dropIn(name: String, kind: ItemKind, flags: ItemFlags, mode: UInt16, modified: Int64,
                       expectedLength: UInt64? = nil, progress: ((UInt64) -> Void)? = nil,
                       announce: ((String) -> Void)? = nil, batch: DropInBatch? = nil,
                       landed: @escaping () -> Void = {}, folderIndex: () -> FolderIndex? = { nil },
                       produce: (ItemWriter) throws -> (size: UInt64, files: UInt64)) throws -> ManifestEntry {
        try ManifestEntry.checkName(name)
        // Absorb would set it aside: say so here, before anything is written.
        guard !BackupItems.isReservedName(name) else { throw VaultError.invalidName(name) }
        let itemHeader = try ItemHeader.random(flags: flags)
        let fileKey = try FileKey.random()
        let blob = Hex.encode(itemHeader.itemID)
        // The content has no name until it is whole (TempFile's nameless),
        // so a kill leaves nothing; `announce` lets the caller erase it on
        // Ctrl-C where it needs a temp name (no O_TMPFILE).
        let fileMode = dropInFileMode
        let content = try TempFile(beside: paths.dropInContent(blob), announce: announce, mode: fileMode, nameless: true)
        let sink: ByteSink = progress.map { ProgressSink(content.file, report: $0) } ?? content.file
        let writer = try ItemWriter(key: fileKey, header: itemHeader, sink: sink, expectedLength: expectedLength)
        let (size, files) = try produce(writer)
        try writer.finish()
        let entry = try ManifestEntry(itemID: itemHeader.itemID, fileKey: fileKey, kind: kind, origin: .droppedIn,
                                      mode: mode & 0o7777, size: size, fileCount: files,
                                      added: Syscall.now(), modified: modified, name: name)
        // Without a batch, a group of one landed at once.
        let group = batch ?? DropInBatch(into: self, expected: 1)
        let index = group.keepsFolderIndexes
            ? try folderIndex().flatMap { try DroppedFolderIndex.seal($0, fileKey: fileKey, itemID: itemHeader.itemID) } : nil
        try group.add(entry, content: content, index: index, landed: landed)
        if batch == nil { try group.land() }
        return entry
    }
}
