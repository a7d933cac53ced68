import Foundation
import Synchronization

@testable import StrataSync

/// A test replica: a client id, a hybrid logical clock over a wall clock the test sets, and the next upload
/// number.
final class Replica: Sendable {
    let id: String
    let clock: HybridLogicalClock
    let wall: ManualWallClock
    private let sequence = Mutex<Int64>(0)

    init(_ id: String, wallMilliseconds: Int64 = 1_764_000_000_000) {
        self.id = id
        let wall = ManualWallClock(wallMilliseconds)
        self.wall = wall
        clock = HybridLogicalClock(replica: id, wallClock: { wall.withLock { $0 } })
    }

    /// A batch of `changes` with the next upload number.
    func batch(_ changes: [ObjectChange], scope: String = "main") -> UploadBatch {
        UploadBatch(
            scope: scope, clientID: id,
            clientSequence: sequence.withLock {
                $0 += 1
                return $0
            }, changes: changes)
    }

    /// A create of person `name` with every property.
    func createPerson(_ name: String, age: Int64) -> ObjectChange {
        let now = clock.now()
        return ObjectChange(
            objectType: "SyncPerson", primaryKey: .string(name), created: now,
            properties: ["age": .value(.int(age), at: now)])
    }

    /// An update of person `name`'s age.
    func updatePerson(_ name: String, age: Int64) -> ObjectChange {
        ObjectChange(
            objectType: "SyncPerson", primaryKey: .string(name), properties: ["age": .value(.int(age), at: clock.now())]
        )
    }

    /// A delete of person `name`.
    func deletePerson(_ name: String) -> ObjectChange {
        ObjectChange(objectType: "SyncPerson", primaryKey: .string(name), deleted: clock.now())
    }
}

/// A wall clock (milliseconds since 1970) that only the test moves.
final class ManualWallClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(_ milliseconds: Int64) { self.milliseconds = Mutex(milliseconds) }

    /// Reads or moves the clock.
    func withLock<Result>(_ body: (inout Int64) -> Result) -> Result {
        milliseconds.withLock { body(&$0) }
    }
}
