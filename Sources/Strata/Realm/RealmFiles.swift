public import Foundation
import StrataStorage

/// The SDK's file members of the Realm handle: a file's schema version without opening a Realm, a copy written
/// for another configuration, and seed files (``Realm/Configuration/seedFilePath``, copied in by ``Realm``'s
/// opening).
extension Realm {
    /// The schema version stored in the file at `fileURL`, read without opening a Realm (no models are checked,
    /// nothing is migrated), as the SDK's `schemaVersionAtURL(_:encryptionKey:)`. A file without object types has
    /// version 0.
    ///
    /// ```swift
    /// let version = try Realm.schemaVersionAtURL(url)
    /// ```
    ///
    /// Throws ``RealmError/fileNotFound(path:)`` for a missing file, ``RealmError/incompatibleFile(path:reason:)`` for
    /// one that is not a usable Strata file, and ``RealmError/fileAccess(path:reason:)`` when `encryptionKey` does not
    /// fit the file (see ``Realm/Configuration/encryptionKey``).
    public static func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
        let path = fileURL.path
        guard FileManager.default.fileExists(atPath: path) else { throw Realm.Error.fileNotFound(path: path) }
        do {
            let store = try Store.open(
                path: path,
                options: StoreOptions(
                    readOnly: true, createIfMissing: false, encryptionKey: encryptionKey.map { Array($0) }))
            let snapshot = try store.read()
            return try readSchema(transaction: nil, snapshot: snapshot, path: path).version ?? 0
        } catch let error as StorageError {
            throw Realm.Error.storage(error, path: path)
        }
    }

    /// Writes a compacted copy of the Realm's newest committed version to `configuration`'s file, which must not
    /// exist, as the SDK's `writeCopy(configuration:)`; open the copy with that configuration (encrypted with its
    /// ``Configuration/encryptionKey``, plain without one). An in-memory
    /// configuration is an error, as in the SDK (there is no file to write): it throws
    /// ``RealmError/fileAccess(path:reason:)`` and writes nothing. Other errors as
    /// ``writeCopy(toFile:encryptionKey:)``'s.
    public func writeCopy(configuration: Configuration) throws {
        guard configuration.inMemoryIdentifier == nil else {
            throw Realm.Error.fileAccess(
                path: configuration.path,
                reason: "writeCopy(configuration:) writes a file: the configuration must have a fileURL, not an "
                    + "inMemoryIdentifier")
        }
        try writeCopy(
            toFile: configuration.fileURL ?? Configuration.defaultFileURL, encryptionKey: configuration.encryptionKey)
    }

    /// The object of the stored class `typeName` whose primary key is `key`, or nil, as the SDK's
    /// `dynamicObject(ofType:forPrimaryKey:)`: for tools that know the classes of the file only.
    ///
    /// ```swift
    /// let ann = realm.dynamicObject(ofType: "Person", forPrimaryKey: 1)
    /// print(ann?["name"] as? String ?? "")
    /// ```
    ///
    /// Traps, naming the class, when the file has no class `typeName`, the class has no primary key, or `key`
    /// is not a value of its type (as ``object(ofType:forPrimaryKey:)`` does for a model class).
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        checkThread()
        do {
            let binding = try dynamicBinding(typeName)
            guard let index = binding.table.primaryKeyIndex else { fatalError("\(typeName) has no primary key") }
            let info = binding.table.infos[index]
            guard let stored = StoredValueConversion.stored(from: key, as: info),
                let encoded = KeyEncoding.primaryKey(stored)
            else {
                fatalError(
                    "\(Realm.Error.invalidValue(type: typeName, property: binding.table.schema.properties[index].columnName, reason: "\(type(of: key)) is not a valid primary key value"))"
                )
            }
            guard let objectKey = try lookupPrimaryKey(binding, encoded) else { return nil }
            return object(binding, key: objectKey) as? DynamicObject
        } catch {
            fatalError("dynamicObject(ofType:forPrimaryKey:): \(error)")
        }
    }

    /// Copies `configuration`'s seed file to its file when that file does not exist yet (the SDK's
    /// `seedFilePath`); an existing file is kept as it is.
    static func copySeedFile(for configuration: Configuration) throws(Realm.Error) {
        guard let seed = configuration.seedFilePath, configuration.inMemoryIdentifier == nil else { return }
        let target = configuration.fileURL ?? Configuration.defaultFileURL
        guard !FileManager.default.fileExists(atPath: target.path) else { return }
        guard FileManager.default.fileExists(atPath: seed.path) else { throw .fileNotFound(path: seed.path) }
        do {
            try FileManager.default.copyItem(at: seed, to: target)
        } catch {
            throw .fileAccess(path: target.path, reason: "cannot copy the seed file \(seed.path): \(error)")
        }
    }

    /// Writes a compacted copy of the Realm's newest committed version to `fileURL`, which must not exist, as the
    /// SDK's `writeCopy(toFile:encryptionKey:)`: encrypted with `encryptionKey` (64 bytes, as
    /// ``Configuration/encryptionKey``), or plain when it is nil, whether this Realm's file is encrypted or not.
    /// So a copy encrypts a plain Realm, decrypts an encrypted one or re-keys it.
    ///
    /// ```swift
    /// try realm.writeCopy(toFile: backupURL, encryptionKey: newKey)
    /// ```
    ///
    /// A key of another length throws ``RealmError/fileAccess(path:reason:)``, as opening does, and writes nothing.
    /// Throws the file's ``damage`` if a read found it damaged; damage the copy runs into is thrown (and
    /// recorded) as ``RealmError/incompatibleFile(path:reason:)`` naming this Realm's file and the page.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        try checkThreadThrowing()
        try throwIfDamaged()
        guard !FileManager.default.fileExists(atPath: fileURL.path) else {
            throw Realm.Error.fileAccess(path: fileURL.path, reason: "the file already exists")
        }
        do {
            _ = try store.compact(to: fileURL.path, encryptionKey: encryptionKey.map { Array($0) })
        } catch {
            if let damage = damage(in: error) {
                recordFileDamage(damage, cause: error)
                throw damage
            }
            throw Realm.Error.storage(error, path: fileURL.path)
        }
    }

    /// Deletes the files of `configuration`'s Realm: the file, its commit log and its lock file. Returns whether
    /// the file existed.
    ///
    /// As in the Realm SDK, a file that is open cannot be deleted: while a Realm in this or another process uses
    /// it (frozen objects and collections included), this throws ``RealmError/fileInUse(path:)`` and deletes
    /// nothing. Release every Realm of the file first. An in-memory Realm has no files: this returns false, or
    /// throws `fileInUse` while a Realm with that identifier is open (its data lives until the last one goes).
    @discardableResult
    public static func deleteFiles(for configuration: Configuration) throws -> Bool {
        if let identifier = configuration.inMemoryIdentifier {
            if Store.isInMemoryStoreOpen(identifier: identifier) {
                throw Realm.Error.fileInUse(path: configuration.path)
            }
            return false
        }
        let path = (configuration.fileURL ?? Configuration.defaultFileURL).path
        do {
            return try Store.deleteFiles(path: path)
        } catch {
            throw Realm.Error.storage(error, path: path)
        }
    }

    /// Whether the file of `configuration` exists.
    public static func fileExists(for configuration: Configuration) -> Bool {
        guard configuration.inMemoryIdentifier == nil else { return false }
        return FileManager.default.fileExists(atPath: (configuration.fileURL ?? Configuration.defaultFileURL).path)
    }
}
