import Foundation
import Hummingbird
import NIOCore
import PostgresNIO
import StrataSync

extension SyncGateway {
    /// The gateway's routes (see ``SyncGateway``), each answering its errors with a JSON body.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let gateway = self
        router.post("v1/scopes/:scope/uploads") { request, context in
            await gateway.answer { try await gateway.upload(request, context) }
        }
        router.get("v1/scopes/:scope/changes") { request, context in
            await gateway.answer { try await gateway.changes(request, context) }
        }
        router.get("v1/scopes/:scope/snapshot") { request, context in
            await gateway.answer { try await gateway.snapshot(request, context) }
        }
        router.post("v1/scopes/:scope/asymmetric") { request, context in
            await gateway.answer { try await gateway.insert(request, context) }
        }
        return router
    }

    /// The response of `body`, or the error response of what it threw (logged when it is the gateway's fault).
    private func answer(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            let failure = GatewayFailure(error)
            if failure.status >= 500 {
                logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            return failure.response
        }
    }

    /// `POST uploads`: merges the batches of one client.
    private func upload(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (scope, grant) = try await authorize(request, context, writing: true)
        let batches = try await body([UploadBatch].self, of: request)
        for batch in batches {
            guard batch.scope == scope else {
                throw GatewayFailure.badRequest("a batch of scope \"\(batch.scope)\" sent to the scope \"\(scope)\"")
            }
            guard grant.allows(clientID: batch.clientID) else {
                throw GatewayFailure.forbidden("the token may not upload as client \"\(batch.clientID)\"")
            }
        }
        return try json(try await merge.apply(batches))
    }

    /// `GET changes`: the entries after `after`, waiting up to `wait` seconds for a commit when there are none.
    private func changes(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (scope, _) = try await authorize(request, context, writing: false)
        let after = try query(request, "after", default: Int64(0))
        let limit = min(try query(request, "limit", default: 500), limits.maximumPullLimit)
        let wait = min(try query(request, "wait", default: 0), limits.maximumWaitSeconds)
        guard after >= 0, limit >= 0, wait >= 0 else {
            throw GatewayFailure.badRequest("after, limit and wait must not be negative")
        }
        // The generation before the sequence: a commit after it wakes the wait below, even one that came before the
        // sequence was read. A wake-up without a new entry (the listener starting again) waits on till the deadline.
        let deadline = ContinuousClock.now + .seconds(wait)
        var generation = await wakeUps.generation(of: scope)
        var last = try await lastSequence(scope)
        while last <= after, ContinuousClock.now < deadline, !Task.isCancelled {
            await wakeUps.wait(scope: scope, past: generation, timeout: deadline - ContinuousClock.now)
            generation = await wakeUps.generation(of: scope)
            last = try await lastSequence(scope)
        }
        let entries = limit > 0 ? try await merge.pull(scope: scope, after: after, limit: limit) : []
        return try json(
            GatewayWire.PullResponse(entries: entries, lastSequence: max(last, entries.last?.sequence ?? 0)))
    }

    /// `GET snapshot`: the pages of one consistent snapshot as newline-delimited JSON, streamed as PostgreSQL
    /// returns them; an error after the first line ends the stream with an error line (and no sequence line).
    private func snapshot(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (scope, _) = try await authorize(request, context, writing: false)
        let pageSize = min(try query(request, "pageSize", default: 5000), limits.maximumSnapshotPageSize)
        guard pageSize > 0 else { throw GatewayFailure.badRequest("pageSize must be positive") }
        let merge = merge
        let logger = logger
        let body = ResponseBody { writer in
            do {
                let sequence = try await merge.snapshot(scope: scope, pageSize: pageSize) { page in
                    try await writer.write(Self.line(GatewayWire.SnapshotLine(page: page)))
                }
                try await writer.write(Self.line(GatewayWire.SnapshotLine(sequence: sequence)))
            } catch {
                logger.error("snapshot failed", metadata: ["scope": "\(scope)", "error": "\(error)"])
                let failure = GatewayFailure(error)
                try await writer.write(Self.line(GatewayWire.SnapshotLine(error: failure.body)))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
    }

    /// `POST asymmetric`: inserts the objects of one client.
    private func insert(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (scope, grant) = try await authorize(request, context, writing: true)
        let upload = try await body(AsymmetricUpload.self, of: request)
        guard upload.scope == scope else {
            throw GatewayFailure.badRequest("an upload of scope \"\(upload.scope)\" sent to the scope \"\(scope)\"")
        }
        guard grant.allows(clientID: upload.clientID) else {
            throw GatewayFailure.forbidden("the token may not upload as client \"\(upload.clientID)\"")
        }
        return try json(GatewayWire.InsertResponse(inserted: try await merge.insert(upload)))
    }

    /// The URL's scope and the grant of the request's bearer token, which must allow reading (or `writing`) it.
    ///
    /// - Throws: 401 without a known bearer token, 400 for an invalid scope, 403 for a scope not granted.
    private func authorize(_ request: Request, _ context: BasicRequestContext, writing: Bool) async throws -> (
        String, GatewayGrant
    ) {
        // The scheme's name is case-insensitive (RFC 9110).
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer "),
            case let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces),
            !token.isEmpty
        else { throw GatewayFailure.unauthorized("a bearer token is needed (Authorization: Bearer <token>)") }
        guard let grant = try await grant(token) else { throw GatewayFailure.unauthorized("unknown token") }
        let scope = try context.parameters.require("scope")
        guard Self.isScope(scope) else {
            throw GatewayFailure.badRequest("\"\(scope)\" is not a scope (1–48 letters, digits and underscores)")
        }
        guard (writing ? grant.write : grant.read).contains(scope) else {
            throw GatewayFailure.forbidden("the token may not \(writing ? "write" : "read") the scope \"\(scope)\"")
        }
        return (scope, grant)
    }

    /// Whether `name` is a scope: 1–48 ASCII letters, digits and underscores (it names a NOTIFY channel).
    static func isScope(_ name: String) -> Bool {
        (1...48).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                    || (0x61...0x7A).contains($0)
            }
    }

    /// Query parameter `name` as a `Value`, `fallback` when absent.
    ///
    /// - Throws: 400 when it is there and not a `Value`.
    private func query<Value: LosslessStringConvertible>(_ request: Request, _ name: String, default fallback: Value)
        throws -> Value
    {
        guard let text = request.uri.queryParameters[Substring(name)] else { return fallback }
        guard let value = Value(String(text)) else {
            throw GatewayFailure.badRequest("the query parameter \(name) is not a number: \"\(text)\"")
        }
        return value
    }

    /// The request's JSON body as a `Value`.
    ///
    /// - Throws: 413 over ``GatewayLimits/maximumBodyBytes``, 400 when it is not a `Value` in JSON.
    private func body<Value: Decodable>(_ type: Value.Type, of request: Request) async throws -> Value {
        let buffer = try await request.body.collect(upTo: limits.maximumBodyBytes)
        do {
            return try GatewayWire.decode(type, from: Data(buffer.readableBytesView))
        } catch {
            throw GatewayFailure.badRequest("the body is not a valid \(Value.self) in JSON: \(error)")
        }
    }

    /// A 200 answer holding `value` as JSON.
    private func json<Value: Encodable>(_ value: Value) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try GatewayWire.encode(value))))
    }

    /// `value` as one line of newline-delimited JSON.
    private static func line<Value: Encodable>(_ value: Value) throws -> ByteBuffer {
        var data = try GatewayWire.encode(value)
        data.append(UInt8(ascii: "\n"))
        return ByteBuffer(bytes: data)
    }

    /// The last sequence of `scope`'s log (0 before its first entry).
    private func lastSequence(_ scope: String) async throws -> Int64 {
        let namespace = "\"" + merge.schema.namespace.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let rows = try await client.query(
            "SELECT last_seq FROM \(unescaped: namespace).strata_scope WHERE scope = \(scope)", logger: logger)
        return try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0
    }
}
