import Foundation

/// Converts a file's data when the app's schema version rises: called with the migration and the file's old
/// schema version. See ``Migration``.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

/// An object during a migration, read and written by property name (`object["name"]`): the old version of an
/// object reads the file as it was, the new version is the object in the models' schema.
public typealias MigrationObject = DynamicObject

/// What a ``MigrationBlock`` works with: the old and new schemas, every object in both versions, and the
/// operations that need more than setting properties.
///
/// Before the block runs, each stored class has already been converted to the models' schema: properties that
/// kept their name and type keep their values (a property made required turns nil into the type's zero value),
/// added properties and properties whose type changed hold zero values (nil when optional; a fresh value for
/// `UUID` and `ObjectId`). The block fills in what the conversion cannot know:
///
/// ```swift
/// var configuration = Realm.Configuration(schemaVersion: 2, objectTypes: [Person.self])
/// configuration.migrationBlock = { migration, oldVersion in
///     if oldVersion < 1 {
///         migration.renameProperty(onType: "Person", from: "yearsSinceBirth", to: "age")
///     }
///     migration.enumerateObjects(ofType: "Person") { old, new in
///         let first = old?["firstName"] as? String ?? ""
///         let last = old?["lastName"] as? String ?? ""
///         new?["fullName"] = "\(first) \(last)"
///     }
/// }
/// ```
///
/// The whole migration — conversion, block, and the checks after it (primary keys unique, embedded objects with
/// exactly one parent) — is one write transaction. If an operation in the block fails, or the checks fail, the
/// open throws that error and the file is left exactly as it was; a crash during the migration leaves it as it
/// was too.
public final class Migration {
    /// The schema stored in the file before the migration.
    public let oldSchema: Schema
    /// The schema the file has after the migration.
    public var newSchema: Schema { realm.schema }

    let realm: Realm
    let old: Realm
    /// The first error of an operation in the block; the migration fails with it.
    var failure: Realm.Error?

    init(realm: Realm, old: Realm) {
        self.realm = realm
        self.old = old
        oldSchema = old.schema
    }

    /// Calls `block` for every object of class `typeName` with its old version (as stored before the migration)
    /// and its new version (nil once deleted in this migration). For a class new in this schema version, every
    /// object is passed with a nil old version; for a class the new schema dropped, a nil new version.
    public func enumerateObjects(
        ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void
    ) {
        run { () throws(Realm.Error) in
            try realm.enumerateMigrated(typeName, old: old, block)
        }
    }

    /// Creates an object of class `typeName` in the new schema from `value` (a dictionary by property name or an
    /// array in declared order), as `Realm.create` does.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        let created = run { () throws(Realm.Error) in try realm.createMigrated(typeName, value: value) }
        return created ?? DynamicObject()
    }

    /// Deletes `object`, a new-version object of this migration.
    public func delete(_ object: MigrationObject) {
        run { () throws(Realm.Error) in
            guard let managed = object.managed, managed.realm === realm else {
                throw Realm.Error.invalidValue(
                    type: object.className, property: "",
                    reason: "only new objects of the migration can be deleted (old objects are read-only)")
            }
            try realm.tables.remove(binding: managed.binding, key: managed.key, direct: true)
        }
    }

    /// Deletes every object of class `typeName`, and the class itself when the new schema does not have it.
    /// Returns whether the file had the class.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        run { () throws(Realm.Error) in try realm.deleteMigratedData(typeName) } ?? false
    }

    /// Moves the values of property `oldName` (which the new schema no longer has) into property `newName`
    /// (which the old schema did not have) for every object of class `typeName`. Both must hold the same type;
    /// the new one may be optional where the old was not, and nil becomes the zero value the other way round.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        run { () throws(Realm.Error) in
            try realm.renameMigratedProperty(typeName, from: oldName, to: newName, old: old)
        }
    }

    @discardableResult
    private func run<Result>(_ body: () throws(Realm.Error) -> Result) -> Result? {
        guard failure == nil else { return nil }
        do {
            return try body()
        } catch {
            failure = error
            return nil
        }
    }
}
