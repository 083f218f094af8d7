import Foundation
import System
import VaultCore
import VaultCrypto

/// What `vault backup` was asked to do.
public struct BackupOptions: Sendable {
    /// Absolute paths, each ending in a distinct name.
    public var paths: [[UInt8]]
    public var filter = BackupFilter()
    public var host: String
    public var tags: [String] = []
    public var dryRun = false
    /// A command whose standard output is stored as one more file at the
    /// top of the snapshot (restic's --stdin-from-command).
    public var command: CommandSource?
    public init(paths: [[UInt8]], host: String) { (self.paths, self.host) = (paths, host) }
}

/// `--stdin-from-command CMD --stdin-filename NAME`: CMD runs under
/// /bin/sh; its output becomes the file NAME (one path component).
public struct CommandSource: Sendable {
    public let command: String
    public let name: [UInt8]
    public init(command: String, name: [UInt8]) { (self.command, self.name) = (command, name) }
}

/// What a backup did (`--json`).
public struct BackupSummary: Sendable {
    /// The snapshot's id (hex); nil for a dry run.
    public var snapshot: String?
    public var counts = BackupCounts()
    public var filesRead: UInt64 = 0, bytesRead: UInt64 = 0, filesUnchanged: UInt64 = 0
    /// Bytes read so far of the file being read (not yet in `counts`): a
    /// progress line over one large file moves with it.
    public var readingFile: UInt64 = 0
    public var piecesNew = 0, piecesReused = 0
    public var bytesNew: UInt64 = 0
    /// What the new pieces take in packs (compressed where that paid).
    public var bytesNewCompressed: UInt64 = 0
    /// Sealed bytes written into the inbox (packs and the snapshot).
    public var bytesStored: UInt64 = 0
    public var packs = 0
    /// Relative paths (names joined by '/') read with problems.
    public var unreadable: [String] = [], changedWhileRead: [String] = [], skipped: [String] = []
    public var parentUsed = false
    /// Another user's backup could not check that every pack its snapshot
    /// lists is still in the vault (items/ not searchable: `PackPresence.unknown`).
    public var packsUnconfirmed = false
}

/// One backup (docs/FORMAT.md, "Backups"): walks the paths depth first,
/// each directory in name order; a regular file that the parent's file list
/// shows unchanged keeps its references unread, any other is read and cut
/// into pieces (Chunker) on FileReader's thread, each stored unless known
/// (PackWriter, through PiecePipeline's threads). Each directory becomes a
/// tree piece once its files are read and their pieces stored (the walk
/// collects them at the end of a directory once `resolveEvery` files
/// wait), so memory holds the trees on the way down and those of a few
/// thousand files. The snapshot is dropped
/// last, after every pack it needs has landed, and only then is the file
/// list for the next run put in place.
public final class BackupRun {
    private let vault: Vault
    private let cache: BackupCache?
    private let options: BackupOptions
    private let key: PieceKey
    private let packs: PackWriter
    /// Trees go into packs of their own, as restic's tree packs: what
    /// listing a snapshot reads is then a few packs of trees, not a 1 MiB
    /// chunk of data around every directory's record (a thin vault reads
    /// whole chunks from its remote, and caches those packs' chunks).
    private let treePacks: PackWriter
    /// Lands both writers' packs (PackLander).
    private let lander: PackLander
    private var parent: FileListCursor?
    private var list: FileListWriter?
    private var summary = BackupSummary()
    private var usedPacks = Set<[UInt8]>()
    /// Hard links: (device, inode) of files with several links, to their
    /// group number and references.
    private var links: [[UInt64]: (group: UInt32, pieces: [PieceRef])] = [:]
    /// Where read files' pieces are named, compressed and stored, on other threads.
    private let pipeline: PiecePipeline
    /// Where files are read and cut, on a thread of its own.
    private let reader: FileReader
    /// Files done in walk order whose records wait for their reads and
    /// their pieces' references (the file list is written in walk order).
    private var queued: [QueuedFile] = []
    /// Directories done whose trees wait for those references, children
    /// before parents (the order they ended in).
    private var pendingTrees: [PendingTree] = []
    /// What `entry` just returned waits for (a file's pieces, a
    /// directory's tree): the caller puts it into the entry once known.
    private var lastWaiting: Waiting?
    /// Files queued before `resolveAll` runs of itself: the walk runs that
    /// far ahead of the pipeline, not one directory (a drain per directory
    /// of a few small files kept both sides waiting on each other).
    static let resolveEvery = 4096
    private let progress: ((BackupSummary) -> Void)?
    private let landed: ((String) throws -> Void)?

