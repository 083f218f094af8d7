// libFuzzer target: the folder-restore path on hostile tar/pax input. Each
// input is extracted into a fresh directory under one fuzz root, which must
// then hold the complete destination or nothing (no ".partial-…", nothing
// escaped next to it); then the input is listed. Built by `make fuzz`.
import Foundation
import VaultCodecs

private final class Input: ByteStream {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, bytes.count - offset, 4093)   // odd sizes: reads cross headers
        if n > 0 { buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}

/// The input with every header's checksum made right, walking headers by
/// their size fields, so mutations reach past libarchive's checksum test
/// (libarchive is not instrumented, so the fuzzer cannot learn it).
private func withChecksumsFixed(_ input: UnsafeRawBufferPointer) -> [UInt8] {
    var b = Array(input), at = 0
    while at + 512 <= b.count, b[at..<at + 512].contains(where: { $0 != 0 }) {   // a zero block ends the archive
        let size = b[at + 124..<at + 136].prefix { (0x30...0x37).contains($0) }.reduce(0) { $0 &* 8 &+ Int($1 - 0x30) }
        b.replaceSubrange(at + 148..<at + 156, with: repeatElement(0x20, count: 8))
        let sum = b[at..<at + 512].reduce(0) { $0 + Int($1) }
        b.replaceSubrange(at + 148..<at + 155, with: Array(String(sum, radix: 8).leftPadded(6).utf8) + [0])
        guard size >= 0, size < b.count else { break }
        at += 512 + (size + 511) / 512 * 512
    }
    return b
}

private extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

/// Makes the directories under `path` writable (a restored 0500 directory
/// would keep its contents), never touching what a symlink points at.
private func makeWritable(_ path: String) {
    var st = stat()
    guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return }
    _ = chmod(path, 0o700)
    for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] { makeWritable(path + "/" + name) }
}

private let root = NSTemporaryDirectory() + "/fuzz-archive-\(getpid())"
private let removeRootAtExit: Void = { atexit { _ = rmdir(root) } }()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchive(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let fm = FileManager.default
    _ = removeRootAtExit
    try? fm.createDirectory(atPath: root + "/case", withIntermediateDirectories: true)
    let fixed = withChecksumsFixed(bytes)
    let restored = fixed.withUnsafeBytes { (try? FolderArchive.extract(from: Input($0), into: root + "/case/out")) != nil }
    let left = (try? fm.contentsOfDirectory(atPath: root + "/case")) ?? ["?"]
    precondition(left == (restored ? ["out"] : []), "extraction left \(left)")
    precondition((try? fm.contentsOfDirectory(atPath: root)) == ["case"], "an entry escaped the destination")
    makeWritable(root + "/case")
    try? fm.removeItem(atPath: root + "/case")
    _ = try? FolderArchive.list(from: Input(bytes))
    return 0
}
