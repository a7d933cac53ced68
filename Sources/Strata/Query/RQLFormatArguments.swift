import Foundation
import StrataStorage

// Lexing of NSPredicate-style format arguments (`%@`, `%K`, `%d`, `%f`) and the rule that a query uses either
// those or `$n`, never both.

extension RQLParser {
    /// Records an argument of one style (`$n` when `dollar`, a `%` specifier otherwise) at `position`: NSPredicate
    /// numbers its `%@`s in order and the Realm Query Language its `$n`s explicitly, and a query mixing the two
    /// would number them inconsistently, so it is an error (as in the Realm SDK).
    mutating func noteArgumentStyle(dollar: Bool, at position: Int) throws(Realm.Error) {
        if dollar {
            if firstDollar == nil { firstDollar = position }
        } else if firstPercent == nil {
            firstPercent = position
        }
        if firstDollar != nil, firstPercent != nil {
            throw failure(
                "a query takes its arguments either as %@ (in order) or as $0, $1…, not both", at: position)
        }
    }

    /// The conversion letters NSPredicate accepts for a value, after an optional length modifier (`%ld`, `%lf`,
    /// `%lld`, `%hd`, `%qd`): each takes the next argument as it is.
    private static let valueConversions: Set<UInt8> = Set("@difuxXeEgGcCsS".utf8)

    /// An NSPredicate-style specifier at `at` (on its `%`): `%@`, `%d`, `%f`… become the next argument, `%K` the
    /// key path its argument names. Consumed, with `at` past it.
    mutating func formatSpecifier(at: inout Int) throws(Realm.Error) {
        let start = at
        at += 1
        while at < bytes.count, [UInt8(ascii: "l"), UInt8(ascii: "h"), UInt8(ascii: "q")].contains(bytes[at]) {
            at += 1
        }
        guard at < bytes.count else { throw failure("a format specifier such as %@ or %K must follow %", at: start) }
        let conversion = bytes[at]
        let specifier = String(decoding: bytes[start...at], as: UTF8.self)
        at += 1
        try noteArgumentStyle(dollar: false, at: start)
        let number = formatArguments
        formatArguments += 1
        if conversion == UInt8(ascii: "K"), at - start == 2 {
            try keyPathArgument(number, at: start)
        } else if Self.valueConversions.contains(conversion) {
            tokens.append((.argument(number), start))
        } else {
            throw failure("unknown format specifier \(specifier) (use %@ for a value or %K for a key path)", at: start)
        }
    }

    /// `%K`: the tokens of the key path that argument `number` names (`"name"`, `"owner.name"`, `"dogs.@count"`).
    private mutating func keyPathArgument(_ number: Int, at start: Int) throws(Realm.Error) {
        guard number < arguments.count else {
            throw failure("%K has no argument (\(arguments.count) given)", at: start)
        }
        guard let path = arguments[number] as? String else {
            throw failure(
                "%K takes a key path string such as \"name\" or \"owner.name\", not \(Self.describeArgument(arguments[number]))",
                at: start)
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false)
        for (offset, component) in components.enumerated() {
            let name = component.hasPrefix("@") ? component.dropFirst() : component[...]
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isIdentifierByte), !(name.first?.isNumber ?? true) else {
                throw failure("%K: '\(path)' is not a key path (names joined by dots)", at: start)
            }
            if offset > 0 { tokens.append((.symbol("."), start)) }
            tokens.append((component.hasPrefix("@") ? .at(name.lowercased()) : .identifier(String(name)), start))
        }
        substitutesKeys = true
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x5F || byte >= 0x80
    }

    /// An argument's type, for messages.
    private static func describeArgument(_ argument: Any?) -> String {
        guard let argument else { return "nil" }
        return "\(type(of: argument))"
    }
}
