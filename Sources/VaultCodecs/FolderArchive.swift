// Folders as pax streams: `write` walks a directory into a pax (restricted)
// archive pushed to a ByteSink, `extract` pulls one from a ByteStream into a
// new directory, refusing anything that would land outside it. Streaming
// both ways: file data passes through one 64 KiB buffer and no temporary
// file is made (extraction keeps only the list of paths it created, to
// refuse duplicates). libarchive is behind LibArchive.swift; the file-system
// calls go through the System layer, by bytes (names need not be UTF-8).
//
// Archive layout (pax restricted, 10240-byte records, see docs/FORMAT.md):
//   entry* || two zero blocks || zero padding to the record
//   entry = [pax header, only when ustar cannot hold a field] || ustar header || data padded to 512
// Entries are relative to the folder itself ("a.txt", "sub/b.txt"), in
// depth-first order with each directory before its contents and names in
// byte order, so the same tree always gives the same bytes. Extended
// attributes (ACLs included, as their system.posix_acl_* values) go in pax
// xattr records and are set after extraction. Each carries its
// type, permission bits and mtime in whole seconds (the ustar field: with
// nanoseconds, restricted pax would add a 1 KiB pax header to every entry);
// owners are stored as uid/gid 0 without names, which would only leak who
// made the archive.
import System

/// What `write` stored or `extract` restored.
public struct ArchiveSummary: Equatable, Sendable {
    /// Regular files (hard links included on extraction).
    public var files: UInt64 = 0
    /// Their total size in bytes.
    public var bytes: UInt64 = 0
    /// Relative paths of devices, FIFOs and sockets left out by `write`.
    public var skipped: [String] = []
    /// `write(indexing: true)`: every entry as `FolderIndex.build` would
    /// find it in the archive written (where each file's data starts, from
    /// the writer's own count), so no pass over the archive is needed. Nil
    /// past `FolderArchive.maxIndexedEntries`.
    public var index: [FolderIndex.Entry]? = nil
    /// Extended attributes `extract` could not set, by namespace ("user",
    /// "security", ...): how many entries, and the first reason (strerror).
    public var attributesRefused: [String: Refusal] = [:]
    public struct Refusal: Equatable, Sendable {
        public var entries: UInt64, reason: String
    }

    public init(files: UInt64 = 0, bytes: UInt64 = 0, skipped: [String] = []) {
        (self.files, self.bytes, self.skipped) = (files, bytes, skipped)
    }

    /// Adds an extracted entry: regular files and hard links are files.
    /// Sizes come from archive headers, so the sum is checked, not trusted.
    mutating func count(_ entry: PaxEntry) throws {
        guard entry.kind == .regular || entry.kind == .hardlink else { return }
        let (sum, overflow) = bytes.addingReportingOverflow(entry.size)
        guard !overflow else { throw ArchiveError.library(function: "archive_entry_size", code: 0, errno: 0, message: "sizes overflow") }
        files += 1
        bytes = sum
    }
}

/// Errors of the folder archive layer, each naming the path it concerns.
public enum ArchiveError: Error, Equatable, Sendable {
    /// Extraction refused `entry` (its path in the archive); nothing was left behind.
    case refused(entry: String, reason: Refusal)
    /// The extraction destination exists already; nothing is overwritten.
    case destinationExists(path: String)
    /// A file shrank while it was being archived, so its stored copy would be wrong.
    case changedWhileReading(path: String)
    /// Something other than a record's zero padding follows the archive's end.
    case trailingData
    /// libarchive failed: a damaged or non-tar stream, or an I/O error.
    /// `code` is its ARCHIVE_* return, `errno` archive_errno, `message` archive_error_string.
    case library(function: String, code: Int, errno: Int32, message: String)

