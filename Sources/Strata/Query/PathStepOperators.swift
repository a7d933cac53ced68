import Foundation
import StrataStorage

// Key path steps for `@` operators: `@count`/`@size`, the aggregates `@sum`, `@avg`, `@min`, `@max`, a map's
// `@keys` and `@values`, and a value's `@type`.

extension PathResolution {
    /// An `@` operator; the finished path when the operator ends the key path (the aggregates and `@type`).
    mutating func resolveOperator(_ component: String) throws(Realm.Error) -> BoundPath? {
        switch component {
        case "@count", "@size":
            guard atCollection != nil || (!atObject && [.string, .data].contains(path.type)) else {
                throw failure("\(component) needs a collection, string or data; \(path.text) is not one")
            }
            path.steps.append(.count)
            path.type = .int
            path.isOptional = false
            path.isMultiple = false
        case "@sum", "@avg", "@min", "@max":
            return try resolveAggregate(component)
        case "@keys":
            guard atCollection == .map else {
                throw failure("@keys needs a map; \(path.text) is not one")
            }
            path.steps.append(.keys)
            path.type = .string
            path.isOptional = false
        case "@values":
            guard atCollection == .map else {
                throw failure("@values needs a map; \(path.text) is not one")
            }
        case "@type":
            guard !path.steps.isEmpty else {
                throw failure("@type needs a value; \(path.text) is not one")
            }
            path.steps.append(.type)
            path.type = .string
            path.isOptional = false
            path.text += ".@type"
            guard offset == components.endIndex else {
                throw failure("@type must end the key path")
            }
            return path
        default:
            throw failure("unknown operator \(component)")
        }
        path.text += "." + component
        atCollection = nil
        atObject = false
        return nil
    }

    /// `@sum`, `@avg`, `@min` or `@max` of the collection the path is at, or (`dogs.@sum.age`) of a property of
    /// the linked objects; it ends the key path.
    private mutating func resolveAggregate(_ component: String) throws(Realm.Error) -> BoundPath {
        guard atCollection != nil else {
            throw failure("\(component) needs a collection; \(path.text) is not one")
        }
        if offset < components.endIndex {
            // `dogs.@sum.age`: aggregate a property of the linked objects.
            let property = components[offset]
            guard offset + 1 == components.endIndex, !atObject || path.objectClassName != nil else {
                throw failure("\(component) must end the key path")
            }
            path = try binder.resolvePath(components[..<(offset - 1)] + [property], at: position)
        }
        guard
            [.int, .float, .double, .decimal128].contains(path.type) || component == "@min"
                || component == "@max"
        else {
            throw failure("\(component) needs numbers; \(path.text) holds \(path.type)")
        }
        path.steps.append(.aggregate(component))
        if component == "@avg" && path.type == .int { path.type = .double }
        path.isOptional = true
        path.isMultiple = false
        path.text += "." + component
        return binder.finish(path)
    }
}
