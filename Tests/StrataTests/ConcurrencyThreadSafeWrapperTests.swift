import Dispatch
import Foundation
import Strata
import Testing

/// Runs `body` on a new plain thread (whose Realms are thread-confined) and returns what it returned.
func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// What a read of a `@ThreadSafe` value found on another thread.
struct ThreadSafeRead: Sendable, Equatable {
    var value: String
    var sameRealm = false
}

/// Reads a `@ThreadSafe` parameter on another thread: the wrapper travels, the value is resolved there.
func nameOnAnotherThread(@ThreadSafe of dog: QueueDog?) async -> String {
    let wrapper = _dog
    return await onNewThread { wrapper.wrappedValue?.name ?? "nil" }
}

@Suite("Concurrency: the @ThreadSafe property wrapper")
struct ConcurrencyThreadSafeWrapperTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "thread-safe-\(UUID())", objectTypes: [QueueDog.self, QueueOwner.self])

    /// An object held by `@ThreadSafe` reads live on another thread, in that thread's own Realm, with changes made
    /// after it was assigned.
    @Test func anObjectResolvesLiveOnAnotherThread() async throws {
        let realm = try Realm(configuration: configuration)
        let rex = try realm.write { realm.create(QueueDog.self, value: ["name": "Rex", "age": 3]) }
        @ThreadSafe var dog = rex
        try realm.write { rex.age = 4 }
        let wrapper = _dog
        let read = await onNewThread { () -> ThreadSafeRead in
            guard let dog = wrapper.wrappedValue else { return ThreadSafeRead(value: "nil") }
            let mine = try? Realm(configuration: dog.realm!.configuration)
            return ThreadSafeRead(value: "\(dog.name) \(dog.age) \(dog.isFrozen)", sameRealm: mine === dog.realm)
        }
        #expect(read == ThreadSafeRead(value: "Rex 4 false", sameRealm: true))
        #expect(dog?.name == "Rex")  // and here, in this task's Realm
    }

    /// `Results` keep their query; a `List` its owner; both read on another thread.
    @Test func collectionsAndResultsResolveOnAnotherThread() async throws {
        let realm = try Realm(configuration: configuration)
        let owner = try realm.write {
            realm.create(
                QueueOwner.self,
                value: ["name": "Ann", "dogs": [["name": "Rex", "age": 1], ["name": "Bo", "age": 5]]])
        }
        @ThreadSafe var old = realm.objects(QueueDog.self).where { $0.age > 2 }
        @ThreadSafe var dogs = owner.dogs
        let results = _old
        let list = _dogs
        let read = await onNewThread { () -> [String] in
            [
                results.wrappedValue.map { $0.map(\.name).joined(separator: ",") } ?? "nil",
                list.wrappedValue.map { $0.map(\.name).joined(separator: ",") } ?? "nil",
            ]
        }
        #expect(read == ["Bo", "Rex,Bo"])
    }

    /// nil is held as nil; assigning holds the new value, assigning nil clears it; a deleted object reads nil.
    @Test func nilReassignmentAndDeletion() async throws {
        let realm = try Realm(configuration: configuration)
        let (rex, bo) = try realm.write {
            (realm.create(QueueDog.self, value: ["name": "Rex"]), realm.create(QueueDog.self, value: ["name": "Bo"]))
        }
        @ThreadSafe var dog: QueueDog? = nil
        let wrapper = _dog
        #expect(await onNewThread { wrapper.wrappedValue?.name ?? "nil" } == "nil")
        dog = rex
        #expect(await onNewThread { wrapper.wrappedValue?.name ?? "nil" } == "Rex")
        dog = bo
        #expect(await onNewThread { wrapper.wrappedValue?.name ?? "nil" } == "Bo")
        try realm.write { realm.delete(bo) }
        #expect(await onNewThread { wrapper.wrappedValue?.name ?? "nil" } == "nil")
        dog = nil
        #expect(dog == nil)
    }

    /// Values of two configurations, one after the other in one wrapper: each resolves in its own file's Realm.
    @Test func valuesOfDifferentConfigurations() async throws {
        let other = Realm.Configuration(
            inMemoryIdentifier: "thread-safe-other-\(UUID())", objectTypes: [QueueDog.self, QueueOwner.self])
        let first = try Realm(configuration: configuration)
        let second = try Realm(configuration: other)
        let rex = try first.write { first.create(QueueDog.self, value: ["name": "Rex"]) }
        let bo = try second.write { second.create(QueueDog.self, value: ["name": "Bo"]) }
        @ThreadSafe var dog = rex
        let wrapper = _dog
        let firstPath = configuration.inMemoryIdentifier
        let otherPath = other.inMemoryIdentifier
        let read = { @Sendable () async -> String in
            await onNewThread {
                guard let dog = wrapper.wrappedValue, let identifier = dog.realm?.configuration.inMemoryIdentifier
                else { return "nil" }
                return "\(dog.name) \(identifier == firstPath ? "first" : identifier == otherPath ? "other" : "?")"
            }
        }
        #expect(await read() == "Rex first")
        dog = bo
        #expect(await read() == "Bo other")
    }

    /// As a function parameter: the caller passes the object, the function hands the wrapper to another thread.
    @Test func asAFunctionArgument() async throws {
        let realm = try Realm(configuration: configuration)
        let rex = try realm.write { realm.create(QueueDog.self, value: ["name": "Rex"]) }
        #expect(await nameOnAnotherThread(of: rex) == "Rex")
        #expect(await nameOnAnotherThread(of: nil) == "nil")
    }

    /// Read in a block of a queue that has a Realm open for the file, the value resolves in that queue's Realm.
    @Test func onAQueueItResolvesInTheQueuesRealm() async throws {
        let realm = try Realm(configuration: configuration)
        let rex = try realm.write { realm.create(QueueDog.self, value: ["name": "Rex"]) }
        @ThreadSafe var dog = rex
        let wrapper = _dog
        let queue = MarkedQueue("thread-safe")
        let configuration = configuration
        let read = try await queue.run { () -> ThreadSafeRead in
            let queueRealm = try Realm(configuration: configuration, queue: queue.queue)
            let dog = wrapper.wrappedValue
            return ThreadSafeRead(value: dog?.name ?? "nil", sameRealm: dog?.realm === queueRealm)
        }
        #expect(read == ThreadSafeRead(value: "Rex", sameRealm: true))
    }

    /// The wrapper is `Sendable`, as in the SDK.
    @Test func theWrapperIsSendable() throws {
        let realm = try Realm(configuration: configuration)
        let rex = try realm.write { realm.create(QueueDog.self, value: ["name": "Rex"]) }
        let wrapper: any Sendable = ThreadSafe(wrappedValue: rex)
        #expect((wrapper as? ThreadSafe<QueueDog>)?.wrappedValue?.name == "Rex")
    }
}
