/// A type that can be an element of a Realm collection.
public protocol RealmCollectionValue {}

extension ObjectBase: RealmCollectionValue {}

/// A live, read-only collection of the objects of one type, in insertion order.
///
/// Results read the Realm's current version on every access: after a write or `refresh()`, the same value shows
/// the new objects.
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection {
    let owner: Realm
    let binding: TableBinding

    init(realm: Realm, binding: TableBinding) {
        self.owner = realm
        self.binding = binding
    }

    /// The Realm the objects belong to.
    public var realm: Realm? { owner }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of objects.
    public var endIndex: Int { count }

    /// The number of objects in the Realm's current version.
    public var count: Int {
        owner.checkThread()
        return owner.rowCount(tree: binding.rowsTree)
    }

    /// The object at `position`.
    public subscript(position: Int) -> Element {
        owner.checkThread()
        do {
            let key = try owner.objectKey(tree: binding.rowsTree, at: position)
            guard let element = owner.object(binding, key: key) as? Element else {
                fatalError("\(binding.className) is not \(Element.self)")
            }
            return element
        } catch {
            fatalError("Results<\(binding.className)>[\(position)]: \(error)")
        }
    }

    /// Iterates over the objects present when iteration starts (their keys are read up front; the objects are
    /// created one at a time).
    public func makeIterator() -> Iterator {
        owner.checkThread()
        do {
            return Iterator(realm: owner, binding: binding, keys: try owner.objectKeys(tree: binding.rowsTree))
        } catch {
            fatalError("Results<\(binding.className)>: \(error)")
        }
    }

    /// Creates each object as iteration reaches it.
    public struct Iterator: IteratorProtocol {
        let realm: Realm
        let binding: TableBinding
        let keys: [Int64]
        var position = 0

        init(realm: Realm, binding: TableBinding, keys: [Int64]) {
            self.realm = realm
            self.binding = binding
            self.keys = keys
        }

        /// The next object, or nil at the end.
        public mutating func next() -> Element? {
            guard position < keys.count else { return nil }
            defer { position += 1 }
            return realm.object(binding, key: keys[position]) as? Element
        }
    }
}

/// A collection holding every object of one type (bulk deletion).
protocol WholeTable {
    var realmForDeletion: Realm { get }
    var bindingForDeletion: TableBinding { get }
}

extension Results: WholeTable {
    var realmForDeletion: Realm { owner }
    var bindingForDeletion: TableBinding { binding }
}
