import Foundation
import Testing
import TestSupport
import VaultCrypto
@testable import VaultCore
@testable import VaultRemote

/// The three-way merge of manifests (ManifestMerge; docs/FORMAT.md,
/// "Merge"): the published vector, read from FORMAT.md itself, the rule's
/// algebra, and random schedules of three machines sharing one remote.
@Suite("Manifest merge")
struct ManifestMergeTests {
    /// (id, name, version, added), what the merge decides on.
    struct Row: Hashable, CustomStringConvertible {
        let id: [UInt8], name: String, version: UInt32, added: Int64
        var description: String { "\(Hex.encode(id.prefix(2))) \(name) v\(version)" }
    }

    static func rows(_ m: Manifest) -> [Row] {
        m.entries.map { Row(id: $0.itemID, name: $0.name, version: $0.version, added: $0.added) }
    }

    /// An entry whose file key follows from its id (`keyByte` aside): one
    /// id names one item on every side, as it does in a vault.
    static func entry(_ id: [UInt8], _ name: String, _ version: UInt32, _ added: Int64, keyByte: UInt8 = 0) throws -> ManifestEntry {
        let key = try (id + id).map { $0 ^ keyByte }.withUnsafeBytes { try FileKey(secret: SecretBytes(copying: $0)) }
        var e = try ManifestEntry(itemID: id, fileKey: key, kind: .file, origin: .unlocked, mode: 0o600,
                                  size: 1, fileCount: 1, added: added, modified: added, name: name)
        e.version = version
        return e
    }

    // MARK: the vector

