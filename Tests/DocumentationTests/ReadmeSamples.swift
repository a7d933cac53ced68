import Foundation
import Strata
import StrataStorage
import Testing

// README.md: "Strata in 20 lines" and "Using the storage engine".

enum ReadmeSample {
    final class Todo: Object {
        @Persisted(primaryKey: true) var id = ObjectId.generate()
        @Persisted var title = ""
        @Persisted var done = false
    }

    actor TodoList {
        var report = ""

        func run() async throws {
            let realm = try await Realm(actor: self)  // ./default.strata, confined to this actor
            try await realm.asyncWrite { realm.add(Todo(value: ["title": "Write the docs"])) }
            let open = realm.objects(Todo.self).where { !$0.done }
            for await change in open.changes {  // .initial first, then an .update per commit
                if case .initial(let todos) = change {
                    try await realm.asyncWrite { todos[0].done = true }
                } else if case .update(let todos, let deletions, _, _) = change {
                    print("done: \(deletions), still open: \(todos.count)")  // done: [0], still open: 0
                    report = "done: \(deletions), still open: \(todos.count)"
                    break
                }
            }
        }
    }
}

func storeRole(in directory: String) throws -> [UInt8]? {
    let store = try Store.open(path: directory + "/users.strata")
    try store.write { txn in
        let users = try txn.tree(named: "users", create: .keyed)!
        try txn.put(Array("alice".utf8), Array("admin".utf8), in: users)
    }
    let snapshot = try store.read()  // a pinned, consistent version; Sendable
    return try snapshot.tree(named: "users")?.get(Array("alice".utf8))
}

extension DefaultConfigurationSamples {
    @Suite("README")
    struct Readme {
        @Test func theTwentyLineExampleRuns() async throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("readme")
            let list = ReadmeSample.TodoList()
            try await list.run()
            #expect(await list.report == "done: [0], still open: 0")
        }
    }
}

@Suite("README storage engine sample")
struct ReadmeStorageSample {
    @Test func theStorageEngineSampleReadsWhatItWrote() throws {
        let folder = TemporaryFolder()
        #expect(try storeRole(in: folder.path) == Array("admin".utf8))
    }
}
