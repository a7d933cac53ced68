import Foundation
import Testing

@testable import Strata

/// The seeds' class projection example ("Define a Class Projection"): types nested so their names do not clash
/// with other tests' models.
enum ProjectionSeed {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var address: Address?
        @Persisted var friends = List<Person>()
        @Persisted var pals = MutableSet<Person>()
    }

    final class Address: EmbeddedObject {
        @Persisted var city: String = ""
        @Persisted var country = ""
    }

    final class PersonProjection: Projection<Person> {
        @Projected(\Person.firstName) var firstName  // Passthrough from original object
        @Projected(\Person.address?.city) var homeCity  // Rename and access embedded object property through keypath
        // Collection mapping
        @Projected(\Person.friends.projectTo.firstName) var firstFriendsName: ProjectedCollection<String>
    }

    /// Each transformation on its own, and a projection of a projection's base class.
    class NameProjection: Projection<Person> {
        @Projected(\Person.lastName) var surname
    }

    final class WiderProjection: NameProjection {
        @Projected(\Person.address) var address
        @Projected(\Person.address?.country) var country
        @Projected(\Person.friends) var friends
        @Projected(\Person.pals.projectTo.lastName) var palSurnames: ProjectedCollection<String>
    }

    final class AddressProjection: Projection<Address> {
        @Projected(\Address.city) var town
    }

    static func configuration() -> Realm.Configuration {
        Realm.Configuration(
            inMemoryIdentifier: "projection-\(UUID())", objectTypes: [Person.self, Address.self])
    }

    /// Ann (Lisbon) with friends Bo and Cy; Bo (Porto); Cy (no address).
    static func people(_ realm: Realm) throws -> (ann: Person, bo: Person, cy: Person) {
        try realm.write {
            let bo = realm.create(
                Person.self,
                value: ["firstName": "Bo", "lastName": "Berg", "address": ["city": "Porto", "country": "PT"]])
            let cy = realm.create(Person.self, value: ["firstName": "Cy", "lastName": "Cole"])
            let ann = realm.create(
                Person.self,
                value: ["firstName": "Ann", "lastName": "Alves", "address": ["city": "Lisbon", "country": "PT"]])
            ann.friends.append(objectsIn: [bo, cy])
            ann.pals.insert(cy)
            return (ann, bo, cy)
        }
    }
}

/// A projection mirroring every persisted property type.
final class AllTypesProjection: Projection<AllTypes> {
    @Projected(\AllTypes.bool) var bool
    @Projected(\AllTypes.int) var int
    @Projected(\AllTypes.int8) var int8
    @Projected(\AllTypes.int16) var int16
    @Projected(\AllTypes.int32) var int32
    @Projected(\AllTypes.int64) var int64
    @Projected(\AllTypes.float) var float
    @Projected(\AllTypes.double) var double
    @Projected(\AllTypes.string) var string
    @Projected(\AllTypes.data) var data
    @Projected(\AllTypes.date) var date
    @Projected(\AllTypes.decimal) var decimal
    @Projected(\AllTypes.uuid) var uuid
    @Projected(\AllTypes.objectId) var objectId
    @Projected(\AllTypes.mood) var mood
    @Projected(\AllTypes.email) var email
    @Projected(\AllTypes.optionalBool) var optionalBool
    @Projected(\AllTypes.optionalInt) var optionalInt
    @Projected(\AllTypes.optionalDouble) var optionalDouble
    @Projected(\AllTypes.optionalString) var optionalString
    @Projected(\AllTypes.optionalData) var optionalData
    @Projected(\AllTypes.optionalDate) var optionalDate
    @Projected(\AllTypes.optionalDecimal) var optionalDecimal
    @Projected(\AllTypes.optionalUUID) var optionalUUID
    @Projected(\AllTypes.optionalObjectId) var optionalObjectId
    @Projected(\AllTypes.optionalMood) var optionalMood
}

typealias SeedPersonProjection = ProjectionSeed.PersonProjection

