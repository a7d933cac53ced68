import Foundation
import Strata

// `dump --arg VALUE`: the values of `$0`, `$1`, … in a `--where` query. A shell hands every value over as text,
// so its type comes from how it is written, as a literal in the query would be (see `strata dump --help`).

/// The query argument `text` stands for: nil, a Bool, an Int, a Double, a Date, an ObjectId, a UUID, an array of
/// those (`{1, 2}`), or a String. Ends the process with a usage error when `text` is a malformed date, ObjectId,
/// UUID or list.
func parseQueryArgument(_ text: String) -> Any? {
    do {
        return try queryArgument(text)
    } catch {
        usageError("--arg \(text): \(error.reason)")
    }
}

/// Why an `--arg` value is malformed.
struct ArgumentError: Error {
    let reason: String
}

func queryArgument(_ text: String) throws(ArgumentError) -> Any? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    switch trimmed.lowercased() {
    case "null", "nil": return nil
    case "true": return true
    case "false": return false
    default: break
    }
    if let quote = trimmed.first, quote == "'" || quote == "\"" {
        guard trimmed.count >= 2, trimmed.last == quote else {
            throw ArgumentError(reason: "the string is not closed (write \(quote)text\(quote))")
        }
        return String(trimmed.dropFirst().dropLast())
    }
    if trimmed.hasPrefix("{") {
        guard trimmed.hasSuffix("}") else { throw ArgumentError(reason: "the list is not closed with }") }
        let elements = try listElements(String(trimmed.dropFirst().dropLast()))
        return try elements.map { (element) throws(ArgumentError) in try queryArgument(element) as Any }
    }
    if let typed = try typedValue(trimmed) { return typed }
    if let date = try DateText.parse(trimmed) { return date }
    if trimmed.wholeMatch(of: /[+-]?[0-9]+/) != nil, let int = Int(trimmed) { return int }
    if trimmed.wholeMatch(of: /[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?/) != nil, let double = Double(trimmed)
    {
        return double
    }
    return text
}

/// `oid(…)` and `uuid(…)`, quoted or not.
private func typedValue(_ text: String) throws(ArgumentError) -> Any? {
    guard let match = text.wholeMatch(of: /(?i)(oid|uuid)\(\s*['"]?([^'")]*)['"]?\s*\)/) else { return nil }
    let value = String(match.2)
    if match.1.lowercased() == "oid" {
        guard let id = try? ObjectId(string: value) else {
            throw ArgumentError(reason: "'\(value)' is not an ObjectId (24 hexadecimal digits)")
        }
        return id
    }
    guard let uuid = UUID(uuidString: value) else { throw ArgumentError(reason: "'\(value)' is not a UUID") }
    return uuid
}

/// The comma-separated elements of a list's inside; commas in quotes belong to their string.
private func listElements(_ inside: String) throws(ArgumentError) -> [String] {
    guard !inside.trimmingCharacters(in: .whitespaces).isEmpty else { return [] }
    var elements: [String] = []
    var current = ""
    var quote: Character?
    for character in inside {
        if let open = quote {
            if character == open { quote = nil }
        } else if character == "'" || character == "\"" {
            quote = character
        } else if character == "," {
            elements.append(current)
            current = ""
            continue
        } else if character == "{" || character == "}" {
            throw ArgumentError(reason: "lists cannot nest")
        }
        current.append(character)
    }
    guard quote == nil else { throw ArgumentError(reason: "a string in the list is not closed") }
    elements.append(current)
    return elements
}
