import Foundation
import Logging
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``SyncServer`` reached over HTTP: a Strata Sync gateway (`StrataSyncGateway`), for clients that must not
/// hold PostgreSQL's credentials (devices). Every request carries `Authorization: Bearer <token>`; the gateway
/// maps the token to the scopes it may read and write.
///
/// Wake-ups are long polls: `GET …/changes?after=<known>&limit=0&wait=<seconds>` returns as soon as the scope's
/// last sequence passes what the client knew (the gateway LISTENs for it), or after ``longPollSeconds``.
///
/// Errors: the gateway's refusals become ``SyncError/gatewayError(status:code:message:)``, a trimmed history
/// ``SyncError/historyTrimmed(scope:after:trimmedThrough:)`` as over PostgreSQL; network failures are
/// URLSession's errors.
public struct GatewaySyncServer: SyncServer {
    /// The gateway's base URL (its routes are under `v1/`).
    public let url: URL
    /// How long one wake-up poll waits at the gateway for a commit (the gateway may cap it).
    public let longPollSeconds: Int
    private let token: String
    private let session: URLSession
    private let logger: Logger

    /// A client of the gateway at `url` that authenticates with bearer token `token`; wake-up polls wait up to
    /// `longPollSeconds` at the gateway.
    public init(url: URL, token: String, longPollSeconds: Int = 25, logger: Logger = Logger(label: "strata-sync")) {
        self.url = url
        self.token = token
        self.longPollSeconds = max(1, longPollSeconds)
        self.logger = logger
        let configuration = URLSessionConfiguration.ephemeral
        // A long poll is idle for up to longPollSeconds: a request fails only well after that.
        configuration.timeoutIntervalForRequest = TimeInterval(self.longPollSeconds + 30)
        session = URLSession(configuration: configuration)
    }

    /// Sends `batches` to `POST v1/scopes/<scope>/uploads`.
    public func apply(_ batches: [UploadBatch]) async throws -> [UploadResult] {
        guard let scope = batches.first?.scope else { return [] }
        let data = try await send("POST", scope: scope, route: "uploads", body: try GatewayWire.encode(batches))
        return try decode([UploadResult].self, from: data)
    }

    /// Reads `GET v1/scopes/<scope>/changes?after=<after>&limit=<limit>` (no waiting).
    public func pull(scope: String, after: Int64, limit: Int) async throws -> [ChangeLogEntry] {
        try await changes(scope: scope, after: after, limit: limit, wait: 0).entries
    }

