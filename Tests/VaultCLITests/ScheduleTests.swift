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
        let r = try vault(["schedule", "home", "--config", file, "--via", "systemd"])
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
        let none = try vault(["schedule", "plain", "--config", file, "--via", "systemd"])
        #expect(none.status == 2 && none.stderr.contains("profiles.plain: no 'schedule:'"), "\(none.stderr)")
        let bad = try f.v.write("bad.yaml", Array("profiles:\n  home:\n    paths: [a]\n    schedule: every night\n".utf8))
        let refused = try vault(["schedule", "home", "--config", bad, "--via", "systemd"])
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
        // On time, but it failed: named too.
        let recent = Int(fields[0])!
        try "vault run v1\n\(recent)\t\(recent + 5)\t14\t-\n".write(toFile: last, atomically: true, encoding: .utf8)
        let failed = try vault(["status", "--config", file])
        #expect(failed.status == 3 && failed.stderr.contains("profile 'home': its last run (") && failed.stderr.contains(") ended with exit 14"), "\(failed.stderr)")
    }

    /// Without systemd: a crontab line (the system's crontab, for a user
    /// made for the test) beside the user's own lines, which stay.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/crontab")))
    func withoutSystemdTheScheduleIsACrontabLine() throws {
        let user = "vc\(UInt32.random(in: 0...UInt32.max))"
        #expect(try sh("useradd --system --no-create-home --shell /bin/sh \(user)").status == 0)
        defer { _ = try? sh("crontab -r -u \(user); userdel \(user)") }
        let home = f.v.path + "/home-cron"
        #expect(try sh("chmod 0755 \(f.v.path) && cp \"$VAULT\" \(f.v.path)/vault-bin && chmod 0755 \(f.v.path)/vault-bin && mkdir \(home) && chown \(user) \(home)"
                       + " && printf '0 5 * * * true # mine\\n' > \(f.v.path)/mine && crontab -u \(user) \(f.v.path)/mine").status == 0)
        let file = try config()
        func asUser(_ args: String) throws -> CLIHarness.Result {
            try sh("runuser -u \(user) -- env HOME=\(home) \(f.v.path)/vault-bin \(args)")
        }
        func crontab() throws -> [String] { try sh("crontab -l -u \(user)").stdoutText.split(separator: "\n").map(String.init) }
        let r = try asUser("schedule home --config \(file) --via cron")
        #expect(r.status == 0 && r.stderr.contains("a line in your crontab checks every 10 minutes"), "\(r.stderr)")
        #expect(try asUser("schedule home --config \(file) --via cron").status == 0)  // again: still one line
        let lines = try crontab()
        let ours = "*/10 * * * * nice -n 10 '\(f.v.path)/vault-bin' run home --config '\(file)' --if-due >/dev/null # vault schedule: home *-*-* 02:00"
        #expect(lines == ["0 5 * * * true # mine", ours], "\(lines)")
        #expect(try asUser("schedule --list").stdoutText == "home  *-*-* 02:00  (crontab)\n")
        // The line's command runs: installed just now, 02:00 has not come
        // since, so it does nothing and says nothing.
        let command = String(ours.dropFirst("*/10 * * * * ".count).prefix { $0 != "#" })
        let script = try f.v.write("tick.sh", Array(command.utf8), mode: 0o644)
        let tick = try sh("runuser -u \(user) -- env HOME=\(home) sh \(script)")
        #expect(tick.status == 0 && tick.stderr.isEmpty, "\(tick.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/.local/state/vault/runs/home.last"))
        // A calendar a crontab tick cannot honour is refused; nothing changes.
        let bad = try f.v.write("bad.yaml", Array("profiles:\n  home:\n    paths: [a]\n    schedule: '*-*-* 02:00 UTC'\n".utf8), mode: 0o644)
        let refused = try asUser("schedule home --config \(bad) --via cron")
        #expect(refused.status == 2 && refused.stderr.contains("cannot run from cron: 'UTC' is neither a date nor a time"), "\(refused.stderr)")
        #expect(try crontab() == lines)
        #expect(try asUser("schedule home --remove").status == 0)
        #expect(try crontab() == ["0 5 * * * true # mine"])
        #expect(try asUser("schedule home --remove").status == 16)
    }

    /// `run --if-due`, what the crontab line runs: a backup only when a
    /// time of the schedule has come since the last run (or since the
    /// schedule was installed), so a machine that was off catches up.
    @Test func ifDueRunsOnlyWhenATimeOfTheScheduleHasCome() throws {
        try f.write("a", [1])
        let file = try config()
        let runs = f.v.path + "/.local/state/vault/runs/"
        try FileManager.default.createDirectory(atPath: runs, withIntermediateDirectories: true)
        func last() -> String? { try? String(contentsOfFile: runs + "home.last", encoding: .utf8) }
        // Installed just now: 02:00 has not come since.
        try "vault since v1\n\(Int(Date().timeIntervalSince1970))\n".write(toFile: runs + "home.since", atomically: true, encoding: .utf8)
        let quiet = try vault(["run", "home", "--config", file, "--if-due"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty && last() == nil, "\(quiet.stderr)")
        // Installed two days ago, never run: the last 02:00 is due.
        try "vault since v1\n\(Int(Date().timeIntervalSince1970) - 2 * 86_400)\n".write(toFile: runs + "home.since", atomically: true, encoding: .utf8)
        #expect(try vault(["run", "home", "--config", file, "--if-due"]).status == 0)
        let first = try #require(last())
        #expect(try vault(["run", "home", "--config", file, "--if-due"]).status == 0)
        #expect(last() == first)
        // The last run was three days ago (the machine was off): it catches up.
        let fields = first.split(separator: "\n")[1].split(separator: "\t")
        let old = Int(fields[0])! - 3 * 86_400
        try "vault run v1\n\(old)\t\(old + 5)\t0\t\(fields[3])\n".write(toFile: runs + "home.last", atomically: true, encoding: .utf8)
        #expect(try vault(["run", "home", "--config", file, "--if-due"]).status == 0)
        #expect(last().map { $0.split(separator: "\n")[1].split(separator: "\t")[0] != "\(old)" } == true)
        // A profile with no schedule has nothing to be due by.
        #expect(try vault(["run", "plain", "--config", file, "--if-due"]).status == 2)
    }

    func sh(_ script: String) throws -> CLIHarness.Result {
        try CLIHarness.run(["sh", "-c", script], environment: f.v.environment(["VAULT": CLIHarness.binary]), cwd: f.v.path,
                           timeout: 60, executable: "/usr/bin/env")
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
