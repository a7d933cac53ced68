import Foundation
import StrataStorage
import Testing

@testable import Strata

// MARK: Models: each version of a class is its own Swift type with the same persisted class name.

final class MemberV1: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var tags: List<String>
    @Persisted var nickname: String?
    override class func className() -> String { "Member" }
}

final class MemberV2: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var fullName = ""
    @Persisted var yearsOld = 0
    @Persisted var labels: List<String>
    @Persisted var email: String?
    @Persisted var nickname = ""
    override class func className() -> String { "Member" }
}

final class GaugeV1: Object {
    @Persisted var reading = 0
    @Persisted var unit: String?
    @Persisted var note = ""
    @Persisted(indexed: true) var station = ""
    override class func className() -> String { "Gauge" }
}

final class GaugeV2: Object {
    @Persisted var reading = ""
    @Persisted var unit = ""
    @Persisted var note: String?
    @Persisted var station = ""
    @Persisted(indexed: true) var serial = 0
    override class func className() -> String { "Gauge" }
}

final class ParcelV1: Object {
    @Persisted var code = ""
    @Persisted var weight = 0
    override class func className() -> String { "Parcel" }
}

final class ParcelV2: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted var weight = 0
    override class func className() -> String { "Parcel" }
}

final class ParcelV3: Object {
    @Persisted var code = ""
    @Persisted(primaryKey: true) var weight = 0
    override class func className() -> String { "Parcel" }
}

final class KeeperV1: Object {
    @Persisted var name = ""
    @Persisted var cage: CageV1?
    @Persisted var cages: List<CageV1>
    override class func className() -> String { "Keeper" }
}

final class CageV1: Object {
    @Persisted var label = ""
    override class func className() -> String { "Cage" }
}

final class KeeperV2: Object {
    @Persisted var name = ""
    @Persisted var cage: CageV2?
    @Persisted var cages: List<CageV2>
    override class func className() -> String { "Keeper" }
}

final class CageV2: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var size = 0
    override class func className() -> String { "Cage" }
}

final class ShelterV2: Object {
    @Persisted var name = ""
    @Persisted var cage: CageV1?
    @Persisted var size = 0
    @Persisted(originProperty: "shelter") var residents: LinkingObjects<KeeperV3>
    override class func className() -> String { "Shelter" }
}

final class KeeperV3: Object {
    @Persisted var name = ""
    @Persisted var shelter: ShelterV2?
    override class func className() -> String { "Keeper" }
}

final class KeeperV4: Object {
    @Persisted var name = ""
    @Persisted var pen: CageV1?
    @Persisted var cages: List<CageV1>
    override class func className() -> String { "Keeper" }
}

final class Leftover: Object {
    @Persisted var value = 0
}

// MARK: Tests

@Suite("Migrations")
struct MigrationTests {
    private func configuration(
        _ scratch: Scratch, _ types: [ObjectBase.Type], version: UInt64, block: MigrationBlock? = nil
    ) -> Realm.Configuration {
        var configuration = scratch.configuration(types)
        configuration.schemaVersion = version
        configuration.migrationBlock = block
        return configuration
    }

    private func verify(_ scratch: Scratch) throws {
        let store = try Store.open(path: scratch.url.appendingPathComponent("test.strata").path)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")
    }

