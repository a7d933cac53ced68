import Logging
import PostgresNIO

extension PostgresClient {
    /// `body` in one transaction on a pooled connection (committed if it returns, rolled back if it throws),
    /// rethrowing the error that caused the failure itself rather than postgres-nio's wrapper, so that callers
    /// can tell a deadlock or their own errors apart.
    func transaction<Result: Sendable>(
        logger: Logger, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        do {
            return try await withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.commitError ?? error.beginError ?? error
        }
    }
}
