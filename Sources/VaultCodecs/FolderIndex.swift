/// Where each file of a folder item's tar/pax archive lies in the archive
/// stream, found by reading the stream once (`vault mount` shows folder
/// items as directories and reads a file's bytes straight from the
/// archive, decrypting only the chunks they lie in).
///
/// Every entry passes the same checks as extraction (`ExtractionPlan`: no
/// absolute paths, no `..`, nothing through a symlink, no duplicates,
/// devices refused); paths come out as "/a/b". A file's data starts where
/// the next header (or the end-of-archive marker) starts, less its size
/// rounded up to 512-byte blocks: tar puts nothing between. An archive where
/// that would not leave room for the file's own header is refused.
public struct FolderIndex: Sendable {
    public struct Entry: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case file, directory, symlink }
        public let path: [UInt8]
        public let kind: Kind
        public let size: UInt64
        public let permissions: UInt32
        public let mtime: Int64
        /// Files: where the data starts in the archive stream.
        public let dataOffset: UInt64
        public let linkTarget: [UInt8]

        public init(path: [UInt8], kind: Kind, size: UInt64, permissions: UInt32, mtime: Int64,
                    dataOffset: UInt64, linkTarget: [UInt8]) {
            (self.path, self.kind, self.size, self.permissions) = (path, kind, size, permissions)
            (self.mtime, self.dataOffset, self.linkTarget) = (mtime, dataOffset, linkTarget)
        }
    }

    public let entries: [Entry]
    /// The archive's directories and entries, one node per path component
    /// (implied directories too), for a view that walks the folder by name
    /// (the mount) without a dictionary per directory.
    public let tree: PathTree
    /// The entry at each node that has one (implied directories have none).
    private let entryAtNode: [PathTree.Node: Int]

    /// The entry at `node`, nil for a directory no entry names.
    public func entry(at node: PathTree.Node) -> Entry? { entryAtNode[node].map { entries[$0] } }

    /// Reads `stream` (a whole archive) once, to its end.
    public static func build(from stream: ByteStream) throws -> FolderIndex {
        try buildSummarizing(from: stream).index
    }

    /// The same, with what `FolderArchive.summarize` would say of the
    /// archive (the same entries, admitted the same way), from that one
    /// pass: `check --read-data` compares the index with a kept one.
    public static func buildSummarizing(from stream: ByteStream) throws -> (index: FolderIndex, summary: ArchiveSummary) {
        let reader = try TarReader(stream: stream)
        var summary = ArchiveSummary()
        var plan = ExtractionPlan(root: [])
        var entries: [Entry] = []
        var byPath: [[UInt8]: Int] = [:]
        var pending: (entry: PaxEntry, header: UInt64, node: PathTree.Node)?
        var entryAtNode: [PathTree.Node: Int] = [:]

        func settle(endingAt next: UInt64) throws {
            guard let (e, header, node) = pending else { return }
            pending = nil
            var size = e.size, offset: UInt64 = 0
            let kind: Entry.Kind
            switch e.kind {
            case .directory: kind = .directory
            case .symlink: kind = .symlink
            case .hardlink:
                // Extraction admitted it only after its target, a file listed here.
                guard let target = byPath[e.linkTarget].map({ entries[$0] }) else {
                    throw ArchiveError.refused(entry: e.displayPath, reason: .hardLinkOutside)
                }
                (kind, size, offset) = (.file, target.size, target.dataOffset)
            default:
                kind = .file
                let blocks = (size + 511) / 512 * 512
                guard blocks <= next, next - blocks >= header + 512 else {
                    throw ArchiveError.library(function: "FolderIndex.build", code: 0, errno: 0,
                                               message: "'\(e.displayPath)': its data does not follow its header")
                }
                offset = next - blocks
            }
            byPath[e.path] = entries.count
            entryAtNode[node] = entries.count
            entries.append(Entry(path: e.path, kind: kind, size: size, permissions: e.permissions & 0o777,
                                 mtime: e.mtime?.seconds ?? 0, dataOffset: offset,
                                 linkTarget: kind == .symlink ? e.linkTarget : []))
        }

        while let entry = try reader.next() {
            let header = reader.headerPosition
            try settle(endingAt: header)
            guard let target = try plan.admit(entry) else { continue }
            try summary.count(target)
            pending = (target, header, plan.lastAdmitted)
        }
        try settle(endingAt: reader.headerPosition)
        try reader.drainInput()
        return (FolderIndex(entries: entries, tree: plan.tree, entryAtNode: entryAtNode), summary)
    }

    /// An index made earlier by `build` and kept (a folder index file, the
    /// vault's cache of it): each entry is admitted again, in order, through
    /// the same checks (`ExtractionPlan`), so what a kept index can hold is
    /// what an archive could. Hard links were kept as the files they name.
    /// Paths must be as `build` gives them ("/a/b": no ".", no empty
    /// component); a file's data must start at a 512-byte block after its
    /// header's, and end within 2^64; other kinds hold no data.
    public static func rebuild(_ entries: [Entry]) throws -> FolderIndex {
        var plan = ExtractionPlan(root: [])
        var entryAtNode: [PathTree.Node: Int] = [:]
        entryAtNode.reserveCapacity(entries.count)
        for (i, e) in entries.enumerated() {
            func refuse(_ why: String) -> ArchiveError {
                .library(function: "FolderIndex.rebuild", code: 0, errno: 0, message: "'\(String(decoding: e.path, as: UTF8.self))': \(why)")
            }
            guard e.path.first == UInt8(ascii: "/") else { throw refuse("not a folder path") }
            var pax = PaxEntry(path: Array(e.path.dropFirst()), kind: .regular)
            switch e.kind {
            case .file:
                guard e.dataOffset >= 512, e.dataOffset % 512 == 0, e.dataOffset <= UInt64.max - e.size else {
                    throw refuse("its data does not follow a header")
                }
            case .directory, .symlink:
                pax.kind = e.kind == .directory ? .directory : .symlink
                guard e.size == 0, e.dataOffset == 0 else { throw refuse("holds data") }
            }
            guard e.kind == .symlink || e.linkTarget.isEmpty else { throw refuse("a link target on what is no link") }
            guard e.permissions <= 0o777 else { throw refuse("permission bits beyond 0777") }
            pax.linkTarget = e.linkTarget
            guard let admitted = try plan.admit(pax), admitted.path == e.path else { throw refuse("not a folder path") }
            entryAtNode[plan.lastAdmitted] = i
        }
        return FolderIndex(entries: entries, tree: plan.tree, entryAtNode: entryAtNode)
    }
}
