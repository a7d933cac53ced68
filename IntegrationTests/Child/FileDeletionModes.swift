import Foundation
import Strata
import StrataStorage

// The modes of the file-deletion tests (IntegrationTests/Suites/FileDeletionTests.swift):
//
//   hold-open PATH          open PATH as a Realm, add the DeletionEntry "first", print "open", wait for a line on
//                           stdin, add "second", print "committed"
//   reopen-write PATH N     N rounds: open PATH, commit a key unique to this process and round, check that the file
//                           the path names now holds it (the file this process wrote was not deleted under it),
//                           close it; print "done"

/// Runs the file-deletion mode `mode` on `path`.
func runFileDeletionMode(_ mode: String, path: String, _ arguments: [String]) throws {
    switch mode {
    case "hold-open":
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [DeletionEntry.self]))
        try realm.write { realm.create(DeletionEntry.self, value: ["name": "first"]) }
        say("open")
        _ = readLine()
        try realm.write { realm.create(DeletionEntry.self, value: ["name": "second"]) }
        say("committed")
    default:
        guard arguments.count >= 4, let rounds = Int(arguments[3]) else { fail("reopen-write needs a count") }
        for round in 0..<rounds { try writeAndCheck(path: path, marker: Array("\(getpid())-\(round)".utf8)) }
        say("done")
    }
}

/// One round of reopen-write.
private func writeAndCheck(path: String, marker: [UInt8]) throws {
    let store = try openRetrying(path: path, options: StoreOptions())
    try store.write { txn in try txn.put(marker, marker, in: try txn.tree(named: "markers", create: .keyed)!) }
    // An independent look at what the path names now: a handle joins this one only if it is the same file.
    let probe = try openRetrying(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
    guard try probe.read().tree(named: "markers")?.get(marker) == marker else {
        fail("\(String(decoding: marker, as: UTF8.self)): the commit went into a file that \(path) no longer names")
    }
}

/// Opens `path`, again when the open gave up because the file kept being deleted and created meanwhile (the
/// parent deletes it as fast as it can): that is a refusal, not a loss.
private func openRetrying(path: String, options: StoreOptions) throws -> Store {
    while true {
        do throws(StorageError) {
            return try Store.open(path: path, options: options)
        } catch {
            guard case .incompatibleFile(_, let reason) = error, reason.contains("kept being replaced") else {
                throw error
            }
        }
    }
}

/// The model of hold-open.
final class DeletionEntry: Object {
    @Persisted(primaryKey: true) var name = ""
}
