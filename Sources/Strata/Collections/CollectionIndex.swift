/// Positions outside a collection, reported as the Realm SDK reports them ("Index 999 is out of bounds (must be
/// less than 3)"), with the collection's name: a range error, never a file error.
///
/// What happens follows Swift's collections and the SDK: a read at a bad index (a subscript, `Results[i]`) stops
/// the process, as `Array` does — it has no way to report an error. A mutation at a bad index of a managed list
/// inside a write transaction (`remove(at:)`, `insert(_:at:)`, `move`, `swapAt`, `replace`, the subscript's
/// setter) fails the transaction instead, like any invalid mutation: `write` rolls it back whole and throws
/// ``RealmError/invalidValue(type:property:reason:)`` with this reason. An unmanaged list has no transaction to
/// fail, so it stops the process with the same message.
enum CollectionIndex {
    /// "index 999 is out of bounds (must be less than 3)"; for an insertion, which may append, "(must be at most
    /// 3)".
    static func outOfBounds(_ index: Int, count: Int, inserting: Bool = false) -> String {
        inserting
            ? "index \(index) is out of bounds (must be at most \(count))"
            : "index \(index) is out of bounds (must be less than \(count))"
    }

    /// Stops the process unless `0 <= index < count`, naming `collection` ("Person.dogs", "Results<Dog>").
    @inline(__always)
    static func check(_ index: Int, count: Int, in collection: @autoclosure () -> String) {
        guard index >= 0, index < count else { fatalError("\(collection()): \(outOfBounds(index, count: count))") }
    }

    /// Stops the process unless `0 <= index <= count` (an insertion position).
    @inline(__always)
    static func checkInsertion(_ index: Int, count: Int, in collection: @autoclosure () -> String) {
        guard index >= 0, index <= count else {
            fatalError("\(collection()): \(outOfBounds(index, count: count, inserting: true))")
        }
    }
}
