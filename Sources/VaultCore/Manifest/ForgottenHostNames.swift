import ByteLayout

// The host record names of `backup --to` hosts whose snapshots this vault
// forgot (docs/FORMAT.md, "Manifest", the version 7 trailer, and "Host
// records"):
//
//   forgotten = u32be(f) || (record name (16) || since i64be) × f
//
// names in ascending byte order, each once; `since` is the Unix second a
// copy of this vault first forgot a snapshot of that host. A host's piece
// key reaches the owner only inside its snapshots, so once the last of them
// is forgotten no copy can seal a record for it; a host whose record was
// never published would read "none published yet" and go on naming packs
// a prune deleted (every later snapshot of it refused). Each publication
// retires, on the remote, every name here that has no current record.
//
// In the manifest, not beside it, because the machine that publishes next
// need not be the one that forgot: sync carries the list, and a merge keeps
// both sides' names (the earlier `since`), so a forget on one machine
// reaches the other's next pull or prune. Grow-only (a name stays when the
// host comes back: it then has a current record, which wins), bounded at
// `maxCount`: past it the oldest go first, names a publication has long
// since retired on every remote that was reachable.

public struct ForgottenHostNames: Sendable, Equatable {
    public static let maxCount = 100_000
    static let recordLength = 24

    /// When each name was first forgotten.
    private(set) var since: [ItemID: Int64] = [:]

    public init() {}

    public var count: Int { since.count }
    var encodedLength: Int { 4 + Self.recordLength * since.count }

    /// Every name (16 bytes), ascending.
    public var names: [[UInt8]] { since.keys.sorted().map(\.bytes) }

    /// When `name` was first forgotten, if it was.
    public func forgottenAt(_ name: [UInt8]) -> Int64? { ItemID(name).flatMap { since[$0] } }

    /// Records `name` (16 bytes) as forgotten at `time`; an earlier time
    /// already recorded stays.
    public mutating func insert(_ name: [UInt8], at time: Int64) {
        guard let key = ItemID(name) else { return }
        since[key] = min(since[key] ?? time, time)
        trim()
    }

    /// Both sides' names, per name the earlier time. Symmetric.
    package func union(_ other: ForgottenHostNames) -> ForgottenHostNames {
        var out = self
        for (name, time) in other.since { out.since[name] = min(out.since[name] ?? time, time) }
        out.trim()
        return out
    }

    /// Keeps the newest `maxCount`: the oldest (then the smallest names, so
    /// every copy drops the same ones) go.
    private mutating func trim() {
        guard since.count > Self.maxCount else { return }
        let doomed = since.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(since.count - Self.maxCount)
        for (name, _) in doomed { since[name] = nil }
    }

    func encode(into out: inout [UInt8]) {
        out += ByteWriter.bigEndian(UInt32(since.count))
        for name in since.keys.sorted() {
            out += name.bytes
            out += ByteWriter.bigEndian(since[name]!)
        }
    }

    /// Exact shape (ascending unique names, at most `maxCount`), or `corruptedOrTampered`.
    static func decode(_ r: inout RawByteReader) throws -> ForgottenHostNames {
        var out = ForgottenHostNames()
        out.since = try IDTable.decode(&r, max: maxCount) { r in try r.i64() }
        return out
    }
}
