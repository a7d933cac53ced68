import HTTPTypes
import HummingbirdTesting
import NIOCore
import StrataService
import Testing

/// Each kind of bad request gets its status and a message that says what was wrong, and writes nothing.
@Suite struct ErrorRouteTests {
    @Test func unknownIdsAre404() async throws {
        try await withLibraryApplication { _, client in
            let missingBook = try await client.send(.get, "/books/nope")
            #expect(missingBook.status == .notFound)
            #expect(missingBook.errorMessage == "no book with id nope")
            #expect(try await client.send(.get, "/authors/nope").status == .notFound)
            #expect(try await client.send(.patch, "/books/nope", json: BookChanges(title: "x")).status == .notFound)
            #expect(try await client.send(.delete, "/books/nope").status == .notFound)
            #expect(try await client.send(.delete, "/authors/nope").status == .notFound)
            #expect(try await client.send(.post, "/books/nope/likes").status == .notFound)
        }
    }

    @Test func aDuplicatePrimaryKeyIs409WithStrataMessageAndKeepsTheFirst() async throws {
        try await withLibraryApplication { _, client in
            try await client.addShelf()
            let duplicate = try await client.send(
                .post, "/books", json: NewBook(id: "dune", title: "Dune Messiah", year: 1969, authorID: "herbert"))
            #expect(duplicate.status == .conflict)
            // Realm.Error.primaryKeyExists's description, which names the type and the key.
            let message = try #require(duplicate.errorMessage)
            #expect(message.contains("Book") && message.contains("dune"))
            #expect(try await client.send(.get, "/books/dune").decoded(BookResource.self).title == "Dune")
            // The failed transaction rolled back whole: the author's list did not get a second entry.
            #expect(try await client.send(.get, "/authors/herbert").decoded(AuthorResource.self).bookIDs == ["dune"])
            let author = try await client.send(.post, "/authors", json: NewAuthor(id: "herbert", name: "Other"))
            #expect(author.status == .conflict)
        }
    }

    @Test func anInvalidQueryIs400WithRealmsMessage() async throws {
        try await withLibraryApplication { _, client in
            try await client.addShelf()
            let response = try await client.send(.get, "/books?filter=yaer%20%3E%201960")  // "yaer > 1960"
            #expect(response.status == .badRequest)
            let message = try #require(response.errorMessage)
            // Realm.Error.invalidQuery's description: where, in which query, and why.
            #expect(message.contains("invalid query"))
            #expect(message.contains("yaer > 1960"))
        }
    }

    @Test func malformedInputIs400() async throws {
        try await withLibraryApplication { _, client in
            try await client.addShelf()
            let notJSON = try await client.execute(
                uri: "/books", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{\"id\": \"x\""))
            #expect(notJSON.status == .badRequest)
            let noAuthor = try await client.send(
                .post, "/books", json: NewBook(id: "x", title: "X", year: 2000, authorID: "nobody"))
            #expect(noAuthor.status == .badRequest)
            #expect(noAuthor.errorMessage == "no author with id nobody")
            let emptyID = try await client.send(.post, "/authors", json: NewAuthor(id: "", name: "Nobody"))
            #expect(emptyID.status == .badRequest)
            #expect(try await client.send(.get, "/books?minYear=soon").status == .badRequest)
            #expect(try await client.send(.get, "/books?sort=colour").status == .badRequest)
            #expect(try await client.send(.get, "/books/x").status == .notFound)
        }
    }
}
