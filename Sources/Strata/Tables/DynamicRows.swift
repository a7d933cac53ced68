import StrataStorage

/// Rows of classes known only from the file (`Realm.dynamicCreate`): the values a `[String: Any]` gives, in a new
/// row's layout.
extension TableStore {
    /// The values of a new row of `binding`'s stored class `stored`: each property's zero value, replaced by the
    /// plain value `dictionary` gives for it (converted as a `DynamicObject` subscript converts it). What
    /// cannot go into the row at once — links, embedded objects, collections and mixed values, which may hold
    /// links — is returned in `rest`, keyed by property name, for the caller to set on the new object; the
    /// primary key is left to the caller. Unknown properties and values of the wrong type are refused.
    func newRowValues(of binding: TableBinding, stored: StoredClass, from dictionary: [String: Any])
        throws(Realm.Error) -> (values: [_StoredValue], rest: [String: Any])
    {
        var values = stored.properties.map(Self.zeroValue)
        var rest: [String: Any] = [:]
        for (name, given) in dictionary {
            guard let index = binding.table.propertyIndex(named: name) else {
                throw .invalidValue(type: binding.className, property: name, reason: "no such property")
            }
            let info = binding.table.infos[index]
            guard index != binding.table.primaryKeyIndex else { continue }
            guard info.type != .object, info.type != .any, !info.isCollection else {
                rest[name] = given
                continue
            }
            guard let stored = StoredValueConversion.stored(from: given, as: info) else {
                throw .invalidValue(
                    type: binding.className, property: name,
                    reason:
                        "\(type(of: given)) is not a valid value for a \(info.type)\(info.isOptional ? "?" : "") property"
                )
            }
            values[index] = stored
        }
        return (values, rest)
    }
}
