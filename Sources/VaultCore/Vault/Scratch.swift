import Synchronization
import VaultCrypto
import System

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

    /// Where scratch directories go for a vault at `vaultRoot`, best first:
    /// `$XDG_RUNTIME_DIR/vault` (a per-user tmpfs), else
    /// `/dev/shm/vault-UID` (memory too; refused by `init` if someone else
    /// made it first), else the vault's `scratch/`, on disk. `open` takes
    /// the first that `init` accepts, except that a runtime directory that
    /// exists must be safe: there is no falling back from a planted one.
    public static func candidates(vaultRoot: String, environment: [String: String]) -> [String] {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            // One that cannot be looked at is not absent: it stays the only
            // candidate, and `init` there meets the error.
            do {
                if let st = try Syscall.status(of: runtime), st.kind == .directory { return [runtime + "/vault"] }
            } catch {
                return [runtime + "/vault"]
            }
        }
        var out: [String] = []
        // /dev/shm is only a preference: one that cannot be looked at is skipped for the vault's disk.
        if let st = try? Syscall.status(of: sharedMemory), st.kind == .directory { out.append(sharedMemoryBase) }
        return out + [onDisk(vaultRoot)]
    }

    static let sharedMemory = "/dev/shm"
    static var sharedMemoryBase: String { sharedMemory + "/vault-\(Syscall.userID)" }

    /// The base inside the vault, on the vault's disk.
    public static func onDisk(_ vaultRoot: String) -> String { vaultRoot + "/scratch" }

    /// The first candidate, for cleanup and tests.
    public static func base(vaultRoot: String, environment: [String: String]) -> String {
        candidates(vaultRoot: vaultRoot, environment: environment)[0]
    }

    /// A new private directory under `base`, which is made (0700) if
    /// missing. A base that is not ours, or that others may write, is
    /// refused: its owner could swap the private directory under the editor.
    public init(base: String) throws {
        if try Syscall.status(of: base) == nil {
            do { try Syscall.mkdir(base, mode: 0o700) } catch let error as SystemError where error.errno == .fileExists {}
        }
        // Not a directory of ours (a symbolic link someone planted at
        // /dev/shm/vault-UID, say): refused as unsafe for private copies,
        // which `open` skips for the next place (issue 38), never followed.
        guard let st = try Syscall.status(of: base), st.kind == .directory else { throw VaultError.unsafeScratch(base) }
        guard st.owner == Syscall.userID, !st.isWritableByOthers else { throw VaultError.unsafeScratch(base) }
        // Nor may others rename it away and put their own in its place: its
        // parent is ours or root's, and shared only if sticky (like /tmp).
        let parent = VaultDirectory.directory(of: base)
        guard let up = try Syscall.status(of: parent),
              up.owner == Syscall.userID || up.owner == 0,
              !up.isWritableByOthers || up.permissions & 0o1000 != 0 else { throw VaultError.unsafeScratch(parent) }
        path = base + "/" + Self.prefix + Hex.encode(SecureRandom.bytes(8))
        try Syscall.mkdir(path, mode: 0o700)
        let owner = Array((try ProcessStamp.current().text(separator: " ") + "\n").utf8)
        try VaultDirectory.atomicWrite(owner, to: path + "/owner")
    }

    deinit { erase() }

    /// Overwrites every file with zeros (fsync'ed), then unlinks everything.
    /// Idempotent; safe to call from an interrupt cleanup. Returns what could
    /// not be erased.
    @discardableResult
    public func erase() -> [FilePath] {
        erased.withLock { done in
            defer { done = true }
            return done ? [] : Eraser.erase(path)
        }
    }

    /// Every place scratch directories may be for this vault.
    public static func bases(vaultRoot: String, environment: [String: String]) -> [String] {
        // /dev/shm is looked at only when it is a candidate (no runtime
        // directory): with one, another session's copies there wait for a
        // command of that kind of session, or for the reboot that clears
        // /dev/shm. Cleaning it from every command would also reach across
        // test sandboxes that each have their own runtime directory.
        Array(Set(candidates(vaultRoot: vaultRoot, environment: environment) + [onDisk(vaultRoot)]))
    }

    /// Removes scratch directories under `base` whose owner process is gone.
    /// Returns how many were erased, and what could not be.
    @discardableResult
    public static func removeAbandoned(base: String) -> (erased: Int, failed: [FilePath]) {
        // Only our own base: /dev/shm/vault-UID could have been made by
        // someone else. A base that cannot be looked at or listed erases
        // nothing: erasing less is the safe side, and the next command looks again.
        guard let st = (try? Syscall.status(of: base)) ?? nil, st.owner == Syscall.userID,
              let names = try? Syscall.listDirectory(base) else { return (0, []) }
        var erased = 0
        var failed: [FilePath] = []
        for name in names where name.starts(with: prefix.utf8) {
            let dir = FilePath(base).appending(name)
            if !ownerIsAlive(dir) {
                failed += Eraser.erase(dir)
                erased += 1
            }
        }
        return (erased, failed)
    }

    /// Whether the process that made scratch directory `dir` still runs:
    /// false erases it, and the plaintext an editor may be working on with
    /// it. So only what the kernel says settles it: an owner file that
    /// cannot be read (EACCES, EIO, no descriptor left) keeps the directory,
    /// never reads as "no owner".
    static func ownerIsAlive(_ dir: FilePath) -> Bool {
        let raw: [UInt8]
        do {
            raw = try VaultDirectory.readFile(dir.appending("owner"), limit: 64)
        } catch let error as SystemError where error.errno != .noSuchFile {
            return true
        } catch {
            // No owner file yet (a scratch being created this instant, or a
            // crash between mkdir and the owner write), or none vault wrote
            // (not a regular file, too long). Give it a minute.
            do {
                guard let st = try Syscall.status(of: dir) else { return false }   // gone already
                return Syscall.now() - st.modified < 60
            } catch {
                return true
            }
        }
        let fields = String(decoding: raw, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let stamp = ProcessStamp(fields: fields) else { return false }
        return stamp.isRunning
    }
}
