import System

// Versions of an item (docs/FORMAT.md, "Manifest"): entries sharing a name,
// numbered 1, 2, …; the highest is the item's content. This file picks
// versions (by number or by time) and trims history (`forget`).

/// Which versions `forget` keeps, in restic's words. Every rule adds to what
/// is kept; an item's newest version is always kept (`remove` drops items).
public struct RetentionPolicy: Sendable, Equatable {
    /// The n newest versions.
    public var keepLast: Int
    /// The newest version of each of the n most recent days (UTC) that have one.
    public var keepDaily: Int
    /// The newest version of each of the n most recent weeks (Monday to
    /// Sunday, UTC) that have one.
    public var keepWeekly: Int

    public init(keepLast: Int = 0, keepDaily: Int = 0, keepWeekly: Int = 0) {
        (self.keepLast, self.keepDaily, self.keepWeekly) = (keepLast, keepDaily, keepWeekly)
    }

    /// The version numbers to keep of `versions` (one item's, any order).
    public func kept(_ versions: [ManifestEntry]) -> Set<UInt32> {
        let newestFirst = versions.sorted { $0.version > $1.version }
        var keep = Set(newestFirst.prefix(max(1, keepLast)).map(\.version))
        func newestPerBucket(_ n: Int, _ bucket: (Int64) -> Int64) {
            var seen = Set<Int64>()
            for v in newestFirst where seen.count < n {
                if seen.insert(bucket(v.added)).inserted { keep.insert(v.version) }
            }
        }
        newestPerBucket(keepDaily, Self.day)
        // 1970-01-01 was a Thursday: day + 3 counts from a Monday.
        newestPerBucket(keepWeekly) { (Self.day($0) + 3).floorDivided(by: 7) }
        return keep
    }

    static func day(_ unix: Int64) -> Int64 { unix.floorDivided(by: 86_400) }
}

extension Int64 {
    /// Division rounding towards minus infinity (times before 1970 too).
    func floorDivided(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}

extension UnlockedVault {
    /// Version `version` of `name`.
    public func entry(named name: String, version: UInt32) throws -> ManifestEntry {
        _ = try entry(named: name)   // an item, not a backup's pack or snapshot
        guard let e = manifest.entry(named: name, version: version) else {
            throw VaultError.noSuchVersion(name: name, version: .number(version))
        }
        return e
    }

    /// The version of `name` that was current at `time` (Unix seconds): the
    /// highest-numbered one added at or before it.
    public func entry(named name: String, at time: Int64) throws -> ManifestEntry {
        _ = try entry(named: name)
        let versions = manifest.versions(named: name)
        guard let e = versions.last(where: { $0.added <= time }) else {
            throw VaultError.noSuchVersion(name: name, version: .atTime)
        }
        return e
    }

    /// The versions `policy` would drop: of the named items, or of every
    /// item when `names` is nil. Changes nothing.
    public func forgettable(_ names: [String]?, policy: RetentionPolicy) throws -> [ManifestEntry] {
        let histories = try names.map { try $0.map { name in
            let v = manifest.versions(named: name)
            guard !v.isEmpty else { throw VaultError.noSuchItem(name: name) }
            return v
        } } ?? manifest.items.map { manifest.versions(named: $0.current.name) }
        return histories.flatMap { versions in
            let keep = policy.kept(versions)
            return versions.filter { !keep.contains($0.version) }
        }
    }

    /// Drops these versions: the manifest without them is durable first,
    /// then their blobs are unlinked. A kill in between leaves blobs no
    /// manifest names (orphans, which `check` reports), never a manifest
    /// naming a missing blob. Never drops an item's last version.
    public func forget(_ versions: [ManifestEntry]) throws {
        try requireLock()
        guard !versions.isEmpty else { return }
        var left: [String: Int] = [:]
        for v in versions { left[v.name, default: manifest.versions(named: v.name).count] -= 1 }
        guard left.values.allSatisfy({ $0 >= 1 }) else {
            throw VaultError.forgetsEveryVersion
        }
        let removed = manifest.remove(itemIDs: versions.map(\.itemID))
        try saveManifest()
        try removeStored(removed)
    }
}
