import Logging
import PostgresNIO
import ServiceLifecycle

/// The gateway's wake-ups: one `LISTEN strata_<scope>` per scope that a client waits on, shared by all the
/// clients waiting on it, and a generation per scope counting the notifications (and each new start of
/// listening, when notifications may have been missed). A long poll reads the generation, then the scope's
/// sequence, and waits only if the generation has not moved since, so a commit between the two is never missed.
///
/// A `Service`: its ``run()`` holds the listeners until the gateway stops; scopes are added as requests name
/// them.
actor GatewayWakeUps: Service {
    private let client: PostgresClient
    private let logger: Logger
    private var generations: [String: Int] = [:]
    private var waiters: [String: [Int: CheckedContinuation<Void, Never>]] = [:]
    private var nextWaiter = 0
    private var listening: Set<String> = []
    /// Tests waiting for a long poll to be waiting on a scope (``untilWaiting(on:)``).
    private var watchers: [String: [CheckedContinuation<Void, Never>]] = [:]
    private let scopes: AsyncStream<String>
    private let newScope: AsyncStream<String>.Continuation

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        (scopes, newScope) = AsyncStream.makeStream(of: String.self)
    }

    /// The notifications counted so far for `scope` (`scope` is valid); starts listening on it if no one did.
    func generation(of scope: String) -> Int {
        if listening.insert(scope).inserted { newScope.yield(scope) }
        return generations[scope, default: 0]
    }

    /// Returns once `scope`'s generation is past `generation`, after `timeout`, or when the task is cancelled.
    func wait(scope: String, past generation: Int, timeout: Duration) async {
        if generations[scope, default: 0] > generation { return }
        let id = nextWaiter
        nextWaiter += 1
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(scope: scope, id: id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters[scope, default: [:]][id] = continuation
                for watcher in watchers.removeValue(forKey: scope) ?? [] { watcher.resume() }
            }
        } onCancel: {
            timer.cancel()
            Task { await self.resume(scope: scope, id: id) }
        }
        timer.cancel()
    }

    /// Returns once a long poll waits on `scope` (at once if one does): a test then knows that a commit made next
    /// reaches a waiting poll.
    func untilWaiting(on scope: String) async {
        if !(waiters[scope]?.isEmpty ?? true) { return }
        await withCheckedContinuation { watchers[scope, default: []].append($0) }
    }

    private func resume(scope: String, id: Int) {
        waiters[scope]?.removeValue(forKey: id)?.resume()
    }

    private func notified(_ scope: String) {
        generations[scope, default: 0] += 1
        guard let waiting = waiters.removeValue(forKey: scope) else { return }
        for waiter in waiting.values { waiter.resume() }
    }

    /// Listens on every scope requested, until the task is cancelled or the service group shuts down.
    func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await scope in self.scopes {
                    group.addTask { await self.listen(on: scope) }
                }
            }
        }
        for waiters in waiters.values {
            for waiter in waiters.values { waiter.resume() }
        }
        waiters = [:]
    }

    /// Holds `LISTEN strata_<scope>`, counting its notifications, until cancelled; a lost connection is
    /// listened on again a second later.
    private func listen(on scope: String) async {
        let channel = "strata_" + scope
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        self.notified(scope)  // listening again: what came meanwhile may be missed
                        for try await _ in notifications { self.notified(scope) }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("LISTEN failed; retrying", metadata: ["scope": "\(scope)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
