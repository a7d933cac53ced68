import Foundation
import Strata

/// A deterministic generator (SplitMix64): a failing run reproduces from its seed.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What one local transaction of the workload wrote, for the suite's oracle: the items it created (every
/// property that holds one value), updated (the properties it set) and deleted, by primary key, with the
/// canonical text of each value (``ConvergenceItem/scalarFields``). Its number is the replica's ledger number.
package struct TransactionRecord: Codable, Sendable, Equatable {
    package var replica: String
    package var number: Int
    package var creates: [Int: [String: String]] = [:]
    package var updates: [Int: [String: String]] = [:]
    package var deletes: [Int] = []

    package init(replica: String, number: Int) {
        self.replica = replica
        self.number = number
    }

    /// The record as one line of JSON (what the child replica prints).
    package var json: String { String(decoding: try! JSONEncoder().encode(self), as: UTF8.self) }

    package init?(json: some StringProtocol) {
        guard let record = try? JSONDecoder().decode(Self.self, from: Data(json.utf8)) else { return nil }
        self = record
    }
}

/// A seeded random workload of one replica: transactions of 1–4 random operations on the suite's model —
/// updates of every scalar property, list, map and set edits, pair writes, deletes, and creates of fresh items
/// (keys of this replica's own range, so that two replicas' fresh creates never meet by chance;
/// ``recreate(_:in:number:)`` brings back a key the suite picks, deleted as far as this replica knows, whatever the
/// others have seen).
package struct ConvergenceWorkload {
    package let replica: String
    private let index: Int
    private var generator: SeededGenerator
    private var nextOwnKey: Int
    private let keyLimit: Int

    /// The workload of replica `replica` (number `index`, which makes its pair values unique), creating fresh
    /// items with the keys of `keys` (a range no other replica, and no earlier run of this one, uses).
    package init(replica: String, index: Int, seed: UInt64, keys: Range<Int>) {
        self.replica = replica
        self.index = index
        generator = SeededGenerator(seed: seed &+ UInt64(index) &* 7919)
        nextOwnKey = keys.lowerBound
        keyLimit = keys.upperBound
    }

    /// Runs one random write transaction in `realm` numbered `number` (the ledger's) and returns its record.
    package mutating func transaction(in realm: Realm, number: Int) throws -> TransactionRecord {
        var touched = Touched()
        try realm.write {
            noteLedger(realm, number)
            for _ in 0..<Int.random(in: 1...4, using: &generator) { operate(realm, &touched, number: number) }
        }
        return touched.record(replica: replica, number: number, realm: realm)
    }

    /// Creates item `key` again (deleted earlier) with random values, in a transaction numbered `number`.
    package mutating func recreate(_ key: Int, in realm: Realm, number: Int) throws -> TransactionRecord {
        var touched = Touched()
        try realm.write {
            noteLedger(realm, number)
            if realm.object(ofType: ConvergenceItem.self, forPrimaryKey: key) == nil { create(key, realm, &touched) }
        }
        return touched.record(replica: replica, number: number, realm: realm)
    }

    /// The items a transaction touched: their values when it first touched them, which it created and deleted.
    /// The record is made after the commit by comparing, as the capture does: a property set to the value it
    /// had is no write at all.
    private struct Touched {
        var base: [Int: [String: String]] = [:]
        var created: Set<Int> = []
        var deleted: Set<Int> = []

        mutating func note(_ item: ConvergenceItem) {
            if base[item.id] == nil { base[item.id] = item.scalarFields }
        }

        func record(replica: String, number: Int, realm: Realm) -> TransactionRecord {
            var record = TransactionRecord(replica: replica, number: number)
            for (key, before) in base {
                guard let item = realm.object(ofType: ConvergenceItem.self, forPrimaryKey: key) else {
                    if deleted.contains(key) && !created.contains(key) { record.deletes.append(key) }
                    continue
                }
                if created.contains(key) {
                    record.creates[key] = item.scalarFields
                } else {
                    let changed = item.scalarFields.filter { before[$0.key] != $0.value }
                    if !changed.isEmpty { record.updates[key] = changed }
                }
            }
            record.deletes.sort()
            return record
        }
    }

    private func noteLedger(_ realm: Realm, _ number: Int) {
        let ledger =
            realm.object(ofType: ConvergenceLedger.self, forPrimaryKey: replica)
            ?? realm.create(ConvergenceLedger.self, value: ["replica": replica])
        ledger.last = number
        ledger.acked.insert(number)
    }

    private mutating func operate(_ realm: Realm, _ touched: inout Touched, number: Int) {
        let items = Array(realm.objects(ConvergenceItem.self))
        let roll = Int.random(in: 0..<100, using: &generator)
        guard !items.isEmpty, roll >= 12 else {
            if nextOwnKey < keyLimit {
                create(nextOwnKey, realm, &touched)
                nextOwnKey += 1
            }
            return
        }
        let item = items[Int.random(in: 0..<items.count, using: &generator)]
        touched.note(item)
        switch roll {
        case 12..<40: setRandomScalars(item, all: false)
        case 40..<55: editList(item, number: number)
        case 55..<65: editMap(item, realm)
        case 65..<75: editSet(item)
        case 75..<85: writePair(realm, number: number)
        case 85..<90:
            if let person = realm.object(
                ofType: ConvergencePerson.self,
                forPrimaryKey: convergencePeople.randomElement(using: &generator)!)
            {
                person.city = "\(replica)-\(number)"
            }
        default:
            touched.deleted.insert(item.id)
            realm.delete(item)
        }
    }

    private mutating func create(_ key: Int, _ realm: Realm, _ touched: inout Touched) {
        let item = realm.create(ConvergenceItem.self, value: ["id": key])
        touched.note(item)
        touched.created.insert(key)
        setRandomScalars(item, all: true)
        item.tags.append(objectsIn: ["\(replica)-\(key)-t0", "\(replica)-\(key)-t1"])
        item.scores["s0"] = key
        item.colors.insert("red")
    }

    /// Sets every scalar property of `item` (`all`) or a random few to random values.
    private mutating func setRandomScalars(_ item: ConvergenceItem, all: Bool) {
        for name in ConvergenceItem.scalarNames where all || Int.random(in: 0..<4, using: &generator) == 0 {
            let n = Int.random(in: -1000...1000, using: &generator)
            switch name {
            case "flag": item.flag = n % 2 == 0
            case "count": item.count = n
            case "ratio": item.ratio = Float(n) / 4
            case "amount": item.amount = Double(n) / 8
            case "label": item.label = "\(replica)-\(n)"
            case "blob": item.blob = Data((0..<(abs(n) % 5)).map { UInt8(truncatingIfNeeded: n &+ $0) })
            case "stamp": item.stamp = Date(timeIntervalSince1970: Double(1_700_000_000_000 + n * 997) / 1000)
            case "price": item.price = (try? Decimal128(string: "\(n).25")) ?? 0
            case "oid": item.oid = (try? ObjectId(string: String(format: "%024x", abs(n) * 65_537))) ?? item.oid
            case "uid":
                item.uid =
                    UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", abs(n) * 31)) ?? item.uid
            case "maybeCount": item.maybeCount = n % 3 == 0 ? nil : n
            case "maybeLabel": item.maybeLabel = n % 3 == 0 ? nil : "maybe \(n)"
            case "maybeStamp":
                item.maybeStamp = n % 3 == 0 ? nil : Date(timeIntervalSince1970: Double(1_600_000_000_000 + n) / 1000)
            case "extra":
                switch abs(n) % 5 {
                case 0: item.extra = .none
                case 1: item.extra = .int(n)
                case 2: item.extra = .string("\(replica)-m\(n)")
                case 3: item.extra = .double(Double(n) / 2)
                default:
                    item.extra =
                        item.realm?.object(ofType: ConvergencePerson.self, forPrimaryKey: convergencePeople[abs(n) % 5])
                        .map { .object($0) } ?? .none
                }
            case "home":
                // Replaced whole, edited in place (one field), or nulled: each is a write of `home`'s whole value.
                if n % 4 == 0 {
                    item.home = nil
                } else if let home = item.home, n % 2 == 0 {
                    if n % 3 == 0 { home.number = n } else { home.street = "\(replica) street \(n)" }
                } else {
                    item.home = ConvergenceAddress(value: ["street": "\(replica) road \(n)", "number": n])
                }
            default:
                item.owner =
                    n % 4 == 0
                    ? nil
                    : item.realm?.object(ofType: ConvergencePerson.self, forPrimaryKey: convergencePeople[abs(n) % 5])
            }
        }
    }

    private mutating func editList(_ item: ConvergenceItem, number: Int) {
        let value = "\(replica)-\(number)-\(Int.random(in: 0..<1_000_000, using: &generator))"
        let count = item.tags.count
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<3: item.tags.insert(value, at: Int.random(in: 0...count, using: &generator))
        case 3..<5 where count > 0: item.tags.remove(at: Int.random(in: 0..<count, using: &generator))
        case 5 where count > 1:
            item.tags.move(
                from: Int.random(in: 0..<count, using: &generator), to: Int.random(in: 0..<count, using: &generator))
        case 6 where count > 0: item.tags[Int.random(in: 0..<count, using: &generator)] = value
        case 7:
            if let person = item.realm?.object(
                ofType: ConvergencePerson.self, forPrimaryKey: convergencePeople.randomElement(using: &generator)!)
            {
                item.visitors.append(person)
            }
        case 8 where !item.visitors.isEmpty:
            item.visitors.remove(at: Int.random(in: 0..<item.visitors.count, using: &generator))
        default: item.tags.append(value)
        }
    }

    private mutating func editMap(_ item: ConvergenceItem, _ realm: Realm) {
        let key = "s\(Int.random(in: 0..<4, using: &generator))"
        switch Int.random(in: 0..<5, using: &generator) {
        case 0..<2: item.scores[key] = Int.random(in: 0..<1000, using: &generator)
        case 2: item.scores.removeObject(for: key)
        case 3:
            item.friends[key] = realm.object(
                ofType: ConvergencePerson.self, forPrimaryKey: convergencePeople.randomElement(using: &generator)!)
        default: item.friends.removeObject(for: key)
        }
    }

    private mutating func editSet(_ item: ConvergenceItem) {
        let color = ["red", "green", "blue", "cyan"].randomElement(using: &generator)!
        let number = Int.random(in: 0..<8, using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: item.colors.insert(color)
        case 1: item.colors.remove(color)
        case 2: item.lucky.insert(number)
        default: item.lucky.remove(number)
        }
    }

    /// Sets both objects of a random pair to one value unique to this write.
    private mutating func writePair(_ realm: Realm, number: Int) {
        let group = convergencePairGroups.randomElement(using: &generator)!
        let value = number * 100 + index
        for suffix in ["a", "b"] {
            let pair =
                realm.object(ofType: ConvergencePair.self, forPrimaryKey: group + suffix)
                ?? realm.create(ConvergencePair.self, value: ["id": group + suffix])
            pair.round = value
        }
    }
}
