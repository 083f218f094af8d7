import Foundation
import Synchronization
import Testing
import VaultCore
import VaultMove
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// `vault move` between two hosts: two network namespaces joined by a veth
/// pair, the receiver in one (`ip netns exec B vault ... move receive`), the
/// sender in the other. Needs root and iproute2's `ip netns`; anywhere else
/// (no root, no `ip`, a container that refuses namespaces) both tests are
/// skipped, and the reason is printed.
@Suite struct MoveNetnsTests {
    static let skipComment: Comment = "needs root and 'ip netns' (iproute2) to make two network namespaces; the reason is printed above"

    // MARK: the whole move

    @Test(.enabled(if: NetnsPair.usable, MoveNetnsTests.skipComment))
    func moveBetweenTwoNamespaces() throws {
        let src = try VaultFixture()
        let notes = try src.write("notes.txt", Array("meeting at 10\nbring the keys\n".utf8))
        let photo = randomBytes(300_000)
        let photoPath = try src.write("photo.bin", photo)
        let log = Array(String(repeating: "GET /index.html 200\n", count: 50_000).utf8)
        let logPath = try src.write("access.log", log)
        let empty = try src.write("empty", [])
        #expect(try src.add(["add", notes, photoPath, empty]).status == 0)
        #expect(try src.add(["add", logPath, "--compress=1"]).status == 0)
        let before = try src.listed()  // absorbs the four drop-ins
        #expect(before.count == 4)
        let listBefore = try src.run(["list"])
        #expect(listBefore.status == 0, "\(listBefore.stderr)")
        // One more drop-in, still waiting in the inbox when the move starts.
        let late = Array("arrived last\n".utf8)
        #expect(try src.add(["add", try src.write("late.txt", late)]).status == 0)
        let contents: [String: [UInt8]] = [
            "notes.txt": Array("meeting at 10\nbring the keys\n".utf8), "photo.bin": photo, "access.log": log,
            "empty": [], "late.txt": late,
        ]

        // The new machine: the same password, no vault yet.
        let dst = try VaultFixture(password: src.password, create: false)
        let codeFile = dst.path + "/code"

        let net = try NetnsPair()
        defer { net.destroy() }

        let (receiver, sender) = try net.move(from: src, to: dst, codeFile: codeFile)
        #expect(!receiver.timedOut && !sender.timedOut, "receiver: \(receiver.stderr)\nsender: \(sender.stderr)")
        #expect(receiver.status == 0, "receiver: \(receiver.stderr)")
        #expect(sender.status == 0, "sender: \(sender.stderr)")

        // Both ends show the same security code, and each reached the other
        // at its namespace's address.
        let receiverSAS = securityCode(receiver.stderr), senderSAS = securityCode(sender.stderr)
        #expect(receiverSAS != nil && receiverSAS == senderSAS,
                "receiver: \(receiver.stderr)\nsender: \(sender.stderr)")
        #expect(receiver.stderr.contains("vault: connected to \(net.addressA):"), "\(receiver.stderr)")
        #expect(sender.stderr.contains("vault: connected to \(net.addressB):"), "\(sender.stderr)")
        #expect(receiver.stdoutText.hasPrefix("move code: "), "\(receiver.stdoutText)")
        #expect(sender.stderr.contains("vault: erased the vault at '\(src.dir)'"), "\(sender.stderr)")
        #expect(receiver.stderr.contains("vault: the sender erased its copy"), "\(receiver.stderr)")

        // The old vault is gone; the new one opens with the same password
        // and holds the same items, the waiting drop-in included.
        #expect(!FileManager.default.fileExists(atPath: src.dir), "the source vault is still there")
        let after = try dst.listed()
        #expect(after.filter { $0.name != "late.txt" } == before)
        let lateItem = after.first { $0.name == "late.txt" }
        #expect(lateItem?.size == UInt64(late.count) && lateItem?.kind == "file", "\(after)")
        let listAfter = try dst.run(["list"])
        #expect(listAfter.status == 0, "\(listAfter.stderr)")
        // The same lines but the totals, which now count late.txt too.
        let items = { (text: String) in text.split(separator: "\n").dropLast().filter { !$0.hasSuffix(" late.txt") } }
        #expect(items(listAfter.stdoutText) == items(listBefore.stdoutText))
        for (name, content) in contents.sorted(by: { $0.key < $1.key }) {
            let got = try dst.get(name)
            #expect(got.status == 0, "get \(name): \(got.stderr)")
            #expect(sha256(got.stdout) == sha256(content), "get \(name): \(got.stdout.count) bytes, want \(content.count)")
        }
        let check = try dst.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    // MARK: nobody at the address

    /// Where the code points, from namespace A: B's address on a port
    /// where nothing listens (B's kernel answers with a reset), an address
    /// on the link that no host holds (no ARP answer), and an address with
    /// no route at all.
    enum Unreachable: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case notListening, noHost, noRoute
        var testDescription: String { rawValue }

