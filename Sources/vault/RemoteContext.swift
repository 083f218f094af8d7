import VaultBackup
import VaultCore
import VaultRemote

extension Context {
    /// rclone, as VAULT_RCLONE names it (default: `rclone` on PATH), with
    /// its scratch space in this user's state directory. Its storage
    /// credentials come from its own config, which it reads itself.
    func rclone() throws -> Rclone {
        try Rclone(program: environment.nonEmpty("VAULT_RCLONE") ?? "rclone", scratchBase: stateDirectory,
                   limits: .init(uploadKiB: globals.limitUpload, downloadKiB: globals.limitDownload))
    }

    /// `add --to` and `backup --to`: a scratch vault holding only the
    /// remote's header, its fingerprint checked against `fingerprint` or
    /// this machine's pin for the target.
    /// The first send from this machine also learns what its credentials
    /// may do there (RemoteRights), and says so: a host that can delete or
    /// overwrite is one ransomware can wipe backups from.
    func remoteDropIn(to target: String, fingerprint: String?) throws -> RemoteDropIn {
        let pins = FingerprintPins(stateDirectory: stateDirectory)
        let first = pins.remembered(for: target) == nil
        let remote = try RemoteDropIn(target: target, rclone: rclone(), expected: fingerprint, pins: pins, scratchBase: stateDirectory,
                                      firstUse: confirmFirstSend(to: target))
        if first { sayRights(try? RemoteRights.probe(target: target, rclone: remote.rclone), of: target, host: true) }
        return remote
    }

    /// One line on what this machine may do at `target` (nil: could not be
    /// learned): a backup host (`host`) is told when it could destroy
    /// backups; the owner, whose push and prune must delete, only what it is.
    func sayRights(_ rights: RemoteRights?, of target: String, host: Bool) {
        let who = host ? "this host" : "this machine"
        switch rights {
        case .appendOnly:
            terminal.note("\(Terminal.printable(target)) is append-only for \(who): it can add there, and delete or overwrite nothing"
                          + (host ? "" : " (a push or prune from here will fail)"))
        case .canDestroy where host:
            terminal.note("this host can delete or overwrite at \(Terminal.printable(target)): whoever takes it over could destroy backups there",
                          hint: "a backup host needs only to create in the inbox: see 'Append-only hosts' in the README")
        case .canDestroy:
            terminal.note("this machine can delete the backups at \(Terminal.printable(target)), as the owner's push and prune need to")
        case nil:
            terminal.note("could not learn what \(who) may do at \(Terminal.printable(target))")
        }
    }

    /// What the first send to TARGET from this machine does with the
    /// remote's fingerprint when no --fingerprint was given: on a terminal,
    /// show it and ask before trusting it, as ssh does for a new host key;
    /// off a terminal (cron, scripts) trust it on first use, as before.
    /// Either way later sends are held to it (FingerprintPins).
    private func confirmFirstSend(to target: String) -> (String) throws -> Void {
        { fingerprint in
            terminal.note("first send to \(Terminal.printable(target)) from here: its public key fingerprint is \(fingerprint)",
                          hint: "compare it with 'vault info' on the owner's machine")
            guard let yes = terminal.confirm("send to it, and expect this fingerprint from now on?") else { return }
            guard yes else {
                throw CLIError(message: "nothing was sent", hints: ["once checked, give it with --fingerprint FP"])
            }
        }
    }

    /// The remote `name` (or the only one) of the vault here.
    func remote(_ name: String?) throws -> RemoteConfig.Remote {
        _ = try Vault(at: vaultDirectory)  // exit 10 when there is no vault, before anything else
        return try RemoteConfig.read(vault: vaultDirectory).pick(name)
    }
}

enum RemoteFormat {
    /// "12 files, 3.4 MiB in 1.20 s (2.8 MiB/s)".
    static func transfer(files: Int, bytes: UInt64, seconds: Double) -> String {
        let rate = seconds > 0 ? " (" + Format.size(UInt64(Double(bytes) / seconds)) + "/s)" : ""
        return "\(files) file\(files == 1 ? "" : "s"), \(Format.size(bytes)) in \(MoveCommand.seconds(seconds))\(rate)"
    }
}

/// A progress line for an rclone transfer: bytes so far, the total, the
/// rate and the time left, from rclone's statistics (only on a terminal, as
/// every ProgressLine). Started with the transfer, so the rate counts from
/// its start.
final class TransferMeter {
    private let line: ProgressLine?

    init(_ terminal: Terminal, _ label: String) { line = ProgressLine.start(terminal, label, total: nil) }

    /// What to give rclone: nil when no line is shown (then rclone runs
    /// without statistics and nothing polls its log).
    var update: ((UInt64, UInt64) -> Void)? {
        guard let line else { return nil }
        return { done, total in line.update(done, of: total) }
    }

    func finish() { line?.finish() }
}

extension Context {
    /// Publishes the vault's host records (HostRecords) to `remotes`, so
    /// that `backup --to` hosts, which may read them but list nothing, know
    /// which of their packs they may reuse. Done after whatever changes
    /// what they need to know (a pull takes packs and snapshots in, a prune
    /// marks and deletes). A remote that cannot take them is named, and the
    /// command goes on: a host with an older record stores more, or has a
    /// snapshot refused once and then stores what it needs again.
    ///
    /// `remotes`: each with the names its listing found in `hosts/`. A
    /// vault with no record to publish and none to delete calls no rclone.
    func publishHostRecords(_ vault: UnlockedVault, to remotes: [(remote: RemoteConfig.Remote, there: HostRecordNames)]) {
        guard !remotes.isEmpty else { return }
        do {
            let built = try HostRecords.build(vault)
            // Hosts whose snapshots were forgotten, on any copy: retired
            // where they have no record now, even one never published (ForgottenHosts).
            let retire = ForgottenHosts.all(vault).subtracting(built.records.keys)
            let rclone = try rclone()
            for (remote, there) in remotes where !built.records.isEmpty || !there.live.isEmpty || !retire.subtracting(there.retired).isEmpty {
                do { try RemoteHostRecords.publish(built.records, there: there, retire: retire, target: remote.target, rclone: rclone) } catch {
                    terminal.warning("could not update the backup hosts' records on '\(remote.name)': \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)",
                                     hints: ["hosts that back up there with --to may store more than they need until the next pull or prune does"])
                }
            }
        } catch {
            terminal.warning("could not make the backup hosts' records: \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)")
        }
    }
}
