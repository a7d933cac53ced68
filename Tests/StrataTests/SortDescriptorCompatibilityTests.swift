import Foundation
import Strata
import Testing

/// `SortDescriptor` as in the SDK (`reversed()`, its description, string literals), and the module name
/// `Strata` as a qualifier in a file that also imports Foundation (whose `SortDescriptor` is another type).
@Suite("SortDescriptor compatibility")
struct SortDescriptorCompatibilityTests {
    @Test func reversedFlipsTheDirectionOnly() {
        let ascending = Strata.SortDescriptor(keyPath: "name")
        let descending = ascending.reversed()
        #expect(descending.keyPath == "name")
        #expect(!descending.ascending)
        #expect(descending.reversed() == ascending)
    }

    @Test func descriptionReadsAsInTheSDK() {
        #expect(
            Strata.SortDescriptor(keyPath: "name").description
                == "SortDescriptor(keyPath: name, direction: ascending)")
        #expect(
            "\(Strata.SortDescriptor(keyPath: "owner.age", ascending: false))"
                == "SortDescriptor(keyPath: owner.age, direction: descending)")
    }

    @Test func theModuleNameQualifiesItsTypes() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sort-descriptor-\(UUID())", objectTypes: [SortDescriptorItem.self]))
        try realm.write {
            for (name, age) in [("b", 2), ("a", 2), ("c", 1)] {
                realm.add(SortDescriptorItem(value: ["name": name, "age": age]))
            }
        }
        let descriptors: [Strata.SortDescriptor] = [
            Strata.SortDescriptor(keyPath: "age").reversed(), "name",
        ]
        let sorted = realm.objects(SortDescriptorItem.self).sorted(by: descriptors)
        #expect(sorted.map(\.name) == ["a", "b", "c"])
        let tags: Strata.List<String> = Strata.List()
        tags.append("x")
        #expect(Array(tags) == ["x"])
        #expect(StrataInfo.version.split(separator: ".").count == 3)
    }

    @Test func unqualifiedSortDescriptorIsStrataTypeBesideFoundation() {
        let descriptor = SortDescriptor(keyPath: "name", ascending: false)
        #expect(descriptor == Strata.SortDescriptor(keyPath: "name").reversed())
    }

    @Test func aReversedKeyPathDescriptorStillSorts() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sort-descriptor-kp-\(UUID())", objectTypes: [SortDescriptorItem.self]))
        try realm.write {
            for age in [3, 1, 2] { realm.add(SortDescriptorItem(value: ["name": "\(age)", "age": age])) }
        }
        let byAge = Strata.SortDescriptor(keyPath: \SortDescriptorItem.age)
        let sorted = realm.objects(SortDescriptorItem.self).sorted(by: [byAge.reversed()])
        #expect(sorted.map(\.age) == [3, 2, 1])
    }
}

final class SortDescriptorItem: Object {
    @Persisted var name: String
    @Persisted var age: Int
}
