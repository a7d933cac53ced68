#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Exit statuses of every command (documented in the usage text).
enum ExitStatus {
    /// Success.
    static let ok: Int32 = 0
    /// Damage found, or the operation failed.
    static let failure: Int32 = 1
    /// Bad usage, or the file cannot be opened.
    static let usage: Int32 = 2
}

/// Writes `text` and a newline to standard error, unbuffered.
func standardError(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Prints `strata: message` to standard error and exits with `status`.
func fail(_ message: String, status: Int32 = ExitStatus.failure) -> Never {
    standardError("strata: \(message)")
    exit(status)
}

/// Bad usage: the message, a pointer to the help, exit status 2.
func usageError(_ message: String) -> Never {
    fail("\(message)\nRun `strata help` for the commands and their options.", status: ExitStatus.usage)
}

/// `1536` as `1.5 KiB`.
func formatBytes(_ count: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(count) B" : "\((value * 10).rounded() / 10) \(units[unit])"
}

/// `text` padded with spaces to `width` characters.
func padded(_ text: String, to width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// Bytes as a quoted string when they are printable ASCII, else as hex (at most 64 bytes shown).
func printable(_ bytes: [UInt8]) -> String {
    if !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
    }
    let digits = Array("0123456789abcdef")
    var text = "0x"
    for byte in bytes.prefix(64) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 15)])
    }
    return bytes.count > 64 ? text + "… (\(bytes.count) bytes)" : text
}
