import Foundation
import Testing
import System
@testable import VaultCore

/// Plaintext written where the user says: nameless until complete, and the
/// registry of named partial outputs that the next command erases.
@Suite struct PlaintextOutputTests {
    let t = TempVault()
    var state: String { t.dir + "/state" }

    @Test func aNewFileHasNoNameUntilCommitted() throws {
        let target = t.dir + "/out.bin"
        let file = try NewPlaintextFile(at: target, partials: PartialOutputs(stateDirectory: state))
        #expect(file.partialPath == nil, "this file system has O_TMPFILE")
        try [UInt8](repeating: 7, count: 100_000).withUnsafeBytes { try file.file.write($0) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.dir) == [], "a name exists before the commit")
        try file.commit()
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data(repeating: 7, count: 100_000))
        let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aTargetTakenMeanwhileIsNeverOverwritten() throws {
        let target = t.dir + "/out.bin"
        let file = try NewPlaintextFile(at: target, partials: nil)
        try [1, 2, 3].withUnsafeBytes { try file.file.write($0) }
        FileManager.default.createFile(atPath: target, contents: Data([9]))
        #expect(throws: VaultError.alreadyExists(path: target)) { try file.commit() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data([9]))
        #expect(throws: VaultError.alreadyExists(path: target)) { try NewPlaintextFile(at: target, partials: nil) }
    }

    /// Records of processes that are gone are erased with their outputs;
    /// a live process's are kept; a record that names a path without the
    /// partial marker is dropped without touching that path.
    @Test func abandonedPartialOutputsAreErased() throws {
        let partials = PartialOutputs(stateDirectory: state)
        let dead = t.dir + "/report.pdf.partial-0123"
        let live = t.dir + "/tree.partial-4567"
        let bystander = t.dir + "/important.txt"
        for p in [dead, bystander] { FileManager.default.createFile(atPath: p, contents: Data("plaintext".utf8)) }
        try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: false)
        let liveRecord = try partials.record(live)
        _ = try partials.record(t.dir + "/another.partial-89")   // a second record in the same directory
        // Records as a process that has exited would have left them.
        let records = state + "/partial"
        let gone = Syscall.processID &+ 1_000_000
        try Data(dead.utf8).write(to: URL(fileURLWithPath: records + "/\(gone)-1-aa"))
        try Data(bystander.utf8).write(to: URL(fileURLWithPath: records + "/\(gone)-1-bb"))

        let (erased, failed) = partials.eraseAbandoned()
        #expect(erased == [dead] && failed.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: bystander), "a record without the marker aimed the eraser")
        #expect(FileManager.default.fileExists(atPath: live), "a live process's output was erased")
        #expect(try FileManager.default.contentsOfDirectory(atPath: records).count == 2)
        liveRecord.remove()
        #expect(try FileManager.default.contentsOfDirectory(atPath: records).count == 1)
    }
}
