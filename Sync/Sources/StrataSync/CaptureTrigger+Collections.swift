/// The capture of collection columns written through plain SQL: the column holds the materialised contents (a
/// list or set a jsonb array, a map a jsonb object, elements in the column's plain form), and the trigger turns the
/// new contents into the collection operations a client would send for the same edit, stamped with the statement's
/// time, and updates the collection's merge state in `_strata_state` as merging those operations would.
///
/// - A list is diffed against the elements its merge state shows: those the old and new contents share at the
///   start and at the end stay, and between them a longest common subsequence (when the part between is at most
///   ``maximumLCSCells`` old × new elements; otherwise all of it is replaced); the other old elements are removed
///   (tombstones, by id) and the new ones inserted, each after the element kept or inserted before it, with
///   fresh ids (the statement's time, `#` and a number, which sort as text in order, as a client's ids do). So an
///   append is one insert and a client's concurrent insert keeps its place, as with a client's edit. An
///   `INSERT`'s list is a `clear` and inserts, as a client's create is.
/// - A map is written per key: a key new or holding another value is set, a key gone is removed (a nil value at
///   the statement's time); an `INSERT` starts with a `clear`, as a client's create does.
/// - A set adds each value it did not hold with a fresh tag and removes each value gone with the tags the state
///   holds for it (those are the adds PostgreSQL has seen: an add a client makes concurrently still wins).
extension CaptureTrigger {
    /// The largest table (old elements × new ones, between the parts they share at the start and the end) for
    /// which a plain-SQL list write is diffed by a longest common subsequence: 241,200 cells took 0.17 s (PostgreSQL
    /// 15, load average 5); beyond it the part between is replaced, which costs no more than the elements.
    static let maximumLCSCells = 250_000

