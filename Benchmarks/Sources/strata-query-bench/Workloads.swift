import BenchSupport
import Foundation
import GRDB
import Strata

/// One table row: the same queries on both engines. Each timed run runs `queries` queries (different parameters,
/// the same on both sides) and returns every query's answer (a count, a sum, or the ids in order for sorts).
struct Workload {
    let title: String
    /// The RQL (or Swift) the Strata side runs, and the SQL the GRDB side runs, for the report.
    let strataText: String
    let sqlText: String
    /// Queries per timed run.
    let queries: Int
    /// Rows each query reads when it has to look at every candidate row (scans and sorts): the ns/row columns.
    let rowsPerQuery: Int?
    /// A Strata query may be missing (full-text search): a thrown `Realm.Error` then marks the row unsupported
    /// instead of failing the run.
    var mayBeUnsupported = false
    let strata: (Realm) throws -> [Int]
    let grdb: (Database) throws -> [Int]
    /// The answers computed in Swift from the generated data (nil: checked by `verify` instead).
    let expected: [Int]?
    /// For answers that may legitimately differ between engines (the order of ties in a sort): nil when the
    /// answer is right, else what is wrong.
    var verify: (([Int]) -> String?)? = nil
    /// The title in the machine-readable results when `title` depends on the object count (nil: `title`), so that
    /// the same row lines up across sizes.
    var resultsTitle: String? = nil
}

/// `count` values from `pool`, drawn with `generator`.
private func pick<T>(_ count: Int, from pool: [T], _ generator: inout SplitMix64) -> [T] {
    (0..<count).map { _ in pool[Int.random(in: 0..<pool.count, using: &generator)] }
}

/// `SELECT COUNT(*) …` through a cached statement.
private func count(_ db: Database, _ sql: String, _ arguments: StatementArguments = []) throws -> Int {
    try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0
}

