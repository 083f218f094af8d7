import Foundation
import Testing

/// `add --compress[=LEVEL]`, `--no-compress` and `init --compress`, through
/// the built binary: what is stored shrinks when it pays and only then, and
/// always comes back byte for byte.
@Suite struct CompressionTests {
    /// Realistic text: varied words, not one line repeated.
    static let text: [UInt8] = {
        let words = ["alpha", "beta", "gamma", "delta", "vault", "secret", "file", "chunk", "key", "nonce", "tax", "scan"]
        var rng = SystemRandomNumberGenerator()
        var out = ""
        for _ in 0..<60_000 { out += (0..<10).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ") + "\n" }
        return Array(out.utf8)
    }()
    static let noise: [UInt8] = (0..<3_000_000).map { _ in UInt8.random(in: 0...255) }

    /// Size on disk of the one blob in items/.
    func blobSize(_ v: VaultFixture) throws -> Int {
        let items = try v.filesInVault().filter { $0.hasPrefix("items/") }
        #expect(items.count == 1)
        return try FileManager.default.attributesOfItem(atPath: v.dir + "/" + items[0])[.size] as! Int
    }

    func added(_ v: VaultFixture, _ bytes: [UInt8], _ options: [String]) throws -> Int {
        try v.write("in", bytes)
        let r = try v.add(["add", "in"] + options)
        #expect(r.status == 0, "add: \(r.stderr)")
        #expect(try v.get("in").stdout == bytes)
        #expect(try v.run(["check", "--read-data"]).status == 0)
        return try blobSize(v)
    }

    @Test func autoCompressesText() throws {
        let size = try added(VaultFixture(), Self.text, ["--compress"])
        #expect(size < Self.text.count / 2)
    }

    @Test func autoStoresNoiseRaw() throws {
        let v = try VaultFixture()
        let raw = try added(v, Self.noise, ["--compress"])
        #expect(raw >= Self.noise.count)   // padded, never xz-inflated or shrunk
    }

    @Test func levelAlwaysCompressesAndNoCompressNever() throws {
        #expect(try added(VaultFixture(), Self.text, ["--compress=6"]) < Self.text.count / 2)
        #expect(try added(VaultFixture(), Self.text, ["--no-compress"]) >= Self.text.count)
    }

    @Test func initCompressSetsTheDefault() throws {
        let v = try VaultFixture(create: false)
        #expect(try v.run(VaultFixture.cheapInit + ["--compress"]).status == 0)
        #expect(try added(v, Self.text, []) < Self.text.count / 2)
    }

    @Test func stdinAndFoldersToo() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", "-", "--name", "piped", "--compress"], stdin: Self.text).status == 0)
        #expect(try v.get("piped").stdout == Self.text)
        try FileManager.default.createDirectory(atPath: v.path + "/docs", withIntermediateDirectories: false)
        try v.write("docs/a.txt", Self.text)
        #expect(try v.add(["add", "docs", "--compress"]).status == 0)
        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try v.run(["restore", "docs", "--to", out]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/docs/a.txt")) == Data(Self.text))
    }

    @Test func badLevelsAreUsageErrors() throws {
        let v = try VaultFixture()
        let r = try v.add(["add", "x", "--compress=12"])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("vault: --compress=LEVEL needs a level from 0 to 9, not '12'\n"))
        #expect(try v.add(["add", "x", "--compress", "--no-compress"]).status == 2)
    }
}
