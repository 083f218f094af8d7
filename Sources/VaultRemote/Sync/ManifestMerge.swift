import System
import VaultCore

// Three-way merge of manifests (docs/FORMAT.md, "Merge"): what `push` and
// `pull` do when this vault and a remote both changed since they were last
// in step. Pure: no I/O, no keys; ManifestMergeTests checks the published
// vector and the rules on random histories.
//
// Entries are immutable blobs with random ids, so the merge works on ids:
// an id either side holds is kept unless the other side dropped it since the
// base; only an entry's name and version number can differ between sides.
// What an id names is looked at only where a dropper may have forged it:
// one id, two items (kind and file key), and a tombstone whose digest names
// another item than the one held (neither removes the other). Step 0
// (`keepingPacks`) looks at kinds: a backup's pack that one side pruned
// stays while a snapshot the other side took in since needs it.

public enum ManifestMerge {
    /// Which side of a merge.
    public enum Side: Sendable, Equatable { case ours, theirs }

    /// A change that both sides made differently, kept and listed.
    public struct Conflict: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// Both sides renamed the item, to these different names.
            case renamedOnBoth(ours: String, theirs: String)
            /// `removedBy` removed the item (every version) while the other
            /// side renamed it or added a version to it.
            case removedAndChanged(removedBy: Side)
            /// Both sides hold one item id for two different items (other
            /// file keys or kinds): ids are random, so one was forged by a
            /// dropper who learned the id (docs/SECURITY.md). Each side
            /// keeps its own unless the base holds the other's; `kept` is
            /// the side kept.
            case idClaimedTwice(kept: Side)
            /// Both sides added versions under one name since the base
            /// (each edited the file). Both stay, as versions of the one
            /// item (the merge rule is unchanged): `older`'s are the older
            /// ones. Listed so that it is said, not found later in
            /// `--versions` (issue 43, item 2).
            case editedOnBoth(older: Side)
            /// A name that a merge on another machine gave an item to keep
            /// it apart (" (conflict)"), new here with this fetch.
            case keptApartElsewhere
        }
        public let kind: Kind
        /// The item's name in the base (nil: not in the base).
        public let base: String?
        /// Its name in the merged manifest.
        public let kept: String
    }

    public struct Result: Sendable {
        public let manifest: Manifest
        public let conflicts: [Conflict]
    }

    /// What a conflicting item's name gets, so the listing says so.
    public static let conflictSuffix = " (conflict)"

    /// Step 0, then the merge: a snapshot that only one side holds and the
    /// base does not (taken in there since) keeps every pack it lists that
    /// that side holds as "pack-<id>", even if the other side pruned it, so
    /// a prune never takes from a snapshot it could not see. Such a pack
    /// counts as not in the base (so it stays as an addition of that side).
    /// `packsOf` gives a snapshot's pack list (nil: it does not open, and
    /// needs nothing; thrown: it could not be read, and the merge stops).
    public static func merge(base: [ManifestEntry], baseTombstones: Tombstones = Tombstones(), ours: Manifest, theirs: Manifest,
                             packsOf: (ManifestEntry, Side) throws -> [[UInt8]]?) throws -> Result {
        let inBase = Set(base.map { ByteKey($0.itemID) })
        var keep = Set<ByteKey>()
        for (side, mine, other) in [(Side.ours, ours, theirs), (Side.theirs, theirs, ours)] {
            for e in mine.entries where e.kind == .snapshot && !inBase.contains(ByteKey(e.itemID)) && other.entry(itemID: e.itemID) == nil {
                for id in try packsOf(e, side) ?? [] {
                    if let p = mine.entry(named: BackupItems.packName(id)), p.kind == .pack { keep.insert(ByteKey(p.itemID)) }
                }
            }
        }
        return try merge(base: keep.isEmpty ? base : base.filter { !keep.contains(ByteKey($0.itemID)) }, baseTombstones: baseTombstones,
                         ours: ours, theirs: theirs, now: Syscall.now(), exempt: keep)
    }

    /// Merges `ours` and `theirs`, which both descend from `base` (the
    /// entries of the manifest both last held, and its tombstones; empty
    /// when not known: then only what a side's tombstones say it let go
    /// counts as removed). The
    /// result's generation is above both, its history holds both, its
    /// tombstones are both sides' and every id it drops (let go at `now`
    /// unless a side says earlier), its marks both sides' for the packs it
    /// keeps. Symmetric: swapping ours and theirs gives the same manifest.
    /// `exempt`: ids that never count as in the base (step 0's packs).
    /// Throws what `Manifest` throws when the result would not fit.
    public static func merge(base: [ManifestEntry], baseTombstones: Tombstones = Tombstones(), ours: Manifest, theirs: Manifest,
                             now: Int64 = Syscall.now()) throws -> Result {
        try merge(base: base, baseTombstones: baseTombstones, ours: ours, theirs: theirs, now: now, exempt: [])
    }

    static func merge(base: [ManifestEntry], baseTombstones: Tombstones, ours: Manifest, theirs: Manifest, now: Int64,
                      exempt: Set<ByteKey>) throws -> Result {
        // An id one side holds and the other let go since the base (a
        // tombstone the base does not have) counts as in the base, under
        // the holder's name: the other side removed it, whether or not
        // this vault kept the manifest both last held (issue 37: a remote
        // added again had no base, and a merge without one brought back
        // what the other side had removed). One the base had let go
        // already and a side holds again was kept since by a conflict
        // (step 3) that side saw: it stays that side's.
        // A tombstone whose digest names another item than the one held
        // (a dropper forged that id, and the forgery or the real item was
        // let go there) removes nothing here: the holder's entry is its
        // addition, said as a conflict below (the model test lost a file
        // to a junk pack's removal so).
        var base = base
        let known = Set(base.map { ByteKey($0.itemID) })
        var claimed: [(ManifestEntry, Side)] = []
        for (side, mine, other) in [(Side.ours, ours, theirs), (Side.theirs, theirs, ours)] where other.tombstones.count > 0 {
            for e in mine.entries where other.tombstones.contains(e.itemID) && !baseTombstones.contains(e.itemID) {
                let id = ByteKey(e.itemID)
                guard !known.contains(id), !exempt.contains(id) else { continue }
                if other.tombstones.removes(e) { base.append(e) } else { claimed.append((e, side)) }
            }
        }
        let b = Dictionary(base.map { (ByteKey($0.itemID), $0) }, uniquingKeysWith: { a, _ in a })
        let o = Dictionary(uniqueKeysWithValues: ours.entries.map { (ByteKey($0.itemID), $0) })
        let t = Dictionary(uniqueKeysWithValues: theirs.entries.map { (ByteKey($0.itemID), $0) })
        var picks: [ByteKey: Pick] = [:]
        var conflicts: [String: Conflict] = [:]

        for id in Set(o.keys).union(t.keys) {
            switch (o[id], t[id]) {
            case let (mine?, other?) where !sameItem(mine, other):
                // One id, two items: ours stays (its blob is the one here)
                // unless the base holds theirs; never a mix of the two.
                let theirsInBase = b[id].map { sameItem($0, other) } ?? false
                let kept = theirsInBase ? other : mine
                picks[id] = Pick(entry: kept, name: kept.name, own: kept.version, shared: nil)
                conflicts[kept.name] = Conflict(kind: .idClaimedTwice(kept: theirsInBase ? .theirs : .ours), base: b[id]?.name,
                                                kept: kept.name)
            case let (mine?, other?):
                let base = b[id]
                // The number both give it, or the one of the side that
                // renumbered it since the base (a merge on that side did).
                var agreed: UInt32? = mine.version == other.version ? mine.version : nil
                if agreed == nil, let base {
                    agreed = base.version == mine.version ? other.version : base.version == other.version ? mine.version : nil
                }
                var pick = Pick(entry: mine, name: mine.name, own: min(mine.version, other.version), shared: agreed)
                if !same(mine.name, other.name) {
                    if let base, same(mine.name, base.name) {
                        pick.name = other.name
                    } else if let base, same(other.name, base.name) {
                        pick.name = mine.name
                    } else {
                        // Both renamed it (or both took it in under other names).
                        let (a, b) = (stem(mine.name), stem(other.name))
                        pick.name = conflictName(ByteKey(a).bytes.lexicographicallyPrecedes(ByteKey(b).bytes) ? a : b)
                        pick.shared = nil
                        conflicts[pick.name] = Conflict(kind: .renamedOnBoth(ours: mine.name, theirs: other.name),
                                                        base: base?.name, kept: pick.name)
                    }
                }
                picks[id] = pick
            case let (one?, nil), let (nil, one?):
                // Added on that side: kept. In the base: the other side
                // removed or forgot it, which applies (unless it is part of
                // a conflict, below). A base entry of that id that is
                // another item was not this one: what the other side
                // dropped was not what this side holds.
                if b[id].map({ !sameItem($0, one) }) ?? true {
                    picks[id] = Pick(entry: one, name: one.name, own: one.version, shared: nil)
                }
            case (nil, nil):
                break
            }
        }

        // The names both sides added versions to since the base, each
        // under its own name (not moved by a conflict): both stay as
        // versions; which is current is read off the numbered result below.
        func addedNames(_ side: Manifest, _ other: [ByteKey: ManifestEntry]) -> Set<ByteKey> {
            Set(side.entries.filter { e in
                (e.kind == .file || e.kind == .folder) && b[ByteKey(e.itemID)] == nil && other[ByteKey(e.itemID)] == nil
                    && picks[ByteKey(e.itemID)].map { same($0.name, e.name) } == true
            }.map { ByteKey($0.name) })
        }
        let editedOnBoth = addedNames(ours, t).intersection(addedNames(theirs, o))

        // An item of the base that one side removed whole while the other
        // changed it (renamed it, or added a version under its name): the
        // changed side's versions stay, under a name that says so.
        var baseItems: [ByteKey: [ManifestEntry]] = [:]
        for e in base { baseItems[ByteKey(e.name), default: []].append(e) }
        for (_, item) in baseItems.sorted(by: { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }) {
            for (removedBy, kept, keeper) in [(Side.theirs, o, ours), (Side.ours, t, theirs)] {
                let removing = removedBy == .theirs ? t : o
                guard !item.contains(where: { removing[ByteKey($0.itemID)] != nil }) else { continue }
                // Another item under a base id was never this item's.
                let held = item.compactMap { old in kept[ByteKey(old.itemID)].flatMap { sameItem($0, old) ? $0 : nil } }
                guard !held.isEmpty else { continue }
                let names = Set(held.map { ByteKey($0.name) })
                let added = keeper.entries.filter { b[ByteKey($0.itemID)] == nil && names.contains(ByteKey($0.name)) }
                let renamed = held.contains { !same($0.name, item[0].name) }
                guard renamed || !added.isEmpty else { continue }
                for e in held + added {
                    let name = conflictName(e.name)
                    picks[ByteKey(e.itemID)] = Pick(entry: e, name: name, own: e.version, shared: nil)
                    conflicts[name] = Conflict(kind: .removedAndChanged(removedBy: removedBy), base: item[0].name, kept: name)
                }
            }
        }

        for (e, side) in claimed {
            guard let kept = picks[ByteKey(e.itemID)] else { continue }
            conflicts[kept.name] = Conflict(kind: .idClaimedTwice(kept: side), base: nil, kept: kept.name)
        }

        var merged = try Manifest(entries: number(picks))
        merged.generation = max(ours.generation, theirs.generation) + 1
        merged.history = try ours.history.union(theirs.history)
        merged.tombstones = ours.tombstones.union(theirs.tombstones) { merged.entry(itemID: $0.bytes) != nil }
        for id in Set(o.keys).union(t.keys) where picks[id] == nil {
            // Both sides hold it (the same item) or one does: its digest is that entry's.
            if let e = o[id] ?? t[id] { merged.tombstones.insert(e, at: now) }
        }
        merged.pruneMarks = ours.pruneMarks.union(theirs.pruneMarks)
        merged.pruneMarks.keep(only: Set(merged.entries.compactMap { BackupItems.storageID(of: $0) }))
        merged.forgottenHosts = ours.forgottenHosts.union(theirs.forgottenHosts)
        guard merged.plaintextSize <= merged.plaintextCapacity else { throw VaultError.manifestFull }
        for key in editedOnBoth {
            let name = String(decoding: key.bytes, as: UTF8.self)
            guard let current = merged.versions(named: name).last else { continue }
            conflicts[name] = Conflict(kind: .editedOnBoth(older: o[ByteKey(current.itemID)] != nil ? .theirs : .ours), base: name, kept: name)
        }
        let listed = conflicts.values.sorted { ByteKey($0.kept).bytes.lexicographicallyPrecedes(ByteKey($1.kept).bytes) }
        return Result(manifest: merged, conflicts: listed)
    }

    /// What a fetched manifest, which another machine merged, proves of a
    /// conflict for this machine (nothing is changed: only said):
    /// - an item this machine changed since the base (never pushed) whose
    ///   name now has a newer version made elsewhere (`editedOnBoth(older:
    ///   .ours)`);
    /// - a version new here placed below this machine's current one
    ///   (`editedOnBoth(older: .theirs)`): a later edit always comes after
    ///   the version it was made from, so only a concurrent one, merged by
    ///   its `added` time, lands below;
    /// - names kept apart (" (conflict)") that are new here.
    /// A concurrent edit merged after ours looks like a later edit from
    /// here: only the machine that merged can tell (it says so).
    public static func conflictsFromElsewhere(local: Manifest, fetched: Manifest, base: Manifest?) -> [Conflict] {
        var out: [String: Conflict] = [:]
        for (current, _) in local.items where current.kind == .file || current.kind == .folder {
            guard let there = fetched.entry(itemID: current.itemID) else { continue }
            let versions = fetched.versions(named: there.name)
            if let base, base.entry(itemID: current.itemID) == nil, let now = versions.last, now.itemID != current.itemID,
               local.entry(itemID: now.itemID) == nil {
                out[there.name] = Conflict(kind: .editedOnBoth(older: .ours), base: there.name, kept: there.name)
            } else if versions.contains(where: { $0.version < there.version && local.entry(itemID: $0.itemID) == nil }) {
                out[there.name] = Conflict(kind: .editedOnBoth(older: .theirs), base: there.name, kept: there.name)
            }
        }
        for (current, _) in fetched.items where current.name.hasSuffix(conflictSuffix) && local.versions(named: current.name).isEmpty {
            out[current.name] = Conflict(kind: .keptApartElsewhere, base: nil, kept: current.name)
        }
        return out.values.sorted { ByteKey($0.kept).bytes.lexicographicallyPrecedes(ByteKey($1.kept).bytes) }
    }

    /// One kept entry: its merged name, its smallest version number on the
    /// sides that hold it (`own`), and `shared` when both sides hold it
    /// and agree on its number (the same, or only one side changed it
    /// since the base) and its name is no conflict's.
    struct Pick {
        var entry: ManifestEntry
        var name: String
        var own: UInt32
        var shared: UInt32?
    }

    /// Version numbers, per name: a shared number stays (unless two items
    /// renamed into one name on different sides share it: then neither
    /// keeps it); every other entry, in the order (own number, added, item
    /// id), takes the lowest number at least its own and above the one
    /// before it that no kept entry holds. So versions only one side added
    /// keep their numbers, and versions both sides added all stay, after
    /// the shared ones, in the order they were added.
    static func number(_ picks: [ByteKey: Pick]) throws -> [ManifestEntry] {
        var byName: [ByteKey: [Pick]] = [:]
        for pick in picks.values { byName[ByteKey(pick.name), default: []].append(pick) }
        var out: [ManifestEntry] = []
        for (_, group) in byName {
            var claims: [UInt32: Int] = [:]
            for p in group { if let v = p.shared { claims[v, default: 0] += 1 } }
            var floating: [Pick] = []
            var kept = Set<UInt32>()
            for p in group {
                if let v = p.shared, claims[v] == 1 {
                    out.append(renamed(p.entry, p.name, v))
                    kept.insert(v)
                } else {
                    floating.append(p)
                }
            }
            floating.sort { a, b in
                if a.own != b.own { return a.own < b.own }
                if a.entry.added != b.entry.added { return a.entry.added < b.entry.added }
                return a.entry.itemID.lexicographicallyPrecedes(b.entry.itemID)
            }
            var previous: UInt32 = 0
            for p in floating {
                guard previous < UInt32.max else { throw VaultError.tooManyVersions(name: p.name) }
                var n = max(previous + 1, p.own)
                while kept.contains(n) {
                    guard n < UInt32.max else { throw VaultError.tooManyVersions(name: p.name) }
                    n += 1
                }
                previous = n
                out.append(renamed(p.entry, p.name, n))
            }
        }
        // One order for the records, so two implementations write the same plaintext.
        return out.sorted { a, b in
            let (x, y) = (ByteKey(a.name), ByteKey(b.name))
            return x == y ? a.version < b.version : x.bytes.lexicographicallyPrecedes(y.bytes)
        }
    }

    /// Whether two entries of one id are the same item: the same file key
    /// and kind (an item id names one immutable blob).
    static func sameItem(_ a: ManifestEntry, _ b: ManifestEntry) -> Bool {
        a.kind == b.kind && a.fileKey.same(as: b.fileKey)
    }

    /// Names compare byte for byte (docs/FORMAT.md): Swift's `==` would
    /// take two spellings of "é" for one name.
    static func same(_ a: String, _ b: String) -> Bool { ByteKey(a) == ByteKey(b) }

    static func renamed(_ e: ManifestEntry, _ name: String, _ version: UInt32) -> ManifestEntry {
        var e = e
        (e.name, e.version) = (name, version)
        return e
    }

    /// `name` without a trailing " (conflict)": so a merge run again over
    /// its own result (after a kill before the base was written) names a
    /// conflict as the first run did, not "x (conflict) (conflict)".
    static func stem(_ name: String) -> String {
        let bytes = Array(name.utf8), suffix = Array(conflictSuffix.utf8)
        guard bytes.count > suffix.count, Array(bytes.suffix(suffix.count)) == suffix else { return name }
        return String(decoding: bytes.dropLast(suffix.count), as: UTF8.self)
    }

    /// The stem of `name` + " (conflict)", shortened (whole characters) to
    /// stay within the 1024-byte limit.
    public static func conflictName(_ name: String) -> String {
        var scalars = Array(stem(name).unicodeScalars)
        let room = ManifestEntry.maxNameLength - conflictSuffix.utf8.count
        while String(String.UnicodeScalarView(scalars)).utf8.count > room { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars)) + conflictSuffix
    }
}
