import Foundation
import Strata
import Testing

// Documentation/Models.md

enum Mood: String, PersistableEnum {
    case happy
    case grumpy
}

enum Priority: Int, PersistableEnum {
    case low = 1
    case high = 10
}

enum ModelsSample {
    final class Profile: Object {
        @Persisted(primaryKey: true) var id: ObjectId  // no initial value: a new ObjectId per object
        @Persisted var active = true  // Bool
        @Persisted var visits = 0  // Int (also Int8, Int16, Int32, Int64)
        @Persisted var level: Int8 = 1
        @Persisted var ratio: Float = 0.5
        @Persisted var score = 0.0  // Double
        @Persisted var name = ""  // String
        @Persisted var avatar = Data()
        @Persisted var joined = Date()
        @Persisted var balance: Decimal128 = 0
        @Persisted var token: UUID  // a new UUID per object
        @Persisted var nickname: String?  // every type above may be optional
        @Persisted var lastSeen: Date?
        @Persisted var tags: List<String>  // collections are never optional
        @Persisted var badges: MutableSet<String>
        @Persisted var settings: Map<String, String>
        @Persisted var extra: AnyRealmValue  // any of the above, a link, or nested collections
    }

    final class Article: Object {
        @Persisted(primaryKey: true) var slug = ""
        @Persisted(indexed: true) var author = ""
        @Persisted(indexed: .fullText) var body = ""
        @Persisted var publishedAt: Date?
        var wordCount: Int { body.split(separator: " ").count }  // read-only: ignored
        var draftNotes = ""  // not @Persisted: ignored
    }

    final class Cat: Object {
        @Persisted var name = ""
        @Persisted var mood = Mood.happy
        @Persisted var priority: Priority?
    }

    final class MoodLog: Object {
        @Persisted var moods: List<Mood>
        @Persisted var seen: MutableSet<Mood>
        @Persisted var byDay: Map<String, Mood>
    }

    final class Measurement: AsymmetricObject {
        @Persisted var sensor = ""
        @Persisted var value = 0.0
        @Persisted var takenAt = Date()
    }

    actor Uploader {
        var sent: [Double] = []

        func run(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            for try await delivery in realm.outbox(Measurement.self) {
                try await send(delivery.object)  // your upload
                try await delivery.acknowledge()  // removes it from the file
            }
        }

        func send(_ measurement: Measurement) async throws { sent.append(measurement.value) }
    }

    struct EmailAddress: CustomPersistable {
        var user: String
        var domain: String
        init(persistedValue: String) {
            let parts = persistedValue.split(separator: "@", maxSplits: 1).map(String.init)
            user = parts.first ?? ""
            domain = parts.count > 1 ? parts[1] : ""
        }
        var persistableValue: String { "\(user)@\(domain)" }
    }

    struct Website: FailableCustomPersistable {
        var url: URL
        init?(persistedValue: String) {
            guard let url = URL(string: persistedValue), url.scheme == "https" else { return nil }
            self.url = url
        }
        var persistableValue: String { url.absoluteString }
    }

    final class GeoSpot: EmbeddedObject {
        @Persisted var latitude = 0.0
        @Persisted var longitude = 0.0
    }

    struct Coordinate: CustomPersistable {
        var latitude: Double
        var longitude: Double
        init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
        init(persistedValue: GeoSpot) {
            self.init(latitude: persistedValue.latitude, longitude: persistedValue.longitude)
        }
        var persistableValue: GeoSpot { GeoSpot(value: [latitude, longitude]) }
    }

    final class Club: Object {
        @Persisted var name = ""
        @Persisted var contact: EmailAddress
        @Persisted var website: Website?
        @Persisted var location: Coordinate
    }

    final class Employee: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""

        override class func className() -> String { "staff_member" }
        override class func propertiesMapping() -> [String: String] {
            ["firstName": "first_name", "lastName": "last_name"]
        }
    }

    final class Counter: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var value = 0
        @Persisted var note = ""
    }

    final class Memo: Object, Codable {
        @Persisted var title = ""
        @Persisted var color = "yellow"
        @Persisted var tags: List<String>
    }

    class Animal: Object {
        @Persisted var name = ""
    }

    final class Horse: Animal {
        @Persisted var breed = ""
    }
}

