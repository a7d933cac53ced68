public import StrataStorage

extension Realm {
    /// Something a Realm did or found that an operator may want to see: what ``Configuration/events`` receives.
    ///
    /// The storage engine's events (`StrataStorage.StoreEvent`: the open, commits, checkpoints, copies, readers
    /// keeping old versions alive, damage) arrive as they are, and the object layer adds migration progress and the
    /// damage its reads find. Every event's `description` is one log line:
    ///
    /// ```swift
    /// var configuration = Realm.Configuration(inMemoryIdentifier: "events")
    /// configuration.events = { event in print(event) }
    /// let realm = try Realm(configuration: configuration)  // "opened memory:events at version 0"
    /// ```
    public enum Event: Sendable, CustomStringConvertible {
        /// The Realm's file was opened (see ``Opened``). Reported by every Realm opened, frozen ones excepted.
        case opened(Opened)
        /// A write transaction committed (see ``Commit``); its version is the Realm's new version.
        case committed(Commit)
        /// The commit log was folded into the main file (see ``Checkpoint``).
        case checkpointed(Checkpoint)
        /// A copy of the file advanced: ``Realm/writeCopy(toFile:encryptionKey:)`` or compaction on launch (see ``CopyProgress``).
        case copyProgress(CopyProgress)
        /// A reader keeps many old versions alive (see ``PinnedVersions``).
        case pinnedVersions(PinnedVersions)
        /// The file was found damaged (see ``Damage``): by the open, a commit, or a read that could not throw (the
        /// first such damage only; see ``Realm/damage``).
        case damage(Damage)
        /// A migration converted objects of one class (see ``MigrationProgress``).
        case migrationProgress(MigrationProgress)

        /// The file's open: path, version, and what recovery did.
        public typealias Opened = StoreEvent.Opened
        /// A commit: version, pages and bytes written, durability and the time it took to be durable.
        public typealias Commit = StoreEvent.Commit
        /// A checkpoint of the commit log.
        public typealias Checkpoint = StoreEvent.Checkpoint
        /// Progress of a copy: pages done of the total.
        public typealias CopyProgress = StoreEvent.CopyProgress
        /// Which reader keeps old versions alive, and how much space it holds.
        public typealias PinnedVersions = StoreEvent.PinnedVersions
        /// A damaged page, or damaged data, and the reason.
        public typealias Damage = StoreEvent.Damage

        /// The storage engine's `event` as a Realm event.
        public init(_ event: StoreEvent) {
            switch event {
            case .opened(let event): self = .opened(event)
            case .committed(let event): self = .committed(event)
            case .checkpointed(let event): self = .checkpointed(event)
            case .copyProgress(let event): self = .copyProgress(event)
            case .pinnedVersions(let event): self = .pinnedVersions(event)
            case .damage(let event): self = .damage(event)
            }
        }

        /// One log line describing the event.
        public var description: String {
            switch self {
            case .opened(let event): event.description
            case .committed(let event): event.description
            case .checkpointed(let event): event.description
            case .copyProgress(let event): event.description
            case .pinnedVersions(let event): event.description
            case .damage(let event): event.description
            case .migrationProgress(let event): event.description
            }
        }
    }

    /// How far a migration is in converting the stored objects of one class to the class's new definition.
    ///
    /// Reported for each class whose stored definition changed, about every 1% of its objects (at least every
    /// 4096) and once at the end, when ``objectsDone`` equals ``objectsTotal``; classes that kept their definition
    /// need no conversion and report nothing. The migration block runs after the conversion.
    public struct MigrationProgress: Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The class converted.
        public let className: String
        /// Objects converted so far.
        public let objectsDone: Int
        /// Objects of the class in the file.
        public let objectsTotal: Int

        /// "migration PATH: Class done/total objects".
        public var description: String {
            "migration \(path): \(className) \(objectsDone)/\(objectsTotal) objects"
        }
    }

    /// The storage options' event handler forwarding to `configuration`'s handler and the shared ``Logger``, or nil
    /// when neither listens.
    static func storeEvents(_ configuration: Configuration) -> (@Sendable (StoreEvent) -> Void)? {
        guard let events = eventHandler(configuration) else { return nil }
        return { event in events(Event(event)) }
    }

    /// Reports the damage a read found (and recorded first) to the configuration's handler.
    func reportDamage(_ damage: Realm.Error, page: UInt32?) {
        guard let events = Realm.eventHandler(configuration) else { return }
        events(.damage(StoreEvent.Damage(path: path, page: page, reason: damage.description)))
    }
}

/// Counts the objects a migration converted in one class and reports them as ``Realm/MigrationProgress``.
struct MigrationProgressCounter {
    private let events: @Sendable (Realm.Event) -> Void
    private let path: String
    private let className: String
    private let total: Int
    private let step: Int
    private var done = 0
    private var reported = 0

    /// A counter for class `className` of `total` objects; nil when `events` is nil (nothing to report).
    init?(events: (@Sendable (Realm.Event) -> Void)?, path: String, className: String, total: Int) {
        guard let events else { return nil }
        self.events = events
        self.path = path
        self.className = className
        self.total = total
        step = max(1, min(4096, total / 100))
        report()
    }

    /// Notes one more object converted.
    mutating func objectDone() {
        done += 1
        if done - reported >= step, done < total { report() }
    }

    /// Reports the class complete.
    mutating func finish() {
        done = total
        report()
    }

    private mutating func report() {
        reported = done
        events(
            .migrationProgress(
                Realm.MigrationProgress(path: path, className: className, objectsDone: done, objectsTotal: total)))
    }
}
