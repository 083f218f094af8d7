import System
import VaultCore

/// `vault snapshots prune` (docs/FORMAT.md, "Backups: forget and prune",
/// "Repacking"): under the drop lock held exclusively, every snapshot's
/// trees are walked for the byte ranges of packs it still needs; a pack
/// none of whose bytes are needed is deleted, and one at least a quarter
/// unused (PruneSafety) is rewritten as a repack that keeps only the
/// needed ranges, with a table that places them by their old offsets (so
/// no tree or snapshot is rewritten, and snapshot ids stay what every
/// machine knows them by). Then the owner's backups are told what each
/// repack kept (RepackNotes).
///
/// Plan, then execute (restic's split): `plan` says what each pack id
/// would need, from the walk alone; each such step then waits out the
/// grace (PruneSafety) counted from its mark (PruneMarks: when prune first
/// found that pack needing exactly what it needs now), and only the steps
/// past it are executed: repacks written, then one manifest write that
/// drops what goes, names the repacks and keeps the marks of the steps
/// still waiting, then the blobs deleted. A kill in either phase leaves
/// the manifest before or after that one write, whole.
///
/// What is never touched: packs a snapshot waiting in the inbox lists
/// (refused for now, it may be taken in later) and packs of a snapshot
/// whose trees cannot all be read (what it needs cannot be known). A
/// snapshot whose record does not open, here or waiting, stops the prune.
public enum Prune {
    public struct Summary {
        /// Packs (and repacks) deleted whole, and the bytes they held.
        public var deleted = 0, deletedBytes: UInt64 = 0
        /// Packs rewritten, the bytes they held, and what their repacks hold.
        public var repacked = 0, repackedFrom: UInt64 = 0, repackedTo: UInt64 = 0
        /// Snapshots whose trees could not all be read (their packs were left whole).
        public var unreadable: [String] = []
        /// Of those waiting, the steps past the grace held back because a
        /// remote's inbox could not be seen since (`seenUntil`).
        public var heldForRemotes = 0
        /// Packs that would be deleted or rewritten but wait out the grace,
        /// the bytes they hold, and when the first of them is due (Unix seconds).
        public var waiting = 0, waitingBytes: UInt64 = 0, nextDue: Int64?
    }

    /// What one pack id needs, as the walk found it.
    struct Step {
        let id: [UInt8]
        /// Entries that go (the pack and repacks, or the unused ones of them).
        var remove: [ManifestEntry]
        /// The source to rewrite and the ranges to keep, for a repack.
        var repack: (source: ManifestEntry, header: [UInt8], span: [(old: UInt64, length: UInt64)])?
        /// The piece bytes the snapshots need of this pack id, over all its
        /// sources: what a mark records.
        let needed: UInt64
    }

    /// `grace`: seconds a step waits from its mark (PruneSafety.deleteGrace
    /// unless the user said); `now`: this vault's clock. `seenUntil`: when
    /// a remote's inbox, where `backup --to` lands snapshots, could not be
    /// looked at now, the time it last was (0: never). A step is then due
    /// only if its grace ended by then: every snapshot that landed within
    /// the grace was seen and counted (issue 43, item 4: one unreachable
    /// remote no longer stops the whole prune, and loses nothing).
    /// Which packs are rewritten whatever the quarter-unused rule says, when
    /// they hold any byte no snapshot needs: none (the rule alone), the
    /// packs a rewrite took entries out of (a leak is purged, not kept
    /// because its pack is mostly still in use), or every pack.
    public enum Purge: Sendable, Equatable {
        case none, packs(Set<[UInt8]>), all
        func covers(_ id: [UInt8]) -> Bool {
            switch self {
            case .none: false
            case .packs(let set): set.contains(id)
            case .all: true
            }
        }
    }

