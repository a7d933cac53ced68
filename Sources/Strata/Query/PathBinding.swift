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

    private func resolvePath(_ components: ArraySlice<String>, at position: Int) throws(Realm.Error) -> BoundPath {
        var binding = root
        var path = BoundPath(
            steps: [], type: .object, isOptional: false, isMultiple: false, objectClassName: root.className,
            text: root.className)
        var atCollection: _CollectionKind?
        var atObject = true
        /// Whether the path produced several values before the collection it is at (a map subscript takes one).
        var multipleBeforeCollection = false
        var offset = components.startIndex
        while offset < components.endIndex {
            let component = components[offset]
            offset += 1
            if component == "@links" {
                guard atObject, let className = path.objectClassName else {
                    throw failure("@links needs an object; \(path.text) is not one", at: position)
                }
                let origins: [(origin: TableBinding, property: Int)]
                if offset < components.endIndex, components[offset].hasPrefix("@") {
                    // `@links.@count`: every link to the object.
                    var all: [(origin: TableBinding, property: Int)] = []
                    for name in realm.schemaClasses().keys.sorted() {
                        let origin = try realm.bindingForQuery(name)
                        for (index, property) in origin.table.schema.properties.enumerated()
                        where property.type == .object && property.objectClassName == className {
                            all.append((origin, index))
                        }
                    }
                    origins = all
                    path.text += ".@links"
                } else {
                    guard offset + 1 < components.endIndex else {
                        throw failure("@links is followed by .Class.property or .@count", at: position)
                    }
                    let originName = components[offset]
                    let propertyName = components[offset + 1]
                    offset += 2
                    guard realm.schemaClasses()[originName] != nil else {
                        throw failure("@links: there is no class \(originName)", at: position)
                    }
                    let origin = try realm.bindingForQuery(originName)
                    guard let property = origin.table.propertyIndex(named: propertyName),
                        origin.table.schema.properties[property].type == .object,
                        origin.table.schema.properties[property].objectClassName == className
                    else {
                        throw failure(
                            "@links: \(originName).\(propertyName) is not a link to \(className)", at: position)
                    }
                    origins = [(origin, property)]
                    path.objectClassName = originName
                    path.text += ".@links.\(originName).\(propertyName)"
                }
                path.steps.append(.backlinks(origins))
                path.type = .object
                path.isMultiple = true
                atCollection = .list
                continue
            }
            if let element = MixedSubscript(component: component), path.type == .any, atCollection == nil,
                !path.steps.isEmpty
            {
                // Into the list or dictionary a mixed value holds.
                path.steps.append(.mixedElement(element))
                path.isOptional = true
                if case .size = element { path.type = .int }
                if case .all = element { path.isMultiple = true }
                path.text += element.text
                atObject = false
                continue
            }
            if let element = MixedSubscript(component: component), path.type == .any, atCollection == .list {
                // `anyList[0]`: a position in (or all of) a `List<AnyRealmValue>` property's own elements; what
                // it picks may be a nested collection, subscripted in turn (`anyList[0][1]`).
                path.steps.append(.mixedElement(element))
                path.isOptional = true
                path.isMultiple = multipleBeforeCollection
                if case .size = element { path.type = .int }
                if case .all = element { path.isMultiple = true }
                path.text += element.text
                atCollection = nil
                atObject = false
                continue
            }
            if component.hasPrefix("]") {
                throw failure(
                    "\(MixedSubscript(component: component)?.text ?? component) needs a mixed value holding a list or "
                        + "dictionary; \(path.text) is not one", at: position)
            }
            if component.hasPrefix("[") {
                let key = String(component.dropFirst())
                guard atCollection == .map else {
                    throw failure("['\(key)'] needs a map; \(path.text) is not one", at: position)
                }
                path.steps.append(.mapValue(key))
                path.isOptional = true
                path.isMultiple = multipleBeforeCollection
                path.text += "['\(key)']"
                atCollection = nil
                atObject = path.type == .object
                continue
            }
            if component.hasPrefix("@") {
                switch component {
                case "@count", "@size":
                    guard atCollection != nil || (!atObject && [.string, .data].contains(path.type)) else {
                        throw failure(
                            "\(component) needs a collection, string or data; \(path.text) is not one", at: position)
                    }
                    path.steps.append(.count)
                    path.type = .int
                    path.isOptional = false
                    path.isMultiple = false
                case "@sum", "@avg", "@min", "@max":
                    guard atCollection != nil else {
                        throw failure("\(component) needs a collection; \(path.text) is not one", at: position)
                    }
                    if offset < components.endIndex {
                        // `dogs.@sum.age`: aggregate a property of the linked objects.
                        let property = components[offset]
                        guard offset + 1 == components.endIndex, !atObject || path.objectClassName != nil else {
                            throw failure("\(component) must end the key path", at: position)
                        }
                        path = try resolvePath(components[..<(offset - 1)] + [property], at: position)
                    }
                    guard
                        [.int, .float, .double, .decimal128].contains(path.type) || component == "@min"
                            || component == "@max"
                    else {
                        throw failure("\(component) needs numbers; \(path.text) holds \(path.type)", at: position)
                    }
                    path.steps.append(.aggregate(component))
                    if component == "@avg" && path.type == .int { path.type = .double }
                    path.isOptional = true
                    path.isMultiple = false
                    path.text += "." + component
                    return finish(path)
                case "@keys":
                    guard atCollection == .map else {
                        throw failure("@keys needs a map; \(path.text) is not one", at: position)
                    }
                    path.steps.append(.keys)
                    path.type = .string
                    path.isOptional = false
                case "@values":
                    guard atCollection == .map else {
                        throw failure("@values needs a map; \(path.text) is not one", at: position)
                    }
                case "@type":
                    guard !path.steps.isEmpty else {
                        throw failure("@type needs a value; \(path.text) is not one", at: position)
                    }
                    path.steps.append(.type)
                    path.type = .string
                    path.isOptional = false
                    path.text += ".@type"
                    guard offset == components.endIndex else {
                        throw failure("@type must end the key path", at: position)
                    }
                    return path
                default:
                    throw failure("unknown operator \(component)", at: position)
                }
                path.text += "." + component
                atCollection = nil
                atObject = false
                continue
            }
            guard atObject, let className = path.objectClassName else {
                throw failure("\(path.text) is \(path.type), it has no property \(component)", at: position)
            }
            if path.steps.isEmpty == false { binding = try realm.bindingForQuery(className) }
            guard let index = binding.table.propertyIndex(named: component) else {
                throw failure("\(className) has no property \(component)", at: position)
            }
            let property = binding.table.schema.properties[index]
            if binding.table.infos[index].type == .linkingObjects {
                let origin = try realm.linkingOrigin(binding, property: index)
                guard let originName = property.linkOriginPropertyName,
                    let originProperty = origin.table.propertyIndex(named: originName)
                else {
                    throw failure("\(className).\(component) has no origin property", at: position)
                }
                path.steps.append(.backlinks([(origin, originProperty)]))
                path.text =
                    path.steps.count == 1
                    ? "\(className).\(property.columnName)" : path.text + "." + property.columnName
                path.type = .object
                path.objectClassName = origin.className
                path.isMultiple = true
                atCollection = .list
                atObject = true
                continue
            }
            let info = binding.table.infos[index]
            path.steps.append(.property(binding, index))
            path.text =
                path.steps.count == 1 ? "\(className).\(property.columnName)" : path.text + "." + property.columnName
            path.type = property.type
            path.isOptional = property.isOptional || path.isOptional
            path.objectClassName = property.objectClassName
            atCollection = info.collection
            multipleBeforeCollection = path.isMultiple
            if info.collection != nil { path.isMultiple = true }
            atObject = property.type == .object
        }
        return finish(path)
    }

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