    /// Why an entry was refused on extraction (worded by the CLI).
    public enum Refusal: Equatable, Sendable {
        /// The entry has no name (or only "." for something other than a directory).
        case emptyPath
        /// The path starts with "/".
        case absolutePath
        /// The path has a ".." component.
        case parentDirectory
        /// The path would exceed PATH_MAX once placed under the destination.
        case pathTooLong
        /// A device, FIFO or socket, which a folder item never holds.
        case specialFile(SpecialType)
        /// The path was already created by an earlier entry.
        case alreadyExists
        /// A parent of the path is a symlink made by an earlier entry.
        case throughSymlink
        /// A parent of the path is a regular file made by an earlier entry.
        case parentNotDirectory
        /// A hard link whose target is not a regular file extracted before it.
        case hardLinkOutside
        /// libarchive's secure extraction refused it or could not create it; its message.
        case library(String)
    }

    /// The file type of an entry that is none of file, directory, symlink
    /// or hard link.
    public enum SpecialType: Equatable, Sendable {
        case characterDevice, blockDevice, fifo, socket
        /// A type no POSIX file has: its mode's type bits.
        case unknown(mode: UInt32)
    }
}

public enum FolderArchive {
    /// Bytes read from a file per write into the archive.
    static let blockSize = 64 << 10
    /// `write(indexing:)` gives up its index past this many entries (about
    /// 12 MiB of them): writing an archive otherwise keeps nothing of the
    /// entries it wrote, and memory stays flat for a folder of millions.
    public static let maxIndexedEntries = 100_000

    /// Writes a pax archive of `directory`'s contents to `sink` (layout
    /// above). Symlinks are stored as links and never followed; devices,
    /// FIFOs and sockets are skipped and listed in the summary. A file that
    /// cannot be read fails the whole archive.
    /// With `indexing`, the summary's `index` lists the entries written.
    public static func write(directory: String, to sink: ByteSink, indexing: Bool = false) throws -> ArchiveSummary {
        let root = OpenFile(try Syscall.open(directory, .directory))
        let writer = try PaxWriter(sink: sink)
        let buffer = Buffer(count: blockSize)
        var summary = ArchiveSummary()
        if indexing { summary.index = [] }
        try writeContents(of: root, prefix: [], writer: writer, buffer: buffer, summary: &summary)
        try writer.close()
        return summary
    }

    /// Extracts a tar/pax stream into `destination`, which must not exist:
    /// everything goes into a 0700 sibling `destination.partial-<random>`,
    /// renamed into place only once complete. Any refused entry (see
    /// `ArchiveError.Refusal`) or failure removes that sibling, so neither
    /// name is left behind. Permissions (without setuid/setgid) and mtimes
    /// are restored, owners are not. The stream is read to its end.
    /// `announce` learns the sibling's path before it exists, so an interrupt
    /// handler can remove it whenever the interrupt comes; with `stop`, such
    /// a handler first stops the extraction (checked before each entry and
    /// data block) and waits until this has erased what it wrote. `verify`
    /// sees the summary before the rename; if it throws, nothing is left behind.
    ///
    /// With `subtree` (a directory's path components in the archive), only
    /// what lies under that directory is extracted, as if it were the
    /// archive's root; everything else is read past (a hard link from
    /// inside to outside it is refused as one outside the archive).
    public static func extract(from stream: ByteStream, into destination: some FilePathRepresentable,
                               subtree: [[UInt8]] = [],
                               announce: ((FilePath) -> Void)? = nil, stop: StopRequest? = nil,
                               verify: ((ArchiveSummary) throws -> Void)? = nil) throws -> ArchiveSummary {
        defer { stop?.finished() }
        let destination = destination.filePath
        var dest = destination.bytes
        while dest.count > 1, dest.last == slash { dest.removeLast() }
        guard !dest.isEmpty, dest != [slash] else {
            throw SystemError(operation: .mkdir, path: destination.description, errno: .invalidArgument)
        }
        if Syscall.exists(FilePath(bytes: dest)) { throw ArchiveError.destinationExists(path: destination.description) }
        let partial = FilePath(bytes: dest + Array(".partial-\(String(UInt64.random(in: .min ... .max), radix: 16))".utf8))
        announce?(partial)
        try Syscall.mkdir(partial, mode: 0o700)
        do {
            let summary = try extractEntries(from: stream, under: try Syscall.realPath(partial).bytes, subtree: subtree, stop: stop)
            try verify?(summary)
            do { try Syscall.renameNoReplace(partial, FilePath(bytes: dest)) } catch let error as SystemError where error.errno == .fileExists {
                throw ArchiveError.destinationExists(path: destination.description)
            }
            return summary
        } catch {
            // Plaintext of the folder so far: erased, not just unlinked.
            Eraser.erase(partial)
            throw error
        }
    }

