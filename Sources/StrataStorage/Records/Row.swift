/// The encoding of one stored object: a fixed slot per column, so reading a property is one bounds check and one
/// load, whatever the other columns hold.
///
/// ```
/// 0        u8   format (2)
/// 1        u16  column count n
/// 3        ⌈n/8⌉ bytes null bitmap (bit c % 8 of byte c / 8 set: column c is null)
/// then     ⌈n/8⌉ bytes variable-size bitmap (bit set: column c holds a variable-size value; never with its null bit)
/// then     n × 8-byte slots: fixed-size values inline (integers, floating point, booleans, object keys);
///          variable-size values as (u32 offset into the tail, u32 length)
/// then     the tail: the variable-size values in column order, back to back, filling the rest of the row exactly
/// ```
/// All integers are little-endian. Columns past `n` (added to the schema after the row was written) read as null.
///
/// Because the variable-size values tile the tail in column order, every offset and length can be checked against
/// the others and against the row's size when the row is read (``RowView/init(_:)``): a length or offset that a
/// page checksum cannot protect (an edit sealed again) is reported as ``StorageError/corruptValue(reason:)``, not
/// read as another string. Rows of format 1 (written before the variable-size bitmap existed: no bitmap, the tail
/// in the order the values were set) are still read, without that check.
public enum RowFormat {
    /// The format byte of rows written by this version.
    public static let version: UInt8 = 2
    /// The format byte of rows without the variable-size bitmap, still read.
    public static let versionWithoutBitmap: UInt8 = 1
    @usableFromInline static let headerSize = 3

    /// Where the slots start in a row of `columns` columns of format `format` (1 or 2), which is also the number
    /// of bitmaps it has.
    @inlinable
    static func slotsOffset(columns: Int, format: UInt8 = version) -> Int {
        headerSize &+ Int(format) &* ((columns &+ 7) &>> 3)
    }
}

/// Builds the bytes of one row. Every column starts null; set the non-null ones, then call ``finish()``.
///
/// The row is built in place, in one buffer: the header, the bitmaps and the slots at their final offsets, then
/// the variable-size values in the order they are set. When those arrive in column order and none is replaced
/// (how rows are written: column by column), that buffer already is the row and ``finish()`` returns it without
/// copying; otherwise ``finish()`` lays the tail out again in column order.
public struct RowBuilder: Sendable {
    /// The row so far: header, null bitmap, variable-size bitmap, slots, then the variable-size values as set.
    private var bytes: [UInt8]
    /// The number of columns.
    public let columnCount: Int
    /// Where the variable-size bitmap and the slots start.
    private let variableOffset: Int
    private let slotsOffset: Int
    /// Where the tail starts (after the last slot); variable-size slots hold offsets from here.
    private let tailOffset: Int
    /// The highest column holding a variable-size value, -1 if none.
    private var lastVariable = -1
    /// False once a variable-size value was set out of column order, or replaced, or cleared: its bytes no longer
    /// tile the tail in column order, so ``finish()`` lays the tail out again.
    private var tailInColumnOrder = true

