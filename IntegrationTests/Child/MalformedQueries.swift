import Foundation
import Strata
import StrataTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The malformed-query run: queries a user or an attacker could write — random tokens, truncated and mutated
// queries, deep nesting, long chains, wrong arguments, huge type-safe `where {}` trees — each run through
// `checkedFilter` / `checkedWhere` on a small file and, when accepted, evaluated outside and inside a write
// transaction and through `filter`. Query `i` of seed `s` is the same in every process, so the parent can restart
// a child after a crash and count the query that crashed it.
//
//   malformed-queries PATH SEED START COUNT   run queries START..<START+COUNT. Before each query print
//                                             "query I KIND", after it "accepted I", "rejected I" (a typed
//                                             invalidQuery error) or "other I ERROR" (any other error); "done"
//                                             at the end. The queries run on a thread with a 512 KiB stack (the
//                                             size of a secondary thread on Apple platforms); a query still
//                                             running after 60 s ends the process with SIGALRM.
//   malformed-query-trap PATH SEED INDEX      run query INDEX through the trapping `filter` / `where`
//                                             (the parent expects a trap that names the invalid query)

/// Runs one of the malformed-query modes (registered through `runBadInputMode`); false when `arguments[1]` is not
/// one of them.
func runMalformedQueryMode(_ arguments: [String]) throws -> Bool {
    switch arguments[1] {
    case "malformed-queries":
        guard arguments.count >= 6, let seed = UInt64(arguments[3]), let start = Int(arguments[4]),
            let count = Int(arguments[5])
        else { fail("malformed-queries needs SEED START COUNT") }
        try onSmallStack { try MalformedQueryRun(path: arguments[2]).run(seed: seed, start..<(start + count)) }
        say("done")
    case "malformed-query-trap":
        guard arguments.count >= 5, let seed = UInt64(arguments[3]), let index = Int(arguments[4]) else {
            fail("malformed-query-trap needs SEED INDEX")
        }
        try onSmallStack { try MalformedQueryRun(path: arguments[2]).runTrapping(seed: seed, index: index) }
        say("no trap")
    default:
        return false
    }
    return true
}

/// Runs `body` on a thread with a 512 KiB stack and waits for it.
private func onSmallStack(_ body: @escaping @Sendable () throws -> Void) throws {
    let finished = DispatchSemaphore(value: 0)
    let failure = SharedFailure()
    let thread = Thread {
        do {
            try body()
        } catch {
            failure.set("\(error)")
        }
        finished.signal()
    }
    thread.stackSize = 512 * 1024
    thread.start()
    finished.wait()
    if let message = failure.get() { fail(message) }
}

/// The error of a body run on another thread.
private final class SharedFailure: @unchecked Sendable {
    private var message: String?
    private let lock = NSLock()
    func get() -> String? { lock.withLock { message } }
    func set(_ newValue: String) { lock.withLock { message = newValue } }
}

/// The model the queries run against: every kind of property a query can name.
final class FuzzItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var flag = false
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var nickname: String?
    @Persisted var tags: List<String>
    @Persisted var friends: List<FuzzItem>
    @Persisted var best: FuzzItem?
    @Persisted var scores: Map<String, Int>
    @Persisted var extra: AnyRealmValue
    @Persisted(originProperty: "friends") var fans: LinkingObjects<FuzzItem>
    /// Not persisted: a type-safe query through it is an error.
    var computed: Int { age * 2 }
}

/// One generated query: RQL text with arguments, or a type-safe query.
enum FuzzQuery {
    case text(String, [Any])
    case builder((Query<FuzzItem>) -> Query<Bool>)
}

struct MalformedQueryRun {
    let realm: Realm
    let items: Results<FuzzItem>
    let owner: FuzzItem

