import Testing
@testable import VaultRemote

/// Every cell of the sync decision (SyncPlan), as a table: the rule push and
/// pull follow, checked without any transport.
@Suite struct SyncPlanTests {
    enum Outcome: Equatable, CustomStringConvertible {
        case pull(SyncPlan.PullAction)
        case push(SyncPlan.PushAction)
        case header(SyncPlan.HeaderAction)
        case refused(RemoteError)
        var description: String { "\(self)" }
    }

    static func outcome(_ body: () throws -> Outcome) -> Outcome {
        do { return try body() } catch let e as RemoteError { return .refused(e) } catch { return .refused(.malformedRemote("\(error)")) }
    }

    // (L, R, K, same bytes when asked) -> pull
    static let pullTable: [(UInt64, UInt64, UInt64, Bool, Outcome)] = [
        (5, 5, 5, false, .pull(.inStep)),
        (5, 5, 3, true, .pull(.inStep)),                              // both reached 5 the same way (a copy)
        (5, 5, 3, false, .pull(.merge)),                              // both reached 5 differently
        (5, 7, 5, false, .pull(.fetch)),
        (3, 7, 5, false, .pull(.fetch)),                              // we are behind what we knew: fine
        (6, 7, 5, false, .pull(.merge)),
        (7, 6, 5, false, .pull(.merge)),                              // both changed, ours is the higher
        (7, 6, 0, false, .pull(.remoteBehind(adopt: true))),          // never synced: adopted, not merged
        (7, 5, 5, false, .pull(.remoteBehind(adopt: false))),
        (7, 5, 0, false, .pull(.remoteBehind(adopt: true))),
        (7, 4, 5, false, .refused(.remoteRollback(remote: 4, known: 5))),
        (5, 4, 5, false, .refused(.remoteRollback(remote: 4, known: 5))),
        (0, 0, 0, false, .pull(.inStep)),
    ]

    @Test func pullCells() {
        for (l, r, k, same, want) in Self.pullTable {
            var asked = false
            let got = Self.outcome { .pull(try SyncPlan.pull(local: l, remote: r, known: k) { asked = true; return same }) }
            #expect(got == want, "L=\(l) R=\(r) K=\(k)")
            // The manifests' bytes are compared only when R = L and K differs.
            #expect(asked == (r == l && k != r && r >= k), "L=\(l) R=\(r) K=\(k): asked \(asked)")
        }
    }

    // (L, R (nil: none), K, pending there) -> push
    static let pushTable: [(UInt64, UInt64?, UInt64, Bool, Outcome)] = [
        (1, nil, 0, false, .push(.init(adoptPending: false, uploadManifest: true))),
        (5, 5, 5, false, .push(.init(adoptPending: false, uploadManifest: false))),
        (6, 5, 5, false, .push(.init(adoptPending: false, uploadManifest: true))),
        (6, 3, 5, false, .push(.init(adoptPending: false, uploadManifest: true))),   // rolled back there: put right
        (6, 7, 5, false, .refused(.remoteChanged(remote: 7, known: 5))),
        (7, 7, 5, true, .push(.init(adoptPending: true, uploadManifest: false))),    // a killed push of ours landed
        (8, 7, 5, true, .push(.init(adoptPending: true, uploadManifest: true))),
        (7, 7, 5, false, .refused(.remoteChanged(remote: 7, known: 5))),             // another machine's 7
        (5, 5, 0, false, .refused(.remoteChanged(remote: 5, known: 0))),
    ]

    @Test func pushCells() {
        for (l, r, k, pending, want) in Self.pushTable {
            let got = Self.outcome { .push(try SyncPlan.push(local: l, remote: r, known: k) { pending }) }
            #expect(got == want, "L=\(l) R=\(String(describing: r)) K=\(k)")
        }
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

    /// A manifest to merge may be below ours, never below K, and must be the one announced.
    @Test func mergedManifestMustBeTheOneAnnounced() {
        #expect(throws: Never.self) { try SyncPlan.checkMergeable(authenticated: 6, announced: 6, known: 5) }
        #expect(throws: RemoteError.remoteChangedWhileReading(announced: 9, found: 6)) {
            try SyncPlan.checkMergeable(authenticated: 6, announced: 9, known: 5)
        }
        #expect(throws: RemoteError.remoteRollback(remote: 4, known: 5)) {
            try SyncPlan.checkMergeable(authenticated: 4, announced: 4, known: 5)
        }
    }

    @Test func fetchedManifestMustBeTheOneAnnounced() {
        #expect(throws: Never.self) { try SyncPlan.checkFetched(authenticated: 7, announced: 7, local: 5, known: 5) }
        // The repro of issue 23: the short read said 999, the whole read was generation 1.
        #expect(throws: RemoteError.remoteChangedWhileReading(announced: 999, found: 1)) {
            try SyncPlan.checkFetched(authenticated: 1, announced: 999, local: 3, known: 3)
        }
        #expect(throws: RemoteError.remoteRollback(remote: 5, known: 5)) {
            try SyncPlan.checkFetched(authenticated: 5, announced: 5, local: 5, known: 3)
        }
        #expect(throws: RemoteError.remoteRollback(remote: 4, known: 6)) {
            try SyncPlan.checkFetched(authenticated: 4, announced: 4, local: 3, known: 6)
        }
    }
}
