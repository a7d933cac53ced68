extension ObjectBase {
    /// The managed collection (`List`, `MutableSet`, `Map`) of property `index`, read through `managed`, this
    /// object's managed state.
    ///
    /// The object keeps the accessor it hands out, as the Realm SDK's objects keep theirs: `bag.settings[key] = 1`
    /// in a loop then reuses one accessor, where the managed state's weak cache (``ManagedObject/collection(property:as:)``)
    /// found none alive and made, registered and freed one per call (~1,800 instructions, more than the key's
    /// encoding). No cycle: the accessor holds the managed state, which does not hold this object. Frozen objects
    /// keep none, since they are read from any thread; recording accessors read through `read(column:as:)`.
    @usableFromInline
    final func heldCollection<Value: _Persistable>(_ managed: ManagedObject, property index: Int, as type: Value.Type)
        -> Value
    {
        if let held = heldCollections[index], ObjectIdentifier(Swift.type(of: held)) == ObjectIdentifier(Value.self) {
            // The checks `ManagedObject.liveCollection` makes on every read.
            managed.realm.checkThread()
            if managed.isInvalidatedByRealm { managed.invalidatedRead(property: index) }
            return unsafeBitCast(held, to: Value.self)
        }
        guard managed.recorder == nil else { return managed.read(column: index, as: Value.self) }
        let collection = managed.liveCollection(property: index, as: Value.self)
        // Kept only when it is the accessor the managed state registered, of exactly this type (the common case;
        // the comparison avoids the dynamic casts the general path needs).
        if !managed.realm.frozen, let registered = managed.collections.accessors[index]?.object,
            ObjectIdentifier(Swift.type(of: registered)) == ObjectIdentifier(Value.self)
        {
            heldCollections[index] = registered
        }
        return collection
    }
}
