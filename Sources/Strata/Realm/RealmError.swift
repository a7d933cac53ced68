public import Foundation
public import StrataStorage

extension Realm {
    /// An error from a Realm, spelled as in the SDK: `catch Realm.Error.diskFull`. The type itself is
    /// ``RealmError``, so logs that print `type(of: error)` name it.
    public typealias Error = RealmError
}

/// An error from a Realm (``Realm/Error``). Each case names the file, type or property involved; storage failures
/// keep their cause (``diskFull(path:)``, ``ioError(path:operation:code:)``, ``readerTableFull(path:capacity:)``,
/// ``lockTimeout(path:)``), so a service can tell a full disk from a damaged file. `localizedDescription` is the full
/// ``description``. A task cancelled before its write starts gets `CancellationError`, not a `RealmError`
/// (see Documentation/Errors.md).
///
/// ```swift
/// do {
///     try realm.write { realm.add(order) }
/// } catch Realm.Error.diskFull(let path) {
///     alertOperator("no space left for \(path)")
/// }
/// ```
public enum RealmError: Swift.Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The file could not be opened, read or written.
    case fileAccess(path: String, reason: String)
    /// The file does not exist (read-only opens do not create files).
    case fileNotFound(path: String)
    /// The file is damaged (a page failed validation: `reason` names it; a stored value does not decode),
    /// truncated, of a newer format, or not a Strata file. Restore it from a backup (see ``Realm/damage``).
    case incompatibleFile(path: String, reason: String)
    /// The file's stored schema differs from the app's models; one line per difference.
    case schemaMismatch(differences: [String])
    /// The schema changed and the schema version must be raised with a migration.
    case migrationRequired(fileVersion: UInt64, configuredVersion: UInt64)
    /// The configured schema version is lower than the file's.
    case invalidSchemaVersion(fileVersion: UInt64, configuredVersion: UInt64)
    /// An object of `type` whose primary key has this `value` (its `description`) already exists. The message
    /// also names the primary key property when the type is a model class of this process.
    case primaryKeyExists(type: String, value: String)
    /// The primary key of a managed object cannot change.
    case primaryKeyChange(type: String, property: String)
    /// The operation needs a write transaction.
    case notInWriteTransaction
    /// The Realm or object was used from a thread or actor other than the one it is confined to.
    case wrongThread
    /// A String or Data value exceeds 16 MiB.
    case valueTooLarge(type: String, property: String, size: Int)
    /// A value is not valid for the property.
    case invalidValue(type: String, property: String, reason: String)
    /// The object was deleted or its Realm invalidated.
    case invalidatedObject
    /// Too many versions are pinned.
    case maximumActiveVersions(limit: UInt)
    /// The Realm was opened read-only.
    case readOnly(path: String)
    /// The write lock could not be acquired in time.
    case lockTimeout(path: String)
    /// The device holding the file ran out of space (`ENOSPC`) or the user's quota is exhausted (`EDQUOT`). The
    /// write transaction that hit it was rolled back whole; the Realm stays usable, and a later write succeeds
    /// once space is freed.
    case diskFull(path: String)
    /// A system call on the file failed. `operation` names the call (`pwrite`, `fdatasync`, `open`...) and `code`
    /// is its `errno` (`EIO` for a failing device). A write transaction that hit it was rolled back whole.
    case ioError(path: String, operation: String, code: Int32)
    /// The shared reader table of the file's `.lock` file has no free slot: `capacity` processes already have the
    /// file open. Opening again after one of them closes it succeeds.
    case readerTableFull(path: String, capacity: Int)
    /// The operation needs the file unused (``Realm/deleteFiles(for:)``), and a Realm in this or another
    /// process has it open.
    case fileInUse(path: String)
    /// A query could not be parsed or does not fit the schema.
    case invalidQuery(query: String, position: Int, reason: String)

    /// " (primary key property 'id')." for a model class this process knows, "." otherwise: the SDK's sentence
    /// plus the property, which the case does not carry.
    private static func primaryKeyNote(_ type: String) -> String {
        guard let property = SchemaRegistry.shared.primaryKeyProperty(ofClassNamed: type) else { return "." }
        return " (primary key property '\(property)')."
    }

    /// A message naming what failed and where.
    public var description: String {
        switch self {
        case .fileAccess(let path, let reason): "cannot access \(path): \(reason)"
        case .fileNotFound(let path): "file not found: \(path)"
        case .incompatibleFile(let path, let reason): "\(path) is not a usable Strata file: \(reason)"
        case .schemaMismatch(let differences):
            "the file's schema differs from the models (raise schemaVersion and migrate):\n- "
                + differences.joined(separator: "\n- ")
        case .migrationRequired(let file, let configured):
            "migration required: the schema changed but schemaVersion is \(configured) (file: \(file))"
        case .invalidSchemaVersion(let file, let configured):
            "schemaVersion \(configured) is lower than the file's schema version \(file)"
        case .primaryKeyExists(let type, let value):
            "Attempting to create an object of type '\(type)' with an existing primary key value '\(value)'"
                + Self.primaryKeyNote(type)
        case .primaryKeyChange(let type, let property):
            "the primary key \(type).\(property) of a managed object cannot be changed"
        case .notInWriteTransaction: "this operation needs a write transaction (call it inside realm.write { })"
        case .wrongThread: "a Realm or object was used outside the thread or actor it is confined to"
        case .valueTooLarge(let type, let property, let size):
            "\(type).\(property): value of \(size) bytes exceeds the limit of 16777216 bytes"
        case .invalidValue(let type, let property, let reason):
            property.isEmpty ? "\(type): \(reason)" : "\(type).\(property): \(reason)"
        case .invalidatedObject: "the object was deleted or its Realm invalidated"
        case .maximumActiveVersions(let limit):
            "more than \(limit) versions are pinned (maximumNumberOfActiveVersions)"
        case .readOnly(let path): "\(path) is open read-only"
        case .lockTimeout(let path): "timed out waiting for the write lock of \(path)"
        case .diskFull(let path): "no space left on the device holding \(path): what needed the space was rolled back"
        case .ioError(let path, let operation, let code):
            "I/O error in \(operation) on \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .readerTableFull(let path, let capacity):
            "cannot open \(path): \(capacity) processes already have it open (the reader table of \(path).lock is full)"
        case .fileInUse(let path):
            "\(path) is open in this or another process: release every Realm, object and collection that uses it first"
        case .invalidQuery(let query, let position, let reason):
            "invalid query at \(position) in \"\(query)\": \(reason)"
        }
    }

    /// The full message (``description``), so that `localizedDescription` reads it too.
    public var errorDescription: String? { description }

    /// Maps a storage-engine error to the Realm error a user can act on.
    static func storage(_ error: StorageError, path: String) -> Realm.Error {
        switch error {
        case .fileNotFound(let path): .fileNotFound(path: path)
        case .incompatibleFile(let path, let reason): .incompatibleFile(path: path, reason: reason)
        case .corruptPage(let path, let page, let reason):
            .incompatibleFile(path: path, reason: "page \(page): \(reason)")
        case .corruptValue(let reason): .incompatibleFile(path: path, reason: reason)
        case .readOnly(let path): .readOnly(path: path)
        case .lockTimeout(let path): .lockTimeout(path: path)
        case .fileInUse(let path): .fileInUse(path: path)
        case .diskFull(let path): .diskFull(path: path)
        case .io(let path, let operation, let code): .ioError(path: path, operation: operation, code: code)
        case .readerTableFull(let path, let capacity): .readerTableFull(path: path, capacity: capacity)
        default: .fileAccess(path: path, reason: error.description)
        }
    }
}

/// Storage errors reach users through ``Store`` and inside Realm errors' messages: `localizedDescription` reads
/// the full message too. (The conformance lives here because StrataStorage does not use Foundation.)
extension StorageError: LocalizedError {
    /// The full message (``StorageError/description``).
    public var errorDescription: String? { description }
}
