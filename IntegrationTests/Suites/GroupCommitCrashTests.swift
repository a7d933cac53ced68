import Foundation
import StrataStorage
import StrataTestSupport
import Testing

/// A child process runs 8 writer actors whose durable commits are grouped (they share log syncs) and prints each
/// acknowledged commit; it is killed with SIGKILL at random moments. After each kill the file must open, pass
/// `verify`, and hold every commit the child acknowledged: a grouped commit is acknowledged only once durable.
@Suite("Group commit crash (SIGKILL) recovery", .serialized)
struct GroupCommitCrashTests {
    static var kills: Int { soak ? 200 : 12 }

    /// The value the child stores under `key` (its `crashValue`).
    static func value(_ key: UInt64) -> [UInt8] { (0..<48).map { UInt8(truncatingIfNeeded: key &* 31 &+ UInt64($0)) } }

    @Test func killedGroupCommitterLosesNoAcknowledgedCommit() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("group-crash.strata")
        var generator = SystemRandomNumberGenerator()
        var acknowledged: [UInt64] = []
        for round in 0..<Self.kills {
            let child = try Child(["group-commit-loop", path, "8"])
            let target = Int.random(in: 1...400, using: &generator)
            for _ in 0..<target {
                guard let line = child.readLine() else { break }
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == "acked", let key = UInt64(parts[1]) { acknowledged.append(key) }
            }
            child.kill()

            let store = try Store.open(path: path, options: StoreOptions(pageSize: 1024))
            let report = try store.verify()
            #expect(report.isValid, "round \(round): \(report)")
            let acked = try #require(try store.read().tree(named: "group-acked"), "round \(round): no commit survived")
            for key in acknowledged {
                let value = try acked.get(bigEndian(key))
                #expect(value == Self.value(key), "round \(round): acknowledged key \(key) lost")
                if value != Self.value(key) { break }
            }
        }
        #expect(!acknowledged.isEmpty)
    }
}
