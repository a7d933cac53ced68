import HTTPTypes
import HummingbirdTesting
import StrataService
import Testing

/// `GET /books` turns its parameters into a `where {}` query (and an RQL filter on top): the same answers on
/// both backends, the filter on Strata only.
@Suite struct QueryRouteTests {
    func ids(_ client: any TestClientProtocol, _ uri: String) async throws -> [String] {
        let response = try await client.send(.get, uri)
        #expect(response.status == .ok, "\(uri): \(response.errorMessage ?? "")")
        return try response.decoded([BookResource].self).map(\.id)
    }

    @Test(arguments: Backend.allCases) func parametersNarrowTheQuery(backend: Backend) async throws {
        try await withLibraryApplication(backend) { _, client in
            try await client.addShelf()
            try await client.send(.post, "/books/dispossessed/likes")
            try await client.send(.post, "/books/dispossessed/likes")
            try await client.send(.post, "/books/dune/likes")
            #expect(try await ids(client, "/books") == ["dispossessed", "dune", "earthsea", "left-hand"])
            #expect(
                try await ids(client, "/books?author=le-guin&sort=year") == ["earthsea", "left-hand", "dispossessed"])
            #expect(try await ids(client, "/books?minYear=1966&maxYear=1970&sort=year") == ["earthsea", "left-hand"])
            #expect(try await ids(client, "/books?title=DARK") == ["left-hand"])
            #expect(try await ids(client, "/books?minLikes=1&sort=likes") == ["dispossessed", "dune"])
            #expect(try await ids(client, "/books?sort=title&limit=2") == ["earthsea", "dune"])
        }
    }

    @Test func anRQLFilterNarrowsTheOtherConditions() async throws {
        try await withLibraryApplication { _, client in
            try await client.addShelf()
            // "year < 1970 AND title BEGINSWITH 'The'", URL-encoded
            let filter = "year%20%3C%201970%20AND%20title%20BEGINSWITH%20'The'"
            #expect(try await ids(client, "/books?filter=\(filter)") == ["left-hand"])
            #expect(try await ids(client, "/books?author=herbert&filter=\(filter)") == [])
            // A form-encoded query string (`curl --data-urlencode`, browsers): `+` is a space, `%2B` a plus.
            #expect(try await ids(client, "/books?filter=year+%3D%3D+1965") == ["dune"])
            #expect(try await ids(client, "/books?filter=title+CONTAINS+'%2B'") == [])
            #expect(try await ids(client, "/books?title=the+left") == ["left-hand"])
        }
    }

    @Test func theGRDBBackendSaysItHasNoRQL() async throws {
        try await withLibraryApplication(.grdb) { _, client in
            let response = try await client.send(.get, "/books?filter=year%20%3E%201")
            #expect(response.status == .notImplemented)
        }
    }
}
