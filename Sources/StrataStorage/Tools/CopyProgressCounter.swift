/// Counts the pages a copy of a store has done and reports them as ``StoreEvent/CopyProgress`` (only made when
/// the copying handle has an event handler).
///
/// The total is the pages in use in the version copied; what is counted on the way is the leaf pages read, which
/// is most of them, so the count stays below the total until ``finish()`` reports the total itself.
final class CopyProgressCounter {
    private let events: @Sendable (StoreEvent) -> Void
    private let path: String
    private let destination: String
    private let operation: StoreEvent.CopyProgress.Operation
    private let total: Int
    /// Pages between reports: about 1% of the total, at most 1024.
    private let step: Int
    private var done = 0
    private var reported = 0

    init(
        events: @escaping @Sendable (StoreEvent) -> Void, source: ReadTransaction, destination: String,
        operation: StoreEvent.CopyProgress.Operation
    ) throws(StorageError) {
        self.events = events
        self.path = source.shared.path
        self.destination = destination
        self.operation = operation
        total = max(0, source.pageCount - 2 - (try source.freePageCount()))
        step = max(1, min(1024, total / 100))
        report()
    }

    /// Notes one more leaf page read.
    func pageDone() {
        done = min(done + 1, max(total - 1, 0))
        if done - reported >= step { report() }
    }

    /// Reports the copy complete.
    func finish() {
        done = total
        report()
    }

    private func report() {
        reported = done
        events(
            .copyProgress(
                StoreEvent.CopyProgress(
                    path: path, destination: destination, operation: operation, pagesDone: done, pagesTotal: total)))
    }
}
