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
/// behind one lock, held only for quick steps. What takes time (indexing a
/// folder, reading a snapshot's tree) is done outside it, with only the
/// lookups that need that same node waiting for it (one `ExpansionGate`
/// each): a mount indexing a large or hostile folder never makes an
/// unrelated lookup wait (issue 38). A folder's inside is its index's
/// PathTree, one small node per path component; a MountTree node is made
/// for what is looked up, and a directory's sorted listing when it is
/// listed, never for the whole folder at once.
final class MountTree: Sendable {
    public static let versionsDirectory = Array(".versions".utf8)

    /// A folder item once indexed, shared by the nodes made from it.
    final class FolderContents: Sendable {
        let item: ManifestEntry
        let index: FolderIndex
        /// The folder's own node (the directory the item shows as).
        let root: Int
        init(item: ManifestEntry, index: FolderIndex, root: Int) { (self.item, self.index, self.root) = (item, index, root) }

        /// A directory's time and permission bits: its entry's, or for one
        /// no entry names (the folder itself, an implied directory) the item's.
        func attributes(_ node: PathTree.Node) -> (modified: Int64, permissions: UInt32) {
            guard let e = index.entry(at: node), e.kind == .directory else { return (item.modified, 0o555) }
            return (e.mtime, e.permissions & 0o555)
        }
    }

    public enum Node: Sendable {
        /// Children by name; `names` in byte order for listings.
        case directory(names: [[UInt8]], children: [[UInt8]: Int], modified: Int64, nanoseconds: UInt32 = 0, permissions: UInt32)
        case file(ManifestEntry)
        /// A file inside a folder item: `size` bytes at `offset` of the item's archive.
        case archived(item: ManifestEntry, offset: UInt64, size: UInt64, permissions: UInt32, modified: Int64)
        /// A directory inside an indexed folder item (or the folder
        /// itself): node `node` of its tree, not listed yet.
        case archivedDirectory(FolderContents, node: PathTree.Node)
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

    /// What the lock guards.
    private struct State {
        var nodes: [Node]
        /// Nodes made for what lies inside indexed folders, by (folder's node, tree node).
        var inside: [InsideKey: Int] = [:]
        /// Nodes being expanded, each with the gate the threads that want it wait on.
        var gates: [Int: ExpansionGate] = [:]
    }

    private struct InsideKey: Hashable { let folder: Int, node: PathTree.Node }

    /// Held by the one thread expanding a node, for as long as that takes.
    private final class ExpansionGate: Sendable { let lock = Mutex(()) }

