import StrataStorage

/// Holds a live object or collection so that any thread, task or queue can read it, as the Realm SDK's
/// `@ThreadSafe` property wrapper does: the wrapper keeps a ``ThreadSafeReference``, and reading the property
/// resolves it in a Realm of the reader — the Realm the calling queue has open for the file
/// (`Realm(configuration:queue:)`), else the calling task's or thread's (opened if needed) —
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
/// value's version. On an actor, a read resolves in the running task's Realm: to use the value as part of the
/// actor's own Realm, pass a ``ThreadSafeReference`` to ``Realm/resolve(_:)`` there instead.
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
                realm = try Realm.live(for: configuration, isolation: nil)
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
