import System
import VaultCrypto

// Absorbing the inbox (docs/FORMAT.md, "Drop-in envelope: Absorbing"): each
// waiting drop-in's envelope opened with the vault's private key, its
// content checked against it (ItemRules) and renamed into items/, the
// entries added to the manifest in one write, then the envelopes removed.

extension UnlockedVault {
    public struct AbsorbReport: Sendable {
        public var absorbed: [String] = []
        /// Envelopes that failed to open, or whose content is missing, damaged
        /// or disagrees with the envelope (ItemRules); left in place.
        public var rejected: [String] = []
        /// Drop-ins left waiting because the manifest is full (see `manifestFull`).
        public var deferred = 0
        public init() {}
    }

    /// Moves waiting drop-ins into the manifest. Idempotent and crash-safe:
    /// content is renamed into items/ first, then one manifest write adds all
    /// entries, then the envelopes go. An envelope whose item is already in
    /// the manifest is only removed. A name already taken gets " (2)", " (3)"…
    /// Envelopes are opened one at a time, so memory follows the number of
    /// absorbed items, not of the files in the inbox.
    @discardableResult
    public func absorbInbox() throws -> AbsorbReport {
        var report = AbsorbReport()
        guard lock != nil else { return report }
        // A failure part-way (a full disk) leaves the manifest in memory as it
        // was on disk, so the caller can go on reading: what was moved into
        // items/ is taken in again by the next absorb.
        let before = manifest
        do { return try absorb(into: &report) } catch {
            manifest = before
            throw error
        }
    }

    private func absorb(into report: inout AbsorbReport) throws -> AbsorbReport {
        var done: [String] = []
        var clashes: [String: Int] = [:]
        for blob in try inboxEnvelopes() {
            guard var entry = openEnvelope(blob, with: keys) else {
                report.rejected.append(blob + ".env")
                continue
            }
            if manifest.entry(itemID: entry.itemID) != nil { done.append(blob); continue }
            entry.name = manifest.freeName(like: entry.name, clashes: &clashes)
            guard manifest.hasRoom(nameBytes: entry.name.utf8.count) else { report.deferred += 1; continue }
            guard try adoptContent(of: entry) else {
                report.rejected.append(blob + ".env")
                continue
            }
            try manifest.add(entry)
            report.absorbed.append(entry.name)
            done.append(blob)
        }
        guard !done.isEmpty else { return report }
        try Syscall.fsyncDirectory(paths.items)
        try Syscall.fsyncDirectory(paths.inbox)
        if !report.absorbed.isEmpty { try saveManifest() }
        for blob in done { try? Syscall.unlink(paths.dropInEnvelope(blob)) }
        try Syscall.fsyncDirectory(paths.inbox)
        return report
    }

    /// Moves a drop-in's content into items/ once it opens under the entry's
    /// file key and agrees with the entry (ItemRules); false, touching
    /// nothing, if it does not. Content already in items/ (an absorb
    /// interrupted after the rename) is checked where it is.
    func adoptContent(of entry: ManifestEntry) throws -> Bool {
        let inInbox = paths.dropInContent(entry.blobName), stored = paths.item(entry.blobName)
        let waiting = try Syscall.status(of: inInbox) != nil
        do {
            let r = try ItemReader(key: entry.fileKey, source: FileHandleFD(readingFrom: waiting ? inInbox : stored), threads: 1)
            try ItemRules.checkItem(entry, header: r.header, contentLength: r.contentLength)
        } catch {
            return false
        }
        if waiting { try Syscall.rename(inInbox, stored) }
        return true
    }

    /// The blob names of the inbox's envelopes, in name order.
    func inboxEnvelopes() throws -> [String] {
        try VaultDirectory.names(in: paths.inbox).filter { $0.hasSuffix(".env") && !$0.hasPrefix(".") }
            .map { String($0.dropLast(4)) }.sorted()
    }

    /// The entry in envelope `blob`, opened with `keys` (either KEM); nil if
    /// it does not open, names another item than its file, or breaks ItemRules.
    func openEnvelope(_ blob: String, with keys: VaultKeys) -> ManifestEntry? {
        guard let entry = try? DropInEnvelope.open(
                VaultDirectory.readFile(paths.dropInEnvelope(blob), limit: DropInEnvelope.maxLength),
                with: keys, vaultID: vaultID),
              entry.blobName == blob, (try? ItemRules.checkEntry(entry)) != nil else { return nil }
        return entry
    }
}
