import VaultCodecs

// The rules that bind a manifest entry to its stored item (docs/FORMAT.md,
// "Manifest entry" and "Absorbing"), in one place. Absorb applies all of
// them before a drop-in enters the manifest; every reader (get, restore,
// open, check, rekey, move) applies the item rules while it streams. A
// dropper holds the file key of what it drops, so the AEAD proves nothing
// about these fields: only these checks do.

public enum ItemRules {
    /// Times an entry may carry: years 1 to 9999, what every date format prints.
    public static let earliestTime: Int64 = -62_135_596_800   // 0001-01-01T00:00:00Z
    public static let latestTime: Int64 = 253_402_300_799     // 9999-12-31T23:59:59Z

    /// What a drop-in's entry must satisfy on its own (checked at absorb;
    /// manifests written before these rules keep opening).
    static func checkEntry(_ e: ManifestEntry) throws {
        guard (earliestTime...latestTime).contains(e.added), (earliestTime...latestTime).contains(e.modified),
              e.kind == .folder || e.fileCount == 1 else { throw VaultError.corruptedOrTampered }
    }

    /// Opens the sealed item at `path` under `entry`'s file key (its final
    /// chunk authenticated) and checks it agrees with the entry: the one way
    /// readers, absorb, rekey and prune open an item.
    static func open(_ entry: ManifestEntry, at path: String, threads: Int = 2) throws -> ItemReader {
        try open(entry, source: FileHandleFD(readingFrom: path), threads: threads)
    }

    /// The same over any source of the sealed bytes (a thin vault's remote).
    static func open(_ entry: ManifestEntry, source: ByteSource, threads: Int = 2) throws -> ItemReader {
        let r = try ItemReader(key: entry.fileKey, source: source, threads: threads)
        try checkItem(entry, header: r.header, contentLength: r.contentLength)
        return r
    }

    /// What the item's header and content length (known once its final chunk
    /// opened) must agree with. Cheap: no content is read.
    static func checkItem(_ e: ManifestEntry, header: ItemHeader, contentLength: UInt64) throws {
        guard header.itemID == e.itemID, header.flags.contains(.archive) == (e.kind == .folder) else {
            throw VaultError.corruptedOrTampered
        }
        guard !header.flags.isCompressed else { return }   // sizes are checked as it decodes
        switch e.kind {
        case .file, .pack, .snapshot, .repack:
            guard contentLength == e.size else { throw VaultError.corruptedOrTampered }
        case .folder:
            // The archive holds every file's bytes, and a 512-byte header for each.
            guard e.size <= contentLength, e.fileCount <= contentLength / 512 else { throw VaultError.corruptedOrTampered }
        }
    }

    /// What a folder's archive must add up to once it has been read.
    static func checkArchive(_ e: ManifestEntry, _ summary: ArchiveSummary) throws {
        guard summary.files == e.fileCount, summary.bytes == e.size else { throw VaultError.corruptedOrTampered }
    }
}
