#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asks the Swift runtime, without trapping, whether the caller runs on an executor: what Strata needs to find the
/// reading actor's Realm in code that has no `#isolation` to ask (a property getter, such as `@ThreadSafe`'s).
///
/// Swift's public API can only assert isolation (`preconditionIsolated` and `assumeIsolated` trap when it is
/// wrong). The runtime's own non-trapping question is `swift_task_isCurrentExecutorWithFlags` with no flags — the
/// call `Task.immediate` makes to decide whether it may start synchronously, which never calls an executor's
/// `checkIsolated` and never crashes. The standard library declares it internally under that symbol name, so a
/// Swift declaration of our own would clash with it; it is looked up once with `dlsym` instead. It uses the Swift
/// calling convention, which for two pointer-sized integers and a 64-bit integer passes them in the same
/// registers as C on the 64-bit platforms Swift supports (the executor reference is two words: identity and
/// implementation). A runtime without it (before Swift 6.2) answers false.
package enum ExecutorProbe {
    private typealias IsCurrentExecutor = @convention(c) (UInt, UInt, UInt64) -> Bool

    private static let isCurrentExecutor: IsCurrentExecutor? = {
        guard MemoryLayout<UnownedSerialExecutor>.size == 2 * MemoryLayout<UInt>.size,
            let handle = dlopen(nil, RTLD_NOW),
            let symbol = dlsym(handle, "swift_task_isCurrentExecutorWithFlags")
        else { return nil }
        return unsafeBitCast(symbol, to: IsCurrentExecutor.self)
    }()

    /// Whether the caller runs on `executor` (for an actor: isolated to it). Never traps.
    package static func isCurrent(_ executor: UnownedSerialExecutor) -> Bool {
        guard let isCurrentExecutor else { return false }
        let words = unsafeBitCast(executor, to: (UInt, UInt).self)
        return isCurrentExecutor(words.0, words.1, 0)
    }
}
