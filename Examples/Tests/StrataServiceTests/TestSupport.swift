import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Strata
import StrataService
import Testing

// Shared by the suites: a fresh file per test, the application over it, and JSON in and out.

/// A new directory for one test's files, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

let testLogger: Logging.Logger = {
    var logger = Logging.Logger(label: "strata-examples-tests")
    logger.logLevel = .warning
    return logger
}()

/// The backends the routes run on.
enum Backend: String, CaseIterable, Sendable {
    case strata, grdb

    func open(in directory: TemporaryDirectory) async throws -> any LibraryRepository {
        switch self {
        case .strata:
            try await StrataLibrary.open(
                configuration: strataConfiguration(path: directory.path("library.strata"), logger: testLogger),
                logger: testLogger)
        case .grdb: try GRDBLibrary(path: directory.path("library.sqlite"), logger: testLogger)
        }
    }
}

/// Runs `body` with the application over a new library of `backend`, through `setup` (`.router` calls the
/// router directly, `.live` runs the server on a free port), then closes the library and removes the files.
func withLibraryApplication(
    _ backend: Backend = .strata, _ setup: TestingSetup = .router,
    _ body: @escaping @Sendable (any LibraryRepository, any TestClientProtocol) async throws -> Void
) async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let library = try await backend.open(in: directory)
    let application = makeApplication(library: library, port: 0, logger: testLogger)
    do {
        try await application.test(setup) { client in try await body(library, client) }
    } catch {
        await library.close()
        throw error
    }
    await library.close()
}

extension TestClientProtocol {
    /// Sends `value` as JSON to `uri` with `method`.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String, json value: some Encodable) async throws -> TestResponse {
        try await execute(
            uri: uri, method: method, headers: [.contentType: "application/json"],
            body: ByteBuffer(bytes: try JSONEncoder().encode(value)))
    }

    /// Sends a request with no body.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String) async throws -> TestResponse {
        try await execute(uri: uri, method: method)
    }

    /// Adds an author and a few books for the tests to read.
    func addShelf() async throws {
        #expect(
            try await send(.post, "/authors", json: NewAuthor(id: "le-guin", name: "Ursula K. Le Guin")).status
                == .created)
        #expect(
            try await send(.post, "/authors", json: NewAuthor(id: "herbert", name: "Frank Herbert")).status == .created)
        let books = [
            NewBook(id: "earthsea", title: "A Wizard of Earthsea", year: 1968, authorID: "le-guin"),
            NewBook(id: "dispossessed", title: "The Dispossessed", year: 1974, authorID: "le-guin"),
            NewBook(id: "left-hand", title: "The Left Hand of Darkness", year: 1969, authorID: "le-guin"),
            NewBook(id: "dune", title: "Dune", year: 1965, authorID: "herbert"),
        ]
        for book in books { #expect(try await send(.post, "/books", json: book).status == .created) }
    }
}

extension TestResponse {
    /// The body decoded from JSON.
    func decoded<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(String(buffer: body).utf8))
    }

    /// The `error` of an error response.
    var errorMessage: String? { (try? decoded([String: String].self))?["error"] }
}
