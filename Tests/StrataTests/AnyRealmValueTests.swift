import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import Strata

final class MixedHolder: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: AnyRealmValue
    @Persisted var items: List<AnyRealmValue>
    @Persisted var fields: Map<String, AnyRealmValue>
    @Persisted var bag: MutableSet<AnyRealmValue>
}

final class MixedTarget: Object {
    @Persisted(primaryKey: true) var name = ""
}

/// The seeds' example model.
final class CompanionDog: Object {
    @Persisted var name = ""
    @Persisted var currentCity = ""
    @Persisted var companion: AnyRealmValue
}

final class MixedAddress: EmbeddedObject {
    @Persisted var city = ""
}

/// A plain Swift picture of a mixed value, to compare stored values with.
private indirect enum Plain: Equatable {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case objectId(ObjectId)
    case decimal(Decimal128)
    case uuid(UUID)
    case object(String)
    case list([Plain])
    case dictionary([String: Plain])

    init(_ value: AnyRealmValue) {
        switch value {
        case .none: self = .none
        case .int(let v): self = .int(v)
        case .bool(let v): self = .bool(v)
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .data(let v): self = .data(v)
        case .date(let v): self = .date(v)
        case .objectId(let v): self = .objectId(v)
        case .decimal128(let v): self = .decimal(v)
        case .uuid(let v): self = .uuid(v)
        case .object(let o): self = .object((o as? MixedTarget)?.name ?? "?")
        case .list(let l): self = .list(l.map(Plain.init))
        case .dictionary(let m):
            self = .dictionary(Dictionary(uniqueKeysWithValues: m.map { ($0.key, Plain($0.value)) }))
        }
    }
}

@Suite("AnyRealmValue")
struct AnyRealmValueTests {
    private static let date = Date(timeIntervalSinceReferenceDate: 1234.5)
    private static let id = try! ObjectId(string: "65a1b2c3d4e5f60718293a4b")
    private static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    private static func primitives() -> [AnyRealmValue] {
        [
            .none, .int(-42), .bool(true), .float(1.5), .double(-2.25), .string("héllo"), .data(Data([1, 2, 3])),
            .date(date), .objectId(id), .decimal128(Decimal128(stringLiteral: "1.25")), .uuid(uuid), .int(Int.max),
        ]
    }