    /// A row of `columns` columns, all null.
    public init(columns: Int) {
        columnCount = columns
        let bitmap = (columns + 7) / 8
        variableOffset = RowFormat.headerSize + bitmap
        slotsOffset = RowFormat.slotsOffset(columns: columns)
        tailOffset = slotsOffset + columns * 8
        // One allocation, with room for a few short strings after the slots.
        let (tailOffset, variableOffset) = (tailOffset, variableOffset)
        bytes = [UInt8](unsafeUninitializedCapacity: tailOffset + 64) { buffer, count in
            Self.writeEmptyRow(
                into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[..<tailOffset]),
                columns: columns, variableOffset: variableOffset)
            count = tailOffset
        }
    }

    /// Makes this a row of all-null columns again, keeping its memory: a writer that builds many rows of one table
    /// can reuse one builder and allocate nothing per row (an allocation costs about as much as encoding a row).
    /// The bytes a previous ``finish()`` returned are not affected.
    public mutating func reset() {
        bytes.removeSubrange(tailOffset...)
        let (columns, variableOffset) = (columnCount, variableOffset)
        bytes.withUnsafeMutableBytes { Self.writeEmptyRow(into: $0, columns: columns, variableOffset: variableOffset) }
        lastVariable = -1
        tailInColumnOrder = true
    }

    /// Makes this builder hold `row`'s bytes, keeping its memory, so that setting one column and calling
    /// ``finish()`` rewrites that column alone: no other value is decoded or encoded again. Returns false (and
    /// leaves the builder as it was) when `row` is not of the current format or has another number of columns
    /// (a row written before columns were added); build such a row column by column instead.
    public mutating func load(_ row: RowView) -> Bool {
        guard row.columnCount == columnCount, row.slotsOffset == slotsOffset, row.bytes.first == RowFormat.version
        else { return false }
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: row.bytes)
        // The loaded tail is in column order (``RowView/init(_:)`` checked it); later values append after it.
        lastVariable = -1
        for column in stride(from: columnCount - 1, through: 0, by: -1) where isVariable(column) {
            lastVariable = column
            break
        }
        tailInColumnOrder = true
        return true
    }

    /// Writes the header, the bitmaps and the slots of a row whose every column is null into `raw`.
    private static func writeEmptyRow(into raw: UnsafeMutableRawBufferPointer, columns: Int, variableOffset: Int) {
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        raw[0] = RowFormat.version
        raw[1] = UInt8(truncatingIfNeeded: columns)
        raw[2] = UInt8(truncatingIfNeeded: columns >> 8)
        // Every column null: all bits of the null bitmap set, but for those past the last column.
        for byte in RowFormat.headerSize..<variableOffset { raw[byte] = 0xFF }
        if columns % 8 != 0 { raw[variableOffset - 1] = UInt8((1 << (columns % 8)) - 1) }
    }

    private func isVariable(_ column: Int) -> Bool {
        bytes[variableOffset + column >> 3] & (1 << UInt8(column & 7)) != 0
    }

    /// Marks `column` non-null, holding a fixed-size value or (`variableSize`) bytes in the tail, and stores its
    /// slot.
    ///
    /// One pass over the bytes: each subscript of the array checked its uniqueness and bounds again (~100
    /// instructions a column, five to eight times a row's own encoding).
    private mutating func setSlot(_ column: Int, _ slot: UInt64, variableSize: Bool = false) {
        precondition(column >= 0 && column < columnCount, "column \(column) of a row of \(columnCount)")
        let bit: UInt8 = 1 << UInt8(column & 7)
        let (nullByte, variableByte) = (RowFormat.headerSize + column >> 3, variableOffset + column >> 3)
        let offset = slotsOffset + column * 8
        let wasVariable = bytes.withUnsafeMutableBytes { raw in
            let wasVariable = raw[variableByte] & bit != 0
            raw[nullByte] &= ~bit
            raw[variableByte] = variableSize ? raw[variableByte] | bit : raw[variableByte] & ~bit
            raw.storeBytes(of: slot.littleEndian, toByteOffset: offset, as: UInt64.self)
            return wasVariable
        }
        if wasVariable && !variableSize { tailInColumnOrder = false }
    }

    private func slot(_ column: Int) -> UInt64 {
        bytes.withUnsafeBytes {
            UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: slotsOffset + column * 8, as: UInt64.self))
        }
    }

    /// Makes `column` null again.
    public mutating func setNull(_ column: Int) {
        if isVariable(column) { tailInColumnOrder = false }
        setSlot(column, 0)
        bytes[RowFormat.headerSize + column >> 3] |= 1 << UInt8(column & 7)
    }

    /// Stores a signed integer (any width up to 64 bits), an object key or a boolean (0 or 1).
    public mutating func setInt(_ column: Int, _ value: Int64) { setSlot(column, UInt64(bitPattern: value)) }

    /// Stores a boolean.
    public mutating func setBool(_ column: Int, _ value: Bool) { setInt(column, value ? 1 : 0) }

    /// Stores a double by its bit pattern (exact, NaN payloads included).
    public mutating func setDouble(_ column: Int, _ value: Double) { setSlot(column, value.bitPattern) }

    /// Stores a float by its bit pattern.
    public mutating func setFloat(_ column: Int, _ value: Float) { setSlot(column, UInt64(value.bitPattern)) }

    /// Stores bytes in the tail.
    public mutating func setBytes<C: Collection>(_ column: Int, _ value: C) where C.Element == UInt8 {
        if column > lastVariable {
            lastVariable = column
        } else {
            tailInColumnOrder = false
        }
        let offset = bytes.count - tailOffset
        bytes.append(contentsOf: value)
        let length = bytes.count - tailOffset - offset
        setSlot(
            column, UInt64(UInt32(truncatingIfNeeded: offset)) | UInt64(UInt32(truncatingIfNeeded: length)) << 32,
            variableSize: true)
    }

    /// Stores a string as UTF-8 in the tail.
    public mutating func setString(_ column: Int, _ value: String) {
        var value = value
        value.withUTF8 { setBytes(column, $0) }
    }

    /// The encoded row: the variable-size values that are still set, in column order, make up the tail.
    public func finish() -> [UInt8] {
        if tailInColumnOrder { return bytes }
        var row = Array(bytes[..<tailOffset])
        var laidOut = 0
        for column in 0..<columnCount where isVariable(column) {
            let slot = slot(column)
            let offset = tailOffset + Int(UInt32(truncatingIfNeeded: slot))
            let length = Int(slot >> 32)
            row.append(contentsOf: bytes[offset..<(offset + length)])
            let moved = UInt64(UInt32(truncatingIfNeeded: laidOut)) | UInt64(length) << 32
            row.withUnsafeMutableBytes {
                $0.storeBytes(of: moved.littleEndian, toByteOffset: slotsOffset + column * 8, as: UInt64.self)
            }
            laidOut += length
        }
        return row
    }
}

