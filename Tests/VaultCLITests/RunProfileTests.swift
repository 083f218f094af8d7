import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault run PROFILE` (issue 42): a profile of the config file runs its
/// backup with its hooks and pings, observed through files the hooks write
/// and an HTTP server on 127.0.0.1 that logs every request.
@Suite struct RunProfileTests {
    let f: BackupFixture
    init() throws { f = try BackupFixture() }

    /// A server answering 200 to every GET and logging its path, for the
    /// life of `body`; returns what it logged.
    func withPingServer(_ body: (String) throws -> Void) throws -> [String] {
        let port = try freePorts(1)[0]
        let log = f.v.path + "/pings.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let script = """
            import http.server
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    with open('\(log)', 'a') as f: f.write(self.path + '\\n')
                    self.send_response(200); self.end_headers(); self.wfile.write(b'OK')
                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get('Content-Length', '0'))).decode()
                    with open('\(log)', 'a') as f: f.write('POST ' + self.path + ' ' + self.headers.get('Title', '') + ': ' + body + '\\n')
                    self.send_response(200); self.end_headers(); self.wfile.write(b'OK')
                def log_message(self, *a): pass
            http.server.HTTPServer(('127.0.0.1', \(port)), H).serve_forever()
            """
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", script]
        try server.run()
        // SIGKILL: the runner's blocked signals are inherited through
        // Process, so SIGTERM would wait for ever.
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        for _ in 0..<100 where (try? CLIHarness.run(["-s", "-o", "/dev/null", "http://127.0.0.1:\(port)/ready"], environment: [:],
                                                      timeout: 5, executable: "/usr/bin/curl").status) != 0 { usleep(50_000) }
        try body("http://127.0.0.1:\(port)/uuid")
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init).filter { $0 != "/ready" }
    }

    func config(_ profile: String) throws -> String {
        try f.v.write("config.yaml", Array("profiles:\n  home:\n    vault: \(f.v.dir)\n    paths: [\(f.source)]\n".utf8) + Array(profile.utf8))
    }

    func run(_ file: String) throws -> CLIHarness.Result { try f.v.add(["run", "home", "--config", file], f.cacheEnv, timeout: 60) }

    @Test func aProfileRunsWithItsHooksAndPings() throws {
        try f.write("keep.txt", Array("kept\n".utf8))
        try f.write("skip.tmp", Array("left out\n".utf8))
        let facts = f.v.path + "/facts"
        var result: CLIHarness.Result?
        let pings = try withPingServer { url in
            let file = try config("""
                    exclude: ['*.tmp']
                    tags: nightly
                    hooks:
                      before: ['echo "before $VAULT_PROFILE" > \(facts)']
                      after: ['echo "after $VAULT_PROFILE $VAULT_EXIT_CODE $VAULT_SNAPSHOT $VAULT_FILES" >> \(facts)']
                      error: ['echo error >> \(facts)']
                    ping: \(url)
                    notify: \(url)/ntfy

                """)
            result = try run(file)
        }
        #expect(result?.status == 0, "\(result?.stderr ?? "")")
        let listed = try JSONObject.parse(try f.snapshots(["list", "--json"]).stdout)["snapshots"] as? [[String: Any]] ?? []
        let id = listed.first?["id"] as? String ?? "?"
        #expect(pings == ["/uuid/start", "/uuid/0",
                          "POST /uuid/ntfy vault backup done: backup of 'home' on \(ProcessInfo.processInfo.hostName) ended with exit 0: snapshot \(id.prefix(8)) of 1 files"],
                "\(pings)")
        #expect(try String(contentsOfFile: facts, encoding: .utf8) == "before home\nafter home 0 \(id) 1\n")
        #expect(listed.first?["tags"] as? [String] == ["nightly"])
    }

    @Test func aFailingBeforeHookStopsTheRun() throws {
        try f.write("a", [1])
        let facts = f.v.path + "/facts"
        var result: CLIHarness.Result?
        let pings = try withPingServer { url in
            result = try run(try config("""
                    hooks:
                      before: ['exit 4']
                      after: ['echo after >> \(facts)']
                      error: ['echo "error $VAULT_EXIT_CODE" >> \(facts)']
                    ping: \(url)
                    notify: \(url)/ntfy
                    notify-on: failure

                """))
        }
        #expect(result?.status == 1 && result?.stderr.contains("the before hook 'exit 4' exited with status 4: the backup of 'home' did not run") == true,
                "\(result?.stderr ?? "")")
        #expect(pings.count == 3 && pings.prefix(2) == ["/uuid/start", "/uuid/1"]
                && pings.last?.hasPrefix("POST /uuid/ntfy vault backup failed: backup of 'home' on ") == true
                && pings.last?.hasSuffix(" ended with exit 1: no snapshot") == true, "\(pings)")
        #expect(try String(contentsOfFile: facts, encoding: .utf8) == "error 1\n")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 0)
    }

    @Test func aPingThatCannotBeSentNeverFailsTheBackup() throws {
        try f.write("a", [1])
        let closed = try freePorts(1)[0]
        let r = try run(try config("    ping: http://127.0.0.1:\(closed)/uuid\n"))
        #expect(r.status == 0 && r.stderr.contains("could not ping http://127.0.0.1:\(closed)/uuid/start"), "\(r.stderr)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 1)
    }

    /// libcurl is loaded when a ping (or a thin vault) first needs it, not
    /// at every start: its 26 libraries were a quarter of each command's
    /// start (issue 45). A libcurl that cannot be loaded is a ping that
    /// cannot be sent: a warning that says so, the backup made.
    @Test func libcurlIsLoadedOnlyWhenAPingNeedsIt() throws {
        let trace = try CLIHarness.run(["--version"], environment: CLIHarness.environment(home: f.v.path, ["LD_TRACE_LOADED_OBJECTS": "1"]))
        let libraries = trace.stdoutText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(libraries.contains { $0.hasPrefix("libcrypto.so") } && !libraries.contains { $0.contains("libcurl") }, "\(libraries)")
        // A libcurl.so.4 first on the search path that is a shared object with no curl in it (zlib's, which vault loads anyway).
        let zlib = try #require(libraries.first { $0.hasPrefix("libz.so.1 => ") }?.split(separator: " ")[2])
        let fake = f.v.path + "/fake-lib"
        try FileManager.default.createDirectory(atPath: fake, withIntermediateDirectories: true)
        // Its bytes: the path may be a symbolic link, whose copy would name nothing there.
        #expect(FileManager.default.createFile(atPath: fake + "/libcurl.so.4", contents: FileManager.default.contents(atPath: String(zlib))))
        try f.write("a", [1])
        let port = try freePorts(1)[0]
        let file = try config("    ping: http://127.0.0.1:\(port)/uuid\n")
        let r = try f.v.add(["run", "home", "--config", file], f.cacheEnv.merging(["LD_LIBRARY_PATH": fake]) { $1 }, timeout: 60)
        #expect(r.status == 0 && r.stderr.contains("could not ping http://127.0.0.1:\(port)/uuid/start: libcurl (libcurl.so.4) could not be loaded"),
                "\(r.stderr)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 1)
    }

    @Test func aMistakeInTheFileStopsBeforeAnythingRuns() throws {
        let facts = f.v.path + "/facts"
        let file = try config("    exclude_caches: true\n    hooks:\n      before: ['touch \(facts)']\n")
        let r = try run(file)
        #expect(r.status == 2 && r.stderr.contains("\(file):5: profiles.home.exclude_caches: unknown key"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: facts))
        // A config others may write is not read: its hooks run as this user.
        let good = try config("    hooks:\n      before: ['touch \(facts)']\n")
        chmod(good, 0o666)
        let open = try run(good)
        #expect(open.status == 2 && open.stderr.contains("others may write it"), "\(open.stderr)")
        #expect(!FileManager.default.fileExists(atPath: facts))
    }

    /// `keep:` forgets this host's older snapshots after the backup, with
    /// the password at hand; without it the backup stands, the run says
    /// why it did not forget, and exits 3.
    @Test func keepForgetsTheOlderSnapshots() throws {
        try f.write("a", [1])
        let file = try config("    keep: {last: 1}\n")
        for _ in 0..<2 {
            let r = try f.v.run(["run", "home", "--config", file], f.cacheEnv, timeout: 60)
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 1)
        let r = try run(file)
        #expect(r.status == 3 && r.stderr.contains("the backup is made, but forgetting old snapshots failed"), "\(r.stderr)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 2)
        // The profile says where the password is: the run forgets unattended.
        let unattended = try config("    keep: {last: 1}\n    password-file: \(f.v.passwordFile)\n")
        let u = try run(unattended)
        #expect(u.status == 0, "\(u.stderr)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 1)
    }

    /// `push:` sends the vault off-site after the backup (no password);
    /// a push that fails fails the run, with the error hooks.
    @Test func pushSendsTheVaultToItsRemotesAfterTheBackup() throws {
        try f.write("a", Array("pushed\n".utf8))
        let remote = f.v.path + "/nas"
        #expect(try f.v.run(["remote", "add", "nas", remote], f.cacheEnv).status == 0)
        let file = try config("    push: [nas]\n    hooks:\n      error: ['touch \(f.v.path)/failed']\n")
        let r = try run(file)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: remote + "/vault.header"))
        // The copy is whole: a clone of it lists the snapshot.
        let clone = f.v.path + "/clone"
        #expect(try f.v.run(["clone", remote, clone], f.cacheEnv, timeout: 60).status == 0)
        let listed = try CLIHarness.run(["--vault", clone, "--password-file", f.v.passwordFile, "snapshots", "list", "--json"],
                                        environment: f.v.environment(f.cacheEnv), cwd: f.v.path, timeout: 30)
        #expect(BackupFixture.snapshotCount(listed) == 1, "\(listed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.v.path + "/failed"))
        let bad = try config("    push: [nowhere]\n    hooks:\n      error: ['touch \(f.v.path)/failed']\n")
        let failed = try run(bad)
        #expect(failed.status != 0 && failed.stderr.contains("the backup is made, but the push to 'nowhere' failed"), "\(failed.stderr)")
        #expect(FileManager.default.fileExists(atPath: f.v.path + "/failed"))
    }

    /// `check:` verifies the vault after the backup when the last passed
    /// check is old enough; damage it finds is the run's failure.
    @Test func checkRunsWhenTheLastPassedOneIsOldEnough() throws {
        try f.write("a", (0..<200_000).map { _ in UInt8.random(in: 0...255) })
        let stamp = f.v.path + "/.local/state/vault/runs/home.checked"
        let file = try config("    check: {every: 1w, read-data: true}\n    password-file: \(f.v.passwordFile)\n"
                              + "    hooks:\n      error: ['touch \(f.v.path)/failed']\n")
        #expect(try run(file).status == 0)
        let first = try String(contentsOfFile: stamp, encoding: .utf8)
        // Checked a day ago: not again.
        let dayAgo = "vault checked v1\n\(Int(Date().timeIntervalSince1970) - 86_400)\n"
        try dayAgo.write(toFile: stamp, atomically: true, encoding: .utf8)
        #expect(try run(file).status == 0)
        #expect(try String(contentsOfFile: stamp, encoding: .utf8) == dayAgo && first.hasPrefix("vault checked v1\n"))
        // Eight days ago, and a byte of a pack flipped since: the check runs and fails the run.
        try "vault checked v1\n\(Int(Date().timeIntervalSince1970) - 8 * 86_400)\n".write(toFile: stamp, atomically: true, encoding: .utf8)
        let packs = try FileManager.default.subpathsOfDirectory(atPath: f.v.dir).map { f.v.dir + "/" + $0 }.filter { path in
            ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0) > 150_000
        }
        let pack = try #require(packs.first, "no pack of the 200 kB file in \(f.v.dir)")
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: pack)))
        bytes[bytes.count / 2] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: pack))
        try f.write("b", [2])
        let damaged = try run(file)
        #expect(damaged.status != 0 && damaged.status != 3, "\(damaged.stderr)")
        #expect(FileManager.default.fileExists(atPath: f.v.path + "/failed"))
    }
}
