import Foundation
import Strata
import StrataTestSupport
import Testing

final class NtfOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(originProperty: "owner") var dogs: LinkingObjects<NtfDog>
}

final class NtfDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: NtfOwner?
    @Persisted var tags: List<String>
    @Persisted var friends: MutableSet<NtfOwner>
    @Persisted var scores: Map<String, Int>
}

/// A class no other model links to: another Realm adds it to the file.
final class NtfNote: Object {
    @Persisted var text = ""
}

private func memoryConfiguration(_ name: String = "ntf") -> Realm.Configuration {
    Realm.Configuration(inMemoryIdentifier: "\(name)-\(UUID())")
}

/// Collects the changes a callback receives.
private final class Recorder<C> {
    var changes: [RealmCollectionChange<C>] = []
    var updates: [(deletions: [Int], insertions: [Int], modifications: [Int])] {
        changes.compactMap {
            if case .update(_, let d, let i, let m) = $0 { (d, i, m) } else { nil }
        }
    }
}

/// Applies a change set to the previous state: removes the deleted positions, then inserts the new elements.
private func apply<T>(_ deletions: [Int], _ insertions: [Int], to old: [T], new: [T]) -> [T] {
    var result = old
    for index in deletions.sorted(by: >) { result.remove(at: index) }
    for index in insertions.sorted() { result.insert(new[index], at: index) }
    return result
}

@Suite("Change sets")
struct ChangeSetTests {
    @Test func collectionDiffsReproduceTheNewState() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let old = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in
                Int.random(in: 0..<12, using: &generator)
            }
            var new = old.filter { _ in Int.random(in: 0..<4, using: &generator) != 0 }
            for _ in 0..<Int.random(in: 0..<6, using: &generator) {
                new.insert(
                    Int.random(in: 0..<15, using: &generator), at: Int.random(in: 0...new.count, using: &generator))
            }
            if Int.random(in: 0..<3, using: &generator) == 0 { new.shuffle(using: &generator) }
            let dogs = Realm.self  // keep the module imported for the helper's generic context
            _ = dogs
            let diff = changeSet(old, new)
            #expect(apply(diff.deletions, diff.insertions, to: old, new: new) == new)
            #expect(diff.deletions == diff.deletions.sorted() && diff.insertions == diff.insertions.sorted())
        }
    }

    /// The index sets an observer of a plain `List<Int>` would get, through the public API.
    private func changeSet(_ old: [Int], _ new: [Int]) -> (deletions: [Int], insertions: [Int]) {
        let realm = try! Realm(configuration: memoryConfiguration("diff"))
        let dog = NtfDog()
        dog.tags.append(objectsIn: old.map(String.init))
        try! realm.write { realm.add(dog) }
        var result: (deletions: [Int], insertions: [Int]) = ([], [])
        let token = dog.tags.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                #expect(modifications.isEmpty)
                result = (deletions, insertions)
            }
        }
        try! realm.write {
            dog.tags.removeAll()
            dog.tags.append(objectsIn: new.map(String.init))
        }
        token.invalidate()
        return result
    }
}

@Suite("Notification concurrency")
struct NotificationTests {
    @Test func resultsReportInsertionsModificationsAndDeletions() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dogs = realm.objects(NtfDog.self).sorted(byKeyPath: "id")
        let recorder = Recorder<Results<NtfDog>>()
        let token = dogs.observe { recorder.changes.append($0) }
        defer { token.invalidate() }
        #expect(recorder.changes.count == 1)
        guard case .initial(let initial) = recorder.changes.first else {
            Issue.record("no initial")
            return
        }
        #expect(initial.isEmpty)

        try realm.write {
            for id in 0..<5 { realm.add(NtfDog(value: ["id": id, "name": "dog \(id)"])) }
        }
        #expect(recorder.updates.last?.insertions == [0, 1, 2, 3, 4])

        try realm.write { realm.object(ofType: NtfDog.self, forPrimaryKey: 2)!.age = 7 }
        #expect(recorder.updates.last?.modifications == [2])
        #expect(recorder.updates.last?.insertions == [] && recorder.updates.last?.deletions == [])

        try realm.write { realm.delete(realm.object(ofType: NtfDog.self, forPrimaryKey: 1)!) }
        #expect(recorder.updates.last?.deletions == [1])

