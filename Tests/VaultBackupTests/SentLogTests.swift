import Foundation
import Testing
import VaultCore
@testable import VaultBackup

/// A `backup --to` host's decision (docs/FORMAT.md, "Host records"): which
/// packs it may name again, from the owner's record and the order it sent
/// things in; and a log that was cut or damaged trusts nothing after the cut.
@Suite("Sent log")
struct SentLogTests {
    static func id(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 16) }
    static func directory() throws -> String { try scratchDirectory("sentlog") }

    @Test func theFourRules() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = try SentLog(directory: dir)
        // Sent in this order: pack 1, snapshot 2, pack 3, snapshot 4, pack 5.
        for n: UInt8 in 1...5 { try log.append(Hex.encode(Self.id(n))) }
        let again = try SentLog(directory: dir)
        // No record: whatever it sent is reused, nothing else.
        #expect(again.presence(of: Self.id(1), record: nil) == .present)
        #expect(again.presence(of: Self.id(9), record: nil) == .gone)
        // The owner took in snapshot 2: pack 1 went up before it, so the
        // record decides it; packs 3 and 5 may still wait in the inbox.
        let record = HostRecord(generation: 3, taken: [Self.id(2)], usable: [Self.id(3)], gone: [Self.id(5)])
        #expect(again.presence(of: Self.id(1), record: record) == .gone, "before the newest taken snapshot, not usable")
        #expect(again.presence(of: Self.id(3), record: record) == .present, "usable")
        #expect(again.presence(of: Self.id(5), record: record) == .gone, "gone wins over sent after")
        let later = HostRecord(generation: 4, taken: [Self.id(2)], usable: [], gone: [])
        #expect(again.presence(of: Self.id(3), record: later) == .present, "sent after snapshot 2: may wait in the inbox")
        let newest = HostRecord(generation: 5, taken: [Self.id(2), Self.id(4)], usable: [], gone: [])
        #expect(again.presence(of: Self.id(3), record: newest) == .gone, "before snapshot 4, which was taken in")
        #expect(again.presence(of: Self.id(5), record: newest) == .present)
        // Another host's snapshots in the record (not in this log) decide nothing.
        let other = HostRecord(generation: 6, taken: [Self.id(7)], usable: [], gone: [])
        #expect(again.presence(of: Self.id(1), record: other) == .present)
    }

    @Test func aDamagedEntryEndsWhatIsTrusted() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = try SentLog(directory: dir)
        for n: UInt8 in 1...3 { try log.append(Hex.encode(Self.id(n))) }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/sent")))
        bytes[8 + 20 + 3] ^= 1   // inside the second entry's id
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/sent"))
        let read = try SentLog(directory: dir)
        #expect(read.presence(of: Self.id(1), record: nil) == .present)
        #expect(read.presence(of: Self.id(2), record: nil) == .gone)
        #expect(read.presence(of: Self.id(3), record: nil) == .gone, "after the damage: not trusted")
        // The next append writes the log anew from what was read, so it is read again.
        try read.append(Hex.encode(Self.id(4)))
        let again = try SentLog(directory: dir)
        #expect(again.presence(of: Self.id(4), record: nil) == .present)
        #expect(again.presence(of: Self.id(3), record: nil) == .gone)
        // A torn last entry: the ones before it stand.
        let torn = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/sent")))
        try Data(torn.dropLast(5)).write(to: URL(fileURLWithPath: dir + "/sent"))
        let cut = try SentLog(directory: dir)
        #expect(cut.presence(of: Self.id(1), record: nil) == .present)
        #expect(cut.presence(of: Self.id(4), record: nil) == .gone)
    }

    @Test func theGenerationItTrusted() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = try SentLog(directory: dir)
        #expect(log.seenGeneration() == nil)
        try log.rememberGeneration(12)
        #expect(log.seenGeneration() == 12)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: dir + "/record-seen"))
        #expect(log.seenGeneration() == 0, "damaged: as if one was read (a missing record is then refused)")
    }
}
