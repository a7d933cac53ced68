public import StrataStorage

/// The link between a managed object accessor and its stored row.
@usableFromInline
final class ManagedObject {
    /// Keeps the Realm alive for as long as any of its objects is.
    @usableFromInline let realm: Realm
    @usableFromInline let binding: TableBinding
    let key: Int64
    /// The Realm's ``Realm/invalidations`` when this accessor was made: once the Realm was invalidated since, the
    /// object is invalidated too, as in the Realm SDK.
    let invalidation: UInt32

    /// Set on accessors that record the properties key paths read instead of reading them. Set once, right after
    /// the accessor is made, on the Realm's thread: no run-time exclusivity check (~75 instructions on every row
    /// fetch, which reads it first).
    @exclusivity(unchecked) @usableFromInline var recorder: KeyPathRecorder?

    /// The Realm's ``Realm/generation`` when this accessor was made from a reference read in the file (a link,
    /// a primary key, a list element, a query's match); `.max` for objects this Realm is inserting. A row missing
    /// at that same generation is not a deleted object but a reference to nothing: damage. Once the row could
    /// not be read because the file is damaged, ``damagedRow`` (one field for both: accessors are made by the
    /// million and their size matters).
    @exclusivity(unchecked) @usableFromInline var referencedGeneration: UInt64 = .max

    /// ``referencedGeneration`` of an object whose row could not be read.
    @usableFromInline static let damagedRow = UInt64.max - 1

    /// Whether the object's row could not be read because the file is damaged (the damage is recorded, see
    /// ``Realm/damage``): its properties then read as their types' defaults.
    @usableFromInline var isDamaged: Bool {
        get { referencedGeneration == Self.damagedRow }
        set { if newValue { referencedGeneration = Self.damagedRow } }
    }

    /// The key of a placeholder: what a damaged collection hands out for an object it could not read. No stored
    /// object has it (keys count up from 0), so it reads as invalidated.
    static let placeholderKey = Int64.min

    /// An accessor state for a placeholder object of `binding`'s class (see ``placeholderKey``).
    static func placeholder(realm: Realm, binding: TableBinding) -> ManagedObject {
        let hollow = ManagedObject(realm: realm, binding: binding, key: placeholderKey)
        hollow.isDamaged = true
        return hollow
    }

    init(realm: Realm, binding: TableBinding, key: Int64) {
        self.realm = realm
        self.binding = binding
        self.key = key
        invalidation = realm.invalidations
    }

    /// Whether the Realm was invalidated (``Realm/invalidate()``) after this accessor was made.
    var isInvalidatedByRealm: Bool { invalidation != realm.invalidations }

    /// The trap for a read of property `index` when the object is deleted or invalidated, with the Realm SDK's
    /// message first and then which property and why.
    func invalidatedRead(property index: Int) -> Never {
        fatalError(
            "Object has been deleted or invalidated. (reading \(table.className).\(table.schema.properties[index].columnName): "
                + (isInvalidatedByRealm
                    ? "its Realm was invalidated with invalidate(); read the object from the Realm again)"
                    : "the object was deleted)"))
    }

    /// An object whose row, read from the Realm at `generation`, is already at hand (iteration, queries).
    convenience init(realm: Realm, binding: TableBinding, key: Int64, row: StableValue, generation: UInt64) {
        self.init(realm: realm, binding: binding, key: key)
        referencedGeneration = generation
        if let view = try? RowView(row.bytes) {
            cachedView = view
            cachedBytes = row
            cachedGeneration = generation
        }
    }

    var table: TableSchema { binding.table }

    /// Whether two managed collections (owner, property, nested mixed collection id) are the same stored one.
    static func sameCollection(
        _ a: (owner: ManagedObject, property: Int)?, _ aNested: UInt64, _ b: (owner: ManagedObject, property: Int)?,
        _ bNested: UInt64
    ) -> Bool {
        guard let a, let b else { return false }
        return a.owner.realm === b.owner.realm && a.owner.binding === b.owner.binding && a.owner.key == b.owner.key
            && a.property == b.property && aNested == bNested
    }