    /// Reads `GET v1/scopes/<scope>/snapshot?pageSize=<pageSize>`, newline-delimited JSON pages ending with the
    /// snapshot's sequence, and hands each page to `body`. The answer is read whole before the first page is
    /// handed over (URLSession on Linux offers no streamed body here), so a client's memory holds the whole
    /// snapshot's JSON for a moment.
    ///
    /// - Throws: ``SyncError/gatewayError(status:code:message:)`` with code `badResponse` for an answer without
    ///   its final line (nothing of it was handed to `body` then), or the error the gateway reported.
    public func snapshot(scope: String, pageSize: Int, _ body: ([ObjectChange]) async throws -> Void) async throws
        -> Int64
    {
        let data = try await send(
            "GET", scope: scope, route: "snapshot", query: [URLQueryItem(name: "pageSize", value: String(pageSize))])
        var pages: [[ObjectChange]] = []
        var sequence: Int64?
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            let decoded = try decode(GatewayWire.SnapshotLine.self, from: Data(line))
            if let error = decoded.error { throw error.syncError(status: 200) }
            if let page = decoded.page { pages.append(page) }
            if let last = decoded.sequence { sequence = last }
        }
        guard let sequence else {
            throw SyncError.gatewayError(status: 200, code: "badResponse", message: "the snapshot ended early")
        }
        for page in pages { try await body(page) }
        return sequence
    }

    /// Sends `upload` to `POST v1/scopes/<scope>/asymmetric`.
    public func insert(_ upload: AsymmetricUpload) async throws -> Int {
        let data = try await send(
            "POST", scope: upload.scope, route: "asymmetric", body: try GatewayWire.encode(upload))
        return try decode(GatewayWire.InsertResponse.self, from: data).inserted
    }

    /// Long polls of `GET v1/scopes/<scope>/changes?limit=0`: one wake-up at the start, then one each time the
    /// scope's last sequence passes the one known before. A failed poll is logged and tried again a second later.
    public func wakeUps(scope: String) -> AsyncStream<Void> {
        let server = self
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { wake in
            let poller = Task {
                var known: Int64?
                while !Task.isCancelled {
                    do {
                        let answer = try await server.changes(
                            scope: scope, after: known ?? 0, limit: 0, wait: known == nil ? 0 : server.longPollSeconds)
                        if known.map({ answer.lastSequence > $0 }) ?? true { wake.yield() }
                        known = max(known ?? 0, answer.lastSequence)
                    } catch {
                        if Task.isCancelled { break }
                        server.logger.warning("wake-up poll failed; retrying", metadata: ["error": "\(error)"])
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                wake.finish()
            }
            wake.onTermination = { _ in poller.cancel() }
        }
    }

    /// One `GET …/changes`: at most `limit` entries after `after`, waiting up to `wait` seconds at the gateway
    /// when there are none.
    func changes(scope: String, after: Int64, limit: Int, wait: Int) async throws -> GatewayWire.PullResponse {
        let data = try await send(
            "GET", scope: scope, route: "changes",
            query: [
                URLQueryItem(name: "after", value: String(after)), URLQueryItem(name: "limit", value: String(limit)),
                URLQueryItem(name: "wait", value: String(wait)),
            ])
        return try decode(GatewayWire.PullResponse.self, from: data)
    }

    /// Sends one request to route `route` of `scope`; returns the body of a 2xx answer, or throws the error the
    /// answer's body names.
    private func send(
        _ method: String, scope: String, route: String, query: [URLQueryItem] = [], body: Data? = nil
    ) async throws -> Data {
        guard
            var components = URLComponents(
                url: url.appendingPathComponent(GatewayWire.scopePath(scope)).appendingPathComponent(route),
                resolvingAgainstBaseURL: false)
        else { throw SyncError.invalidName(url.absoluteString, reason: "not a gateway URL") }
        if !query.isEmpty { components.queryItems = query }
        guard let requestURL = components.url else {
            throw SyncError.invalidName(url.absoluteString, reason: "not a gateway URL")
        }
        var request = URLRequest(url: requestURL)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await load(request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if (200..<300).contains(status) { return data }
        guard let error = try? GatewayWire.decode(GatewayWire.ErrorBody.self, from: data) else {
            throw SyncError.gatewayError(
                status: status, code: "badResponse",
                message: "HTTP \(status) without an error body: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        throw error.syncError(status: status)
    }

    /// The answer to `request`. The URLSession task is never cancelled: swift-corelibs-foundation can crash when a
    /// task is cancelled as it completes ("a task that is not in the registry"), which cancelling an async
    /// `data(for:)` does whenever a wake-up poll's task is cancelled. A cancelled caller stops waiting at once
    /// (CancellationError); the request ends on its own (a long poll within ``longPollSeconds``).
    private func load(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let answer = OneAnswer()
        let session = session
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard answer.wait(continuation) else { return }
                session.dataTask(with: request) { data, response, error in
                    if let data, let response {
                        answer.resume(.success((data, response)))
                    } else {
                        answer.resume(.failure(error ?? URLError(.badServerResponse)))
                    }
                }.resume()
            }
        } onCancel: {
            answer.resume(.failure(CancellationError()))
        }
    }

    /// `Value` decoded from a 2xx answer; an answer that is not one is ``SyncError/gatewayError(status:code:message:)``
    /// `badResponse`.
    private func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        do {
            return try GatewayWire.decode(type, from: data)
        } catch {
            throw SyncError.gatewayError(status: 200, code: "badResponse", message: "unreadable answer: \(error)")
        }
    }
}

/// The continuation of one request, resumed once: by the request's answer or by the caller's cancellation,
/// whichever comes first.
private final class OneAnswer: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<(Data, URLResponse), any Error>)
        case done
    }

    private let state = Mutex(State.idle)

    /// Keeps `continuation` until ``resume(_:)``; false (and `continuation` resumed with CancellationError) when
    /// the caller was cancelled already.
    func wait(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            guard case .idle = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Resumes the waiting caller with `result`, unless it was resumed before.
    func resume(_ result: Result<(Data, URLResponse), any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<(Data, URLResponse), any Error>? in
            defer { state = .done }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume(with: result)
    }
}
