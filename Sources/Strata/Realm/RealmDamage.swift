import StrataStorage

/// Damage found in one file by reads that could not report it, shared by every Realm on the file in this process
/// (live, frozen and the old side of a migration) for as long as any of them lives.
///
/// A property getter, a collection's `count` or iterator and `filter` cannot throw (the SDK's API), so when one
/// of them reads a damaged page it returns a harmless default (nil, zero, empty; placeholders for elements it
/// could not read) and records the damage here. From then on every call that can throw (opening the file, `write`, `beginWrite`,
/// `commitWrite`, `asyncWrite`, `checkedFilter`, `writeCopy`...) throws it, so that no write built on a wrong read
/// commits, and ``Realm/damage`` shows it. Only the first damage is kept: it is what the app is told about.
final class FileDamage: Sendable {
    private let found = Locked<Realm.Error?>(nil)

    /// The damage recorded, if any.
    var error: Realm.Error? { found.withLock { $0 } }

    /// Records `error` unless damage was recorded before; returns whether it was recorded (the first damage).
    @discardableResult
    func record(_ error: Realm.Error) -> Bool {
        found.withLock { found in
            guard found == nil else { return false }
            found = error
            return true
        }
    }

    private struct Entry {
        weak var damage: FileDamage?
    }

    private static let files = Locked<[String: Entry]>([:])

    /// The record of the file at `path` (a Realm's `Configuration.path`): the one the file's other Realms in this
    /// process hold, or a new one. A file whose Realms are all gone starts with no damage recorded, so that a
    /// file replaced (restored from a backup) or repaired while no Realm had it open is read afresh.
    static func `for`(path: String) -> FileDamage {
        files.withLock { files in
            if let damage = files[path]?.damage { return damage }
            if files.count > 64 { files = files.filter { $0.value.damage != nil } }
            let damage = FileDamage()
            files[path] = Entry(damage: damage)
            return damage
        }
    }
}

extension Realm {
    /// Damage this Realm's file showed to a read that could not report it, or nil.
    ///
    /// A read that cannot throw (a property getter, a collection's `count` or iterator, `filter`, a link) and
    /// finds a damaged page returns a harmless default instead of a wrong value or a crash: nil, zero, false, an
    /// empty string, a query matching nothing; a collection still hands out `count` elements, those it could not
    /// read being defaults (objects: ones that read as invalidated). The damage is then recorded for the file, for every
    /// Realm on it in this process, and every later call that can throw (opening the file, ``write(_:)``,
    /// ``beginWrite()``, ``commitWrite()``, `asyncWrite(_:)`, `checkedFilter`, ``writeCopy(toFile:encryptionKey:)``)
    /// throws it, so nothing built on what was read can be committed. A write transaction in progress when the
    /// damage is found rolls back whole.
    ///
    /// The error is ``RealmError/incompatibleFile(path:reason:)`` naming the file and, where the engine knows it, the
    /// damaged page. Check it after reading when what was read must be right:
    ///
    /// ```swift
    /// let invoices = Array(realm.objects(Invoice.self))
    /// if let damage = realm.damage {
    ///     report(damage)  // the file is damaged: some invoices may be placeholders
    /// }
    /// ```
    ///
    /// The record lasts while any Realm on the file is open in this process: close them all (and restore the
    /// file from a backup, or let `strata verify` say what is damaged) to read it afresh.
    public var damage: Realm.Error? { fileDamage.error }

    /// `error` as damage of this Realm's file, or nil when it is another kind of failure (see
    /// `TableStore.damage(in:)`).
    func damage(in error: any Swift.Error) -> Realm.Error? { tables.damage(in: error) }

    /// Records `damage` for the file (reporting it to the configuration's events when it is the first: see
    /// ``Event/damage(_:)``); inside a write transaction the transaction fails too, so it rolls back. `cause`, the
    /// error that showed the damage, names the page when the engine knows it.
    func recordDamage(_ damage: Realm.Error, cause: (any Swift.Error)? = nil) {
        recordFileDamage(damage, cause: cause)
        if writeTransactionIfAny != nil { fail(damage) }
    }

    /// Records `damage` for the file and, when it is the first, reports it to the configuration's events (with the
    /// page `cause` names, if any).
    func recordFileDamage(_ damage: Realm.Error, cause: (any Swift.Error)?) {
        guard fileDamage.record(damage) else { return }
        var page: UInt32?
        if case .corruptPage(_, let damaged, _) = cause as? StorageError { page = damaged }
        reportDamage(damage, page: page)
    }

    /// Records `error` if it is damage, for reads that fall back to a default whatever failed them (a refresh,
    /// a tree lookup, what notifications compute): they keep doing so, and damage is no longer silent.
    func noteDamage(_ error: any Swift.Error) {
        if let damage = damage(in: error) { recordDamage(damage, cause: error) }
    }