    /// Whether the row still exists in the Realm's current version. A lookup that finds the file damaged
    /// records the damage and answers true: the object was not deleted, as far as anyone can tell.
    var exists: Bool {
        realm.checkThread()
        guard key != Self.placeholderKey, !isInvalidatedByRealm else { return false }
        do {
            return try realm.withRow(binding, key: key) { _ in true } == true
        } catch {
            realm.noteDamage(error)
            return realm.damage(in: error) != nil
        }
    }

    /// The property behind `box` of `object` (cached in the box: `TableSchema.attach` sets it when the object
    /// becomes managed). Takes no key path, so that property accessors do not instantiate one on every read.
    @inlinable
    func column(of box: PersistedBox, object: ObjectBase) -> Int {
        if box.column >= 0 { return box.column }
        return resolveColumn(of: box, object: object)
    }

    @usableFromInline
    func resolveColumn(of box: PersistedBox, object: ObjectBase) -> Int {
        guard let index = table.boxes(of: object).firstIndex(where: { $0 === box }) else {
            fatalError("\(table.className): a property's storage is not one of the object's @Persisted properties")
        }
        box.column = index
        return index
    }

    /// The row as of `cachedGeneration`, kept so that reading several properties costs one tree lookup. The view
    /// and the bytes it points into are kept apart so that the hot path copies no reference.
    @exclusivity(unchecked) @usableFromInline var cachedView: RowView?
    @exclusivity(unchecked) private var cachedBytes: StableValue?
    @exclusivity(unchecked) @usableFromInline var cachedGeneration: UInt64 = .max

    /// The object's row in the Realm's current version (or write transaction); nil if it was deleted.
    @inline(__always)
    private func row(property index: Int) -> RowView? {
        if cachedGeneration == realm.generation, let cachedView { return cachedView }
        return fetchRow(property: index)
    }

    @usableFromInline
    func fetchRow(property index: Int) -> RowView? {
        if let recorder {
            // An accessor that only notes which property a key path reads (see `KeyPathRecorder`).
            recorder.steps.append((binding, index))
            return nil
        }
        // Both callers (`currentRow`, and `row` through `readStored`) checked the thread just before.
        if isInvalidatedByRealm { invalidatedRead(property: index) }
        do {
            guard let bytes = try realm.stableRow(binding, key: key) else {
                cachedView = nil
                cachedBytes = nil
                if referencedGeneration == realm.generation {
                    isDamaged = true
                    realm.recordDamage(
                        realm.corruptData("a reference names \(table.className) object \(key), which is not stored"))
                }
                return nil
            }
            let row: RowView
            do {
                row = try RowView(bytes.bytes)
            } catch {
                throw realm.corruptData("the stored \(table.className) object \(key) does not decode: \(error)")
            }
            cachedView = row
            cachedBytes = bytes
            cachedGeneration = realm.generation
            return row
        } catch {
            isDamaged = true
            return realm.survive(
                error, "\(table.className).\(table.schema.properties[index].columnName): \(error)", returning: nil)
        }
    }

    /// The object's row, for the typed fast path of ``read(column:as:)``; nil if the object was deleted (the
    /// general path then reports it). Use from another thread traps, as everywhere.
    @inlinable
    func currentRow(property index: Int) -> RowView? {
        realm.checkThread()
        if cachedGeneration == realm.generation, let cachedView { return cachedView }
        return fetchRow(property: index)
    }

