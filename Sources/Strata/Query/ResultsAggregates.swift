import Foundation
import StrataStorage

// `min`, `max`, `sum` and `average` of a property over results: from column extracts when the property is a
// plain number column, else over the values the query engine reads.

extension Results {
    /// The values of `property` over the objects (nils included).
    private func propertyValues(_ property: String) -> [_StoredValue] {
        owner.checkThread()
        do {
            let path = try sortPath(property, binder: binder(property))
            let (keys, rows) = try everyMatch()
            var values: [_StoredValue] = []
            for (position, key) in keys.enumerated() {
                values += try owner.storage {
                    try owner.queryValues(path, key: key, row: try rows.map { try RowView($0[position].bytes) })
                }
            }
            return values
        } catch {
            return owner.survive(error, "\(error)", returning: [])
        }
    }

    /// `@sum`, `@avg`, `@min` or `@max` of a plain numeric column, read straight from the rows in one pass (no
    /// values are boxed); nil when the property is not such a column or the rows are not at hand.
    private func columnAggregate(_ name: String, _ property: String) -> _StoredValue? {
        owner.checkThread()
        guard let path = try? sortPath(property, binder: binder(property)), let (column, info) = path.directColumn,
            [.int, .double, .float].contains(info.type)
        else { return nil }
        var intSum: Int64 = 0
        var doubleSum = 0.0
        var count = 0
        var smallest: Double = .infinity
        var largest: Double = -.infinity
        var smallestInt = Int64.max
        var largestInt = Int64.min
        let isInt = info.type == .int
        func add(_ row: RowView) {
            guard !row.isNull(column) else { return }
            count += 1
            if isInt {
                let value = row.int(column)
                intSum &+= value
                smallestInt = Swift.min(smallestInt, value)
                largestInt = Swift.max(largestInt, value)
            } else {
                let value = info.type == .double ? row.double(column) : Double(row.float(column))
                doubleSum += value
                // NaN is unordered: it never becomes the smallest or largest.
                if value < smallest { smallest = value }
                if value > largest { largest = value }
            }
        }
        do {
            if let tree = owner.treeView(binding.rowsTree) {
                // Outside a write: add up the column's cached segment extracts, over every object or over the
                // positions a column scan found (no rows read); nil when the matches came another way.
                // (Results over a list, set or linking objects start from those objects: not from the class.)
                let everyObject = query == nil || (query?.base == nil && query?.stages.isEmpty == true)
                let pending =
                    try everyObject || query?.base != nil
                    ? nil : query?.pendingMatches(realm: owner, binding: binding)
                if everyObject || pending != nil {
                    let totals = try owner.storage {
                        try ColumnScan.totals(
                            tree, column: column, kind: isInt ? .int : info.type == .double ? .double : .float,
                            pending: pending, cache: owner.store.segmentCache)
                    }
                    count = totals.count
                    intSum = totals.intSum
                    smallestInt = totals.intMin
                    largestInt = totals.intMax
                    doubleSum = totals.doubleSum
                    smallest = totals.doubleMin
                    largest = totals.doubleMax
                    return result(name)
                }
            }
            try owner.storage {
                if query == nil, let tree = owner.treeView(binding.rowsTree) {
                    try tree.forEachEntry { _, bytes in
                        add(try RowView(bytes))
                        return true
                    }
                } else {
                    let (_, rows) = try everyMatch()
                    guard let rows else { throw StorageError.indexOutOfRange(index: 0, count: 0) }
                    for row in rows { add(try RowView(row.bytes)) }
                }
            }
        } catch {
            return nil
        }
        return result(name)
        func typed(_ value: Double) -> _StoredValue { info.type == .float ? .float(Float(value)) : .double(value) }
        func result(_ name: String) -> _StoredValue {
            switch name {
            case "@sum": return isInt ? .int(intSum) : typed(doubleSum)
            case "@avg":
                return count == 0 ? .null : .double(isInt ? Double(intSum) / Double(count) : doubleSum / Double(count))
            case "@min":
                if isInt { return count == 0 ? .null : .int(smallestInt) }
                return smallest > largest ? .null : typed(smallest)
            default:
                if isInt { return count == 0 ? .null : .int(largestInt) }
                return smallest > largest ? .null : typed(largest)
            }
        }
    }

    /// The aggregate `name` of `property` over the objects.
    func aggregate(_ name: String, _ property: String) -> _StoredValue {
        columnAggregate(name, property) ?? QueryValues.aggregate(name, propertyValues(property))
    }
}

extension Results {
    /// The smallest value of `property` (nil when there are no objects or all values are nil).
    public func min<T: _Persistable>(ofProperty property: String) -> T? {
        Self.converted(aggregate("@min", property))
    }

    /// The largest value of `property`.
    public func max<T: _Persistable>(ofProperty property: String) -> T? {
        Self.converted(aggregate("@max", property))
    }

    /// `value` as a `T`: as stored, or as a number of another type (an `Int` property's minimum read as `Double`).
    static func converted<T: _Persistable>(_ value: _StoredValue) -> T? {
        if let typed = T._fromStored(value) { return typed }
        guard let number = QueryValues.number(value) else { return nil }
        return T._fromStored(.double(number)) ?? T._fromStored(.float(Float(number)))
            ?? (number.rounded() == number && abs(number) < 9.2e18 ? T._fromStored(.int(Int64(number))) : nil)
    }

    /// The sum of `property` (0 when there are no objects).
    public func sum<T: _Persistable>(ofProperty property: String) -> T {
        let total = aggregate("@sum", property)
        if let value = T._fromStored(total) { return value }
        if let number = QueryValues.number(total) {
            if let value = T._fromStored(.double(number)) { return value }
            if let value = T._fromStored(.int(Int64(number))) { return value }
            if let value = T._fromStored(.float(Float(number))) { return value }
        }
        return T._defaultValue()
    }

    /// The mean of `property`; nil when there are no values.
    public func average<T: _Persistable>(ofProperty property: String) -> T? {
        let mean = aggregate("@avg", property)
        if let value = T._fromStored(mean) { return value }
        guard let number = QueryValues.number(mean) else { return nil }
        return T._fromStored(.double(number)) ?? T._fromStored(.float(Float(number)))
    }
}