    init(path: String) throws {
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [FuzzItem.self]))
        self.realm = realm
        if realm.objects(FuzzItem.self).isEmpty {
            var random = SeededGenerator(seed: 7)
            try realm.write {
                var created: [FuzzItem] = []
                for index in 0..<60 {
                    let item = realm.create(FuzzItem.self, value: ["id": index, "name": "n\(index)"])
                    item.age = Int.random(in: 0..<20, using: &random)
                    item.score = Double(Int.random(in: 0..<100, using: &random)) / 8
                    item.flag = index % 3 == 0
                    item.born = Date(timeIntervalSince1970: Double(index) * 86_400)
                    item.nickname = index % 4 == 0 ? nil : "nick\(index)"
                    created.append(item)
                }
                for (index, item) in created.enumerated() {
                    item.tags.append(objectsIn: (0..<(index % 5)).map { "t\($0)" })
                    for _ in 0..<(index % 4) { item.friends.append(created.randomElement(using: &random)!) }
                    item.best = index % 3 == 0 ? nil : created[(index * 7) % created.count]
                    item.scores["k\(index % 3)"] = index
                    item.extra = index % 2 == 0 ? .int(index) : .string("e\(index)")
                }
            }
        }
        items = realm.objects(FuzzItem.self)
        owner = items.filter("id == 1").first!
    }

    func run(seed: UInt64, _ range: Range<Int>) throws {
        for index in range {
            let (kind, query) = MalformedQueries.query(seed: seed, index: index, owner: owner)
            say("query \(index) \(kind)")
            alarm(60)
            let outcome = evaluate(query, onList: index % 3 == 0)
            alarm(0)
            say("\(outcome) \(index)")
        }
    }

    /// "accepted", "rejected" (a typed `invalidQuery`) or "other ERROR".
    private func evaluate(_ query: FuzzQuery, onList: Bool) -> String {
        do {
            let results: Results<FuzzItem>
            switch query {
            case .text(let text, let arguments):
                results =
                    onList
                    ? try owner.friends.narrowedForFuzz(text, arguments) : try items.narrowedForFuzz(text, arguments)
            case .builder(let build):
                // Describing the query must work however large it is.
                let described: (Query<FuzzItem>) -> Query<Bool> = { root in
                    let query = build(root)
                    _ = String(describing: query)
                    return query
                }
                results = onList ? try owner.friends.checkedWhere(described) : try items.checkedWhere(described)
            }
            let outside = results.count
            // Inside a write the general evaluator runs instead of compiled conditions: both must agree.
            let inside = try realm.write { results.count }
            guard outside == inside else { return "other count \(outside) outside a write, \(inside) inside" }
            return "accepted"
        } catch Realm.Error.invalidQuery(let text, let position, let reason) {
            guard position >= 0, position <= text.count, !reason.isEmpty else {
                return "other position \(position) of \(text.count) or empty reason"
            }
            return "rejected"
        } catch {
            return "other \(error)".replacingOccurrences(of: "\n", with: " ")
        }
    }

    /// Runs query `index` through the trapping APIs.
    func runTrapping(seed: UInt64, index: Int) throws {
        let (_, query) = MalformedQueries.query(seed: seed, index: index, owner: owner)
        switch query {
        case .text(let text, let arguments):
            let results = items.filterForFuzz(text, arguments)
            say("accepted \(results.count)")
        case .builder(let build):
            say("accepted \(items.where(build).count)")
        }
    }
}

extension Results {
    /// `checkedFilter` with an argument array (the variadic API cannot take one).
    func narrowedForFuzz(_ text: String, _ arguments: [Any]) throws -> Results<Element> {
        switch arguments.count {
        case 0: try checkedFilter(text)
        case 1: try checkedFilter(text, arguments[0])
        case 2: try checkedFilter(text, arguments[0], arguments[1])
        default: try checkedFilter(text, arguments[0], arguments[1], arguments[2])
        }
    }

    func filterForFuzz(_ text: String, _ arguments: [Any]) -> Results<Element> {
        switch arguments.count {
        case 0: filter(text)
        case 1: filter(text, arguments[0])
        case 2: filter(text, arguments[0], arguments[1])
        default: filter(text, arguments[0], arguments[1], arguments[2])
        }
    }
}

