import Foundation
import Testing

/// Issue 43, the second week with vault: the items done so far, each on
/// the built binary.
@Suite("The second week")
struct SecondWeekTests {
    /// Item 6: any prefix one snapshot alone has names it, as git takes a
    /// commit's (before: under 4 characters read "no snapshot '1c1'").
    @Test func aShortUniqueSnapshotPrefixNamesIt() throws {
        let f = try BackupFixture()
        try f.write("a", Array("in a snapshot\n".utf8))
        let id = try #require(try f.backup()["snapshot"] as? String)
        for n in [1, 2, 3] {
            let ls = try f.snapshots(["ls", String(id.prefix(n))])
            #expect(ls.status == 0 && ls.stdoutText.contains("src/a"), "\(n): \(ls.stderr)")
        }
        let none = try f.snapshots(["ls", "xyz"])
        #expect(none.status != 0 && none.stderr.contains("no snapshot 'xyz'"), "\(none.stderr)")
    }

    /// Item 13: a push with nothing new says so, not "pushed 0 files, 0 B
    /// in 0.34 s (0 B/s)".
    @Test func aPushWithNothingNewSaysSo() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", try v.write("a.txt", Array("a\n".utf8))]).status == 0)
        #expect(try v.run(["remote", "add", "usb", v.path + "/remote"]).status == 0)
        let first = try v.run(["push"])
        #expect(first.status == 0 && first.stderr.contains("pushed to 'usb': "), "\(first.stderr)")
        let again = try v.run(["push"])
        #expect(again.status == 0 && again.stderr.contains("'usb' has everything this vault has: nothing to push"), "\(again.stderr)")
        #expect(!again.stderr.contains("pushed to"), "\(again.stderr)")
    }
}
