import Foundation

/// The live `List`, `MutableSet` and `Map` of a collection property reached by name, as the SDK's key-value coding
/// and `DynamicObject` hand them out (``ObjectBase/subscript(_:)`` keeps reading them as arrays and dictionaries).
extension ObjectBase {
    /// The collection of property `index`: the managed accessor (the same one the typed property returns), or
    /// the unmanaged object's own collection; nil for a property that is not a list, set or map.
    func liveCollection(property index: Int, table: TableSchema) -> AnyObject? {
        guard table.infos[index].collection != nil else { return nil }
        guard let managed else {
            if case .collection(let collection) = table.box(of: self, property: index).stored { return collection }
            return nil
        }
        guard let type = table.valueType(property: index) ?? DynamicCollectionType.of(table.infos[index]) else {
            return nil
        }
        func accessor<Collection>(_ type: Collection.Type) -> AnyObject? {
            managed.collection(property: index, as: Collection.self) as AnyObject
        }
        return _openExistential(type, do: accessor)
    }

    /// The live collection of the property named `name`, as `Collection`; traps naming the type and the property
    /// when there is no such property or it holds another kind of collection (as the SDK's `dynamicList` does).
    func liveCollection<Collection>(named name: String, as type: Collection.Type, caller: String) -> Collection {
        let table: TableSchema
        do {
            table = try managed?.table ?? SchemaRegistry.shared.table(for: Swift.type(of: self))
        } catch {
            fatalError("\(caller): \(error)")
        }
        guard let index = table.propertyIndex(named: name) else {
            fatalError("\(caller): \(table.className) has no property named \"\(name)\"")
        }
        guard let collection = liveCollection(property: index, table: table) as? Collection else {
            fatalError(
                "\(caller): \(table.className).\(name) is \(table.schema.properties[index]), not a \(Collection.self)")
        }
        return collection
    }
}

extension DynamicObject {
    /// The list of objects in property `propertyName`, live while the object is managed, as the SDK's
    /// `dynamicList(_:)`:
    ///
    /// ```swift
    /// let owner = realm.dynamicObjects("Person").first!
    /// let dogs: List<DynamicObject> = owner.dynamicList("dogs")
    /// ```
    ///
    /// Traps, naming the class and property, when the property is not a list of objects.
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        liveCollection(named: propertyName, as: List<DynamicObject>.self, caller: "dynamicList")
    }

    /// The set of objects in property `propertyName`, live while the object is managed, as the SDK's
    /// `dynamicMutableSet(_:)`. Traps, naming the class and property, when the property is not a set of objects.
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        liveCollection(named: propertyName, as: MutableSet<DynamicObject>.self, caller: "dynamicMutableSet")
    }

    /// The map from strings to objects in property `propertyName`, live while the object is managed, as the
    /// SDK's `dynamicMap(_:)`. Traps, naming the class and property, when the property is not a map of objects.
    public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        liveCollection(named: propertyName, as: Map<Key, DynamicObject?>.self, caller: "dynamicMap")
    }
}

/// The collection type that holds a property of a class known only from the file (whose Swift types are not
/// known): its stored element type, with objects as `DynamicObject`s.
enum DynamicCollectionType {
    static func of(_ info: _PropertyInfo) -> Any.Type? {
        guard let kind = info.collection else { return nil }
        guard let elements = info.type.codec.elements else { return nil }
        let element = info.isOptional ? elements.optional : elements.required
        return collection(of: element, kind)
    }

    private static func collection<Element: RealmCollectionValue>(of _: Element.Type, _ kind: _CollectionKind)
        -> Any.Type
    {
        switch kind {
        case .list: List<Element>.self
        case .set: MutableSet<Element>.self
        case .map: Map<String, Element>.self
        }
    }
}