    public static func run(_ vault: UnlockedVault, dryRun: Bool, grace: Int64 = PruneSafety.deleteGrace,
                           now: Int64 = Syscall.now(), seenUntil: Int64? = nil, purge: Purge = .none,
                           waiting: (() -> Void)? = nil) throws -> Summary {
        try vault.pruning(waiting: waiting) { waitingPacks in
            var summary = Summary()
            let (steps, live) = try plan(vault, pinned: waitingPacks, purge: purge, unreadable: &summary.unreadable)
            var marks = PruneMarks(), due: [Step] = []
            for step in steps {
                var mark = PruneMarks.Mark(since: now, needed: step.needed)
                if let kept = vault.manifest.pruneMarks[step.id], kept.needed == step.needed { mark = kept }
                let (age, overflow) = now.subtractingReportingOverflow(mark.since)
                let (end, late) = mark.since.addingReportingOverflow(grace)
                let seen = seenUntil.map { !late && end <= $0 } ?? true
                if !overflow && age >= grace && seen {
                    due.append(step)
                } else {
                    let held = !overflow && age >= grace
                    marks[step.id] = mark
                    summary.waiting += 1
                    summary.waitingBytes += step.remove.reduce(0) { $0 + $1.size }
                    if held { summary.heldForRemotes += 1 } else { summary.nextDue = min(summary.nextDue ?? .max, late ? .max : end) }
                }
            }
            var removed: [ManifestEntry] = [], added: [ManifestEntry] = []
            for step in due {
                if let r = step.repack {
                    summary.repacked += 1
                    summary.repackedFrom += r.source.size
                    summary.repackedTo += r.span.reduce(UInt64(r.header.count)) { $0 + $1.length }
                    if !dryRun { added.append(try repack(vault, step.id, from: r.source, header: r.header, span: r.span, live: live, now: now)) }
                } else {
                    summary.deleted += step.remove.count
                    summary.deletedBytes += step.remove.reduce(0) { $0 + $1.size }
                }
                removed += step.remove
            }
            if !dryRun {
                // No note may outlive the manifest it was made from (RepackNotes).
                try RepackNotes.clear(vault)
                try vault.replaceBackupStorage(removing: removed, adding: added, marks: marks)
                // The prune is done; a note that cannot be written leaves
                // none, and those backups store the repacked pieces again.
                do { try RepackNotes.write(vault) } catch { try? RepackNotes.clear(vault) }
            }
            return summary
        }
    }

    /// The plan: every snapshot's trees walked, then for each pack id not
    /// pinned what would be done to it. Pure over the vault's contents.
    static func plan(_ vault: UnlockedVault, pinned waitingPacks: Set<[UInt8]>, purge: Purge = .none,
                     unreadable: inout [String]) throws -> ([Step], LiveRanges) {
        var live = LiveRanges(vault)
        var pinned = waitingPacks
        for e in vault.snapshotEntries {
            let reader: SnapshotReader
            do { reader = try SnapshotReader(vault, e) } catch { throw VaultError.itemCorrupted(name: e.name) }
            do { try live.walk(reader) } catch {
                pinned.formUnion(reader.snapshot.packs)
                unreadable.append(reader.id)
            }
        }
        var steps: [Step] = []
        for id in packIDs(vault) where !pinned.contains(id) {
            let all = vault.manifest.versions(named: BackupItems.packName(id)) + vault.manifest.versions(named: BackupItems.repackName(id))
            let sources = vault.packSources(id)
            let spans = live.spans(of: id, sources: sources.count)
            let needed = spans.joined().reduce(UInt64(0)) { $0 + $1.length }
            // Repacks a pack shadows are never read: they go.
            var step = Step(id: id, remove: all.filter { e in !sources.contains { $0.itemID == e.itemID } }, repack: nil, needed: needed)
            if spans.allSatisfy(\.isEmpty) {
                step.remove = all
            } else if sources.count == 1 {
                let threshold = PruneSafety.repackWhenNeededAtMost
                let data = try live.dataLength(of: sources[0])
                if needed * threshold.denominator <= data * threshold.numerator || (purge.covers(id) && needed < data) {
                    step.repack = (sources[0], RepackTable.encode(pack: id, ranges: spans[0]), spans[0])
                    step.remove = all
                }
            } else {
                // Two repacks of one pack (two machines repacked it before
                // a merge): one holding nothing needed goes, the others stay as they are.
                for (e, span) in zip(sources, spans) where span.isEmpty { step.remove.append(e) }
            }
            if !step.remove.isEmpty { steps.append(step) }
        }
        return (steps, live)
    }

    /// Every pack id the manifest has a pack or repack of.
    static func packIDs(_ vault: UnlockedVault) -> [[UInt8]] {
        var seen = Set<[UInt8]>(), out: [[UInt8]] = []
        for e in vault.manifest.entries {
            let prefix: String
            switch e.kind {
            case .pack: prefix = BackupItems.packPrefix
            case .repack: prefix = BackupItems.repackPrefix
            default: continue
            }
            guard let id = Hex.decode(String(e.name.dropFirst(prefix.count))), id.count == 16, seen.insert(id).inserted else { continue }
            out.append(id)
        }
        return out
    }

