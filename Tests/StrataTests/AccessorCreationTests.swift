import Dispatch
import Foundation
import Testing

@testable import Strata

final class AccessorCreationItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var score = 0.0
    /// Not persisted: each accessor has its own.
    var note = ""
}

final class AccessorCreationLabel: Object {
    @Persisted var label = ""
}

/// A class whose initialiser reads a stored object (when the thread has a Realm to read from): creating its
/// accessor creates another accessor half-way through its properties.
final class AccessorCreationReader: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    let seen = AccessorCreationReader.labelOfThisThreadsRealm()
    @Persisted var count = 0

    static let realmKey = "AccessorCreationTests.realm"

    static func labelOfThisThreadsRealm() -> String {
        guard let realm = Thread.current.threadDictionary[realmKey] as? Realm else { return "" }
        return realm.objects(AccessorCreationLabel.self).first?.label ?? ""
    }
}

@Suite("Accessor creation")
struct AccessorCreationTests {
    private func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "accessor-creation-\(UUID())",
                objectTypes: [AccessorCreationItem.self, AccessorCreationLabel.self, AccessorCreationReader.self]))
    }

    /// Each accessor iteration hands out is its own object: held ones keep their row, their ignored properties
    /// and their identity; one nobody holds is freed.
    @Test func objectsHeldAcrossIterationsKeepTheirRowsAndIgnoredProperties() throws {
        let realm = try realm()
        try realm.write {
            for id in 0..<50 { realm.add(AccessorCreationItem(value: ["id": id, "name": "n\(id)", "score": 1.0])) }
        }
        var held: [AccessorCreationItem] = []
        weak var heldWeakly: AccessorCreationItem?
        weak var droppedWeakly: AccessorCreationItem?
        try realm.write {
            for item in realm.objects(AccessorCreationItem.self) {
                item.score += Double(item.id)
                item.note = "note \(item.id)"
                if item.id == 7 { droppedWeakly = item }
                if item.id % 2 == 0 { held.append(item) }
                if item.id == 8 { heldWeakly = item }
            }
        }
        #expect(droppedWeakly == nil)
        #expect(heldWeakly === held[4])
        for (position, item) in held.enumerated() {
            #expect(item.id == position * 2)
            #expect(item.name == "n\(position * 2)")
            #expect(item.score == 1.0 + Double(position * 2))
            #expect(item.note == "note \(position * 2)")
        }
        #expect(Set(held.map { ObjectIdentifier($0) }).count == held.count)
    }

    /// A property's initial value that reads a stored object creates an accessor while another one is being
    /// created: both get their own properties.
    @Test func anAccessorCreatedByAnotherOnesInitialiserLeavesItsPropertiesAlone() throws {
        let realm = try realm()
        try realm.write {
            realm.add(AccessorCreationLabel(value: ["label": "probe"]))
            for id in 0..<20 {
                realm.add(AccessorCreationReader(value: ["id": id, "name": "r\(id)", "count": id * 2]))
            }
        }
        Thread.current.threadDictionary[AccessorCreationReader.realmKey] = realm
        defer { Thread.current.threadDictionary[AccessorCreationReader.realmKey] = nil }
        var seen = 0
        for reader in realm.objects(AccessorCreationReader.self) {
            #expect(reader.realm === realm)
            #expect(reader.seen == "probe")
            #expect(reader.name == "r\(reader.id)")
            #expect(reader.count == reader.id * 2)
            seen += 1
        }
        #expect(seen == 20)
        try realm.write { for reader in realm.objects(AccessorCreationReader.self) { reader.count += 1 } }
        #expect(realm.objects(AccessorCreationReader.self).map(\.count) == (0..<20).map { $0 * 2 + 1 })
    }

    /// While another thread holds the slot of the thread creating accessors, accessors are created through the thread's own
    /// stack, with the same result.
    @Test func accessorsAreCreatedWhileAnotherThreadHoldsTheSlot() throws {
        let realm = try realm()
        try realm.write {
            for id in 0..<30 { realm.add(AccessorCreationItem(value: ["id": id, "name": "n\(id)", "score": 0.5])) }
        }
        let held = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // The slot this (the test's) thread hashes to, taken by another thread.
        let testThread = AccessorCreationSlot.currentThread
        let holder = Thread {
            AccessorCreationSlot.withSlot(of: testThread) { slot, _ in
                // Another thread sharing the slot may be creating an accessor right now: take it once it is free.
                while !slot.acquire(for: AccessorCreationSlot.currentThread) {}
            }
            held.signal()
            done.wait()
            AccessorCreationSlot.withSlot(of: testThread) { slot, _ in slot.release() }
            finished.signal()
        }
        holder.start()
        held.wait()
        var ids: [Int] = []
        for item in realm.objects(AccessorCreationItem.self) {
            #expect(item.realm === realm)
            #expect(item.name == "n\(item.id)" && item.score == 0.5)
            ids.append(item.id)
        }
        done.signal()
        finished.wait()
        #expect(ids == Array(0..<30))
    }

    /// Threads creating accessors at the same time (one holds the slot, the others use their stacks) each read
    /// their own rows.
    @Test func threadsCreatingAccessorsAtOnceReadTheirOwnRows() throws {
        let mismatches = LockedCount()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            do {
                let realm = try realm()
                try realm.write {
                    for id in 0..<300 {
                        realm.add(AccessorCreationItem(value: ["id": id, "name": "t\(thread)-\(id)", "score": 2.0]))
                    }
                }
                for _ in 0..<5 {
                    for item in realm.objects(AccessorCreationItem.self)
                    where item.name != "t\(thread)-\(item.id)" || item.score != 2.0 || item.realm !== realm {
                        mismatches.add()
                    }
                }
            } catch {
                mismatches.add()
            }
        }
        #expect(mismatches.value == 0)
    }
}

/// A counter several threads add to.
private final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