    /// What `extract` would restore from `stream`, writing nothing: every
    /// entry passes the same checks (a refusal is thrown as extraction would
    /// throw it), and the stream is read to its end.
    public static func summarize(from stream: ByteStream) throws -> ArchiveSummary {
        let reader = try TarReader(stream: stream)
        var plan = ExtractionPlan(root: [])
        var summary = ArchiveSummary()
        while let entry = try reader.next() {
            guard let target = try plan.admit(entry) else { continue }
            try summary.count(target)
        }
        try reader.drainInput()
        return summary
    }

    /// The (path, size) of each entry of a tar/pax stream, without extracting.
    public static func list(from stream: ByteStream) throws -> [(path: String, size: UInt64)] {
        let reader = try TarReader(stream: stream)
        var out: [(path: String, size: UInt64)] = []
        while let entry = try reader.next() { out.append((entry.displayPath, entry.size)) }
        try reader.drainInput()
        return out
    }
}

// MARK: - Walking a folder

private let slash = UInt8(ascii: "/")

extension FolderArchive {
    /// Stores the entries of the open directory `dir`, sorted by name, each
    /// directory followed by its own contents. Every child is opened relative
    /// to `dir` with O_NOFOLLOW and checked with fstat on the open descriptor,
    /// so a name swapped for a symlink mid-walk is refused, not followed.
    private static func writeContents(of dir: OpenFile, prefix: [UInt8], writer: PaxWriter,
                                      buffer: Buffer, summary: inout ArchiveSummary) throws {
        let names = try Syscall.names(in: dir.fd, display: FilePath(bytes: prefix).description)
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let path = prefix.isEmpty ? name : prefix + [slash] + name
            let display = FilePath(bytes: path).description
            var st = try Syscall.status(in: dir.fd, name, display: display)
            switch st.kind {
            case .directory:
                let child = OpenFile(try Syscall.open(in: dir.fd, name, [.directory, .noFollow], display: display))
                st = try Syscall.status(child.fd, path: display)
                var entry = header(path, .directory, st)
                entry.attributes = Syscall.extendedAttributes(fd: child.fd)
                try writer.writeHeader(entry)
                summary.indexed(entry, dataOffset: 0)
                try writer.finishEntry()
                try writeContents(of: child, prefix: path, writer: writer, buffer: buffer, summary: &summary)
            case .regular:
                // nonBlocking: should the name have become a FIFO, open must not hang.
                let file = OpenFile(try Syscall.open(in: dir.fd, name, [.noFollow, .nonBlocking], display: display))
                st = try Syscall.status(file.fd, path: display)
                guard st.kind == .regular else { summary.skipped.append(display); continue }
                var entry = header(path, .regular, st)
                entry.size = st.size
                entry.attributes = Syscall.extendedAttributes(fd: file.fd)
                try writer.writeHeader(entry)
                summary.indexed(entry, dataOffset: writer.position)
                var left = entry.size
                while left > 0 {
                    let want = Int(min(left, UInt64(buffer.bytes.count)))
                    let n = try Syscall.readSome(file.fd, UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<want]))
                    guard n > 0 else { throw ArchiveError.changedWhileReading(path: display) }
                    try writer.writeData(UnsafeRawBufferPointer(rebasing: buffer.bytes[..<n]))
                    left -= UInt64(n)
                }
                try writer.finishEntry()
                summary.files += 1
                summary.bytes += entry.size
            case .symlink:
                var entry = header(path, .symlink, st)
                entry.linkTarget = try Syscall.readLink(in: dir.fd, FilePath(bytes: name), display: display)
                entry.attributes = Syscall.extendedAttributes(fd: dir.fd, name: name)
                try writer.writeHeader(entry)
                summary.indexed(entry, dataOffset: 0)
                try writer.finishEntry()
            default:
                summary.skipped.append(display)
            }
        }
    }

    private static func header(_ path: [UInt8], _ kind: PaxEntry.Kind, _ st: FileStatus) -> PaxEntry {
        PaxEntry(path: path, kind: kind, permissions: UInt32(st.permissions), mtime: (st.modified, 0))
    }
}

