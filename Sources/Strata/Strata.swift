/// Strata: a pure-Swift embedded object database.
///
/// Models are classes with `@Persisted` properties (``Object``, ``EmbeddedObject``); a ``Realm`` opens a file (or
/// an in-memory database) and adds, reads, updates and deletes them in write transactions. The storage engine
/// underneath is `StrataStorage`, a copy-on-write B+tree file with MVCC readers.
public enum Strata {
    /// The version of the Strata package.
    public static let version = "0.1.0"
}