    /// `landed`: called with each drop-in's blob name once it is whole in
    /// `vault`'s inbox, packs as they fill and the snapshot last (for
    /// `backup --to`, which sends each on and removes it).
    public init(vault: Vault, cache: BackupCache?, options: BackupOptions, landed: ((String) throws -> Void)? = nil,
                progress: ((BackupSummary) -> Void)? = nil) throws {
        (self.vault, self.cache, self.options, self.progress, self.landed) = (vault, cache, options, progress, landed)
        key = try cache?.key ?? PieceKey.random()
        lander = PackLander()
        packs = try PackWriter(vault: vault, cache: cache, dryRun: options.dryRun, landed: landed, lander: lander)
        treePacks = try PackWriter(vault: vault, cache: cache, dryRun: options.dryRun, landed: landed, lander: lander)
        pipeline = try PiecePipeline(key: key, packs: packs, threads: min(4, ProcessInfo.processInfo.activeProcessorCount))
        reader = try FileReader(pipeline: pipeline)
    }

    deinit {
        reader.close()
        pipeline.close()
        // A backup that failed or was stopped still ends its packs' landings
        // (at most `PackLander.depth`), so none is left half written.
        try? lander.wait()
    }

    public func run() throws -> BackupSummary {
        let started = Date()
        let listPath = try cache?.fileListPath(host: options.host, paths: options.paths)
        if let listPath {
            parent = FileListCursor(path: listPath, key: key)
            summary.parentUsed = parent != nil
            if !options.dryRun { list = try FileListWriter(replacing: listPath, key: key) }
        }
        defer { list?.discard() }
        var roots: [TreeEntry] = []
        var waiting: [(Int, Waiting)] = []
        for path in options.paths {
            guard let st = try Syscall.status(of: FilePath(bytes: path)) else {
                throw SystemError(operation: .stat, path: String(decoding: path, as: UTF8.self), errno: .noSuchFile)
            }
            let name = Array(path.split(separator: 0x2f).last ?? [])
            if let entry = try entry(name: name, path: path, relative: name, status: st, device: st.device) {
                if let w = lastWaiting { waiting.append((roots.count, w)) }
                roots.append(entry)
            }
            lastWaiting = nil
        }
        try resolveAll()
        Self.fill(&roots, waiting)
        if let command = options.command { roots.append(try commandEntry(command)) }
        roots.sort { $0.name.lexicographicallyPrecedes($1.name) }
        let root = try storeTree(roots)
        reader.close()
        pipeline.close()
        try packs.land()
        try treePacks.land()
        let ended = Date()
        takeReadFigures()
        summary.piecesNew = packs.piecesNew + treePacks.piecesNew
        summary.bytesNew = packs.bytesNew + treePacks.bytesNew
        summary.bytesNewCompressed = packs.storedNew + treePacks.storedNew
        summary.packs = packs.packsLanded + treePacks.packsLanded
        guard !options.dryRun else { return summary }
        // The command's file is recorded as the path "/NAME", as restic does.
        let paths = options.paths + (options.command.map { [[0x2f] + $0.name] } ?? [])
        let snapshot = Snapshot(packs: usedPacks.sorted { $0.lexicographicallyPrecedes($1) }, key: key, host: options.host,
                                paths: paths, tags: options.tags, start: Self.time(started), end: Self.time(ended),
                                counts: summary.counts, root: root)
        var content = try snapshot.encode()
        defer { SecureZero.zero(&content) }
        let drop = try StreamedDropIn(into: vault, kind: .snapshot, name: BackupItems.snapshotName,
                                      expectedLength: UInt64(content.count))
        try content.withUnsafeBytes { try drop.write($0) }
        try drop.land(modified: Int64(ended.timeIntervalSince1970))
        try landed?(Hex.encode(drop.itemID))
        // Another user's backup holds no lock prune waits for: it checks.
        switch try vault.confirmLanded(snapshot: Hex.encode(drop.itemID), packs: snapshot.packs) {
        case .whole: break
        case .unconfirmed: summary.packsUnconfirmed = true
        case .packsGone(let gone):
            try cache?.forget(packs: gone)
            throw BackupError.packsRemovedMeanwhile(count: gone.count)
        }
        summary.snapshot = Hex.encode(drop.itemID)
        summary.bytesStored = packs.sealedBytes + treePacks.sealedBytes + drop.sealedLength
        try list?.commit()
        list = nil
        return summary
    }

