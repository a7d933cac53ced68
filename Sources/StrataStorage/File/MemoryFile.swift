#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file that lives in memory: the backing of in-memory stores and of the fault-injection layer.
///
/// Its bytes are a ``Mapping`` of anonymous memory. Growing past the mapping copies into a larger one; readers
/// holding the old mapping keep reading it, which is safe because no page they can reach is ever rewritten.
class MemoryFile: PageFile, @unchecked Sendable {
    let path: String
    let isWritable = true
    var isPersistent: Bool { false }

    struct State {
        var mapping: Mapping
        var size: Int
    }
    let state: Locked<State>

    init(name: String, initialCapacity: Int = 1 << 20) {
        self.path = name
        let capacity = Mapping.roundUp(max(initialCapacity, Mapping.systemPageSize), to: Mapping.systemPageSize)
        guard let mapping = Mapping.anonymous(capacity: capacity) else {
            fatalError("out of address space reserving \(capacity) bytes for in-memory store \(name)")
        }
        state = Locked(State(mapping: mapping, size: 0))
    }

    func size() throws(StorageError) -> Int { state.withLock { $0.size } }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(StorageError) {
        let path = self.path
        try state.withLock { (state: inout State) throws(StorageError) in
            let end = offset + buffer.count
            if end > state.mapping.capacity {
                var capacity = state.mapping.capacity
                while capacity < end { capacity *= 2 }
                guard let grown = Mapping.anonymous(capacity: capacity) else { throw .diskFull(path: path) }
                UnsafeMutableRawPointer(mutating: grown.base).copyMemory(
                    from: state.mapping.base, byteCount: state.size)
                state.mapping = grown
            }
            if buffer.count > 0 {
                UnsafeMutableRawPointer(mutating: state.mapping.base + offset).copyMemory(
                    from: buffer.baseAddress!, byteCount: buffer.count)
            }
            state.size = max(state.size, end)
        }
    }

    func sync() throws(StorageError) {}

    func mapping(covering bytes: Int) throws(StorageError) -> Mapping {
        let path = self.path
        return try state.withLock { (state: inout State) throws(StorageError) -> Mapping in
            if state.mapping.capacity < bytes { throw .io(path: path, operation: "map", code: EINVAL) }
            return state.mapping
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(StorageError) -> Int {
        state.withLock { state in
            let count = max(0, min(buffer.count, state.size - offset))
            if count > 0 { buffer.baseAddress!.copyMemory(from: state.mapping.base + offset, byteCount: count) }
            return count
        }
    }

    func truncate(to size: Int) throws(StorageError) {
        state.withLock { state in
            guard size < state.size else { return }
            // Bytes past the end read as zeros if the file grows again, as on disk.
            UnsafeMutableRawPointer(mutating: state.mapping.base + size).initializeMemory(
                as: UInt8.self, repeating: 0, count: state.size - size)
            state.size = size
        }
    }

    func close() {}

    /// A copy of the file's bytes.
    func snapshot() -> [UInt8] {
        state.withLock { state in
            Array(UnsafeRawBufferPointer(start: state.mapping.base, count: state.size))
        }
    }

    /// Replaces the file's bytes (used to load a crash image).
    func load(_ bytes: [UInt8]) {
        _ = try? state.withLock { (state: inout State) throws(StorageError) in
            state.size = 0
        }
        bytes.withUnsafeBytes { _ = try? write($0, at: 0) }
    }
}
