public import Foundation

/// The SDK's error codes on ``Realm/Error``: `error.code` and `catch` patterns that match by code.
///
/// The SDK's `Realm.Error` is a struct whose code-named static members (`Realm.Error.fileNotFound`) match in
/// `catch` clauses through `~=`; Strata's is an enum whose cases carry the path, type and property involved
/// (see Documentation/Errors.md). Both spellings meet here:
///
/// ```swift
/// do {
///     _ = try Realm(configuration: Realm.Configuration(fileURL: url, readOnly: true))
/// } catch Realm.Error.fileNotFound {  // the case, whatever its path
///     createFile()
/// } catch Realm.Error.filePermissionDenied {  // a code constant: matches by code
///     askForAccess()
/// } catch let error as Realm.Error where error.code == .fileAccess {
///     report(error)
/// }
/// ```
///
/// A name that is a case (`fileAccess`, `fileNotFound`, `schemaMismatch`) matches that case only in `catch
/// Realm.Error.name`; `catch Realm.Error.Code.name` matches every error with that code (a damaged file,
/// ``RealmError/incompatibleFile(path:reason:)``, has code `fileAccess` as in the SDK).
extension RealmError {
    /// The SDK's error codes (`Realm.Error.Code`). An error's ``RealmError/code`` is one of them.
    ///
    /// A struct with one constant per code rather than an enum, so that `catch Realm.Error.Code.fileAccess` is an
    /// expression pattern matched through ``~=(_:_:)`` (an enum's case would be a pattern that cannot match an
    /// `any Error`); `switch error.code { case .fileNotFound: … }` works as with an enum.
    public struct Code: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The code's number.
        public let rawValue: Int

        /// A code from its number.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Any other failure: a misuse (no write transaction, wrong thread, invalid value, invalid query, a
        /// primary key that exists), a lock timeout or too many pinned versions.
        public static let fail = Code(rawValue: 1)
        /// The file could not be opened or is not a usable Strata file (damaged, truncated, foreign).
        public static let fileAccess = Code(rawValue: 2)
        /// The process may not read or write the file (`EACCES`, `EPERM`).
        public static let filePermissionDenied = Code(rawValue: 3)
        /// The file exists where a new one was to be written (`writeCopy` to an existing file).
        public static let fileExists = Code(rawValue: 4)
        /// The file does not exist.
        public static let fileNotFound = Code(rawValue: 5)
        /// The file's format needs an upgrade this version cannot make.
        public static let fileFormatUpgradeRequired = Code(rawValue: 6)
        /// The file's `.lock` file cannot be shared: its reader table is full, or another process holds the
        /// file where it must be unused.
        public static let incompatibleLockFile = Code(rawValue: 8)
        /// The process ran out of address space for mapping the file.
        public static let addressSpaceExhausted = Code(rawValue: 9)
        /// The file's schema does not match the models: a migration is needed or the schema version is lower
        /// than the file's.
        public static let schemaMismatch = Code(rawValue: 10)
        /// A synced file opened without sync (kept for the SDK's spelling; Strata files are never that).
        public static let incompatibleSyncedFile = Code(rawValue: 12)
        /// A system call on the file failed (an I/O error, a full disk).
        public static let fileOperationFailed = Code(rawValue: 13)

        /// Every code, in number order.
        public static let allCases: [Code] = [
            .fail, .fileAccess, .filePermissionDenied, .fileExists, .fileNotFound, .fileFormatUpgradeRequired,
            .incompatibleLockFile, .addressSpaceExhausted, .schemaMismatch, .incompatibleSyncedFile,
            .fileOperationFailed,
        ]

