import StrataStorage

// Key paths through `LinkingObjects` (`observe(keyPaths: ["owners.name"])` on a pet whose `owners` are the people
// listing it): the objects linking to the observed one are followed like the objects a link points to. A
// `LinkingObjects` property at the end of a path (`["owners"]`) counts as changed when an object that links to
// the observed one now was inserted or changed its linking property in the step; an object that stopped linking
// is not seen (the backlinks are read in the new version only).

extension Realm {
    /// The keys of the objects linking to object `key` of `binding`'s class through its `LinkingObjects`
    /// property `property`, in the current version (none for a damaged tree: modifications are best effort).
    func backlinkKeys(of binding: TableBinding, property: Int, key: Int64) -> [Int64] {
        guard let names = linkingOrigin(of: binding, property: property) else { return [] }
        let entries =
            (try? backlinks(originClass: names.originClass, originProperty: names.originProperty, target: key))
        return entries?.map(\.origin) ?? []
    }

    /// Whether an object linking to object `key` through `LinkingObjects` property `property` was inserted or
    /// changed its linking property in `changes`.
    func backlinksGained(_ binding: TableBinding, property: Int, key: Int64, changes: VersionChanges) -> Bool {
        guard let names = linkingOrigin(of: binding, property: property),
            let origin = changes.classes[names.originClass]
        else { return false }
        return backlinkKeys(of: binding, property: property, key: key).contains {
            origin.insertedOrDeleted.contains($0) || origin.modified[$0]?.contains(names.originProperty) == true
        }
    }

    private func linkingOrigin(of binding: TableBinding, property: Int) -> (
        originClass: String, originProperty: String
    )? {
        let schema = binding.table.schema.properties[property]
        guard let originClass = schema.objectClassName, let originProperty = schema.linkOriginPropertyName else {
            return nil
        }
        return (originClass, originProperty)
    }
}
