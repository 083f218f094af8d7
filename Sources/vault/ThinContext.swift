import VaultCore
import VaultRemote

/// How a command reads a thin vault's blobs that are not in items/.
enum RemoteReads {
    /// It reads none (list, info): no server is started.
    case none
    /// Range reads, kept only in memory (get, restore, check: each byte once).
    case uncached
    /// Range reads, also kept in the bounded cache on disk (the snapshot
    /// listings and the mount, which read the same trees again).
    case cached
}

/// The thin vault's remote blobs this command attached, for its end.
nonisolated(unsafe) private var attached: RemoteBlobs?

extension Context {
    /// The vault's `thin` file; nil for a full vault.
    func thinVault() throws -> ThinVault? { try ThinVault.read(vault: vaultDirectory) }

    /// A thin vault reads what is not in items/ from its remote: one
    /// `rclone serve http` for this command, started here on the main
    /// thread (its parent-death signal follows the thread that started it).
    func attachRemoteBlobs(_ vault: UnlockedVault, _ reads: RemoteReads) throws {
        guard reads != .none, let thin = try thinVault() else { return }
        let remote = try self.remote(thin.remote)
        let server = try RcloneServer(rclone: rclone(), target: remote.target)
        let cache = reads == .cached ? try BlockCache(directory: ThinVault.cacheDirectory(vaultDirectory), bound: thin.cacheBytes) : nil
        let blobs = RemoteBlobs(server: server, cache: cache)
        vault.fetcher = blobs
        attached = blobs
    }

    /// A command about to read whole blobs (a whole-snapshot restore,
    /// `check --read-data`) reads each of a thin vault's blobs in one
    /// request from its start, streamed at most 12 blocks ahead, with as
    /// many chunks opened ahead. The S3 server's own work grows with the
    /// requests, and through `rclone serve` each ranged request opened the
    /// object twice: SeaweedFS spent 105 CPU ticks serving 10 packs in
    /// windows of 12 blocks, 34 serving each in one request. A command
    /// reading parts keeps single blocks (more would be fetched for nothing).
    func readsWholeBlobs(_ vault: UnlockedVault) {
        guard let remote = vault.fetcher as? RemoteBlobs else { return }
        vault.readAhead = 12
        remote.streamAhead = 12
    }

    /// Refuses a command that needs every blob here (move send)
    /// in a thin vault, before any password is asked for.
    func requireFullVault(_ command: String) throws {
        guard let thin = try thinVault() else { return }
        throw CLIError(message: "'vault \(command)' needs every blob here, and this vault is thin (its blobs are on remote '\(thin.remote)')",
                       hints: ["'vault thin --off' brings them all here first; nothing was changed"], code: .usage)
    }
}

enum ThinSession {
    /// At the end of every command: the cache trimmed to its bound, and
    /// with VAULT_STATS=1 the remote requests and bytes on standard error
    /// (what `make bench` and the tests count).
    static func finish(_ terminal: Terminal, environment: [String: String]) {
        guard let blobs = attached else { return }
        attached = nil
        do { try blobs.finish() } catch {
            terminal.warning("the cache of remote blocks was not trimmed: \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)",
                             hints: ["the next command that reads through it trims it"])
        }
        if environment["VAULT_STATS"] == "1" {
            terminal.note("remote reads: \(blobs.requests) requests, \(blobs.bytesReceived) bytes")
        }
    }
}
