import Foundation
import Testing

@testable import StrataStorage

/// A directory under the system temp folder, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "strata-test-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Byte helpers for readable tests.
extension Array where Element == UInt8 {
    init(_ text: String) { self = Array(text.utf8) }
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// Big-endian 8-byte key (sorts numerically).
func key(_ value: Int) -> [UInt8] {
    var bytes = [UInt8]()
    Bytes.appendBigEndian(UInt64(value), to: &bytes)
    return bytes
}

/// Deterministic pseudo-random generator (SplitMix64) so failures reproduce from the printed seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Options for fast tests: small pages (deep trees) and no fsync.
func testOptions(pageSize: Int = 1024) -> StoreOptions {
    StoreOptions(pageSize: pageSize, durability: .none)
}

/// Reads a whole tree into a dictionary.
func contents(of view: TreeView?) throws -> [[UInt8]: [UInt8]] {
    guard let view else { return [:] }
    var result: [[UInt8]: [UInt8]] = [:]
    for (key, value) in try view.entries() { result[key] = value }
    return result
}
