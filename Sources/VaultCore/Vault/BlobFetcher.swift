import System

/// Where a thin vault's blobs that are not in items/ are read from (its
/// remote: VaultRemote's RemoteBlobs). Whatever it returns is read through
/// ItemReader like a local blob, so every chunk is authenticated under the
/// entry's file key and bound to its place before a byte is used: a remote
/// that sends other bytes, a short answer or another object makes the read
/// fail, never pass.
public protocol BlobFetcher: AnyObject {
    /// The blob `name` (an item id, hex) as the remote holds it, or nil if
    /// it holds none under that name.
    func source(forBlob name: String) throws -> ByteSource?
}

/// Where a thin vault's rekey sends its new blobs as it writes them, so
/// that items/ holds one batch at a time, not the whole vault again
/// (VaultRemote's ThinRekeyUpload; docs/FORMAT.md, "Rekey").
public protocol BlobOffload: AnyObject {
    /// The new blobs' bytes written before they are sent.
    var batchBytes: UInt64 { get }
    /// Sends the blobs `names` (in items/) to the remote, proves each there
    /// as ThinEviction does, and removes it here. Throws unless every one
    /// is proven.
    func offload(_ names: [String]) throws
    /// The blobs the remote holds now (item id in hex: size), from a listing.
    func remoteBlobs() throws -> [String: UInt64]
}

extension UnlockedVault {
    /// The sealed bytes of blob `name`: the file in items/, else (a thin
    /// vault) the fetcher's. A blob in neither place is ENOENT, as a
    /// missing file in a full vault is.
    package func blobSource(_ name: String) throws -> ByteSource {
        do {
            return try FileHandleFD(readingFrom: paths.item(name))
        } catch let error as SystemError where error.errno == .noSuchFile {
            guard let fetcher, let remote = try fetcher.source(forBlob: name) else { throw error }
            return remote
        }
    }

    /// Whether blob `name` is held here or, for a thin vault, by its remote.
    package func blobIsMissing(_ name: String) throws -> Bool {
        if try Syscall.status(of: paths.item(name)) != nil { return false }
        guard let fetcher else { return true }
        return try fetcher.source(forBlob: name) == nil
    }
}

extension UnlockedVault {
    /// Puts `path`, a copy of `entry`'s blob from elsewhere (`check
    /// --repair` healing from a remote), in place of the one in items/,
    /// after every check a reader makes: its header and length against the
    /// entry, every chunk, the decoded size, a folder's archive. Synced,
    /// renamed over the damaged or missing one, the directory synced.
    package func replaceBlob(_ entry: ManifestEntry, with path: String) throws {
        try requireLock()
        let copy = try FileHandleFD(readingFrom: path)
        let r = try ItemRules.open(entry, source: copy)
        _ = try read(entry, with: r, to: DiscardingSink())
        try copy.sync()
        try Syscall.rename(path, paths.item(entry.blobName))
        try Syscall.fsyncDirectory(paths.items)
    }
}
