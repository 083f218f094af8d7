import Foundation
import Testing
@testable import VaultCore

/// A restore of many items (OutputGroups): no file has its name before its
/// group is durable; a full group is named at once, in order; one whose
/// name was taken meanwhile is reported, the others are named.
@Suite struct OutputGroupsTests {
    @Test func filesAreNamedAGroupAtATime() throws {
        let t = TempVault()
        try t.create()
        let items = OutputGroups.groupSize + 2
        let files = (0..<items).map { ("f\($0)", Array("content \($0)".utf8)) }
        try t.addBatch(Array(files.prefix(100)))   // a batch envelope holds at most 128
        try t.addBatch(Array(files.dropFirst(100)))
        let v = try t.unlock()
        try v.absorbInbox()
        let out = t.dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let groups = OutputGroups(directory: out)
        var named: [String] = [], failures: [String] = []
        func visible() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix("f") }.count }
        for i in 0..<items {
            let name = "f\(i)"
            let output = try v.exportUncommitted(try v.entry(named: name), to: out + "/" + name)
            // Taken after it was written, before it is named.
            if i == items - 1 { FileManager.default.createFile(atPath: out + "/" + name, contents: Data("taken".utf8)) }
            groups.add(output) { error in if error == nil { named.append(name) } else { failures.append(name) } }
            if i == OutputGroups.groupSize - 2 {
                #expect(try visible() == 0, "nothing is named before its group is durable")
            }
        }
        #expect(named == (0..<OutputGroups.groupSize).map { "f\($0)" }, "a full group is named at once, in order")
        #expect(groups.count == 2)
        try groups.finish()
        #expect(named.count == items - 1 && failures == ["f\(items - 1)"])
        #expect(try visible() == items)
        #expect(FileManager.default.contents(atPath: out + "/f3") == Data("content 3".utf8))
        #expect(FileManager.default.contents(atPath: out + "/f\(items - 1)") == Data("taken".utf8), "never over an existing file")
    }
}
