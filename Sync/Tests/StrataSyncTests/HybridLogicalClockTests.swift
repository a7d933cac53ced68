import Foundation
import Testing

@testable import StrataSync

@Suite struct HybridLogicalClockTests {
    @Test func timestampsIncreaseWhileTheWallClockGoesBackwards() {
        let replica = Replica("a")
        var previous = replica.clock.now()
        for step in 0..<50 {
            // The wall clock jumps back 10 s half way, then creeps forward: the clock must never go back.
            replica.wall.withLock { $0 += step == 25 ? -10_000 : 1 }
            let next = replica.clock.now()
            #expect(next > previous)
            previous = next
        }
        #expect(previous.wallMilliseconds == 1_764_000_000_025)
    }

    @Test func aReceivedTimestampIsPassedEvenFromAClockThatIsAhead() throws {
        let behind = Replica("behind")
        let ahead = Replica("ahead", wallMilliseconds: 1_764_000_005_000)
        let remote = ahead.clock.now()
        try behind.clock.receive(remote)
        let local = behind.clock.now()
        #expect(local > remote)
        #expect(local.wallMilliseconds == remote.wallMilliseconds)
        #expect(local.counter == remote.counter + 2)
    }

    @Test func tiesAreBrokenByReplicaSoEveryReplicaPicksTheSameWinner() {
        let a = HybridTimestamp(wallMilliseconds: 5, counter: 1, replica: "a")
        let b = HybridTimestamp(wallMilliseconds: 5, counter: 1, replica: "b")
        #expect(a < b)
        #expect(!(b < a))
        #expect(a != b)
        #expect([b, a].max() == b)
    }

    @Test func aTimestampTooFarAheadIsRefusedAndLeavesTheClockAlone() {
        let replica = Replica("a")
        let before = replica.clock.now()
        let future = HybridTimestamp(wallMilliseconds: before.wallMilliseconds + 7_200_000, counter: 0, replica: "z")
        #expect(throws: SyncError.clockDrift(future, wallMilliseconds: before.wallMilliseconds)) {
            try replica.clock.receive(future)
        }
        #expect(replica.clock.now().wallMilliseconds == before.wallMilliseconds)
    }

    @Test func theEncodedFormRoundTripsAndSortsAsTheTimestamps() throws {
        let stamps = [
            HybridTimestamp(wallMilliseconds: 9, counter: 0, replica: "b"),
            HybridTimestamp(wallMilliseconds: 10, counter: 0, replica: "a"),
            HybridTimestamp(wallMilliseconds: 10, counter: 2, replica: "a"),
            HybridTimestamp(wallMilliseconds: 10, counter: 10, replica: "a"),
            HybridTimestamp(wallMilliseconds: 10, counter: 10, replica: "ab"),
        ]
        #expect(stamps.sorted() == stamps)
        #expect(stamps.map(\.description).sorted() == stamps.map(\.description))
        let data = try JSONEncoder().encode(stamps)
        #expect(try JSONDecoder().decode([HybridTimestamp].self, from: data) == stamps)
        #expect(HybridTimestamp("12.3.a") == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HybridTimestamp.self, from: Data("\"x\"".utf8)) }
    }
}
