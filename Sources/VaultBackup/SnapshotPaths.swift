/// The one spelling of a path in a snapshot, and both accepted (issue 43,
/// item 5). A snapshot's tree holds each backed-up path under its last
/// name ("/home/me/Documents" is the tree's "Documents"; BackupRun makes
/// those names distinct), so the two spellings map one to one. What vault
/// shows is the absolute one, as `snapshots list`, the mount and restic do;
/// what it accepts is either: an absolute path under one of the snapshot's
/// paths, or the tree's own ("Documents/notes").
public struct SnapshotPaths: Sendable {
    /// Each backed-up path by its last name.
    private let byName: [[UInt8]: [UInt8]]

    public init(_ paths: [[UInt8]]) {
        var byName: [[UInt8]: [UInt8]] = [:]
        for p in paths {
            guard let name = p.split(separator: 0x2f).last else { continue }
            byName[Array(name)] = p
        }
        self.byName = byName
    }

    /// Both snapshots' paths (a diff names what either holds).
    public init(_ a: Snapshot, _ b: Snapshot) { self.init(a.paths + b.paths) }

    /// The absolute spelling of a tree path ([name, name, ...]).
    public func display(_ components: [[UInt8]]) -> [UInt8] {
        guard let first = components.first, let root = byName[first] else {
            return components.reduce([]) { $0 + [0x2f] + $1 }
        }
        return components.dropFirst().reduce(root) { $0 + [0x2f] + $1 }
    }

    /// The tree's components of `path`, in either spelling. An absolute
    /// path under none of the snapshot's paths is taken as the tree's own
    /// with a leading '/' ("/Documents/notes").
    public func components(_ path: [UInt8]) -> [[UInt8]] {
        let parts = { (bytes: ArraySlice<UInt8>) in
            bytes.split(separator: 0x2f).filter { $0 != [0x2e] }.map { Array($0) }
        }
        if path.first == 0x2f, let (name, rest) = underRoot(path) { return [name] + parts(rest) }
        return parts(path[...])
    }

    /// A --include/--exclude/find pattern anchored at an absolute path
    /// ("/home/me/Documents/*.pdf") in the tree's spelling
    /// ("/Documents/*.pdf"), as BackupFilter matches it; any other pattern
    /// as it is. Only a literal prefix is mapped: the part before the first
    /// wildcard must spell one of the snapshot's paths.
    public func pattern(_ pattern: [UInt8]) -> [UInt8] {
        guard pattern.first == 0x2f, let (name, rest) = underRoot(pattern) else { return pattern }
        let literal = pattern.prefix { !"*?[\\".utf8.contains($0) }
        guard literal.count >= pattern.count - rest.count - (rest.isEmpty ? 0 : 1) else { return pattern }
        return [0x2f] + name + (rest.isEmpty ? [] : [0x2f] + rest)
    }

    /// (the tree's name, the rest after "/") when `path` is one of the
    /// snapshot's paths or under one.
    private func underRoot(_ path: [UInt8]) -> ([UInt8], ArraySlice<UInt8>)? {
        var trimmed = path[...]
        while trimmed.count > 1, trimmed.last == 0x2f { trimmed.removeLast() }
        for (name, root) in byName {
            if trimmed.elementsEqual(root) { return (name, []) }
            if trimmed.count > root.count + 1, trimmed.starts(with: root), trimmed[trimmed.startIndex + root.count] == 0x2f {
                return (name, trimmed[(trimmed.startIndex + root.count + 1)...])
            }
        }
        return nil
    }
}