    /// A vector block of FORMAT.md (`<!-- merge-vector -->`, or another
    /// `name`): sections `base`, `ours`, `theirs`, `merged`, each with its
    /// generation, then rows `id name version added` (the name may hold
    /// spaces) and `removed id...` (the section's tombstones).
    static func vector(_ name: String = "merge-vector") throws -> [String: (generation: UInt64, rows: [Row], removed: Set<[UInt8]>, other: Set<[UInt8]>)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        guard let start = text.range(of: "<!-- \(name) -->"), let end = text.range(of: "<!-- end \(name) -->") else {
            throw VectorError("no \(name) in FORMAT.md")
        }
        var out: [String: (generation: UInt64, rows: [Row], removed: Set<[UInt8]>, other: Set<[UInt8]>)] = [:]
        var current = ""
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("    ") && !line.hasPrefix("     ") {
                guard words.count == 2, let g = UInt64(words[1]) else { throw VectorError("bad section line: \(line)") }
                current = String(words[0])
                out[current] = (g, [], [], [])
            } else if words.first == "removed" {
                for w in words.dropFirst() {
                    // "04*": a tombstone of another item under that id (its
                    // digest is of file key 04…04 with every byte XOR ff).
                    let other = w.hasSuffix("*")
                    guard let byte = UInt8(other ? w.dropLast() : w, radix: 16) else { throw VectorError("bad id: \(line)") }
                    out[current]!.removed.insert(Array(repeating: byte, count: 16))
                    if other { out[current]!.other.insert(Array(repeating: byte, count: 16)) }
                }
            } else if words.count >= 4, let byte = UInt8(words[0], radix: 16), let v = UInt32(words[words.count - 2]),
                      let added = Int64(words[words.count - 1]) {
                let name = words[1..<(words.count - 2)].joined(separator: " ")
                out[current]!.rows.append(Row(id: Array(repeating: byte, count: 16), name: name, version: v, added: added))
            } else {
                throw VectorError("bad row: \(line)")
            }
        }
        return out
    }

    struct VectorError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    /// `removed`: tombstones of the items the vector's notation gives
    /// those ids; those in `other` too name another item (file key XOR ff).
    static func manifest(_ rows: [Row], generation: UInt64, removed: Set<[UInt8]> = [], other: Set<[UInt8]> = []) throws -> Manifest {
        var m = try Manifest(entries: rows.map { try entry($0.id, $0.name, $0.version, $0.added) })
        m.generation = generation
        for id in removed { m.tombstones.insert(try entry(id, "x", 1, 1, keyByte: other.contains(id) ? 0xff : 0), at: 1) }
        return m
    }

    @Test(arguments: ["merge-vector", "merge-vector-tombstones", "merge-vector-claimed"]) func thePublishedVectors(_ name: String) throws {
        let v = try Self.vector(name)
        let m = try v.mapValues { try Self.manifest($0.rows, generation: $0.generation, removed: $0.removed, other: $0.other) }
        let (base, ours, theirs) = (m["base"]!, m["ours"]!, m["theirs"]!)
        for (o, t, straight) in [(ours, theirs, true), (theirs, ours, false)] {
            let r = try ManifestMerge.merge(base: base.entries, baseTombstones: base.tombstones, ours: o, theirs: t)
            #expect(Self.rows(r.manifest) == v["merged"]!.rows, "records, in their order")
            #expect(r.manifest.generation == v["merged"]!.generation)
            #expect(Set(r.manifest.tombstones.ids) == v["merged"]!.removed, "tombstones")
            // notes.txt and scan.pdf: versions added on both sides, kept as
            // versions and listed (issue 43, item 2).
            let listed: [String: [String]] = ["merge-vector": ["draft-ours.md (conflict)", "notes.txt", "plan.txt (conflict)", "scan.pdf"],
                                              "merge-vector-claimed": ["n1.txt"]]
            #expect(r.conflicts.map(\.kept) == listed[name, default: []])
            // n1.txt: the side that holds it keeps it, and says so.
            if name == "merge-vector-claimed" { #expect(r.conflicts.map(\.kind) == [.idClaimedTwice(kept: straight ? .ours : .theirs)]) }
        }
    }

    @Test func thePublishedVectorsConflicts() throws {
        let v = try Self.vector()
        let base = try Self.manifest(v["base"]!.rows, generation: v["base"]!.generation)
        let ours = try Self.manifest(v["ours"]!.rows, generation: v["ours"]!.generation)
        let theirs = try Self.manifest(v["theirs"]!.rows, generation: v["theirs"]!.generation)
        let r = try ManifestMerge.merge(base: base.entries, ours: ours, theirs: theirs)
        #expect(r.conflicts[0].kind == .renamedOnBoth(ours: "draft-ours.md", theirs: "draft-theirs.md"))
        #expect(r.conflicts[2].kind == .removedAndChanged(removedBy: .theirs))
        // The side whose newest version is older: notes.txt's 0a0a (added
        // later) and scan.pdf's 0c0c are current in the merged rows.
        for i in [1, 3] {
            guard case .editedOnBoth(let older) = r.conflicts[i].kind else { Issue.record("\(r.conflicts[i])"); continue }
            let current = r.manifest.entries.filter { $0.name == r.conflicts[i].kept }.max { $0.version < $1.version }!
            let currentIsOurs = ours.entries.contains { $0.itemID == current.itemID }
            #expect(older == (currentIsOurs ? .theirs : .ours))
        }
        // The merged manifest seals and opens like any other.
        let key = try SecretBytes.random(count: 32), vaultID = SecureRandom.bytes(16)
        let sealed = try r.manifest.sealed(key: key, vaultID: vaultID)
        #expect(Self.rows(try Manifest.open(sealed, key: key, vaultID: vaultID)) == v["merged"]!.rows)
    }

    // MARK: the rule, case by case

    static func id(_ b: UInt8) -> [UInt8] { Array(repeating: b, count: 16) }

    @Test func namesCompareByteForByte() throws {
        // "é" precomposed and decomposed: equal as Swift strings, two names in a vault.
        let base = try Self.manifest([Row(id: Self.id(1), name: "caf\u{E9}", version: 1, added: 1)], generation: 1)
        let ours = try Self.manifest([Row(id: Self.id(1), name: "cafe\u{301}", version: 1, added: 1)], generation: 2)
        let r = try ManifestMerge.merge(base: base.entries, ours: ours, theirs: base)
        #expect(Array(r.manifest.entries[0].name.utf8) == Array("cafe\u{301}".utf8), "the rename applies")
        #expect(r.conflicts.isEmpty)
    }

    /// One id, two items (a dropper who read a listing claimed an id one
    /// side has not seen): each side keeps its own, unless the base holds
    /// the other's; never a mix, and it is listed.
    @Test func anIDClaimedTwiceKeepsOneWholeItem() throws {
        let x = Self.id(9)
        let ours = try Manifest(entries: [try Self.entry(x, "real.txt", 1, 10)])
        let theirs = try Manifest(entries: [try Self.entry(x, "forged.bin", 1, 20, keyByte: 0x5a)])
        let r = try ManifestMerge.merge(base: [], ours: ours, theirs: theirs)
        #expect(r.manifest.entries.map(\.name) == ["real.txt"])
        #expect(r.manifest.entries[0].fileKey.same(as: ours.entries[0].fileKey))
        #expect(r.conflicts.map(\.kind) == [.idClaimedTwice(kept: .ours)])
        let withBase = try ManifestMerge.merge(base: theirs.entries, ours: ours, theirs: theirs)
        #expect(withBase.manifest.entries[0].fileKey.same(as: theirs.entries[0].fileKey))
        #expect(withBase.conflicts.map(\.kind) == [.idClaimedTwice(kept: .theirs)])
    }

    /// What the other side let go under an id was another item than the
    /// one held here (its tombstone's digest, or its base entry, says so):
    /// the one held stays. The same id let go as the same item goes; a
    /// version 5 tombstone (no digest) still removes by id alone.
    @Test func lettingGoOfAForgeryKeepsTheRealItem() throws {
        let x = Self.id(9)
        let real = try Self.entry(x, "n1.txt", 1, 10), forged = try Self.entry(x, "pack-x", 1, 20, keyByte: 0x5a)
        let ours = try Manifest(entries: [real])
        var theirs = try Manifest(entries: [])
        theirs.tombstones.insert(forged, at: 30)
        let r = try ManifestMerge.merge(base: [], ours: ours, theirs: theirs)
        #expect(r.manifest.entries.map(\.name) == ["n1.txt"] && r.manifest.tombstones.count == 0)
        #expect(r.conflicts.map(\.kind) == [.idClaimedTwice(kept: .ours)])
        // The same item let go there: it goes here too.
        var same = try Manifest(entries: [])
        same.tombstones.insert(real, at: 30)
        #expect(try ManifestMerge.merge(base: [], ours: ours, theirs: same).manifest.entries.isEmpty)
        // A digest not known: the id alone counts, as in version 5.
        var unknown = try Manifest(entries: [])
        unknown.tombstones.insert(x, at: 30, digest: [UInt8](repeating: 0, count: 16))
        #expect(try ManifestMerge.merge(base: [], ours: ours, theirs: unknown).manifest.entries.isEmpty)
        // A base that held the forgery, which theirs dropped: ours is not what they dropped.
        let fromBase = try ManifestMerge.merge(base: [forged], ours: ours, theirs: try Manifest(entries: []))
        #expect(fromBase.manifest.entries.map(\.name) == ["n1.txt"])
        #expect(try ManifestMerge.merge(base: [real], ours: ours, theirs: try Manifest(entries: [])).manifest.entries.isEmpty)
        // Two sides that let go of two items under one id keep no digest: the id alone then counts.
        var a = Tombstones(), b = Tombstones()
        a.insert(real, at: 5)
        b.insert(forged, at: 3)
        let both = a.union(b) { _ in false }
        #expect(both.removedAt(x) == 3 && both.removes(real) && both.removes(forged))
        #expect(a.union(Tombstones()) { _ in false } == a && !a.removes(forged))
    }

    /// A host forgotten on either side stays forgotten in the merge (the
    /// machine that publishes next must retire it), with the earlier time.
    @Test func forgottenHostsAreKeptFromBothSides() throws {
        let (h1, h2, h3) = (Self.id(1), Self.id(2), Self.id(3))
        var ours = try Manifest(entries: []), theirs = try Manifest(entries: [])
        ours.forgottenHosts.insert(h1, at: 50)
        ours.forgottenHosts.insert(h2, at: 20)
        theirs.forgottenHosts.insert(h2, at: 10)
        theirs.forgottenHosts.insert(h3, at: 40)
        for (o, t) in [(ours, theirs), (theirs, ours)] {
            let merged = try ManifestMerge.merge(base: [], ours: o, theirs: t).manifest.forgottenHosts
            #expect(merged.names == [h1, h2, h3])
            #expect(merged.forgottenAt(h1) == 50 && merged.forgottenAt(h2) == 10 && merged.forgottenAt(h3) == 40)
        }
    }

    @Test func aConflictNameStaysWithinTheLimit() {
        let long = String(repeating: "\u{1F600}", count: 256)  // 1024 bytes
        let c = ManifestMerge.conflictName(long)
        #expect(c.utf8.count <= ManifestEntry.maxNameLength && c.hasSuffix(" (conflict)"))
        #expect(c.unicodeScalars.dropLast(11).allSatisfy { $0 == "\u{1F600}" })
    }

    @Test func aMergePastTheVersionLimitIsRefused() throws {
        var o: [Row] = [], t: [Row] = []
        for i in 0..<Manifest.maxVersions {
            o.append(Row(id: SecureRandom.bytes(16), name: "n", version: UInt32(i + 1), added: Int64(i)))
        }
        t.append(Row(id: SecureRandom.bytes(16), name: "n", version: 1, added: 5))
        #expect(throws: VaultError.tooManyVersions(name: "n")) {
            try ManifestMerge.merge(base: [], ours: try Self.manifest(o, generation: 1), theirs: try Self.manifest(t, generation: 1))
        }
    }

    // MARK: random schedules


    /// Three machines and a remote, in memory: each adds (a new item or a
    /// new version), removes, renames, forgets, forgets its base (as
    /// `remote remove` and `remote add` do: its next merge has none, and
    /// only tombstones remove anything), and syncs (merge with the
    /// remote against its base, then the remote takes the result), in
    /// random order. VAULT_MERGE_TRACE=N prints schedule N step by step. After every machine has synced twice in turn, all
    /// hold the remote's manifest; every id added and never removed is
    /// there; every id removed is gone unless a conflict kept it. Each
    /// merge is also checked to be symmetric, and to be a fast-forward
    /// when one side did not change.
    @Test func randomSchedulesConverge() throws {
        // The same schedules every run (TestSupport's SplitMix64); VAULT_MERGE_SEED picks others.
        var generator = SplitMix(state: UInt64(ProcessInfo.processInfo.environment["VAULT_MERGE_SEED"] ?? "") ?? 27)
        var merges: [[String: Any]] = []
        for schedule in 0..<Self.schedules {
            try Self.run(schedule: schedule, &generator, &merges)
        }
        try Self.compareWithTheReference(merges)
    }

    /// The second implementation (scripts/reference/vault_merge.py, written
    /// from FORMAT.md) checks the published vector, then merges every case
    /// the schedules merged: its manifests must be these, record for record.
    static func compareWithTheReference(_ merges: [[String: Any]], minimum: Int = 200) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/reference/vault_merge.py").path
        func python(_ args: [String], input: Data) throws -> (Int32, Data) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = ["python3", script] + args
            p.environment = ["PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"]
            let (stdin, stdout) = (Pipe(), Pipe())
            (p.standardInput, p.standardOutput) = (stdin, stdout)
            try p.run()
            // Written from another thread: a large answer must not wait for the whole question.
            let writer = Thread { stdin.fileHandleForWriting.write(input); try? stdin.fileHandleForWriting.close() }
            writer.start()
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            return (p.terminationStatus, out)
        }
        let (vectorStatus, vectorOut) = try python(["check-vector", root.appendingPathComponent("docs/FORMAT.md").path], input: Data())
        #expect(vectorStatus == 0, "\(String(decoding: vectorOut, as: UTF8.self))")
        let (status, out) = try python(["merge"], input: try JSONSerialization.data(withJSONObject: merges.map {
            $0.filter { $0.key != "merged" && $0.key != "removed" }
        }))
        #expect(status == 0)
        let answers = try JSONSerialization.jsonObject(with: out) as? [[String: Any]] ?? []
        #expect(answers.count == merges.count && merges.count >= minimum, "\(answers.count) answers to \(merges.count) merges")
        for (i, (mine, theirs)) in zip(merges, answers).enumerated() {
            #expect((mine["merged"] as? [[Any]]).map(Self.json) == (theirs["entries"] as? [[Any]]).map(Self.json), "merge \(i) differs")
            #expect(mine["generation"] as? UInt64 == (theirs["generation"] as? NSNumber)?.uint64Value, "merge \(i): generation")
            if let gone = mine["removed"] as? [String] { #expect(gone == theirs["removed"] as? [String], "merge \(i): tombstones") }
        }
    }

    /// Entries as JSON rows: [id hex, name, version, added].
    static func rows(json entries: [ManifestEntry]) -> [[Any]] {
        entries.map { [Hex.encode($0.itemID), $0.name, Int($0.version), Int($0.added)] }
    }

    static func json(_ rows: [[Any]]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: rows)) ?? Data(), as: UTF8.self)
    }

    static let schedules = max(250, Int(ProcessInfo.processInfo.environment["VAULT_MERGE_SCHEDULES"] ?? "") ?? 250)

    struct Machine {
        var manifest: Manifest
        var base: Manifest
        var clock: Int64 = 0
    }

    static let names = ["a", "b", "c", "d", "e"]

    /// `items` in name order: its own order is a dictionary's, which
    /// differs from run to run, and a schedule must replay from its seed.
    static func sortedItems(_ m: Manifest) -> [(current: ManifestEntry, versions: Int)] {
        m.items.sorted { $0.current.name.utf8.lexicographicallyPrecedes($1.current.name.utf8) }
    }

    static func run(schedule: Int, _ g: inout SplitMix, _ merges: inout [[String: Any]]) throws {
        var remote = try Manifest()
        var machines = Array(repeating: Machine(manifest: try Manifest(), base: try Manifest()), count: 3)
        var added = Set<[UInt8]>(), removed = Set<[UInt8]>(), conflicted = Set<[UInt8]>()
        var time: Int64 = 0
        let steps = Int.random(in: 5...40, using: &g)
        // What each step did, named in a failure.
        var log: [String] = []
        func short(_ id: [UInt8]) -> String { Hex.encode(id.prefix(2)) }
        for _ in 0..<steps {
            let i = Int.random(in: 0..<3, using: &g)
            time += 1
            var m = machines[i].manifest
            let op = Int.random(in: 0..<10, using: &g)
            log.append("\(i):\(op)")
            defer { log[log.count - 1] += " " + m.entries.map { short($0.itemID) + "=" + $0.name }.sorted().joined(separator: ",") }
            let traced = ProcessInfo.processInfo.environment["VAULT_MERGE_TRACE"] == String(schedule)
            defer {
                if traced {
                    func show(_ x: Manifest) -> String {
                        x.entries.map { short($0.itemID) + "=" + $0.name }.sorted().joined(separator: ",") + " t:" + x.tombstones.ids.map(short).joined(separator: ",")
                    }
                    print(log.last!)
                    for (k, x) in machines.enumerated() { print("   m\(k) \(show(x.manifest))  base \(show(x.base))") }
                    print("   remote \(show(remote))")
                }
            }
            switch op {
            case 0...2:  // add: a new item, or a new version of one
                let e = try entry((0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }, names.randomElement(using: &g)!, 1, time)
                try m.addVersion(e)
                added.insert(e.itemID)
            case 3:
                if let item = sortedItems(m).randomElement(using: &g) {
                    removed.formUnion(try m.remove(named: [item.current.name]).map(\.itemID))
                }
            case 4:
                if let item = sortedItems(m).randomElement(using: &g) {
                    let to = names.randomElement(using: &g)! + String(Int.random(in: 0..<3, using: &g))
                    if !m.contains(name: to) { try m.rename(item.current.name, to: to) }
                }
            case 5:  // forget one version that is not the current one
                if let item = sortedItems(m).filter({ $0.versions > 1 }).randomElement(using: &g) {
                    let old = m.versions(named: item.current.name).dropLast().randomElement(using: &g)!
                    removed.formUnion(m.remove(itemIDs: [old.itemID]).map(\.itemID))
                }
            case 6 where Int.random(in: 0..<3, using: &g) == 0:
                // The base forgotten (`remote remove`, `remote add`): the
                // next merge has none, and only tombstones remove anything.
                machines[i].base = try Manifest()
                continue
            default:
                m.generation += 1
                machines[i].manifest = m
                try sync(&machines[i], &remote, &conflicted, &merges)
                continue
            }
            m.generation += 1
            machines[i].manifest = m
        }
        for _ in 0..<2 { for i in 0..<3 { try sync(&machines[i], &remote, &conflicted, &merges) } }

        let final = Set(rows(remote))
        for m in machines { #expect(Set(rows(m.manifest)) == final, "schedule \(schedule): a machine differs") }
        let ids = Set(remote.entries.map(\.itemID))
        for id in added.subtracting(removed) { #expect(ids.contains(id), "schedule \(schedule): an added item was lost") }
        for id in removed.intersection(ids) {
            #expect(conflicted.contains(id), "schedule \(schedule): a removed item (\(short(id))) came back without a conflict: \(log)")
        }
    }

    /// One machine's sync: a fast-forward when either side is the base,
    /// else the merge; then both hold the result.
    static func sync(_ m: inout Machine, _ remote: inout Manifest, _ conflicted: inout Set<[UInt8]>,
                     _ merges: inout [[String: Any]]) throws {
        // Tombstones count: after a base was forgotten, ours may hold no
        // entry it lacks and still have let go of what theirs holds.
        let oursChanged = Set(rows(m.manifest)) != Set(rows(m.base)) || m.manifest.tombstones != m.base.tombstones
        let theirsChanged = Set(rows(remote)) != Set(rows(m.base)) || remote.tombstones != m.base.tombstones
        var result = m.manifest
        if theirsChanged {
            let r = try ManifestMerge.merge(base: m.base.entries, baseTombstones: m.base.tombstones, ours: m.manifest, theirs: remote)
            merges.append(["base": rows(json: m.base.entries), "ours": rows(json: m.manifest.entries), "theirs": rows(json: remote.entries),
                           "ours_generation": Int(m.manifest.generation), "theirs_generation": Int(remote.generation),
                           "base_removed": m.base.tombstones.ids.map(Hex.encode), "ours_removed": m.manifest.tombstones.ids.map(Hex.encode),
                           "theirs_removed": remote.tombstones.ids.map(Hex.encode),
                           "merged": rows(json: r.manifest.entries), "generation": r.manifest.generation,
                           "removed": r.manifest.tombstones.ids.map(Hex.encode)])
            let swapped = try ManifestMerge.merge(base: m.base.entries, baseTombstones: m.base.tombstones, ours: remote, theirs: m.manifest)
            #expect(rows(r.manifest) == rows(swapped.manifest), "the merge is symmetric")
            if !oursChanged { #expect(Set(rows(r.manifest)) == Set(rows(remote)), "unchanged here: theirs, as it is") }
            for c in r.conflicts {
                conflicted.formUnion(r.manifest.versions(named: c.kept).map(\.itemID))
            }
            result = r.manifest
        }
        result.generation = max(m.manifest.generation, remote.generation) + 1
        (m.manifest, m.base, remote) = (result, result, result)
    }

    // MARK: step 0

    /// A snapshot one side took in keeps the packs it lists that the other
    /// side pruned; one both sides hold, or the base held, keeps nothing;
    /// the reference implementation agrees.
    @Test func aNewSnapshotKeepsThePacksItLists() throws {
        func id(_ b: UInt8) -> [UInt8] { Array(repeating: b, count: 16) }
        func backup(_ b: UInt8, _ kind: ItemKind) throws -> ManifestEntry {
            var e = try Self.entry(id(b), (kind == .pack ? BackupItems.packName(id(b)) : BackupItems.snapshotName(id(b))), 1, 1000)
            e.kind = kind
            return e
        }
        let (p1, p2, p3) = (try backup(1, .pack), try backup(2, .pack), try backup(3, .pack))
        let (old, shared, new) = (try backup(4, .snapshot), try backup(5, .snapshot), try backup(6, .snapshot))
        let base = [p1, p2, p3, old, shared]
        // Ours pruned p1, p2 and p3 and forgot `old`; theirs took in `new` (listing p1 and p2).
        let ours = try Manifest(entries: [shared])
        let theirs = try Manifest(entries: [p1, p2, p3, old, shared, new])
        let needs: [[UInt8]: [[UInt8]]] = [id(6): [id(1), id(2)], id(5): [id(3)], id(4): [id(3)]]
        let merged = try ManifestMerge.merge(base: base, ours: ours, theirs: theirs) { e, _ in needs[e.itemID] }
        #expect(Set(merged.manifest.entries.map(\.itemID)) == Set([id(1), id(2), id(5), id(6)]))
        let swapped = try ManifestMerge.merge(base: base, ours: theirs, theirs: ours) { e, _ in needs[e.itemID] }
        #expect(Self.rows(swapped.manifest) == Self.rows(merged.manifest))

        let json: (Manifest) -> [[Any]] = { m in m.entries.map { [Hex.encode($0.itemID), $0.name, Int($0.version), Int($0.added)] } }
        var mine: [String: Any] = ["base": base.map { [Hex.encode($0.itemID), $0.name, Int($0.version), Int($0.added)] },
                                   "ours": json(ours), "theirs": json(theirs), "ours_generation": 0, "theirs_generation": 0,
                                   "needs": Dictionary(uniqueKeysWithValues: needs.map { (Hex.encode($0.key), $0.value.map(Hex.encode)) })]
        mine["merged"] = json(merged.manifest)
        mine["generation"] = merged.manifest.generation
        try Self.compareWithTheReference([mine], minimum: 1)
    }
}