    static func time(_ d: Date) -> (Int64, UInt32) {
        let t = d.timeIntervalSince1970
        let s = t.rounded(.down)
        return (Int64(s), UInt32(min(999_999_999, max(0, (t - s) * 1e9))))
    }

    /// One entry of a directory; nil when it is left out.
    private func entry(name: [UInt8], path: [UInt8], relative: [UInt8], status st: FileStatus, device: UInt64) throws -> TreeEntry? {
        if options.filter.excludes(name: name, path: path) { return nil }
        // A file that is read has its attributes read by FileReader, through its descriptor.
        func base(_ kind: TreeEntry.Kind, size: UInt64, attributes: Bool = true) -> TreeEntry {
            var e = TreeEntry(name: name, kind: kind, mode: st.permissions, user: st.owner, group: st.group,
                              modified: st.modified, modifiedNanoseconds: UInt32(st.modifiedNanoseconds),
                              changed: st.changed, changedNanoseconds: UInt32(st.changedNanoseconds), size: size)
            if attributes { e.attributes = Self.attributes(path) }
            return e
        }
        switch st.kind {
        case .regular:
            if let limit = options.filter.largerThan, st.size > limit { return nil }
            return try file(base(.file, size: st.size, attributes: false), path: path, relative: relative, status: st)
        case .directory:
            if options.filter.oneFileSystem, st.device != device { return nil }
            if options.filter.isCache(directory: path) || options.filter.holdsMarker(directory: path) { return nil }
            var e = base(.directory, size: 0)
            guard let (children, waiting) = try directory(path: path, relative: relative, device: device) else { return nil }
            if waiting.isEmpty {
                e.subtree = try storeTree(children)
            } else {
                let tree = PendingTree(entries: children, waiting: waiting)
                pendingTrees.append(tree)
                lastWaiting = .tree(tree)
            }
            summary.counts.directories += 1
            return e
        case .symlink:
            guard let target = try? Syscall.readLink(FilePath(bytes: path)), !target.isEmpty, target.count <= Int(UInt16.max) else {
                unreadable(relative)
                return nil
            }
            var e = base(.symlink, size: 0)
            e.target = target
            summary.counts.symlinks += 1
            return e
        default:
            summary.skipped.append(display(relative))
            return nil
        }
    }

    /// The extended attributes of `path` (not following a link), in name
    /// order. One that cannot be read (gone meanwhile, or not ours to read)
    /// is left out: the file's content is what a backup must not lose. A
    /// change of one changes the file's ctime, so an unchanged file's
    /// attributes are read again too (one listxattr when it has none).
    static func attributes(_ path: [UInt8]) -> [ExtendedAttribute] {
        let p = FilePath(bytes: path)
        return attributes(names: { try Syscall.extendedAttributeNames(p) }, value: { try Syscall.extendedAttribute(p, $0) })
    }

    /// The same for a file open as `fd` (FileReader: the file it reads).
    static func attributes(fd: Int32) -> [ExtendedAttribute] {
        attributes(names: { try Syscall.extendedAttributeNames(fd: fd) }, value: { try Syscall.extendedAttribute(fd: fd, $0) })
    }

