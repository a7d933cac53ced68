import Foundation

/// The Realm SDK's key-value coding on objects and collections of objects, as plain Swift methods (there is no
/// Objective-C runtime to provide them): properties read and written by name.
///
/// ```swift
/// let dog = realm.objects(Dog.self).first!
/// let name = dog.value(forKey: "name") as? String
/// let ownerName = dog.value(forKeyPath: "owner.name") as? String
/// let names = realm.objects(Dog.self).value(forKey: "name") as? [String]
/// try realm.write { realm.objects(Dog.self).setValue(0, forKey: "age") }  // every dog
/// ```
extension ObjectBase {
    /// The schema of this type as the Realm stores it; nil for a type that is not a valid model (the error says why
    /// where the type is used).
    public class func sharedSchema() -> ObjectSchema? {
        guard self != ObjectBase.self, self != Object.self, self != EmbeddedObject.self,
            self != AsymmetricObject.self, self != DynamicObject.self
        else { return nil }
        return (try? SchemaRegistry.shared.table(for: self).schema)?.withComputedPropertiesApart
    }

    /// The value of the property with persisted or Swift name `key`: as in the SDK, a list, set or map property
    /// gives its live `List`, `MutableSet` or `Map` (the same instance as the typed property; objects of a class
    /// known only from the file as `DynamicObject`s), any other property what ``subscript(_:)`` reads (nil for a nil
    /// value). An unknown name traps with a message naming the type and the key, as the SDK's key-value coding
    /// raises for one.
    public func value(forKey key: String) -> Any? {
        guard let table = managed?.table ?? (try? SchemaRegistry.shared.table(for: type(of: self))),
            let index = table.propertyIndex(named: key)
        else { fatalError(unknownKey(key)) }
        return liveCollection(property: index, table: table) ?? self[key]
    }

    /// Sets the property with persisted or Swift name `key`, as ``subscript(_:)`` does: managed objects in a write
    /// transaction (a wrong value or an unknown name fails it), unmanaged objects at once.
    public func setValue(_ value: Any?, forKey key: String) {
        self[key] = value
    }

    /// The value at the end of `keyPath`, a dot-separated path of property names followed through links
    /// (`"owner.name"`); through a list or set it collects an array of the values. A nil link on the way gives nil.
    /// The collection operators `@count`, `@sum`, `@avg`, `@min` and `@max` apply to the array before them
    /// (`"dogs.@count"`, `"dogs.@max.age"`).
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCoding.value(of: self, path: keyPath.split(separator: ".").map(String.init)[...])
    }

    func hasProperty(named key: String) -> Bool {
        guard let table = managed?.table ?? (try? SchemaRegistry.shared.table(for: type(of: self))) else {
            return false
        }
        return table.propertyIndex(named: key) != nil
    }

    func unknownKey(_ key: String) -> String {
        "\(managed?.table.className ?? type(of: self).className()) has no property named \"\(key)\" (value(forKey:))"
    }
}

/// Key paths over objects and arrays of values, as key-value coding follows them.
enum KeyValueCoding {
    static func value(of value: Any?, path: ArraySlice<String>) -> Any? {
        guard let first = path.first else { return value }
        let rest = path.dropFirst()
        if first.hasPrefix("@") {
            return apply(operator: first, to: elements(of: value), rest: rest)
        }
        switch value {
        case let object as ObjectBase:
            // The last key gives what `value(forKey:)` gives (a live collection); on the way, collections are
            // followed as the arrays that `subscript(_:)` reads.
            guard !rest.isEmpty else { return object.value(forKey: first) }
            guard object.hasProperty(named: first) else { fatalError(object.unknownKey(first)) }
            return self.value(of: object[first], path: rest)
        case let array as [Any]:
            return array.map { self.value(of: $0, path: path) as Any }
        default:
            return nil
        }
    }

    private static func elements(of value: Any?) -> [Any] {
        (value as? [Any])?.compactMap { unwrap($0) } ?? []
    }

    /// `value` without the optionals around it (nil for a nil value). An `Any` pattern match would wrap a
    /// non-optional value in an optional and match forever, hence `Mirror`.
    private static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let inner = mirror.children.first?.value else { return nil }
        return unwrap(inner)
    }

    private static func apply(operator name: String, to elements: [Any], rest: ArraySlice<String>) -> Any? {
        if name == "@count" { return elements.count }
        let values = elements.compactMap { element in unwrap(self.value(of: element, path: rest) as Any) }
        let numbers = values.compactMap(number(_:))
        switch name {
        case "@sum": return numbers.reduce(0, +)
        case "@avg": return numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
        case "@min": return values.min(by: less)
        case "@max": return values.max(by: less)
        default:
            fatalError("value(forKeyPath:): unknown collection operator \(name) (use @count, @sum, @avg, @min, @max)")
        }
    }

    private static func number(_ value: Any) -> Double? {
        switch value {
        case let value as Int: Double(value)
        case let value as Double: value
        case let value as Float: Double(value)
        case let value as Int64: Double(value)
        case let value as Int32: Double(value)
        case let value as Int16: Double(value)
        case let value as Int8: Double(value)
        default: nil
        }
    }

    private static func less(_ a: Any, _ b: Any) -> Bool {
        if let x = number(a), let y = number(b) { return x < y }
        switch (a, b) {
        case (let x as String, let y as String): return x < y
        case (let x as Date, let y as Date): return x < y
        default: return false
        }
    }
}

extension RealmCollection where Element: ObjectBase {
    /// The value of property `key` of every object, in order (nil values as nil elements), as the SDK's
    /// `value(forKey:)` on a collection returns them: `results.value(forKey: "name") as? [String]`.
    public func value(forKey key: String) -> Any? {
        map { $0.value(forKey: key) as Any }
    }

    /// The value at the end of `keyPath` for every object, in order (see ``ObjectBase/value(forKeyPath:)``); a
    /// leading collection operator (`"@count"`, `"@sum.age"`) applies to the collection itself.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCoding.value(of: map { $0 as Any }, path: keyPath.split(separator: ".").map(String.init)[...])
    }

    /// Sets property `key` of every object to `value`, as the SDK's `setValue(_:forKey:)` on a collection does
    /// (inside a write transaction for managed objects).
    public func setValue(_ value: Any?, forKey key: String) {
        for object in Array(self) { object.setValue(value, forKey: key) }
    }
}