        // A write that changes nothing the results show is not reported.
        let count = recorder.changes.count
        try realm.write { realm.add(NtfOwner(value: ["id": 1])) }
        #expect(recorder.changes.count == count)
    }

    @Test func keyPathsLimitWhatCountsAsAModification() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        try realm.write {
            let owner = realm.create(NtfOwner.self, value: ["id": 1, "name": "Ann"])
            realm.create(NtfDog.self, value: ["id": 1, "name": "Rex", "owner": owner])
        }
        let dogs = realm.objects(NtfDog.self)
        let byName = Recorder<Results<NtfDog>>()
        let byOwnerName = Recorder<Results<NtfDog>>()
        let everything = Recorder<Results<NtfDog>>()
        let tokens = [
            dogs.observe(keyPaths: ["name"]) { byName.changes.append($0) },
            dogs.observe(keyPaths: ["owner.name"]) { byOwnerName.changes.append($0) },
            dogs.observe { everything.changes.append($0) },
        ]
        defer {
            for token in tokens { token.invalidate() }
        }
        try realm.write { realm.object(ofType: NtfDog.self, forPrimaryKey: 1)!.age = 3 }
        #expect(byName.updates.isEmpty && byOwnerName.updates.isEmpty)
        #expect(everything.updates.last?.modifications == [0])

        try realm.write { realm.object(ofType: NtfOwner.self, forPrimaryKey: 1)!.name = "Bea" }
        #expect(byName.updates.isEmpty)
        #expect(byOwnerName.updates.last?.modifications == [0])
        // Without key paths, a change to a linked object modifies the object linking to it.
        #expect(everything.updates.count == 2)

        try realm.write { realm.object(ofType: NtfDog.self, forPrimaryKey: 1)!.name = "Max" }
        #expect(byName.updates.last?.modifications == [0])
    }

    @Test func sortedResultsReportMovesAsDeletionAndInsertion() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        try realm.write {
            for id in 0..<4 { realm.add(NtfDog(value: ["id": id, "age": id * 10])) }
        }
        let dogs = realm.objects(NtfDog.self).sorted(byKeyPath: "age")
        let before = dogs.map(\.id)
        let recorder = Recorder<Results<NtfDog>>()
        let token = dogs.observe { recorder.changes.append($0) }
        defer { token.invalidate() }
        try realm.write { realm.object(ofType: NtfDog.self, forPrimaryKey: 0)!.age = 25 }
        let after = dogs.map(\.id)
        #expect(after == [1, 2, 0, 3])
        let update = try #require(recorder.updates.last)
        #expect(apply(update.deletions, update.insertions, to: before, new: after) == after)
        #expect(update.modifications.isEmpty || !update.insertions.contains(update.modifications[0]))
    }

    /// Random writes from another Realm; the observer's Realm refreshes after each batch. Every delivered change
    /// set turns the previous state into the new one, and modifications are exactly the kept objects whose
    /// values changed.
    @Test func randomisedChangeSetsAreExact() throws {
        let configuration = memoryConfiguration("random")
        let observed = try Realm(configuration: configuration)
        let writer = try Realm(configuration: configuration)
        var generator = SeededGenerator(seed: 99)
        let results = observed.objects(NtfDog.self).filter("age < 60").sorted(byKeyPath: "age")
        func state() -> [(id: Int, age: Int, name: String)] { results.map { ($0.id, $0.age, $0.name) } }
        var previous = state()
        var checked = 0
        let token = results.observe { change in
            guard case .update(_, let deletions, let insertions, let modifications) = change else { return }
            let now = state()
            let applied = apply(deletions, insertions, to: previous.map(\.id), new: now.map(\.id))
            #expect(applied == now.map(\.id))
            // Kept objects: present before and after, not reinserted.
            let kept = Set(now.indices).subtracting(insertions)
            let old = Dictionary(uniqueKeysWithValues: previous.map { ($0.id, $0) })
            let changed = kept.filter { index in
                let object = now[index]
                return old[object.id].map { $0.age != object.age || $0.name != object.name } ?? false
            }
            #expect(Set(modifications) == Set(changed))
            previous = now
            checked += 1
        }
        defer { token.invalidate() }
        for _ in 0..<60 {
            try writer.write {
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    let id = Int.random(in: 0..<40, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0:
                        if let dog = writer.object(ofType: NtfDog.self, forPrimaryKey: id) { writer.delete(dog) }
                    case 1:
                        writer.object(ofType: NtfDog.self, forPrimaryKey: id)?.name =
                            "n\(Int.random(in: 0..<3, using: &generator))"
                    default:
                        writer.create(
                            NtfDog.self, value: ["id": id, "age": Int.random(in: 0..<80, using: &generator)],
                            update: .modified)
                    }
                }
            }
            observed.refresh()
            #expect(previous.map(\.id) == state().map(\.id))
        }
        #expect(checked > 30)
    }

    @Test func objectObserversSeeOldAndNewValuesThenDeletion() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dog = try realm.write { realm.create(NtfDog.self, value: ["id": 1, "name": "Rex", "age": 2]) }
        var received: [ObjectChange<NtfDog>] = []
        let token = dog.observe(keyPaths: ["name", "age"]) { received.append($0) }
        defer { token.invalidate() }
        try realm.write { dog.tags.append("x") }
        #expect(received.isEmpty)
        try realm.write {
            dog.name = "Max"
            dog.age = 3
        }
        guard case .change(let object, let properties)? = received.last else {
            Issue.record("expected a change")
            return
        }
        #expect(object.isSameObject(as: dog))
        #expect(properties.map(\.name) == ["name", "age"])
        #expect(properties[0].oldValue as? String == "Rex" && properties[0].newValue as? String == "Max")
        #expect(properties[1].oldValue as? Int == 2 && properties[1].newValue as? Int == 3)
        try realm.write { realm.delete(dog) }
        guard case .deleted? = received.last else {
            Issue.record("expected .deleted")
            return
        }
    }

    @Test func invalidatedTokensStopDelivering() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        var calls = 0
        let token = realm.objects(NtfDog.self).observe { _ in calls += 1 }
        try realm.write { realm.add(NtfDog(value: ["id": 1])) }
        #expect(calls == 2)
        token.invalidate()
        try realm.write { realm.add(NtfDog(value: ["id": 2])) }
        #expect(calls == 2)
        var realmCalls = 0
        let realmToken = realm.observe { notification, _ in
            #expect(notification == .didChange)
            realmCalls += 1
        }
        try realm.write { realm.add(NtfDog(value: ["id": 3])) }
        #expect(realmCalls == 1)
        realmToken.invalidate()
    }

    @Test func frozenValuesKeepTheirVersion() async throws {
        let realm = try Realm(configuration: memoryConfiguration())
        try realm.write {
            for id in 0..<10 { realm.add(NtfDog(value: ["id": id, "age": id])) }
        }
        let live = realm.objects(NtfDog.self).filter("age >= 5")
        let frozen = live.freeze()
        let dog = realm.object(ofType: NtfDog.self, forPrimaryKey: 7)!
        let frozenDog = dog.freeze()
        #expect(frozen.isFrozen && frozenDog.isFrozen && !live.isFrozen)
        try realm.write {
            realm.delete(realm.objects(NtfDog.self).filter("age >= 8"))
            dog.age = 100
        }
        #expect(live.count == 3)
        #expect(frozen.count == 5)
        #expect(frozenDog.age == 7)
        let shared = Frozen(frozen)
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { shared.value.sum(of: \.age) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sums == Array(repeating: 5 + 6 + 7 + 8 + 9, count: 8))
        #expect(frozenDog.thaw()?.age == 100)
        #expect(frozen.thaw()?.count == 3)
    }

    @Test func threadSafeReferencesResolveOnAnotherActor() async throws {
        let configuration = memoryConfiguration("tsr")
        let realm = try Realm(configuration: configuration)
        let dog = try realm.write { realm.create(NtfDog.self, value: ["id": 5, "name": "Rex"]) }
        let reference = ThreadSafeReference(to: dog)
        let results = ThreadSafeReference(to: realm.objects(NtfDog.self).filter("name == 'Rex'"))
        let reader = Reader()
        let names = try await reader.read(reference, results, configuration: configuration)
        #expect(names == ["Rex", "1"])
    }

    @Test func actorRealmsDeliverCommitsToAsyncSequences() async throws {
        let configuration = memoryConfiguration("actor")
        let watcher = Watcher()
        let ready = try await watcher.start(configuration: configuration, expecting: 5)
        _ = ready
        let writer = Writer()
        for id in 0..<5 { try await writer.add(id: id, configuration: configuration) }
        let seen = await watcher.finished()
        // The first element is the initial state; every later one adds dogs, in commit order.
        #expect(seen.first == 0)
        #expect(seen.last == 5)
        #expect(seen == seen.sorted())
    }
}

