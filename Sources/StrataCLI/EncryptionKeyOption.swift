import Foundation

// The key of an encrypted file comes from the environment (`STRATA_ENCRYPTION_KEY`, 128 hex characters) or from a
// key file (`--key-file PATH`: the 64 bytes, raw or as 128 hex characters), never from a command-line argument:
// other users of the machine can read every process's arguments (`ps`), not its environment or a private file.

/// The name of the environment variable that holds the key.
let encryptionKeyVariable = "STRATA_ENCRYPTION_KEY"

/// The key every command opens its file with: nil when neither source gives one. Resolved on first use; a key
/// that is malformed, or given twice, ends the process with status 2 before any file is opened.
let fileEncryptionKey: [UInt8]? = {
    let keyFile = CommandLineArguments(Array(CommandLine.arguments.dropFirst())).options["--key-file"]
    let variable = ProcessInfo.processInfo.environment[encryptionKeyVariable].flatMap { $0.isEmpty ? nil : $0 }
    switch (variable, keyFile) {
    case (nil, nil): return nil
    case (.some, .some):
        usageError("give the encryption key once: in \(encryptionKeyVariable) or with --key-file, not both")
    case (let text?, nil):
        guard let key = hexKey(text) else {
            usageError(
                "\(encryptionKeyVariable) must hold the 64-byte key as 128 hex characters, not \(text.count) "
                    + "characters")
        }
        return key
    case (nil, let path?):
        guard let data = FileManager.default.contents(atPath: path) else {
            fail("cannot read the key file \(path)", status: ExitStatus.usage)
        }
        if data.count == 64 { return Array(data) }
        guard let key = hexKey(String(decoding: data, as: UTF8.self)) else {
            fail(
                "the key file \(path) holds \(data.count) bytes: it must hold the 64-byte key, raw or as 128 hex "
                    + "characters", status: ExitStatus.usage)
        }
        return key
    }
}()

/// The 64 bytes written as 128 hex digits in `text` (surrounding white space, such as a file's last newline,
/// ignored), or nil.
private func hexKey(_ text: String) -> [UInt8]? {
    let digits = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
    guard digits.count == 128 else { return nil }
    var key: [UInt8] = []
    key.reserveCapacity(64)
    for index in stride(from: 0, to: 128, by: 2) {
        guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
        key.append(high << 4 | low)
    }
    return key
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}