        /// What the sender may say (strerror, lower-cased): no ARP answer
        /// is EHOSTUNREACH after about 3 s, or the sender's own 5 s timeout.
        var reasons: Set<String> {
            switch self {
            case .notListening: return ["connection refused"]
            case .noHost: return ["no route to host", "connection timed out"]
            case .noRoute: return ["network is unreachable"]
            }
        }
    }

    @Test(.enabled(if: NetnsPair.usable, MoveNetnsTests.skipComment), arguments: Unreachable.allCases)
    func sendToAnAddressWhereNobodyListensFailsAndKeepsTheVault(_ target: Unreachable) throws {
        let src = try VaultFixture()
        let content = randomBytes(100_000)
        #expect(try src.add(["add", try src.write("data.bin", content)]).status == 0)
        let before = try src.listed()
        let files = try src.filesInVault()
        let hashes = try files.map { try sha256(file: src.dir + "/" + $0) }

        let net = try NetnsPair()
        defer { net.destroy() }

        // A valid code (checksum and all) for a receiver that is not there.
        let address: String
        switch target {
        case .notListening: address = net.addressB
        case .noHost: address = net.prefix + ".3"
        case .noRoute: address = "192.0.2.1"  // TEST-NET-1; A has a route to its /24 only
        }
        let port = UInt16.random(in: 20_000...60_000)
        let code = try MoveCode(addresses: [MoveAddress(address)!], port: port,
                                publicKey: try X25519PrivateKey().publicKey, token: randomBytes(MoveCode.tokenLength))
        let codeFile = try src.sandbox.file("code", code.text + "\n")

        var sender = CLIHarness.Result(status: -1, stdout: [], stderr: "")
        let seconds = try measure {
            sender = try net.exec(in: net.nsA, src.binaryArgs(["move", "send", "--code-file", codeFile]),
                                  environment: src.environment(), timeout: 60)
        }
        #expect(!sender.timedOut, "\(sender.stderr)")
        #expect(sender.status == 1, "\(sender.stderr)")  // 1: failure not listed elsewhere
        // connect() gives up on each address after 5 s at most.
        #expect(seconds < 20, "the sender took \(seconds) s to give up")
        // A clear error naming where it tried and why, and nothing that
        // suggests a connection was made.
        let lines = sender.stderr.split(separator: "\n")
        let error = String(lines.first { $0.hasPrefix("vault: cannot connect") } ?? "")
        #expect(lines.last?.hasPrefix("hint: is 'vault move receive' still running there") == true, "\(sender.stderr)")
        let prefix = "vault: cannot connect to \(address):\(port): "
        #expect(error.hasPrefix(prefix) && target.reasons.contains(String(error.dropFirst(prefix.count))),
                "\(sender.stderr)")
        #expect(!sender.stderr.contains("security code"), "\(sender.stderr)")
        #expect(!sender.stderr.contains("erased"), "\(sender.stderr)")

        // The vault is exactly as it was, and opens and checks.
        #expect(try src.filesInVault() == files)
        #expect(try files.map { try sha256(file: src.dir + "/" + $0) } == hashes)
        let check = try src.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(try src.listed() == before)
        let got = try src.get("data.bin")
        #expect(got.status == 0 && got.stdout == content, "\(got.stderr)")
    }

    /// The 6 digits of "security code: NNNNNN" in a stderr.
    func securityCode(_ stderr: String) -> String? {
        stderr.firstMatch(of: /security code: (\d{6})\b/).map { String($0.1) }
    }
}

extension VaultFixture {
    /// `--vault DIR --password-file PW ARGS`, for running the binary some
    /// other way than `run`.
    func binaryArgs(_ args: [String]) -> [String] { ["--vault", dir, "--password-file", passwordFile] + args }
}

/// Two network namespaces, A (10.P.Q.1/24) and B (10.P.Q.2/24), joined by a
/// veth pair, both links and both loopbacks up: two hosts on one LAN.
/// Unique names per instance; `destroy()` (idempotent, also on deinit)
/// deletes both namespaces and with them the veth pair.
final class NetnsPair: @unchecked Sendable {
    let nsA: String, nsB: String
    /// "10.P.Q"
    let prefix: String
    var addressA: String { prefix + ".1" }
    var addressB: String { prefix + ".2" }
    private let lock = Mutex(false)  // destroyed

