import Synchronization
import VaultBackup
import VaultCodecs
import VaultCore

/// The shape of a mounted vault, built from the manifest when it is mounted
/// (the mount is read-only; the vault as it was then):
///
///     /NAME                      each item's current version
///     /.versions/NAME/N          version N of item NAME
///     /snapshots/HOST/TIME/PATH  what `vault backup` stored (only if the vault holds snapshots)
///     /snapshots/HOST/latest     a link to the host's newest TIME
///
/// File items are files. A folder item is a directory whose tree comes from
/// its archive, indexed (read through once: FolderIndex) the first time
/// something looks inside it; an archive that fails to index makes the
/// directory an I/O error inside. The `.versions` directory takes precedence
/// over an item of that name, still reachable as `.versions/.versions/N`;
/// so does `snapshots` when the vault holds snapshots (`.versions/snapshots/N`).
/// A snapshot's TIME directory holds its absolute paths (PATH: each
/// backed-up path's directories, then the path itself from the snapshot's
/// root tree); its trees are read when a directory is first looked into
/// (MountedSnapshots), never all at once.
/// Names are kept as bytes: FORMAT.md compares them byte for byte, and a
/// String key would merge canonically equivalent ones.
///
/// Callbacks of the multi-threaded FUSE loop use it at once: the nodes are
/// behind one lock, held while a folder is indexed (so each is indexed once;
/// other lookups wait meanwhile), and handed out as values.
final class MountTree: Sendable {
    public static let versionsDirectory = Array(".versions".utf8)

    public enum Node: Sendable {
        /// Children by name; `names` in byte order for listings.
        case directory(names: [[UInt8]], children: [[UInt8]: Int], modified: Int64, nanoseconds: UInt32 = 0, permissions: UInt32)
        case file(ManifestEntry)
        /// A file inside a folder item: `size` bytes at `offset` of the item's archive.
        case archived(item: ManifestEntry, offset: UInt64, size: UInt64, permissions: UInt32, modified: Int64)
        case symlink(target: [UInt8], modified: Int64, nanoseconds: UInt32 = 0)
        /// A folder item not indexed yet.
        case folder(ManifestEntry)
        /// A folder item whose archive did not index: EIO inside.
        case broken(ManifestEntry)
        /// `snapshots/`, before the snapshot records are read.
        case snapshots(modified: Int64)
        /// A snapshot's TIME directory, before its root tree is read.
        case snapshotRoot(MountedSnapshots.Listed)
        /// A snapshot's directory, before its tree is read.
        case snapshotDirectory(snapshot: Int, tree: PieceRef, modified: Int64, nanoseconds: UInt32, permissions: UInt32)
        /// A snapshot's file; its pieces are in `tree`, read again when it is opened.
        case snapshotFile(snapshot: Int, tree: PieceRef, name: [UInt8], size: UInt64, modified: Int64,
                          nanoseconds: UInt32, permissions: UInt32)
        /// A snapshot's directory whose tree did not read: EIO inside.
        case unreadable(modified: Int64)
    }

    public enum Lookup: Equatable, Sendable { case node(Int), missing, failed }

    private let nodes: Mutex<[Node]>
    /// Called only under `nodes`' lock, so one folder is indexed at a time.
    private let indexer: @Sendable (ManifestEntry) throws -> FolderIndex
    /// The vault's snapshots, if it holds any.
    private let snapshots: MountedSnapshots?
    public static let snapshotsDirectory = Array("snapshots".utf8)

    init(manifest: Manifest, snapshots: MountedSnapshots?, indexer: @escaping @Sendable (ManifestEntry) throws -> FolderIndex) {
        self.indexer = indexer
        self.snapshots = snapshots
        var nodes: [Node] = []
        func add(_ node: Node) -> Int { Self.add(node, to: &nodes) }
        var root: [[UInt8]: Int] = [:]
        var versions: [[UInt8]: Int] = [:]
        nodes.append(.symlink(target: [], modified: 0))   // 0: the root, set below
        nodes.append(.symlink(target: [], modified: 0))   // 1: .versions, set below
        var newest: Int64 = 0
        for item in manifest.items {
            let name = Array(item.current.name.utf8)
            var byNumber: [[UInt8]: Int] = [:]
            var itemNewest: Int64 = 0
            for e in manifest.versions(named: item.current.name) {
                newest = max(newest, e.added)
                itemNewest = max(itemNewest, e.added)
                byNumber[Array(String(e.version).utf8)] = add(e.kind == .file ? .file(e) : .folder(e))
            }
            if name != Self.versionsDirectory, snapshots == nil || name != Self.snapshotsDirectory { root[name] = byNumber[Array(String(item.current.version).utf8)] }
            versions[name] = add(Self.directory(byNumber, modified: itemNewest))
        }
        root[Self.versionsDirectory] = 1
        if snapshots != nil { root[Self.snapshotsDirectory] = add(.snapshots(modified: newest)) }
        nodes[1] = Self.directory(versions, modified: newest)
        nodes[0] = Self.directory(root, modified: newest)
        self.nodes = Mutex(nodes)
    }

