import Foundation
import Testing

@testable import StrataStorage

/// Randomised operations against a `Dictionary` model, with readers pinned at random versions.
///
/// Every committed version's expected contents are kept; pinned readers are re-checked against the version they
/// pinned while newer versions are written and their freed pages recycled. `STRATA_SOAK=1` multiplies the work.
@Suite("Randomised model test")
struct ModelTests {
    typealias Model = [[UInt8]: [UInt8]]

    static var scale: Int { ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil ? 20 : 1 }

    private struct Reader {
        let transaction: ReadTransaction
        let expected: Model
    }

    private func randomValue(_ generator: inout SeededGenerator) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &generator)
        let length =
            roll < 3
            ? Int.random(in: 1000...9000, using: &generator)  // overflow chains
            : Int.random(in: 0...180, using: &generator)
        let seed = UInt8.random(in: 0...255, using: &generator)
        return (0..<length).map { seed &+ UInt8(truncatingIfNeeded: $0) }
    }

    private func check(_ reader: Reader) throws {
        let actual = try contents(of: try reader.transaction.tree(named: "model"))
        #expect(actual == reader.expected, "reader at version \(reader.transaction.version) sees wrong contents")
    }

    private func run(store makeStore: () throws -> Store, reopen: Bool, seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var store = try makeStore()
        var committed: Model = [:]
        var history: [UInt64: Model] = [store.latestVersion: committed]
        var readers: [Reader] = []
        let keySpace = 1500
        let rounds = 600 * Self.scale

        for round in 0..<rounds {
            let transaction = try store.beginWrite()
            let tree = try #require(try transaction.tree(named: "model", create: .keyed))
            var working = committed
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                let k = key(Int.random(in: 0..<keySpace, using: &generator))
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<6:
                    let value = randomValue(&generator)
                    try transaction.put(k, value, in: tree)
                    working[k] = value
                case 6..<9:
                    let removed = try transaction.delete(k, in: tree)
                    #expect(removed == (working.removeValue(forKey: k) != nil))
                default:
                    #expect(try transaction.get(k, in: tree) == working[k])
                }
            }
            #expect(try transaction.count(in: tree) == working.count)
            if Int.random(in: 0..<5, using: &generator) == 0 {
                transaction.abort()
            } else {
                let version = try transaction.commit()
                committed = working
                history[version] = committed
            }

            // Pin a reader at the newest version, release one, or re-check the pinned ones.
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<3 where readers.count < 12:
                let reader = try store.read()
                readers.append(Reader(transaction: reader, expected: try #require(history[reader.version])))
            case 3..<5 where !readers.isEmpty:
                readers.remove(at: Int.random(in: 0..<readers.count, using: &generator))
            case 5:
                for reader in readers { try check(reader) }
            default:
                break
            }

            if round % 100 == 99 {
                let report = try store.verify()
                #expect(report.isValid, "\(report)")
                if reopen {
                    readers.removeAll()
                    store = try makeStore()
                    #expect(try contents(of: try store.read().tree(named: "model")) == committed)
                }
            }
        }
        for reader in readers { try check(reader) }
        #expect(try contents(of: try store.read().tree(named: "model")) == committed)
        let report = try store.verify()
        #expect(report.isValid, "\(report)")
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func inMemory(seed: UInt64) throws {
        let store = try Store.inMemory(options: testOptions())
        try run(store: { store }, reopen: false, seed: seed)
    }

    @Test(arguments: [UInt64(11), 12])
    func onDiskWithReopen(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("model.strata")
        try run(store: { try Store.open(path: path, options: testOptions()) }, reopen: true, seed: seed)
    }

    @Test func largePagesOnDisk() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("model4k.strata")
        try run(store: { try Store.open(path: path, options: testOptions(pageSize: 4096)) }, reopen: true, seed: 99)
    }
}
