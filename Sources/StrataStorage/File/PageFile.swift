/// The byte store under the pager: a disk file, an in-memory buffer, or a fault-injecting simulation.
///
/// The pager reads only through ``mapping(covering:)`` and writes only through ``write(_:at:)``/``sync()``,
/// which is what lets a test layer drop unsynced writes or tear a page to simulate power loss.
protocol PageFile: AnyObject, Sendable {
    /// The file's path (a descriptive name for in-memory files), used in error messages.
    var path: String { get }
    /// Whether the file may be written.
    var isWritable: Bool { get }
    /// Whether `sync` reaches stable storage (false for in-memory files).
    var isPersistent: Bool { get }
    /// Current size in bytes.
    func size() throws(StorageError) -> Int
    /// Writes `buffer` at byte `offset`, extending the file if needed.
    func write(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(StorageError)
    /// Writes several buffers back to back starting at `offset` (one system call where possible).
    func write(_ buffers: [UnsafeRawBufferPointer], at offset: Int) throws(StorageError)
    /// Makes every completed write durable.
    func sync() throws(StorageError)
    /// Writes `buffer` at `offset` and makes it durable before returning: ``write(_:at:)`` then ``sync()``
    /// unless the file has a cheaper way (a disk file writes page-aligned buffers directly to the device).
    func writeDurably(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(StorageError)
    /// A read view that covers at least `bytes` bytes of the file.
    func mapping(covering bytes: Int) throws(StorageError) -> Mapping
    /// Copies up to `buffer.count` bytes from byte `offset` into `buffer` and returns how many there were (fewer at
    /// the end of the file). For files another process may shorten meanwhile (the commit log), where a mapping
    /// would fault on the bytes cut off.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(StorageError) -> Int
    /// Cuts the file to `size` bytes (never longer). Mappings must not be used past the new end.
    func truncate(to size: Int) throws(StorageError)
    /// Releases the file. Mappings already handed out stay valid until released.
    func close()
}

extension PageFile {
    func writeDurably(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(StorageError) {
        try write(buffer, at: offset)
        try sync()
    }

    func write(_ buffers: [UnsafeRawBufferPointer], at offset: Int) throws(StorageError) {
        var position = offset
        for buffer in buffers {
            try write(buffer, at: position)
            position += buffer.count
        }
    }
}
