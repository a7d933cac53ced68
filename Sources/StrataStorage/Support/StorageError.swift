/// An error reported by the storage engine.
///
/// Every error names the file involved (when there is one) and says what went wrong in terms a user can act on.
/// A corrupt, truncated or foreign file always produces ``incompatibleFile(path:reason:)`` or
/// ``corruptPage(path:page:reason:)``; the engine never crashes or reads outside the file because of bad data.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file does not exist and the options did not ask to create it.
    case fileNotFound(path: String)
    /// A system call failed. `code` is the `errno` value.
    case io(path: String, operation: String, code: Int32)
    /// The device ran out of space while writing. The commit that hit it was rolled back.
    case diskFull(path: String)
    /// The file is not a Strata file, was written by an incompatible format version, or both meta pages are damaged.
    case incompatibleFile(path: String, reason: String)
    /// A page reachable from the current version failed validation.
    case corruptPage(path: String, page: UInt32, reason: String)
    /// A stored value failed validation (a row whose lengths and offsets do not hold together): the file is
    /// damaged. Raised by code that decodes values (``RowView``), which does not know the file; its caller does.
    case corruptValue(reason: String)
    /// A key is longer than the page size allows.
    case keyTooLarge(size: Int, limit: Int)
    /// A value is longer than the engine allows.
    case valueTooLarge(size: Int, limit: Int)
    /// The store was opened read-only.
    case readOnly(path: String)
    /// The write lock could not be acquired within the configured timeout.
    case lockTimeout(path: String)
    /// The shared reader table in the lock file has no free slot for another process.
    case readerTableFull(path: String, capacity: Int)
    /// The operation needs the file unused, and a handle in this or another process has it open (or is opening it).
    case fileInUse(path: String)
    /// An argument is outside the range the call accepts.
    case invalidArgument(String)
    /// A positional operation used an index outside the tree.
    case indexOutOfRange(index: Int, count: Int)
    /// The operation needs a tree of another kind (keyed versus list).
    case wrongTreeKind(expected: TreeKind, actual: TreeKind)
    /// The tree handle is no longer valid: its tree, or the entry holding it, was removed in this transaction.
    case treeNotFound(String)
    /// The transaction already ended, or an earlier error in it made it unusable; it can only be aborted.
    case transactionClosed
    /// The task was cancelled before its write transaction started (at the call, or while waiting for the write
    /// lock); nothing was written and the lock is not held. ``Store/asyncWrite(isolation:_:)`` reports it as
    /// `CancellationError`.
    case cancelled
    /// The store is closed.
    case closed
    /// An encryption key was given, but the platform's cryptography cannot be used here (on Linux: OpenSSL's
    /// `libcrypto` is not installed), or failed.
    case encryptionUnavailable(reason: String)
    /// The file is encrypted and was opened without ``StoreOptions/encryptionKey``. Nothing was written.
    case encryptionKeyRequired(path: String)
    /// An ``StoreOptions/encryptionKey`` was given, but the file is a plain (unencrypted) Strata file. Nothing was
    /// written; open it without a key, or write an encrypted copy of it.
    case notEncrypted(path: String)
    /// The file is encrypted under another key than ``StoreOptions/encryptionKey``. Nothing was written.
    case wrongEncryptionKey(path: String)

    /// A human-readable explanation naming the file and what went wrong.
    public var description: String {
        switch self {
        case .fileNotFound(let path): "file not found: \(path)"
        case .io(let path, let op, let code): "I/O error in \(op) on \(path): \(Errno.describe(code)) (errno \(code))"
        case .diskFull(let path): "disk full while writing \(path); the commit was rolled back"
        case .incompatibleFile(let path, let reason): "\(path) is not a valid Strata file: \(reason)"
        case .corruptPage(let path, let page, let reason): "\(path) is damaged at page \(page): \(reason)"
        case .corruptValue(let reason): "a stored value is damaged: \(reason)"
        case .keyTooLarge(let size, let limit): "key of \(size) bytes exceeds the limit of \(limit) bytes"
        case .valueTooLarge(let size, let limit): "value of \(size) bytes exceeds the limit of \(limit) bytes"
        case .readOnly(let path): "\(path) is open read-only"
        case .lockTimeout(let path): "timed out waiting for the write lock of \(path)"
        case .readerTableFull(let path, let capacity):
            "the reader table of \(path).lock is full (\(capacity) processes have the file open)"
        case .fileInUse(let path): "\(path) is in use: this or another process has it open"
        case .invalidArgument(let text): "invalid argument: \(text)"
        case .indexOutOfRange(let index, let count): "index \(index) is out of range for a tree of \(count) elements"
        case .wrongTreeKind(let expected, let actual): "operation needs a \(expected) tree, but the tree is \(actual)"
        case .treeNotFound(let name): "tree \(name) does not exist in this transaction"
        case .transactionClosed: "the transaction has ended or failed and can only be aborted"
        case .cancelled: "the task was cancelled before its write transaction started"
        case .closed: "the store is closed"
        case .encryptionUnavailable(let reason): "encryption is unavailable: \(reason)"
        case .encryptionKeyRequired(let path): "\(path) is encrypted: open it with its encryption key"
        case .notEncrypted(let path):
            "\(path) is not encrypted, but an encryption key was given: open it without a key"
        case .wrongEncryptionKey(let path): "\(path) is encrypted with another key than the one given"
        }
    }
}
