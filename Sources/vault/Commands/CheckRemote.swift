import System
import VaultCore
import VaultCrypto
import VaultRemote

// `vault check --remote NAME [--read-data]`.
extension CheckCommand {
    func checkRemote(_ name: String, _ context: Context) throws -> ExitCode {
        let remote = try context.remote(name)
        let source = try context.passwordSource()
        let rclone = try context.rclone()
        let local = try Vault(at: context.vaultDirectory)
        let password = try context.readEarly(local, source)
        let staging = try StagingDirectory(beside: context.vaultDirectory, purpose: "checking")
        let stagingPath = staging.path
        let cleanup = Interrupts.register { _ = Eraser.erase(stagingPath) }
        defer { Interrupts.unregister(cleanup) }

        let layout: RemoteLayout
        if readData {
            _ = try RemoteClone.download(target: remote.target, rclone: rclone, into: staging)
            layout = RemoteLayout(try rclone.list(remote.target))
        } else {
            layout = RemoteLayout(try rclone.list(remote.target))
            try layout.checkVault(target: remote.target)
            try rclone.download([RemoteNames.header, RemoteNames.manifest], from: remote.target, into: staging.path)
        }
        let copy = try Vault(at: staging.path)
        guard copy.header.vaultID == local.header.vaultID else { throw RemoteError.otherVault(target: remote.target) }
        // This vault's master key opens the copy (whatever password it has
        // there): read-only, a check changes nothing.
        let opened = try context.open(local, password, forWriting: false).unlockCopy(copy)
        var problems: [(item: String, message: String)] = []
        var bytes: UInt64 = 0
        let progress = readData ? ProgressLine.start(context.terminal, "checking", total: opened.manifest.totalSize) : nil
        for entry in opened.manifest.entries {
            let id = Hex.encode(entry.itemID)
            guard let size = layout.items[id] else {
                problems.append((item: entry.name, message: "missing on the remote")); continue
            }
            if let st = try Syscall.status(of: local.paths.item(id)), st.kind == .regular, st.size != size {
                problems.append((item: entry.name, message: "a different size on the remote (\(size) bytes, here \(st.size))")); continue
            }
            if readData {
                do { bytes &+= try opened.read(entry, to: DiscardingSink()); progress?.update(bytes) } catch {
                    problems.append((item: entry.name, message: ErrorReport.tampered))
                }
            }
        }
        progress?.finish()
        for p in problems { context.terminal.report(CLIError(message: "remote item '\(p.item)': \(p.message)", code: .corrupted)) }
        // A backup's snapshots and packs apart from items, as in a local check.
        let entries = opened.manifest.entries
        let packs = entries.filter { $0.kind == .pack || $0.kind == .repack }.count, snapshots = entries.filter { $0.kind == .snapshot }.count
        var items = Format.items(opened.manifest.items.count, versions: entries.count - packs - snapshots)
        if packs + snapshots > 0 { items += ", \(Format.count(snapshots, "snapshot")), \(Format.count(packs, "pack"))" }
        let what = readData ? "\(items), \(Format.size(bytes)) read" : items
        let generation = opened.manifest.generation
        context.terminal.note(problems.isEmpty ? "remote '\(name)' (generation \(generation)): no problems found (\(what))"
                                               : "remote '\(name)': \(Format.count(problems.count, "damaged or missing item")) (\(what))")
        if !problems.isEmpty { throw ReportedError(.corrupted) }
        return .ok
    }
}
