import StrataStorage

/// Accessors: the model objects a Realm hands out for stored rows, each reading and writing through a
/// ``ManagedObject`` (its Realm, binding and key).
extension Realm {
    /// A managed accessor for object `key`, primed with its row bytes from the current snapshot.
    @inline(__always)
    func object(_ binding: TableBinding, key: Int64, row: StableValue) -> ObjectBase {
        accessor(for: ManagedObject(realm: self, binding: binding, key: key, row: row, generation: generation))
    }

    /// A managed accessor for object `key` of `binding`'s type.
    func object(_ binding: TableBinding, key: Int64) -> ObjectBase {
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        managed.referencedGeneration = generation
        return accessor(for: managed)
    }

    /// An object of `managed`'s type reading and writing through `managed`.
    func accessor(for managed: ManagedObject) -> ObjectBase {
        let binding = managed.binding
        let table = binding.table
        if let properties = table.accessorProperties {
            // No boxes: each @Persisted initialiser takes its property from the thread's accessor slot, or the
            // thread's stack when another thread holds that slot. Neither holds anything strongly: `managed`,
            // `table` and `properties` outlive the initialiser.
            let type = table.type
            // An accessor created by the initialiser of another one on this thread (a property's default reading
            // a Realm) takes the slot over and then gives the outer one its state back.
            let fromSlot = AccessorCreationSlot.withSlot { slot, thread -> (ObjectBase, Int)? in
                let nested = slot.isHeld(by: thread)
                guard nested || slot.acquire(for: thread) else { return nil }
                let outer = (slot.owner, slot.type, slot.columns, slot.next)
                return properties.withUnsafeBufferPointer { columns in
                    slot.owner = Unmanaged.passUnretained(managed)
                    slot.type = ObjectIdentifier(type)
                    slot.columns = columns
                    slot.next = 0
                    let object = type.init()
                    let declared = slot.next
                    if nested {
                        (slot.owner, slot.type, slot.columns, slot.next) = outer
                    } else {
                        slot.release()
                    }
                    return (object, declared)
                }
            }
            // The thread's stack when another thread holds the slot this thread hashes to.
            let (object, declared) =
                fromSlot
                ?? properties.withUnsafeBufferPointer { columns in
                    BoxStack.local.withValue { stack in
                        stack.accessorOwner = Unmanaged.passUnretained(managed)
                        stack.accessorType = ObjectIdentifier(type)
                        stack.accessorColumns = columns
                        stack.accessorNext = 0
                        let object = type.init()
                        let declared = stack.accessorNext
                        stack.accessorOwner = nil
                        stack.accessorType = nil
                        stack.accessorColumns = UnsafeBufferPointer(start: nil, count: 0)
                        return (object, declared)
                    }
                }
            guard declared == properties.count else {
                fatalError("\(binding.className) declared \(declared) properties, expected \(properties.count)")
            }
            return object
        }
        let object = binding.table.type.init()
        binding.table.attach(object, to: managed)
        object.managed = managed
        return object
    }
}