extension ArchiveSummary {
    /// Adds `entry`, just written, to the index being made (if one is):
    /// as `FolderIndex.build` reads it back, a path under "/", permission
    /// bits without set-id or sticky, whole seconds.
    fileprivate mutating func indexed(_ entry: PaxEntry, dataOffset: UInt64) {
        guard let count = index?.count else { return }
        guard count < FolderArchive.maxIndexedEntries else { index = nil; return }
        let kind: FolderIndex.Entry.Kind = entry.kind == .directory ? .directory : entry.kind == .symlink ? .symlink : .file
        index?.append(FolderIndex.Entry(path: [slash] + entry.path, kind: kind, size: kind == .file ? entry.size : 0,
                                        permissions: entry.permissions & 0o777, mtime: entry.mtime?.seconds ?? 0,
                                        dataOffset: dataOffset, linkTarget: kind == .symlink ? entry.linkTarget : []))
    }
}

// MARK: - Extracting

extension FolderArchive {
    /// Extracts every entry under `root` (absolute, symlink-free, new and
    /// private), after `ExtractionPlan.admit` has checked it. Both libarchive
    /// handles are freed when this returns, before any cleanup.
    private static func extractEntries(from stream: ByteStream, under root: [UInt8], subtree: [[UInt8]],
                                       stop: StopRequest?) throws -> ArchiveSummary {
        let reader = try TarReader(stream: stream)
        let disk = try DiskWriter(root: String(decoding: root, as: UTF8.self))
        var plan = ExtractionPlan(root: root)
        var summary = ArchiveSummary()
        while var entry = try reader.next() {
            try stop?.checkpoint()
            if !subtree.isEmpty {
                guard let inside = within(subtree, entry.path) else { continue }
                entry.path = inside
                if entry.kind == .hardlink {
                    guard let target = within(subtree, entry.linkTarget) else {
                        throw ArchiveError.refused(entry: entry.displayPath, reason: .hardLinkOutside)
                    }
                    entry.linkTarget = target
                }
            }
            guard let target = try plan.admit(entry) else { continue }
            if plan.lastImplied > 0 { try makeImplied(plan.lastImplied, of: target.path, under: root) }
            try disk.writeHeader(target, name: entry.displayPath)
            if target.kind == .regular, target.size > 0 { try reader.copyData(to: disk, stop: stop) }
            try disk.finishEntry()
            if target.kind != .hardlink { setAttributes(target, &summary) }
            try summary.count(target)
        }
        try disk.close()
        try reader.drainInput()
        return summary
    }
}

