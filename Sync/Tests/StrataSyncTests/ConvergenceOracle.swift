import Foundation
import Strata
import SyncConvergence

@testable import StrataSync

/// The convergence suite's view of PostgreSQL: the live rows of the suite's tables as canonical lines (the same
/// form as `canonicalDump` of a replica), and the time of each replica transaction from the change log.
struct PostgresDump {
    let database: TestDatabase

    /// Every live row of the suite's tables, one canonical line each, sorted.
    func lines() async throws -> [String] {
        var lines: [String] = []
        let items = try await database.rows(
            """
            SELECT id::text, flag::text, "count"::text, ratio::text, amount::text, label, encode(blob, 'hex'),
                (extract(epoch FROM stamp) * 1000)::bigint::text, price::text, oid, uid::text, "maybeCount"::text,
                "maybeLabel", (extract(epoch FROM "maybeStamp") * 1000)::bigint::text, owner, tags::text,
                visitors::text, scores::text, friends::text, colors::text, lucky::text, extra::text, home::text
            FROM "ConvergenceItem" WHERE _strata_scope = 'main' AND NOT _strata_deleted
            """)
        for row in items {
            let text = row.map { $0 ?? "nil" }
            var fields: [String: String] = [
                "flag": text[1], "count": text[2], "ratio": Float(text[3]).map(Canonical.float) ?? text[3],
                "amount": Double(text[4]).map(Canonical.double) ?? text[4], "label": text[5], "blob": text[6],
                "stamp": text[7], "price": (try? Decimal128(string: text[8])).map(Canonical.decimal) ?? text[8],
                "oid": text[9], "uid": text[10].lowercased(), "maybeCount": text[11], "maybeLabel": text[12],
                "maybeStamp": text[13], "owner": text[14],
            ]
            fields["tags"] = Canonical.list(Self.strings(row[15]))
            fields["visitors"] = Canonical.list(Self.strings(row[16]))
            fields["scores"] = Canonical.map(Self.object(row[17]).mapValues { "\($0)" })
            fields["friends"] = Canonical.map(
                Self.object(row[18]).mapValues { $0 is NSNull ? "nil" : "\($0)" })
            fields["colors"] = Canonical.set(Self.strings(row[19]))
            fields["lucky"] = Canonical.set(Self.strings(row[20]))
            fields["extra"] = try Self.mixed(row[21])
            fields["home"] = Self.address(row[22])
            lines.append(canonicalLine("Item", text[0], fields))
        }
        for row in try await database.rows(
            #"SELECT name, city FROM "ConvergencePerson" WHERE _strata_scope = 'main' AND NOT _strata_deleted"#)
        {
            lines.append(canonicalLine("Person", row[0] ?? "nil", ["city": row[1] ?? "nil"]))
        }
        for row in try await database.rows(
            #"SELECT id, "round"::text FROM "ConvergencePair" WHERE _strata_scope = 'main' AND NOT _strata_deleted"#)
        {
            lines.append(canonicalLine("Pair", row[0] ?? "nil", ["round": row[1] ?? "nil"]))
        }
        for row in try await database.rows(
            #"""
            SELECT replica, "last"::text, acked::text FROM "ConvergenceLedger"
            WHERE _strata_scope = 'main' AND NOT _strata_deleted
            """#)
        {
            lines.append(
                canonicalLine(
                    "Ledger", row[0] ?? "nil", ["last": row[1] ?? "nil", "acked": Canonical.set(Self.strings(row[2]))]))
        }
        return lines.sorted()
    }

    /// A mixed column (the tagged form, ``SyncValue``) as ``Canonical/mixed(_:)`` writes the replica's value.
    static func mixed(_ text: String?) throws -> String {
        guard let text else { return "nil" }
        switch try SyncJSON.decode(SyncValue.self, from: text) {
        case .null: return "nil"
        case .int(let number): return "int:\(number)"
        case .string(let value): return "string:\(value)"
        case .double(let number): return "double:\(number)"
        case .typedLink(_, .string(let key)): return "link:\(key)"
        case let other: return "other:\(other)"
        }
    }

    /// An embedded-object column (plain JSON) as ``Canonical/address(street:number:)``.
    static func address(_ text: String?) -> String {
        guard let text, let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return "nil" }
        let street = object["street"] as? String ?? "?"
        let number = (object["number"] as? NSNumber)?.intValue ?? Int.min
        return Canonical.address(street: street, number: number)
    }

    /// The time of every replica transaction that reached the log, by replica and ledger number: each
    /// transaction adds its number to its replica's ledger set, with a tag made of the transaction's timestamp.
    func transactionTimes() async throws -> [String: [Int: String]] {
        var times: [String: [Int: String]] = [:]
        for row in try await database.rows(
            "SELECT changes::text FROM strata_change_log WHERE scope = 'main' ORDER BY seq")
        {
            guard let text = row[0] else { continue }
            let changes = try SyncJSON.decode([StrataSync.ObjectChange].self, from: text)
            for change in changes where change.objectType == "ConvergenceLedger" {
                guard case .string(let replica) = change.primaryKey,
                    case .set(let operations)? = change.properties["acked"]
                else { continue }
                for operation in operations {
                    guard case .add(let value, let tag) = operation, case .int(let number) = value else { continue }
                    let stamp = tag.description
                    let end = stamp.lastIndex(of: "#") ?? stamp.endIndex
                    times[replica, default: [:]][Int(number)] = String(stamp[..<end])
                }
            }
        }
        return times
    }

    /// The elements of a jsonb array, as text.
    private static func strings(_ json: String?) -> [String] {
        guard let json, let array = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any] else {
            return []
        }
        return array.map { "\($0)" }
    }

    /// The members of a jsonb object.
    private static func object(_ json: String?) -> [String: Any] {
        guard let json, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return [:]
        }
        return object
    }
}

/// What the converged items must be, from every acknowledged transaction of every replica (their records) and
/// the times the change log gives them: an item is live when its latest create is later than its latest delete
/// (delete wins over concurrent updates; a create after the delete brings it back), and each of its properties
/// holds the value of its latest write (last writer wins per property), whether or not the item was live when it
/// was made: the server keeps a write made while the item was deleted (by a replica that had not seen the delete)
/// with its clock, and a revive shows it if it is later than the create (Documentation/Sync.md, "Conflict
/// rules"). A transaction missing from the log is an acknowledged write that was lost.
struct ConvergenceOracle {
    private(set) var records: [TransactionRecord] = []

    mutating func add(_ record: TransactionRecord) { records.append(record) }

    /// The highest number acknowledged by each replica.
    var acknowledged: [String: Int] {
        records.reduce(into: [:]) { result, record in
            result[record.replica] = max(result[record.replica] ?? 0, record.number)
        }
    }

    /// What differs between the converged items (live ones, key → scalar fields) and the rules' outcome.
    func problems(items: [Int: [String: String]], times: [String: [Int: String]]) -> [String] {
        var problems: [String] = []
        var creates: [Int: [(String, [String: String])]] = [:]
        var deletes: [Int: [String]] = [:]
        var writes: [Int: [(String, [String: String])]] = [:]
        for record in records {
            guard let time = times[record.replica]?[record.number] else {
                problems.append("transaction \(record.number) of \(record.replica) is not in the change log: lost")
                continue
            }
            for (key, fields) in record.creates {
                creates[key, default: []].append((time, fields))
                writes[key, default: []].append((time, fields))
            }
            for (key, fields) in record.updates { writes[key, default: []].append((time, fields)) }
            for key in record.deletes { deletes[key, default: []].append(time) }
        }
        for key in Set(creates.keys).union(deletes.keys).union(items.keys).sorted() {
            let created = creates[key]?.map(\.0).max()
            let deleted = deletes[key]?.max()
            let live = created.map { created in deleted.map { created > $0 } ?? true } ?? false
            guard let converged = items[key] else {
                if live { problems.append("item \(key) is gone; its latest create \(created!) is after its deletes") }
                continue
            }
            guard live else {
                problems.append("item \(key) is live; created \(created ?? "never"), deleted \(deleted ?? "never")")
                continue
            }
            var latest: [String: (String, String)] = [:]
            for (time, fields) in writes[key] ?? [] {
                for (name, value) in fields where latest[name].map({ time > $0.0 }) ?? true {
                    latest[name] = (time, value)
                }
            }
            for (name, (time, value)) in latest.sorted(by: { $0.key < $1.key }) where converged[name] != value {
                problems.append(
                    "item \(key).\(name) is \(converged[name] ?? "absent"); its last write (\(time)) is \(value)")
            }
        }
        return problems
    }
}
