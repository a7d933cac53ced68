import BenchSupport
import Foundation
import GRDB
import Strata

/// An owner that items link to (1,000 of them).
final class QBOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
}

/// The queried objects: N of them.
final class QBItem: Object {
    @Persisted(primaryKey: true) var id = 0
    /// Uniform in 0..<1,000,000, no index.
    @Persisted var value = 0
    /// Same distribution, indexed.
    @Persisted(indexed: true) var indexedValue = 0
    /// 8–16 random letters, about a quarter of them upper case.
    @Persisted var name = ""
    @Persisted var score = 0.0
    /// One of the owners; nil for every 100th item.
    @Persisted var owner: QBOwner?
}

/// Short texts for the full-text rows.
final class QBText: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: .fullText) var text = ""
}

/// Everything both engines store, generated once from a fixed seed and kept in memory to compute the expected
/// answer of every query.
struct Dataset {
    static let ownerCount = 1_000
    static let valueRange = 1_000_000
    static let vocabularySize = 5_000

    let count: Int
    var values: [Int] = []
    var indexedValues: [Int] = []
    var names: [String] = []
    var scores: [Double] = []
    /// The owner's id, or -1 for none.
    var owners: [Int] = []
    var ownerNames: [String] = []
    var ownerAges: [Int] = []
    var vocabulary: [String] = []
    /// Each text as word indexes into `vocabulary`.
    var textWords: [[Int]] = []
    var texts: [String] = []

    init(count: Int, textCount: Int, seed: UInt64 = 0x5354_5241_5441_0005) {
        self.count = count
        var generator = SplitMix64(seed: seed)
        func word(_ length: ClosedRange<Int>, upper: Bool) -> String {
            let length = Int.random(in: length, using: &generator)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            for _ in 0..<length {
                let letter = UInt8.random(in: 0..<26, using: &generator)
                let capital = upper && generator.next() % 4 == 0
                bytes.append((capital ? 65 : 97) + letter)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        for _ in 0..<Self.ownerCount {
            ownerNames.append(word(5...10, upper: true))
            ownerAges.append(Int.random(in: 18..<90, using: &generator))
        }
        values.reserveCapacity(count)
        indexedValues.reserveCapacity(count)
        names.reserveCapacity(count)
        scores.reserveCapacity(count)
        owners.reserveCapacity(count)
        for id in 0..<count {
            values.append(Int.random(in: 0..<Self.valueRange, using: &generator))
            indexedValues.append(Int.random(in: 0..<Self.valueRange, using: &generator))
            names.append(word(8...16, upper: true))
            scores.append(Double.random(in: 0..<1000, using: &generator))
            let owner = Int.random(in: 0..<Self.ownerCount, using: &generator)
            owners.append(id % 100 == 99 ? -1 : owner)
        }
        // The texts come from a generator of their own, so that the full-text rows see the same texts at any N.
        generator = SplitMix64(seed: seed ^ 0x7465_7874)
        var seen = Set<String>()
        while vocabulary.count < Self.vocabularySize {
            let candidate = word(3...9, upper: false)
            if seen.insert(candidate).inserted { vocabulary.append(candidate) }
        }
        // Word frequencies fall off like 1/rank (log-uniform ranks), as in natural text: a few words are in
        // most texts, most words in few.
        let logSize = Foundation.log(Double(Self.vocabularySize))
        for _ in 0..<textCount {
            let length = Int.random(in: 5...12, using: &generator)
            var words: [Int] = []
            for _ in 0..<length {
                let rank = Int(exp(Double.random(in: 0..<logSize, using: &generator))) - 1
                words.append(min(rank, Self.vocabularySize - 1))
            }
            textWords.append(words)
            texts.append(words.map { vocabulary[$0] }.joined(separator: " "))
        }
    }
}

/// Loads `data` into a Strata file at `url`.
func loadStrata(_ data: Dataset, url: URL) throws -> Realm {
    let realm = try Realm(
        configuration: Realm.Configuration(fileURL: url, objectTypes: [QBOwner.self, QBItem.self, QBText.self]))
    try realm.write {
        var owners: [QBOwner] = []
        for index in 0..<Dataset.ownerCount {
            let owner = QBOwner()
            owner.id = index
            owner.name = data.ownerNames[index]
            owner.age = data.ownerAges[index]
            realm.add(owner)
            owners.append(owner)
        }
        for id in 0..<data.count {
            let item = QBItem()
            item.id = id
            item.value = data.values[id]
            item.indexedValue = data.indexedValues[id]
            item.name = data.names[id]
            item.score = data.scores[id]
            if data.owners[id] >= 0 { item.owner = owners[data.owners[id]] }
            realm.add(item)
        }
    }
    try realm.write {
        for (id, text) in data.texts.enumerated() {
            let object = QBText()
            object.id = id
            object.text = text
            realm.add(object)
        }
    }
    try check(realm.objects(QBItem.self).count == data.count, "Strata holds \(data.count) items")
    try check(realm.objects(QBText.self).count == data.texts.count, "Strata holds \(data.texts.count) texts")
    return realm
}

/// SQLite settings, printed in the report.
let sqliteSettings =
    "journal_mode=WAL, synchronous=FULL, cache_size=-1048576 (1 GiB page cache, as in strata-bench: Strata reads "
    + "through the OS page cache without a limit), mmap off (default); no ANALYZE"

/// Loads `data` into a SQLite file at `path`: tables `owner` and `item` (owner as a foreign-key column), an index on
/// `item.indexedValue` and on `item.ownerId`, and an FTS5 table `text`.
func loadGRDB(_ data: Dataset, path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.journalMode = .wal
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA cache_size = -1048576")
    }
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try queue.write { db in
        try db.execute(
            sql: """
                CREATE TABLE owner(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL);
                CREATE TABLE item(
                    id INTEGER PRIMARY KEY, value INTEGER NOT NULL, indexedValue INTEGER NOT NULL,
                    name TEXT NOT NULL, score REAL NOT NULL, ownerId INTEGER REFERENCES owner(id));
                """)
        try db.create(virtualTable: "document", using: FTS5()) { table in table.column("text") }
        let owner = try db.makeStatement(sql: "INSERT INTO owner(id, name, age) VALUES (?, ?, ?)")
        for index in 0..<Dataset.ownerCount {
            try owner.execute(arguments: [index, data.ownerNames[index], data.ownerAges[index]])
        }
        let item = try db.makeStatement(
            sql: "INSERT INTO item(id, value, indexedValue, name, score, ownerId) VALUES (?, ?, ?, ?, ?, ?)")
        for id in 0..<data.count {
            let owner: Int? = data.owners[id] >= 0 ? data.owners[id] : nil
            try item.execute(
                arguments: [id, data.values[id], data.indexedValues[id], data.names[id], data.scores[id], owner])
        }
        try db.execute(
            sql: """
                CREATE INDEX item_indexedValue ON item(indexedValue);
                CREATE INDEX item_ownerId ON item(ownerId);
                """)
        let text = try db.makeStatement(sql: "INSERT INTO document(rowid, text) VALUES (?, ?)")
        for (id, value) in data.texts.enumerated() { try text.execute(arguments: [id, value]) }
    }
    let counts = try queue.read { db in
        (
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? -1,
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM document") ?? -1
        )
    }
    try check(counts.0 == data.count && counts.1 == data.texts.count, "SQLite holds every item and text")
    return queue
}
