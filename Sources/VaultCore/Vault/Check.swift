import System
import VaultCodecs

/// What `check` found. Problems are damage (exit 14). The rest are
/// warnings: leftovers of an interrupted operation (temporary files, a
/// drop-in's content without its envelope), which the next writer and
/// `check --repair` delete; and orphans (blobs no manifest names, names
/// vault never writes), which no command deletes: a manifest put back from
/// an older copy would make the newer items' blobs look orphaned. `check
/// --repair` moves orphans and drop-ins that cannot be opened into
/// `quarantine/`; `check --repair --purge` deletes what is there.
public struct CheckReport: Sendable {
    public struct Problem: Sendable, Equatable {
        /// What is wrong with an item's blob (the CLI words it).
        public enum Kind: Sendable, Equatable {
            /// The blob is not in items/.
            case blobMissing
            /// The blob is there but fails its checks: corrupted or tampered.
            case corrupted
            /// A folder item holds an entry restore would refuse (`reason`).
            case unsafeEntry(path: String, reason: ArchiveError.Refusal)
        }
        public let item: String
        public let kind: Kind
        /// Which version of `item`, when it has more than one.
        public var version: UInt32? = nil
        public init(item: String, kind: Kind, version: UInt32? = nil) {
            (self.item, self.kind, self.version) = (item, kind, version)
        }
    }
    public var problems: [Problem] = []
    /// Leftover files (paths relative to the vault directory).
    public var leftovers: [String] = []
    /// Files no manifest names and no operation will finish.
    public var orphans: [String] = []
    /// Folder items (names) whose kept index (FolderIndexFile) says other
    /// than their archive, read whole: a dropper's index that lied, since
    /// one that was damaged does not open. A mount would show other bytes
    /// than a restore extracts; `--repair` removes the index.
    public var disagreeingIndexes: [String] = []
    /// Drop-in envelopes that could not be absorbed.
    public var rejectedDropIns: [String] = []
    /// What is in quarantine/ (after this check's repair, if any).
    public var quarantined: [String] = []
    /// What this check's repair moved to quarantine/.
    public var movedToQuarantine: [String] = []
    public var removed: [String] = []
    /// Items whose blob `check --repair` put back from a remote (the CLI fills it).
    public var healed: [(item: String, remote: String)] = []
    /// Items (names) and versions checked: an item with history has
    /// several versions, each its own blob. Not a backup's packs and
    /// snapshots, counted apart (with their content's bytes).
    public var itemsChecked = 0
    public var versionsChecked = 0
    public var itemBytes: UInt64 = 0
    public var snapshotsChecked = 0
    public var packsChecked = 0
    public var packBytes: UInt64 = 0
    public var bytesChecked: UInt64 = 0
}

/// `check --read-data-subset`: which blobs a check reads whole. Part n of
/// m: the item ids whose first four bytes, as a number, are n-1 modulo m
/// (ids are random), so the m parts read each blob once, in any order, on
/// any day. A percentage: blobs drawn at random, each taken while it brings
/// their sizes nearer that share of all (restic draws packs at random
/// too), so about that share of the bytes is read.
public enum CheckSubset: Equatable, Sendable {
    case part(UInt32, of: UInt32)
    case percent(Double)

    /// Whether part n of m holds `itemID` (a percentage holds none by id).
    public func contains(_ itemID: [UInt8]) -> Bool {
        guard case .part(let k, let m) = self else { return false }
        let n = itemID.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return n % m == k - 1
    }

    /// The item ids whose blobs are read whole, out of `entries`.
    public func choose(_ entries: [ManifestEntry], using generator: inout some RandomNumberGenerator) -> Set<[UInt8]> {
        switch self {
        case .part: return Set(entries.map(\.itemID).filter(contains))
        case .percent(let p):
            let total = entries.reduce(0.0) { $0 + Double($1.size) }
            var chosen = Set<[UInt8]>(), bytes = 0.0
            // A blob is taken when it brings the sum nearer the share:
            // with a few large packs, about it rather than always above.
            let target = total * p / 100
            for e in entries.shuffled(using: &generator) where abs(bytes + Double(e.size) - target) < abs(bytes - target) {
                chosen.insert(e.itemID)
                bytes += Double(e.size)
            }
            return chosen
        }
    }
}

