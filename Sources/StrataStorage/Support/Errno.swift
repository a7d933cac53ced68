#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Helpers around `errno` for the POSIX layer.
enum Errno {
    /// The system's text for an error number.
    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "unknown error" }
        return String(cString: text)
    }

    /// Builds the storage error for a failed call, mapping `ENOSPC`/`EDQUOT` to ``StorageError/diskFull(path:)``.
    static func error(_ operation: String, path: String, code: Int32 = errno) -> StorageError {
        if code == ENOSPC || code == EDQUOT { return .diskFull(path: path) }
        if code == ENOENT { return .fileNotFound(path: path) }
        if code == EROFS { return .readOnly(path: path) }
        return .io(path: path, operation: operation, code: code)
    }
}
