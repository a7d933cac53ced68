import Foundation
import StrataStorage

// The key path step that names a property of the object the path is at: a value, a to-one link (followed by the
// next step), or a collection.

extension PathResolution {
    /// Property `component` of the object the path is at.
    mutating func resolveProperty(_ component: String) throws(Realm.Error) {
        guard atObject, let className = path.objectClassName else {
            throw failure("\(path.text) is \(path.type), it has no property \(component)")
        }
        if path.steps.isEmpty == false { binding = try realm.bindingForQuery(className) }
        guard let index = binding.table.propertyIndex(named: component) else {
            throw failure("\(className) has no property \(component)")
        }
        if binding.table.infos[index].type == .linkingObjects {
            try resolveLinkingObjects(component, index: index, className: className)
            return
        }
        let property = binding.table.schema.properties[index]
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
}