    private static func attributes(names list: () throws -> [[UInt8]], value: ([UInt8]) throws -> [UInt8]?) -> [ExtendedAttribute] {
        // No list (no support, no permission): no attributes, as above.
        guard let names = try? list(), !names.isEmpty else { return [] }
        var out: [ExtendedAttribute] = []
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(ExtendedAttribute.maxCount)
        where !name.isEmpty && name.count <= 255 && out.last?.name != name {
            // Gone or unreadable meanwhile: left out, as above.
            if let value = (try? value(name)) ?? nil { out.append(ExtendedAttribute(name: name, value: value)) }
        }
        return out
    }

    /// A directory's entries in name-byte order, with those still waiting
    /// for their pieces or subtree; nil if it cannot be listed.
    private func directory(path: [UInt8], relative: [UInt8], device: UInt64) throws -> ([TreeEntry], [(Int, Waiting)])? {
        guard let listing = Self.list(path) else {
            unreadable(relative)
            return nil
        }
        var entries: [TreeEntry] = []
        var waiting: [(Int, Waiting)] = []
        for (name, status) in listing {
            let childPath = path + [0x2f] + name
            guard let st = status else {
                unreadable(relative + [0] + name)
                continue
            }
            if let e = try entry(name: name, path: childPath, relative: relative + [0] + name, status: st, device: device) {
                if let w = lastWaiting { waiting.append((entries.count, w)) }
                entries.append(e)
            }
            lastWaiting = nil
        }
        // The older half: read and stored by now, or nearly.
        if queued.count >= Self.resolveEvery { try resolve(first: queued.count / 2) }
        if waiting.allSatisfy(\.1.isKnown) {
            Self.fill(&entries, waiting)
            waiting = []
        }
        return (entries, waiting)
    }

    /// The names in directory `path`, in name-byte order, each with its
    /// status (nil: gone meanwhile, or not ours to look at); nil if it
    /// cannot be listed. All looked at through one open descriptor, before
    /// the walk goes into any of them: a whole path walked again for each
    /// name cost a small-file backup a twentieth of its time (issue 45),
    /// and no descriptor stays open down a deep tree.
    private static func list(_ path: [UInt8]) -> [([UInt8], FileStatus?)]? {
        guard let fd = try? Syscall.open(FilePath(bytes: path), [.directory, .noFollow]) else { return nil }
        defer { Syscall.close(fd) }
        guard let names = try? Syscall.names(in: fd, display: "") else { return nil }
        // A name that cannot be looked at is named unreadable by the walk.
        return names.sorted { $0.lexicographicallyPrecedes($1) }.map { ($0, try? Syscall.status(in: fd, $0, display: "")) }
    }

    /// Waits for the pieces of every queued file and writes their records
    /// to the file list in walk order, then stores the trees that waited
    /// for them, children first.
    private func resolveAll() throws {
        if !queued.isEmpty {
            try reader.finish(tick: report)
            summary.piecesReused += try pipeline.drain(queued.compactMap(\.read?.pieces))
            for q in queued { try record(q) }
            queued = []
        }
        try storeTrees()
    }

    /// The same for the first `count` queued files only, while the reader
    /// and the pipeline go on with the rest: the walk stops to write
    /// records and trees without stopping them (a full drain every 4,096
    /// files left one core idle while the walk wrote, issue 45).
    private func resolve(first count: Int) throws {
        let files = queued.prefix(count)
        let reads = files.compactMap(\.read)
        if let last = reads.last {
            try reader.wait(through: last, tick: report)
            summary.piecesReused += try pipeline.take(reads.map(\.pieces))
        }
        for q in files { try record(q) }
        queued.removeFirst(count)
        try storeTrees()
    }

    /// Takes in what a queued file's read found, and writes its record.
    private func record(_ q: QueuedFile) throws {
        if let read = q.read {
            q.read = nil
            switch read.outcome {
            case .read(let changed, let attributes):
                (q.pieces, q.size, q.changed, q.attributes) = (read.pieces.pieces, read.pieces.size, changed, attributes)
                summary.counts.files += 1
                summary.counts.bytes += q.size
                if changed {
                    summary.counts.changedWhileRead += 1
                    summary.changedWhileRead.append(display(q.relative))
                }
            case .unreadable, .waiting:
                // The reader has read every file it is asked about by now.
                q.unreadable = true
                unreadable(q.relative)
                return
            }
        }
        note(q.pieces)
        let st = q.status
        try list?.append(FileRecord(path: q.relative, device: st.device, inode: st.inode, size: q.size, modified: st.modified,
                                    modifiedNanoseconds: UInt32(st.modifiedNanoseconds), changed: st.changed,
                                    changedNanoseconds: UInt32(st.changedNanoseconds), pieces: q.pieces))
    }