    /// The statements that create (or replace) the namespace's three collection functions: `strata_sync_element`
    /// (one element in the tagged form), `strata_sync_list_order` (a list's shown elements) and
    /// `strata_sync_collection` (a column's operations and merge state).
    static func collectionFunctionStatements(schema: String) -> [String] {
        [
            // One element of a collection column in the tagged form: plain JSON by the element's spec (as an
            // embedded object's field), a mixed element as the tagged value the column holds (checked: one known
            // kind, no nested collection, which clients cannot hold in an element). Anything else fails the
            // statement with SQLSTATE 22023.
            """
            CREATE OR REPLACE FUNCTION \(schema).strata_sync_element(spec jsonb, optional boolean, input jsonb)
            RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
            DECLARE
                tag text;
            BEGIN
                IF input IS NULL OR jsonb_typeof(input) = 'null' THEN
                    IF optional OR spec = '"any"'::jsonb THEN RETURN '{"null": true}'::jsonb; END IF;
                    RAISE EXCEPTION 'strata: null is not an element of a collection of %', spec USING ERRCODE = '22023';
                END IF;
                IF spec <> '"any"'::jsonb THEN RETURN \(schema).strata_sync_plain(spec, input); END IF;
                IF jsonb_typeof(input) = 'object' AND (SELECT count(*) FROM jsonb_object_keys(input)) = 1 THEN
                    SELECT k INTO tag FROM jsonb_object_keys(input) AS k;
                    IF tag = 'null' THEN RETURN '{"null": true}'::jsonb;
                    ELSIF tag IN ('bool', 'int', 'float', 'double', 'string', 'decimal128', 'objectId', 'uuid')
                        AND jsonb_typeof(input -> tag) <> 'null' THEN
                        RETURN \(schema).strata_sync_plain(to_jsonb(tag), input -> tag);
                    ELSIF tag = 'date' AND jsonb_typeof(input -> tag) = 'number' THEN RETURN input;
                    ELSIF tag = 'data' AND jsonb_typeof(input -> tag) = 'string' THEN RETURN input;
                    ELSIF tag = 'typedLink' AND jsonb_typeof(input -> tag -> 'type') = 'string'
                        AND jsonb_typeof(input -> tag -> 'key') = 'object' THEN RETURN input;
                    END IF;
                END IF;
                RAISE EXCEPTION 'strata: % is not a mixed collection element (a tagged value, no list or dictionary)',
                    input USING ERRCODE = '22023';
            END
            $fn$
            """,
            // The shown elements of a list's merge state in list order, as [{"id": …, "value": …}]: ListState.walk
            // (a depth-first walk of the "inserted after" tree, the later of two siblings first; an element that
            // follows an id the list does not know follows the start), without the removed elements and those
            // inserted before the latest clear. Iterative, with a stack: a list typed one element after the other
            // is a chain as deep as the list is long.
            """
            CREATE OR REPLACE FUNCTION \(schema).strata_sync_list_order(state jsonb) RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE AS $fn$
            DECLARE
                cleared text := state ->> 'clearedAt';
                by_id jsonb;
                children jsonb;
                stack text[];
                top integer;
                id text;
                child text;
                element jsonb;
                shown jsonb[] := '{}';
                shown_count integer := 0;
            BEGIN
                SELECT COALESCE(jsonb_object_agg(e ->> 'id', e), '{}') INTO by_id
                    FROM jsonb_array_elements(COALESCE(state -> 'elements', '[]')) AS e;
                -- The ids that follow each id, in id order, by the id they follow ('' for the start).
                SELECT COALESCE(jsonb_object_agg(g.parent, g.ids), '{}') INTO children FROM (
                    SELECT CASE WHEN by_id ? (e ->> 'after') THEN e ->> 'after' ELSE '' END AS parent,
                        jsonb_agg(e ->> 'id' ORDER BY (e ->> 'id') COLLATE "C") AS ids
                    FROM jsonb_array_elements(COALESCE(state -> 'elements', '[]')) AS e GROUP BY 1) AS g;
                stack := ARRAY(SELECT c FROM jsonb_array_elements_text(COALESCE(children -> '', '[]'))
                    WITH ORDINALITY AS x(c, i) ORDER BY i);
                top := cardinality(stack);
                WHILE top > 0 LOOP
                    id := stack[top];
                    top := top - 1;
                    element := by_id -> id;
                    IF NOT COALESCE((element ->> 'removed')::boolean, false)
                        AND (cleared IS NULL OR id COLLATE "C" >= cleared COLLATE "C") THEN
                        shown_count := shown_count + 1;
                        shown[shown_count] := jsonb_build_object('id', id, 'value', element -> 'value');
                    END IF;
                    FOR child IN SELECT c FROM jsonb_array_elements_text(COALESCE(children -> id, '[]'))
                        WITH ORDINALITY AS x(c, i) ORDER BY i
                    LOOP
                        top := top + 1;
                        stack[top] := child;
                    END LOOP;
                END LOOP;
                RETURN to_jsonb(shown);
            END
            $fn$
            """,
            // The operations that turn a collection's merge state `present` (NULL: none yet) into the contents
            // `input` (SQL NULL or JSON null: empty), stamped `stamp`, by the rules above; returns
            // {"operations": […], "state": the merge state after them, "contents": the column's new value}. The
            // spec is {"shape": "list" | "set" | "map", "element": an element spec, "optional": bool}.
            """
            CREATE OR REPLACE FUNCTION \(schema).strata_sync_collection(spec jsonb, input jsonb, present jsonb,
                stamp text, creating boolean) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
            DECLARE
                shape text := spec ->> 'shape';
                element_spec jsonb := spec -> 'element';
                optional boolean := COALESCE((spec ->> 'optional')::boolean, false);
                mixed boolean := spec -> 'element' = '"any"'::jsonb;
                expected text := CASE WHEN spec ->> 'shape' = 'map' THEN 'object' ELSE 'array' END;
                cleared text := present ->> 'clearedAt';
                operations jsonb := '[]';
                elements jsonb;
                next_state jsonb;
                contents jsonb;
                visible jsonb;
                tagged jsonb;
                removals jsonb;
                removed_tags jsonb;
                additions jsonb;
                written_entries jsonb;
                distinct_values jsonb;
                -- Lists: the shown elements (strata_sync_list_order), the new ones tagged, and what is inserted.
                shown jsonb;
                wanted jsonb[];
                edits jsonb[] := '{}';
                inserted jsonb[] := '{}';
                removed text[] := '{}';
                lcs integer[];
                old_values jsonb[];
                width integer;
                mid_old integer;
                mid_new integer;
                old_at integer;
                new_at integer;
                removed_ids jsonb;
                shown_count integer;
                wanted_count integer;
                prefix integer := 0;
                suffix integer := 0;
                previous text;
                id text;
                entry jsonb;
                n integer := 0;
            BEGIN
                IF input IS NULL OR jsonb_typeof(input) = 'null' THEN
                    input := CASE WHEN expected = 'object' THEN '{}'::jsonb ELSE '[]'::jsonb END;
                ELSIF jsonb_typeof(input) <> expected THEN
                    RAISE EXCEPTION 'strata: a % column holds a JSON %, not %', shape, expected, input
                        USING ERRCODE = '22023';
                END IF;
                -- Statements are set-based or append to arrays in place: a write of n elements costs O(n log n),
                -- not O(n²).
                IF shape = 'list' THEN
                    elements := COALESCE(present -> 'elements', '[]');
                    SELECT COALESCE(array_agg(\(schema).strata_sync_element(element_spec, optional, e) ORDER BY i), '{}')
                        INTO wanted FROM jsonb_array_elements(input) WITH ORDINALITY AS x(e, i);
                    contents := CASE WHEN mixed THEN to_jsonb(wanted) ELSE input END;
                    IF creating THEN
                        -- A create's list: a clear, then every element (what a client's create sends).
                        operations := jsonb_build_array(jsonb_build_object('clear', jsonb_build_object('at', stamp)));
                        cleared := stamp;
                        shown := '[]';
                    ELSE
                        shown := \(schema).strata_sync_list_order(present);
                    END IF;
                    shown_count := jsonb_array_length(shown);
                    wanted_count := cardinality(wanted);
                    -- The elements the old and new contents share at the start and at the end stay; those between
                    -- are removed (tombstones) and the new ones inserted in their place, after the last shared one.
                    WHILE prefix < least(shown_count, wanted_count)
                        AND shown -> prefix -> 'value' = wanted[prefix + 1] LOOP
                        prefix := prefix + 1;
                    END LOOP;
                    WHILE suffix < least(shown_count, wanted_count) - prefix
                        AND shown -> (shown_count - 1 - suffix) -> 'value' = wanted[wanted_count - suffix] LOOP
                        suffix := suffix + 1;
                    END LOOP;
                    -- Between them, a longest common subsequence of the old and new elements stays too, when the
                    -- two parts are small enough for its table (at most `maximumLCSCells` cells); otherwise every old
                    -- element between them is removed and every new one inserted.
                    mid_old := shown_count - suffix - prefix;
                    mid_new := wanted_count - suffix - prefix;
                    IF mid_old > 0 AND mid_new > 0 AND mid_old * mid_new <= \(maximumLCSCells) THEN
                        SELECT array_agg(x.s -> 'value' ORDER BY x.i) INTO old_values
                            FROM jsonb_array_elements(shown) WITH ORDINALITY AS x(s, i)
                            WHERE x.i > prefix AND x.i <= shown_count - suffix;
                        -- lcs[o * width + w + 1]: the length of a longest common subsequence of the old part from
                        -- o and the new part from w.
                        width := mid_new + 1;
                        lcs := array_fill(0, ARRAY[(mid_old + 1) * width]);
                        FOR o IN REVERSE mid_old - 1 .. 0 LOOP
                            FOR w IN REVERSE mid_new - 1 .. 0 LOOP
                                IF old_values[o + 1] = wanted[prefix + w + 1] THEN
                                    lcs[o * width + w + 1] := lcs[(o + 1) * width + w + 2] + 1;
                                ELSE
                                    lcs[o * width + w + 1] := greatest(lcs[(o + 1) * width + w + 1], lcs[o * width + w + 2]);
                                END IF;
                            END LOOP;
                        END LOOP;
                    END IF;
                    -- The edits in list order: an element both hold stays (and is what the next insert follows), a
                    -- new one is inserted after the last element kept or inserted, an old one is removed.
                    previous := CASE WHEN prefix > 0 THEN shown -> (prefix - 1) ->> 'id' END;
                    old_at := 0;
                    new_at := 0;
                    WHILE old_at < mid_old OR new_at < mid_new LOOP
                        IF old_at < mid_old AND new_at < mid_new
                            AND shown -> (prefix + old_at) -> 'value' = wanted[prefix + new_at + 1] THEN
                            previous := shown -> (prefix + old_at) ->> 'id';
                            old_at := old_at + 1;
                            new_at := new_at + 1;
                        ELSIF new_at < mid_new AND (old_at = mid_old OR lcs IS NULL
                            OR lcs[old_at * width + new_at + 2] >= lcs[(old_at + 1) * width + new_at + 1]) THEN
                            n := n + 1;
                            id := stamp || '#' || repeat('~', length(n::text) - 1) || n::text;
                            entry := jsonb_build_object('id', id, 'value', wanted[prefix + new_at + 1]);
                            IF previous IS NOT NULL THEN entry := entry || jsonb_build_object('after', previous); END IF;
                            edits[cardinality(edits) + 1] := jsonb_build_object('insert', entry);
                            inserted[n] := entry || '{"removed": false}'::jsonb;
                            previous := id;
                            new_at := new_at + 1;
                        ELSE
                            removed[cardinality(removed) + 1] := shown -> (prefix + old_at) ->> 'id';
                            edits[cardinality(edits) + 1] := jsonb_build_object('remove',
                                jsonb_build_object('id', shown -> (prefix + old_at) -> 'id'));
                            old_at := old_at + 1;
                        END IF;
                    END LOOP;
                    operations := operations || to_jsonb(edits);
                    IF cardinality(removed) > 0 THEN
                        SELECT jsonb_object_agg(r, true) INTO removed_ids FROM unnest(removed) AS r;
                        SELECT jsonb_agg(CASE WHEN removed_ids ? (x.e ->> 'id') THEN jsonb_set(x.e, '{removed}', 'true')
                            ELSE x.e END ORDER BY x.i) INTO elements
                            FROM jsonb_array_elements(elements) WITH ORDINALITY AS x(e, i);
                    END IF;
                    next_state := jsonb_build_object('elements', elements || to_jsonb(inserted));
                    IF cleared IS NOT NULL THEN next_state := next_state || jsonb_build_object('clearedAt', cleared); END IF;
                ELSIF shape = 'map' THEN
                    SELECT COALESCE(jsonb_object_agg(x.key, \(schema).strata_sync_element(element_spec, optional, x.value)),
                        '{}') INTO tagged FROM jsonb_each(input) AS x;
                    contents := CASE WHEN mixed THEN tagged ELSE input END;
                    next_state := jsonb_build_object('entries', COALESCE(present -> 'entries', '{}'));
                    IF creating THEN
                        operations := jsonb_build_array(jsonb_build_object('clear', jsonb_build_object('at', stamp)));
                        next_state := next_state || jsonb_build_object('clearedAt', stamp);
                    ELSIF cleared IS NOT NULL THEN
                        next_state := next_state || jsonb_build_object('clearedAt', cleared);
                    END IF;
                    -- The keys the map shows now (MapState.values): a value, written at or after the latest clear.
                    SELECT COALESCE(jsonb_object_agg(x.key, x.value -> 'value'), '{}') INTO visible
                        FROM jsonb_each(COALESCE(present -> 'entries', '{}')) AS x
                        WHERE jsonb_typeof(x.value -> 'value') = 'object'
                            AND (cleared IS NULL OR (x.value ->> 'at') COLLATE "C" >= cleared COLLATE "C");
                    -- Keys new or holding another value are set; keys gone are removed (no value), in key order.
                    SELECT COALESCE(jsonb_agg(jsonb_build_object('set', jsonb_build_object('key', c.key, 'at', stamp)
                            || CASE WHEN c.present THEN jsonb_build_object('value', c.value) ELSE '{}' END)
                            ORDER BY c.present DESC, c.key COLLATE "C"), '[]'),
                        COALESCE(jsonb_object_agg(c.key, jsonb_build_object('at', stamp)
                            || CASE WHEN c.present THEN jsonb_build_object('value', c.value) ELSE '{}' END), '{}')
                        INTO additions, written_entries FROM (
                            SELECT x.key, x.value, true AS present FROM jsonb_each(tagged) AS x
                            WHERE (visible -> x.key) IS DISTINCT FROM x.value
                            UNION ALL
                            SELECT x.key, NULL, false FROM jsonb_each(visible) AS x WHERE NOT tagged ? x.key) AS c;
                    operations := operations || additions;
                    next_state := jsonb_set(next_state, '{entries}', (next_state -> 'entries') || written_entries);
                ELSE
                    elements := COALESCE(present -> 'elements', '[]');
                    -- The distinct values the statement gives, in its order, with the plain form it wrote first.
                    SELECT COALESCE(jsonb_agg(jsonb_build_object('v', d.v, 'p', d.p, 'i', d.i) ORDER BY d.i), '[]')
                        INTO distinct_values FROM (
                            SELECT DISTINCT ON (t.v) t.v, t.p, t.i FROM (
                                SELECT \(schema).strata_sync_element(element_spec, optional, x.e) AS v, x.e AS p, x.i
                                FROM jsonb_array_elements(input) WITH ORDINALITY AS x(e, i)) AS t
                            ORDER BY t.v, t.i) AS d;
                    -- Values gone (a live tag, not wanted): removed with every tag the state holds for them.
                    SELECT COALESCE(jsonb_agg(jsonb_build_object('remove', jsonb_build_object('value', x.e -> 'value',
                            'observedTags', x.e -> 'tags')) ORDER BY x.i), '[]'),
                        COALESCE(jsonb_agg(x.e -> 'tags' ORDER BY x.i), '[]')
                        INTO removals, removed_tags FROM jsonb_array_elements(elements) WITH ORDINALITY AS x(e, i)
                        WHERE jsonb_array_length(x.e -> 'tags') > 0
                            AND (x.e -> 'value') NOT IN (SELECT w -> 'v' FROM jsonb_array_elements(distinct_values) AS w);
                    -- Values new (no live tag): added with fresh tags, numbered in the statement's order.
                    SELECT COALESCE(jsonb_agg(jsonb_build_object('value', a.v, 'tag',
                            stamp || '#' || repeat('~', length(a.k::text) - 1) || a.k::text) ORDER BY a.k), '[]')
                        INTO additions FROM (
                            SELECT w -> 'v' AS v, row_number() OVER (ORDER BY (w ->> 'i')::bigint) AS k
                            FROM jsonb_array_elements(distinct_values) AS w
                            WHERE (w -> 'v') NOT IN (SELECT x.e -> 'value' FROM jsonb_array_elements(elements) AS x(e)
                                WHERE jsonb_array_length(x.e -> 'tags') > 0)) AS a;
                    operations := removals || COALESCE((SELECT jsonb_agg(jsonb_build_object('add', a) ORDER BY k)
                        FROM jsonb_array_elements(additions) WITH ORDINALITY AS y(a, k)), '[]');
                    -- The elements after them (SetState.apply): a removed value keeps its element with no tags, an
                    -- added one gets its tag (its element appended when the state has none).
                    SELECT COALESCE(jsonb_agg(c.e ORDER BY c.o, c.i), '[]') INTO elements FROM (
                        SELECT 0 AS o, x.i, CASE
                            WHEN a.a IS NOT NULL THEN jsonb_set(x.e, '{tags}', (x.e -> 'tags') || (a.a -> 'tag'))
                            WHEN jsonb_array_length(x.e -> 'tags') > 0
                                AND (x.e -> 'value') NOT IN (SELECT w -> 'v' FROM jsonb_array_elements(distinct_values) AS w)
                                THEN jsonb_set(x.e, '{tags}', '[]')
                            ELSE x.e END AS e
                        FROM jsonb_array_elements(elements) WITH ORDINALITY AS x(e, i)
                        LEFT JOIN jsonb_array_elements(additions) AS a(a) ON a.a -> 'value' = x.e -> 'value'
                        UNION ALL
                        SELECT 1, k, jsonb_build_object('value', a.a -> 'value', 'tags', jsonb_build_array(a.a -> 'tag'))
                        FROM jsonb_array_elements(additions) WITH ORDINALITY AS a(a, k)
                        WHERE (a.a -> 'value') NOT IN (SELECT x.e -> 'value' FROM jsonb_array_elements(elements) AS x(e))
                    ) AS c;
                    next_state := jsonb_build_object('elements', elements, 'removedTags',
                        COALESCE(present -> 'removedTags', '[]') || COALESCE((SELECT jsonb_agg(t ORDER BY y.i, z.k)
                            FROM jsonb_array_elements(removed_tags) WITH ORDINALITY AS y(ts, i),
                            jsonb_array_elements(y.ts) WITH ORDINALITY AS z(t, k)), '[]'));
                    IF cleared IS NOT NULL THEN next_state := next_state || jsonb_build_object('clearedAt', cleared); END IF;
                    -- The column in the set's order (SetState.values): by each value's earliest live tag.
                    SELECT COALESCE(jsonb_agg(CASE WHEN mixed THEN w -> 'v' ELSE w -> 'p' END ORDER BY m.first COLLATE "C"),
                        '[]') INTO contents FROM jsonb_array_elements(distinct_values) AS w JOIN (
                            SELECT x.e -> 'value' AS v, min(t COLLATE "C") AS first
                            FROM jsonb_array_elements(elements) AS x(e), jsonb_array_elements_text(x.e -> 'tags') AS t
                            GROUP BY 1) AS m ON m.v = w -> 'v';
                END IF;
                RETURN jsonb_build_object('operations', operations, 'state', next_state, 'contents', contents);
            END
            $fn$
            """,
        ]
    }

    /// The spec `strata_sync_collection` reads each captured collection column of `type` by, by column name:
    /// its shape, its element's spec (as ``plainSpec(_:)`` gives it; `"any"` for mixed elements, which the column
    /// holds tagged) and whether an element may be null. A collection of an embedded type that holds itself has
    /// no spec and is not captured.
    static func collectionSpecs(of type: SyncedType) -> [String: String] {
        var specs: [String: String] = [:]
        for column in type.columns {
            let shape: String
            switch column.shape {
            case .value: continue
            case .list: shape = "list"
            case .set: shape = "set"
            case .map: shape = "map"
            }
            guard let element = elementSpec(column) else { continue }
            specs[column.name] =
                "{\"shape\": \"\(shape)\", \"element\": \(element), \"optional\": \(column.property.isOptional)}"
        }
        return specs
    }
}
