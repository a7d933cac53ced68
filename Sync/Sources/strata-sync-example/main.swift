// strata-sync-example: two services that share data through PostgreSQL with Strata Sync.
//
//     source .ci/postgres.sh                     # or point PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE at a server
//     swift run --package-path Sync strata-sync-example
//
// "orders" places orders in its own Strata file. "shipping", another service with a file of its own, watches for
// placed orders (`for await` on a Results' changes), ships them and writes that back; "orders" watches its file and
// sees its orders shipped. Neither talks to the other: each file syncs one scope through PostgreSQL, where any
// program can read the orders with plain SQL. The example checks that both files and PostgreSQL end equal and exits
// 0 (1 if not). It works in a PostgreSQL schema of its own, dropped at the end.
import Foundation
import Logging
import PostgresNIO
import Strata
import StrataSync

/// The shared data: synced types need a primary key.
final class Order: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted var item: String
    @Persisted var quantity: Int
    @Persisted var status = "placed"
}

/// The orders service: places `orders`, then waits until it sees each one shipped.
actor OrdersService {
    func run(_ configuration: Realm.Configuration, orders: [(item: String, quantity: Int)]) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        try await realm.asyncWrite {
            for (number, order) in orders.enumerated() {
                realm.create(
                    Order.self, value: ["id": "order-\(number + 1)", "item": order.item, "quantity": order.quantity])
                print("orders:   placed order-\(number + 1) (\(order.quantity) × \(order.item))")
            }
        }
        var seen = Set<String>()
        for await change in realm.objects(Order.self).where({ $0.status == "shipped" }).changes {
            let shipped = try change.results
            for order in shipped where seen.insert(order.id).inserted { print("orders:   sees \(order.id) shipped") }
            if seen.count == orders.count { return }
        }
    }
}

/// The shipping service: ships every placed order it sees, until it has shipped `count`.
actor ShippingService {
    func run(_ configuration: Realm.Configuration, count: Int) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        var shipped = 0
        for await change in realm.objects(Order.self).where({ $0.status == "placed" }).changes {
            let orders = Array(try change.results)
            if orders.isEmpty { continue }
            try await realm.asyncWrite {
                for order in orders {
                    print("shipping: sees \(order.id) (\(order.quantity) × \(order.item)), ships it")
                    order.status = "shipped"
                }
            }
            shipped += orders.count
            if shipped >= count { return }
        }
    }
}

extension RealmCollectionChange {
    /// The collection as it stands after the change (the first one included).
    var results: CollectionType {
        get throws {
            switch self {
            case .initial(let results), .update(let results, _, _, _): return results
            case .error(let error): throw error
            }
        }
    }
}

/// The orders of `configuration`'s file as `id item quantity status` lines.
func orderLines(_ configuration: Realm.Configuration) throws -> [String] {
    try Realm(configuration: configuration).objects(Order.self).map {
        "\($0.id) \($0.item) \($0.quantity) \($0.status)"
    }
    .sorted()
}

var logger = Logger(label: "strata-sync-example")
logger.logLevel = .error
let postgres = PostgresClient(configuration: PostgresEnvironment.clientConfiguration(), backgroundLogger: logger)
let postgresTask = Task { await postgres.run() }
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sync-example-\(UUID())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let namespace = "strata_example_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()

// A watchdog: without a server (or if the services never finished) the example fails instead of waiting forever.
Task.detached {
    try await Task.sleep(for: .seconds(60))
    print("strata-sync-example failed: no result within 60 s (does the server of the PG* variables answer?)")
    exit(1)
}

var failure: String?
do {
    // The tables (one per synced type), the change log and the capture triggers: created once, idempotent.
    let schema = try ServerSchema(namespace: namespace, classes: [Order.self])
    try await schema.migrate(postgres, logger: logger)
    // Each service: its own file, its own SyncClient (a unique, stable client id per file), syncing in a task.
    var services: [(configuration: Realm.Configuration, sync: SyncClient)] = []
    for name in ["orders", "shipping"] {
        let configuration = Realm.Configuration(
            fileURL: directory.appendingPathComponent("\(name).strata"), objectTypes: [Order.self])
        let sync = try SyncClient(
            configuration: configuration, schema: schema, client: postgres, scope: "shop", clientID: name,
            logger: logger)
        services.append((configuration, sync))
    }
    let syncing = services.map { service in Task { await service.sync.run() } }
    let orders = [(item: "coffee", quantity: 2), (item: "tea", quantity: 1), (item: "mugs", quantity: 6)]
    let (ordersFile, shippingFile) = (services[0].configuration, services[1].configuration)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await ShippingService().run(shippingFile, count: orders.count) }
        group.addTask { try await OrdersService().run(ordersFile, orders: orders) }
        try await group.waitForAll()
    }
    for task in syncing { task.cancel() }
    for service in services { try await service.sync.syncOnce() }

    // Both files and PostgreSQL must hold the same orders, every one shipped.
    let files = try services.map { try orderLines($0.configuration) }
    let rows = try await postgres.query(
        PostgresQuery(
            unsafeSQL: """
                SELECT id, item, quantity, status FROM "\(namespace)"."Order"
                WHERE _strata_scope = 'shop' AND NOT _strata_deleted ORDER BY id
                """), logger: logger)
    var table: [String] = []
    for try await (id, item, quantity, status) in rows.decode((String, String, Int, String).self) {
        table.append("\(id) \(item) \(quantity) \(status)")
    }
    print("postgres: \(table.joined(separator: "; "))")
    if files[0] != files[1] || files[0] != table.sorted() || table.count != orders.count
        || !table.allSatisfy({ $0.hasSuffix(" shipped") })
    {
        failure = "not converged: orders \(files[0]), shipping \(files[1]), postgres \(table)"
    }
} catch {
    failure = "\(error)"
}
_ = try? await postgres.query(
    PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(namespace)\" CASCADE"), logger: logger)
postgresTask.cancel()
try? FileManager.default.removeItem(at: directory)
if let failure {
    print("strata-sync-example failed: \(failure)")
    exit(1)
}
print("converged: both services and PostgreSQL hold the same shipped orders")
