import Foundation
import StrataStorage

// Byte-level helpers the compiled kernels share: ASCII checks, lexicographic comparison, substring search.

extension QueryValues {
    /// Whether every byte is below 0x80, eight at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var any: UInt64 = 0
        while index + 8 <= bytes.count {
            any |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            any |= UInt64(bytes[index])
            index += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// Byte order of two UTF-8 strings (that is, Unicode scalar order): -1, 0 or 1.
    static func compareBytes(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Int {
        var x = a.makeIterator()
        var y = b.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
            }
        }
    }

    /// Byte order of two byte arrays: -1, 0 or 1.
    static func compareArrays(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in compareRaw(x, y) } }
    }

    /// Byte order of two buffers (`memcmp`, then the shorter first): -1, 0 or 1.
    static func compareRaw(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(a.count, b.count)
        let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        if order != 0 { return order < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether `needle` occurs in `haystack`.
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        var start = 0
        let last = haystack.count - needle.count
        while start <= last {
            if haystack[start] == first {
                var matched = true
                for offset in 1..<needle.count where haystack[start + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return true }
            }
            start += 1
        }
        return false
    }
}
