import VaultCore

/// The shape of a mounted vault, built once from the manifest when it is
/// mounted (the mount is read-only, so it never changes):
///
///     /NAME                      each item's current version
///     /.versions/NAME/N          version N of item NAME
///
/// File items are files. Folder items are left out (their pax archives are
/// not indexed: `vault restore` them). The `.versions` directory takes
/// precedence over an item of that name, which is still reachable as
/// `.versions/.versions/N`. Names are kept as bytes: FORMAT.md compares them
/// byte for byte, and a String key would merge canonically equivalent ones.
public final class MountTree: @unchecked Sendable {
    public static let versionsDirectory = Array(".versions".utf8)

    public enum Node {
        /// Children by name, in byte order for listings.
        case directory(names: [[UInt8]], children: [[UInt8]: Int], modified: Int64)
        case file(ManifestEntry)
    }

    public private(set) var nodes: [Node] = []
    /// Folder items left out, for the command to say so.
    public private(set) var skippedFolders = 0

    public init(manifest: Manifest) {
        var root: [[UInt8]: Int] = [:]
        var versions: [[UInt8]: Int] = [:]
        nodes.append(.directory(names: [], children: [:], modified: 0))   // 0: root, filled below
        nodes.append(.directory(names: [], children: [:], modified: 0))   // 1: .versions
        var newest: Int64 = 0
        for item in manifest.items {
            let name = Array(item.current.name.utf8)
            var byNumber: [[UInt8]: Int] = [:]
            var itemNewest: Int64 = 0
            for e in manifest.versions(named: item.current.name) {
                newest = max(newest, e.added)
                guard e.kind == .file else { skippedFolders += 1; continue }
                itemNewest = max(itemNewest, e.added)
                byNumber[Array(String(e.version).utf8)] = add(.file(e))
            }
            if item.current.kind == .file, name != Self.versionsDirectory {
                root[name] = byNumber[Array(String(item.current.version).utf8)]
            }
            if !byNumber.isEmpty { versions[name] = add(Self.directory(byNumber, modified: itemNewest)) }
        }
        root[Self.versionsDirectory] = 1
        nodes[1] = Self.directory(versions, modified: newest)
        nodes[0] = Self.directory(root, modified: newest)
    }

    private func add(_ node: Node) -> Int {
        nodes.append(node)
        return nodes.count - 1
    }

    private static func directory(_ children: [[UInt8]: Int], modified: Int64) -> Node {
        .directory(names: children.keys.sorted { $0.lexicographicallyPrecedes($1) }, children: children, modified: modified)
    }

    /// The node at an absolute path ("/", "/a", "/.versions/a/2"); nil if none.
    public func lookup(_ path: [UInt8]) -> Int? {
        var node = 0
        for part in path.split(separator: UInt8(ascii: "/")) {
            guard case .directory(_, let children, _) = nodes[node], let next = children[Array(part)] else { return nil }
            node = next
        }
        return node
    }
}
