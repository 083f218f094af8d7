import Foundation
import Testing
@testable import VaultCrypto

/// Differential tests of ML-KEM-768 against two independent implementations,
/// through scripts/reference/mlkem_oracle.py (one Python process per backend,
/// all requests in one batch): kyber-py (pure-Python FIPS 203) and Python
/// cryptography's ML-KEM-768 (OpenSSL 3.5+ inside its wheel). Both ways:
/// our keys and encapsulations are opened by them, theirs by us, and
/// corrupted ciphertexts must give the same implicit-rejection secret.
///
/// Sizes: VAULT_PQ_DIFF_KEYS keys per backend (default 1000 for
/// cryptography, a tenth of that for kyber-py, which takes ~20 ms per key).
/// A test skips, saying why, only if its Python package is missing;
/// `make deps` installs both.
enum PythonOracle {
    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // this file, VaultCryptoTests, Tests
        return url.path + "/scripts/reference/mlkem_oracle.py"
    }()

    static func works(_ code: String) -> Bool { (try? run(["-c", code], input: "")) != nil }
    static let hasKyberPy = works("import kyber_py.ml_kem")
    /// The module exists from cryptography 47 on; it works only if the wheel's OpenSSL has ML-KEM.
    static let hasCryptographyMLKEM = works("from cryptography.hazmat.primitives.asymmetric import mlkem; "
                                            + "mlkem.MLKEM768PrivateKey.generate()")

    static var keys: Int {
        Int(ProcessInfo.processInfo.environment["VAULT_PQ_DIFF_KEYS"] ?? "") ?? 1000
    }

    /// Runs python3 with `arguments`, `input` on stdin (from a file, so a
    /// large batch cannot deadlock on pipes); returns stdout's lines.
    static func run(_ arguments: [String], input: String) throws -> [Substring] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vault-pq-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let inURL = dir.appendingPathComponent("in"), outURL = dir.appendingPathComponent("out")
        try Data(input.utf8).write(to: inURL)
        try Data().write(to: outURL)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + arguments
        p.environment = ProcessInfo.processInfo.environment.merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 }
        p.standardInput = try FileHandle(forReadingFrom: inURL)
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw ReferenceFailed(status: p.terminationStatus) }
        return String(decoding: try Data(contentsOf: outURL), as: UTF8.self).split(separator: "\n")
    }
}

private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
private func hex(_ s: SecretBytes) -> String { hex(s.bytes) }
private func bytes(_ s: Substring) -> [UInt8] { [UInt8](hexString: String(s)) ?? [] }

/// One key's worth of our own results, kept to compare with the oracle's.
private struct Case {
    let d, z, m: SecretBytes
    let dk: MLKEM768.DecapsulationKey
    let c: [UInt8], k: SecretBytes
    let corrupted: [UInt8], rejected: SecretBytes
    let garbage: [UInt8], garbageRejected: SecretBytes

    init() throws {
        d = try SecretBytes.random(count: 32); z = try SecretBytes.random(count: 32); m = try SecretBytes.random(count: 32)
        dk = try MLKEM768.generateKeyPair(d: d, z: z)
        (c, k) = try MLKEM768.encapsulate(to: dk.encapsulationKey, randomness: m)
        // A ciphertext with one random bit flipped, and one of random bytes.
        var flipped = c
        let bit = Int.random(in: 0..<(c.count * 8))
        flipped[bit / 8] ^= UInt8(1 << (bit % 8))
        corrupted = flipped
        rejected = try MLKEM768.decapsulate(corrupted, with: dk)
        garbage = SecureRandom.bytes(MLKEM768.ciphertextLength)
        garbageRejected = try MLKEM768.decapsulate(garbage, with: dk)
    }

    func requests(deterministicEncaps: Bool) -> [String] {
        let key = "\(hex(d)) \(hex(z)) \(hex(dk.secret))"
        var r = ["K \(hex(d)) \(hex(z))", "E \(hex(dk.encapsulationKey.bytes))",
                 "D \(key) \(hex(c))", "D \(key) \(hex(corrupted))", "D \(key) \(hex(garbage))"]
        if deterministicEncaps { r.append("e \(hex(dk.encapsulationKey.bytes)) \(hex(m))") }
        return r
    }
}

