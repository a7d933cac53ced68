/// Facts about the Strata library itself: a pure-Swift embedded object database.
///
/// Models are classes with `@Persisted` properties (``Object``, ``EmbeddedObject``); a ``Realm`` opens a file (or
/// an in-memory database) and adds, reads, updates and deletes them in write transactions. The storage engine
/// underneath is `StrataStorage`, a copy-on-write B+tree file with MVCC readers.
///
/// This is not named `Strata`: a type with the module's name would hide the module, and `Strata.SortDescriptor`
/// or `Strata.List` (the way to pick Strata's type where another module has one of the same name) would look
/// for a member of the type instead.
///
/// ```swift
/// print("Strata \(StrataInfo.version)")
/// ```
public enum StrataInfo {
    /// The version of the Strata package.
    public static let version = "0.1.0"
}