        /// The code's name, as written in Swift (`fileNotFound`).
        public var description: String {
            switch self {
            case .fail: "fail"
            case .fileAccess: "fileAccess"
            case .filePermissionDenied: "filePermissionDenied"
            case .fileExists: "fileExists"
            case .fileNotFound: "fileNotFound"
            case .fileFormatUpgradeRequired: "fileFormatUpgradeRequired"
            case .incompatibleLockFile: "incompatibleLockFile"
            case .addressSpaceExhausted: "addressSpaceExhausted"
            case .schemaMismatch: "schemaMismatch"
            case .incompatibleSyncedFile: "incompatibleSyncedFile"
            case .fileOperationFailed: "fileOperationFailed"
            default: "code \(rawValue)"
            }
        }

        /// Whether `error` is a ``Realm/Error`` with this code: what makes `catch Realm.Error.Code.fileAccess`
        /// and `catch Realm.Error.fileOperationFailed` match.
        public static func ~= (code: Code, error: any Swift.Error) -> Bool {
            (error as? RealmError)?.code == code
        }
    }

    /// The SDK's code for this error (see ``Code``).
    public var code: Code {
        switch self {
        case .fileAccess(_, let reason):
            reason.contains("Permission denied") || reason.contains("Operation not permitted")
                ? .filePermissionDenied : reason.contains("already exists") ? .fileExists : .fileAccess
        case .fileNotFound: .fileNotFound
        case .incompatibleFile: .fileAccess
        case .schemaMismatch, .migrationRequired, .invalidSchemaVersion: .schemaMismatch
        case .ioError(_, _, let errno):
            errno == EACCES || errno == EPERM
                ? .filePermissionDenied
                : errno == EEXIST
                    ? .fileExists
                    : errno == ENOENT ? .fileNotFound : .fileOperationFailed
        case .diskFull: .fileOperationFailed
        case .readerTableFull, .fileInUse: .incompatibleLockFile
        case .readOnly, .lockTimeout, .primaryKeyExists, .primaryKeyChange, .notInWriteTransaction, .wrongThread,
            .valueTooLarge, .invalidValue, .invalidatedObject, .maximumActiveVersions, .invalidQuery:
            .fail
        }
    }

    /// The file the error is about, as the SDK's `fileURL`; nil for errors that concern no file.
    public var fileURL: URL? {
        switch self {
        case .fileAccess(let path, _), .fileNotFound(let path), .incompatibleFile(let path, _), .readOnly(let path),
            .lockTimeout(let path), .diskFull(let path), .ioError(let path, _, _), .readerTableFull(let path, _),
            .fileInUse(let path):
            URL(fileURLWithPath: path)
        default: nil
        }
    }

    /// Matches any error with code ``Code/fail`` in `catch Realm.Error.fail`, as in the SDK.
    public static let fail = Code.fail
    /// Matches errors with code ``Code/filePermissionDenied`` in `catch Realm.Error.filePermissionDenied`.
    public static let filePermissionDenied = Code.filePermissionDenied
    /// Matches errors with code ``Code/fileExists`` in `catch Realm.Error.fileExists`.
    public static let fileExists = Code.fileExists
    /// Matches errors with code ``Code/fileFormatUpgradeRequired`` in `catch Realm.Error.fileFormatUpgradeRequired`.
    public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
    /// Matches errors with code ``Code/incompatibleLockFile`` in `catch Realm.Error.incompatibleLockFile`.
    public static let incompatibleLockFile = Code.incompatibleLockFile
    /// Matches errors with code ``Code/addressSpaceExhausted`` in `catch Realm.Error.addressSpaceExhausted`.
    public static let addressSpaceExhausted = Code.addressSpaceExhausted
    /// Matches errors with code ``Code/incompatibleSyncedFile`` in `catch Realm.Error.incompatibleSyncedFile`.
    public static let incompatibleSyncedFile = Code.incompatibleSyncedFile
    /// Matches errors with code ``Code/fileOperationFailed`` (an I/O error, a full disk) in
    /// `catch Realm.Error.fileOperationFailed`.
    public static let fileOperationFailed = Code.fileOperationFailed
}
