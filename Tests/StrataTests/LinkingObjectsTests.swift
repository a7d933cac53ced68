import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import Strata

final class Hiker: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var favorite: Hut?
    @Persisted var visits: List<Hut>
    @Persisted var memberships: MutableSet<Hut>
    @Persisted var byName: Map<String, Hut?>
}

final class Hut: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(originProperty: "favorite") var fans: LinkingObjects<Hiker>
    @Persisted(originProperty: "visits") var visitors: LinkingObjects<Hiker>
    @Persisted(originProperty: "memberships") var members: LinkingObjects<Hiker>
    @Persisted(originProperty: "byName") var named: LinkingObjects<Hiker>
}

final class BadBacklink: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "nothing") var origins: LinkingObjects<Hiker>
}

/// A link target whose referrers' class is stored only later, by another Realm of the file.
final class LaterLinkTarget: Object {
    @Persisted(primaryKey: true) var id = 0
}

final class LaterLinkOrigin: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var target: LaterLinkTarget?
    @Persisted var targets: List<LaterLinkTarget>
}

/// The forward links of one hiker, as plain Swift values (hut ids).
private struct HikerModel: Equatable {
    var favorite: Int?
    var visits: [Int] = []
    var memberships: Set<Int> = []
    var byName: [String: Int?] = [:]
}

