// The routes talk to a repository, not to a database: the same routes run over Strata (`StrataLibrary`) and over
// SQLite through GRDB (`GRDBLibrary`), which is how `Examples/bench.sh` compares the two behind one HTTP server.

/// Where authors and books live. Every method throws ``LibraryError``.
public protocol LibraryRepository: Sendable {
    /// Adds an author with no books; `.duplicate` if the id is taken.
    func createAuthor(_ author: NewAuthor) async throws -> AuthorResource
    func author(id: String) async throws -> AuthorResource
    func authors() async throws -> [AuthorResource]
    func updateAuthor(id: String, _ changes: AuthorChanges) async throws -> AuthorResource
    /// Deletes the author and their books.
    func deleteAuthor(id: String) async throws

    /// Adds a book at the end of its author's list; `.badInput` if the author does not exist.
    func createBook(_ book: NewBook) async throws -> BookResource
    func book(id: String) async throws -> BookResource
    func books(matching search: BookSearch) async throws -> [BookResource]
    func updateBook(id: String, _ changes: BookChanges) async throws -> BookResource
    func deleteBook(id: String) async throws
    /// Adds one like, read-modify-write in one transaction: concurrent likes are all counted.
    func likeBook(id: String) async throws -> BookResource

    /// The books' changes, the current state first, until `limit` events were sent, the consumer stops
    /// iterating, or the repository closes. `.unsupported` where the backend cannot.
    func bookChanges(limit: Int?) async throws -> AsyncStream<BookChangeEvent>

    /// Finishes the writes in progress, ends the change streams and releases the file. Later calls get
    /// `.unavailable`.
    func close() async
}
