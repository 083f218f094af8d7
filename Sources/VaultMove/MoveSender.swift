import VaultCore
import VaultCrypto
import System

/// One file a move carries, relative to the vault directory.
public struct MoveFile: Equatable, Sendable {
    public let path: String
    public let size: UInt64
}

/// What a finished move did, for either side's summary.
public struct MoveSummary: Sendable {
    public var files = 0
    public var bytes: UInt64 = 0
    /// Seconds from the offer to the receipt (the receiver's check included
    /// on the sender's side, excluded on the receiver's).
    public var seconds = 0.0
    /// nil on the receiver when the sender never said.
    public var outcome: MoveOutcome?
    /// Sender: files that arrived during the move (drop-ins) and so stayed.
    public var leftBehind: [String] = []
}

/// The old machine's side of a move (docs/FORMAT.md, "Device move:
/// transfer"). Holds the vault's writer lock from the listing to the erase,
/// so nothing but new drop-ins can change underneath.
public final class MoveSender {
    let vault: UnlockedVault
    public let files: [MoveFile]
    public var totalBytes: UInt64 { files.reduce(0) { $0 + $1.size } }

    /// Lists the vault's own files: header, manifest, rekey.pending, every
    /// stored item, and each waiting drop-in whose envelope has landed (an
    /// `.item` without its `.env` is a drop-in still being written). The
    /// header goes last, so a receiver could never mistake a prefix of the
    /// listing for a vault.
    public init(vault: UnlockedVault) throws {
        guard vault.canWrite else { throw VaultError.busy }
        self.vault = vault
        let paths = vault.paths
        var names: [String] = []
        names += try VaultDirectory.names(in: paths.items).sorted().map { "items/" + $0 }
        let inbox = Set(try VaultDirectory.names(in: paths.inbox))
        for name in inbox.sorted() where name.hasSuffix(".env") || VaultPaths.isContentWithEnvelope(name, in: inbox) {
            names.append("inbox/" + name)
        }
        if try Syscall.status(of: paths.rekeyPending) != nil { names.append("rekey.pending") }
        names += ["manifest", "vault.header"]
        var files: [MoveFile] = []
        for name in names {
            guard MoveLayout.check(Array(name.utf8)) != nil else { continue }  // temp files and strays stay
            guard let st = try Syscall.status(of: paths.root + "/" + name), st.kind == .regular else {
                throw VaultError.unsafeVaultPath(paths.root + "/" + name)
            }
            files.append(MoveFile(path: name, size: UInt64(st.size)))
        }
        guard files.count <= MoveMessage.maxFiles else { throw MoveError.tooManyFiles(count: files.count) }
        self.files = files
    }

    /// Sends every file, waits for the receiver's receipt, and only when it
    /// matches erases the vault here (unless `keep`) and tells the receiver.
    /// Anything else leaves the vault untouched and throws. `allSent` runs once
    /// the last byte is out, before the wait for the receipt.
    public func send(over channel: MoveChannel, keep: Bool, progress: ((UInt64) -> Void)? = nil,
                     allSent: (() -> Void)? = nil) throws -> MoveSummary {
        let started = Syscall.monotonicSeconds()
        try channel.send(.offer(files: files.count, bytes: totalBytes))
        var sent: [(path: String, size: UInt64, sha256: [UInt8])] = []
        var done: UInt64 = 0
        for f in files {
            let source = try FileHandleFD(readingFrom: vault.paths.root + "/" + f.path)
            // Under the writer lock only drop-ins appear; a listed file that
            // changed size means something else is writing here: stop.
            guard source.size == f.size else { throw VaultError.busy }
            try channel.send(.file(path: f.path, size: f.size))
            let hash = try SHA256()
            var offset: UInt64 = 0
            while offset < f.size {
                let n = Int(min(UInt64(MoveMessage.maxData), f.size - offset))
                try channel.sendData(count: n) { piece in
                    guard try source.read(at: offset, into: piece) == n else { throw VaultError.busy }
                    try hash.update(UnsafeRawBufferPointer(piece))
                }
                offset += UInt64(n)
                done += UInt64(n)
                progress?(done)
            }
            let digest = try hash.finish()
            try channel.send(.fileEnd(sha256: digest))
            sent.append((f.path, f.size, digest))
        }
        try channel.send(.end)
        allSent?()
        let expected = try MoveLayout.receipt(sent)
        // The receiver may check the vault before it answers: no timeout
        // here, only TCP keepalive for a peer that vanished.
        switch try channel.receive() {
        case (.receipt(let r), true) where constantTimeEqual(r, expected):
            break
        case (.refused(let reason), true):
            throw MoveError.refused(reason)
        default:
            throw VaultError.corruptedOrTampered
        }
        var summary = MoveSummary(files: files.count, bytes: totalBytes, seconds: Syscall.monotonicSeconds() - started)
        summary.outcome = keep ? .kept : .erased
        if !keep { summary.leftBehind = try erase() }
        // The receiver has the vault either way; it only learns what we did.
        try? channel.send(.done(summary.outcome!), final: true)
        channel.connection.shutdownSending()
        return summary
    }

    /// Removes the moved vault: first rekey.pending and the header (after
    /// that fsync the directory is no longer a vault, so a crash mid-erase
    /// leaves junk, never a vault missing items), then everything listed,
    /// the machine's own files, and the directories if nothing else is
    /// left. Returns what stayed (drop-ins that arrived during the move,
    /// quarantined files).
    /// The names of this machine's own state in a vault directory.
    static func machineState(_ name: String) -> Bool {
        name == "remotes" || name.hasPrefix("remote.") || name == "thin" || name == "cache" || name == "notes" || name == "indexes"
    }

    func erase() throws -> [String] {
        let paths = vault.paths
        let root = paths.root
        let headers: Set = ["rekey.pending", "vault.header"]
        for f in files where headers.contains(f.path) { try Syscall.unlink(root + "/" + f.path) }
        try Syscall.fsyncDirectory(root)
        for f in files where !headers.contains(f.path) { try? Syscall.unlink(root + "/" + f.path) }
        try? Syscall.unlink(paths.attempts)
        try? Syscall.unlink(paths.dropLock)
        try? Syscall.unlink(paths.replica)
        try? Syscall.unlink(paths.legacyDropLock)
        try? Syscall.unlink(paths.dropFence)
        Eraser.erase(FilePath(root + "/scratch"))
        // This machine's own state of the vault, which does not move: its
        // remotes and what it last saw of each, a thin vault's file and
        // cache. Erase means all of it (issue 43, item 9: a later `init`
        // there picked up a stale remote).
        for name in (try? VaultDirectory.names(in: root)) ?? [] where Self.machineState(name) {   // what cannot be listed stays, and is said
            Eraser.erase(FilePath(root + "/" + name))
        }
        try? Syscall.fsyncDirectory(paths.items)
        try? Syscall.fsyncDirectory(paths.inbox)
        var left: [String] = []
        // What `check --repair` set aside never moves; it stays, and is said.
        for dir in ["items", "inbox", "quarantine"] {
            let names = (try? VaultDirectory.names(in: root + "/" + dir)) ?? []
            left += names.sorted().map { dir + "/" + $0 }
            if names.isEmpty { try? Syscall.rmdir(root + "/" + dir) }
        }
        // The lock goes last: we hold it until here.
        try? Syscall.unlink(paths.lock)
        if (try? Syscall.listDirectory(root))?.isEmpty == true {
            try? Syscall.rmdir(root)
            try? Syscall.fsyncDirectory(VaultDirectory.directory(of: root))
        } else {
            try? Syscall.fsyncDirectory(root)
        }
        return left
    }
}
