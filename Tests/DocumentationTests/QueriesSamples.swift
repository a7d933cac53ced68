import Foundation
import Strata
import Testing

// Documentation/Queries.md: every construct of the query language and of type-safe queries, run on a small data
// set whose answers are written next to each query in the page.

enum QueriesSample {
    final class Person: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var age = 0
        @Persisted var active = true
        @Persisted var score: Double?
        @Persisted var email: String?
        @Persisted var joined = Date()
        @Persisted var tags: List<String>
        @Persisted var pets: List<Pet>
        @Persisted var scores: Map<String, Int>
        @Persisted var extra: AnyRealmValue
        @Persisted(indexed: .fullText) var bio = ""
        @Persisted var home: Place?
        @Persisted var employer: Company?
    }

    final class Pet: Object {
        @Persisted var name = ""
        @Persisted var species = ""
        @Persisted var age = 0
        @Persisted var chip: UUID?
        @Persisted(originProperty: "pets") var owners: LinkingObjects<Person>
    }

    final class Company: Object {
        @Persisted(primaryKey: true) var id = ObjectId.generate()
        @Persisted var name = ""
    }

    /// A GeoJSON point: the shape `GEOWITHIN` reads (longitude first).
    final class Place: EmbeddedObject {
        @Persisted var city = ""
        @Persisted private var type = "Point"
        @Persisted private var coordinates: List<Double>

        convenience init(city: String, latitude: Double, longitude: Double) {
            self.init()
            self.city = city
            coordinates.append(objectsIn: [longitude, latitude])
        }
    }

    static let acmeId = try! ObjectId(string: "6553a6f3c5b2a1e4d8f00001")
    static let rexChip = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    static func date(_ year: Int, _ month: Int, _ day: Int) -> Date {
        DateComponents(
            calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC"),
            year: year, month: month, day: day
        ).date!
    }

    /// Ann, Bob, Zoë and Dan, their pets, and two companies.
    static func realm() throws -> Realm {
        let realm = try Realm(configuration: inMemoryConfiguration("queries"))
        try realm.write {
            let acme = realm.create(Company.self, value: ["id": acmeId, "name": "Acme"] as [String: Any])
            let initech = realm.create(Company.self, value: ["name": "Initech"])
            func pet(_ name: String, _ species: String, _ age: Int) -> Pet {
                realm.create(Pet.self, value: ["name": name, "species": species, "age": age])
            }
            let rex = pet("Rex", "dog", 3)
            rex.chip = rexChip
            let ann = realm.create(
                Person.self,
                value: [
                    "name": "Ann", "age": 28, "score": 9.5, "email": "ann@example.com", "joined": date(2020, 1, 1),
                    "tags": ["admin", "dev"], "pets": [rex], "scores": ["math": 90, "art": 70],
                    "bio": "Loves hiking and blue cheese", "employer": acme,
                ])
            ann.extra = .int(5)
            ann.home = Place(city: "Oslo", latitude: 59.91, longitude: 10.75)
            let bob = realm.create(
                Person.self,
                value: [
                    "name": "Bob", "age": 30, "score": 7.0, "joined": date(2021, 6, 1), "tags": ["dev"],
                    "pets": [pet("Tom", "cat", 5), pet("Kit", "cat", 1)], "scores": ["math": 60],
                    "bio": "Cheddar cheese enthusiast", "employer": acme,
                ])
            bob.extra = .string("vip")
            bob.home = Place(city: "Lisbon", latitude: 38.72, longitude: -9.14)
            realm.create(
                Person.self,
                value: [
                    "name": "Zoë", "age": 41, "active": false, "email": "zoe@example.org",
                    "joined": date(2019, 3, 15), "bio": "Salsa dancer", "employer": initech,
                ])
            let dan = realm.create(
                Person.self,
                value: [
                    "name": "Dan", "age": 17, "score": 5.5, "email": "DAN@EXAMPLE.COM", "joined": date(2023, 9, 1),
                    "tags": ["intern"], "pets": [pet("Bo", "dog", 0)], "scores": ["math": 100, "art": 95],
                    "bio": "Sells cheese at the market",
                ])
            dan.extra = .fromArray([.int(1)])
            dan.home = Place(city: "Porto", latitude: 41.15, longitude: -8.61)
            _ = pet("Stray", "dog", 7)
        }
        return realm
    }
}

