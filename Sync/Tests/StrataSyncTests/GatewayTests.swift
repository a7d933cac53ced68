import Foundation
import Hummingbird
import PostgresNIO
import ServiceLifecycle
@_spi(StrataSync) import Strata
import Testing

@testable import StrataSync
@testable import StrataSyncGateway

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The HTTP gateway against a real PostgreSQL: a live gateway on a loopback port (port 0, a free one) in this
/// process, devices (``ClientReplica``s through ``GatewaySyncServer``) beside services on PostgreSQL directly.
@Suite struct GatewayTests {
    private static let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self]

    /// The tokens of these tests: a device that may upload only as `b`, a reader, a token of another scope and a
    /// service that may upload as anyone.
    private static let tokens: [String: GatewayGrant] = [
        "device-b": GatewayGrant(read: ["main"], write: ["main"], clientIDs: ["b"]),
        "reader": GatewayGrant(read: ["main"], write: []),
        "elsewhere": GatewayGrant(read: ["other"], write: ["other"]),
        "service": GatewayGrant(read: ["main"], write: ["main"]),
    ]

    /// Runs `body` with a migrated schema of `classes`, a gateway serving it on a loopback port, the gateway's base
    /// URL and a directory for replicas' files.
    private func withGateway(
        _ classes: [ObjectBase.Type] = classes, limits: GatewayLimits = .init(),
        _ body: (TestDatabase, ServerSchema, SyncGateway, URL, ReplicaDirectory) async throws -> Void
    ) async throws {
        try await TestDatabase.with { database in
            let schema = try await database.migratedSchema(classes)
            let gateway = SyncGateway(
                schema: schema, client: database.client, tokens: Self.tokens, limits: limits, logger: database.logger)
            let (ports, port) = AsyncStream.makeStream(of: Int.self)
            let application = gateway.application(host: "127.0.0.1", port: 0) { channel in
                port.yield(channel.localAddress?.port ?? 0)
            }
            // Stopped gracefully, as SIGTERM stops the executable: cancelling a Hummingbird server while a client
            // connects trips a check of NIO's in debug builds.
            let service = ServiceGroup(
                configuration: .init(services: [application], gracefulShutdownSignals: [], logger: database.logger))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                var running = ports.makeAsyncIterator()
                let number = try #require(await running.next())
                let url = try #require(URL(string: "http://127.0.0.1:\(number)"))
                do {
                    try await body(database, schema, gateway, url, try ReplicaDirectory())
                } catch {
                    await service.triggerGracefulShutdown()
                    throw error
                }
                await service.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }

    /// One request to the gateway, outside any client: the answer's status and error body.
    private func send(
        _ method: String, _ url: URL, _ path: String, token: String?, body: Data? = nil
    ) async throws -> (status: Int, error: GatewayWire.ErrorBody?) {
        var request = URLRequest(url: try #require(URL(string: url.absoluteString + "/" + path)))
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = try #require(response as? HTTPURLResponse).statusCode
        return (status, try? GatewayWire.decode(GatewayWire.ErrorBody.self, from: data))
    }

    /// A create of dog `id` named `name` by replica `replica` at wall time `milliseconds`.
    private func dogCreate(_ id: Int64, _ name: String, replica: String, milliseconds: Int64 = 1_764_000_000_000)
        -> StrataSync.ObjectChange
    {
        let at = HybridTimestamp(wallMilliseconds: milliseconds, counter: 0, replica: replica)
        return StrataSync.ObjectChange(
            objectType: "ClientDog", primaryKey: .int(id), created: at,
            properties: [
                "name": .value(.string(name), at: at), "age": .value(.null, at: at), "owner": .value(.null, at: at),
            ])
    }

    @Test func aDeviceThroughTheGatewayConvergesWithAServiceOnPostgreSQL() async throws {
        try await withGateway { database, schema, _, url, directory in
            let a = try ClientReplica("a", in: directory.url, database: database, schema: schema)
            let b = try ClientReplica(
                "b", in: directory.url, database: database, schema: schema, gateway: (url, "device-b"))
            defer { for replica in [a, b] { replica.configuration.stopSyncCapture() } }
            try a.write { realm in
                realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3])
            }
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 2, "name": "Fido", "age": 5]) }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            #expect(try a.dogs() == ["1 Rex 3 -", "2 Fido 5 -"])
            #expect(try b.dogs() == a.dogs())
            // Concurrent edits of one dog: the device's later write wins property by property.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                let rex = try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))
                rex.name = "Max"
                rex.age = 4
            }
            try b.write { realm in
                let rex = try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))
                rex.age = 7
                rex.owner = realm.object(ofType: ClientPerson.self, forPrimaryKey: "Ann")
            }
            try await b.sync.uploadPending()
            try await a.sync.uploadPending()
            for replica in [a, b] { try await replica.sync.downloadPending() }
            #expect(try a.dogs() == ["1 Max 7 Ann", "2 Fido 5 -"])
            #expect(try b.dogs() == a.dogs())
            #expect(try b.queued() == 0)
            let rows = try await database.rows("SELECT id::text, name, age::text, owner FROM \"ClientDog\" ORDER BY id")
            #expect(rows == [["1", "Max", "7", "Ann"], ["2", "Fido", "5", nil]])
        }
    }

    @Test func aRetriedUploadThroughTheGatewayIsAppliedOnce() async throws {
        try await withGateway { database, _, _, url, _ in
            let server = GatewaySyncServer(url: url, token: "device-b")
            let batch = UploadBatch(
                scope: "main", clientID: "b", clientSequence: 1, changes: [dogCreate(9, "Nine", replica: "b")])
            let first = try await server.apply([batch])
            let retry = try await server.apply([batch])
            #expect(first.map(\.wasAlreadyApplied) == [false])
            #expect(retry.map(\.wasAlreadyApplied) == [true])
            #expect(retry.map(\.entry.sequence) == first.map(\.entry.sequence))
            #expect(retry.map(\.entry) == first.map(\.entry))
            let logged = try await database.rows("SELECT count(*)::text FROM strata_change_log")
            #expect(logged == [["1"]])
        }
    }

    @Test func requestsWithoutTheRightTokenAreRefused() async throws {
        var limits = GatewayLimits()
        limits.maximumBodyBytes = 64 << 10
        try await withGateway(limits: limits) { database, schema, _, url, directory in
            let changes = "v1/scopes/main/changes?after=0"
            let uploads = "v1/scopes/main/uploads"
            let batch = { (clientID: String, scope: String) in
                try GatewayWire.encode([
                    UploadBatch(
                        scope: scope, clientID: clientID, clientSequence: 1,
                        changes: [self.dogCreate(1, "Rex", replica: clientID)])
                ])
            }
            var answer = try await send("GET", url, changes, token: nil)
            #expect(answer.status == 401 && answer.error?.code == "unauthorized")
            answer = try await send("GET", url, changes, token: "stolen")
            #expect(answer.status == 401 && answer.error?.code == "unauthorized")
            answer = try await send("GET", url, changes, token: "elsewhere")
            #expect(answer.status == 403 && answer.error?.code == "forbidden")
            answer = try await send("POST", url, uploads, token: "reader", body: try batch("r", "main"))
            #expect(answer.status == 403 && answer.error?.code == "forbidden")
            answer = try await send("POST", url, uploads, token: "device-b", body: try batch("a", "main"))
            #expect(answer.status == 403 && answer.error?.code == "forbidden")
            answer = try await send("POST", url, uploads, token: "device-b", body: Data("{not json".utf8))
            #expect(answer.status == 400 && answer.error?.code == "badRequest")
            answer = try await send("POST", url, uploads, token: "device-b", body: try batch("b", "other"))
            #expect(answer.status == 400 && answer.error?.code == "badRequest")
            answer = try await send("GET", url, "v1/scopes/main/changes?after=soon", token: "reader")
            #expect(answer.status == 400 && answer.error?.code == "badRequest")
            answer = try await send("GET", url, "v1/scopes/no-such-scope!/changes", token: "reader")
            #expect(answer.status == 400)
            answer = try await send(
                "POST", url, uploads, token: "device-b", body: Data(repeating: UInt8(ascii: " "), count: 100 << 10))
            #expect(answer.status == 413 && answer.error?.code == "payloadTooLarge")
            // A batch the merge refuses: the SyncError's case is the code.
            var unknown = dogCreate(1, "Rex", replica: "b")
            unknown.objectType = "Cat"
            answer = try await send(
                "POST", url, uploads, token: "device-b",
                body: try GatewayWire.encode([
                    UploadBatch(scope: "main", clientID: "b", clientSequence: 1, changes: [unknown])
                ]))
            #expect(answer.status == 400 && answer.error?.code == "unknownType")
            // Nothing of it reached PostgreSQL.
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["0"]])
            // A device whose token may only read: its upload fails with a typed error and its queue stays whole.
            let reader = try ClientReplica(
                "r", in: directory.url, database: database, schema: schema, gateway: (url, "reader"))
            defer { reader.configuration.stopSyncCapture() }
            try reader.write { realm in realm.create(ClientDog.self, value: ["id": 5, "name": "Bo"]) }
            do {
                try await reader.sync.uploadPending()
                Issue.record("a read-only token uploaded")
            } catch let error as SyncError {
                guard case .gatewayError(403, "forbidden", _) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
            }
            #expect(try reader.queued() == 1)
        }
    }

    @Test func aLongPollIsWokenByAnotherReplicasUpload() async throws {
        var limits = GatewayLimits()
        // Long enough that a poll not woken by NOTIFY fails the test through its watchdog below.
        limits.maximumWaitSeconds = 3600
        try await withGateway(limits: limits) { database, schema, gateway, url, directory in
            let a = try ClientReplica("a", in: directory.url, database: database, schema: schema)
            defer { a.configuration.stopSyncCapture() }
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            try await a.sync.uploadPending()
            let server = GatewaySyncServer(url: url, token: "reader")
            let before = try await server.changes(scope: "main", after: 0, limit: 0, wait: 0).lastSequence
            #expect(before == 1)
            try await withThrowingTaskGroup(of: GatewayWire.PullResponse?.self) { group in
                group.addTask { try await server.changes(scope: "main", after: before, limit: 10, wait: 3600) }
                group.addTask {
                    try await Task.sleep(for: .seconds(300))  // a watchdog, not a synchronisation
                    return nil
                }
                // The poll waits at the gateway now: the upload below must wake it.
                await gateway.wakeUps.untilWaiting(on: "main")
                try a.write { realm in realm.create(ClientDog.self, value: ["id": 2, "name": "Fido"]) }
                try await a.sync.uploadPending()
                let answer = try #require(try await group.next())
                group.cancelAll()
                let woken = try #require(answer, "the long poll was not woken by the upload")
                #expect(woken.lastSequence == 2)
                #expect(woken.entries.map(\.sequence) == [2])
                #expect(woken.entries.map(\.clientID) == ["a"])
            }
        }
    }

    @Test func aRunningDeviceIsWokenThroughTheGateway() async throws {
        // The device's last long poll is still waiting when the test ends: the gateway's graceful stop waits for it.
        var limits = GatewayLimits()
        limits.maximumWaitSeconds = 2
        try await withGateway(limits: limits) { database, schema, _, url, directory in
            let a = try ClientReplica("a", in: directory.url, database: database, schema: schema)
            let b = try ClientReplica(
                "b", in: directory.url, database: database, schema: schema, gateway: (url, "device-b"))
            defer { for replica in [a, b] { replica.configuration.stopSyncCapture() } }
            // Both run: between wake-ups they only upload, so b applies a's write only when its long poll wakes it.
            let running = [Task { await a.sync.run() }, Task { await b.sync.run() }]
            defer { for task in running { task.cancel() } }
            let waiting = Task {
                let realm = try Realm(configuration: a.configuration)
                for await change in realm.objects(ClientDog.self).changes {
                    switch change {
                    case .initial(let dogs) where dogs.count == 2, .update(let dogs, _, _, _) where dogs.count == 2:
                        return dogs.map(\.name).sorted()
                    default: continue
                    }
                }
                return []
            }
            let watchdog = Task {  // only a guard against a hang if a wake-up is lost
                try? await Task.sleep(for: .seconds(120))
                waiting.cancel()
            }
            defer { watchdog.cancel() }
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            // b answers with a write of its own once it has a's: a sees both only if b was woken and uploaded.
            let seenByB = Task {
                let realm = try Realm(configuration: b.configuration)
                for await change in realm.objects(ClientDog.self).changes {
                    switch change {
                    case .initial(let dogs) where !dogs.isEmpty, .update(let dogs, _, _, _) where !dogs.isEmpty:
                        return dogs[0].name
                    default: continue
                    }
                }
                return ""
            }
            defer { seenByB.cancel() }
            #expect(try await seenByB.value == "Rex")
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 2, "name": "Fido"]) }
            #expect(try await waiting.value == ["Fido", "Rex"])
        }
    }

    @Test func aNewDeviceBootstrapsThroughTheGatewayAfterTheLogWasTrimmed() async throws {
        try await withGateway { database, schema, _, url, directory in
            let a = try ClientReplica("a", in: directory.url, database: database, schema: schema)
            defer { a.configuration.stopSyncCapture() }
            try a.write { realm in
                for id in 1...30 { realm.create(ClientDog.self, value: ["id": id, "name": "dog \(id)", "age": id]) }
            }
            try a.write { realm in
                realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 30)))
            }
            try await a.sync.syncOnce()
            let merge = ServerMerge(schema: schema, client: database.client, logger: database.logger)
            #expect(try await merge.trimLog(scope: "main", through: 2) == 2)
            // Over HTTP, a pull behind the horizon is the same typed error as over PostgreSQL.
            let server = GatewaySyncServer(url: url, token: "reader")
            await #expect(throws: SyncError.historyTrimmed(scope: "main", after: 0, trimmedThrough: 2)) {
                try await server.pull(scope: "main", after: 0, limit: 10)
            }
            // The snapshot in pages of 7: every row, the delete marker included, and the sequence it shows.
            var pages: [Int] = []
            let sequence = try await server.snapshot(scope: "main", pageSize: 7) { pages.append($0.count) }
            #expect(sequence == 2)
            #expect(pages == [7, 7, 7, 7, 2])
            let b = try ClientReplica(
                "b", in: directory.url, database: database, schema: schema, gateway: (url, "device-b"))
            defer { b.configuration.stopSyncCapture() }
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 100, "name": "new", "age": 1]) }
            try await b.sync.syncOnce()
            #expect(try b.dogs().count == 30)
            try await a.sync.syncOnce()
            #expect(try a.dogs() == b.dogs())
        }
    }

    @Test func asymmetricObjectsThroughTheGatewayArriveOnce() async throws {
        let classes: [ObjectBase.Type] = Self.classes + [SyncReading.self, SyncSpot.self]
        try await withGateway(classes) { database, schema, _, url, directory in
            let b = try ClientReplica(
                "b", in: directory.url, database: database, schema: schema, objectTypes: classes,
                gateway: (url, "device-b"))
            defer { b.configuration.stopSyncCapture() }
            try b.write { realm in
                for value in 1...25 {
                    realm.create(
                        SyncReading.self,
                        value: [
                            "sensor": "b", "value": value, "at": Date(timeIntervalSince1970: 1_764_000_000),
                            "tags": ["x", "y"], "counts": ["n": value], "spot": ["lat": 1.5, "lon": -2.25],
                        ])
                }
            }
            #expect(try await b.sync.uploadPending() == 25)
            #expect(
                try await database.rows("SELECT count(*)::text, sum(value)::text FROM \"SyncReading\"") == [
                    ["25", "325"]
                ])
            let spots = try await database.rows("SELECT DISTINCT spot->>'lat', tags::text FROM \"SyncReading\"")
            #expect(spots == [["1.5", "[\"x\", \"y\"]"]])
            // The same objects again (a lost answer): none is inserted twice.
            let server = GatewaySyncServer(url: url, token: "device-b")
            let again = AsymmetricUpload(
                scope: "main", clientID: "b", objectType: "SyncReading",
                objects: (1...25).map { sequence in
                    AsymmetricUpload.Object(
                        clientSequence: Int64(sequence),
                        values: [
                            "sensor": .value(.string("b")), "value": .value(.int(0)), "note": .value(.null),
                            "at": .value(.date(1_764_000_000)), "spot": .value(.null), "tags": .list([]),
                            "counts": .map([:]), "extra": .value(.null),
                        ])
                })
            #expect(try await server.insert(again) == 0)
            #expect(try await database.rows("SELECT count(*)::text FROM \"SyncReading\"") == [["25"]])
            // Another client's objects under this device's token: refused.
            var forged = again
            forged.clientID = "a"
            await #expect(
                throws: SyncError.gatewayError(
                    status: 403, code: "forbidden", message: "the token may not upload as client \"a\"")
            ) {
                try await server.insert(forged)
            }
        }
    }

    @Test func theExecutableServesFromItsEnvironment() async throws {
        try await TestDatabase.with { database in
            let schema = try await database.migratedSchema(Self.classes)
            let directory = try ReplicaDirectory()
            // The schema file: a Strata file the app made with its models.
            let schemaFile = directory.url.appendingPathComponent("schema.strata")
            _ = try Realm(configuration: Realm.Configuration(fileURL: schemaFile, objectTypes: Self.classes))
            let tokensFile = directory.url.appendingPathComponent("tokens.json")
            try Data(#"{"device-b": {"read": ["main"], "write": ["main"], "clientIDs": ["b"]}}"#.utf8).write(
                to: tokensFile)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                .deletingLastPathComponent().appendingPathComponent("strata-sync-gateway")
            var environment = ProcessInfo.processInfo.environment
            environment["STRATA_GATEWAY_SCHEMA"] = schemaFile.path
            environment["STRATA_GATEWAY_TOKENS"] = tokensFile.path
            environment["STRATA_GATEWAY_NAMESPACE"] = database.namespace
            environment["STRATA_GATEWAY_PORT"] = "0"
            environment["LOG_LEVEL"] = "error"
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            defer {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
            }
            // Its first line says where it listens (or it ended: no line, and the test fails). Read on a thread of
            // its own: a blocking read must not hold one of the test run's few cooperative threads.
            let reading = output.fileHandleForReading
            let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
                Thread {
                    var text = ""
                    while !text.contains("\n") {
                        let chunk = reading.availableData
                        if chunk.isEmpty { break }
                        text += String(decoding: chunk, as: UTF8.self)
                    }
                    continuation.resume(returning: text)
                }.start()
            }
            let line = try #require(text.split(separator: "\n").first.map(String.init))
            #expect(line.hasPrefix("listening on 127.0.0.1:"))
            let url = try #require(URL(string: "http://" + line.dropFirst("listening on ".count)))
            let b = try ClientReplica(
                "b", in: directory.url, database: database, schema: schema, gateway: (url, "device-b"))
            defer { b.configuration.stopSyncCapture() }
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 3, "name": "Bo", "age": 2]) }
            #expect(try await b.sync.uploadPending() == 1)
            #expect(try await database.rows("SELECT id::text, name FROM \"ClientDog\"") == [["3", "Bo"]])
            // SIGTERM: a graceful stop.
            process.terminate()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
    }

    @Test func asymmetricValuesRoundTripThroughJSON() throws {
        let value = AsymmetricValue.embedded([
            "a": .value(.double(.infinity)), "b": .list([.value(.int(1)), .map(["k": .value(.string("v"))])]),
        ])
        let text = String(decoding: try GatewayWire.encode(value), as: UTF8.self)
        #expect(
            text
                == #"{"embedded":{"a":{"value":{"double":"Infinity"}},"b":{"list":[{"value":{"int":1}},{"map":{"k":{"value":{"string":"v"}}}}]}}}"#
        )
        #expect(try GatewayWire.decode(AsymmetricValue.self, from: Data(text.utf8)) == value)
        #expect(throws: DecodingError.self) {
            try GatewayWire.decode(AsymmetricValue.self, from: Data(#"{"value":{"int":1},"list":[]}"#.utf8))
        }
    }
}