extension UnlockedVault {
    /// Verifies the header (its MAC was checked at unlock), the manifest
    /// (parsed and authenticated at unlock), that every item's blob is there
    /// with a matching header and an authentic final chunk, and with
    /// `readData` every chunk of every item (of those in `subset`, if one
    /// is given). `remoteListing` (a thin vault: the remote's blobs and
    /// sizes) stands for opening a blob that is not here, unless its data
    /// is read: a check without --read-data costs one listing, not two
    /// reads per blob.
    public func check(readData: Bool, repair: Bool, purge: Bool = false, subset: CheckSubset? = nil,
                      remoteListing: [String: UInt64]? = nil, progress: ((UInt64) -> Void)? = nil) throws -> CheckReport {
        var report = CheckReport()
        report.rejectedDropIns = try absorbInbox().rejected
        var generator = SystemRandomNumberGenerator()
        let chosen = subset?.choose(manifest.entries, using: &generator)
        var disagreeing: [ManifestEntry] = []
        report.itemsChecked = manifest.items.count
        for entry in manifest.entries {
            switch entry.kind {
            case .pack, .repack: report.packsChecked += 1; report.packBytes &+= entry.size
            case .snapshot: report.snapshotsChecked += 1
            case .file, .folder: report.versionsChecked += 1; report.itemBytes &+= entry.size
            }
            let version = manifest.versions(named: entry.name).count > 1 ? entry.version : nil
            let readThis = readData && (chosen?.contains(entry.itemID) ?? true)
            if let remoteListing, !readThis, try Syscall.status(of: paths.item(entry.blobName)) == nil {
                // The smallest sealed item: its header, one tag, its trailer.
                let smallest = UInt64(ItemHeader.length + ItemCipher.tagLength + ItemCipher.trailerLength)
                if let size = remoteListing[entry.blobName], size >= smallest { continue }
                report.problems.append(.init(item: entry.name, kind: .blobMissing, version: version))
                continue
            }
            do {
                // The same checks every reader makes (ItemRules): the blob's
                // header and length against the entry, and with `readData`
                // every chunk, the decoded size, and a folder's archive.
                let r = try reader(for: entry)
                if readThis, entry.kind == .folder, let kept = keptIndex(of: entry) {
                    // The archive is the item; its kept index must say what one pass over it finds.
                    let (bytes, found) = try readFolder(entry, with: r)
                    report.bytesChecked &+= bytes
                    progress?(report.bytesChecked)
                    if found.entries != kept.entries {
                        report.disagreeingIndexes.append(entry.name)
                        disagreeing.append(entry)
                    }
                } else if readThis {
                    report.bytesChecked &+= try read(entry, with: r, to: DiscardingSink())
                    progress?(report.bytesChecked)
                }
            } catch VaultError.itemCorrupted {
                // Missing only when the kernel says so: a blob that cannot
                // be looked at is an error of this check, not a verdict.
                let missing = try blobIsMissing(entry.blobName)
                report.problems.append(.init(item: entry.name, kind: missing ? .blobMissing : .corrupted, version: version))
            } catch VaultError.unsafeArchiveEntry(_, let path, let reason) {
                report.problems.append(.init(item: entry.name, kind: .unsafeEntry(path: path, reason: reason), version: version))
            }
        }
        report.leftovers = try leftovers().map(\.description)
        let orphans = try self.orphans()
        report.orphans = orphans.map(\.description)
        if repair {
            guard canWrite else { throw VaultError.busy }
            report.removed = try removeLeftovers(leftovers())
            // An envelope that did not open, or named a drop-in that was
            // refused, goes with every content paired with it by name.
            let rejected = try report.rejectedDropIns.flatMap { env in
                try inboxFiles(ofEnvelope: String(env.dropLast(4))).map { FilePath("inbox/" + $0) }
            }
            report.movedToQuarantine = try quarantine(orphans + rejected).map(\.description)
            report.removed += forgetIndexes(of: disagreeing).map { "indexes/" + $0 }
            if purge { report.removed += try purgeQuarantine().map(\.description) }
            report.leftovers = []
            report.orphans = []
        }
        if try Syscall.status(of: paths.quarantine) != nil {
            report.quarantined = try Syscall.listDirectory(paths.quarantine).map { FilePath(bytes: $0).description }.sorted()
        }
        return report
    }

