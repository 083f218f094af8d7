import Foundation
import Testing

/// `--limit-upload` and `--limit-download` (issue 44): rclone's own
/// limiter, on a real S3 server. A transfer may be slower than its bound
/// on a busy machine, never faster: only the lower bound is checked, with
/// a wide margin (0.7x the bound's time).
@Suite("Bandwidth limits", .serialized)
struct BandwidthTests {
    static func seconds(_ body: () throws -> CLIHarness.Result) rethrows -> (CLIHarness.Result, Double) {
        let start = Date()
        let r = try body()
        return (r, Date().timeIntervalSince(start))
    }

    @Test func pushAndCloneKeepToTheirLimits() throws {
        let s3 = try SeaweedS3.get()
        let (v, target) = try RemoteTests.populated(s3)  // 3 MB of random bytes and two small items
        let bytes = 3_000_000.0, kib = 1024.0
        let (push, up) = try Self.seconds { try v.remoteRun(s3, ["--limit-upload", "1024", "push"]) }
        #expect(push.status == 0, "\(push.stderr)")
        #expect(up >= 0.7 * bytes / (kib * 1024), "pushed 3 MB in \(up) s under 1024 KiB/s")

        let other = try RemoteTests.machine(v)
        let (clone, down) = try Self.seconds {
            try CLIHarness.run(["--password-file", other.passwordFile, "--limit-download", "1024", "clone", target, other.path + "/c"],
                               environment: other.environment(s3.rcloneEnvironment()), cwd: other.path, timeout: 120)
        }
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(down >= 0.7 * bytes / (kib * 1024), "cloned 3 MB in \(down) s under 1024 KiB/s")
        // A limit that is not a number is refused before anything runs.
        let bad = try v.remoteRun(s3, ["--limit-upload", "1M", "push"])
        #expect(bad.status == 2 && bad.stderr.contains("--limit-upload takes KiB/s: a whole number above 0, not '1M'"), "\(bad.stderr)")
    }
}
