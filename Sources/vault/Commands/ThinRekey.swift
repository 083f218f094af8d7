import VaultCore
import VaultRemote

/// A thin vault's rekey (issue 40): in step with its remote first, every
/// blob read from there and the new ones sent back a batch at a time
/// (ThinRekeyUpload, `rekey.progress`), then the new keys pushed.
enum ThinRekey {
    struct Upload {
        let remote: RemoteConfig.Remote
        let offload: ThinRekeyUpload
    }

    /// Pushes what this vault changed and lets what went up leave items/;
    /// refuses, before anything is re-encrypted, a remote another machine
    /// moved on (only a pull can merge it, and no merge crosses a rekey).
    /// Then attaches the remote's blobs for reading: a server started
    /// after the push lists what it sent.
    static func prepare(_ context: Context, _ vault: UnlockedVault, _ thin: ThinVault) throws -> Upload {
        let remote = try context.remote(thin.remote)
        let rclone = try context.rclone()
        let summary = try RemotePush.push(vault: context.vaultDirectory, remote: remote, rclone: rclone, thin: true,
                                          named: Set(vault.manifest.entries.map(\.blobName)), lockHeld: true)
        guard summary.remoteMoved == nil, !summary.remoteHeaderNewer else {
            throw CLIError(message: "'\(remote.name)' changed on another machine since this vault last synced with it",
                           hints: ["'vault pull' first, then rekey; nothing was rekeyed"], code: .busy)
        }
        try ThinEviction.evict(vault: context.vaultDirectory, server: RcloneServer(rclone: rclone, target: remote.target))
        try context.attachRemoteBlobs(vault, .uncached)
        // A quarter of the cache's bound: what the user let this vault hold.
        let batch = max(thin.cacheBytes / 4, 16 << 20)
        return Upload(remote: remote, offload: ThinRekeyUpload(vault: context.vaultDirectory, rclone: rclone,
                                                               target: remote.target, batchBytes: batch))
    }

    /// Pushes the rekeyed vault (new header and list of items; the push
    /// removes the old blobs there), lets what went up leave items/, and
    /// removes the old blobs' blocks from the cache.
    static func finish(_ context: Context, _ vault: UnlockedVault, _ upload: Upload, oldBlobs: Set<String>) throws {
        // Read again: the first push recorded what both sides hold now.
        let remote = try context.remote(upload.remote.name)
        context.terminal.note("sent \(Format.count(upload.offload.sent, "new blob")) (\(Format.size(upload.offload.sentBytes))) to '\(remote.name)'")
        try BlockCache.forget(oldBlobs, directory: ThinVault.cacheDirectory(context.vaultDirectory))
        do {
            let rclone = try context.rclone()
            let summary = try RemotePush.push(vault: context.vaultDirectory, remote: remote, rclone: rclone, thin: true,
                                              named: Set(vault.manifest.entries.map(\.blobName)), lockHeld: true)
            if let moved = summary.remoteMoved { throw RemoteError.remoteChanged(remote: moved, known: remote.known) }
            try ThinEviction.evict(vault: context.vaultDirectory, server: RcloneServer(rclone: rclone, target: remote.target))
            context.terminal.note("pushed the new keys to '\(remote.name)'; \(Format.count(summary.deletedFiles, "old blob")) deleted there")
        } catch {
            var e = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            e.hints = ["the vault here is rekeyed, and its new blobs are on '\(remote.name)'; 'vault push' puts its new keys there"]
            throw e
        }
    }
}