extension List where Element == FuzzItem {
    func narrowedForFuzz(_ text: String, _ arguments: [Any]) throws -> Results<Element> {
        switch arguments.count {
        case 0: try checkedFilter(text)
        case 1: try checkedFilter(text, arguments[0])
        case 2: try checkedFilter(text, arguments[0], arguments[1])
        default: try checkedFilter(text, arguments[0], arguments[1], arguments[2])
        }
    }
}

/// The query generator: query `index` of `seed` depends on nothing else.
enum MalformedQueries {
    /// Queries that are valid against `FuzzItem`, with their arguments (the raw material of truncations,
    /// mutations and chains).
    nonisolated(unsafe) static let valid: [(String, [Any])] = [
        ("age > 5", []), ("name BEGINSWITH[c] 'n1'", []), ("score BETWEEN {1.0, 5.5}", []), ("flag == true", []),
        ("nickname == nil", []), ("tags.@count > 2", []), ("ANY tags == 't1'", []), ("friends.@count == 0", []),
        ("best.name == 'n3'", []), ("scores.@keys == 'k1'", []), ("extra.@type == 'int'", []),
        ("age IN {1, 2, 3}", []), ("SUBQUERY(friends, $f, $f.age > 3).@count > 0", []),
        ("@links.FuzzItem.friends.@count > 0", []), ("name LIKE '*1?'", []), ("age > $0", [5]),
        ("born > $0", [Date(timeIntervalSince1970: 86_400 * 10)]), ("TRUEPREDICATE SORT(age DESC) LIMIT(5)", []),
        ("name CONTAINS[cd] 'É'", []), ("NOT (age < 3 OR flag == false)", []), ("id IN $0", [[1, 2, 3]]),
        ("fans.@count >= 1 AND best.best.age < 10", []), ("scores.@values > 3", []), ("extra == 4", []),
        ("name == $0 OR age == $1", ["n2", 7]), ("ALL tags BEGINSWITH 't'", []), ("NONE friends.age > 15", []),
        ("score > 2.5 && flag != false || nickname ENDSWITH '3'", []), ("FALSEPREDICATE", []),
        ("age >= 3 DISTINCT(age) SORT(name ASC)", []),
    ]

    /// Pieces random-token queries are made of.
    static let tokens: [String] = [
        "name", "age", "score", "flag", "born", "nickname", "tags", "friends", "best", "scores", "extra", "id",
        "fans", "missing", "friends.name", "best.age", "best.best.name", "tags.@count", "friends.@count",
        "scores.@keys", "scores.@values", "extra.@type", "@links", "@links.FuzzItem.friends", "@links.@count",
        "@sum", "@avg", "@min", "@max", "@size", "@", "==", "=", "!=", "<>", "<", "<=", ">", ">=", "=<", "=>",
        "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN", "BETWEEN", "TEXT", "GEOWITHIN", "[c]", "[d]", "[cd]",
        "[x]", "[", "]", "AND", "OR", "NOT", "&&", "||", "!", "(", ")", "{", "}", ",", ".", "-", "1", "-5", "3.14",
        "1e400", "99999999999999999999", "0x1F", "'str'", "\"str\"", "'unterminated", "\"", "'", "nil", "NULL",
        "true", "false", "$0", "$1", "$99", "$", "$x", "oid(507f1f77bcf86cd799439011)", "oid(zz)",
        "uuid(E621E1F8-C36C-495A-93FC-0C247A3E6E5F)", "uuid(bad)", "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY",
        "ANY", "ALL", "NONE", "SOME", "SORT", "DISTINCT", "LIMIT", "ASC", "DESC", "geoBox", "geoCircle",
        "geoPolygon", "'\u{0}'", "🐕", "é", "\\", "#", "%", ";", "`", "\t", "\n", "@count", "@keys", "$f", "$f.age",
    ]

