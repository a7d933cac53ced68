import Foundation
import Testing

@testable import Strata

/// Collects what a sectioned-results callback receives.
private final class SectionRecorder<C> {
    var initial = 0
    var updates:
        [(
            deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet,
            sectionsToDelete: IndexSet
        )] = []

    func record(_ change: RealmSectionedResultsChange<C>) {
        switch change {
        case .initial: initial += 1
        case .update(_, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
            updates.append((deletions, insertions, modifications, sectionsToInsert, sectionsToDelete))
        case .error(let error): Issue.record("unexpected error \(error)")
        }
    }
}

/// Observing `SectionedResults` and one `ResultsSection`, with the change sets the Realm Swift SDK documents:
/// row index paths, sections inserted and deleted, moves across sections, key-path filtering.
@Suite("Sectioned results: observation")
struct SectionedResultsObservationTests {
    /// Contacts "banana", "box", "apple", "chalk": sections a [apple], b [banana, box], c [chalk].
    private func realm() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sectioned-observation-\(UUID())", objectTypes: [Contact.self]))
        try realm.write {
            for name in ["banana", "box", "apple", "chalk"] { realm.create(Contact.self, value: ["name": name]) }
        }
        return realm
    }

    private func contact(_ name: String, in realm: Realm) -> Contact {
        realm.objects(Contact.self).filter("name == %@", name).first!
    }

    @Test func sectionsAppearAndVanishAndRowsMoveBetweenThem() throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        let recorder = SectionRecorder<SectionedResults<String?, Contact>>()
        let token = sections.observe(keyPaths: ["name"]) { recorder.record($0) }
        defer { token.invalidate() }
        #expect(recorder.initial == 1)

        try realm.write {
            realm.delete([contact("banana", in: realm), contact("apple", in: realm)])
            contact("box", in: realm).name = "bog"
            realm.create(Contact.self, value: ["name": "zebra"])
        }
        // a [apple] is gone; b [banana, box] became [bog] (box moved: deleted and inserted); z [zebra] is new.
        #expect(sections.allKeys == ["b", "c", "z"])
        var update = try #require(recorder.updates.last)
        #expect(update.sectionsToDelete == [0])
        #expect(update.sectionsToInsert == [2])
        #expect(update.deletions == [IndexPath(item: 0, section: 1), IndexPath(item: 1, section: 1)])
        #expect(update.insertions == [IndexPath(item: 0, section: 0), IndexPath(item: 0, section: 2)])
        #expect(update.modifications.isEmpty)

        try realm.write {
            contact("bog", in: realm).name = "bogg"
            contact("chalk", in: realm).age = 9  // not a key path observed: no modification
        }
        update = try #require(recorder.updates.last)
        #expect(update.modifications == [IndexPath(item: 0, section: 0)])
        #expect(update.deletions.isEmpty && update.insertions.isEmpty)
        #expect(update.sectionsToInsert.isEmpty && update.sectionsToDelete.isEmpty)

        // A key change moves the row to another section: deleted from the old one, inserted in the new one.
        try realm.write { contact("chalk", in: realm).name = "zinc" }
        #expect(sections.allKeys == ["b", "z"])
        update = try #require(recorder.updates.last)
        #expect(update.sectionsToDelete == [1])
        #expect(update.insertions == [IndexPath(item: 1, section: 1)])

