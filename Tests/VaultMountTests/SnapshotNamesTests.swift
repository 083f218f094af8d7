import Testing
@testable import VaultMount

/// The names `snapshots/` gives hosts and snapshots: whatever a dropper
/// wrote as a host, a name a directory can hold; times sortable and
/// clamped to four-digit years.
@Suite struct SnapshotNamesTests {
    @Test func hostsBecomeSafeNames() {
        #expect(SnapshotNames.host("laptop") == Array("laptop".utf8))
        #expect(SnapshotNames.host("a/b\u{0}c") == Array("a_b_c".utf8))
        for bad in ["", ".", ".."] { #expect(SnapshotNames.host(bad) == Array(("_" + bad).utf8)) }
        #expect(SnapshotNames.host(String(repeating: "x", count: 300)).count == 200)
    }

    @Test func timesAreSortableUTCClampedToFourDigitYears() {
        #expect(SnapshotNames.time(0) == "1970-01-01T00-00-00Z")
        #expect(SnapshotNames.time(1_767_225_600) == "2026-01-01T00-00-00Z")
        #expect(SnapshotNames.time(-1) == "1969-12-31T23-59-59Z")
        #expect(SnapshotNames.time(.max) == "9999-12-31T23-59-59Z")
        #expect(SnapshotNames.time(.min) == "0000-01-01T00-00-00Z")
    }

    @Test func pathsSplitIntoNamesADirectoryCanHold() {
        #expect(SnapshotNames.components(Array("a/./b//c".utf8)) == [Array("a".utf8), Array("b".utf8), Array("c".utf8)])
        #expect(SnapshotNames.components(Array("a/../b".utf8)) == nil)
        #expect(SnapshotNames.components([0x61, 0, 0x62]) == nil)
        #expect(SnapshotNames.components(Array(repeating: 0x61, count: 256)) == nil)
        #expect(SnapshotNames.components([]) == [])
    }
}
