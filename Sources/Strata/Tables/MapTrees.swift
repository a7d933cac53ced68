import StrataStorage

/// The trees behind `Map` properties (`m:<class>.<property>`): each owner's nested keyed tree maps the UTF-8 map
/// key to the value as a one-column row (links as object keys). Entries are written with `putEntry` and
/// `deleteEntry` (`SetTrees.swift`), which sets share.
extension TableStore {
    /// The stored key of map key `key`, checked against the map-key rules and the engine's key size.
    func mapKey(_ key: String, binding: TableBinding, property: Int, maxKeySize: Int) throws(Realm.Error) -> [UInt8] {
        let name = binding.table.schema.properties[property].columnName
        if let problem = MapKeys.problem(key) {
            throw .invalidValue(type: binding.className, property: name, reason: "\"\(key)\": \(problem)")
        }
        let bytes = Array(key.utf8)
        guard bytes.count <= maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: name, reason: "map keys are limited to \(maxKeySize) bytes")
        }
        return bytes
    }
}
