import Foundation
import Strata

// The model of the convergence suite (Sync/Tests/StrataSyncTests/ConvergenceTests.swift), shared by its in-process
// replicas and the child-process replica (`strata-sync-replica`), so that every replica syncs the same classes.

/// An object with a property of every kind the client syncs: every scalar type, optionals, a link, a mixed value
/// (`AnyRealmValue`: integers, strings, doubles, links and nil), an embedded object (replaced, edited in place and
/// nulled), and `List`, `Map` and `MutableSet` of scalars and of links.
package final class ConvergenceItem: Object {
    @Persisted(primaryKey: true) package var id: Int
    @Persisted package var flag: Bool
    @Persisted package var count: Int
    @Persisted package var ratio: Float
    @Persisted package var amount: Double
    @Persisted package var label: String
    @Persisted package var blob: Data
    @Persisted package var stamp: Date
    @Persisted package var price: Decimal128
    @Persisted package var oid: ObjectId
    @Persisted package var uid: UUID
    @Persisted package var maybeCount: Int?
    @Persisted package var maybeLabel: String?
    @Persisted package var maybeStamp: Date?
    @Persisted package var owner: ConvergencePerson?
    @Persisted package var extra: AnyRealmValue
    @Persisted package var home: ConvergenceAddress?
    @Persisted package var tags: List<String>
    @Persisted package var visitors: List<ConvergencePerson>
    @Persisted package var scores: Map<String, Int>
    @Persisted package var friends: Map<String, ConvergencePerson?>
    @Persisted package var colors: MutableSet<String>
    @Persisted package var lucky: MutableSet<Int>
}

/// A link target. People are created once, before the run, and never deleted (a link to a deleted object is
/// nulled locally but keeps its key in PostgreSQL: see Documentation/Sync.md, "Client limits").
package final class ConvergencePerson: Object {
    @Persisted(primaryKey: true) package var name: String
    @Persisted package var city: String
}

/// The embedded object of ``ConvergenceItem/home``: it syncs as one value of its parent's property.
package final class ConvergenceAddress: EmbeddedObject {
    @Persisted package var street: String
    @Persisted package var number: Int
}

/// Two objects that every write of a pair sets together, in one transaction, to one value: a replica that
/// ever shows the two with different values has shown half of a server transaction.
package final class ConvergencePair: Object {
    @Persisted(primaryKey: true) package var id: String
    @Persisted package var round: Int
}

/// What one replica acknowledged: each of its transactions adds its number to `acked` (only that replica writes
/// its ledger), so after healing the set must hold every number the replica acknowledged.
package final class ConvergenceLedger: Object {
    @Persisted(primaryKey: true) package var replica: String
    @Persisted package var last: Int
    @Persisted package var acked: MutableSet<Int>
}

/// Every class the suite syncs.
package let convergenceClasses: [ObjectBase.Type] = [
    ConvergenceItem.self, ConvergencePerson.self, ConvergencePair.self, ConvergenceLedger.self,
    ConvergenceAddress.self,
]

/// The `application_name` of every PostgreSQL connection the convergence suite makes (its in-process replicas'
/// and its child processes'): the suite's stand-in for a server restart ends exactly these connections, so suites
/// running at the same time keep theirs.
package let convergenceApplicationName = "strata-convergence"

/// The people every replica's links point to.
package let convergencePeople = ["ann", "bob", "cyd", "dee", "eve"]

/// The pairs of ``ConvergencePair``: group `g` is the objects `"<g>a"` and `"<g>b"`.
package let convergencePairGroups = ["p0", "p1", "p2"]