@Suite struct MLKEMDifferentialTests {
    /// Runs `count` cases through `backend`, in batches of at most 500 (each
    /// case holds seven SecretBytes, each its own sodium_malloc mapping, and
    /// tens of thousands at once exhaust vm.max_map_count); returns how many
    /// operations were compared.
    func differential(backend: String, count: Int, comparesDK: Bool, deterministicEncaps: Bool) throws -> Int {
        var compared = 0, done = 0
        while done < count {
            let n = min(500, count - done)
            compared += try batch(backend: backend, count: n, comparesDK: comparesDK, deterministicEncaps: deterministicEncaps)
            done += n
        }
        return compared
    }

    func batch(backend: String, count: Int, comparesDK: Bool, deterministicEncaps: Bool) throws -> Int {
        let cases = try (0..<count).map { _ in try Case() }
        let perCase = deterministicEncaps ? 6 : 5
        let input = cases.flatMap { $0.requests(deterministicEncaps: deterministicEncaps) }.joined(separator: "\n") + "\n"
        let lines = try PythonOracle.run([PythonOracle.script, backend], input: input)
        try #require(lines.count == cases.count * perCase, "the oracle answered \(lines.count) of \(cases.count * perCase) requests")
        var compared = 0
        for (i, c) in cases.enumerated() {
            let a = lines[(i * perCase)..<((i + 1) * perCase)].map { $0.split(separator: " ") }
            let tag = "\(backend) case \(i)"
            // Key generation from the same (d, z): the same ek (and dk).
            #expect(a[0].count == 2 && bytes(a[0][0]) == c.dk.encapsulationKey.bytes, "\(tag): ek")
            if comparesDK { #expect(bytes(a[0][1]) == c.dk.secret.bytes, "\(tag): dk") }
            // Their random encapsulation to our ek, opened by us.
            if a[1].count == 2 {
                #expect(try MLKEM768.decapsulate(bytes(a[1][0]), with: c.dk).bytes == bytes(a[1][1]), "\(tag): their encapsulation")
            } else { Issue.record("\(tag): their encapsulation failed: \(a[1])") }
            // Our encapsulation opened by them; the corrupted and random ones
            // give the same implicit-rejection secret J(z || c) on both sides.
            #expect(a[2].count == 1 && bytes(a[2][0]) == c.k.bytes, "\(tag): our encapsulation")
            #expect(a[3].count == 1 && bytes(a[3][0]) == c.rejected.bytes, "\(tag): corrupted ciphertext")
            #expect(a[4].count == 1 && bytes(a[4][0]) == c.garbageRejected.bytes, "\(tag): random ciphertext")
            #expect(c.rejected != c.k, "\(tag): a corrupted ciphertext kept the secret")
            if deterministicEncaps {
                #expect(a[5].count == 2 && bytes(a[5][0]) == c.c && bytes(a[5][1]) == c.k.bytes, "\(tag): Encaps_internal")
            }
            compared += perCase
        }
        return compared
    }

    @Test(.enabled(if: PythonOracle.hasCryptographyMLKEM,
                   "python3 cryptography without ML-KEM (needs a wheel with OpenSSL 3.5+): make deps"))
    func againstPythonCryptography() throws {
        let n = try differential(backend: "cryptography", count: PythonOracle.keys, comparesDK: false,
                                 deterministicEncaps: false)
        print("ML-KEM-768 differential vs cryptography: \(PythonOracle.keys) keys, \(n) operations agree")
    }

    @Test(.enabled(if: PythonOracle.hasKyberPy, "python3 package kyber-py missing: make deps"))
    func againstKyberPy() throws {
        let keys = max(PythonOracle.keys / 10, 1)
        let n = try differential(backend: "kyber-py", count: keys, comparesDK: true, deterministicEncaps: true)
        print("ML-KEM-768 differential vs kyber-py: \(keys) keys, \(n) operations agree")
    }
}

/// The Python reference exited with a failure.
struct ReferenceFailed: Error { let status: Int32 }
