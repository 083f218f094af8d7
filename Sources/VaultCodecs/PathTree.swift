/// The directories and entries of an archive's paths as one node per path
/// component, in flat arrays: what extraction checks (ExtractionPlan), the
/// folder index (FolderIndex) and the mount keep of a folder's shape.
///
/// Why not a set of whole paths: an archive's entry may name a path under
/// ~2,000 directories that no entry lists (tar allows parents to be
/// implied), and a set keyed by each of those directories' whole paths
/// holds ~4 MB for one such entry of ~5 KB (issue 38). Here a component is
/// a node of ~20 bytes plus its name's bytes, each component costs one
/// lookup, so memory and time grow with the bytes of the paths, not with
/// their square.
///
/// Children are found through one open-addressing table keyed by (parent,
/// name), hashed with Swift's per-process random seed (a dropper cannot
/// aim names at one slot), and listed through first-child and
/// next-sibling links, in the order they were added.
public struct PathTree: Sendable {
    public typealias Node = UInt32
    /// The tree's root, which has no name.
    public static let root: Node = 0
    /// What the caller keeps for each node (ExtractionPlan: a kind;
    /// FolderIndex: an entry's place plus one, 0 for an implied directory).
    public private(set) var tags: [UInt32] = [0]
    private var parents: [Node] = [0]
    private var nameStarts: [Int] = [0]
    private var nameLengths: [UInt16] = [0]
    private var names: [UInt8] = []
    private var firstChild: [Node] = [0]
    private var nextSibling: [Node] = [0]
    private var lastChild: [Node] = [0]
    /// Open addressing: a child's node number, 0 for an empty slot (the
    /// root is nobody's child). Never more than half full.
    private var slots = [Node](repeating: 0, count: 16)

    public init() {}

    /// Nodes, the root included.
    public var count: Int { parents.count }

    public func name(_ node: Node) -> ArraySlice<UInt8> {
        let start = nameStarts[Int(node)]
        return names[start..<(start + Int(nameLengths[Int(node)]))]
    }

    public func parent(_ node: Node) -> Node { parents[Int(node)] }

    public mutating func setTag(_ node: Node, _ tag: UInt32) { tags[Int(node)] = tag }

    /// `node`'s children in the order they were added.
    public func children(_ node: Node) -> [Node] {
        var out: [Node] = []
        var c = firstChild[Int(node)]
        while c != 0 {
            out.append(c)
            c = nextSibling[Int(c)]
        }
        return out
    }

    /// The child of `parent` named `name`, if there is one.
    public func child(_ parent: Node, _ name: some Collection<UInt8>) -> Node? {
        find(parent, name).node
    }

    /// The child of `parent` named `name`, added (tag 0) if missing.
    public mutating func addChild(_ parent: Node, _ name: some Collection<UInt8>) -> Node {
        let (slot, found) = find(parent, name)
        if let found { return found }
        precondition(name.count <= Int(UInt16.max), "a path component longer than any archive holds")
        let node = Node(parents.count)
        parents.append(parent)
        nameStarts.append(names.count)
        nameLengths.append(UInt16(name.count))
        names.append(contentsOf: name)
        tags.append(0)
        firstChild.append(0)
        nextSibling.append(0)
        lastChild.append(0)
        if lastChild[Int(parent)] == 0 { firstChild[Int(parent)] = node } else { nextSibling[Int(lastChild[Int(parent)])] = node }
        lastChild[Int(parent)] = node
        slots[slot] = node
        if parents.count * 2 > slots.count { grow() }
        return node
    }

    /// The slot holding (parent, name), or the empty slot where it would go.
    private func find(_ parent: Node, _ name: some Collection<UInt8>) -> (slot: Int, node: Node?) {
        let mask = slots.count - 1
        var i = Self.hash(parent, name) & mask
        while true {
            let n = slots[i]
            if n == 0 { return (i, nil) }
            if parents[Int(n)] == parent, self.name(n).elementsEqual(name) { return (i, n) }
            i = (i + 1) & mask
        }
    }

    private mutating func grow() {
        slots = [Node](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for n in 1..<parents.count {
            var i = Self.hash(parents[n], name(Node(n))) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = Node(n)
        }
    }

    private static func hash(_ parent: Node, _ name: some Collection<UInt8>) -> Int {
        var h = Hasher()
        h.combine(parent)
        h.combine(name.count)
        // One way for every caller (names are array slices, contiguous).
        if name.withContiguousStorageIfAvailable({ h.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            Array(name).withUnsafeBytes { h.combine(bytes: $0) }
        }
        return h.finalize()
    }
}