/// The entry's extended attributes, set on what libarchive just made (by
/// its absolute path under the private, link-free root; the entry itself
/// is not followed). After libarchive set the mode, so an ACL's mask wins
/// as it did on the original. A refusal (not root for `security.*`, a
/// link's `user.*`, a file system without them) is counted by namespace.
private func setAttributes(_ entry: PaxEntry, _ summary: inout ArchiveSummary) {
    var refused = Set<String>()
    for a in entry.attributes {
        do { try Syscall.setExtendedAttribute(FilePath(bytes: entry.path), a.name, a.value) } catch {
            let namespace = String(decoding: a.name.prefix { $0 != UInt8(ascii: ".") }, as: UTF8.self)
            guard refused.insert(namespace).inserted else { continue }
            let before = summary.attributesRefused[namespace]
            summary.attributesRefused[namespace] = .init(entries: (before?.entries ?? 0) + 1,
                                                         reason: before?.reason ?? ((error as? SystemError)?.reason ?? "\(error)"))
        }
    }
}

/// Makes the `count` deepest parent directories of `path` (absolute, under
/// `root`, checked by ExtractionPlan), each relative to its parent's open
/// descriptor. libarchive would make them itself, each by its whole path,
/// so ~2,000 implied directories cost it ~2,000² steps of path lookup in
/// the kernel (issue 38); made here, each costs one, and libarchive finds
/// the parent there. Mode 0777 less the umask, as libarchive makes implied
/// directories; never through a link (O_NOFOLLOW on every step).
private func makeImplied(_ count: Int, of path: [UInt8], under root: [UInt8]) throws {
    let parts = path.dropFirst(root.count).split(separator: slash).dropLast().map(Array.init)
    let display = String(decoding: path, as: UTF8.self)
    var dir = OpenFile(try Syscall.open(FilePath(bytes: root), [.directory, .noFollow]))
    for (i, part) in parts.enumerated() {
        if i >= parts.count - count {
            do { try Syscall.makeDirectory(in: dir.fd, part, mode: 0o777, display: display) } catch let error as SystemError
                where error.errno == .fileExists {}
        }
        dir = OpenFile(try Syscall.open(in: dir.fd, part, [.directory, .noFollow], display: display))
    }
}

/// `path` relative to the directory `subtree` when it lies strictly inside
/// it ("a/b/c" in ["a"] is "b/c"); nil otherwise. Empty and "." components
/// are ignored here; `..` never matches a directory name, and stays for
/// `ExtractionPlan.admit` to refuse.
private func within(_ subtree: [[UInt8]], _ path: [UInt8]) -> [UInt8]? {
    let parts = path.split(separator: slash).map(Array.init).filter { $0 != [UInt8(ascii: ".")] }
    guard parts.count > subtree.count, parts.starts(with: subtree) else { return nil }
    return Array(parts.dropFirst(subtree.count).joined(separator: [slash]))
}

/// What extraction has created so far, and the rules each new entry must
/// pass before libarchive (whose own secure checks stay on) sees it.
/// libarchive's NO_OVERWRITE silently skips an existing path, so refusing
/// duplicates has to happen here. Paths are kept as a PathTree (one node
/// per component), so an entry costs work and memory in proportion to its
/// path's bytes, however many implied directories it names.
struct ExtractionPlan {
    let root: [UInt8]
    /// Each node's tag: what an entry created there (`Self.tag`), or 0 for
    /// a directory libarchive made on the way to an entry (implied).
    private(set) var tree = PathTree()
    /// The node of the entry `admit` last let through.
    private(set) var lastAdmitted = PathTree.root
    /// How many of that entry's deepest ancestors it implied (directories
    /// no entry had named or implied before: they must be made now).
    private(set) var lastImplied = 0

    init(root: [UInt8]) { self.root = root }

    private static let implied: UInt32 = 0
    private static func tag(_ kind: PaxEntry.Kind) -> UInt32 {
        switch kind {
        case .directory: 1
        case .regular: 2
        case .symlink: 3
        case .hardlink: 4
        case .special: 5
        }
    }

    /// The node at `parts`, if every component has one.
    private func node(_ parts: [ArraySlice<UInt8>]) -> PathTree.Node? {
        var n = PathTree.root
        for part in parts {
            guard let c = tree.child(n, part) else { return nil }
            n = c
        }
        return n
    }

