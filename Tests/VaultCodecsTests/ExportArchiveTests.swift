import Foundation
import Testing
@testable import VaultCodecs

/// The export writer of `snapshots dump --archive`: a file's data must be
/// exactly its size (a hostile snapshot's entry that claims otherwise is
/// refused, never padded), and what it writes, tar and unzip read.
@Suite struct ExportArchiveTests {
    func entry(_ path: String, _ kind: ExportArchive.Kind, size: UInt64 = 0) -> ExportArchive.Entry {
        .init(path: Array(path.utf8), kind: kind, size: size, permissions: 0o640, modified: (1_700_000_000, 5), user: 1000, group: 100)
    }

    @Test func dataMustBeExactlyTheSize() throws {
        for format in ExportArchive.Format.allCases {
            let long = try ExportArchive(format: format, to: CollectingSink())
            try long.begin(entry("f", .file, size: 3))
            #expect(throws: ExportArchive.ExportError.sizeDisagrees) { try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try long.write($0) } }
            let short = try ExportArchive(format: format, to: CollectingSink())
            try short.begin(entry("f", .file, size: 3))
            try [UInt8](repeating: 1, count: 2).withUnsafeBytes { try short.write($0) }
            #expect(throws: ExportArchive.ExportError.sizeDisagrees) { try short.finish() }
        }
    }

    @Test(arguments: ExportArchive.Format.allCases)
    func theToolsReadIt(format: ExportArchive.Format) throws {
        let sink = CollectingSink()
        let a = try ExportArchive(format: format, to: sink)
        try a.begin(entry("d", .directory)); try a.finish()
        try a.begin(entry("d/f", .file, size: 5))
        try Array("hello".utf8).withUnsafeBytes { try a.write($0) }
        try a.finish()
        try a.begin(entry("d/l", .symlink(target: Array("f".utf8)))); try a.finish()
        try a.close()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(sink.bytes).write(to: URL(fileURLWithPath: dir + "/a"))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", format == .tar ? "cd \(dir) && tar -xf a" : "cd \(dir) && unzip -q a"]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(try String(contentsOfFile: dir + "/d/f", encoding: .utf8) == "hello")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir + "/d/l") == "f")
        let mode = (try FileManager.default.attributesOfItem(atPath: dir + "/d/f")[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o640)
    }
}
