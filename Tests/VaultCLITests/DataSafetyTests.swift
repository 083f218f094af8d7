import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12: nothing is lost and no plaintext is left behind. Each case is
/// the adversarial run's repro, against the built binary.
@Suite struct DataSafetyTests {
    /// `sh -c script` (as root, like the suite), for mounts and ownership.
    static func shell(_ script: String, _ v: VaultFixture) throws -> CLIHarness.Result {
        try CLIHarness.run(["sh", "-c", script], environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
    }

    // MARK: 1. A drop-in racing a rekey

    /// An add fed from a FIFO spans a whole rekey: it read the old public key
    /// when it started, the rekey finishes while it still reads its input,
    /// and it must seal to the new key (it re-reads the header under the
    /// drop lock), so the item opens.
    @Test func anAddSpanningARekeyIsNotLost() throws {
        let v = try VaultFixture()
        let before = try v.write("before.txt", Array("stored before the rekey".utf8))
        #expect(try v.add(["add", before]).status == 0)
        #expect(try v.listed().count == 1)
        let oldKey = try v.info()["public_key_fingerprint"] as? String

        let fifo = v.path + "/input"
        #expect(mkfifo(fifo, 0o600) == 0)
        let add = try Background(["--vault", v.dir, "add", "-", "--name", "late.bin"], environment: v.environment(),
                                 cwd: v.path, stdin: fifo)
        defer { add.killGroup() }
        let writer = open(fifo, O_WRONLY)  // returns once the add's shell opened it
        #expect(writer >= 0)
        let content = randomBytes(3 << 20)
        let half = content.count / 2
        #expect(content.withUnsafeBytes { write(writer, $0.baseAddress, half) } == half)
        // The add has started its content file (no name in the inbox until
        // it is complete): it is past opening the vault and reading its key.
        #expect(add.waitUntilWritingNameless(in: v.dir + "/inbox"), "the add never started its content file")

        let rekey = try v.run(["rekey", "--yes"])
        #expect(rekey.status == 0, "rekey: \(rekey.stderr)")
        #expect(try v.info()["public_key_fingerprint"] as? String != oldKey, "the rekey did not change the key")

        #expect(content.withUnsafeBytes { write(writer, $0.baseAddress! + half, content.count - half) } == content.count - half)
        close(writer)
        #expect(add.wait(timeout: 30) == 0, "add: \(add.stderr)")

        #expect(try v.listed().map(\.name).sorted() == ["before.txt", "late.bin"])
        #expect(try v.get("late.bin").stdout == content)
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 0 && !check.stderr.contains("warning"), "\(check.stderr)")
    }

