import ByteLayout
import System
import VaultCore
import VaultCrypto

// The directories an interrupted `snapshots restore` made, so that running
// it again finishes them: `<state directory>/restore/<key>`, 0600 in a 0700
// directory of this user's own:
//
//   record*   record = op u8 (1 made, 0 not made after all) || parent device u64be || parent inode u64be
//                      || name length u16be || name
//   key       = hex of SHA-256("vault restore journal v1" || snapshot id || 0x00 || target device u64be
//               || target inode u64be)[0..<8]
//
// A restore sets a directory's mode, owner and time only once everything
// inside it is in place, and only on a directory it made: one that was
// there is not its to change (issue 38: an existing 0700 `Documents` must
// stay 0700). A kill between the two would leave a directory it made at
// 0700 and the time of the kill, which the next run would take for one
// that was there. The journal is how the next run of the same restore
// knows better. A directory is recorded (by its parent and name) before
// it is made, so no kill can leave one made but unrecorded; should the
// name turn out to be taken, a second record takes the first back. The
// journal is removed when a run gets to the end of the snapshot.

final class RestoreJournal {
    private let path: String
    private var made: Set<[UInt8]> = []
    private let file: FileHandleFD
    /// Bigger than any journal of ours (a record per directory of the snapshot).
    static let maxLength = 256 << 20

    /// Opens (or starts) the journal of restoring `snapshot` into the
    /// directory `target` under `directory`.
    init(directory: String, snapshot: String, target: FileStatus) throws {
        try Vault.ensureDirectory(directory)
        var w = Array("vault restore journal v1".utf8) + Array(snapshot.utf8) + [0]
        for v in [target.device, target.inode] { w += withUnsafeBytes(of: v.bigEndian, Array.init) }
        path = directory + "/" + Hex.encode(Array(try SHA256.hash(w).prefix(8)))
        if let bytes = try? VaultDirectory.readFile(path, limit: Self.maxLength) {
            var r = ByteReader(bytes)
            // A torn last record (a kill mid-write) ends the journal; what it was about was not made yet.
            while let op = try? r.u8(), let key = try? r.bytes(16), let name = try? r.bytes(Int(r.u16())) {
                if op == 1 { made.insert(key + name) } else { made.remove(key + name) }
            }
        }
        file = FileHandleFD(owning: try Syscall.open(path, [.writeOnly, .create, .append, .noFollow], mode: 0o600), path: path)
    }

    private static func key(_ parent: FileStatus, _ name: [UInt8]) -> [UInt8] {
        var b: [UInt8] = []
        for v in [parent.device, parent.inode] { b += withUnsafeBytes(of: v.bigEndian, Array.init) }
        return b + name
    }

    /// Whether a run of this restore made directory `name` in `parent`.
    func made(_ name: [UInt8], in parent: FileStatus) -> Bool { made.contains(Self.key(parent, name)) }

    /// Records directory `name` in `parent` as made by this restore (before it is made).
    func willMake(_ name: [UInt8], in parent: FileStatus) throws { try append(1, name, parent) }

    /// Takes the record back: the name was taken by something else.
    func didNotMake(_ name: [UInt8], in parent: FileStatus) throws { try append(0, name, parent) }

    private func append(_ op: UInt8, _ name: [UInt8], _ parent: FileStatus) throws {
        let key = Self.key(parent, name)
        if op == 1 { made.insert(key) } else { made.remove(key) }
        var w = ByteWriter([op])
        w.bytes(key.prefix(16))
        w.u16(UInt16(name.count))
        w.bytes(name)
        try w.bytes.withUnsafeBytes { try file.write($0) }
    }

    /// The restore got to the end: nothing left to finish.
    func finish() { try? Syscall.unlink(path) }
}
