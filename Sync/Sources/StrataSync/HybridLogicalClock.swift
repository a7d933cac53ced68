import Foundation
import Synchronization

/// The hybrid logical clock of one replica: it stamps local events with ``HybridTimestamp``s that stay close to
/// the wall clock, never go backwards on this replica even when the wall clock does, and come after every
/// timestamp this replica has received, so an event that causally follows another (a write made after pulling
/// it) always has the greater timestamp.
///
/// The rules (Kulkarni et al., "Logical Physical Clocks"): to stamp a local event or a send, take the larger of
/// the last timestamp's milliseconds and the wall clock; keep counting if that is still the last milliseconds,
/// else start the counter at zero. On receiving a timestamp, take the largest of the three milliseconds and
/// count past the counters that share it.
///
/// Safe to share between tasks: one mutex guards the last timestamp.
public final class HybridLogicalClock: Sendable {
    /// This replica's id, stamped into every timestamp.
    public let replica: String
    /// How far ahead of the wall clock a received timestamp may be before ``receive(_:)`` refuses it (nil: no
    /// limit). A peer with a clock far in the future would otherwise drag every replica's clock with it.
    public let maximumDrift: Duration?
    private let wallClock: @Sendable () -> Int64
    private let last: Mutex<(milliseconds: Int64, counter: UInt32)>

    /// A clock for `replica` reading `wallClock` (milliseconds since 1970; the system clock by default).
    public init(
        replica: String, maximumDrift: Duration? = .seconds(3600),
        wallClock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    ) {
        self.replica = replica
        self.maximumDrift = maximumDrift
        self.wallClock = wallClock
        self.last = Mutex((0, 0))
    }

    /// The timestamp of a new local event (a write, or an upload): greater than every timestamp this clock has
    /// made or received.
    public func now() -> HybridTimestamp {
        let wall = wallClock()
        let (milliseconds, counter) = last.withLock { last in
            if wall > last.milliseconds {
                last = (wall, 0)
            } else {
                last = Self.advanced(last)
            }
            return last
        }
        return HybridTimestamp(wallMilliseconds: milliseconds, counter: counter, replica: replica)
    }

    /// Takes in a timestamp seen in a change from another replica, so that later local events come after it.
    ///
    /// - Throws: ``SyncError/clockDrift(_:wallMilliseconds:)`` if `remote` is further ahead of the wall clock
    ///   than ``maximumDrift``; the clock is then unchanged.
    public func receive(_ remote: HybridTimestamp) throws(SyncError) {
        let wall = wallClock()
        if let maximumDrift {
            let limit = wall + maximumDrift.components.seconds * 1000
            if remote.wallMilliseconds > limit { throw .clockDrift(remote, wallMilliseconds: wall) }
        }
        last.withLock { last in
            let milliseconds = max(last.milliseconds, remote.wallMilliseconds, wall)
            if milliseconds == last.milliseconds && milliseconds == remote.wallMilliseconds {
                last = Self.advanced((milliseconds, max(last.counter, remote.counter)))
            } else if milliseconds == last.milliseconds {
                last = Self.advanced(last)
            } else if milliseconds == remote.wallMilliseconds {
                last = Self.advanced((milliseconds, remote.counter))
            } else {
                last = (milliseconds, 0)
            }
        }
    }

    /// The next counter value; a counter at its maximum moves to the next millisecond instead of wrapping
    /// (which would go back in time).
    private static func advanced(_ time: (milliseconds: Int64, counter: UInt32)) -> (Int64, UInt32) {
        time.counter == UInt32.max ? (time.milliseconds + 1, 0) : (time.milliseconds, time.counter + 1)
    }
}
