import Foundation
import Testing
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A real SFTP server for the append-only host tests (issue 41): OpenSSH's
/// sshd (Debian `openssh-server`, which `make test-deps` installs) on
/// 127.0.0.1, with its own host key and config, started for one test and
/// stopped with it. Two keys reach it, each pinned to `internal-sftp` by
/// its authorized_keys line:
///
/// - the owner's (root here), with full rights and a 022 umask;
/// - the backup host's, a system user made for the test, with exactly the
///   line the README gives: removal, renaming, attribute changes and
///   directory listing denied (`-P`), and a 0222 umask, so what it creates
///   is read-only at once and cannot be written again.
///
/// The vault copy lives in `root`: 0711 (no listing for others), `inbox/`
/// 1733 (others may create, not list; the sticky bit keeps each one's files
/// their own), `hosts/` 0711, as the README's setup makes them.
final class SFTPServer {
    /// The line the README tells people to put in the host user's
    /// ~/.ssh/authorized_keys (before its public key).
    static let hostKeyOptions = "restrict,command=\"internal-sftp -P remove,rename,posix-rename,setstat,fsetstat,lsetstat,"
        + "mkdir,rmdir,symlink,hardlink,opendir,readdir -u 0222\""
    static let ownerKeyOptions = "restrict,command=\"internal-sftp -u 0022\""

    let directory: String
    let root: String
    let port: Int
    let user: String
    private let sshd: Process

    /// Why the tests cannot run here (not root, no sshd, no useradd), or nil.
    static let unavailable: String? = {
        if getuid() != 0 { return "needs root (to make the host's user)" }
        for tool in ["/usr/sbin/sshd", "/usr/bin/ssh-keygen", "/usr/sbin/useradd"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (make test-deps installs openssh-server)"
        }
        return nil
    }()

    init() throws {
        var template = Array("/tmp/vault-sftp-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        directory = String(cString: made)
        chmod(directory, 0o711)
        root = directory + "/vault"
        user = "vh" + hex(SecureRandom.bytes(4))
        port = try freePorts(1)[0]
        // A system user with no password but not locked ("*": sshd refuses a locked account).
        try Self.sh("useradd --system --no-create-home --shell /usr/sbin/nologin -p '*' \(user)")
        for key in ["hostkey", "host", "owner"] {
            try Self.sh("ssh-keygen -q -t ed25519 -N '' -C vault-test -f \(directory)/\(key)")
        }
        let hostPublic = try String(contentsOfFile: directory + "/host.pub", encoding: .utf8)
        let ownerPublic = try String(contentsOfFile: directory + "/owner.pub", encoding: .utf8)
        try (Self.hostKeyOptions + " " + hostPublic + Self.ownerKeyOptions + " " + ownerPublic)
            .write(toFile: directory + "/authorized_keys", atomically: true, encoding: .utf8)
        chmod(directory + "/authorized_keys", 0o644)
        try """
            ListenAddress 127.0.0.1
            Port \(port)
            HostKey \(directory)/hostkey
            PidFile none
            AuthorizedKeysFile \(directory)/authorized_keys
            StrictModes no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            UsePAM no
            PermitRootLogin prohibit-password
            AllowUsers \(user) root
            Subsystem sftp internal-sftp
            LogLevel VERBOSE

            """.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
        try Self.sh("mkdir -p /run/sshd")
        sshd = Process()
        sshd.executableURL = URL(fileURLWithPath: "/usr/sbin/sshd")
        sshd.arguments = ["-D", "-f", directory + "/sshd_config", "-E", directory + "/log"]
        sshd.standardInput = FileHandle.nullDevice
        sshd.standardOutput = FileHandle.nullDevice
        sshd.standardError = FileHandle.nullDevice
        try sshd.run()
        // Its host key, pinned as a known host for both sides.
        let deadline = Date().addingTimeInterval(20)
        while true {
            let scan = try CLIHarness.run(["-p", String(port), "127.0.0.1"], environment: [:], timeout: 10,
                                          executable: "/usr/bin/ssh-keyscan")
            if scan.status == 0, !scan.stdout.isEmpty {
                try Data(scan.stdout).write(to: URL(fileURLWithPath: directory + "/known_hosts"))
                break
            }
            guard Date() < deadline else { throw Failure("sshd did not start: \(log)") }
            usleep(100_000)
        }
        // The owner's side: the vault copy's folders, with the modes above.
        try Self.sh("install -d -m 0711 \(root) && install -d -m 1733 \(root)/inbox && install -d -m 0711 \(root)/hosts")
    }

    deinit {
        sshd.terminate()
        sshd.waitUntilExit()
        _ = try? Self.sh("pkill -u \(user) sshd; userdel \(user); rm -rf \(directory)")
    }

    var log: String { (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? "" }

    /// rclone remotes `owner:` and `host:` for this server (RCLONE_CONFIG_*).
    func rcloneEnvironment() -> [String: String] {
        var env = ["RCLONE_CONFIG": "/dev/null"]
        for (name, login) in [("OWNER", "root"), ("HOST", user)] {
            let n = "RCLONE_CONFIG_" + name
            env[n + "_TYPE"] = "sftp"
            env[n + "_HOST"] = "127.0.0.1"
            env[n + "_PORT"] = String(port)
            env[n + "_USER"] = login
            env[n + "_KEY_FILE"] = directory + "/" + (name == "OWNER" ? "owner" : "host")
            env[n + "_KNOWN_HOSTS_FILE"] = directory + "/known_hosts"
        }
        return env
    }

    var ownerTarget: String { "owner:" + root }
    var hostTarget: String { "host:" + root }

    /// `rclone ARGS` with both remotes configured; the result, whatever its status.
    func rclone(_ args: [String], stdin: [UInt8] = []) throws -> CLIHarness.Result {
        try CLIHarness.run(args, stdin: stdin, environment: CLIHarness.environment(home: directory, rcloneEnvironment()), timeout: 60,
                           executable: rcloneBinary)
    }

    /// Every file under the vault copy, by path, with its bytes' SHA-256 and its mode.
    func files() throws -> [String: String] {
        var out: [String: String] = [:]
        guard let walk = FileManager.default.enumerator(atPath: root) else { return out }
        for case let path as String in walk {
            var st = stat()
            guard lstat(root + "/" + path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: root + "/" + path)))
            out[path] = hex(try SHA256.hash(bytes)) + " " + String(st.st_mode & 0o7777, radix: 8)
        }
        return out
    }

    @discardableResult
    static func sh(_ script: String) throws -> CLIHarness.Result {
        let r = try CLIHarness.run(["sh", "-c", script], environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], timeout: 60,
                                   executable: "/usr/bin/env")
        guard r.status == 0 else { throw Failure("\(script): \(r.stderr)") }
        return r
    }
}
