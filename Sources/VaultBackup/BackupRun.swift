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
/// into pieces (Chunker), each stored unless known (PackWriter, through
/// PiecePipeline's threads). Each directory becomes a tree piece once its
/// entries' pieces are stored (the walk collects them at the end of a
/// directory once `resolveEvery` files wait), so memory holds the trees on
/// the way down and those of a few thousand files. The snapshot is dropped
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
    private var parent: FileListCursor?
    private var list: FileListWriter?
    private var summary = BackupSummary()
    private var usedPacks = Set<[UInt8]>()
    /// Hard links: (device, inode) of files with several links, to their
    /// group number and references.
    private var links: [[UInt64]: (group: UInt32, pieces: [PieceRef])] = [:]
    private let buffer: PageBuffer
    /// Where read files' pieces are named, compressed and stored, on other threads.
    private let pipeline: PiecePipeline
    /// Files done in walk order whose records wait for their pieces'
    /// references (the file list is written in walk order).
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
        packs = try PackWriter(vault: vault, cache: cache, dryRun: options.dryRun, landed: landed)
        treePacks = try PackWriter(vault: vault, cache: cache, dryRun: options.dryRun, landed: landed)
        buffer = try PageBuffer(count: 2 * Chunker.maxSize)
        pipeline = try PiecePipeline(key: key, packs: packs, threads: min(4, ProcessInfo.processInfo.activeProcessorCount))
    }

    deinit { pipeline.close() }

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
        pipeline.close()
        try packs.land()
        try treePacks.land()
        let ended = Date()
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
        func base(_ kind: TreeEntry.Kind, size: UInt64) -> TreeEntry {
            var e = TreeEntry(name: name, kind: kind, mode: st.permissions, user: st.owner, group: st.group,
                              modified: st.modified, modifiedNanoseconds: UInt32(st.modifiedNanoseconds),
                              changed: st.changed, changedNanoseconds: UInt32(st.changedNanoseconds), size: size)
            e.attributes = Self.attributes(path)
            return e
        }
        switch st.kind {
        case .regular:
            if let limit = options.filter.largerThan, st.size > limit { return nil }
            var e = base(.file, size: st.size)
            guard try file(&e, path: path, relative: relative, status: st) else { return nil }
            summary.counts.files += 1
            summary.counts.bytes += e.size
            return e
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
        // No list (no support, no permission): no attributes, as above.
        guard let names = try? Syscall.extendedAttributeNames(p), !names.isEmpty else { return [] }
        var out: [ExtendedAttribute] = []
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(ExtendedAttribute.maxCount)
        where !name.isEmpty && name.count <= 255 && out.last?.name != name {
            // Gone or unreadable meanwhile: left out, as above.
            if let value = (try? Syscall.extendedAttribute(p, name)) ?? nil { out.append(ExtendedAttribute(name: name, value: value)) }
        }
        return out
    }

    /// A directory's entries in name-byte order, with those still waiting
    /// for their pieces or subtree; nil if it cannot be listed.
    private func directory(path: [UInt8], relative: [UInt8], device: UInt64) throws -> ([TreeEntry], [(Int, Waiting)])? {
        guard let names = try? Syscall.listDirectory(FilePath(bytes: path)) else {
            unreadable(relative)
            return nil
        }
        var entries: [TreeEntry] = []
        var waiting: [(Int, Waiting)] = []
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let childPath = path + [0x2f] + name
            guard let st = try? Syscall.status(of: FilePath(bytes: childPath)) else {
                unreadable(relative + [0] + name)
                continue
            }
            if let e = try entry(name: name, path: childPath, relative: relative + [0] + name, status: st, device: device) {
                if let w = lastWaiting { waiting.append((entries.count, w)) }
                entries.append(e)
            }
            lastWaiting = nil
        }
        if queued.count >= Self.resolveEvery { try resolveAll() }
        if waiting.allSatisfy(\.1.isKnown) {
            Self.fill(&entries, waiting)
            waiting = []
        }
        return (entries, waiting)
    }

    /// Waits for the pieces of every queued file and writes their records
    /// to the file list in walk order, then stores the trees that waited
    /// for them, children first.
    private func resolveAll() throws {
        if !queued.isEmpty {
            summary.piecesReused += try pipeline.drain(queued.compactMap(\.pending))
            for q in queued {
                if let p = q.pending { (q.pieces, q.pending) = (p.pieces, nil) }
                note(q.pieces)
                let st = q.status
                try list?.append(FileRecord(path: q.relative, device: st.device, inode: st.inode, size: q.size, modified: st.modified,
                                            modifiedNanoseconds: UInt32(st.modifiedNanoseconds), changed: st.changed,
                                            changedNanoseconds: UInt32(st.changedNanoseconds), pieces: q.pieces))
            }
            queued = []
        }
        for tree in pendingTrees {
            Self.fill(&tree.entries, tree.waiting)
            tree.ref = try storeTree(tree.entries)
            // Its parent keeps it until its own tree is made: only the reference.
            (tree.entries, tree.waiting) = ([], [])
        }
        pendingTrees = []
    }

    /// Puts what the `waiting` entries waited for into them.
    private static func fill(_ entries: inout [TreeEntry], _ waiting: [(Int, Waiting)]) {
        for (i, w) in waiting {
            switch w {
            case .file(let q): entries[i].pieces = q.pieces
            case .tree(let t): entries[i].subtree = t.ref
            }
        }
    }

    /// A regular file's pieces: the parent's, if the file list shows it
    /// unchanged and this host still has every piece; else read. False if
    /// it cannot be read (named and counted).
    private func file(_ e: inout TreeEntry, path: [UInt8], relative: [UInt8], status st: FileStatus) throws -> Bool {
        let identity = [st.device, st.inode]
        if st.links > 1, let seen = links[identity] {
            (e.linkGroup, e.pieces) = (seen.group, seen.pieces)
            note(e.pieces)
            return true
        }
        let queuedFile = QueuedFile(relative: relative, status: st)
        if let old = parent?.record(for: relative), old.matches(st), let cache, pipeline.withPacks({ old.pieces.allSatisfy(cache.knows) }) {
            e.pieces = old.pieces
            queuedFile.pieces = old.pieces
            summary.filesUnchanged += 1
            summary.piecesReused += old.pieces.count
        } else {
            guard let result = try read(path, relative: relative, status: st) else { return false }
            let (pieces, changed) = result
            e.size = pieces.size
            queuedFile.pending = pieces
            if changed {
                e.flags |= TreeEntry.changedWhileRead
                summary.counts.changedWhileRead += 1
                summary.changedWhileRead.append(display(relative))
            }
        }
        queuedFile.size = e.size
        queued.append(queuedFile)
        if st.links > 1 {
            // The group's later members take these pieces at once.
            try resolveAll()
            e.pieces = queuedFile.pieces
            let group = UInt32(links.count + 1)
            links[identity] = (group, e.pieces)
            e.linkGroup = group
        } else if queuedFile.pending != nil {
            lastWaiting = .file(queuedFile)
        }
        progress?(summary)
        return true
    }

    private func note(_ pieces: [PieceRef]) { for p in pieces { usedPacks.insert(p.pack) } }

    /// The output of a command as a file at the top of the snapshot: read
    /// every time (there is nothing to compare it with), its pieces shared
    /// with what is already stored like any file's. A command that cannot
    /// be read to its end or exits other than 0 ends the backup: a
    /// database dump cut short must not land as if it were whole.
    private func commandEntry(_ source: CommandSource) throws -> TreeEntry {
        let started = Date()
        let (pid, output) = try Syscall.spawnShell(source.command)
        let f = FileHandleFD(borrowing: output)
        let pending: PendingPieces?
        do { pending = try cut(f, relative: source.name) } catch {
            Syscall.close(output)
            _ = try? Syscall.wait(pid) // the backup ends with the error above either way
            throw error
        }
        Syscall.close(output)
        let ended = try Syscall.wait(pid)
        guard case .exited(0) = ended, let pending else { throw BackupError.commandFailed(ended) }
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

    /// Reads and cuts a file; whether it changed while it was read (its
    /// size, mtime or ctime differ after). Nil if it cannot be opened or read.
    private func read(_ path: [UInt8], relative: [UInt8], status st: FileStatus) throws -> (PendingPieces, Bool)? {
        guard let f = try? FileHandleFD(readingFrom: FilePath(bytes: path)) else {
            unreadable(relative)
            return nil
        }
        guard let pieces = try cut(f, relative: relative) else { return nil }
        let after = try? Syscall.status(f.fd)
        let changed = after.map { $0.size != st.size || $0.modified != st.modified || $0.modifiedNanoseconds != st.modifiedNanoseconds
            || $0.changed != st.changed || $0.changedNanoseconds != st.changedNanoseconds } ?? true
        return (pieces, changed)
    }

    /// Reads `f` to its end and hands its pieces to the pipeline; nil if
    /// a read fails (named and counted as unreadable).
    private func cut(_ f: FileHandleFD, relative: [UInt8]) throws -> PendingPieces? {
        summary.filesRead += 1
        defer { summary.readingFile = 0 }
        let raw = buffer.raw
        let pieces = PendingPieces()
        var filled = 0, eof = false
        while true {
            while filled < raw.count && !eof {
                // A read of the source that fails (EIO, a file on a
                // network share gone away) makes it unreadable, skipped and
                // counted; a failure to store what was read is the
                // vault's, and ends the backup.
                let n: Int
                do { n = try f.readSequential(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...])) } catch is SystemError {
                    unreadable(relative)
                    return nil
                }
                if n == 0 { eof = true } else { filled += n; summary.bytesRead += UInt64(n); summary.readingFile += UInt64(n) }
            }
            var start = 0
            while start < filled, eof || filled - start >= Chunker.maxSize {
                let rest = UnsafeRawBufferPointer(rebasing: raw[start..<filled])
                let n = Chunker.cut(rest)
                try pipeline.submit(UnsafeRawBufferPointer(rebasing: rest[..<n]), of: pieces)
                start += n
            }
            if eof { break }
            if start > 0 {
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: filled - start)
                filled -= start
            }
            progress?(summary)
        }
        return pieces
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
        case .file(let q): q.pending == nil
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
/// known (unchanged) or `pending` in the pipeline.
private final class QueuedFile {
    let relative: [UInt8]
    let status: FileStatus
    var size: UInt64 = 0
    var pieces: [PieceRef] = []
    var pending: PendingPieces?
    init(relative: [UInt8], status: FileStatus) { (self.relative, self.status) = (relative, status) }
}
