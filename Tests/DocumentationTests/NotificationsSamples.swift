import Foundation
import Observation
import Strata
import Synchronization
import Testing

// Documentation/Notifications.md

enum NotificationsSample {
    final class Owner: Object {
        @Persisted var name = ""
    }

    final class Dog: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted var owner: Owner?
        @Persisted var scores: Map<String, Int>
    }

    /// Follows the dogs under 3 on its actor; `seen` records what each element said.
    actor PuppyFeed {
        var seen: [String] = []

        func follow(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            let puppies = realm.objects(Dog.self).where { $0.age < 3 }.sorted(byKeyPath: "name")
            for await change in puppies.changes {
                switch change {
                case .initial(let dogs):
                    print("puppies:", dogs.map(\.name))
                    seen.append("initial \(dogs.count)")
                case .update(let dogs, let deletions, let insertions, let modifications):
                    print("-\(deletions) +\(insertions) ~\(modifications):", dogs.map(\.name))
                    seen.append("update -\(deletions) +\(insertions) ~\(modifications)")
                case .error(let error):
                    throw error
                }
            }
        }
    }

    /// Follows one dog, its map and the Realm's versions.
    actor DogWatcher {
        var seen: [String] = []

        func follow(dogID: Int, configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            guard let rex = realm.object(ofType: Dog.self, forPrimaryKey: dogID) else { return }
            for await change in rex.changes(keyPaths: [\Dog.name, \Dog.age]) {  // no initial element
                if case .change(_, let properties) = change {
                    print(properties.map(\.name))  // ["age"]
                    seen.append(properties.map(\.name).joined(separator: ","))
                } else if case .deleted = change {
                    print("deleted")  // the sequence ends after .deleted
                    seen.append("deleted")
                }
            }
        }
    }

    actor SnapshotFeed {
        var counts: [Int] = []

        func follow(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            for await snapshot in realm.objects(Dog.self).snapshots {  // Frozen<Results<Dog>>
                let total = await Task.detached { snapshot.value.sum(of: \.age) }.value  // read on any task
                counts.append(snapshot.value.count)
                print(snapshot.value.count, total)
            }
        }
    }

    actor VersionFeed {
        var versions: [UInt64] = []

        func follow(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            for await version in realm.changes {  // each version the Realm advances to; no initial element
                print("now at version", version)
                versions.append(version)
            }
        }
    }

    actor Dashboard {
        var counts: [Int] = []
        func show(_ count: Int) { counts.append(count) }
    }

    struct PuppyCounter {
        func follow(configuration: Realm.Configuration, report: @Sendable (Int) -> Void) async throws {
            let realm = try Realm(configuration: configuration)  // nonisolated code: confined to this task
            for await change in realm.objects(Dog.self).where({ $0.age < 3 }).changes {
                switch change {
                case .initial(let puppies), .update(let puppies, _, _, _): report(puppies.count)
                case .error(let error): throw error
                }
            }
        }
    }
}

@Suite("Notifications")
struct NotificationsSampleTests {
    typealias Dog = NotificationsSample.Dog
    typealias Owner = NotificationsSample.Owner

