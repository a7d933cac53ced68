/// Objects are `Equatable` and `Hashable` as in the Realm SDK, so that `XCTAssertEqual(a, b)`, `Set<Dog>`,
/// `contains(_:)` and `firstIndex(of:)` work on them:
///
/// - two managed objects are equal when they are the same stored object (same class, same object) read from the
///   same Realm — two accessors of one row are equal, as `isSameObject(as:)` says; frozen objects count as read
///   from the same Realm when they are frozen at the same version of the same file;
/// - an unmanaged object is equal only to itself (identity, `===`);
/// - as in the SDK, an object that was deleted (or whose Realm was invalidated) is equal only to itself.
///
/// ```swift
/// let rex = realm.objects(Dog.self).where { $0.name == "Rex" }.first!
/// #expect(realm.objects(Dog.self).contains(rex))
/// let seen: Set<Dog> = [rex, realm.objects(Dog.self).first!]
/// ```
///
/// The hash follows the same rule: the stored object's class and key when managed, the instance otherwise. An
/// unmanaged object added to a Realm becomes managed, and its hash changes with it: add it before putting it into a
/// `Set` or a dictionary key.
extension ObjectBase: Hashable {
    /// Whether `lhs` and `rhs` are the same stored object in the same Realm, or the same unmanaged instance.
    public static func == (lhs: ObjectBase, rhs: ObjectBase) -> Bool {
        if lhs === rhs { return true }
        guard let mine = lhs.managed, let theirs = rhs.managed, mine.key == theirs.key,
            mine.table.className == theirs.table.className, ManagedObject.sameRealm(mine.realm, theirs.realm)
        else { return false }
        // The SDK's rule for detached rows: checked last, as it reads the file.
        return mine.exists && theirs.exists
    }

    /// Hashes the stored object's class and key (managed), or the instance (unmanaged).
    public func hash(into hasher: inout Hasher) {
        if let managed {
            hasher.combine(managed.key)
            hasher.combine(managed.table.className)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}

extension ManagedObject {
    /// Whether objects of `a` and of `b` are read from the same Realm: the same instance, or two frozen Realms of one
    /// file at one version (every `freeze()` makes its own frozen Realm).
    static func sameRealm(_ a: Realm, _ b: Realm) -> Bool {
        if a === b { return true }
        return a.isFrozen && b.isFrozen && a.path == b.path && a.currentSnapshot.version == b.currentSnapshot.version
    }
}
