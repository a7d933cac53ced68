#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte sequences the engine accepts as keys and values without copying them first.
///
/// `[UInt8]`, `ArraySlice<UInt8>`, `ContiguousArray<UInt8>` and raw buffer pointers conform.
public protocol StorageBytes {
    /// Calls `body` with the bytes, contiguous in memory.
    func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
}

extension Array: StorageBytes where Element == UInt8 {
    /// Calls `body` with the array's bytes.
    @inlinable
    public func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytesTyped(self, body)
    }
}

extension ArraySlice: StorageBytes where Element == UInt8 {
    /// Calls `body` with the slice's bytes.
    @inlinable
    public func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytesTyped(self, body)
    }
}

extension ContiguousArray: StorageBytes where Element == UInt8 {
    /// Calls `body` with the array's bytes.
    @inlinable
    public func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytesTyped(self, body)
    }
}

extension UnsafeRawBufferPointer: StorageBytes {
    /// Calls `body` with this buffer.
    @inlinable
    public func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(self)
    }
}

extension UnsafeMutableRawBufferPointer: StorageBytes {
    /// Calls `body` with this buffer.
    @inlinable
    public func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(self))
    }
}

/// `withUnsafeBytes` for array-like values, preserving a typed error.
@inlinable
func withUnsafeBytesTyped<C: ContiguousBytesProvider, R, E: Error>(
    _ value: C, _ body: (UnsafeRawBufferPointer) throws(E) -> R
) throws(E) -> R {
    let result: Result<R, E> = value.withUnsafeBytes { buffer in
        do throws(E) { return .success(try body(buffer)) } catch { return .failure(error) }
    }
    return try result.get()
}

/// The array types whose `withUnsafeBytes` the conformances above share.
@usableFromInline
protocol ContiguousBytesProvider {
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}
extension Array: ContiguousBytesProvider where Element == UInt8 {}
extension ArraySlice: ContiguousBytesProvider where Element == UInt8 {}
extension ContiguousArray: ContiguousBytesProvider where Element == UInt8 {}

/// Byte-level helpers shared by the page code.
enum Bytes {
    /// Lexicographic comparison of unsigned bytes; a proper prefix sorts first. Returns <0, 0 or >0.
    ///
    /// Keys are usually short (object keys, index entries), so up to 32 bytes are compared inline, eight at a
    /// time as big-endian integers; longer keys go to `memcmp`.
    @inline(__always)
    static func compare(_ a: UnsafeRawPointer?, _ aCount: Int, _ b: UnsafeRawPointer?, _ bCount: Int) -> Int {
        let common = min(aCount, bCount)
        guard common > 0, let a, let b else { return aCount - bCount }
        if common > 32 {
            let result = memcmp(a, b, common)
            return result != 0 ? Int(result) : aCount - bCount
        }
        var index = 0
        while index + 8 <= common {
            let x = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            index += 8
        }
        while index < common {
            let x = a.load(fromByteOffset: index, as: UInt8.self)
            let y = b.load(fromByteOffset: index, as: UInt8.self)
            if x != y { return Int(x) - Int(y) }
            index += 1
        }
        return aCount - bCount
    }

    /// Compares two buffers lexicographically.
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        compare(a.baseAddress, a.count, b.baseAddress, b.count)
    }

    /// Whether the `count` bytes at `pointer` are all zero.
    static func isZero(_ pointer: UnsafeRawPointer, count: Int) -> Bool {
        var index = 0
        while index + 8 <= count {
            if pointer.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { return false }
            index += 8
        }
        while index < count {
            if pointer.load(fromByteOffset: index, as: UInt8.self) != 0 { return false }
            index += 1
        }
        return true
    }

    /// Appends a big-endian integer; big-endian keys sort numerically.
    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
    }

    /// Reads a big-endian integer from a buffer at `offset`. The caller checks the bounds.
    static func readBigEndian<T: FixedWidthInteger>(_ type: T.Type, _ buffer: UnsafeRawBufferPointer, at offset: Int)
        -> T
    {
        T(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeRawPointer {
    @inline(__always) func u8(_ offset: Int) -> UInt8 { load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always) func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UnsafeMutableRawPointer {
    @inline(__always) func setU8(_ offset: Int, _ value: UInt8) {
        storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }
    @inline(__always) func setU16(_ offset: Int, _ value: UInt16) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) func setU32(_ offset: Int, _ value: UInt32) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always) func setU64(_ offset: Int, _ value: UInt64) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }
}
