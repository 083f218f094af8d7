import Testing
@testable import VaultCore
@testable import VaultRemote

/// Every cell of the sync decision (SyncPlan), as a table: the rule push and
/// pull follow, checked without any transport.
@Suite struct SyncPlanTests {
    enum Outcome: Equatable, CustomStringConvertible {
        case pull(SyncPlan.PullAction)
        case push(SyncPlan.PushAction)
        case header(SyncPlan.HeaderAction)
        case refused(RemoteError)
        case failed(String)
        var description: String { "\(self)" }
    }

    static func outcome(_ body: () throws -> Outcome) -> Outcome {
        do { return try body() } catch let e as RemoteError { return .refused(e) } catch { return .failed("\(error)") }
    }

    /// A history from (replica letter, count, tag letter) triples: replica
    /// ids and tags are that letter repeated.
    static func history(_ dots: [(Character, UInt64, Character)]) -> ManifestHistory {
        var h = ManifestHistory()
        for (replica, count, tag) in dots {
            let id = Array(repeating: UInt8(replica.asciiValue!), count: 16)
            for _ in 0..<count { try! h.advance(replica: id, tag: Array(repeating: UInt8(tag.asciiValue!), count: 8)) }
        }
        return h
    }

    /// A manifest as the decision sees it: its identity, generation and
    /// history (nil: from before version 5).
    static func side(_ identity: String, _ generation: UInt64, _ dots: [(Character, UInt64, Character)]?) -> SyncPlan.Side {
        SyncPlan.Side(identity: identity, generation: generation, history: dots.map(history))
    }

    // (local, remote, base) -> pull. Generations are chosen to mislead: the
    // decision must never read them where histories speak.
    static let pullTable: [(SyncPlan.Side, SyncPlan.Side, SyncPlan.Side?, Outcome)] = [
        (side("L", 5, [("a", 5, "x")]), side("L", 5, [("a", 5, "x")]), nil, .pull(.inStep)),
        (side("L", 2, [("a", 2, "x")]), side("R", 9, [("a", 1, "x")]), nil, .pull(.remoteBehind)),
        (side("L", 9, [("a", 1, "x")]), side("R", 2, [("a", 2, "x")]), nil, .pull(.fetch)),
        // Issue 37, item 1: a fork whose generation is the smaller is no
        // older: both changed since the base, merge with it.
        (side("L", 2, [("a", 3, "x")]), side("R", 1, [("a", 1, "x"), ("b", 1, "y")]), side("B", 0, [("a", 1, "x")]),
         .pull(.merge(withBase: true))),
        // Item 2: a remote added again, no base: merge with none (a union
        // less what tombstones say), never adopt.
        (side("L", 2, [("a", 2, "x")]), side("R", 1, [("a", 1, "x"), ("b", 1, "y")]), nil, .pull(.merge(withBase: false))),
        // One replica that forked (a directory put back and written again):
        // the same count with another tag is no descendant.
        (side("L", 2, [("a", 2, "x")]), side("R", 2, [("a", 2, "y")]), side("B", 1, [("a", 1, "x")]), .pull(.merge(withBase: true))),
        // The remote lost a write we shared (an older copy put back): refused
        // (issue 23), though ours holds all it has (a push puts ours back).
        (side("L", 3, [("a", 3, "x"), ("b", 2, "y")]), side("R", 2, [("a", 2, "x"), ("b", 1, "y")]),
         side("B", 3, [("a", 2, "x"), ("b", 2, "y")]), .refused(.remoteRollback(remote: 2, known: 3, changedSince: false))),
        // It lost a write we shared and holds one we do not: a rollback
        // written on since. Refused, whatever the generations say.
        (side("L", 3, [("a", 1, "x"), ("b", 2, "y")]), side("R", 9, [("a", 1, "x"), ("b", 1, "y"), ("c", 1, "z")]),
         side("B", 3, [("a", 1, "x"), ("b", 2, "y")]), .refused(.remoteRollback(remote: 9, known: 3, changedSince: true))),
        // Ours does not hold the base (rolled back here on purpose): merge without it.
        (side("L", 2, [("a", 2, "z")]), side("R", 3, [("a", 2, "x"), ("b", 1, "y")]), side("B", 2, [("a", 2, "x")]),
         .pull(.merge(withBase: false))),
        // Manifests from before version 5 (no history): the base, then generations.
        (side("L", 4, nil), side("B", 3, nil), side("B", 3, nil), .pull(.remoteBehind)),
        (side("L", 4, [("a", 1, "x")]), side("B", 3, nil), side("B", 3, nil), .pull(.remoteBehind)),
        (side("L", 4, [("a", 1, "x")]), side("R", 5, nil), side("B", 3, nil), .pull(.merge(withBase: true))),
        (side("L", 3, nil), side("R", 4, nil), side("L", 3, nil), .pull(.merge(withBase: true))),
        (side("L", 4, [("a", 1, "x")]), side("R", 2, nil), side("B", 3, nil), .refused(.remoteRollback(remote: 2, known: 3, changedSince: true))),
        (side("L", 4, nil), side("R", 5, nil), nil, .pull(.merge(withBase: false))),
    ]

    @Test func pullCells() {
        for (i, (l, r, b, want)) in Self.pullTable.enumerated() {
            let got = Self.outcome { .pull(try SyncPlan.pull(local: l, remote: r, base: b)) }
            #expect(got == want, "row \(i)")
        }
    }

