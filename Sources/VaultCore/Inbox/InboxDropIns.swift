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
    /// HPKE open each), in name order: the drop-ins they name, the
    /// envelopes that did not open (or name another item than their file,
    /// or break ItemRules, or were gone when read), and those that could
    /// not be read at all (EACCES, EIO: no verdict on them). Absorb leaves
    /// both kinds waiting; prune and rekey stop at an unreadable one.
    func openInbox(with keys: VaultKeys) throws
        -> (waiting: [WaitingDropIn], unopened: [String], unreadable: [(stem: String, errno: Errno)]) {
        let envelopes = try inboxEnvelopes()
        let opened = try parallelMap(envelopes.count) { i in Result { try openDropIns(envelopes[i], with: keys) } }
        var waiting: [WaitingDropIn] = [], unopened: [String] = [], unreadable: [(stem: String, errno: Errno)] = []
        for (stem, result) in zip(envelopes, opened) {
            switch result {
            case .success(let dropIns?): waiting += dropIns
            case .success(nil): unopened.append(stem)
            case .failure(let error as SystemError): unreadable.append((stem, error.errno))
            case .failure: unopened.append(stem)
            }
        }
        return (waiting, unopened, unreadable)
    }

    /// The same, for prune and rekey: an envelope that cannot be read stops
    /// them (`inboxUnreadable`), before anything is changed.
    func openInboxWhole(with keys: VaultKeys) throws -> [WaitingDropIn] {
        let (waiting, _, unreadable) = try openInbox(with: keys)
        if let first = unreadable.first { throw VaultError.inboxUnreadable(file: first.stem + ".env", errno: first.errno) }
        return waiting
    }

    /// The drop-ins envelope `stem` names, opened with `keys`; nil if it
    /// does not open, a single one names another item than its file, an
    /// entry breaks ItemRules, or it is gone. An envelope that is there but
    /// cannot be read is thrown (its SystemError), never read as damaged.
    func openDropIns(_ stem: String, with keys: VaultKeys) throws -> [WaitingDropIn]? {
        let file: [UInt8]
        do {
            file = try VaultDirectory.readFile(paths.dropInEnvelope(stem), limit: DropInEnvelope.maxBatchLength)
        } catch let error as SystemError where error.errno != .noSuchFile && error.errno != .tooManySymlinks {
            throw error
        } catch {
            return nil   // gone meanwhile, a symbolic link, not a regular file, or too long: not an envelope vault wrote
        }
        // An envelope that does not authenticate or parse is refused, whatever check it failed.
        guard let opened = try? DropInEnvelope.openAny(file, with: keys, vaultID: vaultID),
              // An entry that breaks ItemRules is refused with its envelope, whichever rule it broke.
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
