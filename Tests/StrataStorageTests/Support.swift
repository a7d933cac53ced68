import Foundation
@_exported import StrataTestSupport
import Testing

@testable import StrataStorage

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