    /// Dogs 1 (Rex, 2), 2 (Bo, 5) and 3 (Ivy, 1), with Rex owned by Ann.
    private static func realm(_ name: String) throws -> Realm {
        let realm = try Realm(configuration: inMemoryConfiguration(name))
        try realm.write {
            let ann = realm.create(Owner.self, value: ["name": "Ann"])
            realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 2, "owner": ann])
            realm.create(Dog.self, value: ["id": 2, "name": "Bo", "age": 5])
            realm.create(Dog.self, value: ["id": 3, "name": "Ivy", "age": 1])
        }
        return realm
    }

    @Test func collectionCallbacks() throws {
        let realm = try Self.realm("notifications-callbacks")
        let puppies = realm.objects(Dog.self).where { $0.age < 3 }.sorted(byKeyPath: "name")
        var rows: [String] = []
        var updates = 0

        let token = puppies.observe { change in
            switch change {
            case .initial(let dogs):
                rows = dogs.map(\.name)  // ["Ivy", "Rex"]
            case .update(let dogs, let deletions, let insertions, let modifications):
                for index in deletions.reversed() { rows.remove(at: index) }  // old positions
                for index in insertions { rows.insert(dogs[index].name, at: index) }  // new positions
                for index in modifications { rows[index] = dogs[index].name }  // new positions
                updates += 1
            case .error(let error):
                print(error)
            }
        }
        #expect(rows == ["Ivy", "Rex"])

        try realm.write {
            realm.create(Dog.self, value: ["id": 4, "name": "Ace", "age": 0])
            realm.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Max"  // Rex is now Max: it moves
            realm.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 4  // Ivy is no longer a puppy
        }
        print(rows)  // ["Ace", "Max"]: the change set turned the old rows into the new ones
        #expect(rows == puppies.map(\.name) && rows == ["Ace", "Max"] && updates == 1)

        token.invalidate()
        try realm.write { realm.create(Dog.self, value: ["id": 5, "name": "Zed", "age": 1]) }
        #expect(updates == 1)
    }

    @Test func keyPathsLimitModifications() throws {
        let realm = try Self.realm("notifications-keypaths")
        let dogs = realm.objects(Dog.self).sorted(byKeyPath: "id")
        var modified: [[Int]] = []

        let token = dogs.observe(keyPaths: ["name", "owner.name"]) { change in
            if case .update(_, _, _, let modifications) = change { modified.append(modifications) }
        }
        try realm.write { realm.object(ofType: Dog.self, forPrimaryKey: 2)!.age = 6 }  // not observed: no call
        try realm.write { realm.objects(Owner.self).first!.name = "Anna" }  // Rex, Ann's dog, is modified
        print(modified)  // [[0]]
        #expect(modified == [[0]])
        token.invalidate()

        let byName = dogs.observe(keyPaths: [\Dog.name]) { _ in }  // Swift key paths work too
        byName.invalidate()
    }

    @Test func sectionedResultsCallbacks() throws {
        let realm = try Self.realm("notifications-sectioned")
        let byAge = realm.objects(Dog.self).sectioned(by: \.age)  // 1: [Ivy], 2: [Rex], 5: [Bo]
        var changes: [String] = []
        let token = byAge.observe(keyPaths: ["name", "age"]) { change in
            if case .update(_, let deleted, let inserted, let modified, let newSections, let goneSections) = change {
                changes.append("-\(deleted) +\(inserted) ~\(modified) +\(Array(newSections)) -\(Array(goneSections))")
            }
        }
        // Ivy (1) joins Rex (2): section 0 is gone; Ivy is row 1 of the section now first.
        try realm.write { realm.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 2 }
        print(changes)  // ["-[] +[[0, 1]] ~[] +[] -[0]"]
        #expect(changes == ["-[] +[[0, 1]] ~[] +[] -[0]"])
        #expect(byAge.map { $0.map(\.name) } == [["Rex", "Ivy"], ["Bo"]])
        token.invalidate()
    }

    @Test func objectCallbacks() throws {
        let realm = try Self.realm("notifications-object")
        let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)!
        var log: [String] = []

        let token = rex.observe(keyPaths: ["name", "age"]) { change in
            switch change {
            case .change(_, let properties):
                for property in properties {
                    print(property.name, property.oldValue ?? "nil", property.newValue ?? "nil")  // age 2 3
                    log.append("\(property.name) \(property.oldValue ?? "nil") \(property.newValue ?? "nil")")
                }
            case .deleted:
                print("deleted")
                log.append("deleted")
            case .error(let error):
                print(error)
            }
        }
        try realm.write { rex.age = 3 }
        try realm.write { realm.delete(rex) }
        #expect(log == ["age 2 3", "deleted"])
        token.invalidate()
    }

    @Test func swiftObservation() throws {
        let realm = try Self.realm("notifications-observation")
        let fired = ObservationSampleFlag()
        let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)!
        withObservationTracking {
            print(rex.name)  // Rex
            #expect(rex.name == "Rex")
        } onChange: {
            print("Rex's name changed")
            fired.set()
        }
        try realm.write { rex.age = 3 }  // another property: nothing
        #expect(!fired.isSet)
        try realm.write { rex.name = "Max" }  // Rex's name changed
        #expect(fired.isSet)
    }

    @Test func swiftObservationOfCollections() throws {
        let realm = try Self.realm("notifications-observation-collections")
        let fired = ObservationSampleFlag()
        let puppies = realm.objects(Dog.self).where { $0.age < 3 }
        withObservationTracking {
            print(puppies.count)  // 2
            #expect(puppies.count == 2)
        } onChange: {
            print("the puppies changed")
            fired.set()
        }
        try realm.write { realm.object(ofType: Dog.self, forPrimaryKey: 2)!.name = "Bob" }  // not a puppy: nothing
        #expect(!fired.isSet)
        try realm.write { realm.create(Dog.self, value: ["id": 4, "name": "Pip", "age": 0]) }  // the puppies changed
        #expect(fired.isSet)
    }

    @Test func mapAndRealmCallbacks() throws {
        let realm = try Self.realm("notifications-map")
        let rex = realm.object(ofType: Dog.self, forPrimaryKey: 1)!
        var keys: [String] = []
        var versions = 0

        let mapToken = rex.scores.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                print(deletions, insertions, modifications)  // [] ["speed"] [] — keys, not positions
                keys += insertions
            }
        }
        let realmToken = realm.observe { notification, realm in
            versions += 1  // .didChange after every version this Realm advances to
        }
        try realm.write { rex.scores["speed"] = 7 }
        #expect(keys == ["speed"] && versions == 1)
        mapToken.invalidate()
        realmToken.invalidate()
    }

    @Test(.timeLimit(.minutes(1))) func collectionSequencesOnAnActor() async throws {
        let configuration = inMemoryConfiguration("notifications-sequence")
        let writer = Writer()
        try await writer.open(configuration: configuration)
        let feed = NotificationsSample.PuppyFeed()
        let following = Task { try await feed.follow(configuration: configuration) }
        while await feed.seen.isEmpty { await Task.yield() }
        try await writer.renameRexAndAgeIvy()
        while await feed.seen.count < 2 { await Task.yield() }
        following.cancel()  // ends the sequence, and so the loop
        try await following.value
        #expect(await feed.seen == ["initial 2", "update -[0] +[] ~[0]"])
        await writer.close()
    }

    @Test(.timeLimit(.minutes(1))) func objectSequencesOnAnActor() async throws {
        let configuration = inMemoryConfiguration("notifications-object-sequence")
        let writer = Writer()
        try await writer.open(configuration: configuration)
        let watcher = NotificationsSample.DogWatcher()
        let following = Task { try await watcher.follow(dogID: 1, configuration: configuration) }
        // The sequence has no initial element: write until the watcher has seen a change.
        var age = 3
        while await watcher.seen.isEmpty {
            try await writer.setAge(age, of: 1)
            age += 1
            try await Task.sleep(for: .milliseconds(10))
        }
        try await writer.delete(1)
        try await following.value
        let seen = await watcher.seen
        #expect(seen.first == "age" && seen.last == "deleted")
        await writer.close()
    }

    @Test(.timeLimit(.minutes(1))) func snapshotsAndVersions() async throws {
        let configuration = inMemoryConfiguration("notifications-snapshots")
        let writer = Writer()
        try await writer.open(configuration: configuration)
        let snapshots = NotificationsSample.SnapshotFeed()
        let following = Task { try await snapshots.follow(configuration: configuration) }
        while await snapshots.counts.isEmpty { await Task.yield() }
        try await writer.setAge(9, of: 2)
        while await snapshots.counts.count < 2 { await Task.yield() }
        following.cancel()
        try await following.value
        #expect(await snapshots.counts == [3, 3])

        let versions = NotificationsSample.VersionFeed()
        let versionsTask = Task { try await versions.follow(configuration: configuration) }
        // No initial element: commit until the feed has seen one (it may not be registered yet).
        var age = 10
        while await versions.versions.isEmpty {
            try await writer.setAge(age, of: 2)
            age += 1
            try await Task.sleep(for: .milliseconds(10))
        }
        versionsTask.cancel()
        try await versionsTask.value
        #expect(await versions.versions.isEmpty == false)
        await writer.close()
    }

    @Test(.timeLimit(.minutes(1))) func aTaskConfinedLoopFollowsOtherRealmsCommits() async throws {
        let configuration = inMemoryConfiguration("notifications-task-loop")
        let writer = Writer()
        try await writer.open(configuration: configuration)
        let counts = Mutex<[Int]>([])
        let following = Task.detached {
            try await NotificationsSample.PuppyCounter().follow(configuration: configuration) { count in
                counts.withLock { $0.append(count) }
            }
        }
        // The time limit cancels this test if delivery is broken: the waits check for it.
        while counts.withLock({ $0.isEmpty }) {
            try Task.checkCancellation()
            await Task.yield()
        }
        try await writer.setAge(1, of: 2)  // Bo becomes a puppy: the task's loop sees it without a refresh
        while counts.withLock({ $0.count < 2 }) {
            try Task.checkCancellation()
            await Task.yield()
        }
        following.cancel()
        try await following.value
        #expect(counts.withLock { $0 } == [2, 3])
        await writer.close()
    }

    @Test(.timeLimit(.minutes(1))) func callbacksOnAnotherActor() async throws {
        let configuration = inMemoryConfiguration("notifications-on-actor")
        let writer = Writer()
        try await writer.open(configuration: configuration)
        let dashboard = NotificationsSample.Dashboard()
        let token = try await writer.observe(on: dashboard)
        try await writer.setAge(1, of: 2)
        while await dashboard.counts.count < 2 { await Task.yield() }
        #expect(await dashboard.counts == [2, 3])
        token.invalidate()
        await writer.close()
    }

    /// Writes from a Realm of its own (and keeps the in-memory file open).
    actor Writer {
        var realm: Realm!

        func open(configuration: Realm.Configuration) async throws {
            realm = try await Realm(configuration: configuration, actor: self)
            try await realm.asyncWrite {
                let ann = realm.create(Owner.self, value: ["name": "Ann"])
                realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 2, "owner": ann])
                realm.create(Dog.self, value: ["id": 2, "name": "Bo", "age": 5])
                realm.create(Dog.self, value: ["id": 3, "name": "Ivy", "age": 1])
            }
        }

        func renameRexAndAgeIvy() async throws {
            try await realm.asyncWrite {
                realm.object(ofType: Dog.self, forPrimaryKey: 1)!.name = "Max"
                realm.object(ofType: Dog.self, forPrimaryKey: 3)!.age = 4
            }
        }

        func setAge(_ age: Int, of id: Int) async throws {
            try await realm.asyncWrite { realm.object(ofType: Dog.self, forPrimaryKey: id)!.age = age }
        }

        func delete(_ id: Int) async throws {
            try await realm.asyncWrite { realm.delete(realm.object(ofType: Dog.self, forPrimaryKey: id)!) }
        }

        func observe(on dashboard: NotificationsSample.Dashboard) async throws -> NotificationToken {
            let puppies = realm.objects(Dog.self).where { $0.age < 3 }
            let token = await puppies.observe(on: dashboard) { dashboard, change in
                if case .initial(let dogs) = change { dashboard.show(dogs.count) }
                if case .update(let dogs, _, _, _) = change { dashboard.show(dogs.count) }
            }
            return token
        }

        func close() { realm = nil }
    }
}

/// Set by the Observation sample's `onChange` (which is `@Sendable`).
final class ObservationSampleFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
