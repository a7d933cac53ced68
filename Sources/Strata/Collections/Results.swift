public import Foundation
import StrataStorage

/// A type that can be an element of a Realm collection: the stored scalar types, their optionals, `AnyRealmValue`,
/// `Object` and `EmbeddedObject` subclasses, projections, enums and custom-persisted types.
///
/// As in the Realm SDK it refines `Hashable`, so generic code over a collection can put its elements in a `Set`
/// or use them as dictionary keys:
///
/// ```swift
/// func uniqueElements<C: RealmCollection>(_ collection: C) -> Set<C.Element> { Set(collection) }
/// ```
///
/// ``CustomPersistable`` and ``FailableCustomPersistable`` types are collection values, so they must be
/// `Hashable` too (a struct of hashable fields only needs to declare it).
public protocol RealmCollectionValue: _Persistable, Hashable {
    /// `object` as an element of this type (the object itself, or a projection of it); nil for value types.
    static func _fromObject(_ object: consuming ObjectBase) -> Self?
}

extension RealmCollectionValue {
    /// See ``RealmCollectionValue``: values are not objects.
    public static func _fromObject(_ object: consuming ObjectBase) -> Self? { nil }
}

extension ObjectBase: RealmCollectionValue {
    /// See ``RealmCollectionValue``: the object, if it is one of this class.
    public static func _fromObject(_ object: consuming ObjectBase) -> Self? { object as? Self }
}
extension Bool: RealmCollectionValue {}
extension Int: RealmCollectionValue {}
extension Int8: RealmCollectionValue {}
extension Int16: RealmCollectionValue {}
extension Int32: RealmCollectionValue {}
extension Int64: RealmCollectionValue {}
extension Float: RealmCollectionValue {}
extension Double: RealmCollectionValue {}
extension String: RealmCollectionValue {}
extension Data: RealmCollectionValue {}
extension Date: RealmCollectionValue {}
extension UUID: RealmCollectionValue {}
extension ObjectId: RealmCollectionValue {}
extension Decimal128: RealmCollectionValue {}
extension Optional: RealmCollectionValue where Wrapped: RealmCollectionValue {}

