/// PostgreSQL identifiers and scope names, checked and quoted: every name that reaches SQL text goes through
/// here, so a class or property name can never change the statement it is part of.
enum SQLName {
    /// PostgreSQL's identifier limit (NAMEDATALEN - 1 bytes); longer names would be silently truncated.
    static let maximumIdentifierBytes = 63
    /// The longest scope name: `strata_` plus the scope is the NOTIFY channel, an identifier.
    static let maximumScopeBytes = 48
    /// The prefix of the columns Strata Sync adds to every synced table; no property may start with it.
    static let reservedPrefix = "_strata_"

    /// `name` as a quoted identifier (`"Dog"`, `"a""b"`), after checking that PostgreSQL can hold it.
    static func quoted(_ name: String) throws(SyncError) -> String {
        try check(identifier: name)
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Checks that `name` can be an identifier: not empty, at most 63 bytes, no NUL.
    static func check(identifier name: String) throws(SyncError) {
        if name.isEmpty { throw .invalidName(name, reason: "a PostgreSQL identifier cannot be empty") }
        if name.utf8.count > maximumIdentifierBytes {
            throw .invalidName(name, reason: "PostgreSQL identifiers hold at most \(maximumIdentifierBytes) bytes")
        }
        if name.utf8.contains(0) { throw .invalidName(name, reason: "PostgreSQL identifiers cannot hold NUL") }
    }

    /// Checks a scope name: 1 to 48 ASCII letters, digits and underscores (it is part of a NOTIFY channel).
    static func check(scope: String) throws(SyncError) {
        let allowed = scope.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F
        }
        guard !scope.isEmpty, scope.utf8.count <= maximumScopeBytes, allowed else {
            throw .invalidName(
                scope, reason: "a scope is 1 to \(maximumScopeBytes) ASCII letters, digits or underscores")
        }
    }
}

extension String {
    /// Replaces every occurrence of `target` (a plain substring replacement without Foundation).
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
