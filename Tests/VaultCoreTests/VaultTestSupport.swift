import Foundation
import VaultCrypto
@testable import VaultCore

/// A throw-away vault in a temp directory, with a cheap KDF so tests stay fast.
final class TempVault {
    static let weakKDF = try! Argon2Parameters(memoryKiB: 1024, passes: 1, lanes: 1)
    let dir: String
    var root: String { dir + "/vault" }

    init() {
        dir = NSTemporaryDirectory() + "vault-core-test-" + Hex.encode(SecureRandom.bytes(6))
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    static func password(_ s: String) -> Password {
        var b = Array(s.utf8)
        return Password(secret: try! SecretBytes(consuming: &b))
    }

    @discardableResult
    func create(_ password: String = "correct horse") throws -> UnlockedVault {
        try Vault.create(at: root, password: Self.password(password), kdf: Self.weakKDF)
    }

    /// Retries `busy` for up to a second. In this process, with other tests
    /// spawning `vault` subprocesses at the same time, a child between its
    /// fork and its exec briefly holds a copy of every descriptor, the lock
    /// file's among them, and a flock belongs to the open file, not the
    /// descriptor: the lock an unlock released a moment ago may still be
    /// held by a child about to exec. A CLI process never locks twice, so
    /// this is the test runner's artifact, not the product's.
    func unlock(_ password: String = "correct horse", forWriting: Bool = true) throws -> UnlockedVault {
        for _ in 0..<50 {
            do { return try Vault(at: root).unlock(password: Self.password(password), forWriting: forWriting) } catch VaultError.busy {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        return try Vault(at: root).unlock(password: Self.password(password), forWriting: forWriting)
    }

    /// Writes `content` to a file and drops it in.
    @discardableResult
    func add(_ name: String, _ content: [UInt8]) throws -> ManifestEntry {
        let path = dir + "/src-" + Hex.encode(SecureRandom.bytes(4))
        FileManager.default.createFile(atPath: path, contents: Data(content))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try Vault(at: root).dropIn(from: FileHandleFD(readingFrom: path), name: name, mode: 0o644, modified: 1_700_000_000)
    }

    /// Drop-ins of one add of many files, in one batch envelope (DropInBatch).
    func addBatch(_ files: [(name: String, content: [UInt8])]) throws {
        let vault = try Vault(at: root)
        let batch = DropInBatch(into: vault, expected: files.count)
        for (name, content) in files {
            try vault.dropIn(name: name, kind: .file, flags: [], mode: 0o644, modified: 1_700_000_000, batch: batch) {
                try $0.write(content)
                return (UInt64(content.count), 1)
            }
        }
        try batch.land()
    }

    func read(_ v: UnlockedVault, _ name: String) throws -> [UInt8] {
        let out = MemoryBytes()
        try v.read(try v.entry(named: name), to: out)
        return out.bytes
    }

    func read(_ v: UnlockedVault, _ entry: ManifestEntry) throws -> [UInt8] {
        let out = MemoryBytes()
        try v.read(entry, to: out)
        return out.bytes
    }

    func files(_ sub: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + sub)) ?? []).sorted()
    }

    /// Flips a bit halfway through `entry`'s stored blob: a chunk in the
    /// middle of its content no longer opens.
    func flipMiddle(of entry: ManifestEntry) throws {
        let blob = "items/" + entry.blobName
        let size = try Data(contentsOf: URL(fileURLWithPath: root + "/" + blob)).count
        try flip(blob, at: size / 2)
    }

    func flip(_ relative: String, at offset: Int) throws {
        let url = URL(fileURLWithPath: root + "/" + relative)
        var d = try Data(contentsOf: url)
        d[offset] ^= 0x01
        try d.write(to: url)
    }

    /// An edit of `vault.header` made on purpose: `edit` changes the bytes,
    /// then a version-3 header gets its checksum recomputed (it authenticates
    /// nothing), so that the checks behind it decide.
    func editHeader(_ edit: (inout [UInt8]) -> Void) throws {
        let url = URL(fileURLWithPath: root + "/vault.header")
        var b = Array(try Data(contentsOf: url))
        edit(&b)
        if b.count > 9 + VaultHeader.checksumLength, b[8] == 3 || b[8] == 4 {
            let body = Array(b.dropLast(VaultHeader.checksumLength))
            b = body + (try VaultHeader.checksum(of: body))
        }
        try Data(b).write(to: url)
    }
}
