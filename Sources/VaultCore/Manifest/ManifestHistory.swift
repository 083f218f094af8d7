import ByteLayout
import VaultCrypto

// A manifest's ancestry (docs/FORMAT.md, "Manifest", version 5 trailer):
//
//   history = u16be(h) || (replica id (16) || count u64be || tag (8)) × h
//
// replicas in ascending byte order, each once, count ≥ 1. A version vector:
// each copy of the vault that has written a manifest (a replica: one
// vault directory, Replica.swift) counts its own writes, and every write
// draws a new random tag for its own dot. A manifest's history contains
// another's when, for each replica of the other, it counts more writes,
// or the same number with the same tag (the very same write). So "this
// manifest descends from that one" is proven under the manifest key
// (the history is inside the sealed plaintext), never guessed from a
// generation number: two copies that each wrote once since they parted
// hold histories neither of which contains the other, whatever their
// generations say (issue 37: a fork's smaller generation read as "older").
//
// A copy of a directory made outside vault (cp -r) lives in another
// directory and so gets a replica id of its own at its first write. A
// copy put back over the same directory (same inode) and written again
// before it synced would reuse counts with new tags: such a dot matches no
// other, so those histories read as unrelated, and sync merges, never
// fast-forwards over them; only a copy that then writes past the other's
// count on the same replica could be mistaken for its descendant, which
// the rollback guard (RollbackGuard.swift) refuses on this machine first.

public struct ManifestHistory: Sendable, Equatable {
    public struct Dot: Sendable, Equatable {
        public var count: UInt64
        public var tag: [UInt8]
    }

    public static let replicaLength = 16, tagLength = 8
    static let dotLength = replicaLength + 8 + tagLength
    /// At most this many replicas (2 MiB of history at 32 bytes each):
    /// every clone, move and copied directory adds one.
    public static let maxReplicas = 65_535

    /// The dots, by replica id.
    public private(set) var dots: [[UInt8]: Dot] = [:]

    public init() {}

    init(dots: [[UInt8]: Dot]) { self.dots = dots }

    var encodedLength: Int { 2 + Self.dotLength * dots.count }

    /// Whether every write this one records is also recorded here.
    public func contains(_ other: ManifestHistory) -> Bool {
        other.dots.allSatisfy { replica, theirs in
            guard let ours = dots[replica] else { return false }
            return ours.count > theirs.count || ours == theirs
        }
    }

    /// This history after one more write by `replica`.
    mutating func advance(replica: [UInt8], tag: [UInt8] = SecureRandom.bytes(tagLength)) throws {
        precondition(replica.count == Self.replicaLength && tag.count == Self.tagLength)
        let count = dots[replica]?.count ?? 0
        guard count < .max else { throw VaultError.corruptedOrTampered }
        guard dots[replica] != nil || dots.count < Self.maxReplicas else { throw VaultError.manifestFull }
        dots[replica] = Dot(count: count + 1, tag: tag)
    }

    /// Both histories in one: per replica the higher count; at an equal
    /// count with different tags (one replica that forked: the same
    /// directory put back and written again) the byte-wise greater tag,
    /// which contains neither fork, so the next sync with either merges
    /// again rather than trusting it. Symmetric.
    public func union(_ other: ManifestHistory) throws -> ManifestHistory {
        var out = dots
        for (replica, theirs) in other.dots {
            guard let ours = out[replica] else { out[replica] = theirs; continue }
            if theirs.count > ours.count || (theirs.count == ours.count && ours.tag.lexicographicallyPrecedes(theirs.tag)) {
                out[replica] = theirs
            }
        }
        guard out.count <= Self.maxReplicas else { throw VaultError.manifestFull }
        return ManifestHistory(dots: out)
    }

    func encode(into out: inout [UInt8]) {
        out += ByteWriter.bigEndian(UInt16(dots.count))
        for replica in dots.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let dot = dots[replica]!
            out += replica
            out += ByteWriter.bigEndian(dot.count)
            out += dot.tag
        }
    }

    /// Exact shape (ascending unique replicas, counts ≥ 1), or `corruptedOrTampered`.
    static func decode(_ r: inout RawByteReader) throws -> ManifestHistory {
        do {
            let n = try r.length(UInt16.self, max: maxReplicas)
            var dots: [[UInt8]: Dot] = [:]
            dots.reserveCapacity(n)
            var previous: [UInt8]?
            for _ in 0..<n {
                let replica = try r.bytes(replicaLength)
                let count = try r.u64()
                let tag = try r.bytes(tagLength)
                guard count >= 1, previous.map({ $0.lexicographicallyPrecedes(replica) }) ?? true else {
                    throw VaultError.corruptedOrTampered
                }
                previous = replica
                dots[replica] = Dot(count: count, tag: tag)
            }
            return ManifestHistory(dots: dots)
        } catch { throw VaultError.corruptedOrTampered }
    }
}