@Suite("Notification: frozen values and actor Realms")
struct FrozenAndActorRealmTests {
    @Test func frozenRealmsReadTheirVersionAndRefuseWrites() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        try realm.write { realm.add(NtfDog(value: ["id": 1])) }
        let frozen = realm.freeze()
        #expect(frozen.isFrozen && !realm.isFrozen && frozen.freeze() === frozen)
        try realm.write { realm.add(NtfDog(value: ["id": 2])) }
        #expect(frozen.objects(NtfDog.self).count == 1)
        #expect(!frozen.refresh())
        #expect(throws: Realm.Error.self) { try frozen.write {} }
        #expect(!frozen.isInWriteTransaction)
        let thawed = frozen.thaw()
        #expect(!thawed.isFrozen && thawed.objects(NtfDog.self).count == 2)
    }

    @Test func collectionsOfObjectsFreezeAndThaw() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let (owner, dog) = try realm.write {
            let owner = realm.create(NtfOwner.self, value: ["id": 1])
            let dog = realm.create(NtfDog.self, value: ["id": 1, "owner": owner, "tags": ["a"]])
            dog.friends.insert(owner)
            dog.scores["x"] = 1
            return (owner, dog)
        }
        let tags = dog.tags.freeze()
        let friends = dog.friends.freeze()
        let scores = dog.scores.freeze()
        let fans = owner.dogs.freeze()
        try realm.write {
            dog.tags.append("b")
            dog.friends.removeAll()
            dog.scores["y"] = 2
            realm.add(NtfDog(value: ["id": 2, "owner": owner]))
        }
        #expect(Array(tags) == ["a"] && tags.isFrozen)
        #expect(friends.count == 1 && friends.isFrozen)
        #expect(scores.count == 1 && scores.isFrozen)
        #expect(fans.count == 1 && fans.isFrozen)
        #expect(tags.thaw()?.count == 2)
        #expect(friends.thaw()?.count == 0)
        #expect(scores.thaw()?.count == 2)
        #expect(fans.thaw()?.count == 2)
        try realm.write { realm.delete(dog) }
        #expect(tags.thaw() == nil)
    }

    @Test func setsAndLinkingObjectsAreObservable() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let (owner, dog) = try realm.write {
            (realm.create(NtfOwner.self, value: ["id": 1]), realm.create(NtfDog.self, value: ["id": 1]))
        }
        let fans = Recorder<LinkingObjects<NtfDog>>()
        let friends = Recorder<MutableSet<NtfOwner>>()
        let erased = Recorder<AnyRealmCollection<NtfDog>>()
        let tokens = [
            owner.dogs.observe { fans.changes.append($0) },
            dog.friends.observe { friends.changes.append($0) },
            AnyRealmCollection(realm.objects(NtfDog.self)).observe { erased.changes.append($0) },
        ]
        defer {
            for token in tokens { token.invalidate() }
        }
        try realm.write {
            dog.owner = owner
            dog.friends.insert(owner)
        }
        #expect(fans.updates.last?.insertions == [0])
        #expect(friends.updates.last?.insertions == [0])
        #expect(erased.updates.last?.modifications == [0])
        try realm.write { owner.name = "Ann" }
        // The dog links to the renamed owner: a modification of the dog, seen through every collection of it.
        #expect(fans.updates.last?.modifications == [0])
        #expect(friends.updates.last?.modifications == [0])
    }

    @Test func swiftKeyPathsFilterSequencesAndObservers() async throws {
        let configuration = memoryConfiguration("keypaths")
        let probe = KeyPathProbe()
        let seen = try await probe.run(configuration: configuration)
        // Changing `age` is not reported to observers of `name`; changing `name` is, once each.
        #expect(seen == ["collection: [0]", "object: name"])
    }

    @MainActor @Test func realmsOpenedForTheCallingActorRefreshThere() async throws {
        let configuration = memoryConfiguration("open")
        let realm = try await Realm.open(configuration: configuration)
        await #expect(throws: Realm.Error.self) { try await openOutsideAnyActor(configuration) }
        #expect(try Realm(configuration: configuration) === realm)  // the main actor's instance
        let other = try Realm.independent(configuration)
        try other.write { other.add(NtfDog(value: ["id": 1])) }
        #expect(realm.objects(NtfDog.self).isEmpty)
        #expect(await realm.asyncRefresh())
        #expect(realm.objects(NtfDog.self).count == 1)
    }

    @Test func observersOnAnotherActorGetTheCollectionThere() async throws {
        let configuration = memoryConfiguration("on-actor")
        let realm = try Realm(configuration: configuration)
        let sink = Sink()
        let token = await realm.objects(NtfDog.self).observe(on: sink) { sink, change in
            switch change {
            case .initial(let dogs): sink.counts.append(dogs.count)
            case .update(let dogs, _, _, _): sink.counts.append(dogs.count)
            case .error: sink.counts.append(-1)
            }
        }
        try realm.write { realm.add(NtfDog(value: ["id": 1])) }
        let counts = await sink.waitForCounts(2)
        #expect(counts == [0, 1])
        token.invalidate()
    }

    @Test func invalidatingTheRealmEndsItsSequences() async throws {
        let ender = Ender()
        #expect(try await ender.run(configuration: memoryConfiguration("end")) == 1)
    }

    @Test func refreshReadsClassesAnotherRealmAdded() throws {
        let configuration = memoryConfiguration("schema")
        let reader = try Realm(configuration: configuration)
        try reader.write { reader.add(NtfDog(value: ["id": 1])) }
        let writer = try Realm.independent(configuration)
        try writer.write { writer.add(NtfNote(value: ["text": "new class"])) }
        #expect(reader.schema[className: "NtfNote"] == nil)
        reader.refresh()
        #expect(reader.schema[className: "NtfNote"] != nil)
        #expect(reader.dynamicObjects("NtfNote").count == 1)
    }
}

