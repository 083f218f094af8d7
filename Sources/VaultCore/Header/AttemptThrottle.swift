import ByteLayout
import System

// Attempt-delay state, file `attempts` in the vault directory (docs/FORMAT.md,
// "Attempt delay"), 24 bytes, not secret and not authenticated:
//
//   magic "VAULTATT" (8) || version 0x01 || 3 zero bytes
//   || u32be consecutive wrong passwords || i64be earliest next attempt (Unix s)
//
// A speed bump on this machine only: anyone with a copy of the vault, or who
// can delete this file, is not slowed down. Argon2id is the real boundary.

/// Where "now" comes from; tests inject a fast clock.
public protocol UnlockClock: Sendable {
    func now() -> Int64
}

public struct SystemClock: UnlockClock {
    public init() {}
    public func now() -> Int64 { Syscall.now() }
}

/// Persisted, growing delay between wrong passwords: free for the first two,
/// then 5 s, 30 s, 2 min, 10 min, and 30 min from then on. A correct password
/// clears it. Attempts are serialised by a flock on the state file, so
/// parallel guessing gains nothing.
struct AttemptThrottle {
    static let magic = Array("VAULTATT".utf8)
    static let length = 24
    static let schedule: [Int64] = [0, 0, 5, 30, 120, 600, 1800]
    static let longestWait: Int64 = 1800

    let path: String
    let clock: UnlockClock

    /// The wait imposed after the `failures`-th consecutive wrong password.
    static func delay(afterFailures failures: UInt32) -> Int64 {
        failures == 0 ? 0 : schedule[min(Int(failures), schedule.count) - 1]
    }

    struct State: Equatable {
        var failures: UInt32 = 0
        var notBefore: Int64 = 0
    }

    static func decode(_ b: [UInt8]) -> State? {
        var r = ByteReader(b)
        // Not of the exact shape: nil, which `run` reads as the longest wait (fail closed).
        guard (try? r.expect(magic + [1, 0, 0, 0])) != nil, let failures = try? r.u32(), let notBefore = try? r.i64(),
              (try? r.finish()) != nil else { return nil }
        return State(failures: failures, notBefore: notBefore)
    }

    static func encode(_ s: State) -> [UInt8] {
        var w = ByteWriter(magic + [1, 0, 0, 0], capacity: length)
        w.u32(s.failures)
        w.i64(s.notBefore)
        return w.bytes
    }

    /// Seconds until the next attempt may run (0: now), read without the
    /// lock and without changing anything: for saying the wait before a
    /// prompt. `run` still decides; this only spares the user typing a
    /// password that would be refused unread. Capped like `run` caps it.
    func pendingWait() -> Int {
        // Advisory (see above): a state that cannot be read shows no wait; `run` decides under the lock.
        guard let fd = try? Syscall.open(path, [.noFollow]) else { return 0 }
        let file = FileHandleFD(owning: fd, path: path)
        var raw = [UInt8](repeating: 0, count: Self.length + 1)
        // The same.
        guard let n = try? raw.withUnsafeMutableBytes({ try file.read(at: 0, into: $0) }),
              let state = Self.decode(Array(raw[..<n])) else { return 0 }
        let (wait, overflow) = state.notBefore.subtractingReportingOverflow(clock.now())
        return overflow ? Int(Self.longestWait) : Int(max(0, min(wait, Self.longestWait)))
    }

    /// Runs `attempt` unless a wait is pending (then `lockedOut`, at once,
    /// without running it). Counts `wrongPassword` failures; clears the
    /// count on success. A damaged state file counts as the longest wait
    /// already served, i.e. it is treated as at the cap.
    func run<T>(_ attempt: () throws -> T) throws -> T {
        // No file until the first wrong password: a vault that never saw
        // one has none.
        guard let file = try openState(create: false) else {
            do { return try attempt() } catch VaultError.wrongPassword {
                guard let file = try openState(create: true) else { throw VaultError.wrongPassword }
                try recordFailure(State(), in: file)
            }
        }
        var raw = [UInt8](repeating: 0, count: Self.length + 1)
        let n = try raw.withUnsafeMutableBytes { try file.read(at: 0, into: $0) }
        let state = n == 0 ? State() : (Self.decode(Array(raw[..<n])) ?? State(failures: UInt32(Self.schedule.count), notBefore: 0))
        let now = clock.now()
        // The file is not authenticated: whatever time it names, the wait is
        // at most the schedule's longest. A time further ahead is damage; it
        // is brought back to that cap, so the wait ends like any other.
        if state.notBefore > now {
            let (wait, overflow) = state.notBefore.subtractingReportingOverflow(now)
            if overflow || wait > Self.longestWait {
                try save(State(failures: state.failures, notBefore: now + Self.longestWait), to: file)
                throw VaultError.lockedOut(retryInSeconds: Int(Self.longestWait))
            }
            throw VaultError.lockedOut(retryInSeconds: Int(wait))
        }
        do {
            let result = try attempt()
            if state.failures > 0 { try save(State(), to: file) }
            return result
        } catch VaultError.wrongPassword {
            try recordFailure(state, in: file)
        }
    }

    /// The state file, flock'ed (waiting for other attempts); nil if absent
    /// (and not `create`) or if the vault is read-only.
    private func openState(create: Bool) throws -> FileHandleFD? {
        let fd: Int32
        do {
            fd = try Syscall.open(path, create ? [.readWrite, .noFollow, .create] : [.readWrite, .noFollow])
        } catch let error as SystemError where [Errno.noSuchFile, .readOnlyFileSystem, .permissionDenied].contains(error.errno) {
            return nil
        }
        let file = FileHandleFD(owning: fd, path: path)
        _ = try Syscall.flock(fd, exclusive: true, wait: true)
        return file
    }

    /// Counts one more wrong password, persists it, and throws the error
    /// that tells the user how long to wait.
    private func recordFailure(_ previous: State, in file: FileHandleFD) throws -> Never {
        let now = clock.now()
        let failures = previous.failures &+ 1
        let state = State(failures: failures, notBefore: now + Self.delay(afterFailures: failures))
        try save(state, to: file)
        let wait = Int(state.notBefore - now)
        throw wait > 0 ? VaultError.wrongPasswordDelayed(retryInSeconds: wait) : VaultError.wrongPassword
    }

    /// In place (fixed size), then fsync: the state must survive a crash or
    /// a kill right after a wrong guess.
    private func save(_ s: State, to file: FileHandleFD) throws {
        try Syscall.ftruncate(file.fd, 0)
        let b = Self.encode(s)
        _ = try b.withUnsafeBytes { try Syscall.pwriteFully(file.fd, $0, at: 0) }
        try file.sync()
    }
}
