import HTTPTypes
import HummingbirdTesting
import StrataService
import Testing

/// Create, read, update and delete through the routes, on both backends: what one returns the next reads back.
@Suite struct CRUDRouteTests {
    @Test(arguments: Backend.allCases) func authorsAndBooksRoundTrip(backend: Backend) async throws {
        try await withLibraryApplication(backend) { _, client in
            let created = try await client.send(.post, "/authors", json: NewAuthor(id: "le-guin", name: "Le Guin"))
            #expect(created.status == .created)
            #expect(try created.decoded() == AuthorResource(id: "le-guin", name: "Le Guin", bookIDs: []))

            let book = NewBook(id: "earthsea", title: "A Wizard of Earthsea", year: 1968, authorID: "le-guin")
            let createdBook = try await client.send(.post, "/books", json: book)
            #expect(createdBook.status == .created)
            let expected = BookResource(
                id: "earthsea", title: "A Wizard of Earthsea", year: 1968, likes: 0, authorID: "le-guin")
            #expect(try createdBook.decoded() == expected)
            #expect(try await client.send(.get, "/books/earthsea").decoded() == expected)
            try await client.send(
                .post, "/books",
                json: NewBook(id: "tombs", title: "The Tombs of Atuan", year: 1971, authorID: "le-guin"))

            // The author's list holds the books in the order they were added.
            let author: AuthorResource = try await client.send(.get, "/authors/le-guin").decoded()
            #expect(author.bookIDs == ["earthsea", "tombs"])
            #expect(try await client.send(.get, "/authors").decoded() == [author])

            let renamed = try await client.send(
                .patch, "/authors/le-guin", json: AuthorChanges(name: "Ursula K. Le Guin"))
            #expect(try renamed.decoded(AuthorResource.self).name == "Ursula K. Le Guin")
            let updated = try await client.send(.patch, "/books/tombs", json: BookChanges(year: 1970))
            #expect(try updated.decoded(BookResource.self).year == 1970)
            #expect(try await client.send(.get, "/books/tombs").decoded(BookResource.self).year == 1970)

            let liked = try await client.send(.post, "/books/tombs/likes")
            #expect(try liked.decoded(BookResource.self).likes == 1)

            #expect(try await client.send(.delete, "/books/tombs").status == .noContent)
            #expect(try await client.send(.get, "/books/tombs").status == .notFound)
            #expect(
                try await client.send(.get, "/authors/le-guin").decoded(AuthorResource.self).bookIDs == ["earthsea"])

            // Deleting an author deletes their books.
            #expect(try await client.send(.delete, "/authors/le-guin").status == .noContent)
            #expect(try await client.send(.get, "/authors/le-guin").status == .notFound)
            #expect(try await client.send(.get, "/books/earthsea").status == .notFound)
            #expect(try await client.send(.get, "/books").decoded([BookResource].self).isEmpty)
        }
    }
}
