import Foundation
import Strata

// `strata-async-main PATH`: a program whose entry point is `static func main() async`, as every Hummingbird,
// Vapor or ArgumentParser service starts. It opens a Realm with `try Realm()` on the main actor, awaits, writes,
// awaits, then observes a commit made by another task, and exits 0. On Linux the main actor does not run on the
// main thread after the first suspension, so a Realm confined to the main *thread* traps at its first use after
// an `await`; one confined to the main actor keeps working. Each step prints a line for the test to check.

/// A ticket of a small queue.
final class Ticket: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
}

@main
struct AsyncMain {
    static func main() async throws {
        let configuration = Realm.Configuration(
            fileURL: URL(fileURLWithPath: CommandLine.arguments[1]), objectTypes: [Ticket.self])
        let realm = try Realm(configuration: configuration)
        say("opened")

        // A suspension that resumes after another task ran: the main actor may now run on another thread.
        await Task.detached {}.value
        say("main thread after await: \(Thread.isMainThread)")
        try realm.write { realm.create(Ticket.self, value: ["id": 1, "title": "first"]) }
        say("wrote \(realm.objects(Ticket.self).count)")

        await Task.detached {}.value
        let again = try Realm(configuration: configuration)
        say("same instance: \(again === realm)")

        // Observe on the main actor while a detached task (with its own task-confined Realm) writes.
        for await change in realm.objects(Ticket.self).changes {
            switch change {
            case .initial(let tickets):
                say("initial \(tickets.count)")
                Task.detached {
                    let writer = try Realm(configuration: configuration)
                    try await writer.asyncWrite { writer.create(Ticket.self, value: ["id": 2, "title": "second"]) }
                }
            case .update(let tickets, _, let insertions, _):
                say("update \(tickets.count) inserted \(insertions)")
            case .error(let error):
                say("error \(error)")
                exit(1)
            }
            if realm.objects(Ticket.self).count == 2 { break }
        }
        say("done")
    }

    static func say(_ line: String) {
        print(line)
        fflush(nil)
    }
}
