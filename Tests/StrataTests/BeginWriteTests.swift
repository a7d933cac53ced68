import Foundation
import Testing

@testable import Strata

final class Ledger: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var note = ""
}

/// `beginWrite()` / `commitWrite()` as the Realm SDK documents them: `beginWrite()` does not throw (code written for
/// the SDK calls it without `try`), `commitWrite()` throws what went wrong in the transaction. That `beginWrite()`
/// traps when the write cannot start is checked in the integration tests (it stops the process).
@Suite("beginWrite and commitWrite")
struct BeginWriteTests {
    private static func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "begin-write-\(UUID())", objectTypes: [Ledger.self]))
    }

    @Test func beginWriteNeedsNoTryAndCommitWriteApplies() throws {
        let realm = try Self.realm()
        realm.beginWrite()
        #expect(realm.isInWriteTransaction)
        realm.create(Ledger.self, value: ["id": 1, "note": "first"])
        try realm.commitWrite()
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Ledger.self).map(\.note) == ["first"])
    }

    @Test func commitWriteStillThrowsTheTransactionsFailure() throws {
        let realm = try Self.realm()
        try realm.write { realm.create(Ledger.self, value: ["id": 1, "note": "first"]) }
        realm.beginWrite()
        realm.create(Ledger.self, value: ["id": 2, "note": "second"])
        realm.create(Ledger.self, value: ["id": 1, "note": "duplicate"])
        #expect(throws: Realm.Error.self) { try realm.commitWrite() }
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Ledger.self).map(\.note) == ["first"])
    }

    @Test func cancelWriteAfterBeginWriteAppliesNothing() throws {
        let realm = try Self.realm()
        realm.beginWrite()
        realm.create(Ledger.self, value: ["id": 1, "note": "dropped"])
        realm.cancelWrite()
        #expect(realm.objects(Ledger.self).isEmpty)
    }
}
