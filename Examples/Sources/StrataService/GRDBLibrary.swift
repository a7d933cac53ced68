import Foundation
import GRDB
import Logging
import Synchronization

/// The same repository over SQLite through GRDB, for `Examples/bench.sh` to compare the two behind the same
/// routes: a WAL database with `synchronous=FULL` (durable commits, like Strata's), readers in parallel through a
/// `DatabasePool`, one writer at a time. It has no RQL filter and no change stream (`.unsupported`).
public final class GRDBLibrary: LibraryRepository {
    private let pool: DatabasePool
    private let logger: Logger
    private let closed = Mutex(false)

    /// Opens (or creates) the SQLite database at `path`.
    public init(path: String, logger: Logger) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        configuration.foreignKeysEnabled = true
        pool = try DatabasePool(path: path, configuration: configuration)
        self.logger = logger
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS author (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS book (
                        id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, year INTEGER NOT NULL,
                        likes INTEGER NOT NULL DEFAULT 0,
                        authorID TEXT REFERENCES author(id) ON DELETE CASCADE,
                        position INTEGER NOT NULL);
                    CREATE INDEX IF NOT EXISTS book_year ON book(year);
                    CREATE INDEX IF NOT EXISTS book_author ON book(authorID, position);
                    """)
        }
        logger.info("opened the SQLite library", metadata: ["path": "\(path)"])
    }

    private func checkOpen() throws {
        if closed.withLock({ $0 }) { throw LibraryError.unavailable("the library is closed") }
    }

    private func write<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkOpen()
        do {
            return try await pool.write(block)
        } catch {
            throw Self.libraryError(error)
        }
    }

    private func read<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkOpen()
        do {
            return try await pool.read(block)
        } catch {
            throw Self.libraryError(error)
        }
    }

    private static func libraryError(_ error: any Error) -> LibraryError {
        if let error = error as? LibraryError { return error }
        if let error = error as? DatabaseError, error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
            return .duplicate("\(error.message ?? "duplicate primary key")")
        }
        return .failed("\(error)")
    }

    // MARK: Authors

    /// Adds an author with no books.
    public func createAuthor(_ author: NewAuthor) async throws -> AuthorResource {
        guard !author.id.isEmpty, author.id.count <= 200 else {
            throw LibraryError.badInput("an author id must have 1 to 200 characters")
        }
        return try await write { db in
            try db.execute(sql: "INSERT INTO author (id, name) VALUES (?, ?)", arguments: [author.id, author.name])
            return AuthorResource(id: author.id, name: author.name, bookIDs: [])
        }
    }

    /// The author with `id`, or `.notFound`.
    public func author(id: String) async throws -> AuthorResource {
        try await read { db in try Self.author(id, db) }
    }

    /// All authors, by id.
    public func authors() async throws -> [AuthorResource] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT id FROM author ORDER BY id").map { try Self.author($0, db) }
        }
    }

    /// Changes the given fields of an author.
    public func updateAuthor(id: String, _ changes: AuthorChanges) async throws -> AuthorResource {
        try await write { db in
            _ = try Self.author(id, db)
            if let name = changes.name {
                try db.execute(sql: "UPDATE author SET name = ? WHERE id = ?", arguments: [name, id])
            }
            return try Self.author(id, db)
        }
    }

    /// Deletes an author and their books.
    public func deleteAuthor(id: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM author WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw LibraryError.notFound("no author with id \(id)") }
        }
    }

    // MARK: Books

    /// Adds a book at the end of its author's list, in the same transaction.
    public func createBook(_ book: NewBook) async throws -> BookResource {
        guard !book.id.isEmpty, book.id.count <= 200 else {
            throw LibraryError.badInput("a book id must have 1 to 200 characters")
        }
        return try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM author WHERE id = ?", arguments: [book.authorID]) != nil
            else { throw LibraryError.badInput("no author with id \(book.authorID)") }
            try db.execute(
                sql: """
                    INSERT INTO book (id, title, year, authorID, position)
                    VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM book WHERE authorID = ?))
                    """,
                arguments: [book.id, book.title, book.year, book.authorID, book.authorID])
            return BookResource(id: book.id, title: book.title, year: book.year, likes: 0, authorID: book.authorID)
        }
    }

    /// The book with `id`, or `.notFound`.
    public func book(id: String) async throws -> BookResource {
        try await read { db in try Self.book(id, db) }
    }

    /// The books that match every condition of `search`.
    public func books(matching search: BookSearch) async throws -> [BookResource] {
        if search.filter != nil {
            throw LibraryError.unsupported("the filter parameter (RQL) needs the Strata backend")
        }
        return try await read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let authorID = search.authorID {
                conditions.append("authorID = ?")
                arguments.append(authorID)
            }
            if let text = search.titleContains {
                conditions.append("title LIKE ? ESCAPE '\\'")
                let escaped = text.replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
                arguments.append("%\(escaped)%")
            }
            if let minYear = search.minYear {
                conditions.append("year >= ?")
                arguments.append(minYear)
            }
            if let maxYear = search.maxYear {
                conditions.append("year <= ?")
                arguments.append(maxYear)
            }
            if let minLikes = search.minLikes {
                conditions.append("likes >= ?")
                arguments.append(minLikes)
            }
            var sql = "SELECT id, title, year, likes, authorID FROM book"
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql += " ORDER BY \(search.order.rawValue)\(search.order == .likes ? " DESC" : "")"
            if let limit = search.limit {
                sql += " LIMIT ?"
                arguments.append(limit)
            }
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map(Self.book)
        }
    }

    /// Changes the given fields of a book.
    public func updateBook(id: String, _ changes: BookChanges) async throws -> BookResource {
        try await write { db in
            _ = try Self.book(id, db)
            if let title = changes.title {
                try db.execute(sql: "UPDATE book SET title = ? WHERE id = ?", arguments: [title, id])
            }
            if let year = changes.year {
                try db.execute(sql: "UPDATE book SET year = ? WHERE id = ?", arguments: [year, id])
            }
            return try Self.book(id, db)
        }
    }

    /// Deletes a book (it leaves its author's list).
    public func deleteBook(id: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM book WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw LibraryError.notFound("no book with id \(id)") }
        }
    }

    /// Adds one like in a read-modify-write transaction.
    public func likeBook(id: String) async throws -> BookResource {
        try await write { db in
            try db.execute(sql: "UPDATE book SET likes = likes + 1 WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw LibraryError.notFound("no book with id \(id)") }
            return try Self.book(id, db)
        }
    }

    /// The books' changes as events.
    public func bookChanges(limit: Int?) async throws -> AsyncStream<BookChangeEvent> {
        throw LibraryError.unsupported("the change stream needs the Strata backend")
    }

    /// Finishes the writes in progress and closes the database.
    public func close() async {
        closed.withLock { $0 = true }
        // Waits for the writes in progress (GRDB's writer queue runs them first), then closes the connections.
        do {
            try await pool.barrierWriteWithoutTransaction { _ in }
            try pool.close()
        } catch {
            logger.error("closing the SQLite library failed", metadata: ["error": "\(error)"])
        }
        logger.info("closed the SQLite library")
    }

    // MARK: Rows

    private static func author(_ id: String, _ db: Database) throws -> AuthorResource {
        guard let row = try Row.fetchOne(db, sql: "SELECT id, name FROM author WHERE id = ?", arguments: [id]) else {
            throw LibraryError.notFound("no author with id \(id)")
        }
        let books = try String.fetchAll(
            db, sql: "SELECT id FROM book WHERE authorID = ? ORDER BY position", arguments: [id])
        return AuthorResource(id: row["id"], name: row["name"], bookIDs: books)
    }

    private static func book(_ id: String, _ db: Database) throws -> BookResource {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT id, title, year, likes, authorID FROM book WHERE id = ?", arguments: [id])
        else { throw LibraryError.notFound("no book with id \(id)") }
        return book(row)
    }

    private static func book(_ row: Row) -> BookResource {
        BookResource(
            id: row["id"], title: row["title"], year: row["year"], likes: row["likes"], authorID: row["authorID"])
    }
}
