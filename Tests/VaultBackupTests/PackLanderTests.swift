import Foundation
import Synchronization
import Testing
@testable import VaultBackup

/// The landing thread: packs land in the order handed in, at most
/// `depth` wait, and a failure ends the landing and reaches the backup.
@Suite("Pack lander")
struct PackLanderTests {
    struct Refused: Error {}

    @Test func landsInOrderAndWaitsForAll() throws {
        let lander = PackLander()
        let order = Mutex<[Int]>([])
        for i in 0..<20 {
            try lander.land(PackLander.Landing {
                Thread.sleep(forTimeInterval: 0.001)
                order.withLock { $0.append(i) }
            })
        }
        try lander.wait()
        #expect(order.withLock { $0 } == Array(0..<20))
    }

    /// What comes after a failed landing never lands, and the failure is
    /// thrown by the next hand-in and by `wait`: a backup whose pack did
    /// not land writes no snapshot.
    @Test func aFailureEndsTheLanding() throws {
        let lander = PackLander()
        let ran = Mutex<[Int]>([])
        try lander.land(PackLander.Landing { ran.withLock { $0.append(1) } })
        try lander.land(PackLander.Landing { throw Refused() })
        try? lander.land(PackLander.Landing { ran.withLock { $0.append(3) } })
        #expect(throws: Refused.self) { try lander.wait() }
        #expect(throws: Refused.self) { try lander.land(PackLander.Landing { ran.withLock { $0.append(4) } }) }
        #expect(throws: Refused.self) { try lander.wait() }
        #expect(ran.withLock { $0 } == [1])
    }

    /// The hand-in waits while `depth` packs are handed in and not landed
    /// (the one landing included): what is held open stays bounded
    /// whatever the disk's speed.
    @Test func atMostDepthWait() throws {
        let lander = PackLander()
        let gate = DispatchSemaphore(value: 0)
        let started = Mutex(0)
        // One landing running (held at the gate), the others waiting.
        for _ in 0..<PackLander.depth {
            try lander.land(PackLander.Landing {
                started.withLock { $0 += 1 }
                gate.wait()
            })
        }
        let handedIn = Mutex(false)
        let extra = Thread {
            try? lander.land(PackLander.Landing {})
            handedIn.withLock { $0 = true }
        }
        extra.start()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(handedIn.withLock { $0 } == false)
        for _ in 0...PackLander.depth { gate.signal() }
        try lander.wait()
        var tries = 0
        while !handedIn.withLock({ $0 }), tries < 200 { Thread.sleep(forTimeInterval: 0.01); tries += 1 }
        #expect(handedIn.withLock { $0 })
        try lander.wait()
        #expect(started.withLock { $0 } == PackLander.depth)
    }
}
