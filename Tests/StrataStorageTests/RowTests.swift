import StrataTestSupport
import Testing

@testable import StrataStorage

@Suite("Rows")
struct RowTests {
    @Test func everyColumnKindRoundTrips() throws {
        var builder = RowBuilder(columns: 10)
        builder.setInt(0, .min)
        builder.setBool(1, true)
        builder.setDouble(2, -.infinity)
        builder.setFloat(3, .nan)
        builder.setString(4, "héllo\u{0}")
        builder.setBytes(5, [1, 2, 3])
        builder.setString(7, "")
        builder.setInt(8, 5)
        builder.setNull(8)
        let bytes = builder.finish()
        try bytes.withUnsafeBytes { raw in
            let row = try RowView(raw)
            #expect(row.columnCount == 10)
            #expect(row.int(0) == .min)
            #expect(row.bool(1))
            #expect(row.double(2) == -.infinity)
            #expect(row.float(3).isNaN)
            #expect(row.string(4) == "héllo\u{0}")
            #expect(row.withBytes(5) { Array($0) } == [1, 2, 3])
            #expect(row.isNull(6))
            #expect(!row.isNull(7) && row.string(7) == "")
            #expect(row.isNull(8) && row.int(8) == 0)
            #expect(row.isNull(9))
            // Columns past the row (added to the schema later) read as null.
            #expect(row.isNull(10) && row.int(10) == 0 && row.string(10) == "")
            #expect(row.isNull(-1))
        }
    }

    @Test func aResetBuilderMakesTheSameRowsAsAFreshOneAndLeavesFinishedRowsAlone() {
        var reused = RowBuilder(columns: 9)
        var finished: [[UInt8]] = []
        for round in 0..<4 {
            var fresh = RowBuilder(columns: 9)
            if round > 0 { reused.reset() }
            for builder in [0, 1] {
                func fill(_ row: inout RowBuilder) {
                    row.setInt(0, Int64(round))
                    if round % 2 == 0 { row.setString(3, String(repeating: "x", count: round * 40)) }
                    row.setString(1, "r\(round)")  // out of column order: the tail is laid out again
                    if round == 2 { row.setNull(3) }
                    row.setDouble(8, Double(round))
                }
                if builder == 0 { fill(&fresh) } else { fill(&reused) }
            }
            #expect(reused.finish() == fresh.finish(), "round \(round)")
            finished.append(reused.finish())
        }
        // Rows already finished keep their bytes while the builder is reset and refilled.
        #expect(finished.map { $0.withUnsafeBytes { (try? RowView($0))?.int(0) } } == [0, 1, 2, 3])
    }

    @Test func warmingTellsWhetherEveryRowHasTheRowFormat() {
        var builder = RowBuilder(columns: 1)
        builder.setInt(0, 42)
        let good = builder.finish()
        var wrongVersion = good
        wrongVersion[0] = RowFormat.version &+ 1
        let tooShort = Array(good.prefix(RowFormat.headerSize - 1))
        good.withUnsafeBytes { good in
            wrongVersion.withUnsafeBytes { wrongVersion in
                tooShort.withUnsafeBytes { tooShort in
                    let rows = [good, good, wrongVersion, good, tooShort].map { StableValue(inPlace: $0) }
                    #expect(RowView.warm(rows[0..<2]))
                    #expect(RowView.warm(rows[0..<0]))
                    #expect(!RowView.warm(rows[1..<3]))
                    #expect(!RowView.warm(rows[3..<5]))
                }
            }
        }
    }

