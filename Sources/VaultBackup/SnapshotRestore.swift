import System
import VaultCore

/// What `vault snapshots restore` writes.
public struct RestoreOptions: Sendable {
    /// The directory the snapshot's paths are restored under (it exists).
    public var target: String
    public var includes: [[UInt8]] = []
    public var excludes: [[UInt8]] = []
    public init(target: String) { self.target = target }
}

public struct RestoreSummary: Sendable {
    public var files: UInt64 = 0, directories: UInt64 = 0, symlinks: UInt64 = 0, bytes: UInt64 = 0
    /// Paths that already existed (never overwritten).
    public var existing: [String] = []
}

/// Writes a snapshot's entries under a directory. Never outside it: every
/// name was checked by `Tree.decode` (no '/', not "." or ".."), every
/// directory on the way is one this restore made or a real directory that
/// was there (never a symbolic link), files are created exclusively and
/// without following links, and a symbolic link is created as a link and
/// never written through. Nothing existing is replaced. Modes, times to the
/// nanosecond, hard links, and owners when run as root, are set after
/// each entry's content (a directory's after its entries).
public final class SnapshotRestore {
    private let reader: SnapshotReader
    private let options: RestoreOptions
    private var summary = RestoreSummary()
    private var linkPaths: [UInt32: FilePath] = [:]
    /// The target, then each directory from the root down to the one being
    /// walked: its disk path and whether it has been made yet (it is made
    /// when something goes in, so an --include restores only what it names).
    private var pending: [(path: FilePath, made: Bool)] = []
    private let root = Syscall.isRoot

    public init(_ reader: SnapshotReader, options: RestoreOptions) { (self.reader, self.options) = (reader, options) }

    public func run() throws -> RestoreSummary {
        pending = [(FilePath(options.target), true)]
        try reader.walk(visit: { path, e in try self.visit(path, e) }, leave: { _, e in try self.leave(e) })
        return summary
    }

    private func text(_ path: [[UInt8]]) -> [UInt8] { path.reduce([]) { $0 + [0x2f] + $1 } }

    private func matches(_ patterns: [[UInt8]], _ path: [[UInt8]]) -> Bool {
        BackupFilter.matches(patterns, name: path.last ?? [], path: text(path))
    }

    /// Included: no --include, or it or a directory above matches one.
    private func included(_ path: [[UInt8]]) -> Bool {
        options.includes.isEmpty || (1...path.count).contains { matches(options.includes, Array(path[..<$0])) }
    }

    /// Directories are entered (true) and left (`leave`) in pairs, so
    /// `pending` always ends with this entry's parent.
    private func visit(_ path: [[UInt8]], _ e: TreeEntry) throws -> Bool {
        if !options.excludes.isEmpty, matches(options.excludes, path) { return false }
        guard let parent = pending.last else { return false }
        let disk = FilePath(bytes: parent.path.bytes + [0x2f] + e.name)
        switch e.kind {
        case .directory:
            pending.append((disk, false))
            if included(path) { try makePending() }
            return true
        case .file, .symlink:
            guard included(path) else { return false }
            try makePending()
            try write(e, at: disk, display: String(decoding: text(path).dropFirst(), as: UTF8.self))
            return false
        }
    }

    private func leave(_ e: TreeEntry) throws {
        guard let dir = pending.popLast(), dir.made else { return }
        try attributes(e, at: dir.path)
    }

    /// Makes the directories on the way down that are not made yet.
    private func makePending() throws {
        for i in pending.indices where !pending[i].made {
            let p = pending[i].path
            do {
                try Syscall.mkdir(p, mode: 0o700)
                summary.directories += 1
            } catch let error as SystemError where error.errno == .fileExists {
                guard let st = try Syscall.status(of: p), st.isDirectory else {
                    throw BackupError.unsafeEntry(path: p.description, reason: "something that is not a directory is there")
                }
            }
            pending[i].made = true
        }
    }

    private func write(_ e: TreeEntry, at path: FilePath, display: String) throws {
        if e.kind == .symlink {
            do { try Syscall.symlink(target: FilePath(bytes: e.target), at: path) } catch let error as SystemError where error.errno == .fileExists {
                summary.existing.append(display)
                return
            }
            summary.symlinks += 1
            if root { try? Syscall.setOwner(path, user: e.user, group: e.group) }
            try? Syscall.setTime(path, seconds: e.modified, nanoseconds: e.modifiedNanoseconds)
            return
        }
        if e.linkGroup != 0, let first = linkPaths[e.linkGroup] {
            do { try Syscall.link(first, at: path) } catch let error as SystemError where error.errno == .fileExists {
                summary.existing.append(display)
            }
            summary.files += 1
            return
        }
        let fd: Int32
        do { fd = try Syscall.open(path, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600) } catch let error as SystemError where error.errno == .fileExists {
            summary.existing.append(display)
            return
        }
        let out = FileHandleFD(borrowing: fd)
        defer { Syscall.close(fd) }
        try reader.write(e, to: out)
        summary.files += 1
        summary.bytes += e.size
        if e.linkGroup != 0 { linkPaths[e.linkGroup] = path }
        try attributes(e, at: path)
    }

    /// Owner (as root), mode and time, in that order: chown clears set-id bits.
    private func attributes(_ e: TreeEntry, at path: FilePath) throws {
        if root { try Syscall.setOwner(path, user: e.user, group: e.group) }
        try Syscall.chmod(path, root ? e.mode : e.mode & 0o1777)
        try Syscall.setTime(path, seconds: e.modified, nanoseconds: e.modifiedNanoseconds)
    }
}
