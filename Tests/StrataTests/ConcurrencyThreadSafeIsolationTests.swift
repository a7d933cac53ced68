import Foundation
import Strata
import Testing

/// An actor with its own Realm that reads a `@ThreadSafe` value it was handed.
private actor ThreadSafeActorReader {
    private var realm: Realm!
    @ThreadSafe var dog: QueueDog?

    init(dog: ThreadSafe<QueueDog>) { _dog = dog }

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Reads the held dog: whether it belongs to this actor's Realm, and renames it in that Realm's write.
    func renameHeldDog(to name: String) throws -> (inActorsRealm: Bool, name: String) {
        guard let dog else { return (false, "nil") }
        // A value of another Realm cannot be written in this one's transaction (it would stop the process).
        guard dog.realm === realm else { return (false, dog.name) }
        try realm.write { dog.name = name }
        return (true, realm.objects(QueueDog.self).first?.name ?? "none")
    }
}

/// `@ThreadSafe` read from an actor, the main actor or a task resolves in that isolation's own Realm, as the Realm
/// SDK resolves it in the reading thread's Realm: the value can be used with that Realm (written, observed).
@Suite("Concurrency: @ThreadSafe resolves in the reader's isolation")
struct ConcurrencyThreadSafeIsolationTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "thread-safe-isolation-\(UUID())", objectTypes: [QueueDog.self, QueueOwner.self])

    private func heldDog() throws -> (Realm, ThreadSafe<QueueDog>) {
        let realm = try Realm(configuration: configuration)
        let dog = try realm.write { realm.create(QueueDog.self, value: ["name": "Rex"]) }
        return (realm, ThreadSafe(wrappedValue: dog))
    }

    @Test func onAnActorItResolvesInTheActorsRealm() async throws {
        let (realm, wrapper) = try heldDog()
        let reader = ThreadSafeActorReader(dog: wrapper)
        try await reader.open(configuration)
        let read = try await reader.renameHeldDog(to: "Max")
        #expect(read.inActorsRealm)
        #expect(read.name == "Max")
        realm.refresh()
        #expect(realm.objects(QueueDog.self).first?.name == "Max")
    }

    @MainActor @Test func onTheMainActorItResolvesInTheMainActorsRealm() throws {
        let mainRealm = try Realm(configuration: configuration)
        let held = try mainRealm.write { mainRealm.create(QueueDog.self, value: ["name": "Rex"]) }
        let wrapper = ThreadSafe(wrappedValue: held)
        let dog = try #require(wrapper.wrappedValue)
        try #require(dog.realm === mainRealm)
        try mainRealm.write { dog.name = "Main" }
        #expect(held.name == "Main")
    }

    @Test func inATaskItResolvesInTheTasksRealm() async throws {
        let (realm, wrapper) = try heldDog()
        let configuration = configuration
        let same = try await Task {
            let taskRealm = try Realm(configuration: configuration)
            return wrapper.wrappedValue?.realm === taskRealm
        }.value
        #expect(same)
        withExtendedLifetime(realm) {}
    }
}
