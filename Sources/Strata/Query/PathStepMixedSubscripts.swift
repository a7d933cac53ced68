import Foundation
import StrataStorage

// Key path steps into the nested collections of mixed values: `extra[0]`, `extra['key']`, `extra[*]`,
// `extra[SIZE]`, and positions in a `List<AnyRealmValue>`'s own elements.

extension PathResolution {
    /// Into the list or dictionary a mixed value holds.
    mutating func resolveMixedValueSubscript(_ element: MixedSubscript) {
        path.steps.append(.mixedElement(element))
        path.isOptional = true
        if case .size = element { path.type = .int }
        if case .all = element { path.isMultiple = true }
        path.text += element.text
        atObject = false
    }

    /// `anyList[0]`: a position in (or all of) a `List<AnyRealmValue>` property's own elements; what it picks may
    /// be a nested collection, subscripted in turn (`anyList[0][1]`).
    mutating func resolveMixedListSubscript(_ element: MixedSubscript) {
        path.steps.append(.mixedElement(element))
        path.isOptional = true
        path.isMultiple = multipleBeforeCollection
        if case .size = element { path.type = .int }
        if case .all = element { path.isMultiple = true }
        path.text += element.text
        atCollection = nil
        atObject = false
    }
}