    init() throws {
        guard let ip = Self.ip else { throw Failure("no 'ip' binary") }
        let tag = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        nsA = "vaultA-" + tag
        nsB = "vaultB-" + tag
        prefix = "10.\(Int.random(in: 64...254)).\(Int.random(in: 0...255))"
        let vethA = "vmA" + tag, vethB = "vmB" + tag  // 11 characters, under IFNAMSIZ
        let steps: [[String]] = [
            ["netns", "add", nsA],
            ["netns", "add", nsB],
            ["-n", nsA, "link", "add", vethA, "type", "veth", "peer", "name", vethB, "netns", nsB],
            ["-n", nsA, "addr", "add", addressA + "/24", "dev", vethA],
            ["-n", nsB, "addr", "add", addressB + "/24", "dev", vethB],
            ["-n", nsA, "link", "set", "lo", "up"],
            ["-n", nsB, "link", "set", "lo", "up"],
            ["-n", nsA, "link", "set", vethA, "up"],
            ["-n", nsB, "link", "set", vethB, "up"],
        ]
        for step in steps {
            let r = try Self.run(ip, step)
            guard r.status == 0 else {
                destroy()
                throw Failure("ip \(step.joined(separator: " ")): exit \(r.status): \(r.stderr)")
            }
        }
    }

    deinit { destroy() }

    /// Deletes both namespaces (the veth pair goes with them); once.
    func destroy() {
        let first = lock.withLock { destroyed in
            defer { destroyed = true }
            return !destroyed
        }
        guard first, let ip = Self.ip else { return }
        for ns in [nsA, nsB] { _ = try? Self.run(ip, ["netns", "delete", ns]) }
    }

    /// `ip netns exec NS <vault binary> ARGS` (ip execs the binary itself,
    /// so the harness's timeout kills vault).
    func exec(in ns: String, _ args: [String], environment: [String: String], timeout: Double) throws -> CLIHarness.Result {
        try CLIHarness.run(["netns", "exec", ns, CLIHarness.binary] + args, environment: environment, timeout: timeout,
                           executable: Self.ip!)
    }

    /// The receiver for `dst` in B, listening on B's address, and, once it
    /// wrote the code, the sender for `src` in A.
    func move(from src: VaultFixture, to dst: VaultFixture, codeFile: String,
              timeout: Double = 60) throws -> (receiver: CLIHarness.Result, sender: CLIHarness.Result) {
        let receiveArgs = dst.binaryArgs(["move", "receive", "--listen", addressB + ":0", "--code-file", codeFile])
        let sendArgs = src.binaryArgs(["move", "send", "--code-file", codeFile])
        let receiveEnv = dst.environment(), sendEnv = src.environment()
        let receiverEnded = Atomic<Bool>(false)
        let receiver = Collector<CLIHarness.Result>(), sender = Collector<CLIHarness.Result>()
        let nsA = nsA, nsB = nsB
        runConcurrently([
            { [self] in
                receiver.append(Self.result { try self.exec(in: nsB, receiveArgs, environment: receiveEnv, timeout: timeout) })
                receiverEnded.store(true, ordering: .sequentiallyConsistent)
            },
            { [self] in
                // The receiver writes the code file atomically once it listens.
                let deadline = Date().addingTimeInterval(timeout)
                while !FileManager.default.fileExists(atPath: codeFile) {
                    if receiverEnded.load(ordering: .sequentiallyConsistent) || Date() > deadline {
                        sender.append(CLIHarness.Result(status: -1, stdout: [],
                                                        stderr: "(not run: the receiver never wrote \(codeFile))"))
                        return
                    }
                    usleep(10_000)
                }
                sender.append(Self.result { try self.exec(in: nsA, sendArgs, environment: sendEnv, timeout: timeout) })
            },
        ])
        return (receiver.all[0], sender.all[0])
    }

    private static func result(_ body: () throws -> CLIHarness.Result) -> CLIHarness.Result {
        do { return try body() } catch { return CLIHarness.Result(status: -1, stdout: [], stderr: "\(error)") }
    }

    private static func run(_ ip: String, _ args: [String]) throws -> CLIHarness.Result {
        try CLIHarness.run(args, environment: CLIHarness.environment(home: "/"), timeout: 30, executable: ip)
    }

    /// The `ip` binary (iproute2), on PATH or in the usual places.
    static let ip: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let dirs = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        return dirs.map { $0 + "/ip" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Nil when this machine can make the namespaces, else why not: no
    /// `ip`, not root, or a probe pair that cannot be made (no permission,
    /// no veth in the kernel, a sandbox).
    static let problem: String? = {
        guard let ip else { return "no 'ip' binary (Debian package iproute2) on PATH or in /usr/sbin, /sbin" }
        guard geteuid() == 0 else { return "not root (euid \(geteuid())): 'ip netns add' needs root" }
        do {
            let probe = try NetnsPair()
            probe.destroy()
        } catch {
            return "cannot make two network namespaces joined by veth: \(error)"
        }
        return nil
    }()

    /// Whether the tests can run; prints why not (once) when they cannot.
    static let usable: Bool = {
        if let problem {
            print("MoveNetnsTests: skipped: \(problem)")
            return false
        }
        return true
    }()
}
