import Foundation
import Strata
import Testing

// The limits table of Documentation/Models.md, checked.

enum ModelLimits {
    final class Blob: Object {
        @Persisted(primaryKey: true) var key = ""
        @Persisted var text = ""
        @Persisted var bytes = Data()
        @Persisted var words: MutableSet<String>
        @Persisted var byName: Map<String, Int>
        @Persisted var tiny: Int8 = 0
        @Persisted var anything: AnyRealmValue
        @Persisted var lines: List<String>
    }

    struct Handle: CustomPersistable {
        var name: String
        init(persistedValue: String) { name = persistedValue }
        var persistableValue: String { name }
    }

    final class Account: Object {
        @Persisted(primaryKey: true) var handle: Handle
    }

    final class LongClassName: Object {
        @Persisted var value = 0
        override class func className() -> String { String(repeating: "C", count: 58) }
    }

    final class LongProperty: Object {
        @Persisted var value = 0
        override class func propertiesMapping() -> [String: String] { ["value": String(repeating: "p", count: 64)] }
    }

    final class FloatKey: Object {
        @Persisted(primaryKey: true) var key = 0.0
    }

    final class IndexedDouble: Object {
        @Persisted(indexed: true) var value = 0.0
    }

    final class RequiredLink: Object {
        @Persisted var other: Blob
    }
}

@Suite("Model limits")
struct ModelLimitsTests {
    typealias Blob = ModelLimits.Blob

    private func failure(_ body: (Realm) -> Void) throws -> Realm.Error? {
        let realm = try Realm(configuration: inMemoryConfiguration("limits"))
        do {
            try realm.write { body(realm) }
            return nil
        } catch let error as Realm.Error {
            #expect(realm.objects(Blob.self).isEmpty)
            return error
        }
    }

    private func schemaError(_ type: ObjectBase.Type) -> Realm.Error? {
        do {
            _ = try Realm(configuration: inMemoryConfiguration("limits-schema", objectTypes: [type]))
            return nil
        } catch let error as Realm.Error {
            return error
        } catch {
            return nil
        }
    }

    @Test func customPersistedTypesCanBePrimaryKeys() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("limits-custom-key"))
        try realm.write { realm.add(ModelLimits.Account(value: ["handle": ModelLimits.Handle(persistedValue: "ada")])) }
        #expect(realm.object(ofType: ModelLimits.Account.self, forPrimaryKey: "ada") != nil)
    }

    @Test func namesAreLimited() {
        let classError = schemaError(ModelLimits.LongClassName.self)
        #expect(classError?.description.contains("class names must have 1 to 57 UTF-8 bytes") == true)
        let propertyError = schemaError(ModelLimits.LongProperty.self)
        #expect(propertyError?.description.contains("property names must have 1 to 63 UTF-8 bytes") == true)
        #expect(schemaError(ModelLimits.FloatKey.self)?.description.contains("a primary key must be") == true)
        #expect(
            schemaError(ModelLimits.IndexedDouble.self)?.description.contains("cannot have a general index") == true)
        #expect(schemaError(ModelLimits.RequiredLink.self)?.description.contains("links must be optional") == true)
    }

    @Test func stringsAndDataHoldUpTo16MiB() throws {
        let limit = 16 * 1024 * 1024
        #expect(try failure { $0.add(Blob(value: ["key": "a", "text": String(repeating: "x", count: limit)])) } == nil)
        let tooLong = try failure {
            $0.add(Blob(value: ["key": "b", "text": String(repeating: "x", count: limit + 1)]))
        }
        #expect(tooLong == .valueTooLarge(type: "Blob", property: "text", size: limit + 1))
        let tooLongElement = try failure { realm in
            realm.add(Blob(value: ["key": "d", "lines": [String(repeating: "x", count: limit + 1)]]))
        }
        #expect(tooLongElement == .valueTooLarge(type: "Blob", property: "lines", size: limit + 1))
        let tooLongMixed = try failure {
            $0.add(Blob(value: ["key": "e", "anything": AnyRealmValue.data(Data(count: limit + 1))]))
        }
        #expect(tooLongMixed == .valueTooLarge(type: "Blob", property: "anything", size: limit + 1))
        let tooMuch = try failure { $0.add(Blob(value: ["key": "c", "bytes": Data(count: limit + 1)])) }
        #expect(tooMuch == .valueTooLarge(type: "Blob", property: "bytes", size: limit + 1))
    }

    @Test func keysAndSetElementsAreLimitedByThePageSize() throws {
        #expect(try failure { $0.add(Blob(value: ["key": String(repeating: "k", count: 967)])) } == nil)
        let longKey = try failure { $0.add(Blob(value: ["key": String(repeating: "k", count: 968)])) }
        #expect(longKey?.description.contains("primary key values must be at most 967 bytes") == true)
        #expect(try failure { $0.add(Blob(value: ["words": [String(repeating: "w", count: 967)]])) } == nil)
        let longElement = try failure { $0.add(Blob(value: ["words": [String(repeating: "w", count: 968)]])) }
        #expect(longElement?.description.contains("set elements are limited to 967 bytes") == true)
        #expect(try failure { $0.add(Blob(value: ["byName": [String(repeating: "m", count: 968): 1]])) } == nil)
        let longMapKey = try failure { $0.add(Blob(value: ["byName": [String(repeating: "m", count: 969): 1]])) }
        #expect(longMapKey?.description.contains("map keys are limited to 968 bytes") == true)
    }

    @Test func mapKeysHaveRules() throws {
        for key in ["", "a.b", "$a"] {
            // On a managed map the write fails; on an unmanaged one the assignment traps.
            let error = try failure { realm in
                let blob = realm.create(Blob.self)
                blob.byName[key] = 1
            }
            #expect(error?.description.contains("Blob.byName") == true, "\(key)")
        }
        #expect(try failure { $0.add(Blob(value: ["byName": ["a$": 1]])) } == nil)
    }

    @Test func narrowIntegersAreRangeChecked() throws {
        // Through create (managed) the write fails; Blob(value:) (unmanaged) traps.
        let error = try failure { $0.create(Blob.self, value: ["tiny": 300]) }
        #expect(error?.description.contains("Blob.tiny") == true)
    }

    @Test func mixedCollectionsNestToAHundredLevels() throws {
        func nested(_ depth: Int) -> AnyRealmValue {
            var value = AnyRealmValue.int(1)
            for _ in 0..<depth { value = .fromArray([value]) }
            return value
        }
        #expect(try failure { $0.add(Blob(value: ["key": "ok", "anything": nested(100)])) } == nil)
        let error = try failure { $0.add(Blob(value: ["key": "deep", "anything": nested(101)])) }
        #expect(error?.description.contains("Blob.anything") == true)
    }
}
