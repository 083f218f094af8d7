// vault-bench: the measurements behind `make bench` (scripts/bench.sh runs the
// reference tools in the same run and prints the ratios). Not installed.
import Foundation
import System
import VaultCore
import VaultCrypto

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func peakRSSMiB() -> Double { Double(Syscall.peakResidentKiB) / 1024 }

/// Discards bytes; counts them.
final class NullSink: ByteSink {
    var count: UInt64 = 0
    func write(_ bytes: UnsafeRawBufferPointer) throws { count += UInt64(bytes.count) }
}

let args = CommandLine.arguments.dropFirst()
let key = try FileKey.random()
let threads = Int(ProcessInfo.processInfo.environment["VAULT_BENCH_THREADS"] ?? "") ?? 2

switch args.first {
case "item-encrypt":   // IN OUT
    let (input, output) = (args[args.startIndex + 1], args[args.startIndex + 2])
    if output != "/dev/null" { try? Syscall.unlink(output) }
    var n: UInt64 = 0
    let t = try seconds {
        let src = try FileHandleFD(readingFrom: input)
        let dst: ByteSink = output == "/dev/null" ? NullSink() : try FileHandleFD(creating: output)
        let w = try ItemWriter(key: key, header: .random(flags: []), sink: dst, threads: threads)
        n = try w.consume(src)
        try w.finish()
    }
    print(String(format: "item-encrypt %.3f s %.0f MB/s threads=%d", t, Double(n) / t / 1e6, threads))
    // Leave the key beside the output so item-decrypt can open it.
    if output != "/dev/null" {
        try key.secret.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: output + ".key")) }
    }
case "item-decrypt":   // IN OUT (IN.key holds the key)
    let (input, output) = (args[args.startIndex + 1], args[args.startIndex + 2])
    var raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: input + ".key")))
    let k = try FileKey(secret: SecretBytes(consuming: &raw))
    if output != "/dev/null" { try? Syscall.unlink(output) }
    var n: UInt64 = 0
    let t = try seconds {
        let r = try ItemReader(key: k, source: try FileHandleFD(readingFrom: input), threads: threads)
        let dst: ByteSink = output == "/dev/null" ? NullSink() : try FileHandleFD(creating: output)
        try r.readAll(to: dst)
        n = r.contentLength
    }
    print(String(format: "item-decrypt %.3f s %.0f MB/s threads=%d", t, Double(n) / t / 1e6, threads))
case "stream-rss":     // GIB: seal GIB of generated content to a temp file, open it to nowhere
    let gib = UInt64(args[args.startIndex + 1]) ?? 4
    let path = NSTemporaryDirectory() + "vault-bench-rss-\(Syscall.processID)"
    try? Syscall.unlink(path)
    defer { try? Syscall.unlink(path) }
    let block = [UInt8](repeating: 0x5a, count: 1 << 20)
    let t1 = try seconds {
        let w = try ItemWriter(key: key, header: .random(flags: []), sink: try FileHandleFD(creating: path), threads: threads)
        for _ in 0..<(gib * 1024) { try w.write(block) }
        try w.finish()
    }
    let rss1 = peakRSSMiB()
    let sink = NullSink()
    let t2 = try seconds {
        try ItemReader(key: key, source: try FileHandleFD(readingFrom: path), threads: threads).readAll(to: sink)
    }
    print(String(format: "stream-rss %llu GiB: seal %.1f s (peak RSS %.0f MiB), open %.1f s (peak RSS %.0f MiB)",
                 gib, t1, rss1, t2, peakRSSMiB()))
case "argon2":         // MEMMIB PASSES
    let mib = UInt32(args[args.startIndex + 1]) ?? 64, passes = UInt32(args[args.startIndex + 2]) ?? 3
    let salt = SecureRandom.bytes(16)
    for (name, lanes, backend) in [("libsodium p=1", UInt32(1), Argon2Backend.libsodium),
                                   ("libargon2 p=1", 1, .libargon2), ("libargon2 p=2", 2, .libargon2)] {
        let p = try Argon2Parameters(memoryKiB: mib * 1024, passes: passes, lanes: lanes)
        var best = Double.infinity
        for _ in 0..<3 {
            best = min(best, try seconds { _ = try Argon2id.deriveKey(password: Array("bench".utf8), salt: salt, parameters: p, backend: backend) })
        }
        print(String(format: "argon2id m=%uMiB t=%u %@: %.0f ms", mib, passes, name, best * 1000))
    }
case "pq":             // SECONDS: ML-KEM-768 and X-Wing operations per second (scripts/bench-pq.sh)
    let budget = Double(args.dropFirst().first ?? "") ?? 1
    /// Runs `body` in rounds of 50 for `budget` seconds after a short warm-up; best round wins.
    func opsPerSecond(_ body: () throws -> Void) throws -> Double {
        for _ in 0..<20 { try body() }
        var best = 0.0, spent = 0.0
        while spent < budget {
            let t = try seconds { for _ in 0..<50 { try body() } }
            spent += t
            best = max(best, 50 / t)
        }
        return best
    }
    let dk = try MLKEM768.generateKeyPair()
    let (c, _) = try MLKEM768.encapsulate(to: dk.encapsulationKey)
    let xsk = try XWing.PrivateKey()
    let (xct, _) = try XWing.encapsulate(to: xsk.publicKey)
    let results: [(String, () throws -> Void)] = [
        ("mlkem768-keygen", { _ = try MLKEM768.generateKeyPair() }),
        ("mlkem768-encaps", { _ = try MLKEM768.encapsulate(to: dk.encapsulationKey) }),
        ("mlkem768-decaps", { _ = try MLKEM768.decapsulate(c, with: dk) }),
        ("xwing-keygen", { _ = try XWing.PrivateKey() }),
        ("xwing-encaps", { _ = try XWing.encapsulate(to: xsk.publicKey) }),
        ("xwing-decaps", { _ = try XWing.decapsulate(xct, with: xsk) }),
    ]
    for (name, body) in results { print(String(format: "%@ %.0f", name, try opsPerSecond(body))) }
case "move-handshake": // N: move handshakes of each version over 127.0.0.1 (scripts/bench-move.sh)
    try benchMoveHandshake(Int(args.dropFirst().first ?? "") ?? 200)
default:
    FileHandle.standardError.write("usage: vault-bench item-encrypt IN OUT | item-decrypt IN OUT | stream-rss GIB | argon2 MIB PASSES | pq SECONDS | move-handshake N\n".data(using: .utf8)!)
    exit(2)
}