/// The names of `results`, sorted (the answer of a query, in a stable order).
private func names(_ results: Results<QueriesSample.Person>) -> [String] { results.map(\.name).sorted() }
private func names(_ results: Results<QueriesSample.Pet>) -> [String] { results.map(\.name).sorted() }

@Suite("Queries")
struct QueriesSampleTests {
    typealias Person = QueriesSample.Person
    typealias Pet = QueriesSample.Pet
    typealias Company = QueriesSample.Company

    @Test func comparisonsLogicAndNil() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let thirty = people.filter("age == 30")  // Bob
        let notThirty = people.filter("age != 30")  // Ann, Dan, Zoë
        let range = people.filter("age > 28 AND age <= 41")  // Bob, Zoë
        let between = people.filter("age BETWEEN {18, 30}")  // Ann, Bob (inclusive)
        let sameAs = people.filter("age = 30 OR age => 41")  // Bob, Zoë: =, <>, =< and => also work
        let againstProperty = people.filter("age > score")  // Ann, Bob, Dan: Zoë's score is nil
        #expect(names(thirty) == ["Bob"] && names(notThirty) == ["Ann", "Dan", "Zoë"])
        #expect(names(range) == ["Bob", "Zoë"] && names(between) == ["Ann", "Bob"])
        #expect(names(sameAs) == ["Bob", "Zoë"] && names(againstProperty) == ["Ann", "Bob", "Dan"])

        let teenOrZoe = people.filter("NOT (age > 20) OR name == 'Zoë'")  // Dan, Zoë
        let symbols = people.filter("!(age > 20) || (active == false && age > 40)")  // Dan, Zoë
        let everyone = people.filter("TRUEPREDICATE")  // all four
        let nobody = people.filter("FALSEPREDICATE")  // none
        #expect(names(teenOrZoe) == ["Dan", "Zoë"] && names(symbols) == ["Dan", "Zoë"])
        #expect(everyone.count == 4 && nobody.isEmpty)

