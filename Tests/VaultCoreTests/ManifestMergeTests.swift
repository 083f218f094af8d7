import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

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

    static func entry(_ id: [UInt8], _ name: String, _ version: UInt32, _ added: Int64) throws -> ManifestEntry {
        var e = try ManifestEntry(itemID: id, fileKey: FileKey.random(), kind: .file, origin: .unlocked, mode: 0o600,
                                  size: 1, fileCount: 1, added: added, modified: added, name: name)
        e.version = version
        return e
    }

    // MARK: the vector

    /// The `<!-- merge-vector -->` block of FORMAT.md: sections `base`,
    /// `ours`, `theirs`, `merged`, each with its generation, then rows
    /// `id name version added` (the name may hold spaces).
    static func vector() throws -> [String: (generation: UInt64, rows: [Row])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        guard let start = text.range(of: "<!-- merge-vector -->"), let end = text.range(of: "<!-- end merge-vector -->") else {
            throw VectorError("no merge vector in FORMAT.md")
        }
        var out: [String: (generation: UInt64, rows: [Row])] = [:]
        var current = ""
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("    ") && !line.hasPrefix("     ") {
                guard words.count == 2, let g = UInt64(words[1]) else { throw VectorError("bad section line: \(line)") }
                current = String(words[0])
                out[current] = (g, [])
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

    static func manifest(_ rows: [Row], generation: UInt64) throws -> Manifest {
        var m = try Manifest(entries: rows.map { try entry($0.id, $0.name, $0.version, $0.added) })
        m.generation = generation
        return m
    }

    @Test func thePublishedVector() throws {
        let v = try Self.vector()
        let base = try Self.manifest(v["base"]!.rows, generation: v["base"]!.generation)
        let ours = try Self.manifest(v["ours"]!.rows, generation: v["ours"]!.generation)
        let theirs = try Self.manifest(v["theirs"]!.rows, generation: v["theirs"]!.generation)
        for (o, t) in [(ours, theirs), (theirs, ours)] {
            let r = try ManifestMerge.merge(base: base.entries, ours: o, theirs: t)
            #expect(Self.rows(r.manifest) == v["merged"]!.rows, "records, in their order")
            #expect(r.manifest.generation == v["merged"]!.generation)
            #expect(r.conflicts.map(\.kept) == ["draft-ours.md (conflict)", "plan.txt (conflict)"])
        }
        let r = try ManifestMerge.merge(base: base.entries, ours: ours, theirs: theirs)
        #expect(r.conflicts[0].kind == .renamedOnBoth(ours: "draft-ours.md", theirs: "draft-theirs.md"))
        #expect(r.conflicts[1].kind == .removedAndChanged(removedBy: .theirs))
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
    /// new version), removes, renames, forgets, and syncs (merge with the
    /// remote against its base, then the remote takes the result), in
    /// random order. After every machine has synced twice in turn, all
    /// hold the remote's manifest; every id added and never removed is
    /// there; every id removed is gone unless a conflict kept it. Each
    /// merge is also checked to be symmetric, and to be a fast-forward
    /// when one side did not change.
    @Test func randomSchedulesConverge() throws {
        // The same schedules every run (WriterLimitTests' SplitMix64); VAULT_MERGE_SEED picks others.
        var generator = WriterLimitTests.SplitMix(state: UInt64(ProcessInfo.processInfo.environment["VAULT_MERGE_SEED"] ?? "") ?? 27)
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
        let (status, out) = try python(["merge"], input: try JSONSerialization.data(withJSONObject: merges.map { $0.filter { $0.key != "merged" } }))
        #expect(status == 0)
        let answers = try JSONSerialization.jsonObject(with: out) as? [[String: Any]] ?? []
        #expect(answers.count == merges.count && merges.count >= minimum, "\(answers.count) answers to \(merges.count) merges")
        for (i, (mine, theirs)) in zip(merges, answers).enumerated() {
            #expect((mine["merged"] as? [[Any]]).map(Self.json) == (theirs["entries"] as? [[Any]]).map(Self.json), "merge \(i) differs")
            #expect(mine["generation"] as? UInt64 == (theirs["generation"] as? NSNumber)?.uint64Value, "merge \(i): generation")
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

    static func run(schedule: Int, _ g: inout WriterLimitTests.SplitMix, _ merges: inout [[String: Any]]) throws {
        var remote = try Manifest()
        var machines = Array(repeating: Machine(manifest: try Manifest(), base: try Manifest()), count: 3)
        var added = Set<[UInt8]>(), removed = Set<[UInt8]>(), conflicted = Set<[UInt8]>()
        var time: Int64 = 0
        let steps = Int.random(in: 5...40, using: &g)
        for _ in 0..<steps {
            let i = Int.random(in: 0..<3, using: &g)
            time += 1
            var m = machines[i].manifest
            switch Int.random(in: 0..<10, using: &g) {
            case 0...2:  // add: a new item, or a new version of one
                let e = try entry((0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }, names.randomElement(using: &g)!, 1, time)
                try m.addVersion(e)
                added.insert(e.itemID)
            case 3:
                if let item = m.items.randomElement(using: &g) {
                    removed.formUnion(try m.remove(named: [item.current.name]).map(\.itemID))
                }
            case 4:
                if let item = m.items.randomElement(using: &g) {
                    let to = names.randomElement(using: &g)! + String(Int.random(in: 0..<3, using: &g))
                    if !m.contains(name: to) { try m.rename(item.current.name, to: to) }
                }
            case 5:  // forget one version that is not the current one
                if let item = m.items.filter({ $0.versions > 1 }).randomElement(using: &g) {
                    let old = m.versions(named: item.current.name).dropLast().randomElement(using: &g)!
                    removed.formUnion(m.remove(itemIDs: [old.itemID]).map(\.itemID))
                }
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
            #expect(conflicted.contains(id), "schedule \(schedule): a removed item came back without a conflict")
        }
    }

    /// One machine's sync: a fast-forward when either side is the base,
    /// else the merge; then both hold the result.
    static func sync(_ m: inout Machine, _ remote: inout Manifest, _ conflicted: inout Set<[UInt8]>,
                     _ merges: inout [[String: Any]]) throws {
        let oursChanged = Set(rows(m.manifest)) != Set(rows(m.base))
        let theirsChanged = Set(rows(remote)) != Set(rows(m.base))
        var result = m.manifest
        if theirsChanged {
            let r = try ManifestMerge.merge(base: m.base.entries, ours: m.manifest, theirs: remote)
            merges.append(["base": rows(json: m.base.entries), "ours": rows(json: m.manifest.entries), "theirs": rows(json: remote.entries),
                           "ours_generation": Int(m.manifest.generation), "theirs_generation": Int(remote.generation),
                           "merged": rows(json: r.manifest.entries), "generation": r.manifest.generation])
            let swapped = try ManifestMerge.merge(base: m.base.entries, ours: remote, theirs: m.manifest)
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
