import VaultBackup

/// How `snapshots/` grows into directories (MountTree's doc comment has the
/// layout), one level at a time: what each level needs is read outside the
/// tree's lock (MountTree.expand), and put in place under it here.
extension MountTree {
    /// `snapshots/HOST/TIME` for each snapshot, and `snapshots/HOST/latest`.
    func expandSnapshots(_ node: Int, _ listed: [MountedSnapshots.Listed], modified: Int64, _ nodes: inout [Node]) {
        var byHost: [[UInt8]: [MountedSnapshots.Listed]] = [:]
        for s in listed { byHost[SnapshotNames.host(s.host), default: []].append(s) }
        var hosts: [[UInt8]: Int] = [:]
        for (host, snapshots) in byHost {
            var times: [[UInt8]: Int] = [:]
            var newest: [UInt8] = []
            for s in snapshots.sorted(by: { ($0.start.seconds, $0.start.nanoseconds, $0.index) < ($1.start.seconds, $1.start.nanoseconds, $1.index) }) {
                let base = Array(SnapshotNames.time(s.start.seconds).utf8)
                var name = base, k = 1
                while times[name] != nil { k += 1; name = base + Array("-\(k)".utf8) }
                times[name] = Self.add(.snapshotRoot(s), to: &nodes)
                newest = name
            }
            let last = snapshots.map(\.start.seconds).max() ?? modified
            times[Array("latest".utf8)] = Self.add(.symlink(target: newest, modified: last), to: &nodes)
            hosts[host] = Self.add(Self.directory(times, modified: last), to: &nodes)
        }
        nodes[node] = Self.directory(hosts, modified: modified)
    }

    /// A snapshot's TIME directory: each backed-up path's directories, then
    /// the root tree's entry of that name. An entry no path names (or whose
    /// path is not made of safe names) is shown at the top; where a path's
    /// directory and an entry share a name, the entry is shown.
    /// `entries`: the snapshot's root tree, read outside the lock (nil: it did not read).
    func expandSnapshotRoot(_ node: Int, _ s: MountedSnapshots.Listed, _ entries: [TreeEntry]?, _ nodes: inout [Node]) {
        let time = (s.start.seconds, s.start.nanoseconds)
        guard let entries else {
            nodes[node] = .unreadable(modified: time.0)
            return
        }
        var parentOf: [[UInt8]: [[UInt8]]] = [:]
        for p in s.paths {
            if let parts = SnapshotNames.components(p), let last = parts.last, parentOf[last] == nil { parentOf[last] = Array(parts.dropLast()) }
        }
        var children: [[[UInt8]]: [[UInt8]: Int]] = [[]: [:]]
        for e in entries {
            let parent = parentOf[e.name] ?? []
            for i in 0...parent.count where children[Array(parent.prefix(i))] == nil { children[Array(parent.prefix(i))] = [:] }
            children[parent, default: [:]][e.name] = Self.add(Self.node(of: e, in: s.root, s.index), to: &nodes)
        }
        var ids: [[[UInt8]]: Int] = [[]: node]
        for path in children.keys where !path.isEmpty { ids[path] = Self.add(.unreadable(modified: time.0), to: &nodes) }
        for path in children.keys where !path.isEmpty {
            let parent = Array(path.dropLast())
            if children[parent, default: [:]][path[path.count - 1]] == nil { children[parent, default: [:]][path[path.count - 1]] = ids[path] }
        }
        for (path, c) in children { if let id = ids[path] { nodes[id] = Self.directory(c, modified: time.0, nanoseconds: time.1) } }
    }

    /// The node of an entry of `tree` (read-only permission bits, as for
    /// folder items). A file keeps no pieces here: they are read again from
    /// `tree` when it is opened, so the mount's tree stays small.
    static func node(of e: TreeEntry, in tree: PieceRef, _ snapshot: Int) -> Node {
        let permissions = UInt32(e.mode) & 0o555
        switch e.kind {
        case .file:
            return .snapshotFile(snapshot: snapshot, tree: tree, name: e.name, size: e.size, modified: e.modified,
                                 nanoseconds: e.modifiedNanoseconds, permissions: permissions)
        case .directory:
            guard let sub = e.subtree else {
                return directory([:], modified: e.modified, nanoseconds: e.modifiedNanoseconds, permissions: permissions)
            }
            return .snapshotDirectory(snapshot: snapshot, tree: sub, modified: e.modified, nanoseconds: e.modifiedNanoseconds,
                                      permissions: permissions)
        case .symlink:
            return .symlink(target: e.target, modified: e.modified, nanoseconds: e.modifiedNanoseconds)
        }
    }
}
