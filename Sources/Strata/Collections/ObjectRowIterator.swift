import StrataStorage

/// Walks the objects of a `Results`, creating each as iteration reaches it. Not generic: `Results.Iterator` turns
/// each object into its element, and hands out placeholders after damage (see `takePlaceholder()`).
struct ObjectRowIterator {
    let realm: Realm
    let binding: TableBinding
    /// Walks the rows (outside write transactions). Kept out of an enum payload so that stepping mutates it
    /// in place instead of copying its path.
    var cursor: TreeCursor?
    var started = false
    /// Object keys read up front (inside write transactions, or a query's matches).
    let keys: [Int64]
    /// The rows of `keys`, when a query read them: valid while the Realm stays at `generation`.
    var rows: [StableValue]?
    private var generation: UInt64
    var position = 0
    /// The rows before this position were warmed (see `RowView.warm`); `.max` stops warming.
    private var warmed = 0
    /// Rows warmed at a time: enough to overlap their memory latency, few enough to stay in cache.
    private static var warmBatch: Int { 16 }
    /// The number of objects the Results counted when iteration started, when that is not `keys.count`: a
    /// cursor that stops short of it (damage) is made up with placeholders.
    var expected = 0
    /// Objects handed out by the cursor.
    private var walked = 0

    init(realm: Realm, binding: TableBinding, cursor: TreeCursor?, keys: [Int64]) {
        self.realm = realm
        self.binding = binding
        self.cursor = cursor
        self.keys = keys
        generation = realm.generation
    }

    /// The next stored object, or nil when there is none (then ask `takePlaceholder()`).
    mutating func next() -> ObjectBase? {
        if cursor != nil {
            do {
                let object = try cursor!.advance(fromStart: !started) { key, row in
                    realm.object(binding, key: KeyEncoding.decodeObjectKey(key), row: row)
                }
                started = true
                guard let object else {
                    cursor = nil
                    position = keys.count
                    if walked != expected {
                        realm.recordDamage(
                            realm.corruptData(
                                "\(binding.rowsTree) holds \(walked) objects but counts \(expected)"))
                    }
                    return nil
                }
                walked += 1
                return object
            } catch {
                cursor = nil
                position = keys.count
                realm.survive(error, "Results<\(binding.className)>: \(error)", returning: ())
                return nil
            }
        }
        guard position < keys.count else { return nil }
        defer { position += 1 }
        if rows != nil, realm.generation == generation {
            if position >= warmed {
                // Sorted matches jump around the file: fetch the next rows' cache lines together.
                let end = Swift.min(position + Self.warmBatch, keys.count)
                warmed = RowView.warm(rows.unsafelyUnwrapped[position..<end]) ? end : .max
            }
            return realm.object(binding, key: keys[position], row: rows.unsafelyUnwrapped[position])
        }
        return realm.object(binding, key: keys[position])
    }

    /// After damage stopped the walk: whether an object that is not stored is due, until `expected` objects were
    /// handed out (counting it as handed out).
    mutating func takePlaceholder() -> Bool {
        guard walked < expected else { return false }
        walked += 1
        return true
    }
}
