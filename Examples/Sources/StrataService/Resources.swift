import Hummingbird

// What the routes read and write as JSON. Plain `Sendable` values, so that they cross from the repository's
// isolation to the request handler, and so that both repositories (Strata and GRDB) speak the same language.

/// The body of `POST /authors`.
public struct NewAuthor: Codable, Sendable {
    /// The primary key.
    public var id: String
    /// The name.
    public var name: String

    /// The value with these fields.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The body of `PATCH /authors/:id`: the fields to change.
public struct AuthorChanges: Codable, Sendable {
    /// The name.
    public var name: String?

    /// The value with these fields.
    public init(name: String? = nil) { self.name = name }
}

/// An author as the API returns it: the ids of their books in the author's order.
public struct AuthorResource: ResponseCodable, Equatable, Sendable {
    /// The primary key.
    public var id: String
    /// The name.
    public var name: String
    /// The ids of the author's books, in the author's order.
    public var bookIDs: [String]

    /// The value with these fields.
    public init(id: String, name: String, bookIDs: [String]) {
        self.id = id
        self.name = name
        self.bookIDs = bookIDs
    }
}

/// The body of `POST /books`: the book, and the author whose list it joins.
public struct NewBook: Codable, Sendable {
    /// The primary key.
    public var id: String
    /// The title.
    public var title: String
    /// The year of first publication.
    public var year: Int
    /// The author's id.
    public var authorID: String

    /// The value with these fields.
    public init(id: String, title: String, year: Int, authorID: String) {
        self.id = id
        self.title = title
        self.year = year
        self.authorID = authorID
    }
}

/// The body of `PATCH /books/:id`: the fields to change.
public struct BookChanges: Codable, Sendable {
    /// The title.
    public var title: String?
    /// The year of first publication.
    public var year: Int?

    /// The value with these fields.
    public init(title: String? = nil, year: Int? = nil) {
        self.title = title
        self.year = year
    }
}

/// A book as the API returns it.
public struct BookResource: ResponseCodable, Equatable, Sendable {
    /// The primary key.
    public var id: String
    /// The title.
    public var title: String
    /// The year of first publication.
    public var year: Int
    /// How many readers liked it.
    public var likes: Int
    /// The author's id.
    public var authorID: String?

    /// The value with these fields.
    public init(id: String, title: String, year: Int, likes: Int, authorID: String?) {
        self.id = id
        self.title = title
        self.year = year
        self.likes = likes
        self.authorID = authorID
    }
}

/// The search of `GET /books`: every given condition must hold. `filter` is a Realm Query Language predicate
/// (Strata only), applied on top of the others.
public struct BookSearch: Sendable, Equatable {
    /// The order of the results.
    public enum Order: String, Sendable {
        case id, title, year, likes
    }

    /// The author's id.
    public var authorID: String?
    /// The title.
    public var titleContains: String?
    /// The earliest year.
    public var minYear: Int?
    /// The latest year.
    public var maxYear: Int?
    /// The fewest likes.
    public var minLikes: Int?
    /// A Realm Query Language predicate (Strata only).
    public var filter: String?
    /// The order of the results (default: by id).
    public var order: Order = .id
    /// At most this many results.
    public var limit: Int?

    /// The empty search: every book, by id.
    public init() {}
}

/// One server-sent event of `GET /books/changes`: the state the stream starts from, or a commit's changes.
public struct BookChangeEvent: Codable, Sendable, Equatable {
    /// What an event reports.
    public enum Kind: String, Codable, Sendable {
        case initial, update
    }

    /// Whether this is the initial state or an update.
    public var kind: Kind
    /// How many books there are after this event.
    public var count: Int
    /// The books the commit inserted (all books for `initial`), in the collection's order.
    public var inserted: [BookResource]
    /// The books the commit modified (none for `initial`).
    public var modified: [BookResource]
    /// How many books the commit deleted.
    public var deleted: Int

    /// The value with these fields.
    public init(kind: Kind, count: Int, inserted: [BookResource], modified: [BookResource], deleted: Int) {
        self.kind = kind
        self.count = count
        self.inserted = inserted
        self.modified = modified
        self.deleted = deleted
    }
}
