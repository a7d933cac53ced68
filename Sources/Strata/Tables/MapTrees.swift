import StrataStorage

/// The trees behind `Map` properties (`m:<class>.<property>`): each owner's nested keyed tree maps the UTF-8 map
/// key to the value as a one-column row (links as object keys). Entries are written with `putEntry` and
/// `deleteEntry` (`SetTrees.swift`), which sets share.
extension TableStore {
    /// The stored key of map key `key`, checked against the map-key rules and the engine's key size.
    func mapKey(_ key: String, binding: TableBinding, property: Int, maxKeySize: Int) throws(Realm.Error) -> [UInt8] {
        // One pass over the key's UTF-8 (contiguous, or a small string's copy on the stack) for the rules and
        // the bytes.
        var utf8 = key
        let (bytes, problem) = utf8.withUTF8 { (Array($0), MapKeys.problem(utf8: $0)) }
        if let problem {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "\"\(key)\": \(problem)")
        }
        guard bytes.count <= maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "map keys are limited to \(maxKeySize) bytes")
        }
        return bytes
    }
}
