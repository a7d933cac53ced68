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

    /// Iterates over a snapshot of the object keys taken when iteration starts.
    public func makeIterator() -> IndexingIterator<[Element]> {
        owner.checkThread()
        do {
            let keys = try owner.objectKeys(tree: binding.rowsTree)
            return keys.map { owner.object(binding, key: $0) as! Element }.makeIterator()
        } catch {
            fatalError("Results<\(binding.className)>: \(error)")
        }
    }
}