func makeWorkloads(_ data: Dataset) -> [Workload] {
    var generator = SplitMix64(seed: 0x5155_4552_5900_0001)
    let n = data.count
    let scanQueries = 3
    var workloads: [Workload] = []

    // 1. Int equality, unindexed (values taken from existing rows so that every query finds something).
    let equalKeys = pick(scanQueries, from: data.values, &generator)
    let equalExpected = equalKeys.map { key in data.values.lazy.filter { $0 == key }.count }
    workloads.append(
        Workload(
            title: "Int ==, unindexed (RQL)", strataText: "filter(\"value == $0\", k).count",
            sqlText: "SELECT COUNT(*) FROM item WHERE value = ?", queries: scanQueries, rowsPerQuery: n,
            strata: { realm in equalKeys.map { realm.objects(QBItem.self).filter("value == $0", $0).count } },
            grdb: { db in try equalKeys.map { try count(db, "SELECT COUNT(*) FROM item WHERE value = ?", [$0]) } },
            expected: equalExpected))
    workloads.append(
        Workload(
            title: "Int ==, unindexed (type-safe where)", strataText: "where { $0.value == k }.count",
            sqlText: "SELECT COUNT(*) FROM item WHERE value = ?", queries: scanQueries, rowsPerQuery: n,
            strata: { realm in
                equalKeys.map { key in realm.objects(QBItem.self).where { $0.value == key }.count }
            },
            grdb: { db in try equalKeys.map { try count(db, "SELECT COUNT(*) FROM item WHERE value = ?", [$0]) } },
            expected: equalExpected))

    // 2. Int equality on an indexed property: many lookups per run.
    let indexedKeys = pick(1_000, from: data.indexedValues, &generator)
    var indexedCounts: [Int: Int] = [:]
    for value in data.indexedValues { indexedCounts[value, default: 0] += 1 }
    workloads.append(
        Workload(
            title: "Int ==, indexed", strataText: "filter(\"indexedValue == $0\", k).count",
            sqlText: "SELECT COUNT(*) FROM item WHERE indexedValue = ?", queries: indexedKeys.count,
            rowsPerQuery: nil,
            strata: { realm in
                indexedKeys.map { realm.objects(QBItem.self).filter("indexedValue == $0", $0).count }
            },
            grdb: { db in
                try indexedKeys.map { try count(db, "SELECT COUNT(*) FROM item WHERE indexedValue = ?", [$0]) }
            },
            expected: indexedKeys.map { indexedCounts[$0] ?? 0 }))

    // 3. Int ranges of 10% selectivity.
    let ranges = (0..<scanQueries).map { index in
        let low = 100_000 * (index * 3 + 1) + 12_345
        return (low, low + Dataset.valueRange / 10)
    }
    let rangeExpected = ranges.map { range in data.values.lazy.filter { $0 >= range.0 && $0 < range.1 }.count }
    workloads.append(
        Workload(
            title: "Int range >= AND <, 10%, unindexed",
            strataText: "filter(\"value >= $0 AND value < $1\", a, b).count",
            sqlText: "SELECT COUNT(*) FROM item WHERE value >= ? AND value < ?", queries: scanQueries,
            rowsPerQuery: n,
            strata: { realm in
                ranges.map { realm.objects(QBItem.self).filter("value >= $0 AND value < $1", $0.0, $0.1).count }
            },
            grdb: { db in
                try ranges.map {
                    try count(db, "SELECT COUNT(*) FROM item WHERE value >= ? AND value < ?", [$0.0, $0.1])
                }
            },
            expected: rangeExpected))
    workloads.append(
        Workload(
            title: "Int BETWEEN, 10%, unindexed", strataText: "filter(\"value BETWEEN {$0, $1}\", a, b - 1).count",
            sqlText: "SELECT COUNT(*) FROM item WHERE value BETWEEN ? AND ?", queries: scanQueries,
            rowsPerQuery: n,
            strata: { realm in
                ranges.map { realm.objects(QBItem.self).filter("value BETWEEN {$0, $1}", $0.0, $0.1 - 1).count }
            },
            grdb: { db in
                try ranges.map {
                    try count(db, "SELECT COUNT(*) FROM item WHERE value BETWEEN ? AND ?", [$0.0, $0.1 - 1])
                }
            },
            expected: rangeExpected))

    // 4, 5. Strings: case-sensitive prefix, case-insensitive substring.
    let prefixes = ["ab", "Qu", "xy"].prefix(scanQueries)
    workloads.append(
        Workload(
            title: "String BEGINSWITH 'ab' (case-sensitive)",
            strataText: "filter(\"name BEGINSWITH $0\", \"ab\").count",
            sqlText: "SELECT COUNT(*) FROM item WHERE name GLOB 'ab*'", queries: prefixes.count, rowsPerQuery: n,
            strata: { realm in prefixes.map { realm.objects(QBItem.self).filter("name BEGINSWITH $0", $0).count } },
            grdb: { db in
                try prefixes.map { try count(db, "SELECT COUNT(*) FROM item WHERE name GLOB ?", [$0 + "*"]) }
            },
            expected: prefixes.map { prefix in data.names.lazy.filter { $0.hasPrefix(prefix) }.count }))
    let fragments = ["xy", "qu", "Ab"].prefix(scanQueries)
    workloads.append(
        Workload(
            title: "String CONTAINS[c] 'xy'", strataText: "filter(\"name CONTAINS[c] $0\", \"xy\").count",
            sqlText: "SELECT COUNT(*) FROM item WHERE name LIKE '%xy%'", queries: fragments.count, rowsPerQuery: n,
            strata: { realm in
                fragments.map { realm.objects(QBItem.self).filter("name CONTAINS[c] $0", $0).count }
            },
            grdb: { db in
                try fragments.map { try count(db, "SELECT COUNT(*) FROM item WHERE name LIKE ?", ["%" + $0 + "%"]) }
            },
            expected: fragments.map { fragment in
                let lower = fragment.lowercased()
                return data.names.lazy.filter { $0.lowercased().contains(lower) }.count
            }))

    // 6, 7. 100 values: a chain of ORs and IN, on the unindexed value and on the primary key.
    let valueSets = (0..<scanQueries).map { _ in pick(100, from: data.values, &generator) }
    let valueSetExpected = valueSets.map { set in
        let members = Set(set)
        return data.values.lazy.filter { members.contains($0) }.count
    }
    func orChain(_ property: String, _ values: [Int], _ equals: String, _ or: String) -> String {
        values.map { "\(property) \(equals) \($0)" }.joined(separator: " \(or) ")
    }
    let placeholders = Array(repeating: "?", count: 100).joined(separator: ", ")
    workloads.append(
        Workload(
            title: "Int OR-chain of 100 ==, unindexed", strataText: "filter(\"value == 1 OR value == 2 OR …\").count",
            sqlText: "SELECT COUNT(*) FROM item WHERE value = 1 OR value = 2 OR …", queries: scanQueries,
            rowsPerQuery: n,
            strata: { realm in
                valueSets.map { realm.objects(QBItem.self).filter(orChain("value", $0, "==", "OR")).count }
            },
            grdb: { db in
                try valueSets.map { set in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE " + orChain("value", set, "=", "OR"))
                        ?? 0
                }
            },
            expected: valueSetExpected))
    workloads.append(
        Workload(
            title: "Int IN {100 values}, unindexed", strataText: "filter(\"value IN $0\", array).count",
            sqlText: "SELECT COUNT(*) FROM item WHERE value IN (?, …)", queries: scanQueries, rowsPerQuery: n,
            strata: { realm in valueSets.map { realm.objects(QBItem.self).filter("value IN $0", $0).count } },
            grdb: { db in
                try valueSets.map { set in
                    try count(
                        db, "SELECT COUNT(*) FROM item WHERE value IN (\(placeholders))",
                        StatementArguments(set))
                }
            },
            expected: valueSetExpected))
    let keySets = (0..<100).map { _ in (0..<100).map { _ in Int.random(in: 0..<n, using: &generator) } }
    let keySetExpected = keySets.map { Set($0).count }
    workloads.append(
        Workload(
            title: "Primary key OR-chain of 100 ==", strataText: "filter(\"id == 1 OR id == 2 OR …\").count",
            sqlText: "SELECT COUNT(*) FROM item WHERE id = 1 OR id = 2 OR …", queries: keySets.count,
            rowsPerQuery: nil,
            strata: { realm in keySets.map { realm.objects(QBItem.self).filter(orChain("id", $0, "==", "OR")).count } },
            grdb: { db in
                try keySets.map { set in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE " + orChain("id", set, "=", "OR")) ?? 0
                }
            },
            expected: keySetExpected))
    workloads.append(
        Workload(
            title: "Primary key IN {100 values}", strataText: "filter(\"id IN $0\", array).count",
            sqlText: "SELECT COUNT(*) FROM item WHERE id IN (?, …)", queries: keySets.count, rowsPerQuery: nil,
            strata: { realm in keySets.map { realm.objects(QBItem.self).filter("id IN $0", $0).count } },
            grdb: { db in
                try keySets.map { set in
                    try count(
                        db, "SELECT COUNT(*) FROM item WHERE id IN (\(placeholders))", StatementArguments(set))
                }
            },
            expected: keySetExpected))

    // 8, 9. Sort the first 100k objects by id by a String and by an Int, reading every id in order.
    let sortCount = min(n, 100_000)
    func sortedCheck(_ key: @escaping (Int) -> some Comparable) -> ([Int]) -> String? {
        { ids in
            guard ids.count == sortCount else { return "\(ids.count) ids, expected \(sortCount)" }
            var seen = [Bool](repeating: false, count: sortCount)
            for (position, id) in ids.enumerated() {
                guard id >= 0 && id < sortCount, !seen[id] else {
                    return "id \(id) at \(position) is wrong or repeated"
                }
                seen[id] = true
                if position > 0 && key(ids[position - 1]) > key(id) { return "out of order at position \(position)" }
            }
            return nil
        }
    }
    for (kind, property, verify) in [
        ("String", "name", sortedCheck { data.names[$0] }), ("Int", "value", sortedCheck { data.values[$0] }),
    ] {
        let sql = "SELECT id FROM item WHERE id < ? ORDER BY \(property)"
        workloads.append(
            Workload(
                title: "Sort \(group(sortCount)) by \(kind), read ids",
                strataText: "filter(\"id < $0\", \(sortCount)).sorted(byKeyPath: \"\(property)\"), read id of each",
                sqlText: sql, queries: 1, rowsPerQuery: sortCount,
                strata: { realm in
                    var ids: [Int] = []
                    ids.reserveCapacity(sortCount)
                    for item in realm.objects(QBItem.self).filter("id < $0", sortCount).sorted(byKeyPath: property) {
                        ids.append(item.id)
                    }
                    return ids
                },
                grdb: { db in try Int.fetchAll(db.cachedStatement(sql: sql), arguments: [sortCount]) },
                expected: nil, verify: verify,
                resultsTitle: "Sort min(N, \(group(100_000))) by \(kind), read ids"))
    }

    // 10, 11. Count and sums.
    workloads.append(
        Workload(
            title: "Count of all objects", strataText: "objects(QBItem.self).count",
            sqlText: "SELECT COUNT(*) FROM item", queries: 1_000, rowsPerQuery: nil,
            strata: { realm in (0..<1_000).map { _ in realm.objects(QBItem.self).count } },
            grdb: { db in try (0..<1_000).map { _ in try count(db, "SELECT COUNT(*) FROM item") } },
            expected: Array(repeating: n, count: 1_000)))
    let total = data.values.reduce(0, +)
    workloads.append(
        Workload(
            title: "Sum of an Int, all objects", strataText: "objects(QBItem.self).sum(ofProperty: \"value\")",
            sqlText: "SELECT SUM(value) FROM item", queries: scanQueries, rowsPerQuery: n,
            strata: { realm in
                (0..<scanQueries).map { _ in realm.objects(QBItem.self).sum(ofProperty: "value") as Int }
            },
            grdb: { db in try (0..<scanQueries).map { _ in try count(db, "SELECT SUM(value) FROM item") } },
            expected: Array(repeating: total, count: scanQueries)))
    workloads.append(
        Workload(
            title: "Sum of an Int, filtered by a 10% range",
            strataText: "filter(\"value >= $0 AND value < $1\", a, b).sum(ofProperty: \"value\")",
            sqlText: "SELECT COALESCE(SUM(value), 0) FROM item WHERE value >= ? AND value < ?", queries: scanQueries,
            rowsPerQuery: n,
            strata: { realm in
                ranges.map {
                    realm.objects(QBItem.self).filter("value >= $0 AND value < $1", $0.0, $0.1)
                        .sum(ofProperty: "value") as Int
                }
            },
            grdb: { db in
                try ranges.map {
                    try count(
                        db, "SELECT COALESCE(SUM(value), 0) FROM item WHERE value >= ? AND value < ?", [$0.0, $0.1])
                }
            },
            expected: ranges.map { range in data.values.lazy.filter { $0 >= range.0 && $0 < range.1 }.reduce(0, +) }))

    // 12. Across a to-one link.
    let ages = [50, 30, 75].prefix(scanQueries)
    workloads.append(
        Workload(
            title: "To-one link: owner.age > 50", strataText: "filter(\"owner.age > $0\", 50).count",
            sqlText: "SELECT COUNT(*) FROM item JOIN owner ON owner.id = item.ownerId WHERE owner.age > ?",
            queries: ages.count, rowsPerQuery: n,
            strata: { realm in ages.map { realm.objects(QBItem.self).filter("owner.age > $0", $0).count } },
            grdb: { db in
                try ages.map {
                    try count(
                        db, "SELECT COUNT(*) FROM item JOIN owner ON owner.id = item.ownerId WHERE owner.age > ?", [$0])
                }
            },
            expected: ages.map { age in data.owners.lazy.filter { $0 >= 0 && data.ownerAges[$0] > age }.count }))

    // 13. Full-text search: two words (both must occur), and a prefix.
    let textSets = data.textWords.map(Set.init)
    let pairs = (0..<10).map { index in (index, 5 + 13 * index) }
    let pairQueries = pairs.map { "\(data.vocabulary[$0.0]) \(data.vocabulary[$0.1])" }
    workloads.append(
        Workload(
            title: "Full-text: two words (\(group(data.texts.count)) texts)",
            strataText: "checkedFilter(\"text TEXT $0\", \"w1 w2\").count",
            sqlText: "SELECT COUNT(*) FROM document WHERE document MATCH 'w1 w2'", queries: pairQueries.count,
            rowsPerQuery: nil, mayBeUnsupported: true,
            strata: { realm in
                try pairQueries.map { try realm.objects(QBText.self).checkedFilter("text TEXT $0", $0).count }
            },
            grdb: { db in
                try pairQueries.map { try count(db, "SELECT COUNT(*) FROM document WHERE document MATCH ?", [$0]) }
            },
            expected: pairs.map { pair in textSets.lazy.filter { $0.contains(pair.0) && $0.contains(pair.1) }.count }))
    let prefixWords = (0..<10).map { String(data.vocabulary[40 + 7 * $0].prefix(2)) }
    let prefixMatches = prefixWords.map { prefix in
        Set(data.vocabulary.indices.filter { data.vocabulary[$0].hasPrefix(prefix) })
    }
    workloads.append(
        Workload(
            title: "Full-text: 2-letter prefix 'ab*' (\(group(data.texts.count)) texts)",
            strataText: "checkedFilter(\"text TEXT $0\", \"ab*\").count",
            sqlText: "SELECT COUNT(*) FROM document WHERE document MATCH 'ab*'", queries: prefixWords.count,
            rowsPerQuery: nil, mayBeUnsupported: true,
            strata: { realm in
                try prefixWords.map { try realm.objects(QBText.self).checkedFilter("text TEXT $0", $0 + "*").count }
            },
            grdb: { db in
                try prefixWords.map {
                    try count(db, "SELECT COUNT(*) FROM document WHERE document MATCH ?", [$0 + "*"])
                }
            },
            expected: prefixMatches.map { words in textSets.lazy.filter { !$0.isDisjoint(with: words) }.count }))
    return workloads
}
