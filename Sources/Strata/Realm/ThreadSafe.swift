import StrataStorage

/// Holds a live object or collection so that any thread, task or queue can read it, as the Realm SDK's
/// `@ThreadSafe` property wrapper does: the wrapper keeps a ``ThreadSafeReference``, and reading the property
/// resolves it in a Realm of the reader — on an actor that has a Realm of the file open (`Realm(actor:)`,
/// `Realm.open()`, `try Realm()` in its code) that Realm, on the main actor the main actor's Realm, in a queue's
/// block the Realm the queue has open (`Realm(configuration:queue:)`), else the calling task's
/// or thread's (opened if needed) —
/// returning the value live there, or nil when it was deleted since (or nothing was assigned).
///
/// ```swift
/// @ThreadSafe var dog = realm.objects(Dog.self).first
/// let reference = _dog   // the wrapper is Sendable
/// Thread {
///     print(reference.wrappedValue?.name ?? "gone")   // resolved in this thread's Realm
/// }.start()
/// ```
///
/// Objects, `Results` (with their whole query), `List`, `MutableSet`, `Map`, `LinkingObjects`,
/// `AnyRealmCollection` and Realms can be held, from any configuration; assigning replaces the reference (nil
/// clears it). It works on properties, local variables and function parameters (`func f(@ThreadSafe dog: Dog?)`).
/// Assign values where they live; each read opens or reuses a Realm and refreshes it to at least the assigned
/// value's version. So on an actor the value read belongs to the actor's own Realm: it can be written in that
/// Realm's transactions and observed there. An actor with no Realm of the file open gets its running task's.
@propertyWrapper
public final class ThreadSafe<T: ThreadConfined>: @unchecked Sendable {
    private let reference: Locked<ThreadSafeReference<T>?>

    /// Holds `wrappedValue` (managed, or nil).
    public init(wrappedValue: T?) {
        reference = Locked(wrappedValue.map { ThreadSafeReference(to: $0) })
    }

    /// The held value, live in a Realm of the reader (see ``ThreadSafe``); nil when none is held or it was
    /// deleted. Setting it holds the new value (nil clears).
    public var wrappedValue: T? {
        get {
            guard let reference = reference.withLock({ $0 }) else { return nil }
            guard let configuration = reference.frozen.realm?.configuration else { return nil }
            let realm: Realm
            do {
                // A getter has no `#isolation`: the running actor is found among the file's actor Realms.
                realm = try Realm.live(
                    for: configuration, isolation: RunningActor.current(forRealmAt: configuration.path))
            } catch {
                fatalError("@ThreadSafe: the Realm of \(configuration.path) cannot be opened here: \(error)")
            }
            return realm.resolve(reference)
        }
        set {
            let replacement = newValue.map { ThreadSafeReference(to: $0) }
            reference.withLock { $0 = replacement }
        }
    }
}