    /// The stored value of property `index`, with links materialised as objects; `.null` when the file is
    /// damaged (the damage is recorded, see ``Realm/damage``).
    @usableFromInline
    func readStored(property index: Int) -> _StoredValue {
        realm.checkThread()
        let info = table.infos[index]
        let value = row(property: index).map { RowCodec.get($0, column: binding.columns[index], info: info) }
        guard let value else {
            if isDamaged { return .null }
            invalidatedRead(property: index)
        }
        if case .mixed(let bytes) = value {
            do {
                return try realm.decodeMixed(bytes, owner: self, property: index, level: 0)
            } catch {
                return realm.survive(
                    error, "\(table.className).\(table.schema.properties[index].columnName): \(error)", returning: .null
                )
            }
        }
        if info.type == .object, case .int(let target) = value {
            do {
                if let targetType = info.objectType {
                    return .object(realm.object(try realm.binding(for: targetType), key: target))
                }
                if let className = table.schema.properties[index].objectClassName {
                    return .object(realm.object(try realm.dynamicBinding(className), key: target))
                }
            } catch {
                fatalError("\(error)")
            }
        }
        return value
    }

    /// The value of property `index` as `Value`.
    @inlinable
    func read<Value: _Persistable>(column index: Int, as type: Value.Type) -> Value {
        // A collection is a view of its own tree: the owner's row (a lookup each time the transaction changed,
        // i.e. on every `list.append` in a loop) is not needed to hand it out. A recording accessor notes the step.
        if Value._isReferenceCollection, recorder == nil { return liveCollection(property: index, as: Value.self) }
        if let row = currentRow(property: index),
            let value = Value._read(from: row, column: binding.columns[index])
        {
            return value
        }
        if recorder != nil { return recordingValue(property: index, as: Value.self) }
        if isCollection(property: index) { return collection(property: index, as: Value.self) }
        let stored = readStored(property: index)
        guard let value = Value._fromStored(stored) else { return unreadable(stored, property: index, as: Value.self) }
        return value
    }

    /// What property `index` reads as when its stored value `stored` is not a `Value`: the type's default when
    /// the row could not be read or holds a value of another stored type (damage, recorded); a trap when the
    /// value has the right stored type but the model's conversion (a `FailableCustomPersistable`) refuses it.
    @usableFromInline
    func unreadable<Value: _Persistable>(_ stored: _StoredValue, property index: Int, as type: Value.Type) -> Value {
        if !isDamaged {
            guard !stored.fits(table.infos[index]) else { mismatch(stored, property: index, expected: Value.self) }
            realm.recordDamage(
                realm.corruptData(
                    "\(table.className).\(table.schema.properties[index].columnName) of object \(key) holds \(stored), not a \(Value.self)"
                ))
        }
        return Value._defaultValue()
    }

    /// What a recording accessor's property reads: links lead to recording accessors of their target class, so
    /// that a key path through them (`\Person.address?.city`) records every step; collections are managed
    /// collections of this accessor (``ProjectedCollection`` records its element key path through them).
    ///
    /// A custom type persisted as an embedded object is built from a recording accessor of that object, so its
    /// `init(persistedValue:)` reads the object's properties: those reads are not steps of the key path and are
    /// forgotten. A value type's placeholder is the model's initial value where it has one (a
    /// `FailableCustomPersistable` may have no value for its persisted type's default).
    @usableFromInline
    func recordingValue<Value: _Persistable>(property index: Int, as type: Value.Type) -> Value {
        if isCollection(property: index) { return collection(property: index, as: Value.self) }
        let info = table.infos[index]
        if info.type == .object, let targetType = info.objectType, let target = try? realm.binding(for: targetType) {
            let linked = ManagedObject(realm: realm, binding: target, key: -1)
            linked.recorder = recorder
            let recorded = recorder?.steps.count ?? 0
            let value = Value._fromStored(.object(realm.accessor(for: linked)))
            if let recorder, recorder.steps.count > recorded { recorder.steps.removeSubrange(recorded...) }
            if let value { return value }
        }
        if let initial = table.initialStored(property: index), let value = Value._fromStored(initial) { return value }
        return Value._recordingPlaceholder()
    }

