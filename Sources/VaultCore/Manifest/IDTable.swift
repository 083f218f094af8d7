import ByteLayout

// The shape the manifest trailer's tables share (docs/FORMAT.md,
// "Manifest": tombstones, marks, forgotten hosts): u32be(count), then
// count rows, each a 16-byte id and the table's fields, ids strictly
// ascending. One reader, so each table states only its fields.
enum IDTable {
    /// Reads a table of at most `max` rows, `row` reading each row's
    /// fields after its id; any other shape is `corruptedOrTampered`.
    static func decode<Value>(_ r: inout RawByteReader, max: Int,
                              row: (inout RawByteReader) throws -> Value) throws -> [ItemID: Value] {
        do {
            let n = try r.length(UInt32.self, max: max)
            var out: [ItemID: Value] = [:]
            out.reserveCapacity(n)
            var previous: ItemID?
            for _ in 0..<n {
                let id = ItemID(try r.u64(), try r.u64())
                let value = try row(&r)
                guard previous.map({ $0 < id }) ?? true else { throw VaultError.corruptedOrTampered }
                previous = id
                out[id] = value
            }
            return out
        } catch { throw VaultError.corruptedOrTampered }
    }
}
