import Foundation
import Testing
import System
@testable import VaultCore

/// Error paths a `try?` used to hide (issue 39), driven through the syscall
/// layer's test-only faults (System/SyscallFaults.swift): where the answer
/// keeps or deletes data, a failure to look (EACCES, EIO) is never read as
/// "gone", "ours", "missing" or "does not open". Each test also shows the
/// same call without the fault, so it is the fault that makes the difference.
@Suite struct SyscallFaultTests {
    let t = TempVault()

    /// A scratch directory of `vault open` whose owner file cannot be read
    /// is kept. It used to read as "no owner file yet" and, older than a
    /// minute, was erased with the plaintext an editor was working on.
    @Test func aScratchDirectoryWhoseOwnerCannotBeReadIsKept() throws {
        let base = t.dir + "/scratch"
        let scratch = try Scratch(base: base)   // owned by this process, which runs
        try Syscall.setModeAndTime(scratch.path, mode: 0o700, modified: Syscall.now() - 3600)
        SyscallFaults.failing(.open, on: scratch.path + "/owner", with: .ioError) {
            #expect(Scratch.removeAbandoned(base: base).erased == 0)
        }
        #expect(FileManager.default.fileExists(atPath: scratch.path + "/owner"))
        #expect(Scratch.removeAbandoned(base: base).erased == 0, "its owner runs")
        // One whose owner is gone goes, as before.
        let gone = base + "/" + Scratch.prefix + "gone"
        try FileManager.default.createDirectory(atPath: gone, withIntermediateDirectories: false)
        try Data("\(Syscall.processID &+ 1_000_000) 1\n".utf8).write(to: URL(fileURLWithPath: gone + "/owner"))
        #expect(Scratch.removeAbandoned(base: base).erased == 1)
        #expect(!FileManager.default.fileExists(atPath: gone))
    }

    /// A process whose /proc entry cannot be read (EACCES under hidepid)
    /// counts as running: what it left is not erased on a guess.
    @Test func aProcessThatCannotBeLookedAtCountsAsRunning() {
        let pid = Syscall.processID &+ 1_000_000   // no such process
        #expect(!Syscall.processRuns(pid, since: 1))
        SyscallFaults.failing(.open, on: "/proc/\(pid)/stat", with: .permissionDenied) {
            #expect(Syscall.processRuns(pid, since: 1))
        }
    }

    /// A partial output's record that cannot be read is kept for the next
    /// command, with its output; it used to be dropped, leaving the
    /// plaintext behind for good.
    @Test func aPartialOutputRecordThatCannotBeReadIsKept() throws {
        let partials = PartialOutputs(stateDirectory: t.dir + "/state")
        _ = try partials.record(t.dir + "/x.partial-1")   // makes the records' directory
        let output = t.dir + "/report.pdf.partial-0123"
        FileManager.default.createFile(atPath: output, contents: Data("plaintext".utf8))
        let record = t.dir + "/state/partial/\(Syscall.processID &+ 1_000_000)-1-aa"
        try Data(output.utf8).write(to: URL(fileURLWithPath: record))
        SyscallFaults.failing(.open, on: record, with: .ioError) {
            #expect(partials.eraseAbandoned().erased.isEmpty)
        }
        #expect(FileManager.default.fileExists(atPath: record) && FileManager.default.fileExists(atPath: output))
        #expect(partials.eraseAbandoned().erased == [output])
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// `check` reports a blob missing only when the kernel says so: one it
    /// cannot look at stops the check with that error.
    @Test func aBlobThatCannotBeLookedAtIsNotReportedMissing() throws {
        try t.create()
        let e = try t.add("doc", [1, 2, 3])
        try t.unlock().absorbInbox()
        let blob = t.root + "/items/" + e.blobName
        try FileManager.default.removeItem(atPath: blob)
        let v = try t.unlock()
        try SyscallFaults.failing(.stat, on: blob, with: .permissionDenied) {
            #expect(throws: SystemError(operation: .stat, path: blob, errno: .permissionDenied)) {
                try v.check(readData: false, repair: false)
            }
        }
        #expect(try v.check(readData: false, repair: false).problems == [.init(item: "doc", kind: .blobMissing)])
    }

    /// Prune pins the packs of every snapshot waiting in the inbox. An
    /// envelope it cannot read might be one: prune stops before it decides
    /// anything. It used to read as "does not open" and go on without it.
    @Test func pruneStopsAtAnEnvelopeItCannotRead() throws {
        let v = try t.create()
        let e = try t.add("doc", [1, 2, 3])
        let envelope = t.root + "/inbox/" + e.blobName + ".env"
        var decided = false
        try SyscallFaults.failing(.open, on: envelope, with: .ioError) {
            #expect(throws: VaultError.inboxUnreadable(file: e.blobName + ".env", errno: .ioError)) {
                try v.pruning { _ in decided = true }
            }
        }
        #expect(!decided)
        #expect(t.files("inbox").contains(e.blobName + ".env"), "absorb left it waiting")
        try v.pruning { _ in decided = true }
        #expect(decided && v.manifest.entry(named: "doc") != nil)
    }

    /// Who dropped a drop-in in decides whether it may become a version of
    /// the owner's item: an envelope absorb cannot look at stops absorb
    /// (the drop-in waits) rather than count as the owner's own.
    @Test func absorbStopsWhenItCannotTellWhoDroppedIn() throws {
        let v = try t.create()
        let e = try t.add("doc", [1, 2, 3])
        let envelope = t.root + "/inbox/" + e.blobName + ".env"
        try SyscallFaults.failing(.stat, on: envelope, with: .ioError) {
            #expect(throws: SystemError(operation: .stat, path: envelope, errno: .ioError)) { try v.absorbInbox() }
        }
        #expect(v.manifest.entry(named: "doc") == nil && t.files("inbox").contains(e.blobName + ".env"))
        #expect(try v.absorbInbox().absorbed == ["doc"])
    }
}
