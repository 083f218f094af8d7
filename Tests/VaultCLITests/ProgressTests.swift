import Foundation
import Testing

/// Progress lines appear on a terminal, never in pipes or with --quiet.
@Suite struct ProgressTests {
    func vaultWithBigItem() throws -> VaultFixture {
        let v = try VaultFixture()
        try v.write("big.bin", (0..<(64 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        #expect(try v.add(["add", "big.bin"]).status == 0)
        return v
    }

    @Test func onATerminalGetShowsProgressAndWipesIt() throws {
        let v = try vaultWithBigItem()
        // Into a pipe whose reader starts a second late: the get outlasts
        // the half second before a progress line is drawn, however fast
        // the machine (stderr is the terminal; stdout is not).
        let r = try PTYDriver.run(["-c", "\"$0\" --vault \"$1\" --password-file \"$2\" get big.bin | { sleep 1; cat > /dev/null; }",
                                   CLIHarness.binary, v.dir, v.passwordFile],
                                  steps: [], environment: v.environment(), timeout: 60, executable: "/bin/bash")
        #expect(r.exit == 0)
        #expect(r.screen == "", "\(r.transcript.debugDescription)")   // wiped
        #expect(r.transcript.contains("decrypting big.bin: "), "\(r.transcript)")
        #expect(r.transcript.contains(" of 64 MiB"))
        // No escape sequences: only carriage returns redraw the line.
        #expect(!r.transcript.contains("\u{1B}"))
    }

    @Test func quietOrPipedShowsNone() throws {
        let v = try vaultWithBigItem()
        let quiet = try PTYDriver.run(["--vault", v.dir, "--password-file", v.passwordFile, "--quiet", "get", "big.bin",
                                       "-o", v.path + "/q.bin"], steps: [], environment: v.environment(), timeout: 60)
        #expect(quiet.exit == 0)
        #expect(!quiet.transcript.contains("decrypting"))
        let piped = try v.run(["get", "big.bin", "-o", v.path + "/p.bin"])
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("decrypting"))
    }
}
