import Foundation
import StrataStorage

/// The common upsert: `create(_:value:update:)` given a `[String: Any]` of plain values (no link, embedded object,
/// collection or mixed value), keyed by Swift property names, whose primary key exists. The general path sorts the
/// dictionary into `GivenValue`s (each value copied as an `Any?` twice more and destroyed, the array sorted), then
/// converts them one by one while comparing them with the stored row: ~3,000 instructions an object of five
/// properties before anything is written. Here each value is converted as the dictionary is walked, straight into
/// the declared-order list the row write takes, and the primary key is looked up from it.
extension Realm {
    /// What ``upsertPlainDictionary(_:binding:policy:)`` did.
    enum PlainUpsert {
        /// The object existed and now holds the dictionary's values: its accessor.
        case updated(ObjectBase)
        /// No object had the primary key given: a new one, made with `make` and holding the dictionary's values
        /// (the others at their defaults), was added.
        case inserted(ObjectBase)
        /// Not the common form (a key that is not a Swift property name, a property that is not a plain stored
        /// value, a value that does not convert, no primary key given): nothing was written, and the general
        /// path sorts the value out and reports any error as it always has.
        case notPlain
    }

    /// Updates the object whose primary key `dictionary` gives with the dictionary's values, when every key names
    /// a plain stored property by its Swift name and every value converts to it.
    func upsertPlainDictionary(
        _ dictionary: [String: Any], binding: TableBinding, policy: UpdatePolicy, make: () -> ObjectBase
    ) throws(Realm.Error) -> PlainUpsert {
        let table = binding.table
        guard let primary = table.primaryKeyIndex else { return .notPlain }
        // The binding's spare list, taken (not shared, so not copied on change) and given back emptied.
        var given: [(property: Int, value: _StoredValue)] = []
        swap(&given, &binding.spareGivenValues)
        defer {
            given.removeAll(keepingCapacity: true)
            swap(&given, &binding.spareGivenValues)
        }
        guard Self.convertPlainValues(of: dictionary, table: table, into: &given),
            let keyValue = given.first(where: { $0.property == primary })?.value
        else { return .notPlain }
        guard let existing = try lookupPrimaryKey(binding, keyValue) else {
            // A new object from the values already converted. One that does not fit its property (an integer too
            // wide) leaves the call, nothing written, to the general path and its error.
            let object = make()
            for (property, value) in given {
                guard table.box(of: object, property: property).setStored(value) else { return .notPlain }
            }
            _ = try insert(object, update: policy)
            return .inserted(object)
        }
        // No unmanaged object is made for an object that exists: only its accessor.
        let object = self.object(binding, key: existing)
        guard let stored = try tables.stableRow(binding, key: existing) else { throw .invalidatedObject }
        let written = try withExtendedLifetime(stored) { () throws(Realm.Error) -> Bool in
            // Valid until the transaction changes: read (one column at a time) before anything is written.
            let row = try tables.rowView(stored)
            // The changed values are moved to the front of `given`: no second array.
            var changed = 0
            do {
                for position in given.indices {
                    let property = given[position].property
                    // The primary key found the object, so it equals the stored one: not checked or compared again.
                    guard property != primary,
                        try givenValueChanges(
                            given[position].value, property: property, row: row, binding: binding, policy: policy)
                    else { continue }
                    if changed != position { given.swapAt(changed, position) }
                    changed += 1
                }
            } catch {
                // Nothing is written yet. Checked in the dictionary's order, the value found wrong may not be the
                // first in declared order, which the general path reports.
                return false
            }
            // Declared order, as the general path writes them: usually one value, no swap.
            for end in given.indices.prefix(changed) {
                var position = end
                while position > 0 && given[position - 1].property > given[position].property {
                    given.swapAt(position - 1, position)
                    position -= 1
                }
            }
            try writeChanges(given[..<changed], binding: binding, key: existing, row: row)
            return true
        }
        return written ? .updated(object) : .notPlain
    }

    /// Appends the values of `dictionary` converted for `table`'s properties to `given`, in the dictionary's order;
    /// false when a key is not the Swift name of a property whose value the row holds (a link, an embedded object,
    /// a collection or a mixed value are set through the general path) or a value does not convert.
    private static func convertPlainValues(
        of dictionary: [String: Any], table: TableSchema, into given: inout [(property: Int, value: _StoredValue)]
    ) -> Bool {
        given.reserveCapacity(dictionary.count)
        for (key, entry) in dictionary {
            guard let property = table.propertyIndex(swiftName: key) else { return false }
            let info = table.infos[property]
            guard !info.isCollection, info.type != .object, info.type != .linkingObjects, info.type != .any,
                let value = StoredValueConversion.stored(given: entry, as: info)
            else { return false }
            given.append((property, value))
        }
        return true
    }
}

extension RowCodec {
    /// Whether column `column` of `row` holds `value` (of a plain property of type `info`), as
    /// `ListElements.equal` would compare it with the decoded column (`==` of the Swift values): a fixed-size value
    /// is compared with the column's slot, and a string first with the column's UTF-8 bytes, so an unchanged value
    /// is not decoded.
    static func column(_ row: RowView, _ column: Int, info: _PropertyInfo, holds value: _StoredValue) -> Bool {
        guard column >= 0, !info.isCollection else {
            return ListElements.equal(value, get(row, column: column, info: info))
        }
        if row.isNull(column) {
            if case .null = value { return true }
            return false
        }
        switch (value, info.type) {
        case (.int(let int), .int): return row.int(column) == int
        case (.double(let double), .double): return row.double(column) == double
        case (.bool(let bool), .bool): return row.bool(column) == bool
        case (.date(let date), .date): return row.double(column) == date.timeIntervalSinceReferenceDate
        case (.string(var string), .string):
            let sameBytes = string.withUTF8 { new in
                row.withBytes(column) { old in
                    new.count == old.count
                        && (new.isEmpty || memcmp(new.baseAddress!, old.baseAddress!, new.count) == 0)
                }
            }
            // Different bytes may still be canonically equal strings, which `==` holds equal.
            if sameBytes { return true }
        default: break
        }
        return ListElements.equal(value, get(row, column: column, info: info))
    }
}
