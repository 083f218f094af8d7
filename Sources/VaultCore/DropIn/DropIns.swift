import System
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
    /// never takes a half-done drop-in.
    @discardableResult
    public func dropIn(name: String, kind: ItemKind, flags: ItemFlags, mode: UInt16, modified: Int64,
                       expectedLength: UInt64? = nil, progress: ((UInt64) -> Void)? = nil,
                       announce: ((String) -> Void)? = nil,
                       produce: (ItemWriter) throws -> (size: UInt64, files: UInt64)) throws -> ManifestEntry {
        try ManifestEntry.checkName(name)
        let itemHeader = try ItemHeader.random(flags: flags)
        let fileKey = try FileKey.random()
        let blob = Hex.encode(itemHeader.itemID)
        // `announce` lets the caller erase the content's temp file on Ctrl-C.
        let fileMode = dropInFileMode
        let content = try TempFile(beside: paths.dropInContent(blob), announce: announce, mode: fileMode)
        let sink: ByteSink = progress.map { ProgressSink(content.file, report: $0) } ?? content.file
        let writer = try ItemWriter(key: fileKey, header: itemHeader, sink: sink, expectedLength: expectedLength)
        let (size, files) = try produce(writer)
        try writer.finish()
        try content.commit(to: paths.dropInContent(blob))
        let entry = try ManifestEntry(itemID: itemHeader.itemID, fileKey: fileKey, kind: kind, origin: .droppedIn,
                                      mode: mode & 0o7777, size: size, fileCount: files,
                                      added: Syscall.now(), modified: modified, name: name)
        // The vault's key as it is now, read under the drop lock and held
        // until the envelope has landed: a rekey that ran while the content
        // was written has switched keys by now, and one that starts now
        // waits for this envelope and takes it in (DropLock).
        let dropLock = try DropLock(paths, exclusive: false)
        let current = try Vault(at: paths.root).header
        let envelope = try DropInEnvelope.seal(entry, to: current.publicKey, vaultID: current.vaultID)
        try VaultDirectory.atomicWrite(envelope, to: paths.dropInEnvelope(blob), mode: fileMode)
        // The content's flock (its TempFile's descriptor) must outlive the
        // envelope's landing: Swift may free `content` right after its last
        // use (the commit), and a `list` then takes the envelope-less content
        // for a leftover and deletes it, leaving an envelope that is refused.
        withExtendedLifetime((dropLock, content)) {}
        return entry
    }
}
