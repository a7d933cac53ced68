import Foundation

/// Runs Realm work on a thread of its own: a Realm write waits for the file's write lock, which must never block
/// a thread of Swift's cooperative pool. The work opens its Realm on that thread (thread-confined) and returns
/// only `Sendable` values.
enum RealmThread {
    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let thread = Thread {
                do {
                    continuation.resume(returning: try work())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }
}
