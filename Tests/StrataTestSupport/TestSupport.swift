// Helpers shared by the unit tests, the integration tests and their child process.
import Foundation
public import StrataStorage

/// Deterministic pseudo-random generator (SplitMix64), so that a failing randomised test reproduces from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A fresh directory under the system temp folder, removed when the value is released.
public final class TemporaryDirectory {
    /// The directory's path.
    public let path: String

    /// Creates the directory.
    public init() {
        path = NSTemporaryDirectory() + "strata-test-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// An 8-byte big-endian encoding: keys made of it sort numerically.
public func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

/// Decodes ``bigEndian(_:)``.
public func decodeBigEndian(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
}

/// Adds 1 to the counter stored under `name` in the tree `counters`, in one write transaction.
public func incrementCounter(_ store: Store, name: String = "total") throws {
    try store.write { txn in
        guard let counters = try txn.tree(named: "counters", create: .keyed) else { return }
        let key = Array(name.utf8)
        let current = try txn.get(key, in: counters).map(decodeBigEndian) ?? 0
        try txn.put(key, bigEndian(current + 1), in: counters)
    }
}

/// The counter stored under `name` in the tree `counters` (0 when absent).
public func readCounter(_ store: Store, name: String = "total") throws -> UInt64 {
    try store.read().tree(named: "counters")?.get(Array(name.utf8)).map(decodeBigEndian) ?? 0
}
