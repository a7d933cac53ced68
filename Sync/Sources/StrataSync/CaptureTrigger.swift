/// The capture of writes made through plain SQL: a `BEFORE INSERT OR UPDATE OR DELETE` trigger on every synced
/// table turns a write by another program into a change of the replica `server`, stamped with a hybrid
/// timestamp past the row's clocks, numbered in the scope's sequence (the same scope lock as a merge) and
/// appended to the change log, so that it reaches every client through the ordinary pull.
///
/// - An `INSERT` is a create with every captured column; it must give `_strata_scope`.
/// - An `UPDATE` changes the columns whose values differ; setting `_strata_deleted` deletes or re-creates. A
///   re-create logs the row's whole state (``ObjectChange/isWholeState``, the form `RowState.snapshotChange`
///   gives): every captured column stamped anew and every collection from `_strata_state`, so that a replica that
///   deleted the object ends with the row, as with a merge-made revive.
/// - The `INSERT` of an `INSERT … ON CONFLICT` whose row exists logs nothing: its `DO UPDATE` is captured as an
///   update.
/// - A `DELETE` becomes the delete marker: the row stays with `_strata_deleted` true (set the session variable
///   `strata.merging` to `on` to remove rows for good).
///
/// Columns that hold one value, mixed values (in their tagged form) and embedded objects (their plain JSON, read
/// by the embedded type's fields: `strata_sync_plain`) are captured, and so are list, set and map columns: the
/// contents a statement writes become collection operations and the collection's merge state in `_strata_state`
/// is updated as a merge of them would leave it (`strata_sync_collection`, see `CaptureTrigger+Collections.swift`).
/// The trigger's arguments are the type's class name, its single-value kinds, its primary key's column and kind,
/// and its collections' specs. ``ServerMerge`` sets `strata.merging` in its own transactions, so merges are not
/// captured twice.
enum CaptureTrigger {
    /// The statements that create (or replace) the namespace's three functions.
    static func functionStatements(schema: String) -> [String] {
        collectionFunctionStatements(schema: schema) + [
            """
            CREATE OR REPLACE FUNCTION \(schema).strata_sync_value(kind text, value jsonb) RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE AS $fn$
            BEGIN
                IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
                    RETURN '{"null": true}'::jsonb;
                END IF;
                CASE
                WHEN kind IN ('int', 'bool', 'float', 'double', 'string', 'objectId') THEN
                    RETURN jsonb_build_object(kind, value);
                WHEN kind = 'uuid' THEN RETURN jsonb_build_object('uuid', upper(value #>> '{}'));
                WHEN kind = 'decimal128' THEN RETURN jsonb_build_object('decimal128', value #>> '{}');
                WHEN kind = 'date' THEN
                    RETURN jsonb_build_object('date', extract(epoch FROM (value #>> '{}')::timestamptz)::double precision);
                WHEN kind = 'data' THEN
                    RETURN jsonb_build_object('data',
                        translate(encode(decode(substr(value #>> '{}', 3), 'hex'), 'base64'), E'\\n', ''));
                WHEN kind = 'any' THEN RETURN value;
                WHEN kind LIKE 'link:%' THEN
                    RETURN jsonb_build_object('link', \(schema).strata_sync_value(substr(kind, 6), value));
                WHEN left(kind, 1) = '{' THEN RETURN \(schema).strata_sync_plain(kind::jsonb, value);
                ELSE RETURN NULL;
                END CASE;
            END
            $fn$
            """,
            // An embedded object's plain JSON (as PlainJSON writes it) in the tagged form, by the spec the trigger
            // names: a field kind, {"embedded": {field: spec}}, {"list": spec} or {"dictionary": spec}. A value of
            // another JSON type than its field's fails the SQL statement (SQLSTATE 22023), so nothing reaches the
            // log that clients could not read.
            """
            CREATE OR REPLACE FUNCTION \(schema).strata_sync_plain(spec jsonb, input jsonb) RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE AS $fn$
            DECLARE
                kind text;
                shape text := jsonb_typeof(input);
                result jsonb;
            BEGIN
                IF input IS NULL OR shape = 'null' THEN RETURN '{"null": true}'::jsonb; END IF;
                IF jsonb_typeof(spec) = 'object' THEN
                    IF spec ? 'embedded' AND shape = 'object' THEN
                        SELECT COALESCE(jsonb_object_agg(f.key, \(schema).strata_sync_plain(f.value, input -> f.key)), '{}')
                            INTO result FROM jsonb_each(spec -> 'embedded') AS f WHERE input ? f.key;
                        RETURN jsonb_build_object('embedded', result);
                    ELSIF spec ? 'list' AND shape = 'array' THEN
                        SELECT COALESCE(jsonb_agg(\(schema).strata_sync_plain(spec -> 'list', e) ORDER BY i), '[]')
                            INTO result FROM jsonb_array_elements(input) WITH ORDINALITY AS x(e, i);
                        RETURN jsonb_build_object('list', result);
                    ELSIF spec ? 'dictionary' AND shape = 'object' THEN
                        SELECT COALESCE(jsonb_object_agg(f.key, \(schema).strata_sync_plain(spec -> 'dictionary', f.value)), '{}')
                            INTO result FROM jsonb_each(input) AS f;
                        RETURN jsonb_build_object('dictionary', result);
                    END IF;
                    RAISE EXCEPTION 'strata: % does not fit %', input, spec USING ERRCODE = '22023';
                END IF;
                kind := spec #>> '{}';
                IF kind = 'any' THEN
                    -- A mixed value inside an embedded object: its plain JSON lost its kind; take the one it shows.
                    CASE shape
                    WHEN 'number' THEN
                        IF input::text ~ '^-?[0-9]+$' THEN RETURN jsonb_build_object('int', input); END IF;
                        RETURN jsonb_build_object('double', input);
                    WHEN 'string' THEN RETURN jsonb_build_object('string', input);
                    WHEN 'boolean' THEN RETURN jsonb_build_object('bool', input);
                    WHEN 'array' THEN RETURN \(schema).strata_sync_plain('{"list": "any"}', input);
                    ELSE RETURN \(schema).strata_sync_plain('{"dictionary": "any"}', input);
                    END CASE;
                END IF;
                IF (kind = 'int' AND shape = 'number' AND input::text ~ '^-?[0-9]+$')
                    OR (kind = 'bool' AND shape = 'boolean')
                    OR (kind IN ('float', 'double') AND (shape = 'number'
                        OR input #>> '{}' IN ('NaN', 'Infinity', '-Infinity')))
                    OR (kind IN ('string', 'objectId', 'decimal128') AND shape = 'string') THEN
                    RETURN jsonb_build_object(kind, input);
                ELSIF kind = 'uuid' AND shape = 'string' THEN RETURN jsonb_build_object('uuid', upper(input #>> '{}'));
                ELSIF kind = 'seconds' AND shape = 'number' THEN RETURN jsonb_build_object('date', input);
                ELSIF kind = 'base64' AND shape = 'string' THEN RETURN jsonb_build_object('data', input);
                ELSIF kind LIKE 'link:%' THEN
                    RETURN jsonb_build_object('link', \(schema).strata_sync_plain(to_jsonb(substr(kind, 6)), input));
                END IF;
                RAISE EXCEPTION 'strata: % does not fit %', input, spec USING ERRCODE = '22023';
            END
            $fn$
            """,
            """
            CREATE OR REPLACE FUNCTION \(schema).strata_capture() RETURNS trigger LANGUAGE plpgsql AS $fn$
            DECLARE
                kinds jsonb := TG_ARGV[1]::jsonb;
                -- Triggers installed before collections were captured have four arguments.
                collections jsonb := COALESCE(TG_ARGV[4]::jsonb, '{}');
                collection jsonb;
                group_name text;
                written jsonb;
                contents jsonb := '{}';
                key_column text := TG_ARGV[2];
                key_kind text := TG_ARGV[3];
                old_row jsonb;
                new_row jsonb;
                state jsonb;
                latest text;
                wall bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
                stamp text;
                properties jsonb := '{}';
                clocks jsonb := '{}';
                change jsonb;
                sequence bigint;
                scope text;
                column_name text;
                kind text;
                revived boolean := false;
                conflicting boolean;
            BEGIN
                IF current_setting('strata.merging', true) = 'on' THEN
                    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                    RETURN NEW;
                END IF;
                IF TG_OP = 'INSERT' THEN
                    -- The INSERT of an INSERT … ON CONFLICT whose row exists: its DO UPDATE is captured as an
                    -- update (a DO NOTHING writes nothing); a plain INSERT fails on the key. Logging a create here
                    -- would send clients a row PostgreSQL never held. The scope lock first, so that a concurrent
                    -- insert of the same key has committed (or rolled back) before the row is looked for.
                    EXECUTE format('SELECT 1 FROM %I.strata_scope WHERE scope = $1 FOR UPDATE', TG_TABLE_SCHEMA)
                        USING NEW._strata_scope;
                    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I WHERE _strata_scope = $1 AND %I = ($2).%I)',
                        TG_TABLE_SCHEMA, TG_TABLE_NAME, key_column, key_column)
                        INTO conflicting USING NEW._strata_scope, NEW;
                    IF conflicting THEN RETURN NEW; END IF;
                ELSE
                    old_row := to_jsonb(OLD);
                    -- A re-create: replicas that deleted the object know nothing of the row, so the change
                    -- carries it whole (below), as a merge-made revive's does.
                    revived := TG_OP = 'UPDATE' AND OLD._strata_deleted AND NOT NEW._strata_deleted;
                END IF;
                IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
                IF TG_OP = 'INSERT' THEN state := '{}'; scope := NEW._strata_scope;
                ELSE state := COALESCE(OLD._strata_state, '{}'); scope := OLD._strata_scope; END IF;

                -- The next hybrid timestamp of the replica "server": past every clock of the row — and, when the
                -- statement writes a collection or re-creates the row, past its collections' element ids, entry
                -- times, tags and clears too (an insert must land after the element it follows, a map key's write
                -- must win, a re-create must come after every add it keeps), which a write of single values does
                -- not need and would pay for with a read of the whole merge state.
                SELECT max(v COLLATE "C") INTO latest FROM (
                    SELECT value AS v FROM jsonb_each_text(COALESCE(state -> 'clocks', '{}'))
                    UNION ALL SELECT state ->> 'created' UNION ALL SELECT state ->> 'deleted') AS c;
                IF revived OR (TG_OP = 'UPDATE' AND EXISTS (SELECT 1 FROM jsonb_each(collections) AS k
                    WHERE (new_row -> k.key) IS DISTINCT FROM (old_row -> k.key))) THEN
                    SELECT max(v COLLATE "C") INTO latest FROM (
                        SELECT latest AS v
                        UNION ALL SELECT g.value ->> 'clearedAt' FROM jsonb_each(COALESCE(state -> 'lists', '{}')
                            || COALESCE(state -> 'maps', '{}') || COALESCE(state -> 'sets', '{}')) AS g
                        UNION ALL SELECT e ->> 'id' FROM jsonb_each(COALESCE(state -> 'lists', '{}')) AS g,
                            jsonb_array_elements(COALESCE(g.value -> 'elements', '[]')) AS e
                        UNION ALL SELECT x.value ->> 'at' FROM jsonb_each(COALESCE(state -> 'maps', '{}')) AS g,
                            jsonb_each(COALESCE(g.value -> 'entries', '{}')) AS x
                        UNION ALL SELECT t FROM jsonb_each(COALESCE(state -> 'sets', '{}')) AS g,
                            jsonb_array_elements_text(COALESCE(g.value -> 'removedTags', '[]')) AS t
                        UNION ALL SELECT t FROM jsonb_each(COALESCE(state -> 'sets', '{}')) AS g,
                            jsonb_array_elements(COALESCE(g.value -> 'elements', '[]')) AS e,
                            jsonb_array_elements_text(COALESCE(e -> 'tags', '[]')) AS t) AS c;
                END IF;
                IF latest IS NULL OR split_part(latest, '.', 1)::bigint < wall THEN
                    stamp := lpad(wall::text, 15, '0') || '.' || lpad('0', 10, '0') || '.server';
                ELSE
                    stamp := split_part(latest, '.', 1) || '.'
                        || lpad((split_part(latest, '.', 2)::bigint + 1)::text, 10, '0') || '.server';
                END IF;

                change := jsonb_build_object('objectType', TG_ARGV[0], 'primaryKey',
                    \(schema).strata_sync_value(key_kind, COALESCE(new_row, old_row) -> key_column));
                IF TG_OP = 'DELETE' THEN
                    change := change || jsonb_build_object('deleted', stamp);
                    state := state || jsonb_build_object('deleted', stamp);
                ELSE
                    FOR column_name, kind IN SELECT * FROM jsonb_each_text(kinds) LOOP
                        IF TG_OP = 'INSERT' OR revived
                            OR (new_row -> column_name) IS DISTINCT FROM (old_row -> column_name) THEN
                            properties := properties || jsonb_build_object(column_name, jsonb_build_object('value',
                                jsonb_build_object('_0', \(schema).strata_sync_value(kind, new_row -> column_name),
                                    'at', stamp)));
                            clocks := clocks || jsonb_build_object(column_name, stamp);
                        END IF;
                    END LOOP;
                    -- Collections written by the statement: their operations, their merge state, and the column
                    -- as the merge state shows it (strata_sync_collection).
                    FOR column_name, collection IN SELECT * FROM jsonb_each(collections) LOOP
                        IF TG_OP = 'INSERT' OR (new_row -> column_name) IS DISTINCT FROM (old_row -> column_name) THEN
                            group_name := (collection ->> 'shape') || 's';
                            written := \(schema).strata_sync_collection(collection, new_row -> column_name,
                                state -> group_name -> column_name, stamp, TG_OP = 'INSERT');
                            IF jsonb_array_length(written -> 'operations') > 0 THEN
                                properties := properties || jsonb_build_object(column_name, jsonb_build_object(
                                    collection ->> 'shape', jsonb_build_object('_0', written -> 'operations')));
                                state := state || jsonb_build_object(group_name, COALESCE(state -> group_name, '{}')
                                    || jsonb_build_object(column_name, written -> 'state'));
                            END IF;
                            contents := contents || jsonb_build_object(column_name, written -> 'contents');
                        END IF;
                    END LOOP;
                    IF contents <> '{}' THEN NEW := jsonb_populate_record(NEW, contents); END IF;
                    IF TG_OP = 'INSERT' OR (OLD._strata_deleted AND NOT NEW._strata_deleted) THEN
                        change := change || jsonb_build_object('created', stamp);
                        state := state || jsonb_build_object('created', stamp);
                        NEW._strata_created_at := stamp;
                        NEW._strata_deleted := false;
                    ELSIF NEW._strata_deleted AND NOT OLD._strata_deleted THEN
                        change := change || jsonb_build_object('deleted', stamp);
                        state := state || jsonb_build_object('deleted', stamp);
                        NEW._strata_deleted_at := stamp;
                    ELSIF properties = '{}' THEN
                        RETURN NEW;
                    END IF;
                    state := state || jsonb_build_object('clocks', COALESCE(state -> 'clocks', '{}') || clocks);
                    NEW._strata_state := state;
                    IF revived THEN
                        -- The whole state, in the form RowState.snapshotChange gives: every captured column (all
                        -- stamped now, the re-create giving each its value, as an INSERT does), the latest delete,
                        -- and every collection from the merge state whole.
                        IF state ? 'deleted' THEN change := change || jsonb_build_object('deleted', state -> 'deleted'); END IF;
                        SELECT properties || COALESCE(jsonb_object_agg(l.key, jsonb_build_object('list', jsonb_build_object('_0',
                            CASE WHEN l.value ? 'clearedAt'
                                THEN jsonb_build_array(jsonb_build_object('clear', jsonb_build_object('at', l.value -> 'clearedAt')))
                                ELSE '[]'::jsonb END
                            || COALESCE((SELECT jsonb_agg(o.op ORDER BY e.i, o.j)
                                FROM jsonb_array_elements(l.value -> 'elements') WITH ORDINALITY AS e(element, i)
                                CROSS JOIN LATERAL (VALUES (1, jsonb_build_object('insert', e.element - 'removed')),
                                    (2, CASE WHEN (e.element ->> 'removed')::boolean THEN jsonb_build_object('remove',
                                        jsonb_build_object('id', e.element -> 'id')) END)) AS o(j, op)
                                WHERE o.op IS NOT NULL), '[]')))), '{}')
                            INTO properties FROM jsonb_each(COALESCE(state -> 'lists', '{}')) AS l;
                        SELECT properties || COALESCE(jsonb_object_agg(m.key, jsonb_build_object('map', jsonb_build_object('_0',
                            CASE WHEN m.value ? 'clearedAt'
                                THEN jsonb_build_array(jsonb_build_object('clear', jsonb_build_object('at', m.value -> 'clearedAt')))
                                ELSE '[]'::jsonb END
                            || COALESCE((SELECT jsonb_agg(jsonb_build_object('set', jsonb_build_object('key', x.key) || x.value)
                                ORDER BY x.key COLLATE "C") FROM jsonb_each(COALESCE(m.value -> 'entries', '{}')) AS x), '[]')))), '{}')
                            INTO properties FROM jsonb_each(COALESCE(state -> 'maps', '{}')) AS m;
                        SELECT properties || COALESCE(jsonb_object_agg(t.key, jsonb_build_object('set', jsonb_build_object('_0',
                            COALESCE((SELECT jsonb_agg(o.op ORDER BY e.i, o.j, o.k)
                                FROM jsonb_array_elements(COALESCE(t.value -> 'elements', '[]')) WITH ORDINALITY AS e(element, i)
                                CROSS JOIN LATERAL (
                                    SELECT 1, g.k, jsonb_build_object('add', jsonb_build_object('value', e.element -> 'value',
                                        'tag', g.tag))
                                    FROM jsonb_array_elements(e.element -> 'tags') WITH ORDINALITY AS g(tag, k)
                                    UNION ALL
                                    SELECT 2, 0, jsonb_build_object('remove', jsonb_build_object('value', e.element -> 'value',
                                        'observedTags', t.value -> 'removedTags'))
                                    WHERE jsonb_array_length(COALESCE(t.value -> 'removedTags', '[]')) > 0) AS o(j, k, op)),
                                '[]')))), '{}')
                            INTO properties FROM jsonb_each(COALESCE(state -> 'sets', '{}')) AS t;
                        change := change || '{"wholeState": true}';
                    END IF;
                END IF;
                change := change || jsonb_build_object('properties', properties);

                EXECUTE format('INSERT INTO %I.strata_scope AS s (scope, last_seq) VALUES ($1, 1)
                    ON CONFLICT (scope) DO UPDATE SET last_seq = s.last_seq + 1 RETURNING last_seq', TG_TABLE_SCHEMA)
                    INTO sequence USING scope;
                EXECUTE format('INSERT INTO %I.strata_change_log (scope, seq, changes) VALUES ($1, $2, $3)',
                    TG_TABLE_SCHEMA) USING scope, sequence, jsonb_build_array(change);
                PERFORM pg_notify('strata_' || scope, sequence::text);

                IF TG_OP = 'DELETE' THEN
                    PERFORM set_config('strata.merging', 'on', true);
                    EXECUTE format('UPDATE %I.%I SET _strata_deleted = true, _strata_deleted_at = $1,
                        _strata_state = $2 WHERE _strata_scope = $3 AND %I = ($4).%I',
                        TG_TABLE_SCHEMA, TG_TABLE_NAME, key_column, key_column)
                        USING stamp, state, scope, OLD;
                    PERFORM set_config('strata.merging', '', true);
                    RETURN NULL;
                END IF;
                RETURN NEW;
            END
            $fn$
            """,
        ]
    }

