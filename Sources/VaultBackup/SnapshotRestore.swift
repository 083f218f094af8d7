import System
import VaultCore
import VaultCrypto

/// What `vault snapshots restore` does with a file that is already there
/// (restic's `--overwrite`, docs/FORMAT.md "Restoring a snapshot").
public enum RestoreOverwrite: String, Sendable, CaseIterable {
    /// Compared: the same content is left as it is and counts as restored;
    /// different content is skipped and named.
    case never
    /// Compared: different content is replaced, the same left as it is.
    case ifChanged = "if-changed"
    /// Replaced without being read.
    case always
}

/// What `vault snapshots restore` writes.
public struct RestoreOptions: Sendable {
    /// The directory the snapshot's paths are restored under (it exists).
    public var target: String
    public var includes: [[UInt8]] = []
    public var excludes: [[UInt8]] = []
    public var overwrite = RestoreOverwrite.never
    /// Where the directories this restore makes are recorded until it ends
    /// (RestoreJournal), so that a run after an interruption finishes them.
    public var journalDirectory: String?
    /// Records a temporary name where one is needed (no O_TMPFILE, or a
    /// replaced file), so the next vault command erases it after a kill.
    public var partials: PartialOutputs?
    /// Called with the bytes of files written so far, as they are written
    /// (a progress line; issue 43, item 10).
    public var progress: (@Sendable (UInt64) -> Void)?
    public init(target: String) { self.target = target }
}

public struct RestoreSummary: Sendable {
    /// Files, directories and links this restore wrote (or found already
    /// there and equal: those are counted in `unchanged` too).
    public var files: UInt64 = 0, directories: UInt64 = 0, symlinks: UInt64 = 0, bytes: UInt64 = 0
    /// Files and links that were there already with the snapshot's content (left as they are).
    public var unchanged: UInt64 = 0
    /// Files and links that were there with other content and were replaced (`--overwrite`).
    public var replaced: UInt64 = 0
    /// Paths skipped because something else was there (never overwritten), each with why.
    public var skipped: [(path: String, reason: RestoreSkip)] = []
    /// Hard links whose group's members disagree (the snapshot says they
    /// are one file, but not with one content): each was written as a file
    /// of its own, with its own content.
    public var linksApart: [String] = []
    /// Extended attributes the target would not take, by namespace
    /// ("security", "user", "trusted", "system"): how many entries, and
    /// the first reason. Named once each, never per file; the content
    /// and everything else of those entries is restored.
    public var attributesRefused: [String: (entries: UInt64, reason: Errno)] = [:]
}

/// Writes a snapshot's entries under a directory (docs/FORMAT.md,
/// "Restoring a snapshot"). Never outside it: every name was checked by
/// `Tree.decode` (no '/', not "." or ".."), and everything is made and
/// opened relative to a descriptor of its directory, never through a link
/// (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW). Whole or absent: each file is
/// written with no name (O_TMPFILE), gets its owner (as root), mode and
/// time, is made durable with its group (up to 128 files, one syncfs),
/// and only then is named; so a kill or a power cut leaves no torn file
/// under a real name, and a run again completes what is missing. What is
/// there already is compared, not trusted: the same content counts as
/// restored, other content is skipped by name (or replaced, as
/// `overwrite` says). A directory is made only when something goes into
/// it (or it is restored itself), so a tree that fails to read leaves no
/// empty directory behind; its mode, owner and time are set after its
/// entries, and only if this restore (or an interrupted run of it: the
/// journal) made it: a directory that was there keeps its own.
public final class SnapshotRestore {
    private let reader: SnapshotReader
    private let options: RestoreOptions
    private var summary = RestoreSummary()
    private let root = Syscall.isRoot
    private var journal: RestoreJournal?

