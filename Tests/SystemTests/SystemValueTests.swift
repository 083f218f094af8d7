import Testing
@testable import System
#if canImport(Glibc)
import Glibc
#endif

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

    /// `now` is never earlier than the modification time of a file written
    /// before it: graces and ages are counted from file timestamps. With
    /// time(2), about one file in 280 had a timestamp a second ahead.
    @Test func nowIsNeverBeforeAFileWrittenBeforeIt() throws {
        let path = "/tmp/vault-now-\(getpid())"
        defer { unlink(path) }
        var ahead = 0
        for _ in 0..<5000 {
            let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
            try #require(fd >= 0)
            _ = write(fd, "x", 1)
            var st = stat()
            _ = fstat(fd, &st)
            close(fd)
            if Int64(st.st_mtim.tv_sec) > Syscall.now() { ahead += 1 }
        }
        #expect(ahead == 0)
    }

    /// A path that is not UTF-8 is still shown, byte by byte, so the user
    /// can tell which file is meant.
    @Test func pathsAreBytesShownReadably() {
        let p = FilePath(bytes: [0x61, 0xff, 0x2f, 0xc3, 0xa9])
        #expect(p.string == nil)
        #expect(p.description == "a\\xFF/é")
        #expect(FilePath("dir").appending("x").description == "dir/x")
    }

    /// The environment as getenv sees it: a name given twice has its first
    /// value, an entry without `=` or without a name is no variable, a
    /// value may hold `=`.
    @Test func theEnvironmentIsReadAsGetenvReadsIt() {
        let entries = ["HOME=/home/a", "NOEQUALS", "HOME=/home/b", "EMPTY=", "X=a=b", "=anonymous"]
        var pointers: [UnsafeMutablePointer<CChar>?] = entries.map { strdup($0) } + [nil]
        defer { for p in pointers { free(p) } }
        let env = pointers.withUnsafeMutableBufferPointer { Syscall.environment($0.baseAddress!) }
        #expect(env == ["HOME": "/home/a", "EMPTY": "", "X": "a=b"])
        // This process's own: what getenv gives for each name.
        let mine = Syscall.environment()
        #expect(!mine.isEmpty && mine.allSatisfy { name, value in getenv(name).map { String(cString: $0) } == value })
    }
}

/// Who made a scratch name: this process runs, a stamp with another start
/// time (a reused pid) does not, and names parse only with both fields.
@Suite struct ProcessStampTests {
    @Test func aStampKnowsWhetherItsProcessRuns() throws {
        let me = try ProcessStamp.current()
        #expect(me.isRunning)
        #expect(!ProcessStamp(pid: me.pid, start: me.start &+ 1).isRunning)
        #expect(ProcessStamp(fields: me.text().split(separator: "-")) == me)
        #expect(ProcessStamp(fields: ["12"]) == nil && ProcessStamp(fields: ["x", "1"]) == nil)
        #expect(me.text(separator: " ") == "\(me.pid) \(me.start)")
    }
}
