import Foundation
import Testing
import VaultCodecs

/// Speed of XZCompressor against the system `xz` on the same file, each pair
/// run back to back (these VMs are noisy). Off unless VAULT_XZ_BENCH_FILE
/// names a file (e.g. the text scripts/bench-xz.sh generates); run with
///   VAULT_XZ_BENCH_FILE=/path swift test -c release --filter XZBench
/// VAULT_XZ_BENCH_SETTINGS="0:1 0:2 1:2" picks level:threads pairs.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["VAULT_XZ_BENCH_FILE"] != nil))
struct XZBenchTests {
    final class CountingSink: ByteSink {
        var count = 0
        func write(_ b: UnsafeRawBufferPointer) throws { count += b.count }
    }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    @Test func compressorAgainstSystemXZ() throws {
        let env = ProcessInfo.processInfo.environment
        let path = env["VAULT_XZ_BENCH_FILE"]!
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        let mb = Double(data.count) / 1e6
        let settings = (env["VAULT_XZ_BENCH_SETTINGS"] ?? "0:1 0:2 1:1 1:2 6:1 6:2")
            .split(separator: " ").map { $0.split(separator: ":").map { Int($0)! } }
        var report = "xz bench on \(path) (\(Int(mb)) MB)\n"
        for s in settings {
            let (level, threads) = (s[0], s[1])
            let sink = CountingSink()
            let t0 = Self.now()
            let xz = try XZCompressor(level: level, threads: threads, downstream: sink)
            try data.withUnsafeBytes { all in
                var o = 0
                while o < all.count {
                    let n = min(1 << 20, all.count - o)
                    try xz.write(UnsafeRawBufferPointer(rebasing: all[o..<(o + n)]))
                    o += n
                }
            }
            try xz.finish()
            let ours = Self.now() - t0

            let p = Process()
            let pipe = Pipe()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "xz -T\(threads) -\(level) -c '\(path)' | wc -c"]
            p.standardOutput = pipe
            let t1 = Self.now()
            try p.run()
            let out = pipe.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            let theirs = Self.now() - t1
            let theirSize = Int(String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))!
            report += String(format: "  level %d, %d threads: ours %.1f MB/s %.1f%%, xz %.1f MB/s %.1f%%, time %.2fx size %.3fx\n",
                             level, threads, mb / ours, 100 * Double(sink.count) / Double(data.count),
                             mb / theirs, 100 * Double(theirSize) / Double(data.count),
                             ours / theirs, Double(sink.count) / Double(theirSize))
        }
        // Decompression and probe costs.
        let small = Data(data.prefix(64 << 20))
        let packedSink = CollectingSink()
        let xz = try XZCompressor(level: 1, threads: 2, downstream: packedSink)
        try small.withUnsafeBytes { try xz.write($0) }
        try xz.finish()
        let t2 = Self.now()
        let d = try XZDecompressor(upstream: ArrayStream(packedSink.bytes, step: 1 << 20))
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let n = try buf.withUnsafeMutableBytes { try d.read(into: $0) }
            if n == 0 { break }
            total += n
        }
        report += String(format: "  decompress level 1: %.0f MB/s\n", Double(total) / 1e6 / (Self.now() - t2))
        print(report)
    }
}
