import VaultCodecs
import System

// Folder items: a pax archive of the folder (VaultCodecs.FolderArchive)
// streamed straight into the item cipher, so no unencrypted archive ever
// touches the disk; restored with refusal of anything that would land
// outside the target.

extension Vault {
    /// Drops a whole folder in as one item, without the password. Devices,
    /// FIFOs and sockets are left out and listed in the returned `skipped`.
    @discardableResult
    public func dropIn(folder path: String, name: String, mode: UInt16, modified: Int64,
                       compression: Compression = .default, announce: ((String) -> Void)? = nil,
                       batch: DropInBatch? = nil, landed: @escaping () -> Void = {}) throws -> (entry: ManifestEntry, skipped: [String]) {
        let compression = Self.resolved(compression, folder: path)
        var skipped: [String] = [], index: [FolderIndex.Entry]?
        // The index as the archive is written (no pass over it), checked as
        // a kept one is, where it is worth keeping.
        let entry = try dropIn(name: name, kind: .folder, flags: [.archive, .codec(compression)], mode: mode,
                               modified: modified, announce: announce, batch: batch, landed: landed,
                               folderIndex: { index.flatMap { entries in
                                   // One that would not pass is not written: the first mount makes the pass.
                                   DroppedFolderIndex.isWorthKeeping(entries) ? try? FolderIndex.rebuild(entries) : nil
                               } }) { writer in
            let summary = try writeArchive(of: path, compression, to: writer, indexing: batch?.keepsFolderIndexes ?? true)
            (skipped, index) = (summary.skipped, summary.index)
            return (summary.bytes, summary.files)
        }
        return (entry, skipped)
    }

    /// What to write a folder with: auto stores it raw as a whole only when
    /// the start of each of its first 16 regular files (in the archive's
    /// order, 4 KiB each) looks incompressible: a folder of photos, which a
    /// mount then opens one by one without decoding the archive up to each.
    /// Anything mixed is zstd, its incompressible blocks stored raw.
    static func resolved(_ compression: Compression, folder: String) -> Compression {
        let samples = sample(folder: folder)
        guard compression == .auto, !samples.isEmpty else { return compression }
        let raw = samples.allSatisfy { s in s.withUnsafeBytes { compression.resolved(sample: $0) == Compression.none } }
        return raw ? .none : compression
    }

    /// The start of a folder's first regular files (up to 16, 4 KiB each, in the archive's order).
    static func sample(folder: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var files = 0
        func walk(_ dir: FilePath) {
            // A sample for the compression probe: what cannot be read is left out of it (the archive meets it for real).
            for name in ((try? Syscall.listDirectory(dir)) ?? []).sorted(by: { $0.lexicographicallyPrecedes($1) })
            where files < 16 {
                let path = dir.appending(name)
                guard let st = try? Syscall.status(of: path) else { continue }   // the same: a sample only
                if st.kind == .directory { walk(path); continue }
                guard st.kind == .regular, let f = try? FileHandleFD(readingFrom: path) else { continue }   // the same
                var b = [UInt8](repeating: 0, count: 4096)
                let n = (try? b.withUnsafeMutableBytes { try f.read(at: 0, into: $0) }) ?? 0   // the same
                out.append(Array(b[..<n]))
                files += 1
            }
        }
        walk(FilePath(folder))
        return out
    }
}

/// Archives the folder at `path` through `compression`'s encoder into `writer`.
/// With `indexing`, the summary holds the folder's index (FolderArchive.write).
func writeArchive(of path: String, _ compression: Compression, to writer: ItemWriter,
                  indexing: Bool = false) throws -> ArchiveSummary {
    let encoder = try compression.encoder(threads: compressionThreads, downstream: writer)
    let summary = try archiveError { try FolderArchive.write(directory: path, to: encoder ?? writer, indexing: indexing) }
    try encoder?.finish()
    return summary
}

extension UnlockedVault {
    /// An opened item's content as a pull stream, authenticated chunk by
    /// chunk and decompressed if it was stored compressed.
    func contentStream(_ r: ItemReader) throws -> ByteStream {
        try codecError { try r.decodedStream() }
    }

    /// Saves the folder at `path`, archived anew, as the newest version of
    /// a folder item, and keeps its index (as written: no pass over it).
    @discardableResult
    public func saveFolderVersion(of entry: ManifestEntry, from path: String, now: Int64,
                                  compression: Compression = .default) throws -> ManifestEntry {
        let compression = Vault.resolved(compression, folder: path)
        var index: [FolderIndex.Entry]?
        let saved = try saveVersion(of: entry, flags: [.archive, .codec(compression)], now: now) { writer in
            let summary = try writeArchive(of: path, compression, to: writer, indexing: true)
            index = summary.index
            return (summary.bytes, summary.files)
        }
        // A cache: an index that would not pass as a kept one is not kept (the first mount makes the pass).
        if let index, DroppedFolderIndex.isWorthKeeping(index), let checked = try? FolderIndex.rebuild(index) { keep(checked, of: saved) }
        return saved
    }

    /// Extracts a folder item into `destination` (which must not exist):
    /// built beside it and renamed into place only when complete, so a
    /// refusal or damage leaves nothing behind.
    /// `partial` learns the path of the tree being built and a StopRequest
    /// that stops the extraction and waits until it has erased that tree.
    @discardableResult
    /// `partials` records the tree while it is built, so a kill leaves
    /// nothing the next vault command does not erase.
    ///
    /// With `subtree` (a directory inside the folder: `FolderFile.directory`),
    /// only what lies under it, which gets that directory's mode and time.
    public func restoreFolder(_ entry: ManifestEntry, subtree: FolderDirectory? = nil, to destination: String,
                              partials: PartialOutputs? = nil,
                              partial: ((FilePath, StopRequest) -> Void)? = nil) throws -> ArchiveSummary {
        guard entry.kind == .folder else { throw VaultError.wrongItemKind(name: entry.name, expected: .folder) }
        let stream = try contentStream(reader(for: entry))
        do {
            let summary = try archiveError {
                let stop = StopRequest()
                var record: PartialOutputs.Record?
                defer { record?.remove() }
                let parts = subtree?.path.split(separator: "/").map { Array($0.utf8) } ?? []
                return try FolderArchive.extract(from: stream, into: FilePath(destination), subtree: parts, announce: { path in
                    // Best effort: a state directory that cannot be written
                    // costs only the clean-up after a SIGKILL, not the restore.
                    record = try? partials?.record(path.description)
                    partial?(path, stop)
                }, stop: stop) {
                    // A part of the folder has its own counts; the whole was read and authenticated all the same.
                    if subtree == nil { try ItemRules.checkArchive(entry, $0) }
                }
            }
            // The archive holds what is inside the folder; the folder's own
            // mode and time are in the manifest entry (a directory's, in its archive).
            try Syscall.setModeAndTime(destination, mode: subtree.map { UInt16($0.permissions & 0o7777) } ?? entry.mode,
                                       modified: subtree?.modified ?? entry.modified)
            return summary
        } catch VaultError.corruptedOrTampered, is CodecError {
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
        case .refused(let entry, let reason): throw VaultError.unsafeArchiveEntry(item: "", entry: entry, reason: reason)
        case .destinationExists(let path): throw VaultError.alreadyExists(path: path)
        case .changedWhileReading(let path): throw VaultError.changedWhileReading(path: path)
        // An authenticated item whose archive libarchive cannot read.
        case .library, .trailingData: throw VaultError.corruptedOrTampered
        }
    }
}