    /// Writes the repack: header and table, then each span's bytes copied
    /// from the pack (or the repack it replaces).
    static func repack(_ vault: UnlockedVault, _ id: [UInt8], from source: ManifestEntry, header: [UInt8],
                       span: [(old: UInt64, length: UInt64)], live: LiveRanges, now: Int64) throws -> ManifestEntry {
        let content = try vault.randomAccess(source)
        let table = try live.knownTable(of: source)
        let length = span.reduce(UInt64(header.count)) { $0 + $1.length }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        return try vault.storeRepack(of: id, length: length, now: now) { w in
            try w.write(header)
            for s in span {
                guard var at = table.map({ $0.place(s.old, s.length) }) ?? s.old else { throw VaultError.corruptedOrTampered }
                var left = s.length
                while left > 0 {
                    let n = Int(min(left, UInt64(buffer.count)))
                    let got = try buffer.withUnsafeMutableBytes { try content.read(at: at, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<n])) }
                    guard got == n else { throw VaultError.corruptedOrTampered }
                    try buffer.withUnsafeBytes { try w.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                    at += UInt64(n)
                    left -= UInt64(n)
                }
            }
        }
    }
}

/// The byte ranges of each pack that the snapshots' references need, in
/// the pack's own offsets, each reference counted in the first source that
/// holds it (the reader's order: the pack, else its repacks).
struct LiveRanges {
    private let vault: UnlockedVault
    private var needed: [[UInt8]: [[(old: UInt64, length: UInt64)]]] = [:]
    private var tables: [[UInt8]: RepackTable] = [:]
    /// packSources by pack id (the manifest does not change during the walk).
    private var sourcesOf: [[UInt8]: [ManifestEntry]] = [:]
    /// Trees already walked, by where they are: a tree shared by many
    /// snapshots (an unchanged folder) is walked once.
    private var walked = Set<PieceRef>()

    init(_ vault: UnlockedVault) { self.vault = vault }

    mutating func walk(_ reader: SnapshotReader) throws {
        var budget = min(SnapshotReader.maxEntries, reader.snapshot.counts.files &+ reader.snapshot.counts.directories &+ reader.snapshot.counts.symlinks &+ 1)
        func walk(_ ref: PieceRef, depth: Int) throws {
            guard depth <= SnapshotReader.maxDepth else { throw VaultError.corruptedOrTampered }
            guard walked.insert(ref).inserted else { return }
            try note(ref)
            for e in try reader.tree(ref) {
                guard budget > 0 else { throw VaultError.corruptedOrTampered }
                budget -= 1
                for p in e.pieces { try note(p) }
                if e.kind == .directory, let sub = e.subtree { try walk(sub, depth: depth + 1) }
            }
        }
        try walk(reader.snapshot.root, depth: 0)
    }

    private mutating func note(_ ref: PieceRef) throws {
        guard ref.stored > 0 else { return }
        let sources = sourcesOf[ref.pack] ?? vault.packSources(ref.pack)
        sourcesOf[ref.pack] = sources
        for (i, e) in sources.enumerated() {
            if let table = try table(of: e, pack: ref.pack) {
                guard table.place(ref.offset, UInt64(ref.stored)) != nil else { continue }
            } else {
                guard ref.offset <= e.size, UInt64(ref.stored) <= e.size - ref.offset else { continue }
            }
            var lists = needed[ref.pack] ?? Array(repeating: [], count: sources.count)
            lists[i].append((ref.offset, UInt64(ref.stored)))
            needed[ref.pack] = lists
            return
        }
    }

    /// Per source of the pack (packSources' order), its needed ranges joined.
    func spans(of id: [UInt8], sources: Int) -> [[(old: UInt64, length: UInt64)]] {
        (needed[id] ?? Array(repeating: [], count: sources)).map(RepackTable.joined)
    }

    /// A repack's table (nil for a pack), read once.
    mutating func table(of e: ManifestEntry, pack: [UInt8]) throws -> RepackTable? {
        guard e.kind == .repack else { return nil }
        if let t = tables[e.itemID] { return t }
        guard let t = try RepackTable.read(from: vault.randomAccess(e), pack: pack, contentLength: e.size) else {
            throw VaultError.itemCorrupted(name: e.name)
        }
        tables[e.itemID] = t
        return t
    }

    /// A repack's table the walk read (nil for a pack).
    func knownTable(of e: ManifestEntry) throws -> RepackTable? {
        guard e.kind == .repack else { return nil }
        guard let t = tables[e.itemID] else { throw VaultError.itemCorrupted(name: e.name) }
        return t
    }

    /// The piece bytes a source holds (a repack's, without its table).
    func dataLength(of e: ManifestEntry) throws -> UInt64 {
        guard let t = try knownTable(of: e) else { return e.size }
        return t.ranges.reduce(0) { $0 + $1.length }
    }
}