/// A read-only view of one row's bytes, valid while the transaction that produced them is. Creating it checks the
/// row's layout (for rows of the current format: that the variable-size values tile the tail exactly, see
/// ``RowFormat``), so a damaged row yields ``StorageError/corruptValue(reason:)``; every accessor also checks its
/// bounds, so no row is ever read outside its bytes.
public struct RowView {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// The number of columns stored in this row.
    public let columnCount: Int
    @usableFromInline let slotsOffset: Int
    @usableFromInline let tailOffset: Int

    /// Wraps `bytes`; throws ``StorageError/corruptValue(reason:)`` if they are not a row of a known format or its
    /// lengths and offsets do not hold together.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
        // Formats 1 and 2 (`format - 1 < 2`, unsigned).
        guard bytes.count >= RowFormat.headerSize, bytes[0] &- RowFormat.versionWithoutBitmap < 2 else {
            throw Self.damage("has an unknown row format: not a stored object")
        }
        let format = bytes[0]
        let columns = Int(bytes[1]) | Int(bytes[2]) &<< 8
        let slotsOffset = RowFormat.slotsOffset(columns: columns, format: format)
        let tailOffset = slotsOffset &+ columns &* 8
        guard tailOffset <= bytes.count else {
            throw Self.damage("is truncated: \(bytes.count) bytes for \(columns) columns")
        }
        self.bytes = bytes
        self.columnCount = columns
        self.slotsOffset = slotsOffset
        self.tailOffset = tailOffset
        if format == RowFormat.version { try checkTail() }
    }

    /// Checks that the variable-size values tile the tail in column order, each where the one before ends, the last
    /// ending with the row; that no column is both null and variable-size; and that no bit names a column the row
    /// does not have. Runs on every row opened, so it is written to cost a few instructions per string column:
    /// wrapping arithmetic on bounded values, and the error text built out of line.
    @inlinable @inline(__always)
    func checkTail() throws(StorageError) {
        guard let base = bytes.baseAddress, columnCount > 0 else {
            guard tailOffset == bytes.count else { throw Self.damage("has bytes after its last column") }
            return
        }
        let bitmap = (columnCount &+ 7) &>> 3
        guard bitmap <= 8 else { return try checkWideTail(base, bitmap: bitmap) }
        // Up to 64 columns: each bitmap read as one word. Both reads stay inside the row, since at least one 8-byte
        // slot follows the bitmaps.
        let mask: UInt64 = bitmap == 8 ? .max : (1 &<< UInt64(bitmap &* 8)) &- 1
        let nulls = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: RowFormat.headerSize, as: UInt64.self))
        var bits =
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: RowFormat.headerSize &+ bitmap, as: UInt64.self))
            & mask
        guard bits & nulls == 0 else { throw Self.damage("marks a column both null and variable-size") }
        guard columnCount == 64 || bits &>> UInt64(columnCount) == 0 else {
            throw Self.damage("marks a column past its \(columnCount)")
        }
        let tailLength = bytes.count &- tailOffset
        var end = 0
        while bits != 0 {
            let column = bits.trailingZeroBitCount
            bits &= bits &- 1
            end = try place(column, base: base, end: end, tailLength: tailLength)
        }
        guard end == tailLength else { throw Self.damage("has values ending at \(end) of a \(tailLength)-byte tail") }
    }

    /// ``checkTail()`` for rows of more than 64 columns, a byte of each bitmap at a time.
    @usableFromInline
    func checkWideTail(_ base: UnsafeRawPointer, bitmap: Int) throws(StorageError) {
        let tailLength = bytes.count &- tailOffset
        var end = 0
        for index in 0..<bitmap {
            var bits = base.load(fromByteOffset: RowFormat.headerSize &+ bitmap &+ index, as: UInt8.self)
            guard bits & base.load(fromByteOffset: RowFormat.headerSize &+ index, as: UInt8.self) == 0 else {
                throw Self.damage("marks a column both null and variable-size")
            }
            while bits != 0 {
                let column = index &<< 3 | bits.trailingZeroBitCount
                bits &= bits &- 1
                guard column < columnCount else { throw Self.damage("marks a column past its \(columnCount)") }
                end = try place(column, base: base, end: end, tailLength: tailLength)
            }
        }
        guard end == tailLength else { throw Self.damage("has values ending at \(end) of a \(tailLength)-byte tail") }
    }

    /// Where variable-size `column`'s value ends in the tail, given that the values before it end at `end`: it
    /// must start there and fit.
    @inlinable @inline(__always)
    func place(_ column: Int, base: UnsafeRawPointer, end: Int, tailLength: Int) throws(StorageError) -> Int {
        let slot = UInt64(
            littleEndian: base.loadUnaligned(fromByteOffset: slotsOffset &+ column &<< 3, as: UInt64.self))
        let length = Int(truncatingIfNeeded: slot &>> 32)
        guard Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: slot)) == end, length <= tailLength &- end else {
            throw Self.misplaced(column: column, slot: slot, end: end, tailLength: tailLength)
        }
        return end &+ length
    }

    @usableFromInline @inline(never)
    static func damage(_ problem: String) -> StorageError { .corruptValue(reason: "stored object \(problem)") }

    @usableFromInline @inline(never)
    static func misplaced(column: Int, slot: UInt64, end: Int, tailLength: Int) -> StorageError {
        let offset = Int(UInt32(truncatingIfNeeded: slot))
        return damage(
            "holds column \(column) at bytes \(offset)..<\(offset + Int(slot >> 32)) of a \(tailLength)-byte tail, "
                + "expected to start at \(end)")
    }

    /// Reads the first byte of each row in `rows` and tells whether every one is a row of a known format.
    ///
    /// For code about to visit rows in an order that jumps around the file (sorted results): the loads are
    /// independent, so the processor fetches the rows' cache lines (and page-table entries) in parallel instead
    /// of one miss per row as each is reached. The answer is what keeps the loads from being optimised away;
    /// a row that fails it is reported by `init` when it is read.
    @inlinable
    public static func warm(_ rows: ArraySlice<StableValue>) -> Bool {
        var valid = true
        for row in rows {
            valid =
                valid && row.bytes.count >= RowFormat.headerSize
                && row.bytes.load(fromByteOffset: 0, as: UInt8.self) &- RowFormat.versionWithoutBitmap < 2
        }
        return valid
    }

    /// Whether `column` is null (or past the columns this row stores).
    @inlinable
    public func isNull(_ column: Int) -> Bool {
        guard column >= 0, column < columnCount else { return true }
        return bytes[3 + (column >> 3)] & (1 << UInt8(column & 7)) != 0
    }

    @inlinable
    func slot(_ column: Int) -> UInt64 {
        guard column >= 0, column < columnCount else { return 0 }
        return bytes.loadUnaligned(fromByteOffset: slotsOffset + column * 8, as: UInt64.self).littleEndian
    }

    /// The integer in `column` (0 when null).
    @inlinable
    public func int(_ column: Int) -> Int64 { Int64(bitPattern: slot(column)) }

    /// The boolean in `column` (false when null).
    @inlinable
    public func bool(_ column: Int) -> Bool { slot(column) != 0 }

    /// The double in `column` (0 when null).
    @inlinable
    public func double(_ column: Int) -> Double { Double(bitPattern: slot(column)) }

    /// The float in `column` (0 when null).
    @inlinable
    public func float(_ column: Int) -> Float { Float(bitPattern: UInt32(truncatingIfNeeded: slot(column))) }

    /// The variable-size bytes of `column` (empty when null or out of bounds).
    public func withBytes<R>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard !isNull(column) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let slot = slot(column)
        let offset = Int(UInt32(truncatingIfNeeded: slot))
        let length = Int(UInt32(truncatingIfNeeded: slot >> 32))
        let start = tailOffset + offset
        guard offset >= 0, length >= 0, start <= bytes.count, length <= bytes.count - start else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + length]))
    }

    /// The UTF-8 string in `column` ("" when null; invalid UTF-8 is repaired with U+FFFD).
    public func string(_ column: Int) -> String { withBytes(column) { String(decoding: $0, as: UTF8.self) } }

    /// Whether `column` holds the same value in this row and in `other`: both null, or the same fixed-size
    /// value, or (`variableSize`) the same bytes.
    public func column(_ column: Int, equals other: RowView, variableSize: Bool) -> Bool {
        let null = isNull(column)
        guard null == other.isNull(column) else { return false }
        if null { return true }
        guard variableSize else { return slot(column) == other.slot(column) }
        return withBytes(column) { mine in other.withBytes(column) { theirs in mine.elementsEqual(theirs) } }
    }
}

