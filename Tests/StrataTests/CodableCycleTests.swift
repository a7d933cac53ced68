import Foundation
import Testing

@testable import Strata

final class CyclePal: Object, Codable {
    @Persisted var name = ""
    @Persisted var friend: CyclePal?
    @Persisted var pals: List<CyclePal>
    @Persisted var byNickname: Map<String, CyclePal?>
    @Persisted var born = Date(timeIntervalSince1970: 0)
}

final class CycleOwner: Object, Codable {
    @Persisted var name = ""
    @Persisted var pets: List<CyclePet>
}

final class CyclePet: Object, Codable {
    @Persisted var name = ""
    @Persisted(originProperty: "pets") var owners: LinkingObjects<CycleOwner>
}

/// The same model without the back-reference in its encoding: how a cycle is broken.
final class ListedCyclePet: Object, Codable {
    @Persisted var name = ""
    @Persisted(originProperty: "pets") var owners: LinkingObjects<CyclePetList>
    enum CodingKeys: String, CodingKey { case name }
}

final class CyclePetList: Object, Codable {
    @Persisted var name = ""
    @Persisted var pets: List<ListedCyclePet>
}

/// Encoding objects whose links form a cycle throws `EncodingError.invalidValue` naming where the cycle closes,
/// instead of nesting without end until the stack overflows; links that do not form a cycle still nest.
@Suite("Codable: cycles of links")
struct CodableCycleTests {
    private func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "cycles-\(UUID())",
                objectTypes: [CyclePal.self, CycleOwner.self, CyclePet.self, ListedCyclePet.self, CyclePetList.self]))
    }

    /// The context of the `EncodingError.invalidValue` encoding `value` throws.
    private func cycleError(_ value: some Encodable) -> EncodingError.Context? {
        do {
            _ = try JSONEncoder().encode(value)
            Issue.record("the cycle was encoded")
        } catch EncodingError.invalidValue(_, let context) {
            return context
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return nil
    }

    @Test func managedObjectsThatLinkToEachOtherThrowNamingThePath() throws {
        let realm = try realm()
        let ann = try realm.write {
            let ann = realm.create(CyclePal.self, value: ["name": "Ann"])
            let bob = realm.create(CyclePal.self, value: ["name": "Bob", "friend": ann])
            ann.friend = bob
            return ann
        }
        let context = try #require(cycleError(ann))
        #expect(context.codingPath.map(\.stringValue) == ["friend", "friend", "friend"])
        #expect(
            context.debugDescription.hasPrefix(
                "CyclePal at friend.friend.friend is the object being encoded at friend: its links form a cycle"))
        // The object that links to itself, through a list and through a map.
        let zed = try realm.write {
            let zed = realm.create(CyclePal.self, value: ["name": "Zed"])
            zed.pals.append(zed)
            return zed
        }
        #expect(
            try #require(cycleError(zed)).debugDescription.hasPrefix(
                "CyclePal at pals[0].pals[0] is the object being encoded at pals[0]"))
        let kim = try realm.write {
            let kim = realm.create(CyclePal.self, value: ["name": "Kim"])
            kim.byNickname["me"] = kim
            return kim
        }
        #expect(
            try #require(cycleError(kim)).codingPath.map(\.stringValue) == ["byNickname", "me", "byNickname", "me"])
    }

    @Test func aListAndTheLinkingObjectsMirroringItThrow() throws {
        let realm = try realm()
        let owner = try realm.write {
            let owner = realm.create(CycleOwner.self, value: ["name": "Ann"])
            owner.pets.append(realm.create(CyclePet.self, value: ["name": "Rex"]))
            return owner
        }
        let context = try #require(cycleError(owner))
        #expect(context.debugDescription.contains("is the object being encoded at pets[0]"))
        // Leaving the back-reference out of the encoding breaks the cycle.
        let listed = try realm.write {
            let list = realm.create(CyclePetList.self, value: ["name": "Ann"])
            list.pets.append(realm.create(ListedCyclePet.self, value: ["name": "Rex"]))
            return list
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(listed), as: UTF8.self)
        #expect(json == #"{"name":"Ann","pets":[{"name":"Rex"}]}"#)
    }

    @Test func unmanagedCyclesThrowAndSharedObjectsStillNest() throws {
        let ann = CyclePal(value: ["name": "Ann"])
        let bob = CyclePal(value: ["name": "Bob", "friend": ann])
        ann.friend = bob
        #expect(cycleError(ann)?.codingPath.count == 3)
        // The same object twice, not in a cycle, is encoded twice; encoding works again after an error.
        let cat = CyclePal(value: ["name": "Cat"])
        let dan = CyclePal(value: ["name": "Dan", "friend": cat, "pals": [cat, cat]])
        let decoded = try JSONDecoder().decode(CyclePal.self, from: JSONEncoder().encode(dan))
        #expect(decoded.friend?.name == "Cat" && decoded.pals.map(\.name) == ["Cat", "Cat"])
    }
}