    /// The `strata_sync_value` kind of each single-value column of `type`, by column name: how its SQL value
    /// reads as a ``SyncValue`` (used by the trigger and by snapshot reads).
    static func valueKinds(of type: SyncedType) -> [String: String] {
        var kinds: [String: String] = [:]
        for column in type.columns where column.shape == .value {
            switch column.link {
            case .object(_, let primaryKey): kinds[column.name] = "link:" + primaryKey.rawValue
            case .embedded: if let spec = plainSpec(column) { kinds[column.name] = spec }
            case nil: kinds[column.name] = column.property.type.rawValue
            }
        }
        return kinds
    }

    /// The statement that creates (or replaces) the trigger of `type`'s table `table`, in the PostgreSQL schema
    /// `schema` (both quoted).
    static func triggerStatement(for type: SyncedType, schema: String, table: String) -> String {
        let kindsJSON =
            "{"
            + valueKinds(of: type).sorted { $0.key < $1.key }.map { "\(literal($0.key)): \(literal($0.value))" }
            .joined(separator: ", ") + "}"
        let collectionsJSON =
            "{"
            + collectionSpecs(of: type).sorted { $0.key < $1.key }.map { "\(literal($0.key)): \($0.value)" }
            .joined(separator: ", ") + "}"
        let arguments = [
            type.className, kindsJSON, type.primaryKey.name, type.primaryKey.property.type.rawValue, collectionsJSON,
        ]
        .map { "'" + $0.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'" }
        return """
            CREATE OR REPLACE TRIGGER strata_capture BEFORE INSERT OR UPDATE OR DELETE ON \(table)
            FOR EACH ROW EXECUTE FUNCTION \(schema).strata_capture(\(arguments.joined(separator: ", ")))
            """
    }

    /// The spec `strata_sync_plain` reads `column`'s plain JSON by (JSON text): a field kind (dates as `seconds`,
    /// data as `base64`, as ``PlainJSON`` writes them), an embedded object's fields, a list's or a map's element.
    /// Nil for an embedded type whose fields are unknown (one that holds itself): its column is not captured.
    static func plainSpec(_ column: ServerColumn) -> String? {
        guard let element = elementSpec(column) else { return nil }
        switch column.shape {
        case .value: return element
        case .list, .set: return "{\"list\": " + element + "}"
        case .map: return "{\"dictionary\": " + element + "}"
        }
    }

    /// The spec of one of `column`'s values (of an element, for a collection): see ``plainSpec(_:)``.
    static func elementSpec(_ column: ServerColumn) -> String? {
        let element: String
        switch column.link {
        case .object(_, let primaryKey): element = literal("link:" + primaryKey.rawValue)
        case .embedded:
            guard !column.embeddedColumns.isEmpty else { return nil }
            var fields: [String] = []
            for field in column.embeddedColumns {
                guard let spec = plainSpec(field) else { return nil }
                fields.append(literal(field.name) + ": " + spec)
            }
            element = "{\"embedded\": {" + fields.joined(separator: ", ") + "}}"
        case nil:
            switch column.property.type {
            case .date: element = literal("seconds")
            case .data: element = literal("base64")
            default: element = literal(column.property.type.rawValue)
            }
        }
        return element
    }

    /// `text` as a JSON string literal.
    private static func literal(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