@Suite("LinkingObjects")
struct LinkingObjectsTests {
    /// Which stored properties can link to a class is worked out once per set of stored class definitions: a
    /// class another Realm stores later must still lose its links to the objects this one deletes.
    @Test func linksFromAClassStoredLaterAreDroppedOnDelete() async throws {
        let directory = TemporaryDirectory()
        let url = URL(fileURLWithPath: directory.file("later.strata"))
        let targets = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [LaterLinkTarget.self]))
        try targets.write {
            for id in 1...3 { targets.add(LaterLinkTarget(value: ["id": id])) }
        }
        try targets.write { targets.delete(targets.object(ofType: LaterLinkTarget.self, forPrimaryKey: 1)!) }
        #expect(targets.tables.linkProperties(to: "LaterLinkTarget").isEmpty)

        // Another task stores the origin class and links to two targets (one Realm per isolation and file).
        try await Task.detached {
            let origins = try Realm(
                configuration: Realm.Configuration(
                    fileURL: url, objectTypes: [LaterLinkTarget.self, LaterLinkOrigin.self]))
            try origins.write {
                let two = origins.object(ofType: LaterLinkTarget.self, forPrimaryKey: 2)!
                let three = origins.object(ofType: LaterLinkTarget.self, forPrimaryKey: 3)!
                origins.add(LaterLinkOrigin(value: ["id": 1, "target": two, "targets": [two, three, two]]))
            }
        }.value
        targets.refresh()
        #expect(
            targets.tables.linkProperties(to: "LaterLinkTarget").map(\.property.name).sorted() == ["target", "targets"])
        try targets.write { targets.delete(targets.object(ofType: LaterLinkTarget.self, forPrimaryKey: 2)!) }
        let links = try await Task.detached {
            let origins = try Realm(
                configuration: Realm.Configuration(
                    fileURL: url, objectTypes: [LaterLinkTarget.self, LaterLinkOrigin.self]))
            let origin = try #require(origins.object(ofType: LaterLinkOrigin.self, forPrimaryKey: 1))
            return (origin.target?.id, Array(origin.targets.map(\.id)))
        }.value
        #expect(links.0 == nil)
        #expect(links.1 == [3])
    }

    /// The hiker ids each hut's four backlink properties should list, sorted, derived from `hikers`.
    private static func expectedBacklinks(of hut: Int, in hikers: [Int: HikerModel]) -> [[Int]] {
        var fans: [Int] = []
        var visitors: [Int] = []
        var members: [Int] = []
        var named: [Int] = []
        for (id, hiker) in hikers {
            if hiker.favorite == hut { fans.append(id) }
            visitors += Array(repeating: id, count: hiker.visits.filter { $0 == hut }.count)
            if hiker.memberships.contains(hut) { members.append(id) }
            named += Array(repeating: id, count: hiker.byName.values.filter { $0 == hut }.count)
        }
        return [fans.sorted(), visitors.sorted(), members.sorted(), named.sorted()]
    }

    private static func actualBacklinks(of hut: Hut) -> [[Int]] {
        [
            hut.fans.map(\.id).sorted(), hut.visitors.map(\.id).sorted(), hut.members.map(\.id).sorted(),
            hut.named.map(\.id).sorted(),
        ]
    }

    private static func forwardLinks(of hiker: Hiker) -> HikerModel {
        HikerModel(
            favorite: hiker.favorite?.id, visits: hiker.visits.map(\.id),
            memberships: Set(hiker.memberships.map(\.id)),
            byName: Dictionary(uniqueKeysWithValues: hiker.byName.map { ($0.key, $0.value?.id) }))
    }

    /// Checks every hut's backlinks (and their counts) and every hiker's forward links against the model.
    private static func check(_ realm: Realm, _ hikers: [Int: HikerModel], _ huts: Set<Int>, step: Int) {
        #expect(Set(realm.objects(Hut.self).map(\.id)) == huts, "step \(step)")
        for hut in realm.objects(Hut.self) {
            let expected = expectedBacklinks(of: hut.id, in: hikers)
            #expect(actualBacklinks(of: hut) == expected, "step \(step), hut \(hut.id)")
            #expect(
                [hut.fans.count, hut.visitors.count, hut.members.count, hut.named.count]
                    == expected.map(\.count), "step \(step), hut \(hut.id)")
        }
        #expect(Set(realm.objects(Hiker.self).map(\.id)) == Set(hikers.keys), "step \(step)")
        for hiker in realm.objects(Hiker.self) {
            #expect(forwardLinks(of: hiker) == hikers[hiker.id], "step \(step), hiker \(hiker.id)")
        }
    }

    /// Random link edits of every kind — to-one links, list inserts/replacements/removals, set and map changes,
    /// whole-collection assignment, upserts, deletions of origins and of targets — checked against a model
    /// after every step, after each commit and after reopening.
    @Test func backlinksFollowRandomLinkEdits() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Hiker.self, Hut.self])
        var generator = SeededGenerator(seed: 41)
        var hikers: [Int: HikerModel] = [:]
        var huts: Set<Int> = []
        var nextHut = 0
        var step = 0
        do {
            let realm = try Realm(configuration: configuration)
            for round in 0..<12 {
                try realm.write {
                    if round == 0 {
                        for id in 0..<6 {
                            realm.add(Hut(value: ["id": id]))
                            huts.insert(id)
                        }
                        nextHut = 6
                        for id in 0..<8 {
                            realm.add(Hiker(value: ["id": id]))
                            hikers[id] = HikerModel()
                        }
                    }
                    for _ in 0..<40 {
                        step += 1
                        Self.randomEdit(realm, &hikers, &huts, &nextHut, &generator)
                        if step % 5 == 0 { Self.check(realm, hikers, huts, step: step) }
                    }
                }
                Self.check(realm, hikers, huts, step: step)
            }
        }
        let reopened = try Realm(configuration: configuration)
        Self.check(reopened, hikers, huts, step: -1)
    }

    private static func randomEdit(
        _ realm: Realm, _ hikers: inout [Int: HikerModel], _ huts: inout Set<Int>, _ nextHut: inout Int,
        _ generator: inout SeededGenerator
    ) {
        func hut(_ id: Int) -> Hut { realm.object(ofType: Hut.self, forPrimaryKey: id)! }
        let hikerIDs = hikers.keys.sorted()
        guard let hikerID = hikerIDs.randomElement(using: &generator),
            let hiker = realm.object(ofType: Hiker.self, forPrimaryKey: hikerID),
            let target = huts.sorted().randomElement(using: &generator)
        else { return }
        var model = hikers[hikerID]!
        switch Int.random(in: 0..<16, using: &generator) {
        case 0:
            hiker.favorite = hut(target)
            model.favorite = target
        case 1:
            hiker.favorite = nil
            model.favorite = nil
        case 2, 3:
            let index = Int.random(in: 0...model.visits.count, using: &generator)
            hiker.visits.insert(hut(target), at: index)
            model.visits.insert(target, at: index)
        case 4 where !model.visits.isEmpty:
            let index = Int.random(in: 0..<model.visits.count, using: &generator)
            hiker.visits.remove(at: index)
            model.visits.remove(at: index)
        case 5 where !model.visits.isEmpty:
            let index = Int.random(in: 0..<model.visits.count, using: &generator)
            hiker.visits[index] = hut(target)
            model.visits[index] = target
        case 6:
            hiker.memberships.insert(hut(target))
            model.memberships.insert(target)
        case 7:
            hiker.memberships.remove(hut(target))
            model.memberships.remove(target)
        case 8:
            let key = "k\(Int.random(in: 0..<4, using: &generator))"
            hiker.byName[key] = hut(target)
            model.byName[key] = target
        case 9:
            let key = "k\(Int.random(in: 0..<4, using: &generator))"
            hiker.byName.removeObject(for: key)
            model.byName[key] = nil
        case 10:
            // Whole collections at once: assignment replaces, removeAll empties.
            let list = List<Hut>()
            list.append(objectsIn: [hut(target), hut(target)])
            hiker.visits = list
            model.visits = [target, target]
            hiker.memberships.removeAll()
            model.memberships = []
        case 11:
            // An upsert of the whole hiker replaces every link it holds.
            let replacement = Hiker(value: ["id": hikerID, "favorite": hut(target), "visits": [hut(target)]])
            realm.add(replacement, update: .all)
            model = HikerModel(favorite: target, visits: [target])
        case 12:
            realm.delete(hiker)
            hikers[hikerID] = nil
            return
        case 13 where hikers.count < 10:
            let id = (hikerIDs.max() ?? 0) + 1
            realm.add(Hiker(value: ["id": id, "favorite": hut(target), "memberships": [hut(target)]]))
            hikers[id] = HikerModel(favorite: target, memberships: [target])
        case 14:
            // Deleting a target: to-one links become nil, list and set elements go, map values become nil.
            realm.delete(hut(target))
            huts.remove(target)
            for id in hikers.keys {
                if hikers[id]!.favorite == target { hikers[id]!.favorite = nil }
                hikers[id]!.visits.removeAll { $0 == target }
                hikers[id]!.memberships.remove(target)
                for (key, value) in hikers[id]!.byName where value == target { hikers[id]!.byName[key] = .some(nil) }
            }
            return
        case 15:
            realm.add(Hut(value: ["id": nextHut]))
            huts.insert(nextHut)
            nextHut += 1
        default:
            hiker.visits.append(hut(target))
            model.visits.append(target)
        }
        hikers[hikerID] = model
    }

    /// The seeds' example: a person's clubs are the clubs listing the person as a member.
    @Test func seedsClubsAreTheInverseOfMembers() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "clubs-\(UUID())"))
        let ann = ClubPerson(value: ["name": "Ann"])
        let bob = ClubPerson(value: ["name": "Bob"])
        try realm.write {
            let hikers = DogClub(value: ["name": "Walkers", "members": [ann, bob]])
            let runners = DogClub(value: ["name": "Runners", "members": [ann]])
            realm.add([hikers, runners])
        }
        #expect(ann.clubs.map(\.name) == ["Walkers", "Runners"])
        #expect(bob.clubs.map(\.name) == ["Walkers"])
        #expect(ann.clubs.first?.members.count == 2)
        // Unmanaged objects have no linking objects.
        #expect(ClubPerson().clubs.isEmpty)
        try realm.write { realm.delete(realm.objects(DogClub.self).first { $0.name == "Walkers" }!) }
        #expect(ann.clubs.map(\.name) == ["Runners"])
        #expect(bob.clubs.isEmpty)
        // Linking objects are computed: they are not part of the stored row and cannot be set.
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.create(ClubPerson.self, value: ["name": "Cy", "clubs": [DogClub]()]) }
        }
        #expect(realm.objects(ClubPerson.self).count == 2)
        #expect(ClubPerson().objectSchema[propertyName: "clubs"]?.type == .linkingObjects)
    }

    @Test func anOriginPropertyThatDoesNotLinkBackIsRejected() throws {
        #expect(throws: Realm.Error.self) {
            _ = try Realm(
                configuration: Realm.Configuration(
                    inMemoryIdentifier: "bad-\(UUID())", objectTypes: [BadBacklink.self]))
        }
    }

    /// A file whose backlink trees are missing (written before they existed) gets them rebuilt on open.
    @Test func missingBacklinksAreRebuiltOnOpen() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Hiker.self, Hut.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                let hut = Hut(value: ["id": 1])
                realm.add(Hiker(value: ["id": 1, "favorite": hut, "visits": [hut, hut]]))
                realm.add(Hiker(value: ["id": 2, "byName": ["a": hut]]))
            }
        }
        do {
            let store = try Store.open(path: configuration.fileURL!.path)
            try store.write { transaction in
                for name in try transaction.treeNames() where name.hasPrefix("b:") {
                    _ = try transaction.dropTree(named: name)
                }
                let schema = try transaction.tree(named: "$schema")!
                _ = try transaction.delete(Array("backlinks".utf8), in: schema)
            }
        }
        let realm = try Realm(configuration: configuration)
        let hut = try #require(realm.object(ofType: Hut.self, forPrimaryKey: 1))
        #expect(hut.fans.map(\.id) == [1])
        #expect(hut.visitors.map(\.id) == [1, 1])
        #expect(hut.named.map(\.id) == [2])
        try realm.write { realm.delete(hut) }
        #expect(realm.objects(Hiker.self).map { $0.visits.count } == [0, 0])
        let map = try #require(realm.object(ofType: Hiker.self, forPrimaryKey: 2)?.byName)
        #expect(map.keys.contains("a") && map["a"]! == nil)
    }
}

final class ClubPerson: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>
}

final class DogClub: Object {
    @Persisted var name = ""
    @Persisted var members: List<ClubPerson>
}
