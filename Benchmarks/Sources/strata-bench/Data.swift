import BenchSupport

/// `count` keys of 16 bytes each, in one contiguous allocation (no per-operation allocation in hot loops).
final class KeyTable {
    static let keySize = 16

    let count: Int
    let base: UnsafeMutableRawPointer

    private init(count: Int) {
        self.count = count
        base = .allocate(byteCount: max(1, count * KeyTable.keySize), alignment: 16)
    }

    deinit { base.deallocate() }

    /// Start of key `index`.
    @inline(__always)
    func pointer(_ index: Int) -> UnsafeMutableRawPointer { base + index &* KeyTable.keySize }

    /// Key `index` as a buffer.
    @inline(__always)
    subscript(index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: pointer(index), count: KeyTable.keySize)
    }

    /// Keys 0, 1, 2, ... as 128-bit big-endian integers: byte order equals numeric order.
    static func sequential(count: Int) -> KeyTable {
        let table = KeyTable(count: count)
        for index in 0..<count {
            let key = table.pointer(index)
            key.storeBytes(of: UInt64(0), as: UInt64.self)
            key.storeBytes(of: UInt64(index).bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return table
    }

    /// Uniformly random keys from a fixed seed.
    static func random(count: Int, seed: UInt64) -> KeyTable {
        var generator = SplitMix64(seed: seed)
        let table = KeyTable(count: count)
        for index in 0..<count {
            let key = table.pointer(index)
            key.storeBytes(of: generator.next(), as: UInt64.self)
            key.storeBytes(of: generator.next(), toByteOffset: 8, as: UInt64.self)
        }
        return table
    }
}

/// A 100-byte value whose first 8 bytes hold the index of the key it belongs to (little-endian); the rest is a
/// fixed pattern. Reads verify the index, so a store that returns the wrong value cannot post a time.
final class ValueBuffer {
    static let size = 100

    private let base: UnsafeMutableRawPointer

    init() {
        base = .allocate(byteCount: ValueBuffer.size, alignment: 16)
        for offset in 0..<ValueBuffer.size {
            base.storeBytes(of: UInt8(truncatingIfNeeded: offset &* 37 &+ 11), toByteOffset: offset, as: UInt8.self)
        }
    }

    deinit { base.deallocate() }

    /// The value for key `index`.
    @inline(__always)
    func value(for index: Int) -> UnsafeRawBufferPointer {
        base.storeBytes(of: UInt64(index).littleEndian, as: UInt64.self)
        return UnsafeRawBufferPointer(start: base, count: ValueBuffer.size)
    }

    /// Whether `bytes` is the value stored for key `index`.
    @inline(__always)
    static func matches(_ bytes: UnsafeRawBufferPointer, index: Int) -> Bool {
        bytes.count == size && UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self)) == UInt64(index)
    }

    /// Same check on a raw pointer and a length (C APIs).
    @inline(__always)
    static func matches(_ pointer: UnsafeRawPointer?, count: Int, index: Int) -> Bool {
        guard let pointer else { return false }
        return matches(UnsafeRawBufferPointer(start: pointer, count: count), index: index)
    }
}

/// What a full scan saw: every entry's key and value are read, and the keys must come strictly ascending.
struct ScanSummary {
    var count = 0
    var bytes = 0
    var indexSum: UInt64 = 0
    var ordered = true
    private var previousHigh: UInt64 = 0
    private var previousLow: UInt64 = 0

    /// Counts one entry (APIs that hand out key and value together).
    @inline(__always)
    mutating func add(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        addKey(key)
        addValue(value)
    }

    /// First half of an entry: the key (must be called before `addValue`).
    @inline(__always)
    mutating func addKey(_ key: UnsafeRawBufferPointer) {
        count &+= 1
        bytes &+= key.count
        guard key.count == KeyTable.keySize else {
            ordered = false
            return
        }
        let high = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
        let low = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        if count > 1 && !(high > previousHigh || (high == previousHigh && low > previousLow)) { ordered = false }
        previousHigh = high
        previousLow = low
    }

    /// Second half of an entry: its value.
    @inline(__always)
    mutating func addValue(_ value: UnsafeRawBufferPointer) {
        bytes &+= value.count
        guard value.count >= 8 else {
            ordered = false
            return
        }
        indexSum &+= UInt64(littleEndian: value.loadUnaligned(as: UInt64.self))
    }

    /// Same on raw pointers and lengths (C APIs).
    @inline(__always)
    mutating func add(key: UnsafeRawPointer?, keyCount: Int, value: UnsafeRawPointer?, valueCount: Int) {
        add(
            key: UnsafeRawBufferPointer(start: key, count: key == nil ? 0 : keyCount),
            value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueCount))
    }

    /// Throws unless the scan saw exactly the `n` entries inserted for keys 0..<n, in order.
    func verify(expectedCount n: Int) throws(BenchError) {
        guard count == n else { throw .verification("scan saw \(count) entries, expected \(n)") }
        guard ordered else { throw .verification("scan returned keys out of order") }
        guard bytes == n * (KeyTable.keySize + ValueBuffer.size) else {
            throw .verification(
                "scan saw \(bytes) key+value bytes, expected \(n * (KeyTable.keySize + ValueBuffer.size))")
        }
        let expected = n > 0 ? UInt64(n) * UInt64(n - 1) / 2 : 0
        guard indexSum == expected else { throw .verification("scan values do not match the inserted ones") }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case verification(String)
    case engine(String)
    case usage(String)

    var description: String {
        switch self {
        case .verification(let message): "verification failed: \(message)"
        case .engine(let message): message
        case .usage(let message): message
        }
    }
}