    @Test func propertiesAddedRemovedRenamedAndFilledByTheBlock() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [MemberV1.self], version: 0))
            try realm.write {
                realm.create(
                    MemberV1.self,
                    value: ["id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36, "tags": ["math", "poet"]])
                realm.create(
                    MemberV1.self,
                    value: ["id": 2, "firstName": "Alan", "lastName": "Turing", "age": 41, "nickname": "Prof"])
            }
        }
        let seen = Locked<[UInt64]>([])
        let realm = try Realm(
            configuration: configuration(scratch, [MemberV2.self], version: 1) { migration, oldVersion in
                seen.withLock { $0.append(oldVersion) }
                migration.renameProperty(onType: "Member", from: "age", to: "yearsOld")
                migration.renameProperty(onType: "Member", from: "tags", to: "labels")
                migration.enumerateObjects(ofType: "Member") { old, new in
                    let first = old?["firstName"] as? String ?? ""
                    let last = old?["lastName"] as? String ?? ""
                    new?["fullName"] = "\(first) \(last)"
                }
            })
        #expect(seen.withLock { $0 } == [0])
        let ada = try #require(realm.object(ofType: MemberV2.self, forPrimaryKey: 1))
        #expect(ada.fullName == "Ada Lovelace")
        #expect(ada.yearsOld == 36)
        #expect(Array(ada.labels) == ["math", "poet"])
        #expect(ada.email == nil)
        #expect(ada.nickname == "")
        let alan = try #require(realm.object(ofType: MemberV2.self, forPrimaryKey: 2))
        #expect(alan.fullName == "Alan Turing" && alan.yearsOld == 41 && alan.nickname == "Prof")
        #expect(alan.labels.isEmpty)
        let member = try #require(realm.schema[className: "Member"])
        #expect(member.properties.map(\.name) == ["id", "fullName", "yearsOld", "labels", "email", "nickname"])
        // The new layout is usable: writes, list edits and primary-key lookups.
        try realm.write {
            ada.labels.append("engine")
            realm.create(MemberV2.self, value: ["id": 3, "fullName": "Grace Hopper"])
        }
        #expect(Array(ada.labels) == ["math", "poet", "engine"])
        #expect(realm.objects(MemberV2.self).count == 3)
        // Opening again at the same version migrates nothing.
        let again = try Realm(
            configuration: configuration(scratch, [MemberV2.self], version: 1) { _, _ in
                Issue.record("the migration ran twice")
            })
        #expect(again.object(ofType: MemberV2.self, forPrimaryKey: 3)?.fullName == "Grace Hopper")
        try verify(scratch)
    }

    @Test func typeChangesOptionalityAndIndexes() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [GaugeV1.self], version: 1))
            try realm.write {
                realm.create(GaugeV1.self, value: ["reading": 7, "unit": "bar", "note": "n1", "station": "north"])
                realm.create(GaugeV1.self, value: ["reading": 9, "note": "n2", "station": "south"])
            }
        }
        let realm = try Realm(
            configuration: configuration(scratch, [GaugeV2.self], version: 2) { migration, _ in
                var serial = 100
                migration.enumerateObjects(ofType: "Gauge") { old, new in
                    // The type changed: the conversion left "", the block converts the old value.
                    #expect(new?["reading"] as? String == "")
                    new?["reading"] = "\(old?["reading"] as? Int ?? -1)"
                    new?["serial"] = serial
                    serial += 1
                }
            })
        let gauges = realm.objects(GaugeV2.self).sorted { $0.serial < $1.serial }
        #expect(gauges.map(\.reading) == ["7", "9"])
        // Made required: nil became "". Made optional: values kept.
        #expect(gauges.map(\.unit) == ["bar", ""])
        #expect(gauges.map(\.note) == ["n1", "n2"])
        #expect(gauges.map(\.station) == ["north", "south"])
        #expect(gauges.map(\.serial) == [100, 101])
        // The new index exists and the removed one is gone.
        let store = try Store.open(path: scratch.url.appendingPathComponent("test.strata").path)
        let names = try store.read().treeNames()
        #expect(names.contains("i:Gauge.serial"))
        #expect(!names.contains("i:Gauge.station"))
        #expect(try store.read().tree(named: "i:Gauge.serial")?.count == 2)
        try verify(scratch)
    }

    @Test func primaryKeysAddedAndChangedAreCheckedWhenTheMigrationEnds() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [ParcelV1.self], version: 0))
            try realm.write {
                realm.create(ParcelV1.self, value: ["code": "A", "weight": 1])
                realm.create(ParcelV1.self, value: ["code": "A", "weight": 2])
                realm.create(ParcelV1.self, value: ["code": "B", "weight": 3])
            }
        }
        // Two parcels share code "A": the migration fails whole and the file keeps its old schema and data.
        #expect(throws: Realm.Error.primaryKeyExists(type: "Parcel", value: "A")) {
            _ = try Realm(configuration: configuration(scratch, [ParcelV2.self], version: 1))
        }
        do {
            let old = try Realm(configuration: configuration(scratch, [ParcelV1.self], version: 0))
            #expect(old.objects(ParcelV1.self).map(\.code).sorted() == ["A", "A", "B"])
        }
        // A block that makes the codes unique succeeds; keys may collide while it runs.
        do {
            let realm = try Realm(
                configuration: configuration(scratch, [ParcelV2.self], version: 1) { migration, _ in
                    migration.enumerateObjects(ofType: "Parcel") { old, new in
                        let weight = old?["weight"] as? Int ?? 0
                        new?["code"] = "B"
                        new?["code"] = "P\(weight)"
                    }
                })
            #expect(realm.object(ofType: ParcelV2.self, forPrimaryKey: "P2")?.weight == 2)
            #expect(realm.object(ofType: ParcelV2.self, forPrimaryKey: "A") == nil)
        }
        // The primary key moves to another property.
        let moved = try Realm(configuration: configuration(scratch, [ParcelV3.self], version: 2))
        #expect(moved.object(ofType: ParcelV3.self, forPrimaryKey: 3)?.code == "P3")
        #expect(throws: Realm.Error.primaryKeyExists(type: "Parcel", value: "3")) {
            try moved.write { moved.create(ParcelV3.self, value: ["code": "again", "weight": 3]) }
        }
        try verify(scratch)
    }

    @Test func classesAddedKeptAndDeleted() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [MemberV1.self, Leftover.self], version: 0))
            try realm.write {
                realm.create(MemberV1.self, value: ["id": 1, "firstName": "Kept"])
                realm.create(Leftover.self, value: ["value": 5])
            }
        }
        // A class the models no longer list stays in the file until the migration deletes it.
        do {
            let realm = try Realm(
                configuration: configuration(scratch, [MemberV1.self, GaugeV1.self], version: 1) { migration, _ in
                    let created = migration.create("Gauge", value: ["reading": 1, "station": "new"])
                    #expect(created["station"] as? String == "new")
                    migration.enumerateObjects(ofType: "Gauge") { old, new in
                        #expect(old == nil)
                        #expect(new?["reading"] as? Int == 1)
                    }
                })
            #expect(realm.objects(GaugeV1.self).map(\.station) == ["new"])
            #expect(realm.dynamicObjects("Leftover").map { $0["value"] as? Int } == [5])
        }
        let realm = try Realm(
            configuration: configuration(scratch, [MemberV1.self, GaugeV1.self], version: 2) { migration, _ in
                migration.enumerateObjects(ofType: "Leftover") { old, new in
                    #expect(old?["value"] as? Int == 5)
                    #expect(new?["value"] as? Int == 5)
                }
                #expect(migration.deleteData(forType: "Leftover"))
                #expect(!migration.deleteData(forType: "NoSuchClass"))
            })
        #expect(realm.schema[className: "Leftover"] == nil)
        #expect(realm.schema[className: "Member"] != nil)
        let store = try Store.open(path: scratch.url.appendingPathComponent("test.strata").path)
        #expect(try !store.read().treeNames().contains { $0.contains("Leftover") })
        try verify(scratch)
    }

    @Test func deletingAndCreatingDuringEnumeration() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [ParcelV2.self], version: 0))
            try realm.write {
                for index in 0..<10 { realm.create(ParcelV2.self, value: ["code": "c\(index)", "weight": index]) }
            }
        }
        let realm = try Realm(
            configuration: configuration(scratch, [ParcelV2.self], version: 1) { migration, _ in
                migration.enumerateObjects(ofType: "Parcel") { _, new in
                    if let new, (new["weight"] as? Int ?? 0) % 2 == 1 { migration.delete(new) }
                }
                var afterDeletion = 0
                migration.enumerateObjects(ofType: "Parcel") { old, new in
                    #expect(old != nil)
                    if new != nil { afterDeletion += 1 }
                }
                #expect(afterDeletion == 5)
                migration.create("Parcel", value: ["code": "fresh", "weight": 99])
            })
        #expect(realm.objects(ParcelV2.self).map(\.weight).sorted() == [0, 2, 4, 6, 8, 99])
        #expect(realm.object(ofType: ParcelV2.self, forPrimaryKey: "c1") == nil)
        #expect(realm.object(ofType: ParcelV2.self, forPrimaryKey: "fresh")?.weight == 99)
        try verify(scratch)
    }

    @Test func topLevelClassBecomesEmbedded() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [KeeperV1.self], version: 0))
            try realm.write {
                let a = realm.create(KeeperV1.self, value: ["name": "a"])
                a.cage = realm.create(CageV1.self, value: ["label": "one"])
                a.cages.append(realm.create(CageV1.self, value: ["label": "two"]))
                realm.create(CageV1.self, value: ["label": "orphan"])
            }
        }
        let realm = try Realm(configuration: configuration(scratch, [KeeperV2.self], version: 1))
        let keeper = try #require(realm.objects(KeeperV2.self).first)
        #expect(keeper.cage?.label == "one")
        #expect(keeper.cages.map(\.label) == ["two"])
        // The cage nobody linked to was deleted with the conversion.
        let store = try Store.open(path: scratch.url.appendingPathComponent("test.strata").path)
        #expect(try store.read().tree(named: "o:Cage")?.count == 2)
        try verify(scratch)
    }

    @Test func anEmbeddedObjectWithTwoParentsFailsTheMigration() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [KeeperV1.self], version: 0))
            try realm.write {
                let shared = realm.create(CageV1.self, value: ["label": "shared"])
                realm.create(KeeperV1.self, value: ["name": "a", "cage": shared])
                realm.create(KeeperV1.self, value: ["name": "b", "cage": shared])
            }
        }
        #expect(throws: Realm.Error.self) {
            _ = try Realm(configuration: configuration(scratch, [KeeperV2.self], version: 1))
        }
        let old = try Realm(configuration: configuration(scratch, [KeeperV1.self], version: 0))
        #expect(old.objects(KeeperV1.self).compactMap { $0.cage?.label } == ["shared", "shared"])
    }

    @Test func linksChangingTargetAreRecountedForBacklinks() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [KeeperV1.self], version: 0))
            try realm.write {
                let cage = realm.create(CageV1.self, value: ["label": "c"])
                realm.create(KeeperV1.self, value: ["name": "k1", "cage": cage])
            }
        }
        let realm = try Realm(
            configuration: configuration(scratch, [KeeperV3.self], version: 1) { migration, _ in
                migration.enumerateObjects(ofType: "Keeper") { old, new in
                    guard let cage = old?["cage"] as? DynamicObject else { return }
                    let shelter = migration.create("Shelter", value: ["name": "s", "size": 3])
                    _ = cage
                    new?["shelter"] = shelter
                }
            })
        let keeper = try #require(realm.objects(KeeperV3.self).first)
        #expect(keeper.shelter?.name == "s")
        let shelter = try #require(keeper.shelter)
        #expect(shelter.residents.map(\.name) == ["k1"])
        try realm.write { shelter.cage = realm.objects(CageV1.self).first }
        #expect(realm.objects(CageV1.self).count == 1)
        try verify(scratch)
    }

    @Test func aRenamedLinkIsFollowedByDeletionsLaterInTheBlock() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [KeeperV1.self], version: 0))
            try realm.write {
                let gone = realm.create(CageV1.self, value: ["label": "gone"])
                let kept = realm.create(CageV1.self, value: ["label": "kept"])
                realm.create(KeeperV1.self, value: ["name": "a", "cage": gone, "cages": [gone, kept]])
                realm.create(KeeperV1.self, value: ["name": "b", "cage": kept])
            }
        }
        let realm = try Realm(
            configuration: configuration(scratch, [KeeperV4.self], version: 1) { migration, _ in
                migration.renameProperty(onType: "Keeper", from: "cage", to: "pen")
                migration.enumerateObjects(ofType: "Cage") { _, new in
                    if let new, new["label"] as? String == "gone" { migration.delete(new) }
                }
            })
        let keepers = realm.objects(KeeperV4.self).sorted(byKeyPath: "name")
        #expect(keepers.map { $0.pen?.label } == [nil, "kept"])
        #expect(keepers.first.map { $0.cages.map(\.label) } == ["kept"])
        try verify(scratch)
    }

    @Test func failuresInTheBlockLeaveTheFileAsItWas() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [MemberV1.self], version: 0))
            try realm.write { realm.create(MemberV1.self, value: ["id": 1, "firstName": "Ada", "age": 36]) }
        }
        // Writing an old object, a wrong type, an unknown rename: each fails the migration with a typed error.
        let blocks: [MigrationBlock] = [
            { migration, _ in migration.enumerateObjects(ofType: "Member") { old, _ in old?["age"] = 1 } },
            { migration, _ in migration.enumerateObjects(ofType: "Member") { _, new in new?["yearsOld"] = "x" } },
            { migration, _ in migration.renameProperty(onType: "Member", from: "nope", to: "yearsOld") },
            { migration, _ in migration.renameProperty(onType: "Member", from: "firstName", to: "yearsOld") },
            { migration, _ in migration.enumerateObjects(ofType: "Nothing") { _, _ in } },
        ]
        for block in blocks {
            #expect(throws: Realm.Error.self) {
                _ = try Realm(configuration: configuration(scratch, [MemberV2.self], version: 1, block: block))
            }
        }
        let old = try Realm(configuration: configuration(scratch, [MemberV1.self], version: 0))
        #expect(old.object(ofType: MemberV1.self, forPrimaryKey: 1)?.age == 36)
        try verify(scratch)
    }

    @Test func versionsLowerThanTheFileAndReadOnlyFiles() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [MemberV1.self], version: 4))
            try realm.write { realm.create(MemberV1.self, value: ["id": 1]) }
        }
        #expect(throws: Realm.Error.invalidSchemaVersion(fileVersion: 4, configuredVersion: 3)) {
            _ = try Realm(configuration: configuration(scratch, [MemberV1.self], version: 3))
        }
        var readOnly = configuration(scratch, [MemberV2.self], version: 5)
        readOnly.readOnly = true
        #expect(throws: Realm.Error.migrationRequired(fileVersion: 4, configuredVersion: 5)) {
            _ = try Realm(configuration: readOnly)
        }
    }

    @Test func deleteRealmIfMigrationNeededResetsTheFileInPlace() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [MemberV1.self], version: 3))
            try realm.write { realm.create(MemberV1.self, value: ["id": 1, "firstName": "gone"]) }
        }
        // The same models: nothing to reset.
        var same = configuration(scratch, [MemberV1.self], version: 3)
        same.deleteRealmIfMigrationNeeded = true
        #expect(try Realm(configuration: same).objects(MemberV1.self).count == 1)
        var changed = configuration(scratch, [MemberV2.self], version: 0)
        changed.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: changed)
        #expect(realm.objects(MemberV2.self).isEmpty)
        #expect(realm.schema.objectSchema.map(\.className) == ["Member"])
        try realm.write { realm.create(MemberV2.self, value: ["id": 1, "fullName": "fresh"]) }
        #expect(
            try Realm(configuration: configuration(scratch, [MemberV2.self], version: 0)).objects(MemberV2.self).count
                == 1)
        try verify(scratch)
    }

    @Test func versionBumpWithoutChangesRunsTheBlockOnly() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: configuration(scratch, [ParcelV2.self], version: 0))
            try realm.write { realm.create(ParcelV2.self, value: ["code": "x", "weight": 1]) }
        }
        let calls = Locked(0)
        let realm = try Realm(
            configuration: configuration(scratch, [ParcelV2.self], version: 7) { migration, _ in
                calls.withLock { $0 += 1 }
                #expect(migration.oldSchema == migration.newSchema)
            })
        #expect(calls.withLock { $0 } == 1)
        #expect(realm.object(ofType: ParcelV2.self, forPrimaryKey: "x")?.weight == 1)
    }
}

final class NoteV1: Object {
    @Persisted var text = ""
    override class func className() -> String { "Note" }
}

final class NoteV2: Object {
    @Persisted(indexed: .fullText) var text = ""
    override class func className() -> String { "Note" }
}

@Suite("Migrations: indexes")
struct IndexMigrationTests {
    @Test func aFullTextIndexAddedByAMigrationIndexesEveryObject() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: scratch.configuration([NoteV1.self]))
            try realm.write {
                for text in ["red apple", "green apple", "red car"] { realm.create(NoteV1.self, value: ["text": text]) }
            }
        }
        var configuration = scratch.configuration([NoteV2.self])
        configuration.schemaVersion = 1
        let realm = try Realm(configuration: configuration)
        let found = try realm.objects(NoteV2.self).checkedFilter("text TEXT 'red'")
        #expect(found.map(\.text).sorted() == ["red apple", "red car"])
        #expect(found.query?.indexCandidateCount == 2)
        #expect(realm.schema[className: "Note"]?.properties.first?.isFullTextIndexed == true)
    }
}
