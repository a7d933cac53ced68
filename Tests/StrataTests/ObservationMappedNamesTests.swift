import Foundation
import Strata
import Testing

/// A class whose Swift property names differ from the names persisted in the file.
final class MappedObservedPerson: Object {
    @Persisted var firstName = ""
    @Persisted var age = 0
    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
}

/// `ObjectChange.change`'s `PropertyChange.name` is the Swift property name, as the Realm SDK gives it, also for a
/// class that persists the property under another name with `propertiesMapping()`.
@Suite("Notification: property changes name Swift properties")
struct ObservationMappedNamesTests {
    private func person() throws -> (Realm, MappedObservedPerson) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "mapped-observation-\(UUID())", objectTypes: [MappedObservedPerson.self]))
        let person = try realm.write { realm.create(MappedObservedPerson.self, value: ["firstName": "Ann"]) }
        return (realm, person)
    }

    @Test func aMappedPropertyIsReportedByItsSwiftName() throws {
        let (realm, person) = try person()
        var changes: [[String]] = []
        var values: [(old: String?, new: String?)] = []
        let token = person.observe { change in
            guard case .change(_, let properties) = change else { return }
            changes.append(properties.map(\.name))
            for property in properties where property.name == "firstName" {
                values.append((property.oldValue as? String, property.newValue as? String))
            }
        }
        defer { token.invalidate() }
        try realm.write {
            person.firstName = "Bea"
            person.age = 3
        }
        #expect(changes == [["firstName", "age"]])
        #expect(values.map(\.old) == ["Ann"])
        #expect(values.map(\.new) == ["Bea"])
    }

    @Test func keyPathsByNameOrSwiftKeyPathFilterTheMappedProperty() throws {
        let (realm, person) = try person()
        var byName: [[String]] = []
        var byKeyPath: [[String]] = []
        let first = person.observe(keyPaths: ["firstName"]) { change in
            if case .change(_, let properties) = change { byName.append(properties.map(\.name)) }
        }
        let second = person.observe(keyPaths: [\MappedObservedPerson.firstName]) { change in
            if case .change(_, let properties) = change { byKeyPath.append(properties.map(\.name)) }
        }
        defer {
            first.invalidate()
            second.invalidate()
        }
        try realm.write { person.age = 4 }
        try realm.write { person.firstName = "Cy" }
        #expect(byName == [["firstName"]])
        #expect(byKeyPath == [["firstName"]])
    }
}