    static func add(_ node: Node, to nodes: inout [Node]) -> Int {
        nodes.append(node)
        return nodes.count - 1
    }

    /// Node `i` as it is now (a folder's node changes once, when it is indexed).
    public func node(_ i: Int) -> Node { nodes.withLock { $0[i] } }

    static func directory(_ children: [[UInt8]: Int], modified: Int64, nanoseconds: UInt32 = 0, permissions: UInt32 = 0o555) -> Node {
        .directory(names: children.keys.sorted { $0.lexicographicallyPrecedes($1) }, children: children,
                   modified: modified, nanoseconds: nanoseconds, permissions: permissions)
    }

    /// The node at an absolute path ("/", "/a", "/.versions/a/2/dir/f").
    public func lookup(_ path: [UInt8]) -> Lookup {
        nodes.withLock { nodes in
            var node = 0
            for part in path.split(separator: UInt8(ascii: "/")) {
                guard expanded(node, &nodes) else { return .failed }
                guard case .directory(_, let children, _, _, _) = nodes[node], let next = children[Array(part)] else { return .missing }
                node = next
            }
            return .node(node)
        }
    }

    /// Makes sure a folder node is expanded into directories (indexing its
    /// archive); false if it failed to index.
    public func expanded(_ node: Int) -> Bool { nodes.withLock { expanded(node, &$0) } }

    private func expanded(_ node: Int, _ nodes: inout [Node]) -> Bool {
        switch nodes[node] {
        case .folder(let item): return expand(node, item, &nodes)
        case .broken, .unreadable: return false
        case .snapshots(let modified):
            guard let snapshots else { return false }
            expandSnapshots(node, snapshots.list(), modified: modified, &nodes)
            return true
        case .snapshotRoot(let listed):
            guard let snapshots else { return false }
            return expandSnapshotRoot(node, listed, snapshots, &nodes)
        case .snapshotDirectory(let snapshot, let tree, let modified, let ns, let permissions):
            guard let snapshots, let entries = try? snapshots.tree(snapshot, tree) else {
                nodes[node] = .unreadable(modified: modified)
                return false
            }
            var children: [[UInt8]: Int] = [:]
            for e in entries { children[e.name] = Self.add(Self.node(of: e, in: tree, snapshot), to: &nodes) }
            nodes[node] = Self.directory(children, modified: modified, nanoseconds: ns, permissions: permissions)
            return true
        default: return true
        }
    }

    private func expand(_ node: Int, _ item: ManifestEntry, _ nodes: inout [Node]) -> Bool {
        guard let index = try? indexer(item) else {
            nodes[node] = .broken(item)
            return false
        }
        func add(_ n: Node) -> Int { Self.add(n, to: &nodes) }
        let slash = UInt8(ascii: "/")
        // Directory path (components joined by "/"; root: []) -> children, time, permissions.
        var dirs: [[UInt8]: (children: [[UInt8]: Int], modified: Int64, permissions: UInt32)] = [[]: ([:], item.modified, 0o555)]
        func ensure(_ parts: ArraySlice<ArraySlice<UInt8>>) {
            for i in 0...parts.count {
                let path = Array(parts.prefix(i).joined(separator: [slash]))
                if dirs[path] == nil { dirs[path] = ([:], item.modified, 0o555) }
            }
        }
        for e in index.entries {
            let parts = e.path.split(separator: slash)[...]
            guard let last = parts.last else { continue }
            let parent = Array(parts.dropLast().joined(separator: [slash]))
            ensure(parts.dropLast())
            switch e.kind {
            case .directory:
                ensure(parts)
                dirs[Array(parts.joined(separator: [slash]))]!.modified = e.mtime
                dirs[Array(parts.joined(separator: [slash]))]!.permissions = e.permissions & 0o555
            case .file:
                dirs[parent]!.children[Array(last)] = add(.archived(item: item, offset: e.dataOffset, size: e.size,
                                                                    permissions: e.permissions & 0o555, modified: e.mtime))
            case .symlink:
                dirs[parent]!.children[Array(last)] = add(.symlink(target: e.linkTarget, modified: e.mtime))
            }
        }
        // Each directory gets a node (the folder's own root: this one), then joins its parent.
        var ids: [[UInt8]: Int] = [[]: node]
        for path in dirs.keys where !path.isEmpty { ids[path] = add(.broken(item)) }
        for path in dirs.keys where !path.isEmpty {
            let parts = path.split(separator: slash)
            dirs[Array(parts.dropLast().joined(separator: [slash]))]!.children[Array(parts.last!)] = ids[path]
        }
        for (path, d) in dirs { nodes[ids[path]!] = Self.directory(d.children, modified: d.modified, permissions: d.permissions) }
        return true
    }
}
