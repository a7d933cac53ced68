import StrataStorage

// Lists and dictionaries nested in an `AnyRealmValue` (`dog.anyValue.listValue`, `.dictionaryValue`) are stored in
// their property's nested-collection tree under an id, not as a property of their own. Observing one reads that
// collection's entries at each version; the entries are read only while the owning object exists, and a nested
// collection that is gone (its mixed value was replaced) reads as empty, so its last elements are reported
// deleted.

extension Realm {
    /// The stored entries of the collection nested at `nested` in `owner`'s mixed property `property` (map
    /// entries with their keys), or none when the owner was deleted.
    func nestedEntries(_ owner: ManagedObject, property: Int, nested: UInt64, level: Int, keys: Bool)
        -> [(key: String, value: QueryHashKey)]
    {
        guard owner.exists else { return [] }
        return collectionEntries(owner, property: property, nested: nested, level: level, keys: keys).map {
            (String(decoding: $0.key, as: UTF8.self), QueryHashKey($0.value))
        }
    }
}

/// The observer of a list nested in a mixed value: its elements are compared by value.
func nestedListObserver<C>(
    realm: Realm, collection: C, owner: ManagedObject, property: Int, nested: UInt64, level: Int
) -> CollectionObserver<C> {
    IdentityObserver(
        realm: realm, collection: collection, elementBinding: nil, paths: nil,
        identities: {
            realm.nestedEntries(owner, property: property, nested: nested, level: level, keys: false).map(\.value)
        },
        objectKey: nil)
}
