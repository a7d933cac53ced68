import Foundation
import Strata

// Misuse of the Realm SDK's non-throwing object API, which it reports by stopping the process:
//
//   object-trap PATH CASE   store a kite, print "stored", then misuse it as CASE says:
//                           nested-begin-write  beginWrite() while a write is in progress
//                           invalidated-read    read a property of the kite after realm.invalidate()
//                           thread-write-async  writeAsync on this thread's Realm (no executor to run it later)
//                           object-in-accessor-initialiser  iterate a class (in PATH-spare) whose initialiser
//                                               creates a Kite once its schema was learned
//   (the parent checks the trap's message and that the file kept the kite)

/// Runs the object-trap mode; false when `arguments[1]` is another mode.
func runObjectTrapMode(_ arguments: [String]) throws -> Bool {
    guard arguments[1] == "object-trap" else { return false }
    guard arguments.count >= 4 else { fail("object-trap needs a CASE") }
    let realm = try Realm(
        configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2]), objectTypes: [Kite.self]))
    let kite = try realm.write { realm.create(Kite.self, value: ["color": "red"]) }
    say("stored")
    switch arguments[3] {
    case "nested-begin-write":
        realm.beginWrite()
        realm.create(Kite.self, value: ["color": "lost"])
        realm.beginWrite()
    case "invalidated-read":
        realm.invalidate()
        say("read \(kite.color)")
    case "thread-write-async":
        realm.writeAsync({ realm.create(Kite.self, value: ["color": "lost"]) })
    case "object-in-accessor-initialiser":
        let spares = try Realm(
            configuration: Realm.Configuration(
                fileURL: URL(fileURLWithPath: arguments[2] + "-spare"), objectTypes: [SpareKite.self]))
        try spares.write { spares.add(SpareKite()) }
        SpareKite.makesSpare = true
        say("read \(spares.objects(SpareKite.self).first?.color ?? "")")
    default: fail("unknown object-trap case \(arguments[3])")
    }
    say("no trap")
    return true
}

/// The model of object-trap.
final class Kite: Object {
    @Persisted var color = ""
}

/// A kite whose initialiser creates another object, once asked to: after its schema was learned without one, so
/// the Realm creates its accessors without boxes, where creating another object traps.
final class SpareKite: Object {
    nonisolated(unsafe) static var makesSpare = false
    @Persisted var color = "blue"
    let spare: Kite? = SpareKite.makesSpare ? Kite() : nil
}