    /// The entry to hand to libarchive (paths under `root`, setuid and
    /// setgid cleared, hard links without data), nil to skip it (the
    /// archive's own "." directory), or a refusal naming it.
    mutating func admit(_ entry: PaxEntry) throws -> PaxEntry? {
        func refuse(_ r: ArchiveError.Refusal) -> ArchiveError { .refused(entry: entry.displayPath, reason: r) }

        if case .special(let kind) = entry.kind { throw refuse(.specialFile(kind)) }
        guard let parts = try components(entry.path, refuse) else {
            if entry.kind == .directory { return nil }
            throw refuse(.emptyPath)
        }
        let path = parts.joined(separator: [slash]).map { $0 }
        // The ancestors that exist, each a directory (made or implied).
        var n = PathTree.root
        var existing = true
        for part in parts.dropLast() {
            guard let c = tree.child(n, part) else { existing = false; break }
            switch tree.tags[Int(c)] {
            case Self.implied, Self.tag(.directory): n = c
            case Self.tag(.symlink): throw refuse(.throughSymlink)
            default: throw refuse(.parentNotDirectory)
            }
        }
        if existing, let here = tree.child(n, parts[parts.count - 1]) {
            // Made before, or implied by an earlier entry: only a directory
            // entry may name a directory libarchive made on the way.
            if tree.tags[Int(here)] != Self.implied || entry.kind != .directory { throw refuse(.alreadyExists) }
        }

        var target = entry
        target.path = try placed(path, refuse)
        target.permissions &= 0o1777
        if entry.kind == .hardlink {
            guard let linkParts = try? components(entry.linkTarget, refuse), let link = node(linkParts) else {
                throw refuse(.hardLinkOutside)
            }
            switch tree.tags[Int(link)] {
            case Self.tag(.regular), Self.tag(.hardlink):
                target.linkTarget = try placed(linkParts.joined(separator: [slash]).map { $0 }, refuse)
            default: throw refuse(.hardLinkOutside)
            }
            target.size = 0
        }

        var made = PathTree.root
        lastImplied = 0
        for (i, part) in parts.enumerated() {
            let before = tree.count
            made = tree.addChild(made, part)
            if i < parts.count - 1, tree.count > before { lastImplied += 1 }
        }
        tree.setTag(made, Self.tag(entry.kind))
        lastAdmitted = made
        return target
    }

    /// The path's components without "." and empty ones; nil if none are left.
    func components(_ path: [UInt8], _ refuse: (ArchiveError.Refusal) -> ArchiveError) throws -> [ArraySlice<UInt8>]? {
        if path.isEmpty { throw refuse(.emptyPath) }
        if path.first == slash { throw refuse(.absolutePath) }
        let parts = path.split(separator: slash, omittingEmptySubsequences: true)
        if parts.contains(where: { $0.elementsEqual("..".utf8) }) { throw refuse(.parentDirectory) }
        let kept = parts.filter { !$0.elementsEqual(".".utf8) }
        return kept.isEmpty ? nil : kept
    }

    /// `root/path`, refused if it would not fit in PATH_MAX (beyond which
    /// libarchive would chdir, which changes the whole process's directory).
    private func placed(_ path: [UInt8], _ refuse: (ArchiveError.Refusal) -> ArchiveError) throws -> [UInt8] {
        let full = root + [slash] + path
        if full.count >= pathMax { throw refuse(.pathTooLong) }
        return full
    }
}

// MARK: - Resources

/// PATH_MAX on Linux.
private let pathMax = 4096

/// A buffer owned for one walk.
private final class Buffer {
    let bytes: UnsafeMutableRawBufferPointer
    init(count: Int) { bytes = .allocate(byteCount: count, alignment: 16) }
    deinit { bytes.deallocate() }
}

/// An open file descriptor, closed in deinit.
private final class OpenFile {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    deinit { Syscall.close(fd) }
}
