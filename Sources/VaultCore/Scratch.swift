#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VaultCrypto

/// A private directory for `vault open`'s plaintext copy: 0700, under
/// `$XDG_RUNTIME_DIR/vault` (a per-user tmpfs on systemd machines) when that
/// exists, else under the vault's own `scratch/` directory. It records its
/// owner (pid and the process's start time, so a reused pid does not count)
/// in `owner`; any later vault command erases scratch directories whose
/// owner is gone, before it does anything else.
public final class Scratch: Sendable {
    public let path: String
    /// Set once erased. Held during the erase, so an interrupt arriving while
    /// the main thread erases waits for it to finish before the process exits.
    private let erased = Mutex(false)

    static let prefix = "open-"

    /// Where scratch directories go for a vault at `vaultRoot`.
    public static func base(vaultRoot: String, environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
           let st = try? Syscall.lstat(runtime), st.st_mode & S_IFMT == S_IFDIR {
            return runtime + "/vault"
        }
        return vaultRoot + "/scratch"
    }

    public init(base: String) throws {
        if try Syscall.lstat(base) == nil { try Syscall.mkdir(base, 0o700) }
        guard let st = try Syscall.lstat(base), st.st_mode & S_IFMT == S_IFDIR else { throw VaultError.unsafeVaultPath(base) }
        path = base + "/" + Self.prefix + Hex.encode(SecureRandom.bytes(8))
        try Syscall.mkdir(path, 0o700)
        guard let start = Self.startTime(of: getpid()) else {
            throw VaultError.invalidArgument("cannot read this process's start time from /proc")
        }
        let owner = Array("\(getpid()) \(start)\n".utf8)
        try VaultDirectory.atomicWrite(owner, to: path + "/owner")
    }

    deinit { erase() }

    /// Overwrites every file with zeros (fsync'ed), then unlinks everything.
    /// Idempotent; safe to call from an interrupt cleanup.
    public func erase() {
        erased.withLock { done in
            if !done { Self.erase(path) }
            done = true
        }
    }

    /// Every place scratch directories may be for this vault.
    public static func bases(vaultRoot: String, environment: [String: String]) -> [String] {
        Array(Set([base(vaultRoot: vaultRoot, environment: environment), vaultRoot + "/scratch"]))
    }

    /// Removes scratch directories under `base` whose owner process is gone.
    /// Returns how many were erased.
    @discardableResult
    public static func removeAbandoned(base: String) -> Int {
        guard let names = try? Syscall.listDirectory(base) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            let dir = base + "/" + name
            if !ownerIsAlive(dir) { erase(dir); removed += 1 }
        }
        return removed
    }

    static func ownerIsAlive(_ dir: String) -> Bool {
        guard let raw = try? VaultDirectory.readFile(dir + "/owner", limit: 64) else {
            // No owner file yet: a scratch being created this instant, or a
            // crash between mkdir and the owner write. Give it a minute.
            guard let st = try? Syscall.lstat(dir) else { return false }
            return Int64(time(nil)) - Int64(st.st_mtim.tv_sec) < 60
        }
        let fields = String(decoding: raw, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let pid = Int32(fields[0]), let start = UInt64(fields[1]) else { return false }
        return startTime(of: pid) == start
    }

    /// Field 22 of /proc/PID/stat (start time in clock ticks since boot).
    static func startTime(of pid: Int32) -> UInt64? {
        // /proc files report a size of 0, so read to the end, not by size.
        guard let f = try? FileHandleFD(readingFrom: "/proc/\(pid)/stat") else { return nil }
        var raw = [UInt8](repeating: 0, count: 4096)
        guard let n = try? raw.withUnsafeMutableBytes({ try f.readSequential(into: $0) }) else { return nil }
        let text = String(decoding: raw[..<n], as: UTF8.self)
        // The command name (field 2) may hold spaces; fields resume after its ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let rest = text[text.index(after: close)...].split(separator: " ")
        return rest.count > 19 ? UInt64(rest[19]) : nil
    }

    /// Depth-first: files zeroed and unlinked, symlinks unlinked (never
    /// followed), directories removed.
    static func erase(_ path: String) {
        guard let st = try? Syscall.lstat(path) else { return }
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            for name in (try? Syscall.listDirectory(path)) ?? [] { erase(path + "/" + name) }
            try? Syscall.rmdir(path)
        case S_IFREG:
            if let fd = try? Syscall.open(path, O_WRONLY | O_NOFOLLOW) {
                let zeros = [UInt8](repeating: 0, count: 1 << 16)
                var left = Int(st.st_size)
                while left > 0 {
                    let n = min(left, zeros.count)
                    guard (try? zeros.withUnsafeBytes({ try Syscall.writeFully(fd, UnsafeRawBufferPointer(rebasing: $0[..<n])) })) != nil else { break }
                    left -= n
                }
                try? Syscall.fsync(fd)
                Syscall.close(fd)
            }
            try? Syscall.unlink(path)
        default:
            try? Syscall.unlink(path)
        }
    }
}

/// A fingerprint of a file or folder tree (paths, kinds, modes, contents),
/// to tell whether `open`'s command changed the copy.
public enum TreeFingerprint {
    public static func of(_ path: String) throws -> [UInt8] {
        let h = try SHA256()
        try add(path, relative: "", to: h)
        return try h.finish()
    }

    private static func add(_ path: String, relative: String, to h: SHA256) throws {
        guard let st = try Syscall.lstat(path) else { return }
        try h.update(Array("\(relative)\u{0}\(st.st_mode)\u{0}".utf8))
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            for name in try Syscall.listDirectory(path).sorted() {
                try add(path + "/" + name, relative: relative + "/" + name, to: h)
            }
        case S_IFREG:
            let f = try FileHandleFD(readingFrom: path)
            var buf = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try buf.withUnsafeMutableBytes { try f.readSequential(into: $0) }
                if n == 0 { break }
                try h.update(Array(buf[..<n]))
            }
        case S_IFLNK:
            var target = [CChar](repeating: 0, count: 4097)
            let n = readlink(path, &target, 4096)
            try h.update(n > 0 ? Array(target[..<n].map { UInt8(bitPattern: $0) }) : [])
        default: break
        }
    }
}
