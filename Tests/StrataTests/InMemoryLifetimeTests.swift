import Foundation
import Strata
import Testing

/// An in-memory Realm (`inMemoryIdentifier`) keeps its data while some Realm instance for the identifier is
/// alive, live or frozen, in any isolation, and loses it when the last one is released, as in the SDK.
@Suite("In-memory Realm lifetime")
struct InMemoryLifetimeTests {
    private func configuration() -> Realm.Configuration {
        Realm.Configuration(inMemoryIdentifier: "lifetime-\(UUID())", objectTypes: [InMemoryLifetimeItem.self])
    }

    @Test func anotherInstanceSeesTheDataWhileTheFirstIsAlive() async throws {
        let configuration = configuration()
        let first = try Realm(configuration: configuration)
        try first.write { first.add(InMemoryLifetimeItem(value: ["name": "kept"])) }
        let seenElsewhere = try await Task.detached {
            try Realm(configuration: configuration).objects(InMemoryLifetimeItem.self).map(\.name)
        }.value
        #expect(seenElsewhere == ["kept"])
        #expect(first.objects(InMemoryLifetimeItem.self).count == 1)
    }

    @Test func theDataIsGoneWhenTheLastInstanceIsReleased() throws {
        let configuration = configuration()
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(InMemoryLifetimeItem(value: ["name": "gone"])) }
        }
        let reopened = try Realm(configuration: configuration)
        #expect(reopened.objects(InMemoryLifetimeItem.self).isEmpty)
    }

    @Test func aFrozenInstanceKeepsTheDataAlive() throws {
        let configuration = configuration()
        var frozen: Realm?
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(InMemoryLifetimeItem(value: ["name": "pinned"])) }
            frozen = realm.freeze()
        }
        do {
            let reopened = try Realm(configuration: configuration)
            #expect(reopened.objects(InMemoryLifetimeItem.self).map(\.name) == ["pinned"])
        }
        #expect(frozen?.objects(InMemoryLifetimeItem.self).count == 1)
        frozen = nil
        let afterAll = try Realm(configuration: configuration)
        #expect(afterAll.objects(InMemoryLifetimeItem.self).isEmpty)
    }

    @Test func aManagedObjectKeepsItsRealmsDataAlive() throws {
        let configuration = configuration()
        var object: InMemoryLifetimeItem?
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(InMemoryLifetimeItem(value: ["name": "held"])) }
            object = realm.objects(InMemoryLifetimeItem.self).first
        }
        do {
            let reopened = try Realm(configuration: configuration)
            #expect(reopened.objects(InMemoryLifetimeItem.self).count == 1)
        }
        #expect(object?.name == "held")
        object = nil
        let afterAll = try Realm(configuration: configuration)
        #expect(afterAll.objects(InMemoryLifetimeItem.self).isEmpty)
    }
}

final class InMemoryLifetimeItem: Object {
    @Persisted var name: String
}
