import VaultCore
import Dispatch
import Synchronization
import VaultCrypto
import System

/// The new machine's side of a move (docs/FORMAT.md, "Device move:
/// transfer"). Files land in a staging directory beside the target, named
/// `.<target name>.moving-<pid>-<start time>`; only a complete, verified
/// vault is renamed into place. The staging directory is erased on every
/// failure, and one left by a killed receiver is erased by the next
/// `vault move receive` into the same directory (its pid and start time
/// say whether its owner still runs).
public final class MoveReceiver: Sendable {
    public let target: String
    public let staging: String
    /// Whether the staging directory exists, whether it became the target,
    /// and what was received. Locked: `discard` may run on the interrupt thread.
    private let state = Mutex((created: false, committed: false, receipt: [UInt8](), summary: MoveSummary()))
    public var summary: MoveSummary { state.withLock { $0.summary } }

    /// Refuses a target that holds anything (a vault or not): exit 15. An
    /// empty directory is fine; it is replaced.
    public init(target: String) throws {
        var target = target
        while target.count > 1 && target.hasSuffix("/") { target.removeLast() }
        self.target = target
        guard Self.isFree(target) else { throw VaultError.alreadyExists(path: target) }
        let parent = VaultDirectory.directory(of: target)
        // The default location's parents (~/.local/share) may not exist yet
        // on a new machine.
        if parent != ".", try Syscall.status(of: parent, followLinks: true) == nil { try Vault.makeDirectories(parent) }
        let name = String(target.split(separator: "/").last ?? "vault")
        let stamp = try ProcessStamp.current()
        Self.removeAbandoned(in: parent, for: name)
        staging = parent + "/.\(name).moving-" + stamp.text()
    }

    deinit { discard() }

    static func isFree(_ path: String) -> Bool {
        guard let st = (try? Syscall.status(of: path)) ?? nil else { return true }
        return st.kind == .directory && ((try? Syscall.listDirectory(path))?.isEmpty ?? false)
    }

    /// Erases staging directories for `name` in `parent` whose receiver is gone.
    static func removeAbandoned(in parent: String, for name: String) {
        let prefix = ".\(name).moving-"
        for entry in (try? VaultDirectory.names(in: parent)) ?? [] where entry.hasPrefix(prefix) {
            let owner = entry.dropFirst(prefix.count).split(separator: "-")
            if owner.count == 2, let stamp = ProcessStamp(fields: owner), stamp.isRunning { continue }
            Eraser.erase(parent + "/" + entry)
        }
    }

    /// Receives every file into the staging directory, checking each
    /// against its hash, fsyncs them all, and computes the receipt. Local
    /// failures (no space, a write error) are told to the sender.
    /// `offered` learns the file count and total size as soon as the
    /// sender announces them; `progress` the bytes received so far.
    public func receive(over channel: MoveChannel, offered: ((Int, UInt64) -> Void)? = nil,
                        progress: ((UInt64) -> Void)? = nil) throws {
        let started = Syscall.monotonicSeconds()
        guard case (.offer(let count, let total), false) = try channel.receive() else { throw VaultError.corruptedOrTampered }
        offered?(count, total)
        let parent = VaultDirectory.directory(of: target)
        if let free = Syscall.freeSpace(parent), free < total + (16 << 20) {
            try? channel.send(.refused(.noSpace), final: true)
            throw MoveError.noSpace(bytes: total, directory: parent)
        }
        do {
            try state.withLock { s in
                try Syscall.mkdir(staging, mode: 0o700)
                s.created = true
            }
            try Syscall.mkdir(staging + "/items", mode: 0o700)
            try Syscall.mkdir(staging + "/inbox", mode: 0o700)
        } catch {
            try? channel.send(.refused(.writeFailed), final: true)
            throw error
        }
        let writer = StagedFileWriter()
        var seen = Set<String>()
        var files: [(path: String, size: UInt64, sha256: [UInt8])] = []
        var bytes: UInt64 = 0
        while true {
            let (message, final) = try channel.receive()
            guard !final else { throw VaultError.corruptedOrTampered }
            if case .end = message { break }
            guard case .file(let path, let size) = message, files.count < count, seen.insert(path).inserted,
                  size <= total - bytes else { throw VaultError.corruptedOrTampered }
            let digest = try receiveFile(path, size: size, over: channel, writer: writer) { n in
                bytes += n
                progress?(bytes)
            }
            files.append((path, size, digest))
        }
        guard files.count == count, bytes == total, seen.contains("vault.header"), seen.contains("manifest") else {
            throw VaultError.corruptedOrTampered
        }
        // One syncfs for every file written (per-file fsync would cost a
        // journal commit for each of thousands of small items), then the
        // directories.
        try Syscall.syncFileSystem(staging)
        for dir in [staging + "/items", staging + "/inbox", staging] { try Syscall.fsyncDirectory(dir) }
        let receipt = try MoveLayout.receipt(files)
        let summary = MoveSummary(files: count, bytes: total, seconds: Syscall.monotonicSeconds() - started)
        state.withLock { ($0.receipt, $0.summary) = (receipt, summary) }
    }

