/// The bytes of one stored value, held for repeated reads without another tree lookup.
///
/// Inline values are referenced in place: the bytes stay valid while the read transaction that produced them is
/// alive, or — from a write transaction — until that transaction next modifies anything. Values in overflow
/// chains are copied once into memory this value owns.
public struct StableValue {
    /// The value's bytes.
    public let bytes: UnsafeRawBufferPointer
    private let copy: OwnedBytes?

    init(inPlace bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.copy = nil
    }

    init(copying source: UnsafeRawBufferPointer) {
        let copy = OwnedBytes(source)
        self.bytes = UnsafeRawBufferPointer(start: copy.base, count: source.count)
        self.copy = copy
    }

    /// Heap memory freed with the last value that uses it.
    private final class OwnedBytes {
        let base: UnsafeMutableRawPointer
        init(_ source: UnsafeRawBufferPointer) {
            base = UnsafeMutableRawPointer.allocate(byteCount: max(source.count, 1), alignment: 16)
            if let start = source.baseAddress { base.copyMemory(from: start, byteCount: source.count) }
        }
        deinit { base.deallocate() }
    }
}

extension TreeRead {
    func stableValue(of entry: LeafEntry) throws -> StableValue {
        switch entry.storage {
        case .inline, .subtree:
            return StableValue(inPlace: UnsafeRawBufferPointer(start: entry.payload, count: entry.length))
        case .overflow:
            return try withValue(of: entry) { StableValue(copying: $0) }
        }
    }
}

extension TreeView {
    /// The value under `key` for repeated reads (see ``StableValue``), or nil when the key is absent.
    @inlinable
    public func stableValue<K: StorageBytes>(forKey key: K) throws -> StableValue? {
        try key.withStorageBytes { (key) throws -> StableValue? in try rawStableValue(key) }
    }

    @usableFromInline
    func rawStableValue(_ key: UnsafeRawBufferPointer) throws -> StableValue? {
        guard let entry = try transaction.read.find(key, in: root) else { return nil }
        return try transaction.read.stableValue(of: entry)
    }
}
