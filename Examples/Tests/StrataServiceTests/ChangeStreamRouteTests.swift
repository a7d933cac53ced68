import Foundation
import HTTPTypes
import HummingbirdTesting
import StrataService
import Testing

/// `GET /books/changes` streams server-sent events driven by `Results.changes`: the state first, then what each
/// commit did, including commits made by other requests.
@Suite struct ChangeStreamRouteTests {
    /// The events of a `text/event-stream` body: `event:` names and decoded `data:` lines.
    func events(_ body: String) throws -> [(name: String, event: BookChangeEvent)] {
        try body.components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { block in
            let lines = block.split(separator: "\n")
            let name = try #require(lines.first { $0.hasPrefix("event: ") }).dropFirst("event: ".count)
            let data = try #require(lines.first { $0.hasPrefix("data: ") }).dropFirst("data: ".count)
            return (String(name), try JSONDecoder().decode(BookChangeEvent.self, from: Data(data.utf8)))
        }
    }

    @Test func aCommitByAnotherRequestReachesTheStream() async throws {
        try await withLibraryApplication { library, client in
            try await client.addShelf()
            let strata = try #require(library as? StrataLibrary)
            async let streamed = client.send(.get, "/books/changes?limit=2")
            // Once the stream has sent its initial state it follows the books: the next commit is in it.
            await strata.waitForFollowers(1)
            let book = NewBook(id: "children", title: "Children of Dune", year: 1976, authorID: "herbert")
            #expect(try await client.send(.post, "/books", json: book).status == .created)

            let response = try await streamed
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "text/event-stream")
            let received = try events(String(buffer: response.body))
            try #require(received.count == 2)
            #expect(received[0].name == "initial")
            #expect(received[0].event.count == 4)
            #expect(received[0].event.inserted.map(\.id) == ["dispossessed", "dune", "earthsea", "left-hand"])
            #expect(received[1].name == "update")
            #expect(received[1].event.count == 5)
            #expect(
                received[1].event.inserted == [
                    BookResource(id: "children", title: "Children of Dune", year: 1976, likes: 0, authorID: "herbert")
                ])
            #expect(received[1].event.deleted == 0)
            #expect(await strata.followers == 0)
        }
    }

    @Test func theGRDBBackendSaysItHasNoStream() async throws {
        try await withLibraryApplication(.grdb) { _, client in
            let response = try await client.send(.get, "/books/changes")
            #expect(response.status == .notImplemented)
        }
    }
}
