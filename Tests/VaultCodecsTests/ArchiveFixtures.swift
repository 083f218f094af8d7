// Helpers for the folder-archive tests: a scratch directory, a byte-exact
// snapshot of a tree, a hand-made tar writer for hostile archives, and a way
// to run GNU tar.
import Foundation
import Testing
import VaultCodecs
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system temp directory, removed in deinit
/// (directories made writable first, symlinks never followed).
final class ArchiveScratch {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/vault-archive-test-XXXXXX").utf8CString)
        guard let p = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: p)
    }

    deinit { chmodTree(path); try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { path + "/" + name }

    /// Names directly inside the scratch directory, sorted.
    var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    private func chmodTree(_ p: String) {
        var st = stat()
        guard lstat(p, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return }
        chmod(p, 0o700)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: p)) ?? [] { chmodTree(p + "/" + name) }
    }
}

/// One node of a tree as the archive should preserve it.
struct ArchiveNode: Equatable, CustomStringConvertible {
    var type: String
    var mode: UInt32
    var mtime: [Int]
    var content: [UInt8]   // file bytes or symlink target

    var description: String { "\(type) 0o\(String(mode, radix: 8)) \(mtime) \(content.count)B" }
}

/// Every node under `root` by relative path (raw bytes shown lossily),
/// compared by type, permission bits, mtime (whole seconds, as tar keeps
/// them) and content.
func archiveSnapshot(_ root: String) -> [String: ArchiveNode] {
    var out: [String: ArchiveNode] = [:]
    func walk(_ dir: [UInt8], _ rel: [UInt8]) {
        guard let d = opendir(dir.cString) else { return }
        var names: [[UInt8]] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name != Array(".".utf8), name != Array("..".utf8) { names.append(name) }
        }
        closedir(d)
        for name in names {
            let full = dir + [0x2F] + name, r = rel.isEmpty ? name : rel + [0x2F] + name
            var st = stat()
            lstat(full.cString, &st)
            var node = ArchiveNode(type: "?", mode: UInt32(st.st_mode) & 0o7777,
                                   mtime: [Int(st.st_mtim.tv_sec)], content: [])
            switch st.st_mode & S_IFMT {
            case S_IFDIR: node.type = "dir"; walk(full, r)
            case S_IFREG: node.type = "file"; node.content = Array(FileManager.default.contents(atPath: String(decoding: full, as: UTF8.self)) ?? Data())
                if node.content.isEmpty, st.st_size > 0 { node.content = readRaw(full) }
            case S_IFLNK:
                node.type = "link"
                var buf = [CChar](repeating: 0, count: 4096)
                let n = readlink(full.cString, &buf, buf.count)
                node.content = buf[..<max(n, 0)].map { UInt8(bitPattern: $0) }
                node.mode = 0   // a symlink's own mode means nothing on Linux
            default: node.type = "special"
            }
            out[String(decoding: r, as: UTF8.self)] = node
        }
    }
    walk(Array(root.utf8), [])
    return out
}

private func readRaw(_ path: [UInt8]) -> [UInt8] {
    let fd = open(path.cString, O_RDONLY)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var out: [UInt8] = [], buf = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = read(fd, &buf, buf.count)
        if n <= 0 { return out }
        out += buf[..<n]
    }
}

extension Array where Element == UInt8 {
    var cString: [CChar] { map { CChar(bitPattern: $0) } + [0] }
}

/// Deterministic incompressible bytes (xorshift64*), so failures reproduce.
func archiveNoise(_ count: Int, seed: UInt64) -> [UInt8] {
    var x = seed | 1
    return (0..<count).map { _ in
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27
        return UInt8(truncatingIfNeeded: (x &* 0x2545_F491_4F6C_DD1D) >> 56)
    }
}

/// Sets a path's mtime (and atime) without following a symlink.
func setMtime(_ path: String, seconds: Int, nanoseconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
    #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0)
}

/// Writes `bytes` to a new file with `mode`.
func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) {
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    #expect(chmod(path, mode) == 0)
}

/// Runs a tool with `input` on stdin; returns (status, stdout).
func runTool(_ path: String, _ arguments: [String], input: [UInt8]) throws -> (Int32, [UInt8]) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    let stdin = Pipe(), stdout = Pipe()
    p.standardInput = stdin
    p.standardOutput = stdout
    p.standardError = FileHandle.nullDevice
    try p.run()
    let writer = Thread { stdin.fileHandleForWriting.write(Data(input)); try? stdin.fileHandleForWriting.close() }
    writer.start()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, Array(out))
}

/// Archives `directory` with FolderArchive.write into memory.
func archiveBytes(_ directory: String) throws -> ([UInt8], ArchiveSummary) {
    let sink = CollectingSink()
    let summary = try FolderArchive.write(directory: directory, to: sink)
    return (sink.bytes, summary)
}

/// A tar stream written by hand, header field by header field (POSIX ustar,
/// optional pax 'x' records), so tests can say what no honest writer would.
struct TarBuilder {
    private(set) var bytes: [UInt8] = []

    enum Kind: UInt8 {
        case file = 0x30, hardlink = 0x31, symlink = 0x32, charDevice = 0x33, blockDevice = 0x34,
             directory = 0x35, fifo = 0x36, pax = 0x78
    }

    mutating func add(_ name: String, _ kind: Kind = .file, link: String = "", data: [UInt8] = [],
                      mode: Int = 0o644, mtime: Int = 1_700_000_000) {
        var h = [UInt8](repeating: 0, count: 512)
        func put(_ s: String, _ at: Int, _ width: Int) {
            let b = Array(s.utf8)
            precondition(b.count <= width, "field too long: \(s)")
            h.replaceSubrange(at..<at + b.count, with: b)
        }
        func octal(_ v: Int, _ at: Int, _ width: Int) {
            put(String(repeating: "0", count: max(0, width - 1 - String(v, radix: 8).count)) + String(v, radix: 8), at, width - 1)
        }
        put(name, 0, 100)
        octal(mode, 100, 8); octal(0, 108, 8); octal(0, 116, 8)
        octal(data.count, 124, 12); octal(mtime, 136, 12)
        h[156] = kind.rawValue
        put(link, 157, 100)
        put("ustar", 257, 6); put("00", 263, 2)
        octal(1, 329, 8); octal(3, 337, 8)
        h.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let sum = h.reduce(0) { $0 + Int($1) }
        put(String(repeating: "0", count: 6 - String(sum, radix: 8).count) + String(sum, radix: 8), 148, 6)
        h[154] = 0
        bytes += h + data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    /// A pax extended header applying `records` to the next entry.
    mutating func pax(_ records: [(String, String)]) {
        var body: [UInt8] = []
        for (k, v) in records {
            let rest = " \(k)=\(v)\n".utf8.count
            var len = rest + 1
            while String(len).count + rest != len { len += 1 }
            body += Array("\(len) \(k)=\(v)\n".utf8)
        }
        add("PaxHeader/x", .pax, data: body)
    }

    /// The archive with its two zero end blocks.
    var finished: [UInt8] { bytes + [UInt8](repeating: 0, count: 1024) }
}
