import Foundation
import Strata

/// A synced type with a property of every kind the change format carries.
final class SyncDog: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String
    @Persisted var age: Int
    @Persisted var nickname: String?
    @Persisted var weight: Double
    @Persisted var isGoodBoy: Bool
    @Persisted var birthday: Date
    @Persisted var photo: Data
    @Persisted var chip: UUID
    @Persisted var owner: SyncPerson?
    @Persisted var address: SyncAddress?
    @Persisted var extra: AnyRealmValue
    @Persisted var tricks: List<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var colors: MutableSet<String>
}

/// A link target with a string primary key.
final class SyncPerson: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var age: Int
}

/// An embedded type: it travels inside its parent and has no table.
final class SyncAddress: EmbeddedObject {
    @Persisted var city: String
}
