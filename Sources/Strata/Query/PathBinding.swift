import Foundation
import StrataStorage

// Binding key paths: a path's components resolved against the schema, one step at a time.

extension QueryBinder {
    /// Resolves `components` from the root class (inside a SUBQUERY, after its variable).
    func bindPath(_ components: [String], at position: Int) throws(Realm.Error) -> BoundPath {
        guard let variable else {
            if let first = components.first, let alias = aliases[first] {
                return try resolvePath((alias + components.dropFirst())[...], at: position)
            }
            let key = Realm.ResolvedPathKey(root: ObjectIdentifier(root), components: components)
            // The cached path holds its root binding, so a match is this very binding (its address cannot have
            // been reused by another).
            if let known = realm.resolvedPaths.withLock({ $0[key] }) { return known }
            let path = try resolvePath(components[...], at: position)
            if isReusable(path) {
                realm.resolvedPaths.withLock { paths in
                    if paths.count >= 256 { paths.removeAll(keepingCapacity: true) }
                    paths[key] = path
                }
            }
            return path
        }
        guard components.first == variable else {
            throw failure(
                "key paths inside SUBQUERY start with \(variable); \(components.joined(separator: ".")) does not",
                at: position)
        }
        if let valueElements {
            guard components.count == 1 else {
                throw failure(
                    "\(variable) stands for a value of \(valueElements.collection), which has no property "
                        + components[1],
                    at: position)
            }
            return BoundPath(
                steps: [.element(.null)], type: valueElements.info.type, isOptional: valueElements.info.isOptional,
                isMultiple: false, objectClassName: nil, text: variable)
        }
        guard components.count > 1 else {
            throw failure("\(variable) stands for an object; compare one of its properties", at: position)
        }
        return try resolvePath(components.dropFirst(), at: position)
    }

    /// Whether a resolved path may be kept for reuse: it goes through model classes only (bindings of file-only
    /// classes are rebuilt when the stored schema changes) and holds no predicate.
    private func isReusable(_ path: BoundPath) -> Bool {
        path.steps.allSatisfy { step in
            switch step {
            case .property(let binding, _): binding.table.type != DynamicObject.self
            case .count, .aggregate, .keys, .mapValue, .type, .mixedElement: true
            case .backlinks, .subqueryCount, .arithmetic, .element: false
            }
        }
    }

    /// `components` resolved from the root class, one step per component (see `PathResolution`).
    func resolvePath(_ components: ArraySlice<String>, at position: Int) throws(Realm.Error) -> BoundPath {
        var resolution = PathResolution(binder: self, components: components, position: position)
        while let component = resolution.nextComponent() {
            if let finished = try resolution.resolve(component) { return finished }
        }
        return finish(resolution.path)
    }

    /// `path` with its direct column set when it reads one plain column of the root's own row.
    func finish(_ path: BoundPath) -> BoundPath {
        var path = path
        if path.steps.count == 1, case .property(let binding, let index) = path.steps[0],
            binding.table.infos[index].collection == nil, binding.table.infos[index].type != .any
        {
            path.directColumn = (binding.columns[index], binding.table.infos[index])
        }
        return path
    }
}