    /// The target, then each directory from the root down to the one being walked.
    private var stack: [Frame] = []
    /// Files written, waiting to be named once their group is durable.
    private var group: [PendingName] = []
    /// Directories made whose entries are all in place, deepest first:
    /// their attributes are set once the group before them is named.
    private var finished: [(dir: Directory, entry: TreeEntry)] = []
    /// Hard-link groups: the file written for the group's first member,
    /// while it waits in the group, then its path (so no descriptor is held
    /// for it). Only a file this restore wrote: one that was there is not
    /// its to give another name.
    private var links: [UInt32: (first: LinkSource, entry: TreeEntry)] = [:]
    private enum LinkSource { case pending(PendingFile), named([UInt8]) }
    /// Files named per syncfs, at most. Each waits with its descriptor
    /// open, so fewer where the open-file limit is low. 1024: with 128,
    /// 50,000 small files spent two thirds of their restore in syncfs
    /// (issue 45: 5.3 s, and 3.5 s with 1024 and the writer threads).
    public static let groupSize = 1024
    /// This restore's group size: `groupSize`, or half what the open-file limit leaves.
    private var groupLimit = SnapshotRestore.groupSize
    /// Where new files' content is written (on other threads); each group
    /// waits for its files there before it is made durable and named.
    private var writers: RestoreWriters?

    public init(_ reader: SnapshotReader, options: RestoreOptions) { (self.reader, self.options) = (reader, options) }

    /// An open directory of the target, closed when no frame or pending name needs it.
    final class Directory {
        let fd: Int32
        let display: String
        /// Which directory it is (device and inode), for the journal.
        let status: FileStatus
        init(fd: Int32, display: String) throws {
            (self.fd, self.display) = (fd, display)
            do { status = try Syscall.status(fd, path: display) } catch {
                Syscall.close(fd)
                throw error
            }
        }
        deinit { Syscall.close(fd) }
    }

    private struct Frame {
        let name: [UInt8]
        let display: String
        let entry: TreeEntry?
        /// Restored itself (included), so made even if nothing goes in.
        let wanted: Bool
        var directory: Directory?
        /// Made by this restore (or by an interrupted run of it).
        var made = false
        /// Something other than a directory is in its place: nothing under it is written.
        var blocked = false
    }

    /// A file written with no name (or a temporary one), and its owner.
    final class PendingFile: @unchecked Sendable {
        // @unchecked: a writer thread sets `failure` and `refused` while the
        // restore's thread leaves them alone, until the group's wait.
        let fd: Int32
        /// The temporary name in `directory`, where there is no O_TMPFILE.
        var temporary: [UInt8]?
        let directory: Directory
        var record: PartialOutputs.Record?
        /// Named under at least one of its names.
        var named = false
        /// Why its content could not be written (it is then never named).
        var failure: Error?
        /// The extended attributes the target refused, by namespace.
        var refused: [String: Errno] = [:]
        init(fd: Int32, directory: Directory) { (self.fd, self.directory) = (fd, directory) }
        deinit {
            if let temporary { try? Syscall.unlink(in: directory.fd, temporary, isDirectory: false, display: directory.display) }
            record?.remove()
            Syscall.close(fd)
        }
    }

    private struct PendingName {
        let file: PendingFile
        let directory: Directory
        let name: [UInt8]
        let display: String
        /// Whether it replaces what is at `name` (`--overwrite`).
        let replaces: Bool
        /// The hard-link group it is the first member of (0: none).
        var firstOf: UInt32 = 0
        /// The name whose file was written for it (not a later link to it).
        var wrote = false
    }

    private struct Blocked: Error { let frame: Int, reason: String }

