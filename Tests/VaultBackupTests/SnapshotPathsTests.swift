import Testing
import VaultBackup

/// Issue 43, item 5: a snapshot's paths in both spellings, one shown.
@Suite struct SnapshotPathsTests {
    let paths = SnapshotPaths([Array("/home/me/Documents".utf8), Array("/srv/data".utf8)])
    func b(_ s: String) -> [UInt8] { Array(s.utf8) }
    func parts(_ s: String) -> [[UInt8]] { s.split(separator: "/").map { Array($0.utf8) } }

    @Test func bothSpellingsNameOneTreePath() {
        #expect(paths.components(b("/home/me/Documents/notes/n.txt")) == parts("Documents/notes/n.txt"))
        #expect(paths.components(b("Documents/notes/n.txt")) == parts("Documents/notes/n.txt"))
        #expect(paths.components(b("/home/me/Documents/")) == parts("Documents"))
        #expect(paths.components(b("./Documents/./notes")) == parts("Documents/notes"))
        // Not under a backed-up path: the tree's own, rooted.
        #expect(paths.components(b("/Documents/notes")) == parts("Documents/notes"))
        // A longer name that only starts like a path is not under it.
        #expect(paths.components(b("/home/me/DocumentsX/a")) == parts("home/me/DocumentsX/a"))
    }

    @Test func theShownSpellingIsTheBackedUpPath() {
        #expect(paths.display(parts("Documents/notes/n.txt")) == b("/home/me/Documents/notes/n.txt"))
        #expect(paths.display(parts("data")) == b("/srv/data"))
        #expect(paths.display(parts("unknown/x")) == b("/unknown/x"))
    }

    @Test func anchoredPatternsMapOnlyALiteralPrefix() {
        #expect(paths.pattern(b("/home/me/Documents/*.pdf")) == b("/Documents/*.pdf"))
        #expect(paths.pattern(b("/home/me/Documents")) == b("/Documents"))
        #expect(paths.pattern(b("/Documents/*.pdf")) == b("/Documents/*.pdf"))
        #expect(paths.pattern(b("*.pdf")) == b("*.pdf"))
        #expect(paths.pattern(b("notes/*.txt")) == b("notes/*.txt"))
        #expect(paths.pattern(b("/home/*/Documents/x")) == b("/home/*/Documents/x"))
    }
}