    @Test func everyCaseRoundTripsThroughAFile() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([MixedHolder.self, MixedTarget.self])
        let values = Self.primitives()
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for (index, value) in values.enumerated() {
                    realm.add(MixedHolder(value: ["id": index, "value": value]))
                }
                let target = MixedTarget(value: ["name": "t"])
                realm.add(MixedHolder(value: ["id": 100, "value": AnyRealmValue.object(target)]))
            }
        }
        let realm = try Realm(configuration: configuration)
        for (index, value) in values.enumerated() {
            let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: index))
            #expect(holder.value == value, "\(value)")
        }
        let linked = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 100))
        #expect(linked.value.object(MixedTarget.self)?.name == "t")
        #expect(linked.value.dynamicObject?["name"] as? String == "t")
        #expect(linked.value.intValue == nil && values[1].intValue == -42 && values[5].stringValue == "héllo")
    }

    /// The seeds' `companion`: any value, replaced freely.
    @Test func seedsCompanionTakesAnyValue() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "companion-\(UUID())"))
        let dog = CompanionDog(value: ["name": "Rex", "currentCity": "Berlin"])
        dog.companion = .string("Fluffy")
        try realm.write { realm.add(dog) }
        #expect(dog.companion.stringValue == "Fluffy")
        try realm.write { dog.companion = .int(3) }
        #expect(dog.companion == .int(3))
        let friend = CompanionDog(value: ["name": "Bo"])
        try realm.write { dog.companion = .object(friend) }
        #expect(dog.companion.object(CompanionDog.self)?.name == "Bo")
        #expect(realm.objects(CompanionDog.self).count == 2)
        try realm.write { dog.companion = .none }
        #expect(dog.companion == .none)
    }

    /// Nested lists and dictionaries: written whole, read back live, found and updated in place, kept after
    /// reopening; replacing them frees their trees.
    @Test func nestedCollectionsAreLiveAndUpdatableInPlace() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([MixedHolder.self, MixedTarget.self])
        do {
            let realm = try Realm(configuration: configuration)
            let holder = MixedHolder(value: ["id": 1])
            holder.value = .fromDictionary([
                "ip": .string("192.168.1.1"),
                "items": .fromArray([
                    .fromDictionary(["id": .int(1), "name": .string("Laptop"), "price": .double(1200)]),
                    .fromDictionary(["id": .int(2), "name": .string("Mouse"), "price": .double(49.99)]),
                ]),
                "total": .double(1249.99),
            ])
            try realm.write { realm.add(holder) }
            let items = try #require(holder.value.dictionaryValue?["items"]?.listValue)
            #expect(items.count == 2)
            #expect(items[1].dictionaryValue?["name"] == .string("Mouse"))
            // Update a nested element in place, and append to the nested list.
            try realm.write {
                items[1].dictionaryValue?["price"] = .double(39.99)
                items.append(.fromArray([.int(7), .fromArray([.bool(false)])]))
                holder.value.dictionaryValue?["total"] = .double(1239.99)
            }
            #expect(items.count == 3)
            #expect(items[2].listValue?[1].listValue?[0] == .bool(false))
        }
        let realm = try Realm(configuration: configuration)
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
        let expected = Plain.dictionary([
            "ip": .string("192.168.1.1"),
            "items": .list([
                .dictionary(["id": .int(1), "name": .string("Laptop"), "price": .double(1200)]),
                .dictionary(["id": .int(2), "name": .string("Mouse"), "price": .double(39.99)]),
                .list([.int(7), .list([.bool(false)])]),
            ]),
            "total": .double(1239.99),
        ])
        #expect(Plain(holder.value) == expected)
        // Replacing the value drops every nested tree it owned.
        #expect(try Self.nestedCollectionCount(realm) == 6)
        try realm.write { holder.value = .int(1) }
        #expect(try Self.nestedCollectionCount(realm) == 0)
    }

    private static func nestedCollectionCount(_ realm: Realm) throws -> Int {
        try realm.store.read().tree(named: "x:MixedHolder.value")?.count ?? 0
    }

    @Test func nestingStopsAtOneHundredLevels() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "depth-\(UUID())"))
        func nested(_ levels: Int) -> AnyRealmValue {
            var value = AnyRealmValue.int(0)
            for _ in 0..<levels { value = .fromArray([value]) }
            return value
        }
        try realm.write { realm.add(MixedHolder(value: ["id": 1, "value": nested(100)])) }
        var level = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1)?.value)
        var depth = 0
        while let list = level.listValue {
            depth += 1
            level = list[0]
        }
        #expect(depth == 100 && level == .int(0))
        #expect {
            try realm.write { realm.add(MixedHolder(value: ["id": 2, "value": nested(101)])) }
        } throws: { error in
            guard case Realm.Error.invalidValue(_, _, let reason) = error else { return false }
            return reason.contains("100")
        }
        #expect(realm.objects(MixedHolder.self).count == 1)
    }

    @Test func setsAndEmbeddedObjectsAreRejected() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "reject-\(UUID())"))
        try realm.write { realm.add(MixedHolder(value: ["id": 1])) }
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
        #expect(throws: Realm.Error.self) { try realm.write { holder["value"] = MutableSet<Int>() } }
        #expect(throws: Realm.Error.self) { try realm.write { holder["value"] = MixedAddress() } }
        #expect(throws: Realm.Error.self) { try realm.write { holder.bag.insert(.fromArray([.int(1)])) } }
        #expect(holder.value == .none && holder.bag.isEmpty)
        try realm.write { holder.bag.insert(objectsIn: [.int(1), .string("a"), .int(1), .none]) }
        #expect(holder.bag.count == 3)
    }

    /// A managed set of mixed values finds and removes its elements by value (it keys them by their mixed
    /// encoding, so a look-up must too): primitives, `.none` and links, live and frozen.
    @Test func mixedSetContainsAndRemovesByValue() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "mixed-set-\(UUID())"))
        let target = MixedTarget(value: ["name": "t"])
        try realm.write {
            let holder = MixedHolder(value: ["id": 1])
            holder.bag.insert(objectsIn: [.int(1), .bool(true), .string("a"), .none, .object(target)])
            realm.add(holder)
        }
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
        let stored = try #require(realm.object(ofType: MixedTarget.self, forPrimaryKey: "t"))
        let frozen = holder.freeze()
        let frozenTarget = try #require(frozen.realm?.object(ofType: MixedTarget.self, forPrimaryKey: "t"))
        for value: AnyRealmValue in [.int(1), .bool(true), .string("a"), .none, .object(stored)] {
            #expect(holder.bag.contains(value), "\(value)")
        }
        for value: AnyRealmValue in [.int(1), .bool(true), .string("a"), .none, .object(frozenTarget)] {
            #expect(frozen.bag.contains(value), "frozen \(value)")
        }
        for value: AnyRealmValue in [.int(2), .bool(false), .double(1), .string("b"), .object(MixedTarget())] {
            #expect(!holder.bag.contains(value), "\(value)")
        }
        try realm.write {
            holder.bag.remove(.int(1))
            holder.bag.remove(.object(stored))
            holder.bag.remove(.int(7))
        }
        #expect(holder.bag.count == 3 && !holder.bag.contains(.int(1)) && !holder.bag.contains(.object(stored)))
        #expect(holder.bag.contains(.bool(true)))
    }

    /// Deleting an object that mixed values link to makes those values `.none`: in a column, in list and map
    /// elements, in nested collections; set elements are removed.
    @Test func deletingALinkedObjectClearsEveryMixedLink() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "unlink-\(UUID())"))
        let target = MixedTarget(value: ["name": "gone"])
        let kept = MixedTarget(value: ["name": "kept"])
        try realm.write {
            let holder = MixedHolder(value: ["id": 1, "value": AnyRealmValue.object(target)])
            holder.items.append(objectsIn: [.object(target), .object(kept), .fromArray([.object(target)])])
            holder.fields["a"] = .object(target)
            holder.fields["b"] = .fromDictionary(["deep": .object(target)])
            holder.bag.insert(.object(target))
            realm.add(holder)
        }
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
        try realm.write { realm.delete(realm.object(ofType: MixedTarget.self, forPrimaryKey: "gone")!) }
        #expect(holder.value == .none)
        #expect(Plain.list(holder.items.map(Plain.init)) == .list([.none, .object("kept"), .list([.none])]))
        #expect(holder.fields["a"] == AnyRealmValue.none)
        #expect(Plain(holder.fields["b"]!) == .dictionary(["deep": .none]))
        #expect(holder.bag.isEmpty)
        // Deleting every object of the type clears the remaining links too.
        try realm.write { realm.delete(realm.objects(MixedTarget.self)) }
        #expect(holder.items[1] == .none)
    }

    /// Random edits of a List<AnyRealmValue> and a Map<String, AnyRealmValue> (nested values included) agree
    /// with a Swift model after every step and after reopening.
    @Test func mixedCollectionsAgreeWithAModel() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([MixedHolder.self, MixedTarget.self])
        var generator = SeededGenerator(seed: 5)
        var items: [Plain] = []
        var fields: [String: Plain] = [:]
        func randomValue() -> (AnyRealmValue, Plain) {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: return (.none, .none)
            case 1:
                let n = Int.random(in: -50...50, using: &generator)
                return (.int(n), .int(n))
            case 2:
                let s = "s\(Int.random(in: 0..<9, using: &generator))"
                return (.string(s), .string(s))
            case 3:
                return (
                    .fromArray([.int(1), .fromDictionary(["x": .bool(true)])]),
                    .list([.int(1), .dictionary(["x": .bool(true)])])
                )
            case 4: return (.fromDictionary(["k": .double(0.5)]), .dictionary(["k": .double(0.5)]))
            default: return (.date(Self.date), .date(Self.date))
            }
        }
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(MixedHolder(value: ["id": 1])) }
            let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
            for round in 0..<10 {
                try realm.write {
                    for _ in 0..<20 {
                        let (value, plain) = randomValue()
                        switch Int.random(in: 0..<6, using: &generator) {
                        case 0, 1:
                            let index = Int.random(in: 0...items.count, using: &generator)
                            holder.items.insert(value, at: index)
                            items.insert(plain, at: index)
                        case 2 where !items.isEmpty:
                            let index = Int.random(in: 0..<items.count, using: &generator)
                            holder.items.remove(at: index)
                            items.remove(at: index)
                        case 3 where !items.isEmpty:
                            let index = Int.random(in: 0..<items.count, using: &generator)
                            holder.items[index] = value
                            items[index] = plain
                        case 4:
                            let key = "f\(Int.random(in: 0..<5, using: &generator))"
                            holder.fields[key] = value
                            fields[key] = plain
                        default:
                            let key = "f\(Int.random(in: 0..<5, using: &generator))"
                            holder.fields.removeObject(for: key)
                            fields[key] = nil
                        }
                        #expect(holder.items.map(Plain.init) == items, "round \(round)")
                    }
                }
                #expect(holder.items.map(Plain.init) == items, "round \(round)")
                #expect(Dictionary(uniqueKeysWithValues: holder.fields.map { ($0.key, Plain($0.value)) }) == fields)
            }
        }
        let realm = try Realm(configuration: configuration)
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
        #expect(holder.items.map(Plain.init) == items)
        #expect(Dictionary(uniqueKeysWithValues: holder.fields.map { ($0.key, Plain($0.value)) }) == fields)
        // Only the nested collections still referenced remain: replaced and removed ones were freed.
        let snapshot = try realm.store.read()
        let itemCollections = items.reduce(0) { $0 + Self.collections(in: $1) }
        let fieldCollections = fields.values.reduce(0) { $0 + Self.collections(in: $1) }
        #expect(try snapshot.tree(named: "x:MixedHolder.items")?.count ?? 0 == itemCollections)
        #expect(try snapshot.tree(named: "x:MixedHolder.fields")?.count ?? 0 == fieldCollections)
    }

    private static func collections(in value: Plain) -> Int {
        switch value {
        case .list(let elements): 1 + elements.reduce(0) { $0 + collections(in: $1) }
        case .dictionary(let entries): 1 + entries.values.reduce(0) { $0 + collections(in: $1) }
        default: 0
        }
    }

    @Test func codableAsJSON() throws {
        let json = #"{"a":[1,2.5,"x",null,true],"b":{"c":{}}}"#
        let value = try JSONDecoder().decode(AnyRealmValue.self, from: Data(json.utf8))
        #expect(
            Plain(value)
                == .dictionary([
                    "a": .list([.int(1), .double(2.5), .string("x"), .none, .bool(true)]),
                    "b": .dictionary(["c": .dictionary([:])]),
                ]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(
            String(decoding: try encoder.encode(value), as: UTF8.self) == #"{"a":[1,2.5,"x",null,true],"b":{"c":{}}}"#)
    }
}
