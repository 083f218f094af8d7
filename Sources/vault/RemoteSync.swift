import System
import VaultBackup
import VaultCore
import VaultCrypto
import VaultRemote

/// The pull that `vault pull` runs, and `vault push` too when another
/// machine pushed since (then it merges before it pushes), with the words
/// both print: one place, so they agree.
enum RemoteSync {
    struct Pulled {
        let summary: PullSummary
        /// The vault opened again after the pull (it absorbed what came in).
        let vault: UnlockedVault
        /// Of the drop-ins fetched, those the absorb took in.
        let taken: Int
        let seconds: Double
        /// A password that opened this vault before the pull no longer does.
        var passwordsChanged = false
    }

    /// Unlocks (taking in the drop-ins waiting here, so a merge counts
    /// them as ours), pulls (fetching, or merging when both changed), then
    /// opens the vault again with the master key (the header may be new),
    /// which takes in the drop-ins just fetched, and tidies.
    static func pull(_ context: Context, _ remote: RemoteConfig.Remote, _ source: PasswordSource) throws -> Pulled {
        let rclone = try context.rclone()
        // Counted from after the password prompt: the rate is the
        // transfer's, not the typing's (issue 43, item 10).
        var started = Syscall.monotonicSeconds()
        var summary: PullSummary
        let key: MasterKey
        let passwordsBefore = try Vault(at: context.vaultDirectory).header.passwordSlots()
        do {
            let unlocked = try context.unlock(source, forWriting: true)
            started = Syscall.monotonicSeconds()
            // A pull replaces the manifest: only with the writer lock.
            guard unlocked.canWrite else { throw VaultError.busy }
            key = unlocked.masterKey
            let meter = TransferMeter(context.terminal, "pulling")
            defer { meter.finish() }
            // A merge may bring another machine's repacks, or drop ours:
            // this machine's repack notes are made again once the pull is
            // done (RepackNotes), and none stands meanwhile.
            try RepackNotes.clear(unlocked)
            summary = try RemotePull.pull(vault: unlocked, remote: remote, thin: context.thinVault() != nil, rclone: rclone,
                                          progress: meter.update)
        }
        let reopened = try Vault(at: context.vaultDirectory).unlock(masterKey: key, forWriting: true,
                                                                     rollbackGuard: context.rollbackGuard)
        // The conflicts said now stay marked in `list` until settled.
        var named = summary.conflictsFromElsewhere.map(\.kept)
        if case .merged(_, _, let conflicts) = summary.state { named += conflicts.map(\.kept) }
        if !named.isEmpty { MergeConflictMarks.record(vault: context.vaultDirectory, names: named, in: reopened.manifest) }
        // A password slot of this vault's is gone or changed: the password
        // typed here no longer opens it. Said now, and again at the next
        // wrong password (PasswordChangedElsewhere), not left to guess.
        var passwordsChanged = false
        if summary.headerTaken {
            let after = try reopened.vault.header.passwordSlots()
            passwordsChanged = passwordsBefore.contains { !after.contains($0) }
            if passwordsChanged { PasswordChangedElsewhere.record(vault: context.vaultDirectory, remote: remote.name) }
        }
        try reopened.tidy()
        // The folders' indexes, so a first mount here lists them without a pass.
        let indexes = RemoteIndexes.fetch(reopened, there: summary.remoteIndexes, target: remote.target, rclone: rclone)
        summary.files += indexes.0
        summary.bytes += indexes.1
        // A note that cannot be written leaves none: those backups store the repacked pieces again.
        do { try RepackNotes.write(reopened) } catch { try? RepackNotes.clear(reopened) }
        context.publishHostRecords(reopened, to: [(remote, summary.hostRecords)])
        let taken = try summary.dropIns.filter { try Syscall.status(of: reopened.vault.paths.dropInEnvelope($0)) == nil }.count
        return Pulled(summary: summary, vault: reopened, taken: taken, seconds: Syscall.monotonicSeconds() - started,
                      passwordsChanged: passwordsChanged)
    }