@Suite("Models")
struct ModelsSampleTests {
    typealias Profile = ModelsSample.Profile
    typealias Article = ModelsSample.Article
    typealias Cat = ModelsSample.Cat
    typealias Club = ModelsSample.Club
    typealias Employee = ModelsSample.Employee
    typealias Counter = ModelsSample.Counter
    typealias Memo = ModelsSample.Memo
    typealias Measurement = ModelsSample.Measurement

    @Test func everyPropertyTypeIsStoredAndReadBack() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-types"))
        let first = Profile()
        let second = Profile()
        #expect(first.id != second.id && first.token != second.token)
        #expect(first.nickname == nil && first.tags.isEmpty && first.extra == .none)
        first.nickname = "Ada"
        first.tags.append(objectsIn: ["a", "b"])
        first.badges.insert("gold")
        first.settings["theme"] = "dark"
        first.extra = .string("anything")
        first.balance = Decimal128(stringLiteral: "10.25")
        try realm.write { realm.add([first, second]) }
        let stored = try #require(realm.object(ofType: Profile.self, forPrimaryKey: first.id))
        #expect(stored.nickname == "Ada" && stored.tags.map { $0 } == ["a", "b"])
        #expect(stored.badges.contains("gold") && stored.settings["theme"] == "dark")
        #expect(stored.extra == .string("anything") && stored.balance == "10.25")
        #expect(stored.level == 1 && stored.ratio == 0.5)

