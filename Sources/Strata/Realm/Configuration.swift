public import Foundation
import StrataStorage

/// What to do when an object with the same primary key already exists.
public enum UpdatePolicy: Sendable {
    /// Fail with `Realm.Error.primaryKeyExists`.
    case error
    /// Update the existing object, writing only the properties whose values differ.
    case modified
    /// Update the existing object, writing every property.
    case all
}

extension Realm {
    /// How to open a Realm: which file, which models, and how to treat the file.
    public struct Configuration: Sendable {
        /// The file. Setting it clears ``inMemoryIdentifier``.
        public var fileURL: URL? {
            didSet { if fileURL != nil { inMemoryIdentifier = nil } }
        }
        /// A name shared by every in-memory Realm of this process with the same identifier; nothing is written to
        /// disk. Setting it clears ``fileURL``.
        public var inMemoryIdentifier: String? {
            didSet { if inMemoryIdentifier != nil { fileURL = nil } }
        }
        /// The 64-byte key the file is encrypted with, as the SDK's `encryptionKey` (a new file is encrypted with
        /// AES-256-GCM under a key derived from all 64 bytes; files made before that keep AES-256 under the first
        /// 32 bytes and HMAC-SHA-256 under the last 32), or nil for a plain file. A key of another length, a key for a
        /// plain file, no key for an encrypted file and a wrong key each fail the open with
        /// ``RealmError/fileAccess(path:reason:)`` whose reason says which; nothing is written. See
        /// Documentation/Encryption.md.
        public var encryptionKey: Data?
        /// Open without writing; the file must exist.
        public var readOnly: Bool
        /// The app's schema version; raise it when models change. Opening a file whose stored version is lower runs
        /// ``migrationBlock`` and converts the stored classes to the models; a higher one fails with
        /// ``RealmError/invalidSchemaVersion(fileVersion:configuredVersion:)``.
        public var schemaVersion: UInt64
        /// Called once, inside the migration's write transaction, when the file's schema version is lower than
        /// ``schemaVersion``. See ``Migration``.
        public var migrationBlock: MigrationBlock?
        /// Empty the file and start over with the models' schema when they differ from the stored schema (or the
        /// file's schema version is newer), instead of failing. The reset is one write transaction: other readers
        /// of the file keep their versions and the file is never missing.
        public var deleteRealmIfMigrationNeeded: Bool
        /// Asked on the first open of the file by this process, with the file's size and the bytes its live data
        /// needs; returning true rewrites the file compactly before the Realm opens. Skipped when another process
        /// has the file open.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
        /// The most versions this process may keep pinned on the file at once (each Realm, and later each frozen
        /// snapshot, pins the version it reads; a pinned version keeps its pages from reuse, so a forgotten old
        /// Realm makes the file grow); nil for no limit. A commit that would exceed it is rolled back and throws
        /// ``RealmError/maximumActiveVersions(limit:)``.
        public var maximumNumberOfActiveVersions: UInt?
        /// Called with what the Realm's file does and finds: its open, each commit, checkpoints, copy progress,
        /// migration progress, readers keeping old versions alive, damage (see ``Realm/Event``). Nil (the default)
        /// reports nothing and costs nothing measurable.
        ///
        /// The handler is called synchronously on the thread that caused the event (the committing thread, the
        /// opening thread, the thread whose read found damage), a commit's after the write lock is released. It must
        /// be quick — hand the event to a logger, a counter or a queue — and must not call back into the Realm.
        /// See Documentation/Events.md for feeding it to swift-log and swift-metrics.
        public var events: (@Sendable (Realm.Event) -> Void)?
        /// The model classes; nil registers types as the app uses them (Swift on Linux cannot list classes).
        public var objectTypes: [ObjectBase.Type]? {
            get { types?.types }
            set { types = newValue.map(TypeList.init) }
        }
        private var types: TypeList?

        /// A file copied to ``fileURL`` when the Realm is first opened and that file does not exist yet, as the
        /// SDK's `seedFilePath` (an app ships a prepared database); an existing file is never overwritten. A
        /// missing seed file makes the open throw ``RealmError/fileNotFound(path:)``. Ignored for in-memory Realms.
        public var seedFilePath: URL?

        /// Creates a configuration; every parameter has a default. `fileURL` nil and `inMemoryIdentifier` nil
        /// means the default file, `default.strata` in the current directory.
        public init(
            fileURL: URL? = nil, inMemoryIdentifier: String? = nil, encryptionKey: Data? = nil, readOnly: Bool = false,
            schemaVersion: UInt64 = 0,
            migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
            shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil,
            objectTypes: [ObjectBase.Type]? = nil, seedFilePath: URL? = nil, maximumNumberOfActiveVersions: UInt? = nil
        ) {
            self.seedFilePath = seedFilePath
            self.fileURL = inMemoryIdentifier == nil ? (fileURL ?? Configuration.defaultFileURL) : nil
            self.inMemoryIdentifier = inMemoryIdentifier
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.types = objectTypes.map(TypeList.init)
            self.maximumNumberOfActiveVersions = maximumNumberOfActiveVersions
        }

        /// `default.strata` in the current directory.
        public static var defaultFileURL: URL {
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.strata")
        }

        private static let defaultStorage = Locked(Configuration())

        /// The configuration `Realm()` uses. Reads and writes are thread-safe.
        public static var defaultConfiguration: Configuration {
            get { defaultStorage.withLock { $0 } }
            set { defaultStorage.withLock { $0 = newValue } }
        }

        /// The path of the file, or a description of the in-memory Realm.
        var path: String {
            if let inMemoryIdentifier { return "in-memory:\(inMemoryIdentifier)" }
            return (fileURL ?? Configuration.defaultFileURL).path
        }
    }
}

/// Metatypes are not `Sendable`; model classes are immutable type descriptions, so a list of them is safe to share.
struct TypeList: @unchecked Sendable {
    let types: [ObjectBase.Type]
}
