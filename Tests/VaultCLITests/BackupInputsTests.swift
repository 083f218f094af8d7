import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 42: the inputs restic users expect of `vault backup`: paths from
/// files, case-blind excludes, marker files, and a command's output (a
/// database dump) as a file of the snapshot.
@Suite struct BackupInputsTests {
    let f: BackupFixture
    init() throws { f = try BackupFixture() }

    /// `vault backup ARGS --json` (no PATH of the fixture's), its result.
    func backup(_ args: [String]) throws -> CLIHarness.Result {
        try f.v.add(["backup", "--json"] + args, f.cacheEnv, timeout: 120)
    }

    /// The paths `snapshots ls latest` prints, after the mode, owner, size and time columns.
    func listed() throws -> [String] {
        let r = try f.snapshots(["ls", "latest"])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdoutText.split(separator: "\n").compactMap { line in line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) }
    }

    @Test func pathsComeFromFiles() throws {
        for name in ["a", "b", "c", "d"] { try f.write(name, Array("\(name)\n".utf8)) }
        let s = f.source
        let lines = try f.v.write("list.txt", Array("# what to keep\n\n  \(s)/a  \n\(s)/b\n".utf8))
        let verbatim = try f.v.write("verbatim.txt", Array("\(s)/c\n".utf8))
        let raw = try f.v.write("raw.bin", Array("\(s)/d".utf8) + [0])
        let r = try backup(["--files-from", lines, "--files-from-verbatim", verbatim, "--files-from-raw", raw])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try listed() == ["/a", "/b", "/c", "/d"].map { s + $0 })
        // A list that names nothing is refused before anything is read.
        let empty = try f.v.write("empty.txt", Array("# nothing\n".utf8))
        let none = try backup(["--files-from", empty])
        #expect(none.status == 2 && none.stderr.contains("the lists of files name no PATH"), "\(none.stderr)")
    }

    @Test func caseBlindExcludesAndMarkerFiles() throws {
        try f.write("Photo.JPG", [1, 2, 3])
        try f.write("notes.txt", Array("keep\n".utf8))
        try f.mkdir("scratch")
        try f.write("scratch/.nobackup", [])
        try f.write("scratch/big.bin", [4, 5, 6])
        _ = try f.backup(["--iexclude", "*.jpg", "--exclude-if-present", ".nobackup"])
        #expect(try listed() == [f.source, f.source + "/notes.txt"])
        // Without them, all of it.
        _ = try f.backup([])
        #expect(try listed().count == 6)
    }

    /// A real SQLite database, dumped into the snapshot, restored and
    /// loaded back: the same dump. The second run stores next to nothing.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func aSQLiteDumpGoesInAndLoadsBack() throws {
        let db = f.v.path + "/shop.db"
        var sql = "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, note TEXT);\nBEGIN;\n"
        for i in 0..<20_000 { sql += "INSERT INTO items(name, note) VALUES('item \(i)', '\(String(repeating: "x", count: i % 97))');\n" }
        sql += "COMMIT;\n"
        let made = try CLIHarness.run([db], stdin: Array(sql.utf8), environment: [:], timeout: 60, executable: "/usr/bin/sqlite3")
        #expect(made.status == 0, "\(made.stderr)")
        let command = "sqlite3 '\(db)' .dump"
        let first = try backup(["--stdin-from-command", command, "--stdin-filename", "shop.sql"])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try JSONObject.parse(try backup(["--stdin-from-command", command, "--stdin-filename", "shop.sql"]).stdout)
        // The same dump: its pieces are stored already; only the top
        // folder's record is new (the file's time is the run's).
        #expect((second["bytes_new"] as? Int ?? .max) < 4096 && (second["pieces_reused"] as? Int ?? 0) >= 2, "\(second)")
        #expect(try listed() == ["/shop.sql"])
        let out = f.v.path + "/out"
        let restored = try f.snapshots(["restore", "latest", "--to", out])
        #expect(restored.status == 0, "\(restored.stderr)")
        let copy = f.v.path + "/copy.db"
        let loaded = try CLIHarness.run([copy], stdin: [UInt8](try Data(contentsOf: URL(fileURLWithPath: out + "/shop.sql"))),
                                        environment: [:], timeout: 60, executable: "/usr/bin/sqlite3")
        #expect(loaded.status == 0, "\(loaded.stderr)")
        let a = try CLIHarness.run([db, ".dump"], environment: [:], timeout: 60, executable: "/usr/bin/sqlite3")
        let b = try CLIHarness.run([copy, ".dump"], environment: [:], timeout: 60, executable: "/usr/bin/sqlite3")
        #expect(a.stdout == b.stdout && a.stdout.count > 1 << 20)
    }

    /// A command that fails makes no snapshot, whatever it printed, and
    /// says so: exit 1, its status named.
    @Test func aFailingCommandMakesNoSnapshot() throws {
        let r = try backup(["--stdin-from-command", "echo half a dump; exit 3"])
        #expect(r.status == 1 && r.stderr.contains("the command of --stdin-from-command exited with status 3: no snapshot was made"),
                "\(r.stderr)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 0)
        let alone = try backup(["--stdin-filename", "x.sql"])
        #expect(alone.status == 2 && alone.stderr.contains("--stdin-filename goes with --stdin-from-command"), "\(alone.stderr)")
        let path = try backup(["--stdin-from-command", "true", "--stdin-filename", "a/b"])
        #expect(path.status == 2, "\(path.stderr)")
    }

    /// A real PostgreSQL cluster the test starts (as the postgres user, a
    /// Unix socket only) and stops: `pg_dump` into the snapshot, restored,
    /// loaded into a new database, dumped again: the same.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: BackupInputsTests.pg + "/initdb")))
    func aPostgreSQLDumpGoesInAndLoadsBack() throws {
        var template = Array("/tmp/vault-pg-test.XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        let port = String(try freePorts(1)[0])
        func sh(_ script: String) throws -> CLIHarness.Result {
            try CLIHarness.run(["sh", "-c", script], environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"], timeout: 120, executable: "/usr/bin/env")
        }
        let pg = Self.pg
        #expect(try sh("chown postgres \(dir) && runuser -u postgres -- \(pg)/initdb -D \(dir)/data --auth=trust -U postgres >/dev/null "
                       + "&& runuser -u postgres -- \(pg)/pg_ctl -D \(dir)/data -w -l \(dir)/log -o \"-k \(dir) -p \(port) -c listen_addresses=''\" start >/dev/null").status == 0,
                "\((try? String(contentsOfFile: dir + "/log", encoding: .utf8)) ?? "")")
        defer { _ = try? sh("runuser -u postgres -- \(pg)/pg_ctl -D \(dir)/data -m immediate stop >/dev/null; rm -rf \(dir)") }
        let psql = "\(pg)/psql -q -h \(dir) -p \(port) -U postgres -v ON_ERROR_STOP=1"
        let load = try sh("\(psql) -c 'CREATE DATABASE shop' && \(psql) -d shop -c \"CREATE TABLE orders(id serial PRIMARY KEY, customer text, total numeric(10,2), placed timestamptz); "
                          + "INSERT INTO orders(customer, total, placed) SELECT 'customer ' || i, i * 1.25, timestamptz '2026-01-01' + i * interval '1 minute' FROM generate_series(1, 50000) i\"")
        #expect(load.status == 0, "\(load.stderr)")
        let dump = "\(pg)/pg_dump -h \(dir) -p \(port) -U postgres shop"
        let r = try backup(["--stdin-from-command", dump, "--stdin-filename", "shop.sql"])
        #expect(r.status == 0, "\(r.stderr)")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        let again = try sh("\(psql) -c 'CREATE DATABASE copy' && \(psql) -d copy -f \(out)/shop.sql >/dev/null")
        #expect(again.status == 0, "\(again.stderr)")
        // pg_dump brackets its output with \restrict KEY ... \unrestrict KEY,
        // a random key each time: compared without those two lines.
        func body(_ r: CLIHarness.Result) -> [Substring] {
            r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("\\restrict ") && !$0.hasPrefix("\\unrestrict ") }
        }
        let a = try sh(dump), b = try sh("\(pg)/pg_dump -h \(dir) -p \(port) -U postgres copy")
        #expect(a.status == 0 && body(a) == body(b) && a.stdout.count > 1 << 20, "\(a.stderr)\(b.stderr)")
    }

    static let pg = "/usr/lib/postgresql/15/bin"
}
