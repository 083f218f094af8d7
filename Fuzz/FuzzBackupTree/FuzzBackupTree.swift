// libFuzzer target: the backup tree and snapshot parsers and the piece
// frame decoder (docs/FORMAT.md, "Backups"), what a dropper controls
// completely. Built by `make fuzz`.
//
// Input: mode (1) || rest. Mode % 4 = 0: rest is a tree; 1: a snapshot
// record; 2: length u16be || a compressed piece's stored bytes, decoded to
// that length; 3: content length u64be || a repack's range table (prune
// writes repacks, but the table parser takes one shape only all the same).
// Traps on: a crash or trap inside the parser or decoder; a record that
// parses but does not encode back to exactly its bytes (the parser takes one
// shape only; a format-1 record must decode again to the same values from
// its format-2 encoding); a frame that decodes without filling every byte
// of its length, or differently twice; a repack table that parses but
// re-encodes differently, or places a range's own bytes anywhere but at
// its start.
@testable import VaultBackup
import VaultCodecs
import VaultCore

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBackupTree(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    switch mode % 4 {
    case 0:
        guard let entries = Tree.decode(rest) else { return 0 }
        if rest.starts(with: Tree.legacyMagic) {
            require(Tree.decode(Tree.encode(entries)) == entries, "a format-1 tree that does not survive format 2")
        } else {
            require(Tree.encode(entries) == rest, "a tree that re-encodes differently")
        }
    case 1:
        guard let snapshot = Snapshot.decode(rest), let again = try? snapshot.encode() else { return 0 }
        if rest.starts(with: BackupItems.legacySnapshotMagic) {
            require(Snapshot.decode(again)?.root == snapshot.root, "a format-1 snapshot that does not survive format 2")
        } else {
            require(again == rest, "a snapshot record that re-encodes differently")
        }
    case 3:
        guard rest.count >= 8 else { return 0 }
        let length = rest[..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let table = Array(rest.dropFirst(8))
        let pack = [UInt8](repeating: 7, count: 16)
        guard table.count % RepackTable.rangeLength == 0,
              let t = RepackTable.parse(pack: pack, table: table, tableEnd: UInt64(RepackTable.fixedLength + table.count), contentLength: length)
        else { return 0 }
        require(RepackTable.encode(pack: pack, ranges: t.ranges.map { ($0.old, $0.length) }).dropFirst(RepackTable.fixedLength).elementsEqual(table),
                "a repack table that re-encodes differently")
        for r in t.ranges {
            require(t.place(r.old, r.length) == r.new && t.place(r.old, r.length + 1) == nil, "a range placed wrongly")
        }
    default:
        guard rest.count >= 2 else { return 0 }
        let length = Int(rest[0]) << 8 | Int(rest[1])
        let frame = Array(rest.dropFirst(2))
        // One decoder for both decodes: the second also checks that it
        // starts clean after the first, whatever that one did.
        guard let decoder = try? ZstdPieceDecoder() else { return 0 }
        func decode(_ fill: UInt8) -> [UInt8]? {
            var out = [UInt8](repeating: fill, count: length)
            let ok = (try? frame.withUnsafeBytes { f in try out.withUnsafeMutableBytes { try decoder.decode(f, into: $0) } }) != nil
            return ok ? out : nil
        }
        // A frame that decodes fills every byte of the length, the same way twice.
        let a = decode(0xa5), b = decode(0x5a)
        require((a == nil) == (b == nil) && a == b, "a piece frame that leaves bytes unwritten or decodes differently")
    }
    return 0
}
