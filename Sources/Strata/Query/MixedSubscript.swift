/// A subscript into the list or dictionary a mixed value holds, as the Realm Query Language writes it after a
/// mixed property: `extra[0]`, `extra['key']`, `extra[FIRST]`, `extra[LAST]`, `extra[SIZE]`, `extra[*]`.
///
/// The parser passes a subscript on as a key path component that no property name can be: `[key` for a quoted
/// key (as for a map property) and `]0`, `]FIRST`, `]LAST`, `]SIZE`, `]*` for the others.
enum MixedSubscript {
    /// The value at a key of a dictionary (nil when the dictionary has no such key).
    case key(String)
    /// The element at a position of a list.
    case index(Int)
    /// The first element of a list.
    case first
    /// The last element of a list.
    case last
    /// The number of elements of a list or entries of a dictionary.
    case size
    /// Every element of a list or value of a dictionary.
    case all

    /// The subscript a key path component stands for; nil when the component is not one.
    init?(component: String) {
        if component.hasPrefix("[") {
            self = .key(String(component.dropFirst()))
            return
        }
        guard component.hasPrefix("]") else { return nil }
        switch component.dropFirst() {
        case "FIRST": self = .first
        case "LAST": self = .last
        case "SIZE": self = .size
        case "*": self = .all
        case let position:
            guard let index = Int(position), index >= 0 else { return nil }
            self = .index(index)
        }
    }

    /// `extra['key']` or `extra[0]` as a query shows it in messages.
    var text: String {
        switch self {
        case .key(let key): "['\(key)']"
        case .index(let index): "[\(index)]"
        case .first: "[FIRST]"
        case .last: "[LAST]"
        case .size: "[SIZE]"
        case .all: "[*]"
        }
    }

    /// The values the subscript picks from `value`, as queries compare them (nested collections stay
    /// collections, links objects). A value that is not a collection of the kind the subscript needs, and a
    /// position past the end, give no value: no comparison holds for them. A missing key gives nil, as a map
    /// property's subscript does.
    func values(of value: _StoredValue) -> [_StoredValue] {
        guard case .collection(let container) = value else { return [] }
        if let list = container as? List<AnyRealmValue> {
            switch self {
            case .key: return []
            case .index(let index): return index < list.count ? [list[index]._stored] : []
            case .first: return list.first.map { [$0._stored] } ?? []
            case .last: return list.last.map { [$0._stored] } ?? []
            case .size: return [.int(Int64(list.count))]
            case .all: return list.map(\._stored)
            }
        }
        if let dictionary = container as? Map<String, AnyRealmValue> {
            switch self {
            case .key(let key): return [(dictionary[key] ?? AnyRealmValue.none)._stored]
            case .size: return [.int(Int64(dictionary.count))]
            case .all: return dictionary.values.map(\._stored)
            case .index, .first, .last: return []
            }
        }
        return []
    }

    /// The values the subscript picks from the elements of a `List<AnyRealmValue>` property (`anyList[0]`,
    /// `anyList[LAST]`, `anyList[*]`), by the same rules as `values(of:)` picks from a nested list.
    func values(ofListElements elements: [_StoredValue]) -> [_StoredValue] {
        switch self {
        case .key: []
        case .index(let index): index < elements.count ? [elements[index]] : []
        case .first: elements.first.map { [$0] } ?? []
        case .last: elements.last.map { [$0] } ?? []
        case .size: [.int(Int64(elements.count))]
        case .all: elements
        }
    }
}
