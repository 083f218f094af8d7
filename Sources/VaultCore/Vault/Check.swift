import System

/// What `check` found. Problems are damage (exit 14); leftovers of an
/// interrupted operation are only warnings, removed by the next writer or by
/// `check --repair`.
public struct CheckReport: Sendable {
    public struct Problem: Sendable, Equatable {
        public let item: String
        public let message: String
    }
    public var problems: [Problem] = []
    /// Leftover files (paths relative to the vault directory).
    public var leftovers: [String] = []
    /// Drop-in envelopes that could not be absorbed.
    public var rejectedDropIns: [String] = []
    public var removed: [String] = []
    public var itemsChecked = 0
    public var bytesChecked: UInt64 = 0
}

extension UnlockedVault {
    /// Verifies the header (its MAC was checked at unlock), the manifest
    /// (parsed and authenticated at unlock), that every item's blob is there
    /// with a matching header and an authentic final chunk, and with
    /// `readData` every chunk of every item.
    public func check(readData: Bool, repair: Bool, progress: ((UInt64) -> Void)? = nil) throws -> CheckReport {
        var report = CheckReport()
        report.rejectedDropIns = try absorbInbox().rejected
        for entry in manifest.entries {
            report.itemsChecked += 1
            do {
                // The same checks every reader makes (ItemRules): the blob's
                // header and length against the entry, and with `readData`
                // every chunk, the decoded size, and a folder's archive.
                let r = try reader(for: entry)
                if readData {
                    report.bytesChecked &+= try read(entry, with: r, to: DiscardingSink())
                    progress?(report.bytesChecked)
                }
            } catch VaultError.itemCorrupted {
                let missing = (try? Syscall.status(of: paths.item(entry.blobName))) ?? nil == nil
                report.problems.append(.init(item: entry.name, message: missing ? "blob missing" : "corrupted or tampered"))
            } catch VaultError.unsafeArchiveEntry(_, let path, let reason) {
                report.problems.append(.init(item: entry.name, message: "entry '\(path)': \(reason)"))
            }
        }
        report.leftovers = try leftovers()
        if repair {
            guard canWrite else { throw VaultError.busy }
            report.removed = try removeLeftovers(report.leftovers)
            for env in report.rejectedDropIns {
                let blob = String(env.dropLast(4))
                for p in [paths.dropInEnvelope(blob), paths.dropInContent(blob)] where (try? Syscall.unlink(p)) != nil {
                    report.removed.append(String(p.dropFirst(paths.root.count + 1)))
                }
            }
            report.leftovers = []
        }
        return report
    }

    /// Files no operation will finish: blobs no manifest names, drop-in
    /// content without an envelope, temp files. Files still flock'ed by a
    /// running writer (a drop-in in progress) are not leftovers.
    func leftovers() throws -> [String] {
        let known = Set(manifest.entries.map(\.blobName))
        var out: [String] = []
        for name in try VaultDirectory.names(in: paths.items) where !known.contains(name) {
            if !isLockedByWriter(paths.items + "/" + name) { out.append("items/" + name) }
        }
        let inbox = Set(try VaultDirectory.names(in: paths.inbox))
        for name in inbox.sorted() {
            let orphanContent = name.hasSuffix(".item") && !inbox.contains(String(name.dropLast(5)) + ".env")
            let temp = name.hasPrefix(VaultDirectory.tempPrefix)
            let stray = !name.hasSuffix(".item") && !name.hasSuffix(".env") && !temp
            if (orphanContent || temp || stray) && !isLockedByWriter(paths.inbox + "/" + name) { out.append("inbox/" + name) }
        }
        for name in try VaultDirectory.names(in: paths.root) where name.hasPrefix(VaultDirectory.tempPrefix) {
            if !isLockedByWriter(paths.root + "/" + name) { out.append(name) }
        }
        return out.sorted()
    }

    func removeLeftovers(_ files: [String]) throws -> [String] {
        try requireLock()
        var removed: [String] = []
        for f in files {
            let path = paths.root + "/" + f
            guard let st = try Syscall.status(of: path), st.kind != .directory else { continue }
            if (try? Syscall.unlink(path)) != nil { removed.append(f) }
        }
        for dir in [paths.items, paths.inbox, paths.root] { try Syscall.fsyncDirectory(dir) }
        return removed
    }

    /// What every writer does after unlocking: absorb drop-ins, then remove
    /// leftovers of interrupted operations.
    @discardableResult
    public func tidy() throws -> AbsorbReport {
        let report = try absorbInbox()
        if canWrite { _ = try removeLeftovers(leftovers()) }
        return report
    }

}