    /// The lines a pull prints (`pushing`: a push's merge, which then
    /// pushes, so "a push updates it" is not said).
    static func report(_ pulled: Pulled, remote: String, terminal: Terminal, pushing: Bool = false) {
        let s = pulled.summary
        if pulled.passwordsChanged {
            terminal.warning("the vault's password was changed on another machine ('vault passwd', a kit recovery or 'vault key'): from now on it opens here with the password set there, not the one typed for this pull",
                             hints: ["'vault key list' shows the key slots; a lost password: 'vault kit recover'"])
        } else if s.headerTaken {
            terminal.note("the key slots were changed on another machine: this vault now opens as that one does",
                          hint: "'vault key list' shows them")
        }
        switch s.state {
        case .fetched(let g):
            terminal.note("pulled generation \(g) from '\(remote)': "
                          + RemoteFormat.transfer(files: s.files, bytes: s.bytes, seconds: pulled.seconds))
            for c in s.conflictsFromElsewhere { terminal.warning(conflictLine(c)) }
        case .merged(let r, let g, let conflicts):
            terminal.note("merged '\(remote)' (generation \(r)) with this vault's changes into generation \(g): "
                          + RemoteFormat.transfer(files: s.files, bytes: s.bytes, seconds: pulled.seconds),
                          hint: pushing ? nil : "'vault push \(remote)' puts the merge there")
            for c in conflicts { terminal.warning(conflictLine(c)) }
        case .inStep where s.dropIns.isEmpty:
            terminal.note("'\(remote)' has nothing new")
        case .inStep:
            break
        case .remoteBehind(let r, let l):
            if !pushing {
                terminal.note("'\(remote)' is behind this vault: it holds nothing this vault lacks (its generation \(r), here \(l))",
                              hint: "'vault push \(remote)' updates it")
            }
        }
        if !s.dropIns.isEmpty {
            let counted = pulled.taken == s.dropIns.count ? Format.count(s.dropIns.count, "drop-in")
                : "\(pulled.taken) of \(Format.count(s.dropIns.count, "drop-in"))"
            terminal.note("took in \(counted) from the inbox of '\(remote)'",
                          hint: pushing ? nil : "the next 'vault push \(remote)' clears \(s.dropIns.count == 1 ? "it" : "them") from there")
        }
        if s.sentAndRemoved > 0 {
            terminal.note("set aside \(Format.count(s.sentAndRemoved, "drop-in")) waiting here: taken in on another machine and removed there since",
                          hint: "they are in quarantine/ until 'vault check --repair --purge'")
        }
        if s.strays > 0 {
            terminal.note("\(Format.count(s.strays, "file")) in the remote's inbox \(s.strays == 1 ? "is" : "are") no whole drop-in (an unfinished upload, a host's rights probe, or junk): left there for now",
                          hint: "a pull deletes \(s.strays == 1 ? "it" : "them") once seen unchanged for a day")
        }
        if s.straysDeleted > 0 {
            terminal.note("deleted \(Format.count(s.straysDeleted, "file")) from the remote's inbox that had been no whole drop-in for a day")
        }
        if s.indexesDeleted > 0 {
            terminal.note("deleted \(Format.count(s.indexesDeleted, "file")) from the remote's indexes/ that no folder item had named for a day")
        }
        if s.junkDropIns > 0 {
            terminal.note("ignored \(Format.count(s.junkDropIns, "drop-in")) in the remote's inbox that this vault's key does not open",
                          hint: "someone who can write to the remote put them there; they stay on the remote")
        }
    }

    /// One conflict, as a warning line.
    static func conflictLine(_ c: ManifestMerge.Conflict) -> String {
        let kept = Terminal.printable(c.kept)
        switch c.kind {
        case .renamedOnBoth(let ours, let theirs):
            return "conflict: '\(Terminal.printable(c.base ?? c.kept))' was renamed to '\(Terminal.printable(ours))' here and to '\(Terminal.printable(theirs))' there: kept as '\(kept)'"
        case .removedAndChanged(let by):
            let (removed, changed) = by == .ours ? ("here", "there") : ("there", "here")
            return "conflict: '\(Terminal.printable(c.base ?? c.kept))' was removed \(removed) and changed \(changed): kept as '\(kept)'"
        case .editedOnBoth(let older):
            let (current, other) = older == .theirs ? ("here", "there") : ("there", "here")
            return "conflict: '\(kept)' was changed here and there: the version made \(current) is current, the one made \(other) an older version ('vault list --versions \(kept)')"
        case .keptApartElsewhere:
            return "conflict: '\(kept)' was kept apart by a merge on another machine (both changed the same item)"
        case .idClaimedTwice where c.base.map({ $0 != c.kept }) ?? false:
            return "conflict: '\(Terminal.printable(c.base ?? ""))' had an item id that the other side holds for another item (one was forged by a dropper): kept apart as '\(kept)'; see 'vault check'"
        case .idClaimedTwice(let side):
            return "conflict: '\(kept)' has an item id that the other side holds or let go for another item (one was forged by a dropper): kept \(side == .ours ? "this vault's" : "the remote's"); see 'vault check'"
        }
    }

    static func state(_ s: PullSummary.State) -> String {
        switch s {
        case .fetched: "fetched"
        case .inStep: "in-step"
        case .remoteBehind: "remote-behind"
        case .merged: "merged"
        }
    }

    static func conflicts(_ s: PullSummary.State) -> Int? {
        if case .merged(_, _, let c) = s { return c.count }
        return nil
    }
}
