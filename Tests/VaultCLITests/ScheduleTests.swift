import Foundation
import Testing

/// `vault schedule` and `vault status` (issue 42): a profile's timer as
/// systemd user units that systemd-analyze verifies, the last run and the
/// next, overdue profiles named, and runs of one profile that never overlap.
@Suite struct ScheduleTests {
    let f: BackupFixture
    var units: String { f.v.path + "/cfg/systemd/user" }
    var env: [String: String] { f.cacheEnv.merging(["XDG_CONFIG_HOME": f.v.path + "/cfg"]) { $1 } }
    init() throws { f = try BackupFixture() }

    func config(_ extra: String = "") throws -> String {
        try f.v.write("config.yaml", Array("""
            profiles:
              home:
                vault: \(f.v.dir)
                paths: [\(f.source)]
                schedule: '*-*-* 02:00'
            \(extra)
              plain:
                vault: \(f.v.dir)
                paths: [\(f.source)]

            """.utf8))
    }

    func vault(_ args: [String]) throws -> CLIHarness.Result { try f.v.add(args, env, timeout: 60) }

    func analyze(_ args: [String]) throws -> CLIHarness.Result {
        try CLIHarness.run(args, environment: ["PATH": "/usr/bin:/bin"], timeout: 60, executable: "/usr/bin/systemd-analyze")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func aScheduleIsInstalledAsUnitsSystemdVerifies() throws {
        let file = try config()
        let r = try vault(["schedule", "home", "--config", file])
        #expect(r.status == 0, "\(r.stderr)")
        let service = units + "/vault-home.service", timer = units + "/vault-home.timer"
        #expect(try analyze(["verify", service, timer]).status == 0)
        let text = try String(contentsOfFile: timer, encoding: .utf8)
        #expect(text.contains("\nOnCalendar=*-*-* 02:00\n") && text.contains("\nPersistent=true\n") && text.contains("\nRandomizedDelaySec=10min\n"))
        #expect(try analyze(["calendar", "*-*-* 02:00"]).status == 0)
        #expect(try String(contentsOfFile: service, encoding: .utf8).contains(" run home --config \"\(file)\"\n"))
        #expect(try vault(["schedule", "--list"]).stdoutText == "home  *-*-* 02:00\n")
        #expect(try vault(["schedule", "home", "--remove"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: timer) && !FileManager.default.fileExists(atPath: service))
        // No schedule, or one systemd does not read: refused, nothing written.
        let none = try vault(["schedule", "plain", "--config", file])
        #expect(none.status == 2 && none.stderr.contains("profiles.plain: no 'schedule:'"), "\(none.stderr)")
        let bad = try f.v.write("bad.yaml", Array("profiles:\n  home:\n    paths: [a]\n    schedule: every night\n".utf8))
        let refused = try vault(["schedule", "home", "--config", bad])
        #expect(refused.status == 2 && refused.stderr.contains("'every night' is not a systemd calendar"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: timer))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func statusShowsTheLastRunTheNextAndWhatIsOverdue() throws {
        try f.write("a", [1])
        let file = try config()
        #expect(try vault(["run", "home", "--config", file]).status == 0)
        let s = try vault(["status", "--config", file, "--json"])
        // home ran; plain never did, but it has no schedule: nothing overdue.
        #expect(s.status == 0, "\(s.stderr)")
        let rows = (try JSONSerialization.jsonObject(with: Data(s.stdout)) as? [[String: Any]]) ?? []
        let home = rows.first { $0["profile"] as? String == "home" } ?? [:]
        #expect(home["last_exit_code"] as? Int == 0 && (home["last_snapshot"] as? String)?.count == 32 && home["overdue"] as? Bool == false, "\(home)")
        #expect((home["next"] as? Int ?? 0) > Int(Date().timeIntervalSince1970))
        // Its last run three days ago: overdue, named, exit 3.
        let last = f.v.path + "/.local/state/vault/runs/home.last"
        let fields = try String(contentsOfFile: last, encoding: .utf8).split(separator: "\n")[1].split(separator: "\t")
        let old = Int(fields[0])! - 3 * 86_400
        try "vault run v1\n\(old)\t\(old + 5)\t0\t\(fields[3])\n".write(toFile: last, atomically: true, encoding: .utf8)
        let late = try vault(["status", "--config", file])
        #expect(late.status == 3 && late.stderr.contains("profile 'home' is overdue: its last run started"), "\(late.stderr)")
    }

    @Test func twoRunsOfOneProfileNeverOverlap() throws {
        try f.write("a", [1])
        let marker = f.v.path + "/started"
        let file = try config("    hooks:\n      before: ['touch \(marker); sleep 3']\n")
        let first = try Background(["--vault", f.v.dir, "run", "home", "--config", file], environment: f.v.environment(env), cwd: f.v.path)
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: marker) { usleep(20_000) }
        let second = try vault(["run", "home", "--config", file])
        #expect(second.status == 11 && second.stderr.contains("profile 'home' is running already"), "\(second.stderr)")
        #expect(first.wait(timeout: 30) == 0)
    }
}