    /// One file: data messages up to `size`, then its hash, which must
    /// match. The bytes are hashed and written on `writer`'s thread while
    /// this one receives and opens the next frame.
    private func receiveFile(_ path: String, size: UInt64, over channel: MoveChannel, writer: StagedFileWriter,
                             received: (UInt64) -> Void) throws -> [UInt8] {
        do { try writer.start(staging + "/" + path) } catch {
            try? channel.send(.refused(.writeFailed), final: true)
            throw error
        }
        var left = size
        while left > 0 {
            guard case (.data(let d), false) = try channel.receive(), UInt64(d.count) <= left else {
                throw VaultError.corruptedOrTampered
            }
            do { try writer.write(d) } catch {
                try? channel.send(.refused(.writeFailed), final: true)
                throw error
            }
            left -= UInt64(d.count)
            received(UInt64(d.count))
        }
        guard case (.fileEnd(let expected), false) = try channel.receive() else { throw VaultError.corruptedOrTampered }
        let digest: [UInt8]
        do { digest = try writer.finish() } catch {
            try? channel.send(.refused(.writeFailed), final: true)
            throw error
        }
        guard constantTimeEqual(expected, digest) else { throw VaultError.corruptedOrTampered }
        return digest
    }

    /// Tells the sender the received vault was refused here (a failed check
    /// or a wrong password), before the staging directory is erased.
    public func refuse(_ reason: MoveRefusal, over channel: MoveChannel) {
        try? channel.send(.refused(reason), final: true)
    }

    /// Renames the staging directory to the target (which must still be
    /// free) and fsyncs the parent: from here on the vault is in place.
    public func commit() throws {
        do {
            try state.withLock { s in
                try Syscall.rename(staging, target)
                s.committed = true
            }
        } catch let error as SystemError where [.directoryNotEmpty, .fileExists, .notDirectory].contains(error.errno) {
            throw VaultError.alreadyExists(path: target)
        }
        try Syscall.fsyncDirectory(VaultDirectory.directory(of: target))
    }

    /// Sends the receipt (the sender erases its vault only on it) and waits
    /// for the sender to say what it did. A sender that goes away now
    /// leaves `summary.outcome` nil: both vaults may then exist.
    public func confirm(over channel: MoveChannel) throws {
        precondition(state.withLock { $0.committed })
        try channel.send(.receipt(state.withLock { $0.receipt }), final: true)
        if case (.done(let outcome), true)? = try? channel.receive() {
            state.withLock { $0.summary.outcome = outcome }
        }
    }

    /// Erases the staging directory unless it was committed. Idempotent.
    public func discard() {
        state.withLock { s in
            if s.created && !s.committed { Eraser.erase(FilePath(staging)) }
            s.created = false
        }
    }
}

/// Hashes and writes one staged file at a time on its own serial queue, so
/// disk writes and SHA-256 overlap with receiving and opening frames. At
/// most two frames wait in the queue (8 MiB). The first error sticks and is
/// thrown by the next call.
final class StagedFileWriter: @unchecked Sendable {
    private let queue = DispatchQueue(label: "vault.move.writer")
    private let slots = DispatchSemaphore(value: 2)
    private let failure = Mutex<(any Error & Sendable)?>(nil)
    // Touched only on `queue`.
    private var file: FileHandleFD?
    private var hash: SHA256?

    func start(_ path: String) throws {
        try rethrowFailure()
        try queue.sync {
            let f = try FileHandleFD(creating: path)
            f.startsWriteback = true
            file = f
            hash = try SHA256()
        }
    }

    func write(_ data: ArraySlice<UInt8>) throws {
        try rethrowFailure()
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard failure.withLock({ $0 == nil }), let file, let hash else { return }
            do {
                try data.withUnsafeBytes { raw in
                    try hash.update(raw)
                    try file.write(raw)  // in 256 KiB write(2)s: see FileHandleFD.write
                }
            } catch {
                failure.withLock { $0 = (error as? VaultError) ?? (error as? SystemError) ?? SystemError(operation: .write, errno: .ioError) }
            }
        }
    }

    /// Waits for the file's last write and returns its SHA-256.
    func finish() throws -> [UInt8] {
        let digest = try queue.sync { () throws -> [UInt8]? in
            defer { file = nil; hash = nil }
            return try hash?.finish()
        }
        try rethrowFailure()
        guard let digest else { throw MoveError.misuse(.noStagedFile) }
        return digest
    }

    private func rethrowFailure() throws {
        if let e = failure.withLock({ $0 }) { throw e }
    }
}
