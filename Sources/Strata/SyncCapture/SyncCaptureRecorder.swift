import StrataStorage
import Synchronization

/// Gives the timestamp of each captured write transaction (Strata Sync's hybrid logical clock). Called once per
/// commit that changed synced objects, while the file's write lock is held, so timestamps follow commit order.
@_spi(StrataSync) public protocol SyncCaptureRecorder: AnyObject, Sendable {
    /// The timestamp of the write transaction being committed.
    func stamp() -> String
}

@_spi(StrataSync) extension Realm.Configuration {
    /// Turns change capture on for this configuration's file, in this process: from now on every write
    /// transaction of any Realm of the file that creates, changes or deletes objects of `classes` (persisted
    /// class names of classes with a primary key) appends one ``CapturedTransaction`` to the file's upload queue,
    /// in the same commit. Capture belongs to the file rather than to one Realm so that no Realm of the process
    /// writes past it.
    public func startSyncCapture(classes: Set<String>, recorder: any SyncCaptureRecorder) {
        SyncCaptureRegistry.start(
            path: path, capture: SyncCaptureRegistry.Capture(classes: classes, recorder: recorder))
    }

    /// Turns change capture off for this configuration's file (writes are no longer queued).
    public func stopSyncCapture() {
        SyncCaptureRegistry.stop(path: path)
    }
}

/// The files of this process whose writes are captured. A write transaction looks here once, when it starts;
/// with no capture anywhere that is one atomic load.
enum SyncCaptureRegistry {
    struct Capture: Sendable {
        let classes: Set<String>
        let recorder: any SyncCaptureRecorder
    }

    private static let captures = Locked<[String: Capture]>([:])
    private static let active = Atomic<Int>(0)

    static func start(path: String, capture: Capture) {
        let count = captures.withLock { captures in
            captures[path] = capture
            return captures.count
        }
        active.store(count, ordering: .releasing)
    }

    static func stop(path: String) {
        let count = captures.withLock { captures in
            captures[path] = nil
            return captures.count
        }
        active.store(count, ordering: .releasing)
    }

    /// The recording state for a write transaction starting on `path`; nil when its writes are not captured.
    static func write(path: String) -> SyncCaptureWrite? {
        guard active.load(ordering: .acquiring) > 0 else { return nil }
        guard let capture = captures.withLock({ $0[path] }) else { return nil }
        return SyncCaptureWrite(capture)
    }
}

/// What one captured write transaction touched: the objects of synced classes whose rows it wrote or deleted,
/// in first-touch order. At the commit their rows are compared with the transaction's base version (see
/// `Realm.appendCapturedTransaction`).
final class SyncCaptureWrite {
    struct Touched: Hashable {
        let className: String
        let key: Int64
    }

    let capture: SyncCaptureRegistry.Capture
    /// Set by a write that applies downloaded changes: it is not captured (no echo).
    var isApplyingSync = false
    private(set) var touched: [(binding: TableBinding, key: Int64)] = []
    private var seen: Set<Touched> = []

    init(_ capture: SyncCaptureRegistry.Capture) {
        self.capture = capture
    }

    /// The collection properties the transaction wrote, per touched object: only these are compared at the
    /// commit (reading a long list twice for an update of another property would cost the commit dearly).
    private(set) var touchedCollections: [Touched: Set<Int>] = [:]

    /// The embedded rows the transaction wrote or deleted, in first-touch order: at the commit each is traced to
    /// the synced object owning it (see `Realm.traceTouchedEmbedded`).
    private(set) var touchedEmbedded: [(binding: TableBinding, key: Int64)] = []
    private var seenEmbedded: Set<Touched> = []
    /// The embedded-object properties of touched objects whose embedded objects (at any depth) the transaction
    /// wrote.
    private var writtenEmbedded: [Touched: Set<Int>] = [:]

    /// Notes that the transaction wrote or deleted the row `key` of `binding`'s class.
    func touch(_ binding: TableBinding, _ key: Int64) {
        guard !isApplyingSync else { return }
        guard capture.classes.contains(binding.className) else {
            if binding.table.kind == .embedded,
                seenEmbedded.insert(Touched(className: binding.className, key: key)).inserted
            {
                touchedEmbedded.append((binding, key))
            }
            return
        }
        if seen.insert(Touched(className: binding.className, key: key)).inserted { touched.append((binding, key)) }
    }

