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
            // No boxes: each @Persisted initialiser takes its property from the thread's stack instead. The
            // stack holds nothing strongly: `managed`, `table` and `properties` outlive the initialiser.
            let type = table.type
            let (object, declared) = properties.withUnsafeBufferPointer { columns in
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
