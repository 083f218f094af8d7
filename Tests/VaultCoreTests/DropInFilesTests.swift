import Foundation
import Synchronization
import System
import Testing
@testable import VaultCore

/// What a many-file add is built on: files with no name until they are
/// whole (TempFile's nameless) and the parallel loop that seals and opens
/// envelopes (parallelMap). Real files in a real temporary directory.
@Suite("Drop-in files")
struct DropInFilesTests {
    static func directory() throws -> String {
        let dir = NSTemporaryDirectory() + "dropin-files-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        return dir
    }

    static func write(_ text: String, to temp: TempFile) throws {
        try Array(text.utf8).withUnsafeBytes { try temp.file.write($0) }
    }

    @Test func aNamelessFileHasNoNameUntilItsCommitAndNeverReplaces() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let target = dir + "/a.env"
        do {
            let temp = try TempFile(beside: target, nameless: true)
            try Self.write("whole", to: temp)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
            try temp.commit(to: target, durable: true)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["a.env"])
        #expect(FileManager.default.contents(atPath: target) == Data("whole".utf8))
        // One dropped without its commit leaves nothing, not even a temp name.
        do {
            let temp = try TempFile(beside: dir + "/b.env", nameless: true)
            try Self.write("half", to: temp)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["a.env"])
        // A taken name is refused, and what it holds stays.
        let other = try TempFile(beside: target, nameless: true)
        try Self.write("other", to: other)
        #expect(throws: SystemError.self) { try other.commit(to: target, durable: false) }
        #expect(FileManager.default.contents(atPath: target) == Data("whole".utf8))
    }

    @Test func aNamedFileStillGoesThroughItsTempName() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var announced: String?
        let temp = try TempFile(beside: dir + "/manifest", announce: { announced = $0 })
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(names.count == 1 && names[0].hasPrefix(VaultDirectory.tempPrefix))
        #expect(announced == dir + "/" + names[0])
        try temp.commit(to: dir + "/manifest")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["manifest"])
    }

    @Test(arguments: [0, 1, 2, 7, 1000])
    func parallelMapKeepsTheOrderAndRunsEachIndexOnce(_ count: Int) throws {
        let runs = Mutex([Int](repeating: 0, count: count))
        let out = try parallelMap(count, threads: 4) { i -> Int in
            runs.withLock { $0[i] += 1 }
            return i * i
        }
        #expect(out == (0..<count).map { $0 * $0 })
        #expect(runs.withLock { $0 } == [Int](repeating: 1, count: count))
    }

    struct Failure: Error, Equatable { let index: Int }

    @Test func parallelMapThrowsTheLowestFailingIndexAfterRunningAll() throws {
        let ran = Atomic<Int>(0)
        #expect(throws: Failure(index: 3)) {
            _ = try parallelMap(100, threads: 4) { i -> Int in
                ran.wrappingAdd(1, ordering: .relaxed)
                if i == 3 || i == 70 { throw Failure(index: i) }
                return i
            }
        }
        #expect(ran.load(ordering: .relaxed) == 100)
    }
}
