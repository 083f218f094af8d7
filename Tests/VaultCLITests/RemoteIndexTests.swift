import Foundation
import Testing
import TestSupport
import VaultCore

/// Folder indexes on a remote (docs/FORMAT.md, "Remote copy", "Folder
/// indexes"; issue 45: a pulled folder's first mount made a pass over its
/// whole archive). Real binaries, a HOME each, one plain-directory remote,
/// which the tests also play as a hostile storage.
@Suite("Folder indexes on a remote", .serialized)
struct RemoteIndexTests {
    typealias Machine = MultiMachineTests.Machine

    /// The laptop adds a 3 MiB folder (its dropper's index is kept at the
    /// `list`) and pushes; the desktop's index is the one from the remote.
    static func setUp() throws -> (laptop: Machine, desktop: Machine, remote: String, index: String) {
        let (m, remote) = try MultiMachineTests.machines(2)
        let folder = m[0].v.path + "/Documents"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try Data("first\n".utf8).write(to: URL(fileURLWithPath: folder + "/a.txt"))
        try Data(BackupFixture.random(3 << 20, seed: 81)).write(to: URL(fileURLWithPath: folder + "/z.bin"))
        #expect(try m[0].bare(["add", folder]).status == 0)
        #expect(try m[0].run(["list"]).status == 0)
        let kept = try FileManager.default.contentsOfDirectory(atPath: m[0].v.dir + "/indexes")
        #expect(kept.count == 1, "\(kept)")
        let pushed = try m[0].run(["push"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let there = (try? FileManager.default.contentsOfDirectory(atPath: remote + "/indexes")) ?? []
        #expect(there == kept, "the push sent the laptop's index")
        return (m[0], m[1], remote, try #require(kept.first))
    }

    /// Flips a byte in the middle chunk of the folder's blob (the largest
    /// in items/): a pass over the archive then fails, a read by the index
    /// of a file in the first chunk does not.
    static func damageTheFolder(_ m: Machine) throws {
        let items = m.v.dir + "/items"
        func size(_ name: String) -> Int {
            (try? FileManager.default.attributesOfItem(atPath: items + "/" + name)[.size] as? Int) ?? 0
        }
        let blob = try #require(try FileManager.default.contentsOfDirectory(atPath: items).max { size($0) < size($1) })
        let h = try #require(FileHandle(forUpdatingAtPath: items + "/" + blob))
        defer { try? h.close() }
        let chunk = (1 << 20) + 16
        let offset = UInt64(36 + 2 * chunk + 100)   // inside chunk 2 of 4
        try h.seek(toOffset: offset)
        let byte = try #require(try h.read(upToCount: 1))
        try h.seek(toOffset: offset)
        try h.write(contentsOf: Data([byte[0] ^ 1]))
    }

    @Test func aPulledOrClonedFolderListsFromTheIndexItsAdderKept() throws {
        let (laptop, desktop, remote, index) = try Self.setUp()
        let pull = try desktop.run(["pull"])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(FileManager.default.contents(atPath: desktop.v.dir + "/indexes/" + index)
                == FileManager.default.contents(atPath: remote + "/indexes/" + index), "fetched as it was")
        try Self.damageTheFolder(desktop)
        let got = try desktop.run(["get", "Documents/a.txt"])
        #expect(got.status == 0 && got.stdoutText == "first\n", "read by the index, no pass: \(got.stderr)")
        // A clone takes it too.
        let dir = laptop.v.path + "/cloned"
        let clone = try laptop.run(["clone", "origin", dir])
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/indexes/" + index))
    }

    /// What a remote may put under `indexes/` costs a pass at worst: junk
    /// under the folder's name, or another folder's index under it, is not
    /// kept (the folder still reads, by the pass); a file over the bound is
    /// not downloaded; a name no folder item has is deleted by a pull once
    /// it has seen it unchanged for a day, and said so.
    @Test func whatAHostileRemotePutsThereCostsAPassAtMost() throws {
        let (laptop, desktop, remote, index) = try Self.setUp()
        let good = try #require(FileManager.default.contents(atPath: remote + "/indexes/" + index))
        // Another folder, whose index then stands under the first's name.
        let other = laptop.v.path + "/Other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        try Data(BackupFixture.random(2 << 20, seed: 82)).write(to: URL(fileURLWithPath: other + "/o.bin"))
        for _ in 0..<2 { try Data("x".utf8).write(to: URL(fileURLWithPath: other + "/o\(UUID().uuidString).txt")) }
        #expect(try laptop.bare(["add", other]).status == 0)
        #expect(try laptop.run(["list"]).status == 0)
        #expect(try laptop.run(["push"]).status == 0)
        let otherName = try #require(Set(try FileManager.default.contentsOfDirectory(atPath: remote + "/indexes")).subtracting([index]).first)
        let otherIndex = try #require(FileManager.default.contents(atPath: remote + "/indexes/" + otherName))
        let junkName = String(repeating: "ab", count: 16), hugeName = String(repeating: "cd", count: 16)

        var flipped = Array(good)
        flipped[40] ^= 1
        for (round, bytes) in [flipped, Array(otherIndex)].enumerated() {
            try Data(bytes).write(to: URL(fileURLWithPath: remote + "/indexes/" + index))
            try Data("junk".utf8).write(to: URL(fileURLWithPath: remote + "/indexes/" + junkName))
            #expect(FileManager.default.createFile(atPath: remote + "/indexes/" + hugeName, contents: nil))
            let huge = try #require(FileHandle(forWritingAtPath: remote + "/indexes/" + hugeName))
            try huge.truncate(atOffset: 300 << 20)   // sparse: listed over the bound
            try huge.close()
            try? FileManager.default.removeItem(atPath: desktop.v.dir + "/indexes/" + index)
            let pull = try desktop.run(["pull"])
            #expect(pull.status == 0, "round \(round): \(pull.stderr)")
            #expect(!FileManager.default.fileExists(atPath: desktop.v.dir + "/indexes/" + index), "round \(round): not kept")
            #expect(!FileManager.default.fileExists(atPath: desktop.v.dir + "/indexes/" + hugeName))
            let got = try desktop.run(["get", "Documents/a.txt"])
            #expect(got.status == 0 && got.stdoutText == "first\n", "round \(round), by the pass: \(got.stderr)")
        }
        #expect(FileManager.default.contents(atPath: desktop.v.dir + "/indexes/" + otherName) == otherIndex)

        // The two names of no folder item: strays, deleted once a day old.
        let strays = desktop.v.dir + "/remote.origin.strays"
        let record = try String(contentsOfFile: strays, encoding: .utf8)
        #expect(record.contains(Hex.encode(Array("indexes/\(junkName)".utf8))) && record.contains(Hex.encode(Array("indexes/\(hugeName)".utf8))))
        let now = Int(Date().timeIntervalSince1970)
        try (record.split(separator: "\n").map { line -> String in
            let f = line.split(separator: "\t", maxSplits: 1)
            return f.count == 2 && Int(f[0]) != nil ? "\(now - 2 * 86_400)\t\(f[1])" : String(line)
        }.joined(separator: "\n") + "\n").write(toFile: strays, atomically: true, encoding: .utf8)
        let tidied = try desktop.run(["pull"])
        #expect(tidied.stderr.contains("deleted 2 files from the remote's indexes/ that no folder item had named for a day"), "\(tidied.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: remote + "/indexes")) == [index, otherName])
    }

    /// An item removed on the laptop: the desktop's pull forgets its index
    /// here (so its push does not send it back), and a later pull deletes
    /// it from the remote once no folder item has named it for a day.
    @Test func aRemovedFoldersIndexLeavesBothSides() throws {
        let (laptop, desktop, remote, index) = try Self.setUp()
        #expect(try desktop.run(["pull"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: desktop.v.dir + "/indexes/" + index))
        #expect(try laptop.run(["remove", "Documents"]).status == 0)
        #expect(try laptop.run(["push"]).status == 0)
        #expect(try desktop.run(["pull"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: desktop.v.dir + "/indexes/" + index))
        #expect(try desktop.run(["push"]).status == 0)
        #expect(try desktop.run(["pull"]).status == 0)
        let strays = desktop.v.dir + "/remote.origin.strays"
        #expect(try String(contentsOfFile: strays, encoding: .utf8).contains(Hex.encode(Array("indexes/\(index)".utf8))))
        #expect(FileManager.default.fileExists(atPath: remote + "/indexes/" + index), "within the day: kept")
    }
}
