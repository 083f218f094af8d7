// libFuzzer target: the backup tree and snapshot parsers (docs/FORMAT.md,
// "Backups"), what a dropper controls completely. Built by `make fuzz`.
//
// Input: mode (1) || rest. Mode bit 0 = 0: rest is a tree; 1: a snapshot record.
// Traps on: a crash or trap inside the parser; a record that parses but does
// not encode back to exactly its bytes (the parser takes one shape only).
import VaultBackup

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBackupTree(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    if mode & 1 == 0 {
        if let entries = Tree.decode(rest) { require(Tree.encode(entries) == rest, "a tree that re-encodes differently") }
    } else if let snapshot = Snapshot.decode(rest) {
        require((try? snapshot.encode()) == rest, "a snapshot record that re-encodes differently")
    }
    return 0
}