    /// Stores the trees whose entries are all known, children first (they
    /// ended first); the others wait for the next resolve.
    private func storeTrees() throws {
        var waiting: [PendingTree] = []
        for tree in pendingTrees {
            guard tree.waiting.allSatisfy(\.1.isKnown) else {
                waiting.append(tree)
                continue
            }
            Self.fill(&tree.entries, tree.waiting)
            tree.ref = try storeTree(tree.entries)
            // Its parent keeps it until its own tree is made: only the reference.
            (tree.entries, tree.waiting) = ([], [])
        }
        pendingTrees = waiting
    }

    /// Puts what the `waiting` entries waited for into them; a file that
    /// turned out unreadable leaves its directory.
    private static func fill(_ entries: inout [TreeEntry], _ waiting: [(Int, Waiting)]) {
        var gone: [Int] = []
        for (i, w) in waiting {
            switch w {
            case .file(let q):
                if q.unreadable { gone.append(i); continue }
                (entries[i].pieces, entries[i].size, entries[i].attributes) = (q.pieces, q.size, q.attributes)
                if q.changed { entries[i].flags |= TreeEntry.changedWhileRead }
            case .tree(let t): entries[i].subtree = t.ref
            }
        }
        for i in gone.reversed() { entries.remove(at: i) }
    }

    /// A regular file's entry: its pieces are the parent's, if the file
    /// list shows it unchanged and this host still has every piece; else
    /// it is read (FileReader), and its pieces, size and flags wait for
    /// `resolveAll`, which counts it then, or names it unreadable and
    /// takes it out of its directory. Nil if it is known unreadable now.
    private func file(_ entry: TreeEntry, path: [UInt8], relative: [UInt8], status st: FileStatus) throws -> TreeEntry? {
        var e = entry
        let identity = [st.device, st.inode]
        if st.links > 1, let seen = links[identity] {
            (e.linkGroup, e.pieces, e.attributes) = (seen.group, seen.pieces, Self.attributes(path))
            note(e.pieces)
            count(e)
            return e
        }
        let queuedFile = QueuedFile(relative: relative, status: st)
        if let old = parent?.record(for: relative), old.matches(st), let cache, packs.knowsAll(old.pieces, in: cache) {
            (e.pieces, e.attributes) = (old.pieces, Self.attributes(path))
            (queuedFile.pieces, queuedFile.size) = (old.pieces, e.size)
            summary.filesUnchanged += 1
            summary.piecesReused += old.pieces.count
            count(e)
        } else {
            let read = FileReader.Request(path: path, relative: relative, status: st)
            queuedFile.read = read
            try reader.read(read, tick: report)
        }
        queued.append(queuedFile)
        if st.links > 1 {
            // The group's later members take these pieces at once.
            try resolveAll()
            if queuedFile.unreadable { return nil }
            (e.pieces, e.size, e.attributes) = (queuedFile.pieces, queuedFile.size, queuedFile.attributes)
            if queuedFile.changed { e.flags |= TreeEntry.changedWhileRead }
            let group = UInt32(links.count + 1)
            links[identity] = (group, e.pieces)
            e.linkGroup = group
        } else if queuedFile.read != nil {
            lastWaiting = .file(queuedFile)
        }
        report()
        return e
    }

    /// Counts a file whose pieces are known now.
    private func count(_ e: TreeEntry) {
        summary.counts.files += 1
        summary.counts.bytes += e.size
    }

    /// Brings the reader's figures into the summary and shows it.
    private func report() {
        takeReadFigures()
        progress?(summary)
    }

