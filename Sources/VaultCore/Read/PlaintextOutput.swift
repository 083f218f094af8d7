import System
import VaultCrypto

// Files the user names (outside the vault): never overwritten, created 0600,
// and never left half-written, not even by a kill.

public enum UserFiles {
    /// Erases a file or tree of plaintext that another thread may still be
    /// writing into (an interrupted extraction): first renamed out of the
    /// writer's way, so it can add nothing more, then files overwritten with
    /// zeros and unlinked, links unlinked (never followed), directories removed.
    @discardableResult
    public static func erase(_ path: FilePath) -> [FilePath] {
        let moved = FilePath(bytes: path.bytes + Array(".erasing".utf8))
        // The rename only keeps a writer out; when it fails, erasing in place still erases.
        return Eraser.erase((try? Syscall.rename(path, moved)) != nil ? moved : path)
    }

    /// Whether anything (even a dangling symlink) is at `path`.
    public static func exists(_ path: String) -> Bool { Syscall.exists(path) }

    /// Writes `bytes` to a new file at `path` (see `NewPlaintextFile`).
    public static func writeNew(_ bytes: [UInt8], to path: String, partials: PartialOutputs? = nil) throws {
        let file = try NewPlaintextFile(at: path, partials: partials)
        try bytes.withUnsafeBytes { try file.file.write($0) }
        try file.commit()
    }
}

/// A new file of plaintext at a path the user named. It is written with no
/// name at all (O_TMPFILE) and linked into place only when complete and
/// fsync'ed, and only if the path is still free: a kill at any instant
/// leaves nothing behind. Where the file system has no O_TMPFILE, it is
/// written as `.NAME.partial-<random>` beside the target and that path is
/// recorded in `partials`, so whichever vault command runs next erases it
/// if this process died; an error or an interrupt erases it at once.
public final class NewPlaintextFile {
    public let file: FileHandleFD
    let target: String
    /// The named fallback's path, for `announce` and the registry.
    public let partialPath: String?
    private let record: PartialOutputs.Record?
    private var committed = false

    public init(at target: String, partials: PartialOutputs?) throws {
        if Syscall.exists(target) { throw VaultError.alreadyExists(path: target) }
        self.target = target
        let dir = VaultDirectory.directory(of: target)
        do {
            if let fd = try Syscall.openNameless(in: dir) {
                file = FileHandleFD(owning: fd, path: target)
                (partialPath, record) = (nil, nil)
            } else {
                let name = String(target.split(separator: "/").last ?? "output")
                let partial = dir + "/." + name + PartialOutputs.marker + Hex.encode(SecureRandom.bytes(8))
                record = try partials?.record(partial)
                file = try FileHandleFD(creating: partial)
                partialPath = partial
            }
        } catch let error as SystemError {
            throw error.on(target)   // name the user's path, not ours
        }
        file.startsWriteback = true
    }

    /// fsync, then link (or rename) into place if the target is still free.
    /// Without `syncDirectory`, the caller fsyncs the directory once for
    /// many files (a restore of many items): each file is still complete
    /// on disk before its name exists. Without `sync`, the caller has made
    /// the file durable already (one syncfs for a group of files).
    public func commit(sync: Bool = true, syncDirectory: Bool = true) throws {
        if sync { try file.sync() }
        do {
            if let partialPath { try Syscall.renameNoReplace(partialPath, target) } else { try Syscall.linkNameless(file.fd, to: target) }
        } catch let error as SystemError where error.errno == .fileExists {
            throw VaultError.alreadyExists(path: target)
        }
        committed = true
        if syncDirectory { try Syscall.fsyncDirectory(VaultDirectory.directory(of: target)) }
        record?.remove()
    }

    deinit {
        if !committed, let partialPath { Eraser.erase(FilePath(partialPath)) }
        if !committed { record?.remove() }
    }
}

/// Plaintext outputs being written under a temporary name (a folder being
/// restored, a file where there is no O_TMPFILE), recorded in this user's
/// state directory (`$XDG_STATE_HOME/vault/partial/`) while they are written.
/// Each record names its process (pid and start time); any later vault
/// command erases the outputs of processes that are gone. Records are the
/// user's own (0700 directory), and a path is erased only if its last
/// component carries `marker`, so a stray record cannot aim the eraser at
/// anything else.
public struct PartialOutputs: Sendable {
    public static let marker = ".partial-"
    let directory: String

    public init(stateDirectory: String) { directory = stateDirectory + "/partial" }

    /// One output's record; removed once the output is complete or erased.
    public final class Record: Sendable {
        let path: String
        init(path: String) { self.path = path }
        /// Best effort: a record left names a `.partial-` path that is gone once its output is complete.
        public func remove() { try? Syscall.unlink(path) }
    }

    /// Records `output` (an absolute or relative path; made absolute here).
    public func record(_ output: String) throws -> Record {
        try Vault.ensureDirectory(directory)
        let absolute = output.hasPrefix("/") ? output : (try Syscall.realPath(".").description) + "/" + output
        let path = directory + "/" + (try ProcessStamp.current().text()) + "-" + Hex.encode(SecureRandom.bytes(4))
        try VaultDirectory.atomicWrite(Array(absolute.utf8), to: path)
        return Record(path: path)
    }

    /// Erases the outputs of processes that are gone. Returns the outputs
    /// erased and those that could not be.
    @discardableResult
    public func eraseAbandoned() -> (erased: [String], failed: [FilePath]) {
        // No records (or none that can be listed): nothing to erase; erasing less is the safe side.
        guard let names = try? VaultDirectory.names(in: directory) else { return ([], []) }
        var erased: [String] = [], failed: [FilePath] = []
        for name in names {
            let fields = name.split(separator: "-")
            guard fields.count == 3, let stamp = ProcessStamp(fields: fields) else { continue }
            if stamp.isRunning { continue }
            let record = directory + "/" + name
            // A record that cannot be read now is kept for the next command
            // (dropping it would leave its plaintext for good); one vault did
            // not write (too long, not a regular file) names nothing to erase.
            let raw: [UInt8]
            do { raw = try VaultDirectory.readFile(record, limit: 8192) } catch is SystemError { continue } catch { raw = [] }
            if let output = String(validating: raw, as: UTF8.self), output.split(separator: "/").last?.contains(Self.marker) == true {
                if Syscall.exists(output) {
                    let left = Eraser.erase(FilePath(output))
                    if left.isEmpty { erased.append(output) } else { failed += left }
                }
            }
            try? Syscall.unlink(record)   // best effort: one left is looked at again by the next command
        }
        return (erased, failed)
    }
}
