import System
import VaultCrypto

/// A fingerprint of a file or folder tree (names as bytes, kinds, modes,
/// contents, link targets), to tell whether `open`'s command changed the copy.
public enum TreeFingerprint {
    public static func of(_ path: String) throws -> [UInt8] {
        let h = try SHA256()
        try add(FilePath(path), relative: [], to: h)
        return try h.finish()
    }

    private static func add(_ path: FilePath, relative: [UInt8], to h: SHA256) throws {
        guard let st = try Syscall.status(of: path) else { return }
        try h.update(relative + [0] + Array("\(st.kind) \(st.permissions)".utf8) + [0])
        switch st.kind {
        case .directory:
            for name in try Syscall.listDirectory(path).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                try add(path.appending(name), relative: relative + [UInt8(ascii: "/")] + name, to: h)
            }
        case .regular:
            let f = try FileHandleFD(readingFrom: path)
            var buf = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try buf.withUnsafeMutableBytes { try f.readSequential(into: $0) }
                if n == 0 { break }
                try h.update(Array(buf[..<n]))
            }
        case .symlink:
            try h.update(try Syscall.readLink(path))
        default: break
        }
    }
}
