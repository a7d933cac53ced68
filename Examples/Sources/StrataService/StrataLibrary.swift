import Foundation
import Logging
import Strata

/// The repository over a Strata file. One actor owns one actor-confined Realm: reads run on it directly, writes
/// go through `asyncWrite`, which waits for the file's write lock without blocking a thread, and change streams
/// iterate `changes` on it (each `for await` gives the actor up while it waits, so requests keep flowing).
///
/// ```swift
/// let library = try await StrataLibrary.open(configuration: strataConfiguration(path: "library.strata", logger: logger))
/// let book = try await library.book(id: "dune")
/// ```
public actor StrataLibrary: LibraryRepository {
    private var realm: Realm?
    private let logger: Logging.Logger
    /// The change streams' pumps, cancelled on close.
    private var pumps: [UUID: Task<Void, Never>] = [:]
    /// How many change streams have sent their initial state and wait for commits; and who waits for that.
    private var liveFollowers = 0
    private var followerWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Writes that started (may be waiting for the write lock: `asyncWrite` gives the actor up while it waits)
    /// and have not finished; `close()` waits for them.
    private var writesInFlight = 0
    private var closing = false
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []

    private init(logger: Logging.Logger) {
        self.logger = logger
    }

    /// Opens (or creates) the file of `configuration` on a new library actor.
    public static func open(configuration: Realm.Configuration, logger: Logging.Logger) async throws -> StrataLibrary {
        let library = StrataLibrary(logger: logger)
        try await library.openRealm(configuration)
        return library
    }

    private func openRealm(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
        logger.info(
            "opened the library",
            metadata: ["path": "\(configuration.fileURL?.path ?? configuration.inMemoryIdentifier ?? "?")"])
    }

    private func openRealmOrThrow() throws -> Realm {
        guard let realm, !closing else { throw LibraryError.unavailable("the library is closed") }
        return realm
    }

    /// Runs `block` in a write transaction and maps what it throws to a ``LibraryError``; nothing of a failed
    /// block is written. Counted in ``writesInFlight`` so that ``close()`` lets it finish.
    private func write<Result>(_ block: (Realm) throws -> Result) async throws -> Result {
        let realm = try openRealmOrThrow()
        writesInFlight += 1
        defer {
            writesInFlight -= 1
            if writesInFlight == 0 {
                for waiter in drainWaiters { waiter.resume() }
                drainWaiters = []
            }
        }
        do {
            return try await realm.asyncWrite { try block(realm) }
        } catch {
            throw LibraryError.from(error)
        }
    }

    // MARK: Authors

    /// Adds an author with no books.
    public func createAuthor(_ author: NewAuthor) async throws -> AuthorResource {
        try validate(id: author.id, what: "author")
        return try await write { realm in
            AuthorResource(realm.create(Author.self, value: ["id": author.id, "name": author.name]))
        }
    }

    /// The author with `id`, or `.notFound`.
    public func author(id: String) throws -> AuthorResource {
        AuthorResource(try existingAuthor(id, in: try openRealmOrThrow()))
    }

    /// All authors, by id.
    public func authors() throws -> [AuthorResource] {
        try openRealmOrThrow().objects(Author.self).sorted(byKeyPath: "id").map(AuthorResource.init)
    }

    /// Changes the given fields of an author.
    public func updateAuthor(id: String, _ changes: AuthorChanges) async throws -> AuthorResource {
        try await write { realm in
            let author = try existingAuthor(id, in: realm)
            if let name = changes.name { author.name = name }
            return AuthorResource(author)
        }
    }

    /// Deletes an author and their books.
    public func deleteAuthor(id: String) async throws {
        try await write { realm in
            let author = try existingAuthor(id, in: realm)
            realm.delete(author.books)
            realm.delete(author)
        }
    }

    // MARK: Books

    /// Adds a book at the end of its author's list, in the same transaction.
    public func createBook(_ book: NewBook) async throws -> BookResource {
        try validate(id: book.id, what: "book")
        return try await write { realm in
            guard let author = realm.object(ofType: Author.self, forPrimaryKey: book.authorID) else {
                throw LibraryError.badInput("no author with id \(book.authorID)")
            }
            let created = realm.create(
                Book.self, value: ["id": book.id, "title": book.title, "year": book.year, "author": author])
            author.books.append(created)
            return BookResource(created)
        }
    }

    /// The book with `id`, or `.notFound`.
    public func book(id: String) throws -> BookResource {
        BookResource(try existingBook(id, in: try openRealmOrThrow()))
    }

    /// The books that match every condition of `search`.
    public func books(matching search: BookSearch) throws -> [BookResource] {
        var results = try openRealmOrThrow().objects(Book.self)
        // Each condition narrows the previous query; the type-safe `where {}` form checks names and types.
        if let authorID = search.authorID { results = results.where { $0.author.id == authorID } }
        if let text = search.titleContains {
            results = results.where { $0.title.contains(text, options: .caseInsensitive) }
        }
        if let minYear = search.minYear { results = results.where { $0.year >= minYear } }
        if let maxYear = search.maxYear { results = results.where { $0.year <= maxYear } }
        if let minLikes = search.minLikes { results = results.where { $0.likes >= minLikes } }
        if let filter = search.filter {
            // A query string from the client: `checkedFilter` throws `invalidQuery` (a 400) instead of trapping.
            do {
                results = try results.checkedFilter(filter)
            } catch {
                throw LibraryError.from(error)
            }
        }
        let sorted = results.sorted(byKeyPath: search.order.rawValue, ascending: search.order != .likes)
        return sorted.prefix(search.limit ?? Int.max).map(BookResource.init)
    }

    /// Changes the given fields of a book.
    public func updateBook(id: String, _ changes: BookChanges) async throws -> BookResource {
        try await write { realm in
            let book = try existingBook(id, in: realm)
            if let title = changes.title { book.title = title }
            if let year = changes.year { book.year = year }
            return BookResource(book)
        }
    }

    /// Deletes a book (it leaves its author's list).
    public func deleteBook(id: String) async throws {
        try await write { realm in realm.delete(try existingBook(id, in: realm)) }
    }

    /// Adds one like in a read-modify-write transaction.
    public func likeBook(id: String) async throws -> BookResource {
        try await write { realm in
            let book = try existingBook(id, in: realm)
            book.likes += 1
            return BookResource(book)
        }
    }

    // MARK: Changes

    /// The books' changes as events.
    public func bookChanges(limit: Int?) throws -> AsyncStream<BookChangeEvent> {
        let books = try openRealmOrThrow().objects(Book.self).sorted(byKeyPath: "id")
        let (stream, continuation) = AsyncStream.makeStream(of: BookChangeEvent.self)
        let id = UUID()
        // The pump runs on this actor (where the Realm lives) and ends when the consumer goes away.
        let pump = Task { await self.pump(books, limit: limit, into: continuation, id: id) }
        pumps[id] = pump
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }

    private func pump(
        _ books: Results<Book>, limit: Int?, into continuation: AsyncStream<BookChangeEvent>.Continuation, id: UUID
    ) async {
        var sent = 0
        var following = false
        defer {
            if following { liveFollowers -= 1 }
            pumps[id] = nil
            continuation.finish()
        }
        for await change in books.changes {
            let event: BookChangeEvent
            switch change {
            case .initial(let books):
                event = BookChangeEvent(
                    kind: .initial, count: books.count, inserted: books.map(BookResource.init), modified: [],
                    deleted: 0)
            case .update(let books, let deletions, let insertions, let modifications):
                event = BookChangeEvent(
                    kind: .update, count: books.count, inserted: insertions.map { BookResource(books[$0]) },
                    modified: modifications.map { BookResource(books[$0]) }, deleted: deletions.count)
            case .error(let error):
                logger.error("the book change stream failed", metadata: ["error": "\(error)"])
                return
            }
            continuation.yield(event)
            sent += 1
            if let limit, sent >= limit { return }
            if !following {
                following = true
                liveFollowers += 1
                resumeFollowerWaiters()
            }
        }
    }

    /// How many change streams have sent their initial state and now wait for commits.
    public var followers: Int { liveFollowers }

    /// Returns once at least `count` change streams follow the books (have sent their initial state): a commit
    /// made after this is in every one of them. For tests, and for a readiness check.
    public func waitForFollowers(_ count: Int) async {
        if liveFollowers >= count { return }
        await withCheckedContinuation { followerWaiters.append((count, $0)) }
    }

    private func resumeFollowerWaiters() {
        followerWaiters.removeAll { waiter in
            guard liveFollowers >= waiter.count else { return false }
            waiter.continuation.resume()
            return true
        }
    }

    // MARK: Closing

    /// Refuses new requests (`.unavailable`), lets the writes that started finish (a write waiting for the write
    /// lock gives the actor up, so `close` can run while it waits: it waits for it), ends the change streams and
    /// releases the Realm, which closes the file.
    public func close() async {
        guard let realm, !closing else { return }
        closing = true
        if writesInFlight > 0 {
            logger.info("waiting for writes in progress", metadata: ["writes": "\(writesInFlight)"])
            await withCheckedContinuation { drainWaiters.append($0) }
        }
        for pump in pumps.values { pump.cancel() }
        for pump in pumps.values { await pump.value }
        realm.invalidate()
        self.realm = nil
        logger.info("closed the library")
    }

    /// Whether ``close()`` finished: the Realm is released.
    public var isClosed: Bool { realm == nil }

    // MARK: Helpers

    private func validate(id: String, what: String) throws {
        guard !id.isEmpty, id.count <= 200 else {
            throw LibraryError.badInput("an \(what) id must have 1 to 200 characters")
        }
    }

    private func existingAuthor(_ id: String, in realm: Realm) throws -> Author {
        guard let author = realm.object(ofType: Author.self, forPrimaryKey: id) else {
            throw LibraryError.notFound("no author with id \(id)")
        }
        return author
    }

    private func existingBook(_ id: String, in realm: Realm) throws -> Book {
        guard let book = realm.object(ofType: Book.self, forPrimaryKey: id) else {
            throw LibraryError.notFound("no book with id \(id)")
        }
        return book
    }
}

extension AuthorResource {
    init(_ author: Author) {
        self.init(id: author.id, name: author.name, bookIDs: author.books.map(\.id))
    }
}

extension BookResource {
    init(_ book: Book) {
        self.init(id: book.id, title: book.title, year: book.year, likes: book.likes, authorID: book.author?.id)
    }
}
