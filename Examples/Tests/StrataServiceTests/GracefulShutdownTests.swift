import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import ServiceLifecycle
import Strata
import StrataService
import StrataStorage
import Synchronization
import Testing

/// A graceful shutdown in the middle of a load: the server stops taking requests, the writes in flight finish,
/// the library closes its file, and the file then holds every write a client got a 201 for and verifies clean.
@Suite struct GracefulShutdownTests {
    /// The ids the server acknowledged (201), and a count to trigger the shutdown at.
    final class Acknowledgements: Sendable {
        private let ids = Mutex<Set<String>>([])
        func add(_ id: String) -> Int {
            ids.withLock {
                $0.insert(id)
                return $0.count
            }
        }
        var all: Set<String> { ids.withLock { $0 } }
    }

    @Test func shutdownDuringWritesKeepsEveryAcknowledgedWriteAndClosesTheFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("library.strata")
        let library = try await StrataLibrary.open(
            configuration: strataConfiguration(path: path, logger: testLogger), logger: testLogger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = makeApplication(
            library: library, port: 0, logger: testLogger, onServerRunning: { portContinuation.yield($0) })
        let group = makeServiceGroup(library: library, application: application, signals: [], logger: testLogger)

        let writers = 8
        let shutdownAfter = 60
        let acknowledged = Acknowledgements()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var portIterator = ports.makeAsyncIterator()
            let port = try #require(await portIterator.next())
            try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                let author = try await client.post(
                    "/authors", headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"id": "load", "name": "Load"}"#))
                #expect(author.status == .created)
            }
            for writer in 0..<writers {
                tasks.addTask {
                    // Each writer creates books on its own connection until the server stops answering; the
                    // shutdown starts when `shutdownAfter` creates were acknowledged, with the others in flight.
                    try? await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                        for number in 0..<10_000 {
                            let id = "w\(writer)-\(number)"
                            let body =
                                #"{"id": "\#(id)", "title": "Book \#(number)", "year": 2000, "authorID": "load"}"#
                            let response = try await client.post(
                                "/books", headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
                            guard response.status == .created else { return }
                            if acknowledged.add(id) == shutdownAfter { await group.triggerGracefulShutdown() }
                        }
                    }
                }
            }
            try await tasks.waitForAll()
        }

        #expect(await library.isClosed)
        let expected = acknowledged.all
        #expect(expected.count >= shutdownAfter)

        // The file: nothing to recover, every page checks out, and no reader of this process is left (the
        // server's Realm was released, not just forgotten).
        let store = try Store.open(path: path)
        #expect(store.recovery == nil)
        let report = try store.verify(rowTrees: { $0.hasPrefix("o:") })
        #expect(report.isValid, "\(report)")
        #expect(store.pinnedVersionCount == 0)
        store.close()

        // Every acknowledged book is there, and in its author's list (the create and the append were one write).
        let (books, listed) = try storedBooks(path)
        #expect(expected.isSubset(of: books))
        #expect(listed == books)
    }

    @Test func closeReturnsOnlyAfterTheWritesInProgressFinished() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("library.strata")
        let library = try await StrataLibrary.open(
            configuration: strataConfiguration(path: path, logger: testLogger), logger: testLogger)
        _ = try await library.createAuthor(NewAuthor(id: "a", name: "A"))
        _ = try await library.createBook(NewBook(id: "b", title: "B", year: 2000, authorID: "a"))
        // Likes wait for the write lock inside `asyncWrite`, giving the actor up: the close arrives among them.
        enum Outcome: Sendable {
            case liked
            case refused(LibraryError)
            case closed(likesInFile: Int)
        }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for number in 0..<40 {
                group.addTask {
                    if number == 20 {
                        await library.close()
                        return .closed(likesInFile: (try? likes(path)) ?? -1)
                    }
                    do {
                        _ = try await library.likeBook(id: "b")
                        return .liked
                    } catch {
                        return .refused(LibraryError.from(error))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let liked = outcomes.filter { if case .liked = $0 { true } else { false } }.count
        let refused = outcomes.compactMap { if case .refused(let error) = $0 { error } else { nil } }
        let atClose = outcomes.compactMap { if case .closed(let likes) = $0 { likes } else { nil } }
        // A like either committed or was refused before it started; none failed half-way.
        #expect(refused.allSatisfy { $0 == .unavailable("the library is closed") }, "\(refused)")
        #expect(liked + refused.count == 39)
        // When `close` returned, every like that had started was in the file: nothing was written after it.
        #expect(atClose == [liked])
        #expect(try likes(path) == liked)
    }

    /// The likes of book "b" in the file at `path`. Synchronous: the Realm lives and dies here.
    func likes(_ path: String) throws -> Int {
        let realm = try Realm(configuration: strataConfiguration(path: path, logger: testLogger))
        return realm.object(ofType: Book.self, forPrimaryKey: "b")?.likes ?? -1
    }

    /// The book ids in the file, and those in the author's list. Synchronous: the Realm lives and dies here.
    func storedBooks(_ path: String) throws -> (books: Set<String>, listed: Set<String>) {
        let realm = try Realm(configuration: strataConfiguration(path: path, logger: testLogger))
        let books = Set(realm.objects(Book.self).map(\.id))
        let listed = Set(realm.object(ofType: Author.self, forPrimaryKey: "load")?.books.map(\.id) ?? [])
        return (books, listed)
    }
}