    /// While an add holds the drop lock (here: this test, holding it shared
    /// as an add does while it seals), rekey says it waits, and switches
    /// keys only once the lock is free.
    @Test func rekeyWaitsForAnAddThatIsSealing() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", try v.write("a.txt", [1, 2, 3])]).status == 0)
        #expect(try v.listed().count == 1)
        let oldKey = try v.info()["public_key_fingerprint"] as? String
        let fd = open(v.dir + "/owner.lock", O_RDWR | O_CREAT, 0o600)
        #expect(fd >= 0 && flock(fd, LOCK_SH) == 0)
        let rekey = try Background(["--vault", v.dir, "--password-file", v.passwordFile, "rekey", "--yes"],
                                   environment: v.environment(), cwd: v.path)
        defer { rekey.killGroup() }
        let started = Date()
        while !rekey.stderr.contains("waiting for drop-ins"), rekey.poll() == nil, Date().timeIntervalSince(started) < 20 {
            usleep(20_000)
        }
        #expect(rekey.stderr.contains("waiting for drop-ins in progress"), "\(rekey.stderr)")
        usleep(200_000)
        #expect(rekey.poll() == nil, "rekey finished while an add held the drop lock")
        #expect(try v.info()["public_key_fingerprint"] as? String == oldKey)
        close(fd)
        #expect(rekey.wait(timeout: 30) == 0, "\(rekey.stderr)")
        #expect(try v.info()["public_key_fingerprint"] as? String != oldKey)
        #expect(try v.get("a.txt").stdout == [1, 2, 3])
    }

    // MARK: 2. Rollback

    /// An older header + manifest put back: every command refuses with exit
    /// 14 and says why, deleting nothing; --accept-rollback opens it, and the
    /// newer item's file is an orphan that only check --repair moves aside.
    @Test func anOlderManifestIsRefusedAndNothingIsDeleted() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", try v.write("old.txt", Array("old".utf8))]).status == 0)
        #expect(try v.listed().count == 1)
        let fm = FileManager.default
        try fm.createDirectory(atPath: v.path + "/backup", withIntermediateDirectories: false)
        for f in ["vault.header", "manifest"] { try fm.copyItem(atPath: v.dir + "/" + f, toPath: v.path + "/backup/" + f) }
        #expect(try v.add(["add", try v.write("new.txt", Array("new".utf8))]).status == 0)
        #expect(try v.listed().count == 2)
        let blobs = try v.filesInVault().filter { $0.hasPrefix("items/") }
        #expect(blobs.count == 2)

        for f in ["vault.header", "manifest"] {
            try fm.removeItem(atPath: v.dir + "/" + f)
            try fm.copyItem(atPath: v.path + "/backup/" + f, toPath: v.dir + "/" + f)
        }
        for args in [["list"], ["get", "old.txt"], ["check"], ["check", "--repair"]] {
            let r = try v.run(args)
            #expect(r.status == 14, "\(args): \(r.status) \(r.stderr)")
            #expect(firstLine(r.stderr).contains("older than one seen here before"), "\(args): \(r.stderr)")
        }
        #expect(try v.filesInVault().filter { $0.hasPrefix("items/") } == blobs, "a refused command deleted blobs")

        let accepted = try v.run(["--accept-rollback", "list", "--json"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(try ListedItem.parse(accepted.stdout).map(\.name) == ["old.txt"])
        #expect(try v.filesInVault().filter { $0.hasPrefix("items/") } == blobs, "a read deleted the newer item's file")
        let check = try v.run(["check"])
        #expect(check.stderr.contains("warning: orphan"), "\(check.stderr)")
        let repair = try v.run(["check", "--repair"])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stderr.contains("quarantine"), "\(repair.stderr)")
        let quarantined = try fm.contentsOfDirectory(atPath: v.dir + "/quarantine")
        #expect(quarantined.count == 1)
        #expect(blobs.contains("items/" + quarantined[0]))
        let purge = try v.run(["check", "--repair", "--purge"])
        #expect(purge.status == 0, "\(purge.stderr)")
        #expect(try fm.contentsOfDirectory(atPath: v.dir + "/quarantine").isEmpty)
    }

    // A planted rekey.pending: VaultCoreTests/RekeyTests (made deterministically there).

    // MARK: 3. Read-only copies

    /// A vault on a read-only bind mount: list, get and check work, say how
    /// many drop-ins wait, and add fails with exit status other than 3.
    @Test func aVaultOnAReadOnlyMountIsReadable() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", try v.write("a.txt", Array("stored".utf8))]).status == 0)
        #expect(try v.listed().count == 1)
        #expect(try v.add(["add", try v.write("b.txt", Array("waiting".utf8))]).status == 0)
        let ro = v.path + "/ro"
        try FileManager.default.createDirectory(atPath: ro, withIntermediateDirectories: false)
        let mount = try Self.shell("mount --bind vault ro && mount -o remount,ro,bind ro", v)
        defer { _ = try? Self.shell("umount ro", v) }
        guard mount.status == 0 else {
            print("skipped the read-only mount test: mount refused (\(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
            return
        }
        func atRO(_ args: [String]) throws -> CLIHarness.Result {
            try CLIHarness.run(["--vault", ro, "--password-file", v.passwordFile] + args, environment: v.environment(), cwd: v.path)
        }
        let list = try atRO(["list", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try ListedItem.parse(list.stdout).map(\.name) == ["a.txt"])
        #expect(list.stderr.contains("read-only: 1 drop-in not absorbed"), "\(list.stderr)")
        let get = try atRO(["get", "a.txt"])
        #expect(get.status == 0 && get.stdout == Array("stored".utf8), "\(get.stderr)")
        let check = try atRO(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
        let add = try CLIHarness.run(["--vault", ro, "add", v.path + "/a.txt", v.path + "/b.txt"],
                                     environment: v.environment(), cwd: v.path)
        #expect(add.status != 0 && add.status != 3, "add to a read-only vault exited \(add.status): \(add.stderr)")
        #expect(add.stderr.contains("read-only file system"), "\(add.stderr)")
    }

    /// Another user's readable copy (files 0644, directories 0755, owned by
    /// root) opened by `nobody`: reads work without the writer lock.
    @Test func anotherUsersReadableCopyIsReadable() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", try v.write("a.txt", Array("stored".utf8))]).status == 0)
        #expect(try v.listed().count == 1)
        #expect(try v.add(["add", try v.write("b.txt", Array("waiting".utf8))]).status == 0)
        let probe = try CLIHarness.run(["runuser", "-u", "nobody", "--", CLIHarness.binary, "--version"],
                                       environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
        guard getuid() == 0, probe.status == 0 else {
            print("skipped the other-user copy test: needs root and a binary 'nobody' can run (\(probe.stderr))")
            return
        }
        let setup = try Self.shell("""
            chmod 0755 . && cp -r vault copy && chmod -R a+rX copy && cp password pw-nobody && chmod 0644 pw-nobody \
            && mkdir home-nobody && chown nobody home-nobody
            """, v)
        #expect(setup.status == 0, "\(setup.stderr)")
        let asNobody = ["runuser", "-u", "nobody", "--", "env", "HOME=\(v.path)/home-nobody", "VAULT_ALLOW_WEAK_KDF=1",
                        CLIHarness.binary, "--vault", v.path + "/copy", "--password-file", v.path + "/pw-nobody"]
        let list = try CLIHarness.run(asNobody + ["list", "--json"], environment: v.environment(), cwd: v.path,
                                      executable: "/usr/bin/env")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try ListedItem.parse(list.stdout).map(\.name) == ["a.txt"])
        #expect(list.stderr.contains("read-only: 1 drop-in not absorbed"), "\(list.stderr)")
        let get = try CLIHarness.run(asNobody + ["get", "a.txt"], environment: v.environment(), cwd: v.path,
                                     executable: "/usr/bin/env")
        #expect(get.status == 0 && get.stdout == Array("stored".utf8), "\(get.stderr)")
    }

    // MARK: 4. A full disk

    /// A 4 MiB tmpfs at `disk` in a fixture's sandbox, with a vault path on
    /// it; unmounted when it goes. Nil where mounting is refused (not root).
    final class SmallDisk {
        let v: VaultFixture
        let vault: String

        init?(_ v: VaultFixture) throws {
            self.v = v
            vault = v.path + "/disk/vault"
            try FileManager.default.createDirectory(atPath: v.path + "/disk", withIntermediateDirectories: false)
            let mount = try DataSafetyTests.shell("mount -t tmpfs -o size=4m,mode=0700 tmpfs disk", v)
            guard mount.status == 0 else {
                print("skipped a full-disk test: mount refused (\(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
                return nil
            }
        }

        deinit { _ = try? DataSafetyTests.shell("umount disk", v) }

        /// `vault --vault VAULT [--password-file PW] ARGS`.
        func run(_ args: [String], password: Bool = true) throws -> CLIHarness.Result {
            try CLIHarness.run(["--vault", vault] + (password ? ["--password-file", v.passwordFile] : []) + args,
                               environment: v.environment(), cwd: v.path)
        }
    }

    /// With the file system full and a drop-in waiting, reads still work:
    /// absorb fails with a warning naming the path, and get/list go on.
    @Test func aFullDiskDoesNotBlockReading() throws {
        let v = try VaultFixture(create: false)
        guard let small = try SmallDisk(v) else { return }
        let (disk, vault) = (v.path + "/disk", small.vault)
        func run(_ args: [String], password: Bool = true) throws -> CLIHarness.Result { try small.run(args, password: password) }
        #expect(try run(VaultFixture.cheapInit).status == 0)
        let big = randomBytes(1 << 20)
        #expect(try run(["add", try v.write("big.bin", big)], password: false).status == 0)
        #expect(try run(["list"]).status == 0)
        #expect(try run(["add", try v.write("small.txt", Array("small".utf8))], password: false).status == 0)
        let fill = try Self.shell("dd if=/dev/zero of=disk/fill bs=64k 2>/dev/null; df --output=avail disk | tail -1", v)
        #expect(fill.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "the disk is not full: \(fill.stdoutText)")

        let get = try run(["get", "big.bin"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == big)
        #expect(get.stderr.contains("no space left on device") && get.stderr.contains(vault), "\(get.stderr)")
        let list = try run(["list", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try ListedItem.parse(list.stdout).map(\.name) == ["big.bin"], "an item the disk could not take in was listed")
        // Space again: the waiting drop-in comes in whole.
        try FileManager.default.removeItem(atPath: disk + "/fill")
        let after = try run(["list", "--json"])
        #expect(after.status == 0, "\(after.stderr)")
        #expect(try ListedItem.parse(after.stdout).map(\.name).sorted() == ["big.bin", "small.txt"])
        #expect(try run(["get", "small.txt"]).stdout == Array("small".utf8))
        let check = try run(["check", "--read-data"])
        #expect(check.status == 0 && !check.stderr.contains("orphan"), "\(check.stderr)")
    }

    /// A backup that meets a full disk while its worker threads store the
    /// pieces (PiecePipeline): one clear error, no snapshot, nothing left
    /// in the vault; a backup that fits works right after.
    @Test func aBackupOntoAFullDiskFailsWholeAndLeavesNothing() throws {
        let v = try VaultFixture(create: false)
        guard let small = try SmallDisk(v) else { return }
        #expect(try small.run(VaultFixture.cheapInit).status == 0)
        // Lock files are made by the first command that takes one, and stay.
        func files() throws -> Set<String> { Set(try FileManager.default.subpathsOfDirectory(atPath: small.vault).filter { !$0.hasSuffix(".lock") }) }
        let before = try files()
        try FileManager.default.createDirectory(atPath: v.path + "/big", withIntermediateDirectories: false)
        for k in 0..<8 { _ = try v.write("big/f\(k)", randomBytes(1 << 20)) }
        let failed = try small.run(["backup", v.path + "/big"], password: false)
        #expect(failed.status != 0 && failed.stderr.contains("no space left on device"), "\(failed.status): \(failed.stderr)")
        let after = try files()
        #expect(after == before, "a failed backup left files: \(after.subtracting(before))")
        try FileManager.default.createDirectory(atPath: v.path + "/fits", withIntermediateDirectories: false)
        _ = try v.write("fits/notes.txt", Array("notes".utf8))
        let backup = try small.run(["backup", v.path + "/fits"], password: false)
        #expect(backup.status == 0, "\(backup.stderr)")
        let list = try small.run(["snapshots", "list", "--json"])
        #expect(list.status == 0 && list.stdoutText.contains("fits"), "\(list.stderr)")
    }

    // MARK: 6. Names that are not UTF-8

    /// A folder holding `caf\xe9.txt` goes through add, open (edited there)
    /// and restore by its bytes, and open leaves nothing in scratch/.
    @Test func aNonUTF8NameIsKeptAndErased() throws {
        let v = try VaultFixture()
        let folder = v.path + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)
        let raw = Array(folder.utf8) + [UInt8(ascii: "/")] + name + [0]
        let fd = raw.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_WRONLY | O_CREAT | O_EXCL, 0o600) }
        #expect(fd >= 0)
        _ = write(fd, "secret", 6)
        close(fd)
        #expect(try v.add(["add", folder]).status == 0)
        #expect(try v.listed().map(\.files) == [1])

        // No XDG_RUNTIME_DIR: the copy goes to scratch/ inside the vault.
        let edit = try v.run(["open", "folder", "--with", #"f() { printf ' edited' >> "$1/$(printf 'caf\351.txt')"; }; f"#])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(edit.stderr.contains("saved the changes"), "\(edit.stderr)")
        let scratch = (try? FileManager.default.contentsOfDirectory(atPath: v.dir + "/scratch")) ?? []
        #expect(scratch.isEmpty, "left in scratch/: \(scratch)")

        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try v.run(["restore", "folder", "--to", out]).status == 0)
        let restored = Array((out + "/folder/").utf8) + name + [0]
        let rfd = restored.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_RDONLY) }
        #expect(rfd >= 0, "the restored file does not have its bytes name")
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(rfd, &buffer, 64)
        close(rfd)
        #expect(n > 0 && Array(buffer[0..<n]) == Array("secret edited".utf8))
    }

    /// A top-level path that is not UTF-8 is refused by name (not "no such
    /// file"), and the other paths are still added (exit 3).
    @Test func aNonUTF8PathArgumentIsRefusedClearly() throws {
        let v = try VaultFixture()
        try v.write("ok.txt", [1])
        // Through the shell: the argument reaches vault as raw bytes.
        let r = try CLIHarness.run(["sh", "-c", #"exec "$0" --vault vault add "$(printf 'caf\351.txt')" ok.txt"#, CLIHarness.binary],
                                   environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("not valid UTF-8"), "\(r.stderr)")
        #expect(r.stderr.contains("added 'ok.txt'"), "\(r.stderr)")
    }

    // MARK: 7. Someone else's scratch directory

    /// A scratch base (`$XDG_RUNTIME_DIR/vault`) that others can write, or
    /// that is not ours, or in a shared non-sticky parent, is refused before
    /// any plaintext is written.
    @Test(arguments: ["world-writable", "someone else's", "in a shared parent"])
    func anUnsafeScratchBaseIsRefused(_ how: String) throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", try v.write("a.txt", Array("secret".utf8))]).status == 0)
        let runtime = v.path + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime + "/vault", withIntermediateDirectories: true)
        switch how {
        case "world-writable": #expect(chmod(runtime + "/vault", 0o777) == 0)
        case "someone else's": #expect(chown(runtime + "/vault", 65534, 65534) == 0)
        default: #expect(chmod(runtime, 0o777) == 0)
        }
        let r = try v.run(["open", "a.txt", "--with", "cat"], ["XDG_RUNTIME_DIR": runtime])
        #expect(r.status != 0, "\(r.stderr)")
        #expect(firstLine(r.stderr).contains("refusing"), "\(r.stderr)")
        #expect(!r.stdout.contains(UInt8(ascii: "s")), "plaintext reached the command")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime + "/vault").isEmpty)
    }

    // MARK: 8. Exit classes of add

    /// 3 only when something was added; else the first failure's code.
    @Test func addExitsThreeOnlyWhenSomethingWasAdded() throws {
        let v = try VaultFixture()
        let none = try v.add(["add", "missing-1", "missing-2"])
        #expect(none.status != 0 && none.status != 3, "nothing added, exit \(none.status): \(none.stderr)")
        let some = try v.add(["add", "missing-1", try v.write("ok.txt", [1])])
        #expect(some.status == 3, "\(some.stderr)")
        #expect(try v.info()["waiting_drop_ins"] as? Int == 1)
    }
}
