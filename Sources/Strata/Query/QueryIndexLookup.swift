import Foundation
import StrataStorage

// Planning's index access: the object keys an equality on an indexed or primary-key property may match.

extension Realm {
    /// The binding used to query class `name` (a model type's binding when this Realm has one).
    func bindingForQuery(_ name: String) throws(Realm.Error) -> TableBinding {
        if let binding = boundBinding(named: name) { return binding }
        return try dynamicBinding(name)
    }

    /// The objects whose primary key or indexed property `property` may equal `value` (index entries cut long
    /// values, so callers recheck the rows).
    func indexedKeys(_ binding: TableBinding, property: Int, value: _StoredValue) throws(Realm.Error) -> [Int64] {
        if property == binding.table.primaryKeyIndex {
            guard let encoded = KeyEncoding.primaryKey(value) else { return [] }
            return try lookupPrimaryKey(binding, encoded).map { [$0] } ?? []
        }
        guard var prefix = KeyEncoding.indexEntry(value, key: 0) else { return [] }
        prefix.removeLast(8)
        var keys: [Int64] = []
        try prefix.withStorageBytes { (prefix) throws(Realm.Error) in
            try forEachIndexEntry(tree: binding.indexTrees[property], from: prefix) { entry in
                // Entries of longer values may sort among the value's own: only exact ones count.
                guard entry.count >= prefix.count, memcmp(entry.baseAddress!, prefix.baseAddress!, prefix.count) == 0
                else { return false }
                if entry.count == prefix.count + 8 {
                    keys.append(KeyEncoding.decodeObjectKey(UnsafeRawBufferPointer(rebasing: entry[prefix.count...])))
                }
                return true
            }
        }
        return keys
    }
}
