import VaultCodecs

// Folder items: a pax archive of the folder (VaultCodecs.FolderArchive)
// streamed straight into the item cipher, so no unencrypted archive ever
// touches the disk; restored with refusal of anything that would land
// outside the target.

extension Vault {
    /// Drops a whole folder in as one item, without the password. Devices,
    /// FIFOs and sockets are left out and listed in the returned `skipped`.
    @discardableResult
    public func dropIn(folder path: String, name: String, mode: UInt16, modified: Int64)
        throws -> (entry: ManifestEntry, skipped: [String]) {
        var skipped: [String] = []
        let entry = try dropIn(name: name, kind: .folder, flags: [.archive], mode: mode, modified: modified) { writer in
            let summary = try archiveError { try FolderArchive.write(directory: path, to: writer) }
            skipped = summary.skipped
            return (summary.bytes, summary.files)
        }
        return (entry, skipped)
    }
}

extension UnlockedVault {
    /// An item's content as a pull stream, authenticated chunk by chunk.
    public func contentStream(_ entry: ManifestEntry) throws -> ByteStream {
        try reader(for: entry).contentStream()
    }

    /// Replaces a folder item with the folder at `path`, archived anew.
    @discardableResult
    public func replaceFolder(_ entry: ManifestEntry, from path: String, now: Int64) throws -> ManifestEntry {
        try replaceItem(entry, flags: [.archive], now: now) { writer in
            let summary = try archiveError { try FolderArchive.write(directory: path, to: writer) }
            return (summary.bytes, summary.files)
        }
    }

    /// Extracts a folder item into `destination` (which must not exist):
    /// built beside it and renamed into place only when complete, so a
    /// refusal or damage leaves nothing behind.
    @discardableResult
    public func restoreFolder(_ entry: ManifestEntry, to destination: String) throws -> ArchiveSummary {
        guard entry.kind == .folder else { throw VaultError.invalidArgument("'\(entry.name)' is not a folder") }
        let stream = try contentStream(entry)
        do {
            return try archiveError { try FolderArchive.extract(from: stream, into: destination) }
        } catch VaultError.corruptedOrTampered {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.unsafeArchiveEntry(_, let path, let reason) {
            throw VaultError.unsafeArchiveEntry(item: entry.name, entry: path, reason: reason)
        }
    }
}

/// Runs `body`, turning the archive layer's errors into the vault's.
func archiveError<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as ArchiveError {
        switch error {
        case .refused(let entry, .alreadyExists): throw VaultError.alreadyExists(path: entry)
        case .refused(let entry, let reason): throw VaultError.unsafeArchiveEntry(item: "", entry: entry, reason: reason.description)
        case .destinationExists(let path): throw VaultError.alreadyExists(path: path)
        case .changedWhileReading(let path): throw VaultError.invalidArgument("'\(path)' changed while it was being read")
        case .system(let function, let path, let code): throw VaultError.system(operation: function, path: path, errno: code)
        // An authenticated item whose archive libarchive cannot read.
        case .library: throw VaultError.corruptedOrTampered
        }
    }
}
