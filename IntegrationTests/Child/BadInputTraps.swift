import Foundation
import Strata

// Misuse that a non-throwing API can only report by stopping the process (a read at a bad index, a change to a
// frozen object), and the modes of this file and of MalformedQueries.swift:
//
//   bad-input-trap PATH CASE   store a shelf with three titles, print "stored", then misuse it as CASE says
//                              (the parent checks the trap's message and that the file kept the shelf)

/// Runs one of the bad-input modes; false when `arguments[1]` is not one of them.
func runBadInputMode(_ arguments: [String]) throws -> Bool {
    if try runMalformedQueryMode(arguments) { return true }
    guard arguments[1] == "bad-input-trap" else { return false }
    guard arguments.count >= 4 else { fail("bad-input-trap needs a CASE") }
    let realm = try Realm(
        configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2]), objectTypes: [Shelf.self]))
    let shelf = try realm.write { realm.create(Shelf.self, value: ["name": "kept", "titles": ["a", "b", "c"]]) }
    say("stored")
    switch arguments[3] {
    case "list-read": say("read \(shelf.titles[999])")
    case "results-read": say("read \(realm.objects(Shelf.self)[3].name)")
    case "filtered-read": say("read \(realm.objects(Shelf.self).filter("titles.@count > 2")[1].name)")
    case "unmanaged-remove":
        let titles = List<String>()
        titles.append(objectsIn: ["a", "b", "c"])
        titles.remove(at: 999)
    case "frozen-set":
        let frozen = shelf.freeze()
        try realm.write { frozen.name = "changed" }
    case "frozen-append":
        let frozen = shelf.freeze()
        try realm.write { frozen.titles.append("d") }
    default: fail("unknown bad-input-trap case \(arguments[3])")
    }
    say("no trap")
    return true
}

/// The model of bad-input-trap.
final class Shelf: Object {
    @Persisted var name = ""
    @Persisted var titles: List<String>
}
