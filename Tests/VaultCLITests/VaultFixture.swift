import Foundation
import Synchronization
import Testing
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A throw-away vault in its own sandbox, made with cheap Argon2id settings
/// (1 MiB, 1 pass; allowed by VAULT_ALLOW_WEAK_KDF=1), and shortcuts to run
/// `vault` against it. The sandbox, and so the vault, goes with the fixture.
final class VaultFixture {
    let sandbox: Sandbox
    /// The vault directory (absolute).
    let dir: String
    /// The password file (absolute, mode 0600), holding `password` + "\n".
    let passwordFile: String
    let password: String

    static let weak = ["VAULT_ALLOW_WEAK_KDF": "1"]
    static let cheapInit = ["init", "--kdf-memory", "1", "--kdf-passes", "1"]

    /// Makes the sandbox and, with `create`, the vault in `<sandbox>/vault`.
    init(password: String = "test password \(UInt32.random(in: 0...UInt32.max))", create: Bool = true) throws {
        _ = Self.ignoreSIGPIPE
        sandbox = try Sandbox()
        dir = sandbox.path + "/vault"
        self.password = password
        passwordFile = try sandbox.file("password", password + "\n")
        if create {
            let r = try run(Self.cheapInit)
            guard r.status == 0 else { throw Failure("init failed (\(r.status)): \(r.stderr)") }
        }
    }

    var path: String { sandbox.path }

    /// A child that exits before reading all of its stdin (e.g. a usage
    /// error for `add -`) must not kill the test runner with SIGPIPE; the
    /// harness then sees EPIPE and stops writing. Children get the default
    /// disposition back (the harness resets every signal at spawn).
    static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        sandbox.environment(Self.weak.merging(extra) { $1 })
    }

    /// `vault --vault DIR ARGS` (no password source), in the sandbox.
    func add(_ args: [String], stdin: [UInt8] = [], _ extra: [String: String] = [:], timeout: Double = 30) throws -> CLIHarness.Result {
        try CLIHarness.run(["--vault", dir] + args, stdin: stdin, environment: environment(extra), cwd: sandbox.path, timeout: timeout)
    }

    /// `vault --vault DIR --password-file PW ARGS`, in the sandbox.
    func run(_ args: [String], stdin: [UInt8] = [], password file: String? = nil, _ extra: [String: String] = [:],
             timeout: Double = 30) throws -> CLIHarness.Result {
        try CLIHarness.run(["--vault", dir, "--password-file", file ?? passwordFile] + args, stdin: stdin,
                           environment: environment(extra), cwd: sandbox.path, timeout: timeout)
    }

    /// Writes a file of `bytes` into the sandbox and returns its absolute path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o644) throws -> String {
        let target = sandbox.path + "/" + name
        try CLIHarness.writeFile(bytes, to: target, mode: mode)
        return target
    }

    /// `list --json`, parsed; fails the test when list does not exit 0.
    func listed(sourceLocation: SourceLocation = #_sourceLocation) throws -> [ListedItem] {
        let r = try run(["list", "--json"])
        #expect(r.status == 0, "list: \(r.stderr)", sourceLocation: sourceLocation)
        return try ListedItem.parse(r.stdout)
    }

    /// `info --json`, parsed.
    func info() throws -> [String: Any] {
        let r = try add(["info", "--json"])
        guard r.status == 0 else { throw Failure("info failed (\(r.status)): \(r.stderr)") }
        return try JSONObject.parse(r.stdout)
    }

    /// `get NAME` to standard output.
    func get(_ name: String) throws -> CLIHarness.Result { try run(["get", name]) }

    /// Every regular file under the vault directory, relative paths.
    func filesInVault() throws -> [String] {
        let e = FileManager.default.enumerator(atPath: dir)
        var out: [String] = []
        while let rel = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                out.append(rel)
            }
        }
        return out.sorted()
    }
}

/// One item of `vault list --json`.
struct ListedItem: Equatable, Sendable {
    var name: String
    var size: UInt64
    var kind: String
    var origin: String
    var files: Int

    static func parse(_ stdout: [UInt8]) throws -> [ListedItem] {
        let top = try JSONObject.parse(stdout)
        guard let items = top["items"] as? [[String: Any]] else { throw Failure("no 'items' array in list --json") }
        return try items.map { i in
            guard let name = i["name"] as? String, let size = (i["size"] as? NSNumber)?.uint64Value,
                  let kind = i["kind"] as? String, let origin = i["origin"] as? String,
                  let files = (i["files"] as? NSNumber)?.intValue else { throw Failure("bad item in list --json: \(i)") }
            return ListedItem(name: name, size: size, kind: kind, origin: origin, files: files)
        }
    }
}

enum JSONObject {
    static func parse(_ bytes: [UInt8]) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw Failure("not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
        }
        return object
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The first line of a text (stderr's first message), without its newline.
func firstLine(_ text: String) -> String {
    String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
}

/// `n` random bytes.
func randomBytes(_ n: Int) -> [UInt8] { SecureRandom.bytes(n) }

/// SHA-256 as lower-case hex.
func sha256(_ bytes: [UInt8]) -> String {
    ((try? SHA256.hash(bytes)) ?? []).map { String(format: "%02x", $0) }.joined()
}

func sha256(file path: String) throws -> String {
    sha256(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
}

/// Runs each block on its own thread (not the cooperative pool, which on a
/// 2-core machine would run only two blocking subprocesses at a time) and
/// waits for all of them.
func runConcurrently(_ blocks: [@Sendable () -> Void]) {
    let group = DispatchGroup()
    for block in blocks {
        group.enter()
        let thread = Thread {
            block()
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Collects values from several threads.
final class Collector<T: Sendable>: Sendable {
    private let values = Mutex<[T]>([])
    func append(_ value: T) { values.withLock { $0.append(value) } }
    var all: [T] { values.withLock { $0 } }
}

/// Runs `vault ARGS` and SIGKILLs it after `delay` seconds if it is still
/// running (coreutils `timeout`: --foreground signals only vault itself,
/// --preserve-status reports vault's own status: 137 if killed, else its
/// exit status, even when the timer fired just after it finished).
func runKilled(after delay: Double, _ args: [String], environment: [String: String]) throws -> CLIHarness.Result {
    try CLIHarness.run(["--foreground", "--preserve-status", "-s", "KILL", String(format: "%.4f", max(delay, 0.0001)),
                        CLIHarness.binary] + args,
                       environment: environment, timeout: 60, executable: "/usr/bin/timeout")
}

/// Wall-clock seconds that `body` takes.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