@Suite("Projections")
struct ProjectionTests {
    @Test func theSeedsExampleReadsThroughToTheRoot() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        let (ann, bo, _) = try ProjectionSeed.people(realm)
        let projection = SeedPersonProjection(projecting: ann)
        #expect(projection.firstName == "Ann")
        #expect(projection.homeCity == "Lisbon")
        #expect(Array(projection.firstFriendsName) == ["Bo", "Cy"])
        #expect(projection.rootObject?.isSameObject(as: ann) == true)
        #expect(projection.realm === realm)
        // Live: the projection reads the root's current version.
        try realm.write {
            ann.firstName = "Ana"
            ann.address?.city = "Faro"
            bo.firstName = "Bob"
            ann.friends.remove(at: 1)
            ann.friends.insert(ann, at: 0)
        }
        #expect(projection.firstName == "Ana")
        #expect(projection.homeCity == "Faro")
        #expect(Array(projection.firstFriendsName) == ["Ana", "Bob"])
        #expect(projection.firstFriendsName[1] == "Bob")
        #expect(projection.description.contains("homeCity = \"Faro\""))
        #expect(projection.description.contains("firstFriendsName = [\"Ana\", \"Bob\"]"))
        try realm.write { ann.address = nil }
        #expect(projection.homeCity == nil)
    }

    @Test func eachTransformation() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        let (ann, _, cy) = try ProjectionSeed.people(realm)
        let wide = ProjectionSeed.WiderProjection(projecting: ann)
        #expect(wide.surname == "Alves")  // rename (declared in the base projection class)
        #expect(wide.address?.city == "Lisbon")  // passthrough of an embedded object
        #expect(wide.country == "PT")  // through an embedded object
        #expect(wide.friends.map(\.firstName) == ["Bo", "Cy"])  // passthrough of a list
        #expect(Array(wide.palSurnames) == ["Cole"])  // collection mapping over a MutableSet
        #expect(
            ProjectionSchema.declared(in: wide).map(\.name) == [
                "surname", "address", "country", "friends", "palSurnames",
            ])
        #expect(
            ProjectionSchema.resolved(ProjectionSeed.WiderProjection.self, realm: realm).properties.map(\.rootPath)
                == [["lastName"], ["address"], ["address", "country"], ["friends"], ["pals", "lastName"]])
        // Exclusion: firstName is not part of the projection.
        #expect(!wide.description.contains("Ann"))
        // A projection of an embedded object.
        let address = ProjectionSeed.AddressProjection(projecting: try #require(ann.address))
        #expect(address.town == "Lisbon")
        // Projections of the same object are equal and hash alike.
        #expect(SeedPersonProjection(projecting: ann) == SeedPersonProjection(projecting: ann))
        #expect(SeedPersonProjection(projecting: ann) != SeedPersonProjection(projecting: cy))
        #expect(Set([SeedPersonProjection(projecting: ann), SeedPersonProjection(projecting: ann)]).count == 1)
        // Unmanaged roots project too.
        let loose = SeedPersonProjection(
            projecting: ProjectionSeed.Person(value: ["firstName": "Di", "address": ["city": "Braga"]]))
        #expect(loose.firstName == "Di" && loose.homeCity == "Braga" && loose.firstFriendsName.isEmpty)
        #expect(loose.realm == nil && !loose.isFrozen)
    }

    @Test func projectionsOfEveryPropertyTypeReadLikeTheirRoot() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "projection-all-\(UUID())", objectTypes: [AllTypes.self]))
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let object = try realm.write {
            realm.create(
                AllTypes.self,
                value: [
                    "bool": true, "int": 42, "int8": Int8(-8), "int16": Int16(16), "int32": Int32(-32),
                    "int64": Int64.max, "float": Float(1.5), "double": 2.25, "string": "ünïcödé",
                    "data": Data([1, 2, 3]), "date": date, "decimal": Decimal128(stringLiteral: "1.25"),
                    "mood": Mood.grumpy.rawValue, "email": "a@b.c", "optionalInt": 7, "optionalString": "yes",
                    "optionalDate": date, "optionalMood": Mood.happy.rawValue,
                ])
        }
        let projection = AllTypesProjection(projecting: object)
        #expect(projection.bool == object.bool && projection.int == 42 && projection.int8 == -8)
        #expect(projection.int16 == 16 && projection.int32 == -32 && projection.int64 == .max)
        #expect(projection.float == 1.5 && projection.double == 2.25 && projection.string == "ünïcödé")
        #expect(projection.data == Data([1, 2, 3]) && projection.date == date)
        #expect(projection.decimal == object.decimal && projection.uuid == object.uuid)
        #expect(projection.objectId == object.objectId && projection.mood == .grumpy)
        #expect(projection.email.address == "a@b.c")
        #expect(projection.optionalBool == nil && projection.optionalInt == 7 && projection.optionalDouble == nil)
        #expect(projection.optionalString == "yes" && projection.optionalData == nil && projection.optionalDate == date)
        #expect(projection.optionalDecimal == nil && projection.optionalUUID == nil)
        #expect(projection.optionalObjectId == nil && projection.optionalMood == .happy)
        // Write-through for every type.
        let id = ObjectId.generate()
        try realm.write {
            projection.bool = false
            projection.int8 = 8
            projection.string = "changed"
            projection.optionalData = Data([9])
            projection.optionalObjectId = id
            projection.mood = .happy
            projection.email = Email(persistedValue: "x@y.z")
            projection.optionalInt = nil
        }
        #expect(!object.bool && object.int8 == 8 && object.string == "changed" && object.optionalData == Data([9]))
        #expect(object.optionalObjectId == id && object.mood == .happy && object.email.address == "x@y.z")
        #expect(object.optionalInt == nil)
        // Read back through the projection, in another order: 26 key paths, more than the Realm keeps at hand, so
        // readers are found again after being pushed out.
        for _ in 0..<2 {
            #expect(projection.optionalInt == nil && projection.email.address == "x@y.z" && projection.mood == .happy)
            #expect(projection.optionalObjectId == id && projection.optionalData == Data([9]))
            #expect(projection.string == "changed" && projection.int8 == 8 && !projection.bool)
            #expect(projection.int == 42 && projection.double == 2.25 && projection.optionalDate == date)
        }
        let properties = ProjectionSchema.resolved(AllTypesProjection.self, realm: realm).properties
        #expect(properties.map(\.name) == properties.map { $0.rootPath.joined(separator: ".") })
        #expect(properties.count == 26)
    }

    @Test func writesGoToTheRootObject() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        let (ann, _, cy) = try ProjectionSeed.people(realm)
        let projection = SeedPersonProjection(projecting: ann)
        try realm.write {
            projection.firstName = "Anna"
            projection.homeCity = "Coimbra"  // through the optional embedded object
        }
        #expect(ann.firstName == "Anna" && ann.address?.city == "Coimbra")
        // A failed transaction rolls the projected writes back with everything else.
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try realm.write {
                projection.firstName = "Nope"
                throw Abort()
            }
        }
        #expect(ann.firstName == "Anna")
        // Setting through a nil link fails the transaction with a typed error; nothing of it is applied.
        let cyProjection = SeedPersonProjection(projecting: cy)
        #expect(cy.address == nil)
        #expect(throws: Realm.Error.self) {
            try realm.write {
                cyProjection.firstName = "Cyd"
                cyProjection.homeCity = "Nowhere"
            }
        }
        #expect(cy.firstName == "Cy" && cy.address == nil && !realm.isInWriteTransaction)
    }

    @Test func projectionsAreQueryableAndSortable() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        _ = try ProjectionSeed.people(realm)
        let all = realm.objects(SeedPersonProjection.self)
        #expect(all.count == 3)
        #expect(all.map(\.firstName) == ["Bo", "Cy", "Ann"])
        // Projected names stand for the root paths they project; root key paths work too.
        #expect(all.filter("homeCity == 'Lisbon'").map(\.firstName) == ["Ann"])
        #expect(all.filter("homeCity BEGINSWITH[c] $0", "p").map(\.firstName) == ["Bo"])
        #expect(all.filter("homeCity == nil").map(\.firstName) == ["Cy"])
        #expect(all.filter("address.country == 'PT' AND lastName BEGINSWITH 'B'").map(\.firstName) == ["Bo"])
        #expect(all.filter("ANY firstFriendsName == 'Cy'").map(\.firstName) == ["Ann"])
        #expect(all.where { $0.homeCity == "Porto" }.map(\.firstName) == ["Bo"])
        #expect(all.where { $0.firstName.starts(with: "C") || $0.homeCity == "Lisbon" }.count == 2)
        #expect(all.sorted(byKeyPath: "firstName").map(\.firstName) == ["Ann", "Bo", "Cy"])
        #expect(all.sorted(byKeyPath: "homeCity", ascending: false).map(\.firstName) == ["Bo", "Ann", "Cy"])
        #expect(
            all.sorted(by: \SeedPersonProjection.firstName, ascending: false).map(\.firstName) == ["Cy", "Bo", "Ann"])
        #expect(all.sorted(byKeyPath: "lastName").first?.firstName == "Ann")
        #expect(all.filter("homeCity != nil").sorted(byKeyPath: "homeCity").last?.homeCity == "Porto")
        #expect(throws: Realm.Error.self) { try all.checkedFilter("hometown == 'Lisbon'") }
        // Frozen results of projections.
        let frozen = all.freeze()
        try realm.write { realm.delete(realm.objects(ProjectionSeed.Person.self).filter("firstName == 'Bo'")) }
        #expect(frozen.count == 3 && all.count == 2)
        #expect(frozen.first?.isFrozen == true)
    }

    @Test func changesToExcludedPropertiesDoNotNotify() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        let (ann, bo, _) = try ProjectionSeed.people(realm)
        let projection = SeedPersonProjection(projecting: ann)
        var received: [ObjectChange<SeedPersonProjection>] = []
        let token = projection.observe { received.append($0) }
        defer { token.invalidate() }
        try realm.write { ann.lastName = "Other" }
        try realm.write { bo.lastName = "Other" }
        try realm.write { ann.address?.country = "ES" }
        #expect(received.isEmpty)
        try realm.write { ann.address?.city = "Madrid" }
        guard case .change(let changed, let properties)? = received.last else {
            Issue.record("expected a change, got \(received)")
            return
        }
        #expect(changed === projection)
        #expect(properties.map(\.name) == ["homeCity"])
        #expect(properties[0].oldValue as? String == "Lisbon" && properties[0].newValue as? String == "Madrid")
        // A friend's projected name changes the collection; two properties at once arrive in declared order.
        try realm.write {
            bo.firstName = "Bob"
            ann.firstName = "Ana"
        }
        guard case .change(_, let both)? = received.last, received.count == 2 else {
            Issue.record("expected a second change, got \(received)")
            return
        }
        #expect(both.map(\.name) == ["firstName", "firstFriendsName"])
        #expect(both[1].oldValue as? [String] == ["Bo", "Cy"] && both[1].newValue as? [String] == ["Bob", "Cy"])
        // Key paths by projected name and by Swift key path.
        var cities: [[String]] = []
        let cityToken = projection.observe(keyPaths: [\SeedPersonProjection.homeCity]) { change in
            if case .change(_, let properties) = change { cities.append(properties.map(\.name)) }
        }
        defer { cityToken.invalidate() }
        try realm.write { ann.firstName = "Anne" }
        try realm.write { ann.address = nil }
        #expect(cities == [["homeCity"]])
        #expect(received.count == 4)
        try realm.write { realm.delete(ann) }
        guard case .deleted? = received.last else {
            Issue.record("expected .deleted")
            return
        }
        #expect(projection.rootObject == nil && projection.isInvalidated)
    }

    @Test func collectionsOfProjectionsReportOnlyProjectedModifications() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        let (ann, bo, _) = try ProjectionSeed.people(realm)
        var updates: [(deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = realm.objects(SeedPersonProjection.self).observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                updates.append((deletions, insertions, modifications))
            }
        }
        defer { token.invalidate() }
        try realm.write { bo.lastName = "Other" }
        #expect(updates.isEmpty)
        try realm.write { bo.address?.city = "Braga" }
        #expect(updates.last?.modifications == [0])
        try realm.write { bo.firstName = "Bob" }  // Ann's firstFriendsName changes too
        #expect(updates.last?.modifications == [0, 2])
        try realm.write { realm.add(ProjectionSeed.Person(value: ["firstName": "Dee"])) }
        #expect(updates.last?.insertions == [3])
        // Key paths by projected name limit modifications further.
        var cityUpdates: [[Int]] = []
        let cityToken = realm.objects(SeedPersonProjection.self).observe(keyPaths: ["homeCity"]) { change in
            if case .update(_, _, _, let modifications) = change { cityUpdates.append(modifications) }
        }
        defer { cityToken.invalidate() }
        var keyPathUpdates: [[Int]] = []
        let projections = realm.objects(SeedPersonProjection.self)
        let keyPathToken = projections.observe(keyPaths: [\SeedPersonProjection.homeCity]) { change in
            if case .update(_, _, _, let modifications) = change { keyPathUpdates.append(modifications) }
        }
        defer { keyPathToken.invalidate() }
        try realm.write { ann.firstName = "Ana" }
        try realm.write { ann.address?.city = "Évora" }
        #expect(cityUpdates == [[2]])
        #expect(keyPathUpdates == [[2]])
    }

    @Test func projectedCollectionsAreLiveAndObservable() throws {
        let realm = try Realm(configuration: ProjectionSeed.configuration())
        let (ann, bo, cy) = try ProjectionSeed.people(realm)
        let names = SeedPersonProjection(projecting: ann).firstFriendsName
        var updates: [(deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = names.observe { change in
            if case .update(let collection, let deletions, let insertions, let modifications) = change {
                #expect(collection === names)
                updates.append((deletions, insertions, modifications))
            }
        }
        defer { token.invalidate() }
        try realm.write { bo.lastName = "Other" }
        #expect(updates.isEmpty)
        try realm.write { cy.firstName = "Cyd" }
        #expect(updates.last?.modifications == [1])
        try realm.write { ann.friends.append(ann) }
        #expect(updates.last?.insertions == [2])
        #expect(Array(names) == ["Bo", "Cyd", "Ann"])
        try realm.write { ann.friends.remove(at: 0) }
        #expect(updates.last?.deletions == [0])
        #expect(names.count == 2 && names.first == "Cyd")
        let frozen = names.freeze()
        try realm.write { ann.friends.removeAll() }
        #expect(names.isEmpty && Array(frozen) == ["Cyd", "Ann"] && frozen.isFrozen)
        #expect(frozen.thaw()?.isEmpty == true)
    }

    @Test func frozenProjectionsAreReadFromOtherTasks() async throws {
        let configuration = Realm.Configuration(
            fileURL: FileManager.default.temporaryDirectory.appendingPathComponent("projection-\(UUID()).strata"),
            objectTypes: [ProjectionSeed.Person.self, ProjectionSeed.Address.self])
        defer { try? FileManager.default.removeItem(at: configuration.fileURL!) }
        let realm = try Realm(configuration: configuration)
        let (ann, _, _) = try ProjectionSeed.people(realm)
        let live = SeedPersonProjection(projecting: ann)
        let frozen = live.freeze()
        #expect(frozen.isFrozen && !live.isFrozen)
        try realm.write { ann.firstName = "Later" }
        #expect(frozen.firstName == "Ann" && live.firstName == "Later")
        let shared = Frozen(live)
        try realm.write { ann.address?.city = "Sintra" }
        // Made before the first suspension: this Realm is confined to the thread the test started on.
        let reference = ThreadSafeReference(to: live)
        let seen = await withTaskGroup(of: String.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let projection = shared.value
                    return "\(projection.firstName) \(projection.homeCity ?? "-") \(Array(projection.firstFriendsName))"
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seen == Array(repeating: "Later Lisbon [\"Bo\", \"Cy\"]", count: 4))
        #expect(frozen.thaw()?.homeCity == "Sintra")
        // A reference resolves on an actor as a live projection.
        let reader = ProjectionReader()
        #expect(try await reader.read(reference, configuration: configuration) == "Later Sintra")
    }

    @Test func projectionChangesArriveInForAwaitLoopsOnAnActor() async throws {
        let configuration = ProjectionSeed.configuration()
        let watcher = ProjectionWatcher()
        let seen = try await watcher.run(configuration: configuration)
        #expect(seen == ["homeCity: Lisbon -> Porto", "firstName: Ann -> Ana", "deleted"])
    }
}

actor ProjectionReader {
    func read(_ reference: ThreadSafeReference<SeedPersonProjection>, configuration: Realm.Configuration) async throws
        -> String
    {
        let realm = try await Realm(configuration: configuration, actor: self)
        let projection = try #require(realm.resolve(reference))
        return "\(projection.firstName) \(projection.homeCity ?? "-")"
    }
}

actor ProjectionWatcher {
    func run(configuration: Realm.Configuration) async throws -> [String] {
        let realm = try await Realm(configuration: configuration, actor: self)
        let ann = try await realm.asyncWrite {
            realm.create(ProjectionSeed.Person.self, value: ["firstName": "Ann", "address": ["city": "Lisbon"]])
        }
        let projection = SeedPersonProjection(projecting: ann)
        var changes = projection.changes.makeAsyncIterator()
        try await realm.asyncWrite { ann.lastName = "Excluded" }
        try await realm.asyncWrite { ann.address?.city = "Porto" }
        var seen: [String] = []
        if case .change(_, let properties)? = await changes.next(isolation: self) {
            seen += properties.map { "\($0.name): \($0.oldValue ?? "nil") -> \($0.newValue ?? "nil")" }
        }
        try await realm.asyncWrite { ann.firstName = "Ana" }
        if case .change(_, let properties)? = await changes.next(isolation: self) {
            seen += properties.map { "\($0.name): \($0.oldValue ?? "nil") -> \($0.newValue ?? "nil")" }
        }
        try await realm.asyncWrite { realm.delete(ann) }
        if case .deleted? = await changes.next(isolation: self) { seen.append("deleted") }
        if await changes.next(isolation: self) != nil { seen.append("more after deletion") }
        return seen
    }
}