    static func query(seed: UInt64, index: Int, owner: FuzzItem) -> (kind: String, query: FuzzQuery) {
        var random = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index))
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18: return ("tokens", .text(randomTokens(&random), randomArguments(&random, owner: owner)))
        case 18..<30: return ("truncated", truncated(&random))
        case 30..<42: return ("mutated", mutated(&random))
        case 42..<56: return ("nested", .text(nested(&random), []))
        case 56..<68: return ("chain", chain(&random))
        case 68..<78: return ("arguments", badArguments(&random, owner: owner))
        case 78..<94: return ("builder", .builder(builder(&random)))
        default:
            let (text, arguments) = valid.randomElement(using: &random)!
            return ("valid", .text(text, arguments))
        }
    }

    /// A size: mostly small, sometimes near the limits, sometimes far past them.
    static func size(_ random: inout SeededGenerator) -> Int {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4: Int.random(in: 1...20, using: &random)
        case 4..<6: Int.random(in: 20...900, using: &random)
        case 6..<8: Int.random(in: 900...1_100, using: &random)
        default: Int.random(in: 1_100...20_000, using: &random)
        }
    }

    static func randomTokens(_ random: inout SeededGenerator) -> String {
        let count = Int.random(in: 1...30, using: &random)
        let separator = Int.random(in: 0..<4, using: &random) == 0 ? "" : " "
        return (0..<count).map { _ in tokens.randomElement(using: &random)! }.joined(separator: separator)
    }

    static func randomArguments(_ random: inout SeededGenerator, owner: FuzzItem) -> [Any] {
        let candidates: [Any] = [
            5, "str", Optional<Int>.none as Any, [1, 2, 3], Date(timeIntervalSince1970: 0), ObjectId(), 3.5, true,
            owner, [[1]], NSNull(), UUID(), Decimal128(5), Data([1, 2]), ["a": 1], Float.nan, Int64.min,
            String(repeating: "x", count: 10_000), [owner, owner], Array(0..<5_000),
        ]
        return (0..<Int.random(in: 0...3, using: &random)).map { _ in candidates.randomElement(using: &random)! }
    }

    static func truncated(_ random: inout SeededGenerator) -> FuzzQuery {
        let (text, arguments) = valid.randomElement(using: &random)!
        let cut = Int.random(in: 0...text.count, using: &random)
        return .text(String(text.prefix(cut)), arguments)
    }

    static func mutated(_ random: inout SeededGenerator) -> FuzzQuery {
        let (text, arguments) = valid.randomElement(using: &random)!
        var characters = Array(text)
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let position = Int.random(in: 0...characters.count, using: &random)
            let piece = Array(tokens.randomElement(using: &random)!)
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where position < characters.count: characters.remove(at: position)
            case 1: characters.insert(contentsOf: piece, at: position)
            default:
                if position < characters.count { characters[position] = piece.first ?? " " }
            }
        }
        return .text(String(characters), arguments)
    }

    /// Deep nesting in every form the grammar allows, balanced or not.
    static func nested(_ random: inout SeededGenerator) -> String {
        let depth = size(&random)
        let condition = ["age > 1", "flag == true", "name == 'n1'", "TRUEPREDICATE"].randomElement(using: &random)!
        let balanced = Int.random(in: 0..<4, using: &random) != 0
        func close(_ text: String) -> String { balanced ? String(repeating: text, count: depth) : "" }
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return String(repeating: "(", count: depth) + condition + close(")")
        case 1: return String(repeating: "NOT (", count: depth) + condition + close(")")
        case 2: return String(repeating: "NOT ", count: depth) + condition
        case 3: return String(repeating: "!", count: depth) + condition
        case 4: return "age IN " + String(repeating: "{", count: depth) + "1" + close("}")
        case 5:
            return String(repeating: "SUBQUERY(friends, $f, ", count: depth) + "$f.age > 1" + close(").@count > 0")
        case 6:
            // Alternating AND and OR cannot be flattened: every level nests.
            var text = condition
            for level in 0..<depth { text = "(\(text) \(level % 2 == 0 ? "AND" : "OR") age != \(level))" }
            return text
        case 7: return String(repeating: "(age > 1 OR ", count: depth) + condition + close(")")
        default: return String(repeating: "(", count: depth) + condition + ")" + String(repeating: "AND", count: 3)
        }
    }

    /// Long flat chains of conditions, as apps build them (`a == 1 OR a == 2 OR …`), and long lists.
    static func chain(_ random: inout SeededGenerator) -> FuzzQuery {
        let count = size(&random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .text((0..<count).map { "age == \($0)" }.joined(separator: " OR "), [])
        case 1: return .text((0..<count).map { "age != \($0)" }.joined(separator: " AND "), [])
        case 2: return .text((0..<count).map { "name == 'n\($0)'" }.joined(separator: " || "), [])
        case 3:
            return .text(
                (0..<count).map { $0 % 7 == 0 ? "(age > \($0) AND flag == true)" : "score < \($0)" }.joined(
                    separator: " OR "), [])
        case 4: return .text("age IN {" + (0..<count).map(String.init).joined(separator: ", ") + "}", [])
        default:
            return .text((0..<count).map { "age == $\($0 % 3)" }.joined(separator: " OR "), [1, 2, 3])
        }
    }

    static func badArguments(_ random: inout SeededGenerator, owner: FuzzItem) -> FuzzQuery {
        let templates = [
            "age > $0", "name == $0", "id IN $0", "born < $0", "best == $0", "score BETWEEN {$0, $1}", "tags == $0",
            "flag == $0", "extra == $0", "name BEGINSWITH $1", "age == $2", "friends == $0", "scores.@values == $0",
        ]
        return .text(templates.randomElement(using: &random)!, randomArguments(&random, owner: owner))
    }

    /// A type-safe query: long chains built in a loop (both directions), deep `!` chains, alternations that
    /// nest, random trees, and key paths the engine cannot run.
    static func builder(_ random: inout SeededGenerator) -> (Query<FuzzItem>) -> Query<Bool> {
        let count = size(&random)
        let shape = Int.random(in: 0..<7, using: &random)
        let leafSeed = random.next()
        return { root in
            var leaves = SeededGenerator(seed: leafSeed)
            func leaf() -> Query<Bool> {
                switch Int.random(in: 0..<8, using: &leaves) {
                case 0: root.age > Int.random(in: 0..<20, using: &leaves)
                case 1: root.name.starts(with: "n1")
                case 2: root.flag == true
                case 3: root.tags.count > 1
                case 4: root.best.age < 3
                case 5: root.score.contains(1.0...4.0)
                case 6: root.friends.name == "n2"
                default: root.age.in([1, 2, 3])
                }
            }
            switch shape {
            case 0:
                var query = leaf()
                for _ in 1..<max(count, 1) { query = query || leaf() }
                return query
            case 1:
                var query = leaf()
                for _ in 1..<max(count, 1) { query = leaf() && query }
                return query
            case 2:
                var query = leaf()
                for _ in 0..<count { query = !query }
                return query
            case 3:
                var query = leaf()
                for level in 0..<count { query = level % 2 == 0 ? (query || leaf()) : (query && leaf()) }
                return query
            case 4:
                var parts = (0..<count).map { _ in leaf() }
                while parts.count > 1 {
                    let a = parts.removeLast()
                    let b = parts.removeLast()
                    parts.insert(Int.random(in: 0..<2, using: &leaves) == 0 ? a || b : !(a && b), at: 0)
                }
                return parts[0]
            case 5:
                return root.computed > 1 || leaf()
            default:
                var query = leaf()
                for _ in 0..<count { query = query && !leaf() }
                return query
            }
        }
    }
}
