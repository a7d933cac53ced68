import Strata

// The stored model: authors own an ordered list of their books, and each book links back to its author. The list
// is the author's bibliography in the order it was written to; the link makes "books by this author" a query.

/// An author and the books they wrote, in the order they were added.
public final class Author: Object {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The name shown.
    @Persisted public var name = ""
    /// The author's books, in the order they were added.
    @Persisted public var books: List<Book>
}

/// A book: its title, year, how many readers liked it, and its author.
public final class Book: Object {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The title.
    @Persisted public var title = ""
    /// The year of first publication (indexed: the query route ranges over it).
    @Persisted(indexed: true) public var year = 0
    /// How many readers liked it.
    @Persisted public var likes = 0
    /// Who wrote it; the book is also in the author's `books`.
    @Persisted public var author: Author?
}