    private func takeReadFigures() {
        summary.filesRead = reader.filesRead.load(ordering: .relaxed)
        summary.bytesRead = reader.bytesRead.load(ordering: .relaxed)
        summary.readingFile = reader.readingFile.load(ordering: .relaxed)
    }

    private func note(_ pieces: [PieceRef]) { for p in pieces { usedPacks.insert(p.pack) } }

    /// The output of a command as a file at the top of the snapshot: read
    /// every time (there is nothing to compare it with), its pieces shared
    /// with what is already stored like any file's. A command that cannot
    /// be read to its end or exits other than 0 ends the backup: a
    /// database dump cut short must not land as if it were whole.
    private func commandEntry(_ source: CommandSource) throws -> TreeEntry {
        let started = Date()
        // The reader is idle (the walk's files are resolved): its `cut` is ours.
        try reader.finish(tick: report)
        let (pid, output) = try Syscall.spawnShell(source.command)
        let pending = PendingPieces()
        let whole: Bool
        do { whole = try reader.cut(output, into: pending) } catch {
            Syscall.close(output)
            _ = try? Syscall.wait(pid) // the backup ends with the error above either way
            throw error
        }
        Syscall.close(output)
        let ended = try Syscall.wait(pid)
        if !whole { unreadable(source.name) }
        guard case .exited(0) = ended, whole else { throw BackupError.commandFailed(ended) }
        summary.piecesReused += try pipeline.drain([pending])
        let pieces = pending.pieces
        let (seconds, nanoseconds) = Self.time(started)
        var e = TreeEntry(name: source.name, kind: .file, mode: 0o600, user: Syscall.userID, group: Syscall.groupID,
                          modified: seconds, modifiedNanoseconds: nanoseconds, changed: seconds, changedNanoseconds: nanoseconds,
                          size: pieces.reduce(0) { $0 + UInt64($1.count) })
        e.pieces = pieces
        note(pieces)
        summary.counts.files += 1
        summary.counts.bytes += e.size
        return e
    }

    /// Encodes a directory's entries and stores the tree as a piece.
    private func storeTree(_ entries: [TreeEntry]) throws -> PieceRef {
        for e in entries { if let s = e.subtree { usedPacks.insert(s.pack) } }
        let bytes = Tree.encode(entries)
        guard bytes.count <= Tree.maxLength else {
            throw BackupError.treeTooLarge(entries: entries.count)
        }
        let (ref, new) = try bytes.withUnsafeBytes { b in try pipeline.withPacks { try treePacks.store(b, id: key.id(of: b)) } }
        if !new { summary.piecesReused += 1 }
        usedPacks.insert(ref.pack)
        return ref
    }

    private func unreadable(_ relative: [UInt8]) {
        summary.counts.unreadable += 1
        summary.unreadable.append(display(relative))
    }

    private func display(_ relative: [UInt8]) -> String {
        String(decoding: relative.map { $0 == 0 ? 0x2f : $0 }, as: UTF8.self)
    }
}

/// What an entry waits for before its directory's tree can be made.
private enum Waiting {
    case file(QueuedFile)
    case tree(PendingTree)

    var isKnown: Bool {
        switch self {
        case .file(let q): q.read == nil
        case .tree(let t): t.ref != nil
        }
    }
}

/// A directory whose tree waits for some of its entries.
private final class PendingTree {
    var entries: [TreeEntry]
    var waiting: [(Int, Waiting)]
    var ref: PieceRef?
    init(entries: [TreeEntry], waiting: [(Int, Waiting)]) { (self.entries, self.waiting) = (entries, waiting) }
}

/// A file of the walk whose record waits to be written: its pieces are
/// known (unchanged), or it waits for its `read` (FileReader) until
/// `resolveAll` sets what that found.
private final class QueuedFile {
    let relative: [UInt8]
    let status: FileStatus
    var size: UInt64 = 0
    var pieces: [PieceRef] = []
    var read: FileReader.Request?
    var changed = false, unreadable = false
    var attributes: [ExtendedAttribute] = []
    init(relative: [UInt8], status: FileStatus) { (self.relative, self.status) = (relative, status) }
}
