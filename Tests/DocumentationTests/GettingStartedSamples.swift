import Foundation
import Strata
import Testing

// Documentation/GettingStarted.md

enum GettingStarted {
    final class Dog: Object {
        @Persisted(primaryKey: true) var id = ObjectId.generate()
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted var owner: Person?
    }

    final class Person: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted(originProperty: "owner") var dogs: LinkingObjects<Dog>
    }

    static func openRealm(in folder: URL) throws -> Realm {
        let realm = try Realm(fileURL: folder.appendingPathComponent("dogs.strata"))
        return realm
    }

    static func openScratchRealm() throws -> Realm {
        let scratch = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "scratch"))
        return scratch
    }

    actor DogWatcher {
        var seen: [Int] = []

        func watch() async throws {
            let realm = try await Realm(actor: self)
            let puppies = realm.objects(Dog.self).where { $0.age < 2 }
            for await change in puppies.changes {
                switch change {
                case .initial(let dogs):
                    print("\(dogs.count) puppies")
                    seen.append(dogs.count)
                case .update(let dogs, let deletions, let insertions, let modifications):
                    print("now \(dogs.count): -\(deletions) +\(insertions) ~\(modifications)")
                    seen.append(dogs.count)
                    if dogs.count == 2 { return }
                case .error(let error):
                    throw error
                }
            }
        }
    }
}

extension DefaultConfigurationSamples {
    @Suite("Getting started")
    struct GettingStartedTests {
        @Test func theWalkThroughRuns() throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("getting-started")
            typealias Dog = GettingStarted.Dog
            typealias Person = GettingStarted.Person

            let realm = try Realm()  // default.strata in the current directory

            try realm.write {
                let ann = Person(value: ["name": "Ann"])
                realm.add(Dog(value: ["name": "Rex", "age": 3, "owner": ann]))
                realm.create(Dog.self, value: ["name": "Fido", "age": 1])
            }

            let dogs = realm.objects(Dog.self)
            let puppies = dogs.where { $0.age < 2 }  // type-safe query
            let rexes = dogs.filter("name BEGINSWITH[c] $0", "r")  // Realm Query Language
            let oldestFirst = dogs.sorted(by: \.age, ascending: false)
            let ann = realm.object(ofType: Person.self, forPrimaryKey: "Ann")
            print(puppies.count, rexes.first?.owner?.name ?? "-", oldestFirst.map(\.name))  // 1 Ann ["Rex", "Fido"]
            print(ann?.dogs.map(\.name) ?? [])  // ["Rex"]: the backlinks of Dog.owner
            #expect(puppies.count == 1)
            #expect(rexes.first?.owner?.name == "Ann")
            #expect(oldestFirst.map(\.name) == ["Rex", "Fido"])
            #expect(ann?.dogs.map(\.name) == ["Rex"])

            try realm.write { realm.add(Dog(value: ["name": "Bo", "age": 0])) }
            print(puppies.count)  // 2: results are live
            #expect(puppies.count == 2)

            let rex = rexes.first!
            try realm.write { rex.age += 1 }
            try realm.write { realm.delete(puppies) }
            print(dogs.map(\.name), rex.age)  // ["Rex"] 4
            #expect(dogs.map(\.name) == ["Rex"] && rex.age == 4)

            do {
                try realm.write {
                    realm.add(Dog(value: ["name": "Max"]))
                    realm.add(Person(value: ["name": "Ann"]))  // Ann exists: the whole write fails
                }
            } catch let error as Realm.Error {
                print(error)  // Attempting to create an object of type 'Person' with an existing primary key…
                #expect(error == .primaryKeyExists(type: "Person", value: "Ann"))
            }
            print(dogs.count)  // 1: nothing of the failed write was applied
            #expect(dogs.count == 1)
        }

        @Test func anActorFollowsAQuery() async throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("getting-started-actor")
            let watcher = GettingStarted.DogWatcher()
            let watching = Task { try await watcher.watch() }
            // Write from another Realm of the same file once the watcher has delivered its initial state.
            while await watcher.seen.isEmpty { await Task.yield() }
            try await Writer().add(names: ["Bo", "Fido"])
            try await watching.value
            let seen = await watcher.seen
            #expect(seen.first == 0 && seen.last == 2)
        }

        actor Writer {
            func add(names: [String]) async throws {
                let realm = try await Realm(actor: self)
                for name in names {
                    try await realm.asyncWrite { realm.add(GettingStarted.Dog(value: ["name": name])) }
                }
            }
        }
    }
}

@Suite("Getting started: files")
struct GettingStartedFileTests {
    @Test func realmsOpenOnDiskAndInMemory() throws {
        let folder = TemporaryFolder()
        let realm = try GettingStarted.openRealm(in: folder.url)
        #expect(realm.configuration.fileURL?.lastPathComponent == "dogs.strata")
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("dogs.strata").path))
        let scratch = try GettingStarted.openScratchRealm()
        #expect(scratch.configuration.inMemoryIdentifier == "scratch")
    }
}