    /// Notes that the transaction wrote collection property `property` of object `key` of `binding`'s class.
    func touch(_ binding: TableBinding, _ key: Int64, collection property: Int) {
        guard !isApplyingSync else { return }
        touch(binding, key)  // an embedded owner is traced to its parent at the commit
        guard capture.classes.contains(binding.className) else { return }
        touchedCollections[Touched(className: binding.className, key: key), default: []].insert(property)
    }

    /// Notes that the transaction wrote an embedded object held (at any depth) by property `property` of the
    /// synced object `key` of `binding`'s class.
    func touchEmbedded(owner binding: TableBinding, _ key: Int64, property: Int) {
        touch(binding, key)
        writtenEmbedded[Touched(className: binding.className, key: key), default: []].insert(property)
    }

    /// The embedded rows, values of map property `property` of object `key`, whose fields the transaction wrote.
    private var rewrittenElements: [ListProperty: Set<Int64>] = [:]

    /// Notes that the transaction wrote a field of embedded row `element`, a value of map property `property` of
    /// object `key` of `binding`'s class: its key is sent again.
    func noteRewritten(element: Int64, _ binding: TableBinding, _ key: Int64, _ property: Int) {
        let map = ListProperty(owner: Touched(className: binding.className, key: key), property: property)
        rewrittenElements[map, default: []].insert(element)
    }

    /// The embedded rows of map property `property` of object `key` whose fields the transaction wrote.
    func rewrittenElements(_ binding: TableBinding, _ key: Int64, _ property: Int) -> Set<Int64> {
        rewrittenElements[ListProperty(owner: Touched(className: binding.className, key: key), property: property)]
            ?? []
    }

    /// Whether the transaction wrote an embedded object held by property `property` of object `key`.
    func wroteEmbedded(_ binding: TableBinding, _ key: Int64, _ property: Int) -> Bool {
        writtenEmbedded[Touched(className: binding.className, key: key)]?.contains(property) ?? false
    }

    /// The positional edits of each list written only through them (see ``SyncListEdit``), in order.
    private var listEdits: [ListProperty: [SyncListEdit]] = [:]
    /// The lists written otherwise too (assigned whole): their change is found by comparing them with the base.
    private var untrackedLists: Set<ListProperty> = []

    struct ListProperty: Hashable {
        let owner: Touched
        let property: Int
    }

    /// Notes a positional edit of list property `property` of object `key` of `binding`'s class, made after the
    /// ones noted before.
    func record(_ edit: SyncListEdit, _ binding: TableBinding, _ key: Int64, list property: Int) {
        guard !isApplyingSync, capture.classes.contains(binding.className) else { return }
        let list = ListProperty(owner: Touched(className: binding.className, key: key), property: property)
        guard !untrackedLists.contains(list) else { return }
        listEdits[list, default: []].append(edit)
    }

    /// Notes that list property `property` of object `key` was written other than by positional edits.
    func untrackList(_ binding: TableBinding, _ key: Int64, _ property: Int) {
        guard !isApplyingSync, capture.classes.contains(binding.className) else { return }
        let list = ListProperty(owner: Touched(className: binding.className, key: key), property: property)
        untrackedLists.insert(list)
        listEdits[list] = nil
    }

    /// The positional edits of list property `property` of object `key`; nil when it was written otherwise too.
    func listEdits(_ binding: TableBinding, _ key: Int64, _ property: Int) -> [SyncListEdit]? {
        let list = ListProperty(owner: Touched(className: binding.className, key: key), property: property)
        return untrackedLists.contains(list) ? nil : listEdits[list] ?? []
    }

    /// Whether the transaction wrote collection property `property` of object `key` of `binding`'s class.
    func wroteCollection(_ binding: TableBinding, _ key: Int64, _ property: Int) -> Bool {
        touchedCollections[Touched(className: binding.className, key: key)]?.contains(property) ?? false
    }
}
