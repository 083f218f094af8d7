import System

// The drop-ins waiting in the inbox, as their envelopes name them (docs/
// FORMAT.md, "Drop-in envelope"): a single envelope `<id>.env` names one,
// its content `<id>.item`; a batch envelope `<batch id>.env` names up to
// 128, entry k's content `<batch id>.<id>.item`. Absorb, rekey and prune
// read the inbox through this, so a batch is one more shape here only.

/// One drop-in an envelope in the inbox names.
struct WaitingDropIn {
    /// The envelope's file name without `.env`.
    let envelope: String
    /// The entry's place in its envelope (0 for a single one).
    let index: Int
    let entry: ManifestEntry
    /// The content's file name without `.item`.
    let contentStem: String
}

extension UnlockedVault {
    /// Every envelope in the inbox opened with `keys` (on every core: an
    /// HPKE open each), in name order: the drop-ins they name, and the
    /// envelopes that did not open (or name another item than their file,
    /// or break ItemRules).
    func openInbox(with keys: VaultKeys) throws -> (waiting: [WaitingDropIn], unopened: [String]) {
        let envelopes = try inboxEnvelopes()
        let opened = try parallelMap(envelopes.count) { i in openDropIns(envelopes[i], with: keys) }
        var waiting: [WaitingDropIn] = [], unopened: [String] = []
        for (stem, dropIns) in zip(envelopes, opened) {
            if let dropIns { waiting += dropIns } else { unopened.append(stem) }
        }
        return (waiting, unopened)
    }

    /// The drop-ins envelope `stem` names, opened with `keys`; nil if it
    /// does not open, a single one names another item than its file, or an
    /// entry breaks ItemRules.
    func openDropIns(_ stem: String, with keys: VaultKeys) -> [WaitingDropIn]? {
        guard let file = try? VaultDirectory.readFile(paths.dropInEnvelope(stem), limit: DropInEnvelope.maxBatchLength),
              let opened = try? DropInEnvelope.openAny(file, with: keys, vaultID: vaultID),
              opened.entries.allSatisfy({ (try? ItemRules.checkEntry($0)) != nil }) else { return nil }
        if !opened.batch {
            guard let entry = opened.entries.first, entry.blobName == stem else { return nil }
            return [WaitingDropIn(envelope: stem, index: 0, entry: entry, contentStem: stem)]
        }
        return opened.entries.enumerated().map { k, entry in
            WaitingDropIn(envelope: stem, index: k, entry: entry, contentStem: stem + "." + entry.blobName)
        }
    }

    /// The envelope stems in the inbox, in name order.
    func inboxEnvelopes() throws -> [String] {
        try VaultDirectory.names(in: paths.inbox).filter { $0.hasSuffix(".env") && !$0.hasPrefix(".") }
            .map { String($0.dropLast(4)) }.sorted()
    }

    /// The inbox files of envelope `stem`: the envelope and every content
    /// paired with it by name (`<stem>.item`, `<stem>.<id>.item`).
    func inboxFiles(ofEnvelope stem: String) throws -> [String] {
        try VaultDirectory.names(in: paths.inbox).filter { name in
            name == stem + ".env" || (name.hasSuffix(".item") && VaultPaths.envelopeStem(ofContent: name) == stem)
        }.sorted()
    }
}