    // (local, remote (nil: none), base, pending there) -> push
    static let pushTable: [(String, String?, String?, Bool, Outcome)] = [
        ("L", nil, nil, false, .push(.init(adoptPending: false, uploadManifest: true))),
        ("L", "L", "B", false, .push(.init(adoptPending: false, uploadManifest: false))),
        ("L", "B", "B", false, .push(.init(adoptPending: false, uploadManifest: true))),
        ("L", "P", "B", true, .push(.init(adoptPending: true, uploadManifest: true))),    // a killed push of ours landed
        ("L", "R", "B", false, .refused(.remoteChanged(remote: 7, known: 0))),           // another machine's
        // Issue 37, items 1 and 2: no base kept (a remote added again) is
        // no proof: a pull with the password decides first.
        ("L", "R", nil, false, .refused(.remoteChanged(remote: 7, known: 0))),
        // An older copy put back there, one ours descends from: made current again.
        ("L", "O", "B", false, .push(.init(adoptPending: false, uploadManifest: true, remoteWasOlder: true))),
    ]

    @Test func pushCells() {
        for (i, (l, r, b, pending, want)) in Self.pushTable.enumerated() {
            var asked = false
            let got = Self.outcome {
                .push(try SyncPlan.push(local: l, remote: r, base: b, older: ["O", "P0"], remoteGeneration: 7) { asked = true; return pending })
            }
            #expect(got == want, "row \(i)")
            // PENDING is read (a download) only when nothing cheaper decided.
            #expect(asked == (r != nil && r != l && r != b && r != "O"), "row \(i)")
        }
    }

    /// Containment, cell by cell: more writes contain fewer; an equal
    /// count only with the same tag; a replica the other lacks never.
    @Test func historyContainment() {
        let h = Self.history
        #expect(h([("a", 2, "x")]).contains(h([("a", 1, "y")])))
        #expect(h([("a", 2, "x")]).contains(h([("a", 2, "x")])))
        #expect(!h([("a", 2, "x")]).contains(h([("a", 2, "y")])))
        #expect(!h([("a", 2, "x")]).contains(h([("a", 1, "x"), ("b", 1, "x")])))
        #expect(h([("a", 1, "x"), ("b", 1, "x")]).contains(ManifestHistory()))
        let u = try! h([("a", 2, "x"), ("b", 1, "y")]).union(h([("a", 1, "x"), ("b", 3, "z"), ("c", 1, "w")]))
        #expect(u == h([("a", 2, "x"), ("b", 3, "z"), ("c", 1, "w")]))
        // A forked dot: the greater tag, and the union contains neither fork.
        let forked = try! h([("a", 2, "x")]).union(h([("a", 2, "y")]))
        #expect(forked == h([("a", 2, "y")]) && forked == (try! h([("a", 2, "y")]).union(h([("a", 2, "x")]))))
    }

    static func h(_ d: String, _ c: UInt64) -> SyncPlan.Header { SyncPlan.Header(digest: d, counter: c) }

    // (local, remote, synced) -> header
    static let headerTable: [(SyncPlan.Header, SyncPlan.Header?, String?, Outcome)] = [
        (h("a", 1), nil, nil, .header(.keepLocal)),
        (h("a", 1), h("a", 1), nil, .header(.same)),
        (h("a", 1), h("a", 1), "z", .header(.same)),
        // Known in step at "a": only one side changed.
        (h("b", 2), h("a", 1), "a", .header(.keepLocal)),
        (h("a", 1), h("b", 2), "a", .header(.takeRemote)),
        (h("b", 2), h("c", 2), "a", .refused(.headersDiverged)),
        (h("b", 2), h("c", 9), "a", .refused(.headersDiverged)),
        // The remote's changed to an older (or equal) counter: a rollback,
        // or a lie to a push. Ours stays.
        (h("b", 5), h("a", 4), "b", .header(.keepLocal)),
        // Equal counters, ours unchanged: a sibling chosen by `push --replace-header`.
        (h("b", 5), h("x", 5), "b", .header(.takeRemote)),
        // Nothing remembered (a remote from before version 4): the counters.
        (h("a", 1), h("b", 2), nil, .header(.takeRemote)),
        (h("b", 2), h("a", 1), nil, .header(.keepLocal)),
        (h("a", 0), h("b", 0), nil, .refused(.headersDiverged)),
    ]

    @Test func headerCells() {
        for (local, remote, synced, want) in Self.headerTable {
            let got = Self.outcome { .header(try SyncPlan.header(local: local, remote: remote, synced: synced)) }
            #expect(got == want, "local=\(local) remote=\(String(describing: remote)) synced=\(String(describing: synced))")
        }
    }

    /// The staged manifest must be the one announced (issue 23's repro:
    /// the short read said 999, the whole read was generation 1).
    @Test func stagedManifestMustBeTheOneAnnounced() {
        #expect(throws: Never.self) { try SyncPlan.checkAnnounced(authenticated: 7, announced: 7) }
        #expect(throws: RemoteError.remoteChangedWhileReading(announced: 999, found: 1)) {
            try SyncPlan.checkAnnounced(authenticated: 1, announced: 999)
        }
    }
}
