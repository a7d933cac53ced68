import Foundation
import StrataStorage

/// One key path being resolved against the schema, component by component: what the path produces so far and
/// where it stands (at an object, at a collection). Each kind of step — a property, a backlink, an `@` operator, a
/// map key, a mixed value's subscript — is a method in a file of its own (`PathStep*.swift`).
struct PathResolution {
    let binder: QueryBinder
    let components: ArraySlice<String>
    /// Where the key path starts in the query text, for messages.
    let position: Int
    /// The next component to resolve.
    var offset: Int
    /// The class of the object the path is at (the root until a link is followed).
    var binding: TableBinding
    var path: BoundPath
    /// The kind of collection the path is at, when its last step produced one.
    var atCollection: _CollectionKind?
    /// Whether the path is at an object, whose properties the next component may name.
    var atObject = true
    /// Whether the path produced several values before the collection it is at (a map subscript takes one).
    var multipleBeforeCollection = false

    init(binder: QueryBinder, components: ArraySlice<String>, position: Int) {
        self.binder = binder
        self.components = components
        self.position = position
        offset = components.startIndex
        binding = binder.root
        path = BoundPath(
            steps: [], type: .object, isOptional: false, isMultiple: false, objectClassName: binder.root.className,
            text: binder.root.className)
    }

    var realm: Realm { binder.realm }

    func failure(_ reason: String) -> Realm.Error {
        binder.failure(reason, at: position)
    }

    /// The next component, consumed; nil at the end of the key path.
    mutating func nextComponent() -> String? {
        guard offset < components.endIndex else { return nil }
        defer { offset += 1 }
        return components[offset]
    }

    /// Applies one component to the path; the finished path when the component must end it (`@sum`, `@type`, …).
    mutating func resolve(_ component: String) throws(Realm.Error) -> BoundPath? {
        if component == "@links" {
            try resolveLinks()
            return nil
        }
        if let element = MixedSubscript(component: component), path.type == .any {
            if atCollection == nil, !path.steps.isEmpty {
                resolveMixedValueSubscript(element)
                return nil
            }
            if atCollection == .list {
                resolveMixedListSubscript(element)
                return nil
            }
        }
        if component.hasPrefix("]") {
            throw failure(
                "\(MixedSubscript(component: component)?.text ?? component) needs a mixed value holding a list or "
                    + "dictionary; \(path.text) is not one")
        }
        if component.hasPrefix("[") {
            try resolveMapKey(String(component.dropFirst()))
            return nil
        }
        if component.hasPrefix("@") {
            return try resolveOperator(component)
        }
        try resolveProperty(component)
        return nil
    }
}
