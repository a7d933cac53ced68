@_spi(StrataSync) import Strata

/// Stamps each captured Strata write transaction with the replica's hybrid logical clock (see
/// `Realm.Configuration.startSyncCapture(classes:recorder:)`).
final class ClockRecorder: SyncCaptureRecorder {
    let clock: HybridLogicalClock

    init(clock: HybridLogicalClock) {
        self.clock = clock
    }

    func stamp() -> String { clock.now().description }
}
