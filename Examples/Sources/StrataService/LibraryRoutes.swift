import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// The HTTP API over a ``LibraryRepository``:
///
/// | Route | Does |
/// |---|---|
/// | `POST /authors`, `GET /authors`, `GET/PATCH/DELETE /authors/:id` | authors (delete takes their books too) |
/// | `POST /books`, `GET /books/:id`, `PATCH/DELETE /books/:id` | books, each joining its author's list |
/// | `POST /books/:id/likes` | one more like (read-modify-write) |
/// | `GET /books?author=&title=&minYear=&maxYear=&minLikes=&filter=&sort=&limit=` | a query |
/// | `GET /books/changes?limit=` | server-sent events: the books' changes as they commit |
/// | `GET /health` | 200 while the service runs |
public struct LibraryRoutes: Sendable {
    /// Where the routes read and write.
    public let library: any LibraryRepository

    /// The routes over `library`.
    public init(library: any LibraryRepository) {
        self.library = library
    }

    /// Adds the routes to `router`.
    public func register<Context: RequestContext>(on router: Router<Context>) {
        let library = self.library
        router.get("health") { _, _ in HTTPResponse.Status.ok }

        router.post("authors") { request, context in
            let author = try await request.decode(as: NewAuthor.self, context: context)
            return EditedResponse(status: .created, response: try await library.createAuthor(author))
        }
        router.get("authors") { _, _ in try await library.authors() }
        router.get("authors/:id") { _, context in try await library.author(id: try context.parameters.require("id")) }
        router.patch("authors/:id") { request, context in
            let changes = try await request.decode(as: AuthorChanges.self, context: context)
            return try await library.updateAuthor(id: try context.parameters.require("id"), changes)
        }
        router.delete("authors/:id") { _, context in
            try await library.deleteAuthor(id: try context.parameters.require("id"))
            return HTTPResponse.Status.noContent
        }

        router.post("books") { request, context in
            let book = try await request.decode(as: NewBook.self, context: context)
            return EditedResponse(status: .created, response: try await library.createBook(book))
        }
        router.get("books") { request, _ in try await library.books(matching: try Self.search(request)) }
        router.get("books/changes") { request, _ in
            try await Self.changeStream(library, limit: try Self.integer("limit", in: request))
        }
        router.get("books/:id") { _, context in try await library.book(id: try context.parameters.require("id")) }
        router.patch("books/:id") { request, context in
            let changes = try await request.decode(as: BookChanges.self, context: context)
            return try await library.updateBook(id: try context.parameters.require("id"), changes)
        }
        router.delete("books/:id") { _, context in
            try await library.deleteBook(id: try context.parameters.require("id"))
            return HTTPResponse.Status.noContent
        }
        router.post("books/:id/likes") { _, context in
            try await library.likeBook(id: try context.parameters.require("id"))
        }
    }

    /// The query of `GET /books` from its parameters; a malformed number or sort order is a 400.
    static func search(_ request: Request) throws -> BookSearch {
        let parameters = formParameters(request)
        var search = BookSearch()
        search.authorID = parameters["author"]
        search.titleContains = parameters["title"]
        search.minYear = try integer("minYear", in: request)
        search.maxYear = try integer("maxYear", in: request)
        search.minLikes = try integer("minLikes", in: request)
        search.limit = try integer("limit", in: request)
        search.filter = parameters["filter"]
        if let sort = parameters["sort"] {
            guard let order = BookSearch.Order(rawValue: sort) else {
                throw LibraryError.badInput("sort must be one of id, title, year, likes, not \(sort)")
            }
            search.order = order
        }
        return search
    }

    /// The query string's parameters decoded as a form (`application/x-www-form-urlencoded`): `+` is a space,
    /// `%2B` a plus. What `curl --data-urlencode` and browsers send; an RQL filter has spaces and may have pluses.
    static func formParameters(_ request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in (request.uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            parameters[decoded(parts[0])] = parts.count > 1 ? decoded(parts[1]) : ""
        }
        return parameters
    }

    static func integer(_ name: String, in request: Request) throws -> Int? {
        guard let text = formParameters(request)[name] else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw LibraryError.badInput("\(name) must be a non-negative integer, not \(text)")
        }
        return value
    }

    /// `text/event-stream`: one `event: initial|update` with a JSON `data:` line per change. The stream ends after
    /// `limit` events, when the client disconnects, or when the service shuts down (graceful shutdown cancels it,
    /// so that the server does not wait forever for a stream that never ends).
    static func changeStream(_ library: any LibraryRepository, limit: Int?) async throws -> Response {
        let events = try await library.bookChanges(limit: limit)
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                for await event in events.cancelOnGracefulShutdown() {
                    let json = String(decoding: try encoder.encode(event), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: \(event.kind.rawValue)\ndata: \(json)\n\n"))
                }
                try await writer.finish(nil)
            })
    }
}