        // A write to properties nobody observes is not delivered.
        let count = recorder.updates.count
        try realm.write { contact("zinc", in: realm).age = 3 }
        #expect(recorder.updates.count == count)
    }

    @Test func oneSectionReportsOnlyItsOwnRows() throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        let a = SectionRecorder<ResultsSection<String?, Contact>>()
        let b = SectionRecorder<ResultsSection<String?, Contact>>()
        let tokens = [
            sections[0].observe(keyPaths: [\Contact.name]) { a.record($0) },
            sections[1].observe(keyPaths: ["name"]) { b.record($0) },
        ]
        defer {
            for token in tokens { token.invalidate() }
        }

        try realm.write { realm.delete([contact("banana", in: realm), contact("apple", in: realm)]) }
        #expect(a.updates.count == 1 && b.updates.count == 1)
        #expect(a.updates[0].sectionsToDelete == [0])
        #expect(a.updates[0].deletions.isEmpty && a.updates[0].insertions.isEmpty)
        #expect(b.updates[0].deletions == [IndexPath(item: 0, section: 1)])
        #expect(b.updates[0].sectionsToDelete.isEmpty)

        try realm.write {
            contact("box", in: realm).name = "bog"
            realm.create(Contact.self, value: ["name": "bag"])
        }
        #expect(a.updates.count == 1)  // section "a" was not touched
        #expect(b.updates.count == 2)
        #expect(b.updates[1].deletions == [IndexPath(item: 0, section: 0)])
        #expect(b.updates[1].insertions == [IndexPath(item: 0, section: 0), IndexPath(item: 1, section: 0)])

        try realm.write { realm.create(Contact.self, value: ["name": "app"]) }
        #expect(a.updates.count == 2)
        #expect(a.updates[1].sectionsToInsert == [0])
        #expect(a.updates[1].insertions == [IndexPath(item: 0, section: 0)])
        #expect(sections[0].count == 1 && sections[0].key == "a")
    }

    /// The SDK's unannotated callbacks compile for both: the change's type comes from the receiver.
    @Test func unannotatedCallbacksGetTheSectionedChange() throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        var seen: [String] = []
        let whole = sections.observe { change in
            switch change {
            case .initial(let collection): seen.append("initial \(collection.count)")
            case .update(_, _, _, _, let inserted, _): seen.append("sections +\(Array(inserted))")
            case .error(let error): seen.append("\(error)")
            }
        }
        let first = sections[0].observe { change in
            if case .update(let section, _, let insertions, _, _, _) = change {
                seen.append("\(section.key ?? "") +\(insertions)")
            }
        }
        defer {
            whole.invalidate()
            first.invalidate()
        }
        try realm.write { realm.create(Contact.self, value: ["name": "avocado"]) }
        #expect(seen == ["initial 3", "sections +[]", "a +[[0, 1]]"])
    }

    /// Erased to `AnyRealmCollection`, a section is observed as a collection: positions within the section.
    @Test func anErasedSectionIsObservedAsACollection() throws {
        let realm = try realm()
        let erased = AnyRealmCollection(realm.objects(Contact.self).sectioned(by: \.initial)[1])  // b: banana, box
        var updates: [(deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = erased.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                updates.append((deletions, insertions, modifications))
            }
        }
        defer { token.invalidate() }
        try realm.write { realm.create(Contact.self, value: ["name": "bat"]) }
        try realm.write { contact("box", in: realm).age = 4 }
        try realm.write { realm.create(Contact.self, value: ["name": "cat"]) }  // another section: nothing
        #expect(updates.count == 2)
        #expect(updates.first?.insertions == [1])
        #expect(updates.last?.modifications == [2])
    }

    @Test func sectionsOfPlainValuesAreObserved() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sectioned-values-\(UUID())", objectTypes: [Contact.self, SectionedShelf.self]))
        let shelf = try realm.write { realm.create(SectionedShelf.self, value: ["words": ["box", "apple"]]) }
        let sections = shelf.words.sectioned(by: { String($0.first!) })
        let recorder = SectionRecorder<SectionedResults<String, String>>()
        let token = sections.observe { recorder.record($0) }
        defer { token.invalidate() }
        try realm.write { shelf.words.append(objectsIn: ["ant", "cat"]) }
        let update = try #require(recorder.updates.last)
        #expect(update.sectionsToInsert == [2])
        // "ant" sorts before "apple"; "cat" opens section "c".
        #expect(update.insertions == [IndexPath(item: 0, section: 0), IndexPath(item: 0, section: 2)])
    }

    /// Random writes; each delivered change, applied to the previous sections, gives the new ones: the gone
    /// sections removed, the rows deleted and inserted, the new sections' rows inserted.
    @Test func randomisedSectionChangesReproduceTheNewState() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sectioned-random-\(UUID())", objectTypes: [Contact.self]))
        var generator = SplitMix(seed: 22)
        let sections = realm.objects(Contact.self).sectioned(by: \.age)
        var before = sections.map { $0.map(\.name) }
        var delivered: [[[String]]] = []
        let token = sections.observe { change in
            guard case .update(let now, let deletions, let insertions, _, let inserted, let deleted) = change else {
                return
            }
            let after = now.map { $0.map(\.name) }
            var state = before.enumerated().filter { !deleted.contains($0.offset) }.map(\.element)
            // Rows are deleted by their section's old position: map old positions to the surviving ones.
            let survivors = before.indices.filter { !deleted.contains($0) }
            for path in deletions.reversed() {
                state[survivors.firstIndex(of: path.section)!].remove(at: path.item)
            }
            for section in inserted { state.insert([], at: section) }
            for path in insertions { state[path.section].insert(after[path.section][path.item], at: path.item) }
            delivered.append(state)
            before = after
        }
        defer { token.invalidate() }
        var serial = 0
        for _ in 0..<40 {
            try realm.write {
                for _ in 0..<Int(generator.next() % 4) {
                    let all = realm.objects(Contact.self)
                    switch generator.next() % 3 {
                    case 0 where !all.isEmpty:
                        realm.delete(all[Int(generator.next() % UInt64(all.count))])
                    case 1 where !all.isEmpty:
                        all[Int(generator.next() % UInt64(all.count))].age = Int(generator.next() % 4)
                    default:
                        serial += 1
                        realm.create(Contact.self, value: ["name": "c\(serial)", "age": Int(generator.next() % 4)])
                    }
                }
            }
            if let last = delivered.last { #expect(last == before) }
        }
        #expect(delivered.count > 10)
    }
}

/// A small deterministic generator: the same writes on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
