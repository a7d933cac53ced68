import Foundation
import StrataStorage

// Key path steps to the objects linking to the current one: `@links.Class.property`, `@links` (every link, before
// `.@count`), and a `LinkingObjects` property.

extension PathResolution {
    /// `@links`: the objects linking here through one named link property, or through all of them.
    mutating func resolveLinks() throws(Realm.Error) {
        guard atObject, let className = path.objectClassName else {
            throw failure("@links needs an object; \(path.text) is not one")
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
                throw failure("@links is followed by .Class.property or .@count")
            }
            let originName = components[offset]
            let propertyName = components[offset + 1]
            offset += 2
            guard realm.schemaClasses()[originName] != nil else {
                throw failure("@links: there is no class \(originName)")
            }
            let origin = try realm.bindingForQuery(originName)
            guard let property = origin.table.propertyIndex(named: propertyName),
                origin.table.schema.properties[property].type == .object,
                origin.table.schema.properties[property].objectClassName == className
            else {
                throw failure("@links: \(originName).\(propertyName) is not a link to \(className)")
            }
            origins = [(origin, property)]
            path.objectClassName = originName
            path.text += ".@links.\(originName).\(propertyName)"
        }
        path.steps.append(.backlinks(origins))
        path.type = .object
        path.isMultiple = true
        atCollection = .list
    }

    /// A `LinkingObjects` property (`index` of `binding`, named `component`): the objects whose origin property
    /// links here.
    mutating func resolveLinkingObjects(_ component: String, index: Int, className: String) throws(Realm.Error) {
        let property = binding.table.schema.properties[index]
        let origin = try realm.linkingOrigin(binding, property: index)
        guard let originName = property.linkOriginPropertyName,
            let originProperty = origin.table.propertyIndex(named: originName)
        else {
            throw failure("\(className).\(component) has no origin property")
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
    }
}
