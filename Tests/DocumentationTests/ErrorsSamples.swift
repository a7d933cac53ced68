import Foundation
import Strata
import Testing

// Documentation/Errors.md: catching a storage failure by its cause, and a cancelled request's write.

enum ErrorsSample {
    final class Order: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var item = ""
    }

    /// What the samples' `log` wrote.
    nonisolated(unsafe) static var logged: [String] = []
    static func log(_ line: String) { logged.append(line) }

    static func save(_ order: Order, in realm: Realm) throws {
        do {
            try realm.write { realm.add(order) }
        } catch Realm.Error.diskFull(let path) {
            log("no space left for \(path): free some, then retry")
        } catch Realm.Error.ioError(let path, let operation, let code) {
            log("\(operation) failed on \(path) with errno \(code)")
        } catch Realm.Error.primaryKeyExists(let type, let value) {
            log("\(type) \(value) exists already")
        }
    }

    actor Orders {
        private var realm: Realm?

        func open(_ configuration: Realm.Configuration) async throws {
            realm = try await Realm(configuration: configuration, actor: self)
        }

        func count() -> Int { realm?.objects(Order.self).count ?? 0 }

        func place(id: Int, item: String) async throws {
            guard let realm else { return }
            try await realm.asyncWrite {
                realm.add(Order(value: ["id": id, "item": item]))
            }
        }
    }

    static func handleRequest(_ orders: Orders) async throws {
        do {
            try await orders.place(id: 7, item: "tea")
        } catch is CancellationError {
            // The client went away before the write started: nothing was written.
            log("request cancelled")
        }
    }
}

@Suite("Errors.md samples", .serialized)
struct ErrorsSampleTests {
    @Test func catchingAFailureByItsCause() throws {
        ErrorsSample.logged = []
        let realm = try Realm(configuration: inMemoryConfiguration("errors", objectTypes: [ErrorsSample.Order.self]))
        try ErrorsSample.save(ErrorsSample.Order(value: ["id": 1, "item": "tea"]), in: realm)
        try ErrorsSample.save(ErrorsSample.Order(value: ["id": 1, "item": "coffee"]), in: realm)
        #expect(ErrorsSample.logged == ["Order 1 exists already"])
        #expect(realm.objects(ErrorsSample.Order.self).map(\.item) == ["tea"])
    }

    @Test func aCancelledRequestWritesNothing() async throws {
        ErrorsSample.logged = []
        let orders = ErrorsSample.Orders()
        try await orders.open(inMemoryConfiguration("errors-cancel", objectTypes: [ErrorsSample.Order.self]))
        let request = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await ErrorsSample.handleRequest(orders)
        }
        try await request.value
        #expect(ErrorsSample.logged == ["request cancelled"])
        #expect(await orders.count() == 0)
    }

    @Test func errorsReadWellInLogs() throws {
        let error: any Error = Realm.Error.diskFull(path: "/data/orders.strata")
        #expect(String(describing: type(of: error)) == "RealmError")
        #expect(
            error.localizedDescription
                == "no space left on the device holding /data/orders.strata: what needed the space was rolled back")
    }
}
