import Testing

@testable import StrataStorage

/// A set of one fixed-size column right after a read of the same row patches the entry the read found, without a
/// second search of the leaf (`FoundEntry`), but only while the transaction has not changed since the read. Each
/// test reads a row, changes something a stale shortcut would miss (the row moved, deleted, another row or tree,
/// an earlier set), then sets a column: the stored rows must be exactly what the builder makes for the same edits.
@Suite("Set after a read of the same row")
struct FoundEntryTests {
    private let columns = 3

    /// Row `id`: its id, a counter, and a label of `labelLength` bytes (what makes rows of different sizes).
    private func row(_ id: Int, counter: Int64 = 0, labelLength: Int = 4) -> [UInt8] {
        var builder = RowBuilder(columns: columns)
        builder.setInt(0, Int64(id))
        builder.setInt(1, counter)
        builder.setString(2, String(repeating: "x", count: labelLength))
        return builder.finish()
    }

    /// A transaction over 300 rows (several leaves) whose last put left row 100's leaf remembered, with row 101 in
    /// it: a read of 101 is found there.
    private func withRows(_ body: (WriteTransaction, TreeHandle) throws -> Void) throws -> Store {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "rows", create: .keyed))
            for id in 0..<300 { try txn.put(key(id), row(id), in: tree) }
        }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "rows"))
            try txn.put(key(100), row(100, counter: 1), in: tree)
            try body(txn, tree)
        }
        return store
    }

    private func read(_ id: Int, _ txn: WriteTransaction, _ tree: TreeHandle) throws -> RowView {
        let stored = try #require(try txn.stableValue(forKey: key(id), in: tree))
        return try RowView(stored.bytes)
    }

    private func set(_ id: Int, column: Int, to value: Int64, _ txn: WriteTransaction, _ tree: TreeHandle) throws
        -> Bool
    {
        try key(id).withUnsafeBytes {
            try txn.setFixedColumn(column, columns: columns, to: UInt64(bitPattern: value), inRow: $0, in: tree)
        }
    }

    @Test func aReadThenASetOfTheSameRowPatchesIt() throws {
        let store = try withRows { txn, tree throws in
            #expect(try read(101, txn, tree).int(1) == 0)
            #expect(try set(101, column: 1, to: 7, txn, tree))
            #expect(try read(101, txn, tree).int(1) == 7)
        }
        #expect(try store.read().tree(named: "rows")?.get(key(101)) == row(101, counter: 7))
    }

    @Test func twoSetsAfterOneReadBothLand() throws {
        let store = try withRows { txn, tree throws in
            _ = try read(101, txn, tree)
            #expect(try set(101, column: 1, to: 7, txn, tree))
            #expect(try set(101, column: 0, to: -5, txn, tree))
        }
        var expected = RowBuilder(columns: columns)
        let loaded = try row(101, counter: 7).withUnsafeBytes { expected.load(try RowView($0)) }
        #expect(loaded)
        expected.setInt(0, -5)
        #expect(try store.read().tree(named: "rows")?.get(key(101)) == expected.finish())
    }

    @Test func aSetOfAnotherRowAfterTheReadPatchesThatRow() throws {
        let store = try withRows { txn, tree throws in
            _ = try read(101, txn, tree)
            #expect(try set(102, column: 1, to: 9, txn, tree))
        }
        let view = try #require(try store.read().tree(named: "rows"))
        #expect(try view.get(key(101)) == row(101))
        #expect(try view.get(key(102)) == row(102, counter: 9))
    }

    /// The row was rewritten larger between the read and the set: it moved in its leaf (or the leaf split). A set
    /// that cannot patch says so and the caller puts the row, as `TableStore` does.
    @Test func aSetAfterTheRowWasRewrittenLargerPatchesTheNewRow() throws {
        let store = try withRows { txn, tree throws in
            _ = try read(101, txn, tree)
            try txn.put(key(101), row(101, counter: 3, labelLength: 200), in: tree)
            // Patched, or (the leaf split and the memo went with it) left for the caller's full put.
            if try !set(101, column: 1, to: 4, txn, tree) {
                try txn.put(key(101), row(101, counter: 4, labelLength: 200), in: tree)
            }
        }
        let view = try #require(try store.read().tree(named: "rows"))
        #expect(try view.get(key(101)) == row(101, counter: 4, labelLength: 200))
        #expect(try view.get(key(102)) == row(102))
    }

    /// Another row of the leaf was rewritten larger between the read and the set, and the leaf was compacted or
    /// split to make room: the read row's bytes may have moved.
    @Test func aSetAfterNeighboursGrewPatchesTheRowWhereItIsNow() throws {
        let store = try withRows { txn, tree throws in
            _ = try read(101, txn, tree)
            for id in 95..<110 where id != 101 { try txn.put(key(id), row(id, labelLength: 60), in: tree) }
            if try !set(101, column: 1, to: 4, txn, tree) { try txn.put(key(101), row(101, counter: 4), in: tree) }
        }
        let view = try #require(try store.read().tree(named: "rows"))
        #expect(try view.get(key(101)) == row(101, counter: 4))
        for id in 95..<110 where id != 101 { #expect(try view.get(key(id)) == row(id, labelLength: 60)) }
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")
    }

    @Test func aSetAfterTheRowWasDeletedFindsNothing() throws {
        let store = try withRows { txn, tree throws in
            _ = try read(101, txn, tree)
            #expect(try txn.delete(key(101), in: tree))
            #expect(try set(101, column: 1, to: 4, txn, tree) == false)
        }
        let view = try #require(try store.read().tree(named: "rows"))
        #expect(try view.get(key(101)) == nil)
        #expect(try view.get(key(102)) == row(102))
    }

    /// The row was deleted and put again between the read and the set: it lives elsewhere in the leaf now.
    @Test func aSetAfterTheRowWasDeletedAndPutAgainPatchesTheNewRow() throws {
        let store = try withRows { txn, tree throws in
            _ = try read(101, txn, tree)
            #expect(try txn.delete(key(101), in: tree))
            try txn.put(key(101), row(101, counter: 2), in: tree)
            if try !set(101, column: 1, to: 4, txn, tree) { try txn.put(key(101), row(101, counter: 4), in: tree) }
        }
        let view = try #require(try store.read().tree(named: "rows"))
        #expect(try view.get(key(101)) == row(101, counter: 4))
        #expect(try view.get(key(102)) == row(102))
    }

    /// Another tree with the same keys, modified after the read: the set there must not patch the row read here.
    @Test func aSetInAnotherTreeWithTheSameKeyLeavesTheReadRow() throws {
        let store = try withRows { txn, tree throws in
            let other = try #require(try txn.tree(named: "other", create: .keyed))
            for id in 100..<103 { try txn.put(key(id), row(-id), in: other) }
            _ = try read(101, txn, tree)
            _ = try set(101, column: 1, to: 8, txn, other)
        }
        let snapshot = try store.read()
        #expect(try snapshot.tree(named: "rows")?.get(key(101)) == row(101))
        var expected = RowBuilder(columns: columns)
        let loaded = try row(-101).withUnsafeBytes { expected.load(try RowView($0)) }
        #expect(loaded)
        expected.setInt(1, 8)
        let stored = try #require(try snapshot.tree(named: "other")?.get(key(101)))
        #expect(stored == row(-101) || stored == expected.finish())
    }

    @Test func aCursorOnTheRowSeesTheSet() throws {
        _ = try withRows { txn, tree throws in
            var cursor = try txn.makeCursor(for: tree)
            #expect(try cursor.seek(atOrAfter: key(101)))
            _ = try read(101, txn, tree)
            #expect(try set(101, column: 1, to: 6, txn, tree))
            let counter = try cursor.value().withUnsafeBytes { try RowView($0).int(1) }
            #expect(counter == 6)
        }
    }

    /// A read in a write that is then abandoned leaves nothing for the next write to take: its set searches anew.
    @Test func aReadInAnAbortedWriteIsNotUsedByTheNext() throws {
        let store = try withRows { _, _ in }
        struct Abandon: Error {}
        #expect(throws: Abandon.self) {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "rows"))
                try txn.put(key(100), row(100, counter: 2), in: tree)
                _ = try read(101, txn, tree)
                throw Abandon()
            }
        }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "rows"))
            _ = try set(101, column: 1, to: 5, txn, tree)
        }
        let view = try #require(try store.read().tree(named: "rows"))
        #expect(try view.get(key(100)) == row(100, counter: 1))
        let stored = try #require(try view.get(key(101)))
        #expect(stored == row(101) || stored == row(101, counter: 5))
    }
}