/// `Realm.open` from a nonisolated function: there is no actor to confine the Realm to.
nonisolated func openOutsideAnyActor(_ configuration: Realm.Configuration) async throws {
    _ = try await Realm.open(configuration: configuration)
}

actor KeyPathProbe {
    func run(configuration: Realm.Configuration) async throws -> [String] {
        let realm = try await Realm(configuration: configuration, actor: self)
        let dog = try await realm.asyncWrite { realm.create(NtfDog.self, value: ["id": 1]) }
        var seen: [String] = []
        var collection = realm.objects(NtfDog.self).changes(keyPaths: [\NtfDog.name]).makeAsyncIterator()
        var object = dog.changes(keyPaths: [\NtfDog.name]).makeAsyncIterator()
        _ = await collection.next(isolation: self)  // .initial
        try await realm.asyncWrite { dog.age = 4 }
        try await realm.asyncWrite { dog.name = "Rex" }
        if case .update(_, _, _, let modifications)? = await collection.next(isolation: self) {
            seen.append("collection: \(modifications)")
        }
        if case .change(_, let properties)? = await object.next(isolation: self) {
            seen.append("object: \(properties.map(\.name).joined(separator: ","))")
        }
        return seen
    }
}

actor Sink {
    var counts: [Int] = []
    func waitForCounts(_ count: Int) async -> [Int] {
        while counts.count < count { await Task.yield() }
        return counts
    }
}

