import Foundation
import Strata
import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Every command opens its file read-only and never creates one (`load` excepted), with the encryption key given in
// the environment or a key file (EncryptionKeyOption.swift). A file that cannot be opened ends the process
// with exit status 2 and one line saying why, in the user's terms: missing, not readable, not a Strata file,
// locked.

/// Ends the process with status 2 unless `path` names a readable regular file.
func checkReadableFile(_ path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else {
        let code = errno
        if code == ENOENT || code == ENOTDIR { fail("cannot open \(path): no such file", status: ExitStatus.usage) }
        fail("cannot open \(path): \(String(cString: strerror(code)))", status: ExitStatus.usage)
    }
    if (info.st_mode & S_IFMT) == S_IFDIR {
        fail("cannot open \(path): it is a directory, not a Strata file", status: ExitStatus.usage)
    }
    if access(path, R_OK) != 0 {
        fail(
            "cannot open \(path): permission denied (the file is not readable by this user)", status: ExitStatus.usage)
    }
}

/// One line explaining why `path` could not be opened.
func openFailure(_ error: StorageError, path: String) -> String {
    switch error {
    case .fileNotFound: "cannot open \(path): no such file"
    case .incompatibleFile(_, let reason): "cannot open \(path): \(reason)"
    case .corruptPage(_, let page, let reason): "cannot open \(path): damaged at page \(page): \(reason)"
    case .lockTimeout: "cannot open \(path): it is locked by another process; try again when that process is done"
    case .readerTableFull(_, let capacity):
        "cannot open \(path): \(capacity) processes already have it open (the reader table of \(path).lock is full)"
    case .io(_, let operation, let code) where code == EACCES || code == EPERM:
        "cannot open \(path): permission denied (\(operation))"
    case .io(_, _, let code) where code == EAGAIN || code == EWOULDBLOCK:
        "cannot open \(path): it is locked by another process; try again when that process is done"
    case .io(_, let operation, let code): "cannot open \(path): \(String(cString: strerror(code))) (\(operation))"
    case .encryptionKeyRequired:
        "cannot open \(path): it is encrypted: give its key in \(encryptionKeyVariable) (128 hex characters) or "
            + "with --key-file PATH"
    case .wrongEncryptionKey: "cannot open \(path): it is encrypted with another key than the one given"
    case .notEncrypted: "cannot open \(path): it is not encrypted: give no encryption key"
    default: "cannot open \(path): \(error)"
    }
}

/// Opens an existing file read-only at the storage level.
func openStore(_ path: String) -> Store {
    checkReadableFile(path)
    do {
        return try Store.open(
            path: path, options: StoreOptions(readOnly: true, createIfMissing: false, encryptionKey: fileEncryptionKey))
    } catch {
        fail(openFailure(error, path: path), status: ExitStatus.usage)
    }
}

/// Opens an existing file as a Realm without models: its classes are the ones stored in the file, read through
/// `DynamicObject`. Read-only opens write nothing (no schema registration, no migration, no backlink rebuild).
///
/// A configuration names the schema version its models are at, and a file at a higher version is refused
/// (`invalidSchemaVersion`), as for any app whose models are older than the file. The tool has no models, so
/// nothing needs migrating: it opens the file at the version the file carries, which the refusal names. A file
/// migrated again between the two opens (by an app running meanwhile) names a newer version: the open follows it.
func openRealm(_ path: String, readOnly: Bool = true) throws -> Realm {
    var configuration = Realm.Configuration(
        fileURL: URL(fileURLWithPath: path), encryptionKey: fileEncryptionKey.map { Data($0) }, readOnly: readOnly)
    while true {
        do {
            return try Realm(configuration: configuration)
        } catch Realm.Error.invalidSchemaVersion(let fileVersion, let configured) where fileVersion > configured {
            configuration.schemaVersion = fileVersion
        }
    }
}

/// Opens `path` as a Realm (see ``openRealm(_:)``), ending the process when that fails: with status 1 when the
/// storage engine opened the file but the object layer found it damaged (its schema unreadable), 2 otherwise.
func openRealmOrExit(_ path: String) -> (store: Store, realm: Realm) {
    let store = openStore(path)
    do {
        return (store, try openRealm(path))
    } catch Realm.Error.incompatibleFile(let file, let reason) {
        fail(
            realmFailure(Realm.Error.incompatibleFile(path: file, reason: reason), path: path),
            status: ExitStatus.failure)
    } catch {
        fail(realmFailure(error, path: path), status: ExitStatus.usage)
    }
}

/// One line explaining why the object layer could not read `path`.
func realmFailure(_ error: any Error, path: String) -> String {
    switch error {
    case Realm.Error.incompatibleFile(_, let reason): "cannot read the objects of \(path): \(reason)"
    case Realm.Error.fileNotFound: "cannot open \(path): no such file"
    default: "cannot read the objects of \(path): \(error)"
    }
}
