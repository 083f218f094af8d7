import System
// Rekey switch, file `rekey.pending` (docs/FORMAT.md, "Rekey"):
//
//   magic "VAULTRKY" (8) || version 0x01 || 3 zero bytes
//   || new header (182) || new manifest (the rest)
//
// A rekey writes every item again under new keys, then this one file
// (atomically), then the header and the manifest, then deletes it. The
// header and manifest cannot be replaced together in one rename; this file
// can. While it exists it is the truth: readers take the header and manifest
// from it and the next writer finishes the switch. So a kill at any moment
// leaves the old state or the new one, never a mix.

struct RekeySwitch {
    static let magic = Array("VAULTRKY".utf8)
    static let version: UInt8 = 1
    static let prefixLength = 12

    let header: VaultHeader
    let manifest: [UInt8]

    var bytes: [UInt8] { Self.magic + [Self.version, 0, 0, 0] + header.bytes + manifest }

    init(header: VaultHeader, manifest: [UInt8]) {
        self.header = header
        self.manifest = manifest
    }

    init(parsing b: [UInt8]) throws {
        let start = Self.prefixLength + VaultHeader.length
        guard b.count > start, Array(b[0..<8]) == Self.magic, b[8] == Self.version,
              b[9..<12].allSatisfy({ $0 == 0 }) else { throw VaultError.corruptedOrTampered }
        header = try VaultHeader(parsing: Array(b[Self.prefixLength..<start]))
        manifest = Array(b[start...])
    }

    /// Reads `rekey.pending` if it exists.
    static func read(_ paths: VaultPaths) throws -> RekeySwitch? {
        guard try Syscall.status(of: paths.rekeyPending) != nil else { return nil }
        return try RekeySwitch(parsing: VaultDirectory.readFile(paths.rekeyPending,
                                                                limit: prefixLength + VaultHeader.length + Manifest.maxFileSize))
    }

    /// Puts the new header and manifest in place, then removes this file.
    /// Idempotent: a writer that finds the file runs it again.
    func apply(_ paths: VaultPaths) throws {
        try VaultDirectory.atomicWrite(header.bytes, to: paths.header)
        try VaultDirectory.atomicWrite(manifest, to: paths.manifest)
        try Syscall.unlink(paths.rekeyPending)
        try Syscall.fsyncDirectory(paths.root)
    }
}
