/// The link between a managed object accessor and its stored row.
final class ManagedObject {
    let realm: Realm
    let binding: TableBinding
    let key: Int64

    init(realm: Realm, binding: TableBinding, key: Int64) {
        self.realm = realm
        self.binding = binding
        self.key = key
    }

    var table: TableSchema { binding.table }

    /// Whether the row still exists in the Realm's current version.
    var exists: Bool {
        realm.checkThread()
        return (try? realm.withRow(tree: binding.rowsTree, key: key) { _ in true }) == true
    }

    /// The property behind `box` (cached in the box after the first access).
    @inline(__always)
    func column<Root: ObjectBase, Value>(
        of box: AnyPersistedBox, object: Root, storage: ReferenceWritableKeyPath<Root, Persisted<Value>>
    ) -> Int {
        if box.column >= 0 { return box.column }
        let index = table.propertyIndex(storage: storage)
        box.column = index
        return index
    }

    /// The stored value of property `index`, with links materialised as objects.
    func readStored(property index: Int) -> _StoredValue {
        realm.checkThread()
        let info = table.infos[index]
        let column = binding.columns[index]
        let value: _StoredValue?
        do {
            value = try realm.withRow(tree: binding.rowsTree, key: key) { row in
                RowCodec.get(row, column: column, info: info)
            }
        } catch {
            fatalError("\(table.className).\(table.schema.properties[index].name): \(error)")
        }
        guard let value else {
            fatalError(
                "\(table.className).\(table.schema.properties[index].name) read from a deleted object: \(Realm.Error.invalidatedObject)"
            )
        }
        if info.type == .object, case .int(let target) = value, let targetType = info.objectType {
            do {
                return .object(realm.object(try realm.binding(for: targetType), key: target))
            } catch {
                fatalError("\(error)")
            }
        }
        return value
    }

    /// The value of property `index` as `Value`.
    @inline(__always)
    func read<Value: _Persistable>(column index: Int, as type: Value.Type) -> Value {
        let stored = readStored(property: index)
        guard let value = Value._fromStored(stored) else {
            fatalError(
                "\(table.className).\(table.schema.properties[index].name): stored value \(stored) is not a \(Value.self)"
            )
        }
        return value
    }

    /// The value of property `index` as `Any` (nil for a null value).
    func readAny(property index: Int) -> Any? {
        StoredValueConversion.any(from: readStored(property: index))
    }

    /// Sets property `index`. Outside a write transaction this traps; other errors fail the transaction.
    func write(column index: Int, _ value: _StoredValue) {
        let name = "\(table.className).\(table.schema.properties[index].name)"
        guard realm.transactionForMutation("setting \(name)") != nil else { return }
        do {
            try realm.setProperty(value, property: index, binding: binding, key: key)
        } catch {
            realm.fail(error)
        }
    }
}