    /// For a read that cannot throw: when `error` is damage, records it (see ``damage``) and returns `fallback`,
    /// the harmless value the caller shows instead. Any other error is a misuse the caller cannot report either:
    /// this traps with `message`.
    func survive<Value>(_ error: any Swift.Error, _ message: @autoclosure () -> String, returning fallback: Value)
        -> Value
    {
        guard let damage = damage(in: error) else {
            // A write transaction that an earlier error failed refuses every later operation; that error is what
            // the commit throws, so a read inside it needs no trap.
            if failureOfWrite != nil, Self.isClosedTransaction(error) { return fallback }
            fatalError(message())
        }
        recordDamage(damage, cause: error)
        return fallback
    }

    private static func isClosedTransaction(_ error: any Swift.Error) -> Bool {
        switch error {
        case StorageError.transactionClosed: true
        case Realm.Error.fileAccess(_, let reason): reason == StorageError.transactionClosed.description
        default: false
        }
    }

    /// Reports stored data that cannot be what the schema says it is as damage of the file.
    func corruptData(_ reason: String) -> Realm.Error { tables.corruptData(reason) }

    /// What an element of `owner`'s collection property `property` reads as when its stored value `stored` is not
    /// an `Element`: when the value cannot have been stored for the property, the file is damaged (recorded) and
    /// the element reads as ``placeholder(_:)``; when it has the right stored type but the model's conversion (a
    /// `FailableCustomPersistable`) refuses it, this traps.
    func unreadableElement<Element: RealmCollectionValue>(
        _ stored: _StoredValue, of owner: ManagedObject, property: Int, as type: Element.Type
    ) -> Element {
        var info = owner.table.infos[property]
        info.collection = nil
        guard !stored.fits(info) else {
            fatalError("\(collectionName(owner, property)): stored element \(stored) is not a \(Element.self)")
        }
        recordDamage(
            corruptData(
                "\(collectionName(owner, property)) of object \(owner.key) holds \(stored), not a \(Element.self)"))
        return placeholder(Element.self)
    }

    /// The entry of `owner`'s map property `property` stored under `rawKey` with value `stored`, as the map's
    /// element type; a value that cannot be a `Value` reads as in ``unreadableElement(_:of:property:as:)``.
    func mapElement<Key: _MapKey, Value: RealmCollectionValue>(
        _ rawKey: String, _ stored: _StoredValue, of owner: ManagedObject, property: Int,
        as type: (key: Key, value: Value).Type
    ) -> (key: Key, value: Value) {
        guard let key = Key(_rawKey: rawKey) else {
            fatalError("\(collectionName(owner, property)): stored map key \(rawKey) is not a \(Key.self)")
        }
        guard let value = Value._fromStored(stored) else {
            return (key, unreadableElement(stored, of: owner, property: property, as: Value.self))
        }
        return (key, value)
    }

    /// What a read that found damage shows in place of a value it could not read: the type's default value (nil,
    /// zero, empty), or for objects an accessor of no stored object, which reads as invalidated and whose
    /// properties read as their defaults.
    func placeholder<Value: _Persistable>(_ type: Value.Type) -> Value {
        let info = Value._propertyInfo
        guard info.type == .object, !info.isOptional, let objectType = info.objectType else {
            return Value._defaultValue()
        }
        let binding: TableBinding
        do {
            binding = try self.binding(for: objectType)
        } catch {
            fatalError("\(path) is damaged (\(damage?.description ?? "")) and \(objectType) has no binding: \(error)")
        }
        guard let value = Value._fromStored(.object(accessor(for: .placeholder(realm: self, binding: binding)))) else {
            fatalError("\(path) is damaged (\(damage?.description ?? "")): no placeholder for \(Value.self)")
        }
        return value
    }

    /// `elements`, read from `owner`'s collection property `property` before damage stopped the read, made as
    /// long as the collection's count says (placeholders after them, extra ones dropped): a caller that asked for
    /// the count first (`Array(list)`) gets exactly that many elements.
    func matchingCount<Element>(
        _ elements: [Element], owner: ManagedObject, property: Int, nested: UInt64,
        placeholder: () -> Element
    ) -> [Element] {
        let count = collectionCount(owner, property: property, nested: nested)
        if elements.count >= count { return Array(elements.prefix(count)) }
        return elements + (elements.count..<count).map { _ in placeholder() }
    }

    /// `count`, a tree's entry count read from the file, if the file could hold that many entries (see
    /// `TableStore.plausibleCount`).
    func plausibleCount(_ count: Int, of what: @autoclosure () -> String) throws(Realm.Error) -> Int {
        try tables.plausibleCount(count, of: what())
    }

    /// Throws the damage recorded for the file, if any: the first thing every call that can throw does.
    func throwIfDamaged() throws(Realm.Error) {
        if let damage = fileDamage.error { throw damage }
    }
}

extension _StoredValue {
    /// Whether the value has the stored type of a property described by `info` (nil only where the property is
    /// optional): a value that does not cannot have been written for the property, so the file is damaged.
    func fits(_ info: _PropertyInfo) -> Bool {
        if info.type == .any { return true }
        return switch self {
        case .null: info.isOptional || info.type == .linkingObjects
        // Links are stored as their target's key.
        case .int where info.type == .object: true
        case .collection: info.isCollection || info.type == .linkingObjects
        case .mixed: false
        default: info.type.codec.holds(self)
        }
    }
}
