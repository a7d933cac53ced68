import Foundation
import StrataStorage
import Testing

@testable import Strata

@Suite("Configuration limits")
struct ConfigurationTests {
    @Test func commitsBeyondTheActiveVersionLimitRollBack() throws {
        let scratch = try Scratch()
        var configuration = scratch.configuration([Person.self])
        configuration.maximumNumberOfActiveVersions = 2
        let writer = try Realm(configuration: configuration)
        try writer.write { writer.create(Person.self, value: ["id": 1]) }
        // A reader left on the current version: the writer's next commit makes two versions, which is allowed.
        let oldReader = try Realm.independent(configuration)
        try writer.write { writer.create(Person.self, value: ["id": 2]) }
        // A second reader on that newer version: a third version would exceed the limit.
        let newerReader = try Realm.independent(configuration)
        #expect(throws: Realm.Error.maximumActiveVersions(limit: 2)) {
            try writer.write { writer.create(Person.self, value: ["id": 3]) }
        }
        #expect(writer.objects(Person.self).count == 2)
        #expect(oldReader.objects(Person.self).count == 1)
        // Once the old reader moves on, its version is released and writing works again.
        oldReader.refresh()
        try writer.write { writer.create(Person.self, value: ["id": 3]) }
        #expect(writer.objects(Person.self).count == 3)
        #expect(newerReader.objects(Person.self).count == 2)
    }

    @Test func compactionOnLaunchRunsOnTheFirstOpenOnly() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Person.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for id in 0..<3_000 {
                    realm.create(Person.self, value: ["id": id, "name": String(repeating: "n", count: 200)])
                }
            }
            try realm.write {
                realm.delete(realm.objects(Person.self).filter { $0.id >= 10 })
            }
        }
        let path = configuration.fileURL!.path
        let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let calls = Locked<[(Int, Int)]>([])
        var compacting = configuration
        compacting.shouldCompactOnLaunch = { total, used in
            calls.withLock { $0.append((total, used)) }
            return used * 2 < total
        }
        let realm = try Realm(configuration: compacting)
        let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(calls.withLock { $0.count } == 1)
        #expect(after < before / 4, "\(before) -> \(after)")
        #expect(realm.objects(Person.self).map(\.id).sorted() == Array(0..<10))
        // The file is open in this process now: later opens do not ask.
        _ = try Realm(configuration: compacting)
        #expect(calls.withLock { $0.count } == 1)
        try realm.write { realm.create(Person.self, value: ["id": 99]) }
        #expect(try Store.open(path: path).verify().isValid)
    }
}
