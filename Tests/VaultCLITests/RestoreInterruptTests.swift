import Foundation
import Testing

/// SIGTERM (as Ctrl-C) while `restore` extracts a folder: no plaintext,
/// partial or whole, is left in the target directory.
@Suite struct RestoreInterruptTests {
    @Test func interruptedFolderRestoreLeavesNothing() throws {
        let v = try VaultFixture()
        try FileManager.default.createDirectory(atPath: v.path + "/tree", withIntermediateDirectories: false)
        for i in 0..<4 { try v.write("tree/part\(i).bin", randomBytes(24 << 20)) }
        #expect(try v.add(["add", "tree"]).status == 0)
        #expect(try v.run(["list"]).status == 0)   // absorbed, so restore does only the extraction
        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        var interrupted = 0
        for _ in 0..<3 where interrupted == 0 {
            let p = try Background(["--vault", v.dir, "--password-file", v.passwordFile, "restore", "tree", "--to", out],
                                   environment: v.environment(), cwd: v.path)
            defer { p.killGroup() }
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, p.poll() == nil {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
                if names.contains(where: { $0.contains(".partial-") }) { kill(p.pid, SIGTERM); break }
                usleep(500)
            }
            let status = p.wait(timeout: 20)
            let names = try FileManager.default.contentsOfDirectory(atPath: out)
            if status == 128 + SIGTERM {   // it died by the signal, after its cleanup
                #expect(names == [], "left behind: \(names)")
                interrupted += 1
            } else {
                #expect(status == 0, "\(p.stderr)")   // finished first: then it is whole; try again
                try FileManager.default.removeItem(atPath: out + "/tree")
            }
        }
        #expect(interrupted == 1, "never caught the restore mid-way")
    }
}
