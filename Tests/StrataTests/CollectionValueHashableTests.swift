import Foundation
import Strata
import Testing

final class HashableCollectionTag: EmbeddedObject {
    @Persisted var label = ""
}

/// A custom-persisted type declared the way SDK users declare one: its `Hashable` conformance is synthesised from
/// its fields, because `CustomPersistable` refines `RealmCollectionValue`, which refines `Hashable`.
struct HashableCollectionColour: CustomPersistable {
    var name: String
    init(persistedValue: String) { name = persistedValue }
    var persistableValue: String { name }
}

final class HashableCollectionHolder: Object {
    @Persisted var numbers: List<Int>
    @Persisted var maybeNames: List<String?>
    @Persisted var mixed: MutableSet<AnyRealmValue>
    @Persisted var colours: List<HashableCollectionColour>
    @Persisted var tags: List<HashableCollectionTag>
    @Persisted var friends: List<HashableCollectionHolder>
    @Persisted var scores: Map<String, Int>
}

// Generic code as SDK users write it: `RealmCollectionValue` refines `Hashable` there, so these compile with no
// `Hashable` constraint of their own.

private func uniqueElements<C: RealmCollection>(_ collection: C) -> Set<C.Element> { Set(collection) }

private func occurrences(in collection: some RealmCollection) -> Int {
    func counted<C: RealmCollection>(_ collection: C) -> [C.Element: Int] {
        collection.reduce(into: [:]) { counts, element in counts[element, default: 0] += 1 }
    }
    return counted(collection).count
}

private func isHashable<T: RealmCollectionValue>(_: T.Type) -> Bool {
    func hashable<H: Hashable>(_: H.Type) -> Bool { true }
    return hashable(T.self)
}

@Suite("Collection values are Hashable")
struct CollectionValueHashableTests {
    private func stored() throws -> HashableCollectionHolder {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "hashable-values-\(UUID())",
                objectTypes: [HashableCollectionHolder.self, HashableCollectionTag.self]))
        let holder = HashableCollectionHolder()
        holder.numbers.append(objectsIn: [3, 1, 3, 2, 1])
        holder.maybeNames.append(objectsIn: ["a", nil, "a", nil])
        holder.mixed.insert(objectsIn: [.int(1), .string("one"), .none])
        holder.colours.append(objectsIn: ["red", "blue", "red"].map(HashableCollectionColour.init(persistedValue:)))
        holder.scores["a"] = 1
        holder.scores["b"] = 1
        try realm.write {
            realm.add(holder)
            let friend = realm.create(HashableCollectionHolder.self)
            holder.friends.append(objectsIn: [friend, friend, holder])
            holder.tags.append(HashableCollectionTag(value: ["label": "x"]))
        }
        return holder
    }

    @Test func aGenericFunctionPutsAnyCollectionsElementsInASet() throws {
        let holder = try stored()
        #expect(uniqueElements(holder.numbers) == [1, 2, 3])
        #expect(uniqueElements(holder.maybeNames) == ["a", nil])
        #expect(uniqueElements(holder.mixed) == [.int(1), .string("one"), .none])
        #expect(uniqueElements(holder.colours).map(\.name).sorted() == ["blue", "red"])
        #expect(uniqueElements(holder.friends).count == 2)
        #expect(uniqueElements(AnyRealmCollection(holder.numbers)) == [1, 2, 3])
        let realm = try #require(holder.realm)
        #expect(uniqueElements(realm.objects(HashableCollectionHolder.self)).count == 2)
    }

    @Test func collectionElementsAreDictionaryKeysInGenericCode() throws {
        let holder = try stored()
        #expect(occurrences(in: holder.numbers) == 3)
        #expect(occurrences(in: holder.colours) == 2)
        #expect(occurrences(in: holder.tags) == 1)
        #expect(Set(holder.scores.values) == [1])
    }

    @Test func everyKindOfCollectionValueIsHashable() {
        #expect(isHashable(Int.self) && isHashable(Decimal128?.self) && isHashable(AnyRealmValue.self))
        #expect(isHashable(HashableCollectionHolder.self) && isHashable(HashableCollectionTag.self))
        #expect(isHashable(HashableCollectionColour.self) && isHashable(HashableCollectionColour?.self))
    }
}
