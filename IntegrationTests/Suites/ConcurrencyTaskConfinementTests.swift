import Foundation
import Strata
import StrataTestSupport
import Testing

/// An account of the task-confinement bank.
final class TaskBankAccount: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = 0
}

/// One row per transfer made, so that every transfer is counted exactly once.
final class TaskBankTransfer: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var amount = 0
}

/// Realms confined to Swift concurrency rather than threads: a program whose entry point is `async` keeps its
/// main-actor Realm across awaits (on Linux the main actor leaves the main thread), and tasks of nonisolated async
/// code each use their own Realm across any number of awaits. (The CI runs this suite under ThreadSanitizer.)
@Suite("Concurrency: task and main-actor confinement")
struct ConcurrencyTaskConfinementTests {
    static let accounts = 32
    static let initialBalance = 1_000

    /// `strata-async-main`, beside the integration child.
    static let asyncMainExecutable = childExecutable.deletingLastPathComponent().appendingPathComponent(
        "strata-async-main")

    /// An `async` main opens a Realm on the main actor, awaits, writes, awaits, observes another task's commit and
    /// exits 0 (it trapped "used outside the thread or actor it is confined to" when Realms were confined to the
    /// main thread).
    @Test func anAsyncMainKeepsItsRealmAcrossAwaits() throws {
        let directory = TemporaryDirectory()
        let process = Process()
        process.executableURL = Self.asyncMainExecutable
        process.arguments = [directory.file("tickets.strata")]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = printed.split(separator: "\n").map(String.init)
        #expect(process.terminationStatus == 0, "stderr: \(errorText)")
        #expect(lines.first == "opened")
        #expect(lines.contains("wrote 1"))
        #expect(lines.contains("same instance: true"))
        #expect(lines.contains("initial 1"))
        #expect(lines.contains("update 2 inserted [1]"))
        #expect(lines.last == "done")
        #expect(!errorText.contains("used outside"))
    }

    /// A thousand concurrent tasks, each with its own task-confined Realm, make read-modify-write transfers with
    /// `asyncWrite`, reading and checking their Realm between awaits. The total balance never changes, and every
    /// transfer is counted exactly once.
    @Test func aThousandTasksEachWithItsOwnRealmKeepTheBankInvariant() async throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "task-bank-\(UInt64.random(in: 0...UInt64.max))",
            objectTypes: [TaskBankAccount.self, TaskBankTransfer.self])
        // Keeps the in-memory file alive between the tasks' Realms.
        let keeper = try Realm(configuration: configuration)
        try keeper.write {
            for id in 0..<Self.accounts {
                keeper.create(TaskBankAccount.self, value: ["id": id, "balance": Self.initialBalance])
            }
        }
        let tasks = soak ? 10_000 : 1_000
        let transfersPerTask = 3
        let expectedTotal = Self.accounts * Self.initialBalance
        // How many times a task's Realm read a total other than the expected one.
        let brokenTotals = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var broken = 0
                    let realm = try Realm(configuration: configuration)  // confined to this child task
                    var generator = SystemRandomNumberGenerator()
                    for transfer in 0..<transfersPerTask {
                        let from = Int.random(in: 0..<Self.accounts, using: &generator)
                        let to = (from + Int.random(in: 1..<Self.accounts, using: &generator)) % Self.accounts
                        try await realm.asyncWrite {
                            let source = realm.object(ofType: TaskBankAccount.self, forPrimaryKey: from)!
                            let target = realm.object(ofType: TaskBankAccount.self, forPrimaryKey: to)!
                            let amount = min(source.balance, Int.random(in: 1...50, using: &generator))
                            source.balance -= amount
                            target.balance += amount
                            realm.create(
                                TaskBankTransfer.self, value: ["id": "\(task)-\(transfer)", "amount": amount])
                        }
                        await Task.yield()
                        // Still this task's Realm after the awaits: a consistent version.
                        let total = realm.objects(TaskBankAccount.self).sum(of: \.balance)
                        if total != expectedTotal { broken += 1 }
                        #expect(try Realm(configuration: configuration) === realm)
                    }
                    return broken
                }
            }
            return try await group.reduce(0, +)
        }
        keeper.refresh()
        #expect(brokenTotals == 0)
        #expect(keeper.objects(TaskBankAccount.self).sum(of: \.balance) == expectedTotal)
        #expect(keeper.objects(TaskBankTransfer.self).count == tasks * transfersPerTask)
    }

    /// A task's Realm is released with the task: the instance cache holds it weakly.
    @Test func aTasksRealmIsReleasedWithItsTask() async throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "task-release-\(UInt64.random(in: 0...UInt64.max))",
            objectTypes: [TaskBankAccount.self])
        let released = try await Task.detached {
            let realm = try Realm(configuration: configuration)
            try await realm.asyncWrite { realm.create(TaskBankAccount.self, value: ["id": 1]) }
            return WeakRealm(realm)
        }.value
        #expect(released.realm == nil)
        // Nothing holds the in-memory file any more: its data went with the last Realm.
        #expect(throws: Never.self) { try Realm.deleteFiles(for: configuration) }
    }

    /// Child tasks get their own Realm (not the parent task's), and the parent keeps using its own across awaits.
    @Test func childTasksGetTheirOwnRealms() async throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "task-children-\(UInt64.random(in: 0...UInt64.max))",
            objectTypes: [TaskBankAccount.self])
        let parent = try Realm(configuration: configuration)
        let parentID = ObjectIdentifier(parent)
        try await parent.asyncWrite { parent.create(TaskBankAccount.self, value: ["id": 0]) }
        let childIDs = try await withThrowingTaskGroup(of: [ObjectIdentifier].self) { group in
            for id in 1...4 {
                group.addTask {
                    let child = try Realm(configuration: configuration)
                    try await child.asyncWrite { child.create(TaskBankAccount.self, value: ["id": id]) }
                    // Alive until the group finished collecting: identities cannot be reused meanwhile.
                    return [ObjectIdentifier(child)] + [ObjectIdentifier(try Realm(configuration: configuration))]
                }
            }
            var all: [[ObjectIdentifier]] = []
            for try await ids in group { all.append(ids) }
            return all
        }
        for ids in childIDs {
            #expect(ids[0] == ids[1])
            #expect(ids[0] != parentID)
        }
        parent.refresh()
        #expect(parent.objects(TaskBankAccount.self).count == 5)
        #expect(try Realm(configuration: configuration) === parent)
    }
}

/// A weak reference to a Realm, carried out of its task to check that it was released.
struct WeakRealm: @unchecked Sendable {
    weak var realm: Realm?
    init(_ realm: Realm) { self.realm = realm }
}