    public func run() throws -> RestoreSummary {
        Syscall.raiseOpenFileLimit()
        let open = Syscall.openFileLimit
        groupLimit = Int(min(UInt64(Self.groupSize), open > 160 ? (open - 128) / 2 : 16))
        let target = try Directory(fd: try Syscall.open(options.target, [.directory]), display: options.target)
        // Best effort: a state directory that cannot be written costs only
        // the modes and times of directories a killed run made.
        if let dir = options.journalDirectory {
            do { journal = try RestoreJournal(directory: dir, snapshot: reader.id, target: target.status) } catch { journal = nil }
        }
        stack = [Frame(name: [], display: "", entry: nil, wanted: false, directory: target)]
        writers = RestoreWriters(reader)
        defer { writers?.close() }
        do {
            try reader.walk(visit: { path, e in try self.visit(path, e) }, leave: { _, e in try self.leave(e) })
        } catch {
            // What is whole is named; the rest of the walk is not done.
            try? flush()
            throw error
        }
        try flush()
        journal?.finish()
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
    /// `stack` always ends with this entry's parent.
    private func visit(_ path: [[UInt8]], _ e: TreeEntry) throws -> Bool {
        if !options.excludes.isEmpty, matches(options.excludes, path) { return false }
        if stack.contains(where: \.blocked) { return false }
        let display = String(decoding: text(path).dropFirst(), as: UTF8.self)
        switch e.kind {
        case .directory:
            stack.append(Frame(name: e.name, display: display, entry: e, wanted: included(path)))
            return true
        case .file, .symlink:
            guard included(path) else { return false }
            guard let dir = try directory(stack.count - 1) else { return false }
            if e.kind == .symlink { try symlink(e, in: dir, display: display) } else { try file(e, in: dir, display: display) }
            if group.count >= groupLimit { try flush() }
            return false
        }
    }

    private func leave(_ e: TreeEntry) throws {
        let i = stack.count - 1
        if stack[i].wanted, !stack.contains(where: \.blocked) { _ = try directory(i) }
        let frame = stack.removeLast()
        if let dir = frame.directory, frame.made, let entry = frame.entry {
            finished.append((dir, entry))
            if finished.count >= groupLimit { try flush() }
        }
    }

    /// Frame `i`'s directory, made (and those above it) if not yet; nil if
    /// something else is in the place of one of them (named, skipped).
    private func directory(_ i: Int) throws -> Directory? {
        if let d = stack[i].directory { return d }
        guard let parent = try directory(i - 1) else { return nil }
        let frame = stack[i]
        var made = false
        if try Syscall.statusIfPresent(in: parent.fd, frame.name, display: frame.display) == nil {
            try journal?.willMake(frame.name, in: parent.status)
            do {
                try Syscall.makeDirectory(in: parent.fd, frame.name, mode: 0o700, display: frame.display)
                made = true
                summary.directories += 1
            } catch let error as SystemError where error.errno == .fileExists {
                try journal?.didNotMake(frame.name, in: parent.status)   // made by someone else meanwhile
            }
        } else {
            // A directory an interrupted run of this restore made is still its to finish.
            made = journal?.made(frame.name, in: parent.status) ?? false
        }
        guard let st = try Syscall.statusIfPresent(in: parent.fd, frame.name, display: frame.display), st.isDirectory else {
            stack[i].blocked = true
            summary.skipped.append((frame.display, .notADirectoryThere))
            return nil
        }
        let fd = try Syscall.open(in: parent.fd, frame.name, [.directory, .noFollow], display: frame.display)
        stack[i].directory = try Directory(fd: fd, display: frame.display)
        stack[i].made = made
        return stack[i].directory
    }

    // MARK: Files

    private func file(_ e: TreeEntry, in dir: Directory, display: String) throws {
        var replaces = false
        if let st = try Syscall.statusIfPresent(in: dir.fd, e.name, display: display) {
            guard try settleExisting(e, st, in: dir, display: display) else { return }
            replaces = true
        }
        if e.linkGroup != 0, let first = links[e.linkGroup] {
            if Self.agree(first.entry, e) {
                switch first.first {
                case .pending(let file):
                    group.append(PendingName(file: file, directory: dir, name: e.name, display: display, replaces: replaces))
                    summary.files += 1
                    return
                case .named(let path):
                    if try linkNamed(path, as: e.name, in: dir, display: display, replaces: replaces) {
                        summary.files += 1
                        return
                    }
                }
            } else {
                summary.linksApart.append(display)
            }
        }
        let pending = try write(e, in: dir, display: display)
        var name = PendingName(file: pending, directory: dir, name: e.name, display: display, replaces: replaces)
        name.wrote = true
        summary.files += 1
        summary.bytes += e.size
        if e.linkGroup != 0, links[e.linkGroup] == nil {
            links[e.linkGroup] = (.pending(pending), e)
            name.firstOf = e.linkGroup
        }
        group.append(name)
    }

    /// Links a hard-link group's member to the first's name (named in an
    /// earlier group); false if that name is no longer there (the member
    /// is then written as a file of its own).
    private func linkNamed(_ path: [UInt8], as name: [UInt8], in dir: Directory, display: String, replaces: Bool) throws -> Bool {
        let target = replaces ? Self.temporaryName(for: name) : name
        do {
            try Syscall.link(FilePath(bytes: path), in: dir.fd, target, display: display)
        } catch let error as SystemError where [.noSuchFile, .nameTooLong, .tooManySymlinks].contains(error.errno) {
            return false
        }
        if replaces {
            try Syscall.rename(in: dir.fd, target, name, display: display)
            summary.replaced += 1
        }
        return true
    }

    /// Something is at the entry's name: false when it stays (the same
    /// content, or skipped), true when it is to be replaced.
    private func settleExisting(_ e: TreeEntry, _ st: FileStatus, in dir: Directory, display: String) throws -> Bool {
        if st.isDirectory {
            summary.skipped.append((display, .directoryThere))
            return false
        }
        if options.overwrite == .always { return true }
        if try sameContent(e, st, in: dir) {
            summary.unchanged += 1
            if e.kind == .file { summary.files += 1 } else { summary.symlinks += 1 }
            return false
        }
        guard options.overwrite == .ifChanged else {
            summary.skipped.append((display, .otherContent))
            return false
        }
        return true
    }

    /// Whether what is there is what the entry holds: a regular file of
    /// its bytes (each piece read and checked as for a restore), or a
    /// symbolic link to its target.
    private func sameContent(_ e: TreeEntry, _ st: FileStatus, in dir: Directory) throws -> Bool {
        switch e.kind {
        case .symlink:
            guard st.kind == .symlink else { return false }
            return try Syscall.readLink(in: dir.fd, FilePath(bytes: e.name)) == e.target
        case .file:
            guard st.isRegular, st.size == e.size else { return false }
            // Non-blocking: should the name have become a FIFO, open must not hang.
            let fd = try Syscall.open(in: dir.fd, e.name, [.noFollow, .nonBlocking], display: dir.display)
            let existing = FileHandleFD(owning: fd, path: dir.display)
            guard try Syscall.status(fd).isRegular else { return false }
            let compare = ComparingSink(existing)
            try reader.write(e, to: compare)
            return compare.equal && compare.offset == e.size
        case .directory:
            return false
        }
    }

    /// Whether two members of one hard-link group are one file, as the
    /// snapshot says: a crafted snapshot could give them different
    /// content, and the second must not silently get the first's.
    static func agree(_ a: TreeEntry, _ b: TreeEntry) -> Bool {
        a.kind == .file && b.kind == .file && a.size == b.size && a.pieces == b.pieces && a.mode == b.mode
            && a.attributes == b.attributes && a.user == b.user && a.group == b.group && a.modified == b.modified && a.modifiedNanoseconds == b.modifiedNanoseconds
    }

    /// The entry's content in a new file with no name yet (or a temporary
    /// one), with its owner (as root), mode and time.
    private func write(_ e: TreeEntry, in dir: Directory, display: String) throws -> PendingFile {
        let pending: PendingFile
        if let fd = try Syscall.openNameless(inDirectory: dir.fd) {
            pending = PendingFile(fd: fd, directory: dir)
        } else {
            let temporary = Self.temporaryName(for: e.name)
            let record = try options.partials?.record(dir.display + "/" + String(decoding: temporary, as: UTF8.self))
            let fd = try Syscall.open(in: dir.fd, temporary, [.writeOnly, .create, .exclusive, .noFollow], display: display)
            pending = PendingFile(fd: fd, directory: dir)
            (pending.temporary, pending.record) = (temporary, record)
        }
        let (root, progress, writers) = (self.root, options.progress, self.writers!)
        writers.submit(bytes: e.size, { reader in
            // Zero blocks become holes: a sparse disk image comes back sparse.
            let out = SparseFileSink(fd: pending.fd, path: display)
            if let progress {
                var reported: UInt64 = 0
                try reader.write(e, to: ProgressSink(out, report: { total in
                    progress(writers.written.add(total - reported, ordering: .relaxed).newValue)
                    reported = total
                }))
            } else {
                try reader.write(e, to: out)
            }
            try out.finish()
            // Its group's syncfs comes when 1024 files are written: start
            // the disk on this one now, so that the writing goes on while
            // the disk works, and the syncfs has little left to wait for.
            if e.size >= Syscall.writebackFrom { Syscall.startWriteback(pending.fd, from: 0, count: 0) }
            try Self.attributes(e, fd: pending.fd, root: root, refused: &pending.refused)
        }, failed: { pending.failure = $0 })
        return pending
    }

    /// Owner (as root), extended attributes, mode and time, in that order:
    /// chown clears set-id bits and file capabilities, and the mode set
    /// after an ACL agrees with its mask. On a writer thread: what the
    /// target refused goes to `refused`, not to the summary.
    private static func attributes(_ e: TreeEntry, fd: Int32, root: Bool, refused: inout [String: Errno]) throws {
        if root { try Syscall.setOwner(fd, user: e.user, group: e.group) }
        extendedAttributes(e, refused: &refused) { name, value in try Syscall.setExtendedAttribute(fd, name, value, display: "") }
        try Syscall.chmod(fd, root ? e.mode : e.mode & 0o1777)
        try Syscall.setTime(fd, seconds: e.modified, nanoseconds: e.modifiedNanoseconds)
    }

    // MARK: Symbolic links

    /// A new link is made under its own name (its target is all of it, so
    /// it is whole from the start; a kill before its time is set leaves
    /// the time of the restore). One that replaces another is made whole
    /// under a temporary name (recorded, so a kill leaves nothing), then
    /// renamed over it: one step.
    private func symlink(_ e: TreeEntry, in dir: Directory, display: String) throws {
        var replaces = false
        if let st = try Syscall.statusIfPresent(in: dir.fd, e.name, display: display) {
            guard try settleExisting(e, st, in: dir, display: display) else { return }
            replaces = true
        }
        let name = replaces ? Self.temporaryName(for: e.name) : e.name
        let record = replaces ? try options.partials?.record(dir.display + "/" + String(decoding: name, as: UTF8.self)) : nil
        defer { record?.remove() }
        do {
            try Syscall.symlink(target: e.target, in: dir.fd, name, display: display)
        } catch let error as SystemError where error.errno == .fileExists {
            summary.skipped.append((display, .exists))   // made by someone else since it was looked at
            return
        }
        do {
            if root { try Syscall.setOwner(in: dir.fd, name, user: e.user, group: e.group, display: display) }
            // The link itself, by its directory's descriptor (lsetxattr does not follow it).
            let link = FilePath(bytes: Array("/proc/self/fd/\(dir.fd)/".utf8) + name)
            extendedAttributes(e) { attribute, value in try Syscall.setExtendedAttribute(link, attribute, value) }
            try Syscall.setTime(in: dir.fd, name, seconds: e.modified, nanoseconds: e.modifiedNanoseconds, display: display)
            if replaces {
                try Syscall.rename(in: dir.fd, name, e.name, display: display)
                summary.replaced += 1
            }
        } catch {
            if replaces { try? Syscall.unlink(in: dir.fd, name, isDirectory: false, display: display) }
            throw error
        }
        summary.symlinks += 1
    }

    /// Sets each extended attribute of `e` with `set`; one the target
    /// refuses (not root for security.*/trusted.*, a file system without
    /// them, user.* on a link) is named in `refused` by its namespace, with
    /// the first reason: not fatal.
    private static func extendedAttributes(_ e: TreeEntry, refused: inout [String: Errno], _ set: ([UInt8], [UInt8]) throws -> Void) {
        for a in e.attributes {
            do { try set(a.name, a.value) } catch {
                let namespace = String(decoding: a.name.prefix { $0 != 0x2e }, as: UTF8.self)
                if refused[namespace] == nil { refused[namespace] = (error as? SystemError)?.errno ?? .ioError }
            }
        }
    }

    /// The same for an entry set on this thread: counted in the summary at once.
    private func extendedAttributes(_ e: TreeEntry, _ set: ([UInt8], [UInt8]) throws -> Void) {
        var refused: [String: Errno] = [:]
        Self.extendedAttributes(e, refused: &refused, set)
        count(refused)
    }

    /// One entry's refused attributes, in the summary: an entry more for each namespace.
    private func count(_ refused: [String: Errno]) {
        for (namespace, reason) in refused {
            let before = summary.attributesRefused[namespace]
            summary.attributesRefused[namespace] = ((before?.entries ?? 0) + 1, before?.reason ?? reason)
        }
    }

    /// ".NAME.partial-<random>" beside NAME: a name the user's files do not
    /// have, which the next vault command erases if it was recorded
    /// (PartialOutputs) and this process died.
    static func temporaryName(for name: [UInt8]) -> [UInt8] {
        Array(".".utf8) + name.prefix(64) + Array((PartialOutputs.marker + Hex.encode(SecureRandom.bytes(8))).utf8)
    }

    // MARK: Groups

    /// Waits for the group's files to be written, makes them durable (one
    /// syncfs, or an fsync each for a few: Syscall.makeDurable), names them, then sets the attributes of the directories
    /// finished before them, deepest first. A file whose writing failed is
    /// never named; the others are, and then its error is thrown.
    private func flush() throws {
        writers?.wait()
        try Syscall.makeDurable(group.map(\.file.fd))
        let names = group
        group = []
        var failure: Error?
        for n in names {
            if let error = n.file.failure {
                failure = failure ?? error
                if n.firstOf != 0 { links[n.firstOf] = nil }
                continue
            }
            if n.wrote { count(n.file.refused) }
            let named = try name(n)
            // The group's first name: later members link to it by path.
            if n.firstOf != 0 {
                if named { links[n.firstOf]?.first = .named(Array(options.target.utf8) + [0x2f] + Array(n.display.utf8)) } else { links[n.firstOf] = nil }
            }
        }
        let dirs = finished
        finished = []
        for (dir, e) in dirs {
            if root { try Syscall.setOwner(dir.fd, user: e.user, group: e.group) }
            extendedAttributes(e) { name, value in try Syscall.setExtendedAttribute(dir.fd, name, value, display: "") }
            try Syscall.chmod(dir.fd, root ? e.mode : e.mode & 0o1777)
            try Syscall.setTime(dir.fd, seconds: e.modified, nanoseconds: e.modifiedNanoseconds)
        }
        if let failure { throw failure }
    }

    /// Names one file; false if its name was taken meanwhile (then skipped).
    private func name(_ n: PendingName) throws -> Bool {
        let f = n.file
        do {
            if n.replaces {
                // Replacing: a name of its own first, then one rename over the old file.
                let temporary = Self.temporaryName(for: n.name)
                let record = try options.partials?.record(n.directory.display + "/" + String(decoding: temporary, as: UTF8.self))
                defer { record?.remove() }
                try link(f, as: temporary, in: n.directory, display: n.display)
                try Syscall.rename(in: n.directory.fd, temporary, n.name, display: n.display)
                summary.replaced += 1
            } else {
                try link(f, as: n.name, in: n.directory, display: n.display)
            }
            f.named = true
            return true
        } catch let error as SystemError where error.errno == .fileExists {
            // Made by someone else since it was looked at: not ours to replace.
            summary.skipped.append((n.display, .exists))
            summary.files -= 1
            return false
        }
    }

    /// A name for `f` in `dir`: a link of the nameless file, or of its
    /// temporary name (renamed there if it is the first).
    private func link(_ f: PendingFile, as name: [UInt8], in dir: Directory, display: String) throws {
        if let temporary = f.temporary, !f.named, dir === f.directory {
            try Syscall.renameNoReplace(in: dir.fd, temporary, name, display: display)
            f.temporary = nil
            f.record?.remove()
            f.record = nil
        } else {
            try Syscall.link(f.fd, in: dir.fd, name, display: display)
        }
    }
}

/// Compares what is written to it with a file, from its start.
private final class ComparingSink: ByteSink {
    private let file: FileHandleFD
    private(set) var offset: UInt64 = 0
    private(set) var equal = true
    private var buffer: [UInt8] = []

    init(_ file: FileHandleFD) { self.file = file }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard equal, !bytes.isEmpty else { return }
        if buffer.count < bytes.count { buffer = [UInt8](repeating: 0, count: bytes.count) }
        let n = try buffer.withUnsafeMutableBytes { try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<bytes.count])) }
        equal = n == bytes.count && buffer.withUnsafeBytes { $0[..<n].elementsEqual(bytes) }
        offset += UInt64(n)
    }
}

/// Why restore skipped a path (`RestoreSummary.skipped`); the CLI words it.
public enum RestoreSkip: Equatable, Sendable {
    /// A directory of the snapshot's, where something else is.
    case notADirectoryThere
    /// A file or link of the snapshot's, where a directory is.
    case directoryThere
    /// A file or link that is there with other content (no `--overwrite`).
    case otherContent
    /// Made by someone else since restore looked (its name was taken meanwhile).
    case exists
}
