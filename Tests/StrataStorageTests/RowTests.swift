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
        for length in 0..<(3 + 1 + 16) {
            #expect(throws: StorageError.self) {
                try Array(good.prefix(length)).withUnsafeBytes { _ = try RowView($0) }
            }
        }
        var foreign = good
        foreign[0] = 99
        #expect(throws: StorageError.self) { try foreign.withUnsafeBytes { _ = try RowView($0) } }
        // A slot pointing past the tail: the value reads as empty, never beyond the buffer.
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<500 {
            var damaged = good
            for index in 4..<12 { damaged[index] = UInt8.random(in: 0...255, using: &generator) }
            damaged.removeLast(Int.random(in: 0...10, using: &generator))
            try damaged.withUnsafeBytes { raw in
                let row = try RowView(raw)
                let value = row.withBytes(0) { Array($0) }
                #expect(value.count <= raw.count)
                _ = row.string(0)
                _ = row.int(1)
            }
        }
    }
}
