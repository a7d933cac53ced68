import Foundation
import Strata

/// Canonical text of the suite's values, the same for a replica's objects and PostgreSQL's rows, so that the two
/// can be compared line by line.
package enum Canonical {
    package static func float(_ value: Float) -> String { "\(value)" }
    package static func double(_ value: Double) -> String { "\(value)" }
    package static func data(_ value: Data) -> String { value.map { String(format: "%02x", $0) }.joined() }
    /// Milliseconds since 1970: PostgreSQL keeps microseconds, the suite writes whole milliseconds.
    package static func date(_ value: Date) -> String { "\(Int64((value.timeIntervalSince1970 * 1000).rounded()))" }
    package static func decimal(_ value: Decimal128) -> String { "\(value)" }
    package static func uuid(_ value: UUID) -> String { value.uuidString.lowercased() }
    package static func optional(_ value: String?) -> String { value ?? "nil" }
    package static func list(_ values: [String]) -> String { "[" + values.joined(separator: ",") + "]" }
    package static func set(_ values: [String]) -> String { "{" + values.sorted().joined(separator: ",") + "}" }
    /// A mixed value of the kinds the workload writes, its kind first (`int:5`, `string:x`, `link:ann`, `nil`).
    package static func mixed(_ value: AnyRealmValue) -> String {
        switch value {
        case .none: "nil"
        case .int(let number): "int:\(number)"
        case .string(let text): "string:\(text)"
        case .double(let number): "double:\(number)"
        case .object(let object): "link:\((object as? ConvergencePerson)?.name ?? "?")"
        default: "other:\(value)"
        }
    }
    /// An embedded address as `street#number`, or `nil`.
    package static func address(street: String, number: Int) -> String { "\(street)#\(number)" }
    package static func map(_ values: [String: String]) -> String {
        "{" + values.keys.sorted().map { "\($0):\(values[$0]!)" }.joined(separator: ",") + "}"
    }
}

extension ConvergenceItem {
    /// The names of the properties that hold one value (what the last-writer-wins oracle follows).
    package static let scalarNames = [
        "flag", "count", "ratio", "amount", "label", "blob", "stamp", "price", "oid", "uid", "maybeCount",
        "maybeLabel", "maybeStamp", "owner", "extra", "home",
    ]

    /// The canonical text of every property that holds one value, by name.
    package var scalarFields: [String: String] {
        [
            "flag": "\(flag)", "count": "\(count)", "ratio": Canonical.float(ratio),
            "amount": Canonical.double(amount), "label": label, "blob": Canonical.data(blob),
            "stamp": Canonical.date(stamp), "price": Canonical.decimal(price), "oid": oid.stringValue,
            "uid": Canonical.uuid(uid), "maybeCount": Canonical.optional(maybeCount.map { "\($0)" }),
            "maybeLabel": Canonical.optional(maybeLabel),
            "maybeStamp": Canonical.optional(maybeStamp.map(Canonical.date)),
            "owner": Canonical.optional(owner?.name), "extra": Canonical.mixed(extra),
            "home": Canonical.optional(home.map { Canonical.address(street: $0.street, number: $0.number) }),
        ]
    }

    /// The canonical text of every collection property, by name.
    package var collectionFields: [String: String] {
        [
            "tags": Canonical.list(Array(tags)), "visitors": Canonical.list(visitors.map(\.name)),
            "scores": Canonical.map(Dictionary(uniqueKeysWithValues: scores.map { ($0.key, "\($0.value)") })),
            "friends": Canonical.map(
                Dictionary(uniqueKeysWithValues: friends.map { ($0.key, Canonical.optional($0.value?.name)) })),
            "colors": Canonical.set(Array(colors)), "lucky": Canonical.set(lucky.map { "\($0)" }),
        ]
    }
}

/// One line per object: `Type key name=value …` with the properties in name order.
package func canonicalLine(_ type: String, _ key: String, _ fields: [String: String]) -> String {
    ([type, key] + fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }).joined(separator: " ")
}

/// Every synced object of the suite in `realm` (refreshed first), one canonical line each, sorted: two replicas
/// that converged give the same lines, and the same as ``canonicalLine`` over PostgreSQL's live rows.
package func canonicalDump(_ realm: Realm) -> [String] {
    realm.refresh()
    var lines: [String] = []
    for item in realm.objects(ConvergenceItem.self) {
        lines.append(
            canonicalLine("Item", "\(item.id)", item.scalarFields.merging(item.collectionFields) { first, _ in first }))
    }
    for person in realm.objects(ConvergencePerson.self) {
        lines.append(canonicalLine("Person", person.name, ["city": person.city]))
    }
    for pair in realm.objects(ConvergencePair.self) {
        lines.append(canonicalLine("Pair", pair.id, ["round": "\(pair.round)"]))
    }
    for ledger in realm.objects(ConvergenceLedger.self) {
        lines.append(
            canonicalLine(
                "Ledger", ledger.replica,
                ["last": "\(ledger.last)", "acked": Canonical.set(ledger.acked.map { "\($0)" })]))
    }
    return lines.sorted()
}

/// The pair groups whose two objects differ in `realm` (empty when every pair is whole).
package func halfPairs(_ realm: Realm) -> [String] {
    convergencePairGroups.filter { group in
        let first = realm.object(ofType: ConvergencePair.self, forPrimaryKey: group + "a")?.round
        let second = realm.object(ofType: ConvergencePair.self, forPrimaryKey: group + "b")?.round
        return first != second
    }
}
