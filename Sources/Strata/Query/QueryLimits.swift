/// The largest queries Strata runs, in the spirit of SQLite's limits (sqlite.org/limits.html): its expression
/// trees nest at most 1000 levels (`SQLITE_MAX_EXPR_DEPTH`) and its statements are at most 1,000,000,000 bytes
/// (`SQLITE_MAX_SQL_LENGTH`). A query past a limit is a typed
/// ``RealmError/invalidQuery(query:position:reason:)`` pointing at where it went past — never a stack overflow.
///
/// Only nesting needs a tight limit: parsing, binding, evaluating and releasing a query recurse once per level of
/// nesting, on whatever stack the caller runs (a secondary thread on Apple platforms has 512 KiB). Long flat
/// chains (`age == 1 OR age == 2 OR …`, `||` in a loop in `where {}`) do not nest: each `AND` or `OR` chain is one
/// node with many operands, so thousands of terms cost time in proportion to their number and no stack.
enum QueryLimits {
    /// How deep a query may nest: parentheses, `NOT` / `!` and `SUBQUERY(…)` each open a level in the query
    /// language (a `{…}` list cannot hold another list); in a type-safe query each `!` and each change between
    /// `&&` and `||` does.
    static let maximumDepth = 1000

    /// How many `SUBQUERY(…)` may enclose one another. Each one runs a query per element of its collection, with
    /// the parser, binder and evaluator called again for it (about 16 KiB of stack per level in a debug build),
    /// so they nest far less than conditions do.
    static let maximumSubqueryDepth = 10

    /// How many terms a query may have: conditions (comparisons, `BETWEEN`, `TEXT`, `GEOWITHIN`,
    /// `TRUEPREDICATE`…) and values written in `{…}` lists. A list passed as an argument (`IN $0`) counts as one.
    static let maximumTerms = 100_000

    /// How long a query's text may be, in UTF-8 bytes: 16 MiB, the largest string a property holds.
    static let maximumLength = 16 * 1024 * 1024

    /// The reason given for a query nesting deeper than ``maximumDepth``.
    static var depthReason: String {
        "the query nests more than \(maximumDepth) levels deep (parentheses, NOT and SUBQUERY each open a level); "
            + "flatten it: a chain of AND or OR terms does not nest"
    }

    /// The reason given for a SUBQUERY nested in more than ``maximumSubqueryDepth`` others.
    static var subqueryReason: String {
        "SUBQUERY nests more than \(maximumSubqueryDepth) levels deep"
    }

    /// The reason given for a query with more than ``maximumTerms`` terms.
    static var termsReason: String {
        "the query has more than \(maximumTerms) terms (conditions and list values); pass long lists of values "
            + "as an argument: IN $0"
    }

    /// The reason given for a query text longer than ``maximumLength``.
    static var lengthReason: String {
        "the query is longer than \(maximumLength) bytes; pass long values and lists as arguments ($0, IN $0)"
    }
}
