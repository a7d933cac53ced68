import Foundation
import StrataStorage
import Testing

/// A child process commits in a loop and is killed with SIGKILL at random moments. After each kill the file must
/// open, pass `verify`, and hold every commit the child acknowledged (through its stdout pipe). The child resumes
/// on the same file after each kill, so later rounds crash into files with a history of crashes. Runs on a plain
/// and on an encrypted file (an encrypted file has no commit log yet: its durable commits sync the main file).
@Suite("Crash (SIGKILL) recovery", .serialized)
struct CrashTests {
    static var kills: Int { soak ? 500 : 24 }

    @Test(arguments: FileEncryption.allCases)
    func killedWriterLosesNoAcknowledgedCommit(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("crash.strata")
        var generator = SystemRandomNumberGenerator()
        var acknowledged: UInt64?  // highest acknowledged key so far
        var recoveredVersions: Set<UInt64> = []
        for round in 0..<Self.kills {
            let child = try Child(["commit-loop", path, "\(round + 1)"], encryption: encryption)
            // Let it run for a random number of commits, then kill it wherever it is.
            let target = Int.random(in: 1...40, using: &generator)
            for _ in 0..<target {
                guard let line = child.readLine() else { break }
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == "acked", let n = UInt64(parts[1]) { acknowledged = n }
            }
            child.kill()

            let store = try Store.open(path: path, options: encryption.options(StoreOptions(pageSize: 1024)))
            let report = try store.verify()
            #expect(report.isValid, "round \(round): \(report)")
            let snapshot = try store.read()
            recoveredVersions.insert(snapshot.version)
            let acked = try #require(try snapshot.tree(named: "acked"), "round \(round): no commits survived")
            if let acknowledged {
                // Every acknowledged key is there, with its exact value; keys are dense from 0.
                #expect(
                    acked.count >= Int(acknowledged) + 1,
                    "round \(round): \(acked.count) keys, acknowledged up to \(acknowledged)")
                for n in [0, acknowledged / 2, acknowledged] {
                    #expect(
                        try acked.get(bigEndian(n)) == (0..<48).map { UInt8(truncatingIfNeeded: n &* 31 &+ UInt64($0)) }
                    )
                }
                let (lastKey, _) = try acked.element(at: acked.count - 1)
                #expect(lastKey == bigEndian(UInt64(acked.count - 1)))
            }
        }
        #expect(recoveredVersions.count == Self.kills)
    }
}
