import Foundation
import Testing

/// `add --compression MODE`, the older `--compress[=LEVEL]`, `--no-compress`
/// and `init --compress`, through the built binary: what is stored shrinks
/// when it pays and only then, the item header names the codec, and the
/// content always comes back byte for byte.
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

    /// The codec flags of the one blob in items/ (FORMAT.md, item header bytes 10-11).
    func blobFlags(_ v: VaultFixture) throws -> UInt16 {
        let items = try v.filesInVault().filter { $0.hasPrefix("items/") }
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: v.dir + "/" + items[0])).read(upToCount: 12) ?? Data()
        return UInt16(header[10]) << 8 | UInt16(header[11])
    }

    @Test func theDefaultIsZstdForTextAndRawForNoise() throws {
        let text = try VaultFixture()
        #expect(try added(text, Self.text, []) < Self.text.count / 2)
        #expect(try blobFlags(text) == 0x0004)
        // Noise from its first block on: no codec at all, so the item keeps random access.
        let noise = try VaultFixture()
        #expect(try added(noise, Self.noise, []) >= Self.noise.count)
        #expect(try blobFlags(noise) == 0)
        // Text, then noise: zstd, the noise blocks stored raw inside it.
        let mixed = try VaultFixture()
        let both = Array(Self.text.prefix(4 << 20)) + Self.noise + Self.noise
        let stored = try added(mixed, both, [])
        #expect(try blobFlags(mixed) == 0x0004)
        #expect(stored < both.count && stored > 2 * Self.noise.count)
    }

    static let modes: [(options: [String], flags: UInt16)] = [
        (["--compression", "max"], 0x0001), (["--compression", "xz:1"], 0x0001), (["--compression", "zstd:19"], 0x0004),
        (["--compression", "zstd"], 0x0004), (["--compression", "off"], 0x0000), (["--compress=0"], 0x0001),
        (["--compress"], 0x0004),
    ]

    @Test(arguments: 0..<modes.count)
    func everyModeRoundTripsUnderItsCodec(_ mode: Int) throws {
        let (options, flags) = Self.modes[mode]
        let v = try VaultFixture()
        let size = try added(v, Self.text, options)
        #expect(try blobFlags(v) == flags)
        #expect(flags == 0 ? size >= Self.text.count : size < Self.text.count / 2)
    }

    @Test func badLevelsAreUsageErrors() throws {
        let v = try VaultFixture()
        let r = try v.add(["add", "x", "--compress=12"])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("vault: --compress=LEVEL needs a level from 0 to 9, not '12'\n"))
        #expect(try v.add(["add", "x", "--compress", "--no-compress"]).status == 2)
        let mode = try v.add(["add", "x", "--compression", "gzip"])
        #expect(mode.status == 2 && mode.stderr.hasPrefix("vault: --compression takes auto, off, max, zstd[:1-19] or xz[:0-9], not 'gzip'\n"))
        #expect(try v.add(["add", "x", "--compression", "zstd:20"]).status == 2)
        #expect(try v.add(["add", "x", "--compression", "off", "--no-compress"]).status == 2)
    }
}
