import Foundation
import StrataStorage

/// How to order a collection: a key path (through to-one links) and a direction.
public struct SortDescriptor: Sendable, Hashable {
    /// The property, or a key path through to-one links (`"owner.name"`).
    public var keyPath: String
    /// Smallest first (nil first) when true.
    public var ascending: Bool

    /// A Swift key path (`\Dog.age`), turned into ``keyPath`` when the descriptor is used.
    let swiftKeyPath: ImmutableKeyPath?

    /// Orders by `keyPath`.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
        swiftKeyPath = nil
    }

    /// Orders by the persisted property at `keyPath` (``keyPath`` then reads as the Swift key path, such as
    /// `\Dog.age`, until a collection resolves it to the property's name):
    ///
    /// ```swift
    /// dogs.sorted(by: [SortDescriptor(keyPath: \Dog.age, ascending: false), SortDescriptor(keyPath: \Dog.name)])
    /// ```
    public init<Root: ObjectBase>(keyPath: PartialKeyPath<Root>, ascending: Bool = true) {
        self.keyPath = "\(keyPath)"
        self.ascending = ascending
        swiftKeyPath = ImmutableKeyPath(keyPath: keyPath)
    }

    private init(keyPath: String, ascending: Bool, swiftKeyPath: ImmutableKeyPath?) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.swiftKeyPath = swiftKeyPath
    }

    /// The same key path in the opposite direction, as in the SDK:
    ///
    /// ```swift
    /// let newestFirst = SortDescriptor(keyPath: "created").reversed()   // ascending == false
    /// ```
    ///
    /// - Returns: A descriptor that orders by the same property, descending if this one ascends and vice versa.
    public func reversed() -> SortDescriptor {
        SortDescriptor(keyPath: keyPath, ascending: !ascending, swiftKeyPath: swiftKeyPath)
    }
}

extension SortDescriptor: CustomStringConvertible {
    /// The descriptor as the SDK prints it: `SortDescriptor(keyPath: name, direction: ascending)` (or
    /// `descending`).
    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
    }
}

extension SortDescriptor: ExpressibleByStringLiteral {
    /// An ascending descriptor for the key path in the literal, as in the SDK:
    /// `results.sorted(by: ["name", SortDescriptor(keyPath: "age", ascending: false)])`.
    ///
    /// - Parameter value: The property, or a key path through to-one links.
    public init(stringLiteral value: String) {
        self.init(keyPath: value)
    }
}

/// A key path held in a `Sendable` value: key paths are immutable once formed, so sharing one is safe.
struct ImmutableKeyPath: @unchecked Sendable, Hashable {
    let keyPath: AnyKeyPath
}
