/// What a captured write transaction did to one `Map`, `MutableSet` or `List` property of an object, found by
/// comparing the collection in the transaction with the version it started from (see `Documentation/Sync.md`,
/// "Collections"). For Strata Sync (`StrataSync`), not for applications.
@_spi(StrataSync) public enum CapturedCollectionChange: Sendable, Hashable {
    /// A map's keys set to new values, and the keys removed (per-key last writer wins: each is stamped with the
    /// transaction's timestamp).
    case map(set: [String: CapturedValue], removed: [String])
    /// A set's values added, each with the new tag of its add, and the values removed, each with the tags of the
    /// adds this replica had seen (observed-remove: an add it had not seen survives the removal).
    case set(added: [CapturedSetElement], removed: [CapturedSetElement])
    /// A list's edits as a replicated growable array: every element has an id, inserts name the element they
    /// follow, removals the element they remove; an assignment of an untracked list (or a new object's list) is
    /// a clear followed by inserts.
    case list([CapturedListOperation])
}

/// One edit of a synced `List` (ids are hybrid timestamps in their text form).
@_spi(StrataSync) public enum CapturedListOperation: Sendable, Hashable {
    /// `value` inserted as element `id` right after element `after` (nil: at the start).
    case insert(id: String, after: String?, value: CapturedValue)
    /// Element `id` removed.
    case remove(id: String)
    /// Every element with an id before `at` removed.
    case clear(at: String)
}

/// The merge state of one synced `List` on this replica: every element it knows of (removed ones too, which
/// later inserts may follow) and the time of the latest clear. The shown elements come in list order; where the
/// others go does not matter to a merge (the order follows from the ids and the elements they follow), and
/// ``Realm/syncListState(of:property:)`` gives them after the shown ones.
@_spi(StrataSync) public struct SyncListState: Sendable, Hashable {
    /// One element of the list's state.
    public struct Element: Sendable, Hashable {
        /// The element's id.
        public var id: String
        /// The id of the element it was inserted after (nil: the start).
        public var after: String?
        /// Whether it was removed.
        public var isRemoved: Bool

        /// An element.
        public init(id: String, after: String?, isRemoved: Bool) {
            self.id = id
            self.after = after
            self.isRemoved = isRemoved
        }
    }

    /// The time of the latest clear: elements with an earlier id are not shown.
    public var cleared: String?
    /// Every element; the shown ones in list order.
    public var elements: [Element]

    /// A list state.
    public init(cleared: String? = nil, elements: [Element] = []) {
        self.cleared = cleared
        self.elements = elements
    }

    /// Whether element `element` is shown: not removed and not older than the latest clear.
    public func isVisible(_ element: Element) -> Bool {
        guard !element.isRemoved else { return false }
        guard let cleared else { return true }
        return !Array(element.id.utf8).lexicographicallyPrecedes(Array(cleared.utf8))
    }

    /// The ids of the shown elements, in list order: one per element of the list.
    public var visibleIDs: [String] { elements.filter(isVisible).map(\.id) }
}

/// A value of a synced `MutableSet` with tags: the ids of adds (hybrid timestamps in their text form).
@_spi(StrataSync) public struct CapturedSetElement: Sendable, Hashable {
    /// The value.
    public var value: CapturedValue
    /// The tags of its adds.
    public var tags: [String]

    /// `value` with `tags`.
    public init(value: CapturedValue, tags: [String]) {
        self.value = value
        self.tags = tags
    }
}