    @Test func damagedRowsNeverReadOutOfBounds() throws {
        var builder = RowBuilder(columns: 2)
        builder.setString(0, "a string in the tail")
        builder.setInt(1, 7)
        let good = builder.finish()
        // Truncated anywhere inside the slots, or of another format: a typed error.
        for length in 0..<RowFormat.slotsOffset(columns: 2) + 16 {
            #expect(throws: StorageError.self) {
                try Array(good.prefix(length)).withUnsafeBytes { _ = try RowView($0) }
            }
        }
        var foreign = good
        foreign[0] = 99
        #expect(throws: StorageError.self) { try foreign.withUnsafeBytes { _ = try RowView($0) } }
        // Random slot bytes, a shortened tail: either the row is refused as damaged, or every read stays inside it.
        var generator = SeededGenerator(seed: 3)
        for legacy in [false, true] {
            var row = good
            if legacy { row = Self.withoutBitmap(row, columns: 2) }
            let slots = RowFormat.slotsOffset(columns: 2, format: row[0])
            for _ in 0..<500 {
                var damaged = row
                for index in slots..<(slots + 8) { damaged[index] = UInt8.random(in: 0...255, using: &generator) }
                damaged.removeLast(Int.random(in: 0...10, using: &generator))
                try damaged.withUnsafeBytes { raw in
                    let view: RowView
                    do throws(StorageError) {
                        view = try RowView(raw)
                    } catch {
                        guard case .corruptValue = error else { throw error }
                        return
                    }
                    let value = view.withBytes(0) { Array($0) }
                    #expect(value.count <= raw.count)
                    _ = view.string(0)
                    _ = view.int(1)
                }
            }
        }
    }

    /// A format 1 row with the same columns as the format 2 row `row` (no variable-size bitmap).
    static func withoutBitmap(_ row: [UInt8], columns: Int) -> [UInt8] {
        let bitmap = (columns + 7) / 8
        var legacy = row
        legacy.removeSubrange((RowFormat.headerSize + bitmap)..<(RowFormat.headerSize + 2 * bitmap))
        legacy[0] = RowFormat.versionWithoutBitmap
        return legacy
    }

    @Test func variableSizeValuesTileTheTailInColumnOrder() throws {
        // Set out of column order, one replaced, one overwritten by an integer, one made null: only the values still
        // set remain in the tail, in column order.
        var builder = RowBuilder(columns: 9)
        builder.setString(5, "five")
        builder.setString(1, "one")
        builder.setString(3, "three")
        builder.setString(1, "uno")
        builder.setString(7, "seven")
        builder.setInt(3, 3)
        builder.setNull(7)
        builder.setBytes(8, [])
        let bytes = builder.finish()
        let tail = bytes.suffix(from: RowFormat.slotsOffset(columns: 9) + 9 * 8)
        #expect(Array(tail) == Array("unofive".utf8))
        try bytes.withUnsafeBytes { raw in
            let row = try RowView(raw)
            #expect(row.string(1) == "uno" && row.string(5) == "five" && row.int(3) == 3)
            #expect(row.isNull(7) && !row.isNull(8) && row.withBytes(8) { $0.count } == 0)
        }
        // The same row without the bitmap (written before it existed) reads the same.
        try Self.withoutBitmap(bytes, columns: 9).withUnsafeBytes { raw in
            let row = try RowView(raw)
            #expect(row.string(1) == "uno" && row.string(5) == "five" && row.int(3) == 3)
        }
    }

    @Test func rowsBuiltInAnyOrderAreTheSameBytes() throws {
        // Column order (the builder's in-place path) and reverse order (laid out again by finish) agree.
        let values: [(Int, String?)] = [(0, "zero"), (1, nil), (2, ""), (4, "four"), (5, nil), (6, "six and more")]
        func build(_ order: [(Int, String?)]) -> [UInt8] {
            var builder = RowBuilder(columns: 7)
            for (column, value) in order {
                if let value { builder.setString(column, value) } else { builder.setInt(column, Int64(column)) }
            }
            return builder.finish()
        }
        #expect(build(values) == build(values.reversed()))
    }

    @Test func randomEditsReadBackAsTheLastValueSet() throws {
        enum Cell: Equatable {
            case null
            case int(Int64)
            case bytes([UInt8])
        }
        var generator = SeededGenerator(seed: 11)
        for round in 0..<300 {
            let columns = 1 + round % 13
            var builder = RowBuilder(columns: columns)
            var model = [Cell](repeating: .null, count: columns)
            for _ in 0..<Int.random(in: 0...20, using: &generator) {
                let column = Int.random(in: 0..<columns, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    builder.setNull(column)
                    model[column] = .null
                case 1:
                    let value = Int64.random(in: .min ... .max, using: &generator)
                    builder.setInt(column, value)
                    model[column] = .int(value)
                default:
                    let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }
                    builder.setBytes(column, bytes)
                    model[column] = .bytes(bytes)
                }
            }
            let bytes = builder.finish()
            try bytes.withUnsafeBytes { raw in
                // Opening the row checks that the values tile the tail exactly, in column order.
                let row = try RowView(raw)
                for column in 0..<columns {
                    switch model[column] {
                    case .null: #expect(row.isNull(column))
                    case .int(let value): #expect(!row.isNull(column) && row.int(column) == value)
                    case .bytes(let value): #expect(!row.isNull(column) && row.withBytes(column) { Array($0) } == value)
                    }
                }
            }
        }
    }

    /// A builder loaded with a stored row and then edited (how one property of a stored object is set) gives the
    /// stored row with those edits, whatever the builder held before: values kept, replaced, nulled or added.
    @Test func aLoadedRowEditedReadsBackAsTheStoredRowWithTheEdits() throws {
        enum Cell: Equatable {
            case null
            case int(Int64)
            case bytes([UInt8])
        }
        func randomCell(_ generator: inout SeededGenerator) -> Cell {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: .null
            case 1: .int(Int64.random(in: .min ... .max, using: &generator))
            default:
                .bytes(
                    (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    })
            }
        }
        func set(_ cell: Cell, _ column: Int, in builder: inout RowBuilder) {
            switch cell {
            case .null: builder.setNull(column)
            case .int(let value): builder.setInt(column, value)
            case .bytes(let value): builder.setBytes(column, value)
            }
        }
        var generator = SeededGenerator(seed: 23)
        for round in 0..<300 {
            let columns = 1 + round % 11
            var model = (0..<columns).map { _ in randomCell(&generator) }
            var original = RowBuilder(columns: columns)
            for column in 0..<columns { set(model[column], column, in: &original) }
            let stored = original.finish()
            // The builder that loads it held another row of the same width (a reused builder).
            var builder = RowBuilder(columns: columns)
            set(.bytes([9, 9, 9]), columns - 1, in: &builder)
            let loaded = try stored.withUnsafeBytes { raw in builder.load(try RowView(raw)) }
            #expect(loaded)
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let column = Int.random(in: 0..<columns, using: &generator)
                model[column] = randomCell(&generator)
                set(model[column], column, in: &builder)
            }
            let edited = builder.finish()
            try edited.withUnsafeBytes { raw in
                // Opening the row checks that the values tile the tail exactly, in column order.
                let row = try RowView(raw)
                #expect(row.columnCount == columns)
                for column in 0..<columns {
                    switch model[column] {
                    case .null: #expect(row.isNull(column))
                    case .int(let value): #expect(!row.isNull(column) && row.int(column) == value)
                    case .bytes(let value): #expect(!row.isNull(column) && row.withBytes(column) { Array($0) } == value)
                    }
                }
            }
        }
    }

    /// A row of another width (written before columns were added) is not loaded: the builder is left as it was.
    /// A fixed-size column set in place (its slot and null bit) gives the bytes the builder gives for the same edit,
    /// for every column of a row spanning two bitmap bytes, to a value and to null; a variable-size column, a row of
    /// another width or format, and a short row are left alone.
    @Test func aFixedColumnSetInPlaceIsTheRowTheBuilderMakes() throws {
        let columns = 19
        var original = RowBuilder(columns: columns)
        for column in 0..<columns {
            switch column % 4 {
            case 0: original.setInt(column, Int64(column) * -1_000_003)
            case 1: original.setString(column, String(repeating: "s", count: column))
            case 2: original.setDouble(column, Double(column) + 0.5)
            default: break  // null
            }
        }
        let stored = original.finish()
        for column in 0..<columns {
            for slot in [UInt64?.none, 0, 0x0102_0304_0506_0708] {
                var patched = stored
                let written = patched.withUnsafeMutableBytes {
                    RowFormat.setFixedColumn($0, column: column, columns: columns, to: slot)
                }
                guard column % 4 != 1 else {
                    #expect(!written && patched == stored, "column \(column) holds a string")
                    continue
                }
                var builder = RowBuilder(columns: columns)
                let loaded = try stored.withUnsafeBytes { builder.load(try RowView($0)) }
                #expect(loaded)
                if let slot { builder.setInt(column, Int64(bitPattern: slot)) } else { builder.setNull(column) }
                #expect(written && patched == builder.finish(), "column \(column), slot \(String(describing: slot))")
            }
        }
        var other = stored
        for (columns, row) in [(columns + 1, stored), (columns, Array(stored.prefix(40)))] {
            other = row
            #expect(!other.withUnsafeMutableBytes { RowFormat.setFixedColumn($0, column: 0, columns: columns, to: 1) })
        }
        other = stored
        other[0] = RowFormat.versionWithoutBitmap
        #expect(!other.withUnsafeMutableBytes { RowFormat.setFixedColumn($0, column: 0, columns: columns, to: 1) })
        #expect(other.dropFirst() == stored.dropFirst())
        other = stored
        #expect(
            !other.withUnsafeMutableBytes { RowFormat.setFixedColumn($0, column: columns, columns: columns, to: 1) })
        #expect(other == stored)
    }

    @Test func aRowOfAnotherWidthIsNotLoaded() throws {
        var narrow = RowBuilder(columns: 3)
        narrow.setInt(0, 7)
        let stored = narrow.finish()
        var builder = RowBuilder(columns: 4)
        builder.setString(1, "kept")
        let loaded = try stored.withUnsafeBytes { raw in builder.load(try RowView(raw)) }
        #expect(!loaded)
        try builder.finish().withUnsafeBytes { raw in
            let row = try RowView(raw)
            #expect(row.columnCount == 4 && row.isNull(0) && row.string(1) == "kept")
        }
    }

    /// Every edit of a variable-size value's offset or length, of the column count, of the bitmaps, or of the row's
    /// size is refused as damage, never read as another value.
    @Test func editedLengthsAndOffsetsAreDamage() throws {
        var builder = RowBuilder(columns: 4)
        builder.setString(0, "alpha")
        builder.setInt(1, 42)
        builder.setString(2, "beta")
        builder.setBytes(3, [1, 2, 3])
        let good = builder.finish()
        let slots = RowFormat.slotsOffset(columns: 4)
        func slot(_ column: Int, _ field: Int) -> Int { slots + column * 8 + field * 4 }
        var edits: [(String, [UInt8])] = []
        for column in [0, 2, 3] {
            for field in [0, 1] {
                for delta in [-1, 1, 2] {
                    var row = good
                    let at = slot(column, field)
                    row[at] = UInt8(truncatingIfNeeded: Int(row[at]) + delta)
                    edits.append(("column \(column) \(field == 0 ? "offset" : "length") \(delta)", row))
                }
            }
        }
        var longer = good
        longer.append(0)
        edits.append(("a byte appended", longer))
        edits.append(("a byte removed", Array(good.dropLast())))
        var nullAndVariable = good
        nullAndVariable[RowFormat.headerSize] |= 1
        edits.append(("column 0 marked null", nullAndVariable))
        var notVariable = good
        notVariable[RowFormat.headerSize + 1] &= ~4
        edits.append(("column 2 not marked variable-size", notVariable))
        var fixedMarked = good
        fixedMarked[RowFormat.headerSize + 1] |= 2
        edits.append(("column 1 marked variable-size", fixedMarked))
        var columns = good
        columns[1] = 3
        edits.append(("column count 3", columns))
        for (edit, row) in edits {
            let error = row.withUnsafeBytes { raw -> StorageError? in
                do throws(StorageError) {
                    _ = try RowView(raw)
                    return nil
                } catch {
                    return error
                }
            }
            guard case .corruptValue = error else {
                Issue.record("\(edit): \(String(describing: error)) instead of corruptValue")
                continue
            }
        }
    }

    /// Rows of more than 64 columns are checked a bitmap byte at a time: the same rules hold.
    @Test func wideRowsAreCheckedToo() throws {
        var builder = RowBuilder(columns: 70)
        builder.setString(3, "three")
        builder.setInt(10, 10)
        builder.setString(65, "sixty-five")
        builder.setString(69, "")
        let good = builder.finish()
        try good.withUnsafeBytes { raw in
            let row = try RowView(raw)
            #expect(row.string(3) == "three" && row.string(65) == "sixty-five" && row.string(69) == "")
            #expect(row.int(10) == 10 && row.isNull(64))
        }
        var longer = good
        let length = RowFormat.slotsOffset(columns: 70) + 65 * 8 + 4
        longer[length] += 1
        #expect(throws: StorageError.self) { try longer.withUnsafeBytes { _ = try RowView($0) } }
    }
}