    private let state: Mutex<State>
    /// Called outside the tree's lock; one folder is indexed by one thread at a time.
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
            // The current version at the top is a node of its own, not
            // the one under .versions: node numbers are the mount's inode
            // numbers, and the kernel lets a directory have one parent.
            if name != Self.versionsDirectory, snapshots == nil || name != Self.snapshotsDirectory {
                root[name] = add(item.current.kind == .file ? .file(item.current) : .folder(item.current))
            }
            versions[name] = add(Self.directory(byNumber, modified: itemNewest))
        }
        root[Self.versionsDirectory] = 1
        if snapshots != nil { root[Self.snapshotsDirectory] = add(.snapshots(modified: newest)) }
        nodes[1] = Self.directory(versions, modified: newest)
        nodes[0] = Self.directory(root, modified: newest)
        self.state = Mutex(State(nodes: nodes))
    }

    static func add(_ node: Node, to nodes: inout [Node]) -> Int {
        nodes.append(node)
        return nodes.count - 1
    }

    /// Node `i` as it is now (a folder's node changes once, when it is indexed).
    public func node(_ i: Int) -> Node { state.withLock { $0.nodes[i] } }

    static func directory(_ children: [[UInt8]: Int], modified: Int64, nanoseconds: UInt32 = 0, permissions: UInt32 = 0o555) -> Node {
        .directory(names: children.keys.sorted { $0.lexicographicallyPrecedes($1) }, children: children,
                   modified: modified, nanoseconds: nanoseconds, permissions: permissions)
    }

    /// One step of a walk under the lock: its result, or a node to expand first.
    private enum Step { case done(Lookup), expand(Int) }

    /// Child `name` of directory `parent` (what a FUSE lookup asks):
    /// `missing` also when `parent` is no directory.
    public func child(of parent: Int, named name: some Collection<UInt8>) -> Lookup {
        while true {
            let step: Step = state.withLock { s in
                guard parent >= 0, parent < s.nodes.count else { return .done(.missing) }
                switch s.nodes[parent] {
                case .directory(_, let children, _, _, _):
                    guard let next = children[Array(name)] else { return .done(.missing) }
                    return .done(.node(next))
                case .archivedDirectory(let c, let t):
                    guard let child = c.index.tree.child(t, name) else { return .done(.missing) }
                    return .done(.node(Self.inside(c, child, &s)))
                case .folder, .snapshots, .snapshotRoot, .snapshotDirectory: return .expand(parent)
                case .broken, .unreadable: return .done(.failed)
                default: return .done(.missing)
                }
            }
            switch step {
            case .done(let result): return result
            case .expand(let node): expand(node)
            }
        }
    }

    /// How many nodes there are now (node numbers are below it).
    var count: Int { state.withLock { $0.nodes.count } }

    /// A directory's entries in byte order, each with its node; nil if it
    /// failed to read (or is no directory). A folder's directory becomes a
    /// listed one here, once: a listing is asked for again and again, one
    /// part at a time.
    public func listing(_ node: Int) -> [(name: [UInt8], node: Int)]? {
        while true {
            let step: Step = state.withLock { s in
                switch s.nodes[node] {
                case .directory: break
                case .archivedDirectory(let c, let t):
                    var children: [[UInt8]: Int] = [:]
                    for child in c.index.tree.children(t) { children[Array(c.index.tree.name(child))] = Self.inside(c, child, &s) }
                    let (modified, permissions) = c.attributes(t)
                    s.nodes[node] = Self.directory(children, modified: modified, permissions: permissions)
                case .folder, .snapshots, .snapshotRoot, .snapshotDirectory: return .expand(node)
                default: return .done(.failed)
                }
                return .done(.node(node))
            }
            switch step {
            case .expand(let n): expand(n)
            case .done(.node):
                guard case .directory(let names, let children, _, _, _) = self.node(node) else { return nil }
                return names.map { ($0, children[$0]!) }
            case .done: return nil
            }
        }
    }

    /// The node for child `child` of a folder's tree, made the first time it is asked for.
    private static func inside(_ c: FolderContents, _ child: PathTree.Node, _ s: inout State) -> Int {
        let key = InsideKey(folder: c.root, node: child)
        if let n = s.inside[key] { return n }
        let node: Node
        switch c.index.entry(at: child) {
        case let e? where e.kind == .file:
            node = .archived(item: c.item, offset: e.dataOffset, size: e.size, permissions: e.permissions & 0o555, modified: e.mtime)
        case let e? where e.kind == .symlink:
            node = .symlink(target: e.linkTarget, modified: e.mtime)
        default:
            node = .archivedDirectory(c, node: child)
        }
        let n = add(node, to: &s.nodes)
        s.inside[key] = n
        return n
    }

    /// What expanding a node read, outside the lock.
    private enum Expansion {
        case folder(FolderIndex?), snapshots([MountedSnapshots.Listed]), entries([TreeEntry]?)
    }

    /// Expands `node` (a folder, `snapshots/` or a snapshot's directory)
    /// if nobody has yet: the reading happens with only this node's gate
    /// held, so lookups elsewhere go on meanwhile.
    private func expand(_ node: Int) {
        let gate = state.withLock { s in
            if let g = s.gates[node] { return g }
            let g = ExpansionGate()
            s.gates[node] = g
            return g
        }
        gate.lock.withLock { _ in
            let current = self.node(node)
            let read: Expansion
            switch current {
            case .folder(let item): read = .folder(try? indexer(item))
            case .snapshots: read = .snapshots(snapshots?.list() ?? [])
            case .snapshotRoot(let listed): read = .entries(snapshots.flatMap { try? $0.tree(listed.index, listed.root) })
            case .snapshotDirectory(let snapshot, let tree, _, _, _): read = .entries(snapshots.flatMap { try? $0.tree(snapshot, tree) })
            default:   // expanded by the thread that held the gate before us
                state.withLock { s in s.gates[node] = nil }
                return
            }
            state.withLock { s in
                s.gates[node] = nil
                install(node, current, read, &s)
            }
        }
    }

    /// Puts what `expand` read in place of the node (under the lock: no reading here).
    private func install(_ node: Int, _ current: Node, _ read: Expansion, _ s: inout State) {
        switch (current, read) {
        case (.folder(let item), .folder(let index)):
            guard let index else {
                s.nodes[node] = .broken(item)
                return
            }
            s.nodes[node] = .archivedDirectory(FolderContents(item: item, index: index, root: node), node: PathTree.root)
        case (.snapshots(let modified), .snapshots(let listed)):
            expandSnapshots(node, listed, modified: modified, &s.nodes)
        case (.snapshotRoot(let listed), .entries(let entries)):
            expandSnapshotRoot(node, listed, entries, &s.nodes)
        case (.snapshotDirectory(let snapshot, let tree, let modified, let ns, let permissions), .entries(let entries)):
            guard let entries else {
                s.nodes[node] = .unreadable(modified: modified)
                return
            }
            var children: [[UInt8]: Int] = [:]
            for e in entries { children[e.name] = Self.add(Self.node(of: e, in: tree, snapshot), to: &s.nodes) }
            s.nodes[node] = Self.directory(children, modified: modified, nanoseconds: ns, permissions: permissions)
        default: break
        }
    }
}