actor Ender {
    func run(configuration: Realm.Configuration) async throws -> Int {
        let realm = try await Realm(configuration: configuration, actor: self)
        var elements = 0
        var changes = realm.objects(NtfDog.self).changes.makeAsyncIterator()
        _ = await changes.next(isolation: self)
        elements += 1
        realm.invalidate()
        while await changes.next(isolation: self) != nil { elements += 1 }
        return elements
    }
}

actor Reader {
    func read(
        _ reference: ThreadSafeReference<NtfDog>, _ results: ThreadSafeReference<Results<NtfDog>>,
        configuration: Realm.Configuration
    ) async throws -> [String] {
        let realm = try await Realm(configuration: configuration, actor: self)
        let dog = try #require(realm.resolve(reference))
        let found = try #require(realm.resolve(results))
        return [dog.name, "\(found.count)"]
    }
}

actor Writer {
    var realm: Realm?
    func add(id: Int, configuration: Realm.Configuration) async throws {
        if realm == nil { realm = try await Realm(configuration: configuration, actor: self) }
        try await realm!.asyncWrite { realm!.add(NtfDog(value: ["id": id])) }
    }
}

actor Watcher {
    var realm: Realm?
    var task: Task<[Int], Never>?
    private var started: AsyncStream<Void>.Continuation?

    /// Starts a `for await` loop on this actor that ends once `count` dogs exist; returns once it runs.
    func start(configuration: Realm.Configuration, expecting count: Int) async throws -> Bool {
        realm = try await Realm(configuration: configuration, actor: self)
        let (stream, signal) = AsyncStream<Void>.makeStream()
        started = signal
        task = Task { await self.watch(until: count) }
        for await _ in stream { break }
        return true
    }

    private func watch(until count: Int) async -> [Int] {
        var counts: [Int] = []
        let changes = realm!.objects(NtfDog.self).changes
        started?.yield()
        for await change in changes {
            switch change {
            case .initial(let dogs), .update(let dogs, _, _, _): counts.append(dogs.count)
            case .error: return counts
            }
            if counts.last == count { break }
        }
        return counts
    }

    func finished() async -> [Int] { await task?.value ?? [] }
}

