public import Foundation

/// The SDK's `RangeReplaceableCollection`-style members of `List` (the SDK emulates that protocol rather than
/// conforming, because a list is a reference type): each is a sequence of the list's own positional mutations, so
/// a managed list changes inside a write transaction only, and a bad position or count fails that transaction as
/// ``List/remove(at:)`` describes.
extension List {
    /// Replaces the elements in `subrange` with `newElements` (which may be more or fewer).
    ///
    /// ```swift
    /// try realm.write { person.nicknames.replaceSubrange(0..<2, with: ["Rex"]) }
    /// ```
    public func replaceSubrange<C: Collection, R: RangeExpression>(_ subrange: R, with newElements: C)
    where C.Element == Element, R.Bound == Int {
        guard let bounds = checkedBounds(subrange) else { return }
        for _ in bounds { remove(at: bounds.lowerBound) }
        insert(contentsOf: newElements, at: bounds.lowerBound)
    }

    /// Removes the elements in `bounds`.
    public func removeSubrange<R: RangeExpression>(_ bounds: R) where R.Bound == Int {
        guard let bounds = checkedBounds(bounds) else { return }
        for _ in bounds { remove(at: bounds.lowerBound) }
    }

    /// Inserts `newElements`, in order, starting at position `index` (0...count).
    public func insert<C: Collection>(contentsOf newElements: C, at index: Int) where C.Element == Element {
        for (offset, element) in newElements.enumerated() { insert(element, at: index + offset) }
    }

    /// Removes the first `number` elements (one by default). Removing more than the list holds is a range error.
    public func removeFirst(_ number: Int = 1) {
        guard checkedRemovalCount(number) else { return }
        for _ in 0..<number { remove(at: 0) }
    }

    /// Removes the last `number` elements (one by default). Removing more than the list holds is a range error.
    public func removeLast(_ number: Int = 1) {
        guard checkedRemovalCount(number) else { return }
        for _ in 0..<number { remove(at: count - 1) }
    }

    /// Removes the elements at `offsets` (SwiftUI's `onDelete`).
    public func remove(atOffsets offsets: IndexSet) {
        for offset in offsets.reversed() { remove(at: offset) }
    }

    /// Moves the elements at `offsets` as the SDK does (SwiftUI's `onMove`): each, in ascending order, is moved to
    /// `destination` with ``move(from:to:)``; a destination at or past the end moves it to the last position.
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        for offset in offsets { move(from: offset, to: destination >= count ? destination - 1 : destination) }
    }

    /// `range` as positions of this list; nil (after reporting the SDK's range error, see ``rangeError(_:)``) when
    /// it reaches outside `0...count`.
    private func checkedBounds<R: RangeExpression>(_ range: R) -> Range<Int>? where R.Bound == Int {
        let bounds = range.relative(to: 0..<Int.max)
        let count = count
        guard bounds.lowerBound >= 0, bounds.upperBound <= count else {
            rangeError(
                "range \(bounds.lowerBound)..<\(bounds.upperBound) is out of bounds (must be within 0...\(count))")
            return nil
        }
        return bounds
    }

    /// Whether `number` elements can be removed; reports the SDK's range error when not.
    private func checkedRemovalCount(_ number: Int) -> Bool {
        let count = count
        guard number >= 0, number <= count else {
            rangeError("it is not possible to remove \(number) elements from a list that holds \(count)")
            return false
        }
        return true
    }

    /// Reports a range error as positional mutations do (see `CollectionIndex`): a managed list fails the write
    /// transaction (``RealmError/invalidValue(type:property:reason:)``), an unmanaged one stops the process.
    private func rangeError(_ reason: String) {
        guard let (owner, property) = managedSource else { fatalError("List<\(Element.self)>: \(reason)") }
        let realm = owner.realm
        guard realm.transactionForMutation("changing \(realm.collectionName(owner, property))") != nil else { return }
        realm.fail(
            Realm.Error.invalidValue(
                type: owner.table.className, property: owner.table.schema.properties[property].name, reason: reason))
    }
}