    /// A reader of the property `keyPath` reads when it is one persisted property of this object's class (so a
    /// projection reads it straight from the row), or nil. Found once per Realm and key path, and kept by the
    /// Realm for as long as it lives: the answer is not retained.
    @usableFromInline
    func projectedReader<Value>(_ keyPath: KeyPath<some ObjectBase, Value>) -> Unmanaged<AnyObject>? {
        let key = ObjectIdentifier(keyPath)
        for entry in realm.recentProjectedReaders where entry.key == key { return entry.reader }
        let reader: Unmanaged<AnyObject>?
        if let entry = realm.projectedReaders[key] {
            reader = entry.reader.map { Unmanaged.passUnretained($0) }
        } else {
            let recorder = KeyPathRecorder()
            _ = realm.recordingAccessor(binding, recorder: recorder)[keyPath: keyPath as AnyKeyPath]
            let made: AnyObject?
            // Only a key path that reads the property itself: one through a member of its value
            // (`\.birthday.timeIntervalSince1970`) records the same step but is another value of another type.
            if recorder.steps.count == 1, recorder.steps[0].binding === binding,
                (Value.self as? any _Persistable.Type)?._propertyInfo.type
                    == table.infos[recorder.steps[0].property].type
            {
                made = ProjectedReader<Value>.make(column: recorder.steps[0].property)
            } else {
                made = nil
            }
            // The key path is kept so that its address cannot be reused by another one.
            realm.projectedReaders[key] = (keyPath, made)
            reader = made.map { Unmanaged.passUnretained($0) }
        }
        if realm.recentProjectedReaders.count == 8 { realm.recentProjectedReaders.removeFirst() }
        realm.recentProjectedReaders.append((key, reader))
        return reader
    }

    /// Whether property `index` is a collection (`List`, `MutableSet`, `Map`) or `LinkingObjects`.
    @usableFromInline
    func isCollection(property index: Int) -> Bool {
        table.infos[index].isCollection || table.infos[index].type == .linkingObjects
    }

    /// What the object keeps about its collection properties, made on first use: most accessors never touch a
    /// collection, and creating and freeing them is on the path of every object a query returns.
    final class CollectionState {
        /// Collection trees of this object in the current write transaction (see `Realm.collectionHandle`).
        /// Confined to the object's Realm, like the accessor: no run-time exclusivity check.
        @exclusivity(unchecked) var handles = PropertySlots<(epoch: UInt64, handle: TreeHandle)>()
        /// The accessors (`List`, `MutableSet`, `Map`) of this object's collection properties, held weakly: an
        /// accessor holds its owner, so a strong reference here would keep the object, its accessor and their Realm
        /// (file, log and mapping) alive for as long as the process runs. An accessor still in use is handed out
        /// again; one nobody holds any more is made anew.
        @exclusivity(unchecked) var accessors = PropertySlots<WeakAccessor>()
    }

    /// A weak reference to a collection accessor (see ``CollectionState/accessors``).
    struct WeakAccessor {
        weak var object: AnyObject?
    }

    @exclusivity(unchecked) private var collectionState: CollectionState?

    /// This object's `CollectionState`, created on first use.
    var collections: CollectionState {
        if let collectionState { return collectionState }
        let state = CollectionState()
        collectionState = state
        return state
    }

    /// The managed `List`, `MutableSet` or `Map` of property `index`, checked as a row read is (confinement, an
    /// invalidated object) without reading the row.
    @usableFromInline
    func liveCollection<Value>(property index: Int, as type: Value.Type) -> Value {
        realm.checkThread()
        if isInvalidatedByRealm { invalidatedRead(property: index) }
        return collection(property: index, as: Value.self)
    }