/// A map of objects, for map notifications.
final class NtfKennel: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var dogs: Map<String, NtfDog?>
}

@Suite("Notification: maps")
struct MapNotificationTests {
    @Test func mapsReportKeysRemovedAddedAndChanged() throws {
        let realm = try Realm(configuration: memoryConfiguration("map"))
        let dog = try realm.write {
            realm.create(NtfDog.self, value: ["id": 1, "scores": ["a": 1, "b": 2, "c": 3]])
        }
        var changes: [RealmMapChange<Map<String, Int>>] = []
        let token = dog.scores.observe { changes.append($0) }
        defer { token.invalidate() }
        guard case .initial(let initial)? = changes.first else {
            Issue.record("expected .initial")
            return
        }
        #expect(initial.count == 3)
        try realm.write { dog.name = "unrelated" }
        #expect(changes.count == 1)
        try realm.write {
            dog.scores["a"] = nil
            dog.scores["b"] = 20
            dog.scores["d"] = 4
            dog.scores["c"] = 3  // the same value: not a change
        }
        guard case .update(let map, let deletions, let insertions, let modifications)? = changes.last else {
            Issue.record("expected an update, got \(changes)")
            return
        }
        #expect(deletions == ["a"] && insertions == ["d"] && modifications == ["b"])
        #expect(map["b"] == 20 && map.count == 3)
        try realm.write { realm.delete(dog) }
        guard case .update(_, let gone, [], [])? = changes.last else {
            Issue.record("expected every key removed with the object")
            return
        }
        #expect(gone == ["b", "c", "d"])
    }

    @Test func mapsOfObjectsReportChangedObjects() throws {
        let realm = try Realm(configuration: memoryConfiguration("map-objects"))
        let (kennel, rex, max) = try realm.write {
            let rex = realm.create(NtfDog.self, value: ["id": 1, "name": "Rex"])
            let max = realm.create(NtfDog.self, value: ["id": 2, "name": "Max"])
            let kennel = realm.create(NtfKennel.self, value: ["id": 1])
            kennel.dogs["front"] = rex
            kennel.dogs["back"] = max
            return (kennel, rex, max)
        }
        var modified: [[String]] = []
        let token = kennel.dogs.observe(keyPaths: ["name"]) { change in
            if case .update(_, _, _, let modifications) = change { modified.append(modifications) }
        }
        defer { token.invalidate() }
        try realm.write { rex.age = 5 }
        #expect(modified.isEmpty)
        try realm.write { max.name = "Maximus" }
        #expect(modified == [["back"]])
        try realm.write { kennel.dogs["front"] = max }
        #expect(modified.last == ["front"])
    }

    @Test func mapChangesArriveInForAwaitLoops() async throws {
        let configuration = memoryConfiguration("map-actor")
        let seen = try await MapWatcher().run(configuration: configuration)
        #expect(seen == ["initial 0", "insertions [\"x\"]", "modifications [\"x\"]", "deletions [\"x\"]"])
    }
}

actor MapWatcher {
    func run(configuration: Realm.Configuration) async throws -> [String] {
        let realm = try await Realm(configuration: configuration, actor: self)
        let dog = try await realm.asyncWrite { realm.create(NtfDog.self, value: ["id": 1]) }
        var changes = dog.scores.changes.makeAsyncIterator()
        var seen: [String] = []
        for step in 0..<4 {
            switch step {
            case 1: try await realm.asyncWrite { dog.scores["x"] = 1 }
            case 2: try await realm.asyncWrite { dog.scores["x"] = 2 }
            case 3: try await realm.asyncWrite { dog.scores["x"] = nil }
            default: break
            }
            switch await changes.next(isolation: self) {
            case .initial(let map)?: seen.append("initial \(map.count)")
            case .update(_, let deletions, let insertions, let modifications)?:
                if !insertions.isEmpty { seen.append("insertions \(insertions)") }
                if !modifications.isEmpty { seen.append("modifications \(modifications)") }
                if !deletions.isEmpty { seen.append("deletions \(deletions)") }
            case .error?, nil: return seen
            }
        }
        return seen
    }
}