/// A live, read-only collection of the objects of one type, in insertion order.
///
/// Results read the Realm's current version on every access: after a write or `refresh()`, the same value shows
/// the new objects.
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection {
    /// The Realm and class of results of objects; nil for results of values.
    private let objectOwner: Realm?
    private let objectBinding: TableBinding?
    /// Filters, sorts, distinct and limit applied to the class's objects; nil for all of them in key order.
    let query: ResultsQuery?
    /// For results of values (`list.sorted(ascending: false)`, `list.filter("self > 1")`): the collection they
    /// read and what they apply to it (see `ValueResults.swift`); nil for results of objects.
    let values: ValueResultsSource<Element>?

    init(realm: Realm, binding: TableBinding, query: ResultsQuery? = nil) {
        objectOwner = realm
        objectBinding = binding
        self.query = query
        values = nil
    }

    init(values: ValueResultsSource<Element>) {
        objectOwner = nil
        objectBinding = nil
        query = nil
        self.values = values
    }

    /// The Realm the results read (for results of values: their collection's, which an unmanaged one lacks).
    var owner: Realm {
        if let objectOwner { return objectOwner }
        guard let realm = values?.realm else {
            fatalError("Results<\(Element.self)> of an unmanaged collection's values belong to no Realm")
        }
        return realm
    }

    /// The class of the objects; results of values have none (the message names the call's cause).
    var binding: TableBinding {
        guard let objectBinding else {
            fatalError("Results<\(Element.self)> hold values, not objects: query them through \"self\"")
        }
        return objectBinding
    }

    /// The keys of the objects, in order, when a query narrows or orders them.
    func queryKeys() -> [Int64]? { queryMatches(rows: false)?.keys }

    /// The keys of the objects in these results, in order, as observers compare them between versions: the
    /// query's matches, or every row of the class. A damaged file yields none (and is noted on the Realm).
    func observedKeys() -> [Int64] {
        if let keys = queryKeys() { return keys }
        do {
            return try owner.objectKeys(tree: binding.rowsTree)
        } catch {
            owner.noteDamage(error)
            return []
        }
    }

    /// The keys of the objects and, when the query read them in one pass (or `rows`), their rows.
    func queryMatches(rows: Bool = true) -> (keys: [Int64], rows: [StableValue]?)? {
        guard let query else { return nil }
        owner.checkThread()
        do {
            return try query.matches(realm: owner, binding: binding, rows: rows)
        } catch {
            // A damaged file matches nothing (the damage is recorded: see `Realm.damage`).
            return owner.survive(error, "Results<\(binding.className)>: \(error)", returning: ([], []))
        }
    }

    /// What a position reads as when the file is damaged: an object that is not stored, which reads as
    /// invalidated and whose properties read as their defaults.
    func placeholder() -> Element {
        guard let element = Self.element(owner.accessor(for: .placeholder(realm: owner, binding: binding))) else {
            fatalError("\(binding.className) is not \(Element.self)")
        }
        return element
    }

    /// The Realm the objects belong to.
    public var realm: Realm? { values == nil ? owner : values?.realm }

    /// `object` as an element: the object itself, or a projection of it for results of a projection type.
    @inline(__always)
    static func element(_ object: ObjectBase) -> Element? { Element._fromObject(object) }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of objects.
    public var endIndex: Int { count }

    /// The number of objects in the Realm's current version.
    public var count: Int {
        if let values { return values.elements().count }
        owner.checkThread()
        observeRead()
        if let keys = queryKeys() { return keys.count }
        return owner.rowCount(tree: binding.rowsTree)
    }

    /// The object at `position`.
    public subscript(position: Int) -> Element {
        if let values { return values.element(at: position) }
        owner.checkThread()
        observeRead()
        do {
            let key: Int64
            if let (keys, rows) = queryMatches() {
                CollectionIndex.check(position, count: keys.count, in: "Results<\(binding.className)>")
                if let rows, let element = Self.element(owner.object(binding, key: keys[position], row: rows[position]))
                {
                    return element
                }
                key = keys[position]
            } else {
                CollectionIndex.check(
                    position, count: owner.rowCount(tree: binding.rowsTree), in: "Results<\(binding.className)>")
                key = try owner.objectKey(tree: binding.rowsTree, at: position)
            }
            guard let element = Self.element(owner.object(binding, key: key)) else {
                fatalError("\(binding.className) is not \(Element.self)")
            }
            return element
        } catch {
            return owner.survive(
                error, "Results<\(binding.className)>[\(position)]: \(error)", returning: placeholder())
        }
    }

    /// Iterates over the objects present when iteration starts. Outside a write transaction the iterator walks
    /// the rows in place and hands each object its row, so reading its properties needs no further lookup.
    ///
    /// In a damaged file (see `Realm.damage`) the iterator still hands out exactly ``count`` objects, as a
    /// collection must: where it cannot read one it hands out an object that is not stored (it reads as
    /// invalidated, its properties as their defaults).
    public func makeIterator() -> Iterator {
        if let values { return Iterator(values: values.elements().makeIterator()) }
        return Iterator(objects: makeObjectIterator())
    }

    private func makeObjectIterator() -> ObjectRowIterator {
        owner.checkThread()
        observeRead()
        do {
            if let (keys, rows) = queryMatches() {
                var iterator = ObjectRowIterator(realm: owner, binding: binding, cursor: nil, keys: keys)
                iterator.rows = rows
                return iterator
            }
            if let cursor = owner.rowCursor(binding) {
                var iterator = ObjectRowIterator(realm: owner, binding: binding, cursor: cursor, keys: [])
                iterator.expected = count
                return iterator
            }
            return ObjectRowIterator(
                realm: owner, binding: binding, cursor: nil, keys: try owner.objectKeys(tree: binding.rowsTree))
        } catch {
            owner.survive(error, "Results<\(binding.className)>: \(error)", returning: ())
            var iterator = ObjectRowIterator(realm: owner, binding: binding, cursor: nil, keys: [])
            iterator.expected = count
            return iterator
        }
    }

    /// Hands out the objects, or the values read when iteration started.
    public struct Iterator: IteratorProtocol {
        /// Stepped in place through the optional (`objects!.next()` does not copy it). Not generic, so that stepping
        /// it needs no type metadata looked up per element.
        private var objects: ObjectRowIterator?
        private var values: IndexingIterator<[Element]>?

        init(objects: ObjectRowIterator) { self.objects = objects }
        init(values: IndexingIterator<[Element]>) { self.values = values }

        /// The next element, or nil at the end.
        public mutating func next() -> Element? {
            if objects != nil {
                if let object = objects!.next() { return Results.element(object) }
                guard objects!.takePlaceholder() else { return nil }
                return Results(realm: objects!.realm, binding: objects!.binding).placeholder()
            }
            return values?.next()
        }
    }
}

/// A collection that may hold every object of one type (bulk deletion).
protocol WholeTable {
    var realmForDeletion: Realm { get }
    /// The type's binding when the collection holds every object of it; nil otherwise.
    var bindingForDeletion: TableBinding? { get }
}

extension Results: WholeTable {
    var realmForDeletion: Realm { owner }
    var bindingForDeletion: TableBinding? { query == nil ? objectBinding : nil }
}