extension RowFormat {
    /// Sets fixed-size `column` of `row`, a stored row of `columns` columns, in place: to `slot` (the 8 bytes
    /// ``RowBuilder`` would store), or to null when `slot` is nil. A fixed-size column's bytes are its slot and its
    /// null bit, so no other byte of the row moves. Returns false, changing nothing, when the row is not of the
    /// current format, has another column count (written before columns were added) or is too short for its slots,
    /// or when the column holds a variable-size value: such a row is rewritten whole.
    @inlinable
    public static func setFixedColumn(_ row: UnsafeMutableRawBufferPointer, column: Int, columns: Int, to slot: UInt64?)
        -> Bool
    {
        let bitmap = (columns &+ 7) &>> 3
        let slotsOffset = slotsOffset(columns: columns)
        guard let base = row.baseAddress, column >= 0, column < columns,
            row.count >= slotsOffset &+ columns &* 8, base.load(as: UInt8.self) == version,
            Int(base.load(fromByteOffset: 1, as: UInt8.self)) | Int(base.load(fromByteOffset: 2, as: UInt8.self)) &<< 8
                == columns
        else { return false }
        let bit = UInt8(1) &<< UInt8(column & 7)
        let nullByte = headerSize &+ column &>> 3
        guard base.load(fromByteOffset: nullByte &+ bitmap, as: UInt8.self) & bit == 0 else { return false }
        let nulls = base.load(fromByteOffset: nullByte, as: UInt8.self)
        base.storeBytes(of: slot == nil ? nulls | bit : nulls & ~bit, toByteOffset: nullByte, as: UInt8.self)
        base.storeBytes(of: (slot ?? 0).littleEndian, toByteOffset: slotsOffset &+ column &<< 3, as: UInt64.self)
        return true
    }
}
