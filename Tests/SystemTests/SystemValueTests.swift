import Testing
@testable import System

/// The syscall layer's value types: dates without libc, paths as bytes.
@Suite struct SystemValueTests {
    @Test func utcTimeIsTheCivilDate() {
        let t = UTCTime(1_767_225_599)
        #expect([t.year, t.month, t.day, t.hour, t.minute, t.second] == [2025, 12, 31, 23, 59, 59])
        let leap = UTCTime(951_782_400)  // 2000-02-29
        #expect([leap.year, leap.month, leap.day] == [2000, 2, 29])
        let before = UTCTime(-86_400)
        #expect([before.year, before.month, before.day] == [1969, 12, 31])
        #expect(UTCTime.pad(7, 3) == "007" && UTCTime.pad(1234, 2) == "1234")
    }

    /// A path that is not UTF-8 is still shown, byte by byte, so the user
    /// can tell which file is meant.
    @Test func pathsAreBytesShownReadably() {
        let p = FilePath(bytes: [0x61, 0xff, 0x2f, 0xc3, 0xa9])
        #expect(p.string == nil)
        #expect(p.description == "a\\xFF/é")
        #expect(FilePath("dir").appending("x").description == "dir/x")
    }
}
