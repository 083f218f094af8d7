import Foundation
import Testing
@testable import VaultConfig

/// The config file (issue 42): read with libyaml, checked key by key, every
/// mistake named with its line before anything runs.
@Suite("Config file")
struct ConfigFileTests {
    func parse(_ text: String) throws(ConfigError) -> ConfigFile { try ConfigFile(parsing: Array(text.utf8)) }

    func error(_ text: String) -> ConfigError? {
        do { _ = try parse(text); return nil } catch { return error }
    }

    @Test func aProfileBecomesBackupWords() throws {
        let file = try parse("""
            # nightly
            profiles:
              home:
                vault: ~/vault
                paths: [~/Documents, "-odd name"]
                exclude: ['*.tmp', '*.iso']
                exclude-caches: true
                one-file-system: no
                tags: nightly
                exclude-larger-than: 2G
                hooks:
                  before: [true]
                  error: 'logger failed'
                ping: https://hc-ping.com/abc
              db:
                stdin-from-command: pg_dump shop
                stdin-filename: shop.sql
            """)
        let home = try file.profile("home")
        #expect(home.vault == "~/vault" && home.line == 3)
        #expect(home.backupArguments == ["--exclude", "*.tmp", "--exclude", "*.iso", "--exclude-caches", "--tag", "nightly",
                                         "--exclude-larger-than", "2G", "--", "~/Documents", "-odd name"])
        #expect(home.before == ["true"] && home.error == ["logger failed"] && home.after.isEmpty && home.ping == "https://hc-ping.com/abc")
        #expect(try file.profile("db").backupArguments == ["--stdin-from-command", "pg_dump shop", "--stdin-filename", "shop.sql"])
        let kept = try parse("profiles:\n  home:\n    paths: [a]\n    host: laptop\n    keep: {daily: 7, within: 30d}\n").profile("home")
        #expect(kept.forgetArguments == ["--keep-daily", "7", "--keep-within", "30d"] && kept.host == "laptop")
        #expect(throws: ConfigError(line: 0, key: "web", problem: .noSuchProfile(known: ["db", "home"]))) { try file.profile("web") }
    }

    @Test func mistakesAreNamedWithTheirLine() throws {
        #expect(error("profiles:\n  home:\n    exclude_caches: true\n")?.line == 3)
        #expect(error("profiles:\n  home:\n    exclude_caches: true\n")?.key == "profiles.home.exclude_caches")
        #expect(error("profiles:\n  home:\n    paths: {a: b}\n") == ConfigError(line: 3, key: "profiles.home.paths", problem: .wrongType(expected: "a list")))
        #expect(error("profiles:\n  home:\n    exclude-caches: maybe\n")?.problem == .wrongType(expected: "true or false"))
        #expect(error("profiles:\n  home:\n    hooks:\n      later: [x]\n")?.line == 4)
        #expect(error("profiles:\n  home:\n    ping: ftp://x\n")?.line == 3)
        #expect(error("profiles:\n  'bad name':\n    paths: [a]\n")?.line == 2)
        #expect(error("profiles:\n  home:\n    paths: [a]\n    paths: [b]\n") == ConfigError(line: 4, key: "paths", problem: .duplicateKey))
        #expect(error("backups:\n  home: {}\n")?.problem == .unknownKey(known: ["profiles"]))
        #expect(error("profiles:\n  home:\n    to: nas:/v\n    keep: {daily: 7}\n")?.line == 4, "a --to host cannot forget")
        #expect(try parse("profiles:\n  home:\n    paths: [a]\n    push: [nas, usb]\n").profile("home").push == ["nas", "usb"])
        #expect(error("profiles:\n  home:\n    to: nas:/v\n    push: nas\n")?.line == 4, "a --to host has no vault to push")
        #expect(error("profiles:\n  home:\n    push: ['--all']\n")?.line == 3)
        let checked = try parse("profiles:\n  home:\n    paths: [a]\n    check: {every: 2w, read-data-subset: 10%}\n").profile("home")
        #expect(checked.checkArguments == ["--read-data-subset", "10%"] && checked.checkEvery == 14 * 86_400)
        #expect(try parse("profiles:\n  home:\n    paths: [a]\n    check: true\n").profile("home").checkArguments == [])
        #expect(try parse("profiles:\n  home:\n    paths: [a]\n    check: no\n").profile("home").checkArguments == nil)
        #expect(error("profiles:\n  home:\n    check: {every: fortnight}\n")?.line == 3)
        #expect(error("profiles:\n  home:\n    check: {often: 1d}\n")?.line == 3)
        #expect(try parse("profiles:\n  home:\n    paths: [a]\n    limit-upload: 512\n").profile("home").limitUpload == 512)
        #expect(error("profiles:\n  home:\n    limit-download: 1M\n")?.line == 3)
        #expect(error("profiles:\n  home:\n    keep: {daily: 0}\n")?.line == 3)
        #expect(error("profiles:\n  home:\n    keep: {fortnightly: 2}\n")?.line == 3)
        #expect(error("")?.problem == .noProfiles)
        #expect(error("profiles: {}\n")?.problem == .noProfiles)
        #expect(error("profiles:\n  home: [unclosed\n")?.problem.isSyntax == true)
        #expect(error("profiles: {}\n---\nprofiles: {}\n")?.problem == .moreThanOneDocument)
    }

    /// What a config has no use for and could be made to cost: refused.
    @Test func aliasesDepthAndSize() {
        #expect(error("a: &x [1, 2]\nprofiles:\n  home:\n    paths: *x\n")?.problem == .alias)
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(error("profiles: " + deep + "\n")?.problem == .nestedTooDeep)
        #expect(error(String(repeating: "# padding\n", count: 110_000))?.problem == .tooLarge)
    }

    /// The README's example is a file vault reads, as a new user copies it.
    @Test func theReadmeExampleIsAConfigFile() throws {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        let readme = try String(contentsOf: url.appendingPathComponent("README.md"), encoding: .utf8)
        func block(after first: String) -> [String] {
            let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let i = lines.firstIndex(where: { $0.hasPrefix(first) }) else { return [] }
            return lines[i...].prefix { !$0.isEmpty }.map { String($0.dropFirst(4)) }
        }
        let home = block(after: "    # ~/.config/vault/config.yaml").dropFirst()
        let desktop = block(after: "      desktop:")
        #expect(home.first == "profiles:" && desktop.count > 3)
        let file = try ConfigFile(parsing: Array((home + desktop).joined(separator: "\n").utf8))
        let h = try file.profile("home"), d = try file.profile("desktop")
        #expect(h.push == ["nas"] && h.passwordFile == "~/.config/vault/password" && h.schedule == "*-*-* 02:00")
        #expect(h.forgetArguments == ["--keep-daily", "7", "--keep-weekly", "4", "--keep-monthly", "12"] && h.notifyFailuresOnly)
        #expect(h.checkArguments == ["--read-data-subset", "10%"] && h.checkEvery == 7 * 86_400)
        #expect(d.backupArguments.contains("--to") && d.before.count == 1)
    }
}

extension ConfigError.Problem {
    var isSyntax: Bool { if case .syntax = self { true } else { false } }
}
