import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle
import Strata
import StrataSync
import StrataSyncGateway

/// The `gateway` rows: (1) again, with replica B a device behind the HTTP gateway — a `SyncGateway` on a loopback
/// port in this process, B's client woken by its long polls — and A a service on PostgreSQL: each of `writes`
/// writes on A (after 10 to warm up) is made after B's observer saw the one before, and timed from the start of
/// A's write transaction to B's observer.
func measureGatewayLatency(
    writes: Int, postgres: PostgresClient, namespace: String, directory: URL, logger: Logger
) async throws -> [(String, String, String)] {
    let schema = try ServerSchema(namespace: namespace, classes: [BenchItem.self, BenchReading.self])
    try await schema.migrate(postgres, logger: logger)
    let gateway = SyncGateway(
        schema: schema, client: postgres,
        tokens: ["bench-token": GatewayGrant(read: ["bench"], write: ["bench"], clientIDs: ["bench-b"])],
        logger: logger)
    let (ports, port) = AsyncStream.makeStream(of: Int.self)
    let application = gateway.application(host: "127.0.0.1", port: 0) { channel in
        port.yield(channel.localAddress?.port ?? 0)
    }
    // Stopped gracefully at the end, as SIGTERM stops the executable (after a failure the benchmark exits anyway).
    let service = ServiceGroup(
        configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
    let serving = Task { try await service.run() }
    var running = ports.makeAsyncIterator()
    guard let number = await running.next(), let url = URL(string: "http://127.0.0.1:\(number)") else {
        throw CancellationError()
    }
    func configuration(_ name: String) -> Realm.Configuration {
        Realm.Configuration(
            fileURL: directory.appendingPathComponent("\(name).strata"),
            objectTypes: [BenchItem.self, BenchReading.self])
    }
    let (a, b) = (configuration("gateway-a"), configuration("gateway-b"))
    let syncA = try SyncClient(
        configuration: a, schema: schema, client: postgres, scope: "bench", clientID: "bench-a", logger: logger)
    let syncB = try SyncClient(
        configuration: b, schema: schema, gateway: url, token: "bench-token", scope: "bench", clientID: "bench-b",
        logger: logger)
    let latencies = try await measureWriteToObserverLatency(writes: writes, a: a, b: b, syncA: syncA, syncB: syncB)
    await syncA.stop()
    await syncB.stop()
    await service.triggerGracefulShutdown()
    _ = await serving.result
    return [
        (
            "write on A → observer fired on B through the gateway, p50", "\(format(quantile(latencies, 0.5))) ms",
            "< 50 ms"
        ),
        (
            "write on A → observer fired on B through the gateway, p99", "\(format(quantile(latencies, 0.99))) ms",
            "< 250 ms"
        ),
        (
            "write on A → observer fired on B through the gateway, min / max",
            "\(format(latencies.first!)) / \(format(latencies.last!)) ms", ""
        ),
    ]
}