    /// Files an interrupted operation left (`Vault.leftovers`).
    func leftovers() throws -> [FilePath] { try vault.leftovers() }

    /// Blobs in items/ that no manifest entry names, names in items/ or
    /// inbox/ that vault never writes (by their bytes: they need not be
    /// UTF-8), and an ignored rekey.pending. Relative paths. Never deleted by any command but
    /// `check --repair --purge`, after `check --repair` quarantined them.
    func orphans() throws -> [FilePath] {
        let known = Set(manifest.entries.map(\.blobName))
        var out: [FilePath] = []
        for name in try VaultDirectory.names(in: paths.items)
        where !known.contains(name) && !name.hasPrefix(VaultDirectory.tempPrefix) {
            if !isLockedByWriter(paths.items + "/" + name) { out.append(FilePath("items/" + name)) }
        }
        for name in try VaultDirectory.names(in: paths.inbox)
        where !name.hasSuffix(".item") && !name.hasSuffix(".env") && !name.hasSuffix(".fx") && !name.hasPrefix(VaultDirectory.tempPrefix) {
            if !isLockedByWriter(paths.inbox + "/" + name) { out.append(FilePath("inbox/" + name)) }
        }
        for dir in ["items", "inbox"] {
            out += try VaultDirectory.strays(in: paths.root + "/" + dir).map { FilePath(dir).appending($0) }
        }
        // A switch that does not belong to this vault's header was ignored
        // when the vault opened (RekeySwitch.parse).
        if vault.pendingRekey == nil, try Syscall.status(of: paths.rekeyPending) != nil {
            out.append(FilePath("rekey.pending"))
        }
        return out
    }

    func removeLeftovers(_ files: [FilePath]) throws -> [String] {
        try requireLock()
        var removed: [String] = []
        let root = FilePath(paths.root)
        for f in files {
            let path = root.appending(f.bytes)
            guard let st = try Syscall.status(of: path), st.kind != .directory else { continue }
            if (try? Syscall.unlink(path)) != nil { removed.append(f.description) }   // best effort: one left is found again next time
        }
        for dir in [paths.items, paths.inbox, paths.root] { try Syscall.fsyncDirectory(dir) }
        return removed
    }

    /// Moves `files` (relative paths) into quarantine/ under their own names
    /// (a name taken there gets ".2", ".3", ...). Returns what moved.
    package func quarantine(_ files: [FilePath]) throws -> [FilePath] {
        try requireLock()
        guard !files.isEmpty else { return [] }
        let root = FilePath(paths.root), q = FilePath(paths.quarantine)
        if try Syscall.status(of: q) == nil { try Syscall.mkdir(q, mode: 0o700) }
        guard let st = try Syscall.status(of: q), st.kind == .directory else { throw VaultError.unsafeVaultPath(paths.quarantine) }
        var moved: [FilePath] = []
        for f in files {
            let name = Array(f.bytes.split(separator: UInt8(ascii: "/")).last ?? [])
            var target = q.appending(name), n = 2
            // A name that cannot be looked at is an error, never free:
            // rename(2) would replace what is there.
            while try Syscall.status(of: target) != nil {
                target = q.appending(name + Array(".\(n)".utf8))
                n += 1
            }
            // Best effort: what did not move stays where it was, not in `moved`, and is reported again.
            if (try? Syscall.rename(root.appending(f.bytes), target)) != nil { moved.append(f) }
        }
        for dir in [paths.items, paths.inbox, paths.quarantine] { try Syscall.fsyncDirectory(dir) }
        return moved
    }

    /// Deletes everything in quarantine/. Returns what went (as quarantine/NAME).
    func purgeQuarantine() throws -> [FilePath] {
        try requireLock()
        let q = FilePath(paths.quarantine)
        guard try Syscall.status(of: q) != nil else { return [] }
        var removed: [FilePath] = []
        for name in try Syscall.listDirectory(q) where Eraser.erase(q.appending(name)).isEmpty {
            removed.append(FilePath("quarantine").appending(name))
        }
        try Syscall.fsyncDirectory(q)
        return removed
    }

    /// What every unlock does: absorb drop-ins, then, when this process may
    /// write, remove leftovers of interrupted operations (never orphans).
    @discardableResult
    public func tidy() throws -> AbsorbReport {
        let report = try absorbInbox()
        if canWrite { _ = try removeLeftovers(leftovers()) }
        return report
    }

}
