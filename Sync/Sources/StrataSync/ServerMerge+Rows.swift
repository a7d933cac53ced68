import Logging
import PostgresNIO

/// The rows a batched merge touches: locked and read with one statement per type, merged in memory in upload
/// order, and written back with one multi-row upsert per type and column set.
struct MergedRows {
    /// A row of a synced table: its type and primary key.
    struct RowID: Hashable {
        var type: String
        var key: SyncValue
    }

    /// What a batch has done to one row so far: its merge state and the columns to write.
    struct Row {
        var state = RowState()
        var isChanged = false
        var columnValues: [String: SyncValue?] = [:]
        var collectionValues: [String: PlainJSON] = [:]
        /// Whether the table holds the row (it was found when locked).
        var isInTable = false
        /// The single values the table holds for the row, read when a revive needs them (see `wholeState(of:key:type:on:logger:)`).
        var storedValues: [String: SyncValue]?
    }

    let schema: ServerSchema
    let scope: String
    private var rows: [RowID: Row] = [:]
    /// The changed rows in the order they were first changed (deterministic statements).
    private var changedOrder: [RowID] = []

    /// Locks (`FOR UPDATE`, in key order per table) and reads the rows of every object the changes name.
    init(
        locking changes: some Sequence<ObjectChange>, schema: ServerSchema, scope: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        self.schema = schema
        self.scope = scope
        var keysByType: [String: [SyncValue]] = [:]
        var seen = Set<RowID>()
        for change in changes where seen.insert(RowID(type: change.objectType, key: change.primaryKey)).inserted {
            keysByType[change.objectType, default: []].append(change.primaryKey)
        }
        for typeName in keysByType.keys.sorted() {
            let keys = keysByType[typeName]!
            let type = try schema.type(typeName)
            let table = try schema.qualified(type.className)
            let keyColumn = try SQLName.quoted(type.primaryKey.name)
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(scope)
            bindings.append(try keys.map { try $0.primaryKeySQLText() })
            let found = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT k.i, t._strata_state::text FROM \(table) t
                        JOIN unnest($2::text[]) WITH ORDINALITY AS k(v, i)
                            ON t.\(keyColumn) = k.v::\(type.primaryKey.sqlType)
                        WHERE t._strata_scope = $1 ORDER BY t.\(keyColumn) FOR UPDATE OF t
                        """, binds: bindings), logger: logger)
            for try await (ordinal, stateText) in found.decode((Int64, String).self) {
                let key = keys[Int(ordinal) - 1]
                do {
                    rows[RowID(type: typeName, key: key)] = Row(
                        state: try SyncJSON.decode(RowState.self, from: stateText), isInTable: true)
                } catch {
                    throw SyncError.corruptServerState(
                        "the _strata_state of \(type.className) \(try key.primaryKeySQLText()) is unreadable: \(error)")
                }
            }
        }
    }

    /// Merges `change` (validated) into its row as it stands after the earlier changes of the batch; returns
    /// the accepted part — or, when the change makes the object live again, its whole merged state (see
    /// `wholeState(of:key:type:on:logger:)`).
    mutating func merge(_ change: ObjectChange, on connection: PostgresConnection, logger: Logger) async throws
        -> ObjectChange
    {
        let type = try schema.type(change.objectType)
        let id = RowID(type: change.objectType, key: change.primaryKey)
        var row = rows[id] ?? Row()
        let before = row.state
        let merge = RowMerge(change, into: &row.state, type: type)
        // A create or delete that does not change whether the object exists is sent to nobody, but its time is
        // kept in the state.
        if merge.accepted.isEmpty && row.state == before { return merge.accepted }
        if !row.isChanged {
            row.isChanged = true
            changedOrder.append(id)
        }
        row.columnValues.merge(merge.columnValues) { _, later in later }
        row.collectionValues.merge(merge.collectionValues) { _, later in later }
        // A revive: the row was not live and held a state (a previous life, writes made while it was deleted).
        // Replicas that deleted the object or never had it know nothing of that state, and the creator knows
        // only its create: the accepted part alone (the create's winning properties) would leave them short of
        // the writes stamped later than the create, which the row keeps. Every replica gets the whole row.
        let revived = !before.isLive && row.state.isLive && before != RowState()
        let accepted =
            revived
            ? try await wholeState(of: &row, key: change.primaryKey, type: type, on: connection, logger: logger) : nil
        rows[id] = row
        return accepted ?? merge.accepted
    }

    /// The change that carries `row`'s whole merged state as it stands now (`RowState.snapshotChange`): every
    /// single value with its clock — the value this transaction wrote, else the one the table holds (read once
    /// per row; the row is locked already) — and every collection whole.
    private func wholeState(
        of row: inout Row, key: SyncValue, type: SyncedType, on connection: PostgresConnection, logger: Logger
    ) async throws -> ObjectChange {
        if row.storedValues == nil {
            row.storedValues =
                row.isInTable ? try await storedValues(of: key, type: type, on: connection, logger: logger) : [:]
        }
        var values = row.storedValues ?? [:]
        for (name, value) in row.columnValues { values[name] = value ?? .null }
        return row.state.snapshotChange(type: type.className, key: key, values: values)
    }

    /// The single values of the row of `type` with primary key `key`, read as a snapshot reads them (the capture
    /// trigger's conversion, so they come out as the log would carry them).
    private func storedValues(
        of key: SyncValue, type: SyncedType, on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: SyncValue] {
        let namespace = try SQLName.quoted(schema.namespace)
        let table = try schema.qualified(type.className)
        let keyColumn = try SQLName.quoted(type.primaryKey.name)
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(scope)
        bindings.append(try key.primaryKeySQLText())
        bindings.append(try SyncJSON.text(CaptureTrigger.valueKinds(of: type)))
        let found = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT (SELECT COALESCE(jsonb_object_agg(k.key,
                        \(namespace).strata_sync_value(k.value, to_jsonb(t) -> k.key)), '{}')
                        FROM jsonb_each_text($3::jsonb) AS k)::text
                    FROM \(table) t WHERE t._strata_scope = $1 AND t.\(keyColumn) = $2::\(type.primaryKey.sqlType)
                    """, binds: bindings), logger: logger)
        for try await text in found.decode(String.self) {
            do {
                return try SyncJSON.decode([String: SyncValue].self, from: text)
            } catch {
                throw SyncError.corruptServerState(
                    "the values of \(type.className) \(try key.primaryKeySQLText()) are unreadable: \(error)")
            }
        }
        return [:]
    }

    /// Writes every changed row: one `INSERT … ON CONFLICT DO UPDATE` per type and set of changed columns, its
    /// rows passed as one array per column (see `upsert(_:type:columns:on:logger:)`).
    func write(on connection: PostgresConnection, logger: Logger) async throws {
        struct Group: Hashable {
            var type: String
            var columns: [String]
        }
        var groups: [Group: [RowID]] = [:]
        var groupOrder: [Group] = []
        for id in changedOrder {
            let row = rows[id]!
            let type = try schema.type(id.type)
            let columns = type.columns.map(\.name).filter {
                row.columnValues[$0] != nil || row.collectionValues[$0] != nil
            }
            let group = Group(type: id.type, columns: columns)
            if groups[group] == nil { groupOrder.append(group) }
            groups[group, default: []].append(id)
        }
        for group in groupOrder {
            let type = try schema.type(group.type)
            try await upsert(groups[group]!, type: type, columns: group.columns, on: connection, logger: logger)
        }
    }

    /// PostgreSQL takes at most 65,535 bind parameters per statement; this leaves room.
    static let maximumBindings = 60_000

    /// Upserts `ids` with one statement whose text depends only on the type and columns: each column's values
    /// go in one parameter, a JSON array of texts (`null` for SQL NULL), which `ROWS FROM` turns back into rows.
    /// A `VALUES` list of one parameter per cell instead made PostgreSQL parse and bind thousands of parameters
    /// per statement (about 20 of the 30 ms that 500 rows took; `log_min_duration_statement`).
    private func upsert(
        _ ids: [RowID], type: SyncedType, columns: [String], on connection: PostgresConnection, logger: Logger
    ) async throws {
        let table = try schema.qualified(type.className)
        let keyColumn = try SQLName.quoted(type.primaryKey.name)
        var names = [
            "_strata_scope", keyColumn, "_strata_state", "_strata_deleted", "_strata_created_at", "_strata_deleted_at",
        ]
        let serverColumns = try columns.map { name in
            guard let column = type.column(named: name) else {
                throw SyncError.unknownProperty(type: type.className, property: name)
            }
            return column
        }
        for column in serverColumns { names.append(try SQLName.quoted(column.name)) }
        // One array per column after the scope, in the order of `names`.
        var cells = [[String?]](repeating: [], count: names.count - 1)
        for index in cells.indices { cells[index].reserveCapacity(ids.count) }
        for id in ids {
            let row = rows[id]!
            let state = row.state
            cells[0].append(try id.key.primaryKeySQLText())
            cells[1].append(try SyncJSON.text(state))
            cells[2].append(state.isLive ? "false" : "true")
            cells[3].append(state.created?.description)
            cells[4].append(state.deleted?.description)
            for (offset, column) in serverColumns.enumerated() {
                if let value = row.columnValues[column.name] {
                    cells[5 + offset].append(try value.flatMap { try $0.sqlText(for: column) })
                } else {
                    cells[5 + offset].append(try SyncJSON.text(row.collectionValues[column.name]!))
                }
            }
        }
        var bindings = PostgresBindings(capacity: names.count)
        bindings.append(scope)
        for column in cells { bindings.append(try SyncJSON.text(column)) }
        let functions = cells.indices.map { "jsonb_array_elements_text($\($0 + 2)::jsonb)" }
        let aliases = cells.indices.map { "c\($0)" }
        var expressions = [
            "$1", "u.c0::\(type.primaryKey.sqlType)", "u.c1::jsonb", "u.c2::boolean", "u.c3", "u.c4",
        ]
        for (offset, column) in serverColumns.enumerated() {
            expressions.append(column.textExpression("u.c\(5 + offset)"))
        }
        let updates = names.dropFirst(2).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(table) (\(names.joined(separator: ", ")))
                    SELECT \(expressions.joined(separator: ", "))
                    FROM ROWS FROM (\(functions.joined(separator: ", "))) AS u(\(aliases.joined(separator: ", ")))
                    ON CONFLICT (_strata_scope, \(keyColumn)) DO UPDATE SET \(updates)
                    """, binds: bindings), logger: logger)
    }
}