        let schema = try #require(realm.schema[className: "Profile"])
        let types = Dictionary(uniqueKeysWithValues: schema.properties.map { ($0.name, $0.type) })
        #expect(types["level"] == .int && types["ratio"] == .float && types["balance"] == .decimal128)
        #expect(types["token"] == .uuid && types["extra"] == .any && types["tags"] == .string)
        #expect(schema[propertyName: "tags"]?.isArray == true && schema[propertyName: "settings"]?.isMap == true)
        #expect(schema[propertyName: "nickname"]?.isOptional == true)
        #expect(schema.primaryKeyProperty?.name == "id")
    }

    @Test func attributesAndIgnoredProperties() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-attributes"))
        let article = Article(value: ["slug": "hello", "author": "ann", "body": "Hello brave new world"])
        article.draftNotes = "not stored"
        try realm.write { realm.add(article) }
        let schema = try #require(realm.schema[className: "Article"])
        #expect(schema.properties.map(\.name) == ["slug", "author", "body", "publishedAt"])
        #expect(schema[propertyName: "slug"]?.isPrimary == true)
        #expect(schema[propertyName: "author"]?.isIndexed == true)
        #expect(schema[propertyName: "body"]?.isFullTextIndexed == true)
        let stored = try #require(realm.objects(Article.self).first)
        #expect(stored.draftNotes == "" && stored.wordCount == 4)
        #expect(realm.objects(Article.self).filter("body TEXT 'brave'").count == 1)
    }

    @Test func enumsAreStoredAsTheirRawValues() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-enums"))
        try realm.write {
            realm.add(Cat(value: ["name": "Tom", "mood": Mood.grumpy, "priority": Priority.high]))
            realm.add(Cat(value: ["name": "Kit"]))
        }
        let cats = realm.objects(Cat.self)
        let grumpy = cats.where { $0.mood == .grumpy }
        let alsoGrumpy = cats.filter("mood == 'grumpy'")  // the raw value
        let urgent = cats.where { $0.priority.rawValue > 5 }
        let high = cats.filter("priority == $0", Priority.high)
        #expect(grumpy.map(\.name) == ["Tom"] && alsoGrumpy.map(\.name) == ["Tom"])
        #expect(urgent.map(\.name) == ["Tom"] && high.map(\.name) == ["Tom"])
        #expect(realm.schema[className: "Cat"]?[propertyName: "mood"]?.type == .string)

        // A stored raw value that matches no case reads as the first case.
        let kit = cats.filter("name == 'Kit'").first!
        try realm.write { kit["mood"] = "sleepy" }
        #expect(kit["mood"] as? String == "sleepy")
        #expect(kit.mood == .happy)

        // Collections of enums, with no further conformance.
        let log = ModelsSample.MoodLog()
        log.moods.append(objectsIn: [.happy, .grumpy, .grumpy])
        log.seen.insert(objectsIn: [.happy, .grumpy, .grumpy])
        log.byDay["monday"] = .grumpy
        try realm.write { realm.add(log) }
        let stored = try #require(realm.objects(ModelsSample.MoodLog.self).first)
        #expect(Array(stored.moods) == [.happy, .grumpy, .grumpy] && stored.seen.count == 2)
        #expect(stored.byDay["monday"] == .grumpy)
        #expect(realm.objects(ModelsSample.MoodLog.self).filter("ANY moods == 'grumpy'").count == 1)
    }

    @Test(.timeLimit(.minutes(1))) func asymmetricObjectsGoToTheOutbox() async throws {
        let configuration = inMemoryConfiguration("models-outbox")
        let uploader = ModelsSample.Uploader()
        let producer = Producer()
        try await producer.produce(configuration: configuration)
        let running = Task { try await uploader.run(configuration: configuration) }
        while await uploader.sent.count < 2 { await Task.yield() }
        running.cancel()
        // Cancelled between sending and acknowledging, the second acknowledgement throws CancellationError (and
        // that measurement stays in the outbox for the next consumer); cancelled while waiting, the loop ends.
        do { try await running.value } catch is CancellationError {}
        #expect(await uploader.sent == [21.5, 22.0])
        await producer.close()
    }

    /// Writes the measurements, and keeps its Realm (so the in-memory file) open for the test.
    actor Producer {
        var realm: Realm?

        func close() { realm = nil }

        func produce(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            self.realm = realm  // keeps the in-memory file alive until close()
            try realm.write {
                realm.create(Measurement.self, value: ["sensor": "t1", "value": 21.5])
            }
            try await realm.asyncWrite { realm.create(Measurement.self, value: ["sensor": "t1", "value": 22.0]) }
            // Asymmetric objects cannot be queried: they only go to the outbox.
            #expect(realm.schema[className: "Measurement"]?.isAsymmetric == true)
        }
    }

    @Test func typeProjectionsStoreTheirPersistedType() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-projections"))
        let club = Club()
        club.name = "Chess"
        club.contact = ModelsSample.EmailAddress(persistedValue: "info@chess.example")
        club.website = ModelsSample.Website(persistedValue: "https://chess.example")
        club.location = ModelsSample.Coordinate(latitude: 59.9, longitude: 10.7)
        try realm.write { realm.add(club) }
        let stored = try #require(realm.objects(Club.self).first)
        #expect(stored.contact.domain == "chess.example")
        #expect(stored.website?.url.host == "chess.example")
        #expect(stored.location.latitude == 59.9)
        let schema = try #require(realm.schema[className: "Club"])
        #expect(schema[propertyName: "contact"]?.type == .string)
        #expect(schema[propertyName: "location"]?.type == .object)
        #expect(schema[propertyName: "location"]?.objectClassName == "GeoSpot")
        // Query by the persisted value.
        #expect(realm.objects(Club.self).filter("contact == 'info@chess.example'").count == 1)
        #expect(realm.objects(Club.self).filter("website BEGINSWITH 'https:'").count == 1)
        #expect(realm.objects(Club.self).where { $0.contact.persistableValue.ends(with: ".example") }.count == 1)
        #expect(realm.objects(Club.self).filter("location.latitude > 50").count == 1)
        // A stored value the failable type rejects reads as nil.
        try realm.write { stored["website"] = "http://plain.example" }
        #expect(stored.website == nil)

        // Type-safe queries on persisted values.
        try realm.write {
            let other = Club()
            other.name = "Go"
            other.contact = ModelsSample.EmailAddress(persistedValue: "go@go.example")
            other.location = ModelsSample.Coordinate(latitude: 35.7, longitude: 139.7)
            realm.add(other)
            stored["website"] = "https://chess.example"
        }
        let clubs = realm.objects(Club.self)
        let chess = clubs.where { $0.contact.persistableValue == "info@chess.example" }
        let secure = clubs.where { $0.website.persistableValue.starts(with: "https:") }
        let noSite = clubs.where { $0.website.persistableValue == nil }
        let north = clubs.where { $0.location.persistableValue.latitude > 50 }
        #expect(chess.map(\.name) == ["Chess"] && secure.map(\.name) == ["Chess"])
        #expect(noSite.map(\.name) == ["Go"] && north.map(\.name) == ["Chess"])
        // The custom type's own properties are not persisted properties: go through persistableValue.
        #expect(throws: Realm.Error.self) { try clubs.checkedWhere { $0.location.latitude > 50 } }
    }

    @Test func namesCanBeMapped() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-mapping"))
        try realm.write { realm.add(Employee(value: ["firstName": "Ada", "lastName": "Lovelace"])) }
        let schema = try #require(realm.schema[className: "staff_member"])
        #expect(schema.properties.map(\.columnName) == ["first_name", "last_name"])
        #expect(schema.properties.map(\.name) == ["firstName", "lastName"])
        #expect(realm.objects(Employee.self).filter("first_name == 'Ada'").count == 1)
        #expect(realm.objects(Employee.self).filter("firstName == 'Ada'").count == 1)
        #expect(realm.objects(Employee.self).first?["last_name"] as? String == "Lovelace")
        #expect(realm.dynamicObjects("staff_member").count == 1)
    }

    @Test func objectsAreCreatedFromValues() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-create"))
        let fromDictionary = Counter(value: ["name": "a", "value": 1])
        let fromArray = Counter(value: ["b", 2, "note"])
        let copy = Counter(value: fromArray)
        #expect(fromArray.note == "note" && copy.value == 2 && fromDictionary.note == "")

        try realm.write {
            realm.add(fromDictionary)
            realm.create(Counter.self, value: ["name": "b", "value": 2, "note": "kept"])
        }
        try realm.write {
            realm.create(Counter.self, value: ["name": "b", "value": 3], update: .modified)  // note is kept
            realm.add(Counter(value: ["name": "a", "value": 5]), update: .all)  // every property written
        }
        let b = realm.object(ofType: Counter.self, forPrimaryKey: "b")
        let a = realm.object(ofType: Counter.self, forPrimaryKey: "a")
        #expect(b?.value == 3 && b?.note == "kept")
        #expect(a?.value == 5 && a?.note == "")
        #expect(realm.objects(Counter.self).count == 2)
    }

    @Test func dynamicAccessAndSchema() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-dynamic"))
        let counter = try realm.write { realm.create(Counter.self, value: ["name": "hits"]) }
        try realm.write { counter["value"] = 42 }
        print(counter["value"] as? Int ?? 0)  // 42
        for object in realm.dynamicObjects("Counter") {
            print(object.className, object["name"] as? String ?? "")  // Counter hits
        }
        print(counter.objectSchema.properties.map(\.name))  // ["name", "value", "note"]
        print(realm.schema[className: "Counter"]?.primaryKeyProperty?.name ?? "-")  // name
        #expect(counter.value == 42)
        #expect(realm.dynamicObjects("Counter").first?["name"] as? String == "hits")
        #expect(counter.objectSchema.properties.map(\.name) == ["name", "value", "note"])
    }

    @Test func codableModels() throws {
        let json = Data(#"{"title": "Groceries", "tags": ["home"]}"#.utf8)
        let memo = try JSONDecoder().decode(Memo.self, from: json)  // a missing key takes its type's default
        print(memo.title, memo.color.isEmpty, Array(memo.tags))  // Groceries true ["home"]: "", not "yellow"
        #expect(memo.title == "Groceries" && memo.color == "" && Array(memo.tags) == ["home"])
        let realm = try Realm(configuration: inMemoryConfiguration("models-codable"))
        try realm.write { realm.add(memo) }
        let encoded = try JSONEncoder().encode(realm.objects(Memo.self).first!)
        let decoded = try JSONSerialization.jsonObject(with: encoded) as? [String: Any]
        #expect(decoded?["title"] as? String == "Groceries")
    }

    @Test func subclassesAreTheirOwnTypes() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("models-inheritance"))
        try realm.write {
            realm.add(ModelsSample.Animal(value: ["name": "generic"]))
            realm.add(ModelsSample.Horse(value: ["name": "Bolt", "breed": "Arabian"]))
        }
        #expect(realm.objects(ModelsSample.Animal.self).count == 1)  // no polymorphic queries
        #expect(realm.schema[className: "Horse"]?.properties.map(\.name) == ["name", "breed"])
    }
}