        let noEmail = people.filter("email == nil")  // Bob
        let scored = people.filter("score != NULL")  // Ann, Bob, Dan
        let homeless = people.filter("home == nil")  // Zoë
        let notInLisbon = people.filter("home.city != 'Lisbon'")  // Ann, Dan, Zoë: a nil link makes the path nil
        #expect(names(noEmail) == ["Bob"] && names(scored) == ["Ann", "Bob", "Dan"])
        #expect(names(people.filter("email != 'ann@example.com'")) == ["Bob", "Dan", "Zoë"])  // nil != a value
        #expect(names(homeless) == ["Zoë"] && names(notInLisbon) == ["Ann", "Dan", "Zoë"])
    }

    @Test func stringsAndLists() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let startsWithA = people.filter("name BEGINSWITH 'A'")  // Ann
        let dotCom = people.filter("email ENDSWITH '.com'")  // Ann: case-sensitive
        let anyCaseDotCom = people.filter("email ENDSWITH[c] '.com'")  // Ann, Dan
        let cheese = people.filter("bio CONTAINS 'cheese'")  // Ann, Bob, Dan
        let pattern = people.filter("name LIKE '?o*'")  // Bob, Zoë: ? is one character, * any run
        let exact = people.filter("name ==[c] 'ann'")  // Ann
        let noDiacritics = people.filter("name ==[d] 'Zoe'")  // Zoë
        let both = people.filter("name BEGINSWITH[cd] 'zo'")  // Zoë
        let beforeC = people.filter("name < 'C'")  // Ann, Bob: strings compare by Unicode scalars
        #expect(names(startsWithA) == ["Ann"] && names(dotCom) == ["Ann"] && names(anyCaseDotCom) == ["Ann", "Dan"])
        #expect(names(cheese) == ["Ann", "Bob", "Dan"] && names(pattern) == ["Bob", "Zoë"])
        #expect(names(exact) == ["Ann"] && names(noDiacritics) == ["Zoë"] && names(both) == ["Zoë"])
        #expect(names(beforeC) == ["Ann", "Bob"])

        let listed = people.filter("age IN {17, 41}")  // Dan, Zoë
        let fromArgument = people.filter("name IN $0", ["Ann", "Dan"])  // Ann, Dan
        let sameAsIn = people.filter("age == ANY {17, 41}")  // Dan, Zoë: == {17, 41} means the same
        let notListed = people.filter("age == NONE {17, 41}")  // Ann, Bob
        let olderThanAll = people.filter("age > ALL {17, 28}")  // Bob, Zoë
        let devTagged = people.filter("'dev' IN tags")  // Ann, Bob: a value in a list of values
        #expect(names(listed) == ["Dan", "Zoë"] && names(fromArgument) == ["Ann", "Dan"])
        #expect(names(sameAsIn) == ["Dan", "Zoë"] && names(notListed) == ["Ann", "Bob"])
        #expect(names(olderThanAll) == ["Bob", "Zoë"] && names(devTagged) == ["Ann", "Bob"])
    }

    @Test func formatArguments() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let olderThan = people.filter("age > %@", 29)  // Bob, Zoë
        let byKey = people.filter("%K == %@", "name", "Dan")  // Dan: %K takes a key path
        let manyPets = people.filter("%K.@count >= %d", "pets", 2)  // Bob
        let inArray = people.filter("name IN %@", ["Ann", "Zoë"])  // Ann, Zoë
        let inRange = people.filter("age BETWEEN %@", [18, 30])  // Ann, Bob: an array of the two bounds
        let noMail = people.filter("email == %@", NSNull())  // Bob: NSNull or a nil optional is nil
        #expect(names(olderThan) == ["Bob", "Zoë"] && names(byKey) == ["Dan"] && names(manyPets) == ["Bob"])
        #expect(names(inArray) == ["Ann", "Zoë"] && names(inRange) == ["Ann", "Bob"] && names(noMail) == ["Bob"])
    }

    @Test func mapSubscriptsAndAggregates() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let goodAtMath = people.filter("scores['math'] >= 90")  // Ann, Dan
        let noArt = people.filter("scores['art'] == nil")  // Bob, Zoë: a missing key reads as nil
        let artGraded = people.filter("'art' IN scores.@keys")  // Ann, Dan
        let topScore = people.filter("ANY scores.@values > 95")  // Dan
        let scoreTotal = people.filter("scores.@sum > 150")  // Ann, Dan
        let artTyped = people.where { $0.scores["art"] > 80 }  // Dan
        let sixtyOrSeventy = people.where { $0.scores.containsAny(in: [60, 70]) }  // Ann, Bob
        let typedTotal = people.where { $0.scores.sum > 150 }  // Ann, Dan
        #expect(names(goodAtMath) == ["Ann", "Dan"] && names(noArt) == ["Bob", "Zoë"])
        #expect(
            names(artGraded) == ["Ann", "Dan"] && names(topScore) == ["Dan"] && names(scoreTotal) == ["Ann", "Dan"])
        #expect(names(artTyped) == ["Dan"] && names(sixtyOrSeventy) == ["Ann", "Bob"])
        #expect(names(typedTotal) == ["Ann", "Dan"])
    }

    @Test func argumentsAndLiterals() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)
        let acme = realm.object(ofType: Company.self, forPrimaryKey: QueriesSample.acmeId)!
        let start2021 = QueriesSample.date(2021, 1, 1)

        let early = people.filter("age > $0 AND joined < $1", 20, start2021)  // Ann, Zoë
        let earlyLiteral = people.filter("age > 20 AND joined < 2021-01-01@00:00:00")  // Ann, Zoë: a date literal (UTC)
        let sinceEpoch = people.filter("joined >= T1609459200:0")  // Bob, Dan: seconds:nanoseconds since 1970
        let staff = people.filter("employer == $0", acme)  // Ann, Bob: an object argument
        let byId = people.filter("employer.id == oid(6553a6f3c5b2a1e4d8f00001)")  // Ann, Bob
        let chipped = realm.objects(Pet.self).filter("chip == uuid(E621E1F8-C36C-495A-93FC-0C247A3E6E5F)")  // Rex
        let quoted = people.filter("employer.id == oid('6553a6f3c5b2a1e4d8f00001')")  // Ann, Bob: quotes are optional
        let inactive = people.filter("active == false")  // Zoë
        #expect(names(early) == ["Ann", "Zoë"] && names(staff) == ["Ann", "Bob"] && names(byId) == ["Ann", "Bob"])
        #expect(names(chipped) == ["Rex"] && names(quoted) == ["Ann", "Bob"] && names(inactive) == ["Zoë"])
        #expect(names(earlyLiteral) == ["Ann", "Zoë"] && names(sinceEpoch) == ["Bob", "Dan"])
        // A malformed value is an error pointing at the value.
        do {
            _ = try people.checkedFilter("employer.id == oid(6553a6f3c5b2a1e4d8f0000)")
            Issue.record("a 23-digit ObjectId was accepted")
        } catch let Realm.Error.invalidQuery(_, position, reason) {
            #expect(position == 19 && reason.contains("is not an ObjectId"))
        }
    }

    @Test func linksAndCollections() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)
        let pets = realm.objects(Pet.self)

        let atAcme = people.filter("employer.name == 'Acme'")  // Ann, Bob
        let unemployed = people.filter("employer == nil")  // Dan
        #expect(names(atAcme) == ["Ann", "Bob"] && names(unemployed) == ["Dan"])

        let devs = people.filter("tags == 'dev'")  // Ann, Bob: ANY is implied
        let catOwners = people.filter("ANY pets.species == 'cat'")  // Bob
        let onlyDogs = people.filter("ALL pets.species == 'dog'")  // Ann, Dan, Zoë: true when there are none
        let noOldPets = people.filter("NONE pets.age > 2")  // Dan, Zoë
        let special = people.filter("ANY tags IN {'admin', 'intern'}")  // Ann, Dan
        #expect(names(devs) == ["Ann", "Bob"] && names(catOwners) == ["Bob"])
        #expect(names(onlyDogs) == ["Ann", "Dan", "Zoë"] && names(noOldPets) == ["Dan", "Zoë"])
        #expect(names(special) == ["Ann", "Dan"])

        let untagged = people.filter("tags.@count == 0")  // Zoë
        let severalPets = people.filter("pets.@count > 1")  // Bob
        let shortNames = people.filter("name.@size == 3")  // Ann, Bob, Dan: "Zoë" is 4 UTF-8 bytes
        let petYears = people.filter("pets.@sum.age > 4")  // Bob
        let youngPets = people.filter("pets.@avg.age < 1")  // Dan
        let hasKitten = people.filter("pets.@min.age == 1")  // Bob
        let hasOldPet = people.filter("pets.@max.age >= 3")  // Ann, Bob
        #expect(
            names(untagged) == ["Zoë"] && names(severalPets) == ["Bob"] && names(shortNames) == ["Ann", "Bob", "Dan"])
        #expect(names(petYears) == ["Bob"] && names(youngPets) == ["Dan"] && names(hasKitten) == ["Bob"])
        #expect(names(hasOldPet) == ["Ann", "Bob"])

        let artists = people.filter("scores.@keys == 'art'")  // Ann, Dan
        let topMark = people.filter("ANY scores.@values > 90")  // Dan
        let noScores = people.filter("scores.@count == 0")  // Zoë
        #expect(names(artists) == ["Ann", "Dan"] && names(topMark) == ["Dan"] && names(noScores) == ["Zoë"])

        let strays = pets.filter("owners.@count == 0")  // Stray: a LinkingObjects property
        let bobsPets = pets.filter("ANY owners.name == 'Bob'")  // Kit, Tom
        let listed = pets.filter("@links.Person.pets.@count > 0")  // Bo, Kit, Rex, Tom: without a property
        let unlinked = pets.filter("@links.@count == 0")  // Stray: links from any class
        #expect(names(strays) == ["Stray"] && names(bobsPets) == ["Kit", "Tom"])
        #expect(names(listed) == ["Bo", "Kit", "Rex", "Tom"] && names(unlinked) == ["Stray"])

        let oldCats = people.filter("SUBQUERY(pets, $pet, $pet.species == 'cat' AND $pet.age > 2).@count > 0")  // Bob
        #expect(names(oldCats) == ["Bob"])
    }

    @Test func mixedValuesFullTextAndGeospatial() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let numbers = people.filter("extra.@type == 'int'")  // Ann
        let collections = people.filter("extra.@type IN {'list', 'dictionary'}")  // Dan
        let unset = people.filter("extra.@type == 'null'")  // Zoë
        let five = people.filter("extra == 5")  // Ann
        #expect(names(numbers) == ["Ann"] && names(collections) == ["Dan"] && names(unset) == ["Zoë"])
        #expect(names(five) == ["Ann"])

        let cheeseNotBlue = people.filter("bio TEXT 'cheese -blue'")  // Bob, Dan
        let prefix = people.filter("bio TEXT 'sals*'")  // Zoë
        #expect(names(cheeseNotBlue) == ["Bob", "Dan"] && names(prefix) == ["Zoë"])

        let iberia = GeoBox(
            bottomLeft: GeoPoint(latitude: 35, longitude: -10)!, topRight: GeoPoint(latitude: 45, longitude: -5)!)
        let inIberia = people.filter("home GEOWITHIN $0", iberia)  // Bob, Dan
        let nearOslo = people.filter("home GEOWITHIN geoCircle([10.75, 59.91], 0.01)")  // Ann
        let triangle = people.filter("home GEOWITHIN geoPolygon({[-10, 38], [-8, 38], [-8, 42], [-10, 38]})")  // Bob
        let within100km = people.where {
            $0.home.geoWithin(
                GeoCircle(center: GeoPoint(latitude: 59.91, longitude: 10.75)!, radius: .kilometers(100)!))
        }  // Ann
        #expect(names(inIberia) == ["Bob", "Dan"] && names(nearOslo) == ["Ann"] && names(triangle) == ["Bob"])
        #expect(names(within100km) == ["Ann"])
    }

    @Test func sortDistinctLimitInTheQuery() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let oldestTwo = people.filter("age > 0 SORT(age DESC) LIMIT(2)")  // Zoë, Bob
        #expect(names(people.filter("scores > 90")) == ["Dan"])  // a map's values without @values
        #expect(names(people.filter("extra == 5.0")) == ["Ann"])  // mixed numbers compare by value
        let onePerState = people.filter("TRUEPREDICATE SORT(name ASC) DISTINCT(active)")  // Ann, Zoë
        #expect(oldestTwo.map(\.name) == ["Zoë", "Bob"] && onePerState.map(\.name) == ["Ann", "Zoë"])

        // In the order written (the people were added as the table lists them: Ann, Bob, Zoë, Dan).
        let firstTwoByAge = people.filter("TRUEPREDICATE LIMIT(2) SORT(age ASC)")  // Ann, Bob: two objects, then sorted
        let oldest = people.filter("TRUEPREDICATE SORT(age DESC) LIMIT(1)")  // Zoë: sorted, then one object
        #expect(firstTwoByAge.map(\.name) == ["Ann", "Bob"] && oldest.map(\.name) == ["Zoë"])
    }

    @Test func errorsPointAtTheOffendingToken() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        do {
            _ = try people.checkedFilter("age > 30 AND nmae == 'Bob'")
            Issue.record("the query was accepted")
        } catch let error as Realm.Error {
            print(error)  // invalid query at 13 in "age > 30 AND nmae == 'Bob'": …
            guard case .invalidQuery(_, let position, let reason) = error else { throw error }
            #expect(position == 13 && reason.contains("nmae"))
        }
    }

    @Test func longChainsRunAndDeepNestingIsAnError() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let ages = (0..<5_000).map { "age == \($0)" }.joined(separator: " OR ")
        let anyAge = people.filter(ages)  // Ann, Bob, Zoë, Dan: one flat OR of 5,000 terms
        #expect(anyAge.map(\.name) == ["Ann", "Bob", "Zoë", "Dan"])
        let tooDeep = String(repeating: "(", count: 1_001) + "age > 20" + String(repeating: ")", count: 1_001)
        do {
            _ = try people.checkedFilter(tooDeep)
            Issue.record("the query was accepted")
        } catch let error as Realm.Error {
            print(error)  // invalid query at 1000 in "((((…": the query nests more than 1000 levels deep …
            guard case .invalidQuery(_, let position, let reason) = error else { throw error }
            #expect(position == 1000 && reason.contains("more than 1000 levels deep"))
        }
    }

    @Test func checkedWhereThrowsWhatWhereCannotRun() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        do {
            _ = try people.checkedWhere { $0.name.count > 3 }  // String.count is not a stored property
            Issue.record("the query was accepted")
        } catch {
            print(error)  // invalid query at 0 in "where { … } on Person": String is not a model type or projection: …
            #expect("\(error)".contains("String is not a model type or projection"))
        }
    }

    @Test func typeSafeQueries() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let adults = people.where { $0.age >= 18 && $0.email != nil }  // Ann, Zoë
        let notActive = people.where { !$0.active }  // Zoë
        let twenties = people.where { $0.age.contains(20..<30) }  // Ann
        let listed = people.where { $0.name.in(["Ann", "Dan"]) }  // Ann, Dan
        let zo = people.where { $0.name.starts(with: "zo", options: [.caseInsensitive, .diacriticInsensitive]) }  // Zoë
        let pattern = people.where { $0.name.like("?o*") }  // Bob, Zoë
        let devs = people.where { $0.tags.contains("dev") }  // Ann, Bob
        let special = people.where { $0.tags.containsAny(in: ["admin", "intern"]) }  // Ann, Dan
        let catOwners = people.where { $0.pets.species == "cat" }  // Bob: any pet
        let busy = people.where { $0.pets.count > 1 }  // Bob
        let topMark = people.where { $0.scores.values > 90 }  // Dan
        let artists = people.where { $0.scores.keys == "art" }  // Ann, Dan
        let atAcme = people.where { $0.employer.name == "Acme" }  // Ann, Bob
        let cheese = people.where { $0.bio.matches("cheese -blue") }  // Bob, Dan
        #expect(names(adults) == ["Ann", "Zoë"] && names(notActive) == ["Zoë"] && names(twenties) == ["Ann"])
        #expect(names(listed) == ["Ann", "Dan"] && names(zo) == ["Zoë"] && names(pattern) == ["Bob", "Zoë"])
        #expect(names(devs) == ["Ann", "Bob"] && names(special) == ["Ann", "Dan"] && names(catOwners) == ["Bob"])
        #expect(names(busy) == ["Bob"] && names(topMark) == ["Dan"])
        #expect(
            names(artists) == ["Ann", "Dan"] && names(atAcme) == ["Ann", "Bob"] && names(cheese) == ["Bob", "Dan"])
    }

    @Test func sortingDistinctAggregatesAndSections() throws {
        let realm = try QueriesSample.realm()
        let people = realm.objects(Person.self)

        let byAge = people.sorted(byKeyPath: "age", ascending: false)  // Zoë, Bob, Ann, Dan
        let byKeyPath = people.sorted(by: \.age)  // Dan, Ann, Bob, Zoë
        let byEmployer = people.sorted(by: [
            SortDescriptor(keyPath: "employer.name"), SortDescriptor(keyPath: "age", ascending: false),
        ])  // Dan (no employer: nil first), Bob, Ann, Zoë
        let onePerEmployer = people.sorted(byKeyPath: "name").distinct(by: ["employer"])  // Ann, Dan, Zoë
        #expect(
            byAge.map(\.name) == ["Zoë", "Bob", "Ann", "Dan"] && byKeyPath.map(\.name) == ["Dan", "Ann", "Bob", "Zoë"])
        #expect(byEmployer.map(\.name) == ["Dan", "Bob", "Ann", "Zoë"])
        #expect(onePerEmployer.map(\.name) == ["Ann", "Dan", "Zoë"])

        let totalAge: Int = people.sum(ofProperty: "age")  // 116
        let averageAge = people.average(of: \.age)  // 29.0
        let oldest = people.max(of: \.age)  // 41
        let lowestScore: Double? = people.min(ofProperty: "score")  // 5.5: nils are skipped
        let position = byAge.index(matching: "name == 'Ann'")  // 2
        print(totalAge, averageAge ?? 0, oldest ?? 0, lowestScore ?? 0, position ?? -1)  // 116 29.0 41 5.5 2
        #expect(totalAge == 116 && averageAge == 29 && oldest == 41 && lowestScore == 5.5 && position == 2)

        let byState = people.sectioned(by: \.active, ascending: false)
        for section in byState {
            print(section.key, section.map(\.name))  // true ["Ann", "Bob", "Dan"], then false ["Zoë"]
        }
        let byInitial = people.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) { $0.name.prefix(1) }
        print(byInitial.allKeys)  // ["A", "B", "D", "Z"]
        #expect(byState.allKeys == [true, false] && byState[0].map(\.name).sorted() == ["Ann", "Bob", "Dan"])
        #expect(byInitial.allKeys == ["A", "B", "D", "Z"])
    }

    @Test func resultsOfValues() throws {
        let realm = try QueriesSample.realm()

        let ann = realm.object(ofType: Person.self, forPrimaryKey: "Ann")!
        let aTags = ann.tags.filter("self BEGINSWITH 'a'")  // ["admin"]: Results<String>
        let highScores = ann.scores.filter("self > $0", 80)  // [90]: a Map's values
        let descending = ann.scores.where { $0 == 70 || $0 == 90 }.sorted(ascending: false)  // [90, 70]
        let lowest = ann.scores.sorted().first  // 70
        #expect(Array(aTags) == ["admin"] && Array(highScores) == [90])
        #expect(Array(descending) == [90, 70] && lowest == 70)
    }

    @Test func everyCollectionIsQueryable() throws {
        let realm = try QueriesSample.realm()
        let bob = realm.object(ofType: Person.self, forPrimaryKey: "Bob")!
        let rex = realm.objects(Pet.self).filter("name == 'Rex'").first!

        let oldCats = bob.pets.filter("age > 2")  // Tom: a List
        let youngest = bob.pets.sorted(byKeyPath: "age").first  // Kit
        let owners = rex.owners.where { $0.age > 18 }  // Ann: LinkingObjects
        let sections = realm.objects(Person.self).sectioned(by: \.active)
        let activeAdults = sections[1].filter("age >= 18")  // Ann, Bob: a ResultsSection
        #expect(oldCats.map(\.name) == ["Tom"] && youngest?.name == "Kit")
        #expect(bob.pets.filter("age >= 0").map(\.name) == ["Tom", "Kit"])  // the list's order
        #expect(owners.map(\.name) == ["Ann"] && names(activeAdults) == ["Ann", "Bob"])
    }
}