    /// The managed collection (`List`, `MutableSet`, `Map`, `LinkingObjects`) of property `index`.
    @usableFromInline
    func collection<Value>(property index: Int, as type: Value.Type) -> Value {
        let collections = collections
        // The accessor kept, or made, is of exactly the type asked for but where a declaration does not match the
        // stored one: compare the types and reinterpret, instead of dynamic casts (thousands of instructions on
        // every collection access, with the bridge to `AnyObject`).
        if let object = collections.accessors[index]?.object,
            ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(Value.self)
        {
            return unsafeBitCast(object, to: Value.self)
        }
        if index < table.referenceCollections.count, let factory = table.referenceCollections[index],
            ObjectIdentifier(factory) == ObjectIdentifier(Value.self)
        {
            let object = factory.managedReference(owner: self, property: index)
            collections.accessors[index] = WeakAccessor(object: object)
            return unsafeBitCast(object, to: Value.self)
        }
        return castCollection(property: index, as: Value.self)
    }

    /// `collection(property:as:)` for a type that is not exactly the accessor's (a protocol, `LinkingObjects`):
    /// apart, because its casts make the runtime look up `Optional<Value>`'s metadata on entry (~700 instructions
    /// for an unspecialised `Map`), which the common path above needs none of.
    @inline(never)
    private func castCollection<Value>(property index: Int, as type: Value.Type) -> Value {
        if let object = collections.accessors[index]?.object, let list = object as? Value { return list }
        guard let factory = Value.self as? any ManagedCollectionFactory.Type,
            let list = factory.managedCollection(owner: self, property: index) as? Value
        else {
            fatalError(
                "\(table.className).\(table.schema.properties[index].columnName) is a collection, not a \(Value.self)")
        }
        // Only classes are kept: a struct (`LinkingObjects`) would be boxed in an object nobody else holds.
        if Value.self is AnyObject.Type { collections.accessors[index] = WeakAccessor(object: list as AnyObject) }
        return list
    }

    @usableFromInline
    func mismatch(_ stored: _StoredValue, property index: Int, expected: Any.Type) -> Never {
        fatalError(
            "\(table.className).\(table.schema.properties[index].columnName): stored value \(stored) is not a \(expected)"
        )
    }

    /// The value of property `index` as `Any` (nil for a null value; a list's elements as an array).
    func readAny(property index: Int) -> Any? {
        switch table.infos[index].collection {
        case .list?:
            return (0..<realm.collectionCount(self, property: index)).map {
                StoredValueConversion.any(from: realm.collectionElement(self, property: index, at: $0)) as Any
            }
        case .set?:
            return (0..<realm.collectionCount(self, property: index)).map {
                StoredValueConversion.any(from: realm.collectionElement(self, property: index, at: $0)) as Any
            }
        case .map?:
            var entries: [String: Any] = [:]
            for position in 0..<realm.collectionCount(self, property: index) {
                let (key, value) = realm.mapEntry(self, property: index, at: position)
                entries[key] = StoredValueConversion.any(from: value) as Any
            }
            return entries
        case nil:
            break
        }
        if table.infos[index].type == .linkingObjects {
            guard let origin = try? realm.linkingOrigin(binding, property: index) else { return [Any]() }
            return realm.backlinkKeys(self, property: index).map { realm.object(origin, key: $0) as Any }
        }
        return StoredValueConversion.any(from: readStored(property: index))
    }

    /// Sets property `index`. Outside a write transaction this traps; other errors fail the transaction.
    @usableFromInline
    func write(column index: Int, _ value: _StoredValue) {
        // The description is built only for an error: an interpolation per property set costs more than the set.
        guard
            realm.transactionForMutation("setting \(table.className).\(table.schema.properties[index].columnName)")
                != nil
        else { return }
        do {
            if isInvalidatedByRealm { throw Realm.Error.invalidatedObject }
            if table.infos[index].type == .linkingObjects {
                throw Realm.Error.invalidValue(
                    type: table.className, property: table.schema.properties[index].columnName,
                    reason: "linking objects are computed from the origin property's links and cannot be set")
            }
            // The row this accessor read since the transaction last changed, if any: the setter needs no lookup.
            let current = cachedGeneration == realm.generation ? cachedView : nil
            try realm.setProperty(value, property: index, binding: binding, key: key, current: current)
        } catch {
            realm.fail(error)
        }
    }
}
