import Foundation
import Testing

@testable import Strata

/// A shelf of words, to section collections of plain values.
final class SectionedShelf: Object {
    @Persisted var title = ""
    @Persisted var words: List<String>
    @Persisted var tags: MutableSet<String>
}

/// A projection of `Contact` with a computed section key over a projected property.
final class ContactCard: Projection<Contact> {
    @Projected(\Contact.name) var name
    var initial: String? { name.first.map(String.init) }
}

extension Contact {
    /// The first letter of the name: a computed property reading one persisted property, as sectioning allows.
    var initial: String? { name.first.map(String.init) }
}

/// The Realm Swift SDK's ways of making sectioned results, from its documentation: by key path, by key path or
/// closure after sort descriptors, from every kind of collection, of objects, projections and plain values.
@Suite("Sectioned results: how they are made, read, frozen and compared")
struct SectionedResultsFormsTests {
    private func realm() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sectioned-forms-\(UUID())", objectTypes: [Contact.self, SectionedShelf.self]))
        try realm.write {
            for name in ["banana", "box", "apple", "chalk"] { realm.create(Contact.self, value: ["name": name]) }
            let shelf = realm.create(SectionedShelf.self, value: ["title": "shelf"])
            shelf.words.append(objectsIn: ["banana", "box", "apple", "chalk", "apple"])
            shelf.tags.insert(objectsIn: ["banana", "box", "apple", "chalk"])
        }
        return realm
    }

    @Test func everyFormOnResultsGivesTheSameSections() throws {
        let realm = try realm()
        let contacts = realm.objects(Contact.self)
        for ascending in [true, false] {
            let keys = ascending ? ["a", "b", "c"] : ["c", "b", "a"]
            let byName = [SortDescriptor(keyPath: "name", ascending: ascending)]
            let byKeyPath = contacts.sectioned(by: \.initial, ascending: ascending)
            let byKeyPathAfterSort = contacts.sectioned(by: \.initial, sortDescriptors: byName)
            let byClosure = contacts.sectioned(by: { String($0.name.first!) }, sortDescriptors: byName)
            #expect(byKeyPath.map(\.key) == keys)
            #expect(byKeyPathAfterSort.map(\.key) == keys)
            #expect(byClosure.map(\.key) == keys)
            #expect(byKeyPath.allKeys == keys)
            #expect(byClosure[1].map(\.name) == (ascending ? ["banana", "box"] : ["box", "banana"]))
        }
    }

    @Test func rowsAreReachableByIndexPathAndSectionsByKey() throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        #expect(sections[IndexPath(item: 0, section: 0)].name == "apple")
        #expect(sections[IndexPath(item: 1, section: 1)].name == "box")
        #expect(IndexPath(item: 1, section: 2).section == 2)
        #expect(IndexPath(row: 3, section: 0).item == 3)
        #expect(sections["b"]?.count == 2)
        #expect(sections[1].id == "b")
        #expect(sections["z"] == nil)
    }

    @Test func collectionsOfObjectsSectionLikeResults() throws {
        let realm = try realm()
        let owner = try realm.write { () -> Contact in
            let owner = realm.create(Contact.self, value: ["name": "zed"])
            owner.friends.append(objectsIn: realm.objects(Contact.self).filter("name != 'zed'"))
            return owner
        }
        let fromList = owner.friends.sectioned(
            by: { String($0.name.first!) },
            sortDescriptors: [
                SortDescriptor(keyPath: "name")
            ])
        #expect(fromList.map(\.key) == ["a", "b", "c"])
        let erased = AnyRealmCollection(owner.friends).sectioned(by: \.initial, ascending: false)
        #expect(erased.map(\.key) == ["c", "b", "a"])
        #expect(erased[1].map(\.name) == ["box", "banana"])
    }

    @Test func collectionsOfPlainValuesSectionByValue() throws {
        let realm = try realm()
        let shelf = realm.objects(SectionedShelf.self)[0]
        let words = shelf.words.sectioned(by: { String($0.first!) })
        #expect(words.map(\.key) == ["a", "b", "c"])
        #expect(words.map { Array($0) } == [["apple", "apple"], ["banana", "box"], ["chalk"]])
        let descending = shelf.words.sectioned(by: { String($0.first!) }, ascending: false)
        #expect(descending.map(\.key) == ["c", "b", "a"])
        #expect(Array(descending[1]) == ["box", "banana"])
        let tags = shelf.tags.sectioned(by: { String($0.first!) }, ascending: false)
        #expect(tags.map(\.key) == ["c", "b", "a"])
        let erased = AnyRealmCollection(shelf.words).sectioned(by: { $0.count })
        #expect(erased.map(\.key) == [5, 6, 3])  // by value: apple apple banana box chalk
        try realm.write { shelf.words.append("zebra") }
        #expect(words.map(\.key) == ["a", "b", "c", "z"])
    }

    @Test func resultsOfProjectionsSection() throws {
        let realm = try realm()
        let cards = realm.objects(ContactCard.self)
        let byKeyPath = cards.sectioned(by: \.initial, ascending: false)
        #expect(byKeyPath.map(\.key) == ["c", "b", "a"])
        let first: ContactCard = byKeyPath[0][0]
        #expect(first.name == "chalk")
        let byClosure = cards.sectioned(
            by: { String($0.name.first!) },
            sortDescriptors: [
                SortDescriptor(keyPath: "name")
            ])
        #expect(byClosure.map(\.key) == ["a", "b", "c"])
        #expect(byClosure[1].map(\.name) == ["banana", "box"])
    }

    @Test func freezingPinsTheSectionsAndThawingFollowsTheRealm() throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        #expect(!sections.isFrozen)
        let frozen = sections.freeze()
        let frozenSection = sections[0].freeze()
        let fromFrozenList = realm.objects(SectionedShelf.self)[0].words.freeze().sectioned(by: { String($0.first!) })
        try realm.write { realm.create(Contact.self, value: ["name": "zoo"]) }
        #expect(frozen.isFrozen && frozenSection.isFrozen && fromFrozenList.isFrozen)
        #expect(frozen.map(\.key) == ["a", "b", "c"])
        #expect(frozenSection.key == "a" && frozenSection.count == 1)
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.map(\.key) == ["a", "b", "c", "z"])
        let thawedSection = try #require(frozenSection.thaw())
        #expect(!thawedSection.isFrozen && thawedSection.key == "a")
        #expect(try #require(fromFrozenList.thaw()).count == 3)
    }

    @Test func equalityIsIdentityAsInTheSDK() throws {
        let realm = try realm()
        let contacts = realm.objects(Contact.self)
        let sections = contacts.sectioned(by: \.initial)
        let copy = sections
        #expect(sections == copy)
        #expect(sections != contacts.sectioned(by: \.initial))
        #expect(sections[0] == copy[0])
        #expect(sections[0] != sections[1])
    }
}
