import Foundation
import StrataStorage

// The key path step `map['key']`: the value a map holds at one key.

extension PathResolution {
    /// `['key']` after a map: its value at `key` (nil when the key is absent).
    mutating func resolveMapKey(_ key: String) throws(Realm.Error) {
        guard atCollection == .map else {
            throw failure("['\(key)'] needs a map; \(path.text) is not one")
        }
        path.steps.append(.mapValue(key))
        path.isOptional = true
        path.isMultiple = multipleBeforeCollection
        path.text += "['\(key)']"
        atCollection = nil
        atObject = path.type == .object
    }
}
