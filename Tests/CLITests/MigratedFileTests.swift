import Foundation
import Strata
import StrataTestSupport
import Testing

// MARK: One class through three schema versions (the CLI knows none of them)

/// Schema version 1 of `Entry`.
final class EntryV1: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
    override class func className() -> String { "Entry" }
}

/// Schema version 2: a word count, filled by the migration.
final class EntryV2: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
    @Persisted var words = 0
    override class func className() -> String { "Entry" }
}

/// Schema version 3: `text` renamed to `body`, and an indexed tag.
final class EntryV3: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var body = ""
    @Persisted var words = 0
    @Persisted(indexed: true) var tag = ""
    override class func className() -> String { "Entry" }
}

/// A file whose schema version is 3 after two migrations, as any app that ever changed its models has.
func makeMigratedFile(at path: String) throws {
    let url = URL(fileURLWithPath: path)
    do {
        let realm = try Realm(configuration: .init(fileURL: url, schemaVersion: 1, objectTypes: [EntryV1.self]))
        try realm.write {
            realm.create(EntryV1.self, value: ["id": 1, "text": "hello migrated world"])
            realm.create(EntryV1.self, value: ["id": 2, "text": "two words"])
        }
    }
    do {
        var configuration = Realm.Configuration(fileURL: url, schemaVersion: 2, objectTypes: [EntryV2.self])
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Entry") { old, new in
                new?["words"] = (old?["text"] as? String ?? "").split(separator: " ").count
            }
        }
        _ = try Realm(configuration: configuration)
    }
    var configuration = Realm.Configuration(fileURL: url, schemaVersion: 3, objectTypes: [EntryV3.self])
    configuration.migrationBlock = { migration, _ in
        migration.renameProperty(onType: "Entry", from: "text", to: "body")
        migration.enumerateObjects(ofType: "Entry") { _, new in new?["tag"] = "migrated" }
    }
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.create(EntryV3.self, value: ["id": 3, "body": "written at version three", "tag": "new"]) }
}

@Suite("strata on migrated files")
struct MigratedFileTests {
    let directory = TemporaryDirectory()
    let path: String

    init() throws {
        path = directory.file("migrated.strata")
        try makeMigratedFile(at: path)
    }

    @Test func infoReadsTheClassesOfAFileAtSchemaVersion3() throws {
        let run = try strata("info", path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.isEmpty, "\(run.errors)")
        #expect(!run.output.contains("unreadable"))
        #expect(run.lines.contains { $0.hasPrefix("schema version:") && $0.hasSuffix(" 3") }, "\(run.output)")
        #expect(run.lines.contains { $0.hasPrefix("  Entry ") && $0.hasSuffix("3 objects") }, "\(run.output)")
    }

    @Test func schemaShowsTheMigratedClass() throws {
        let run = try strata("schema", path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.lines.contains("class Entry (4 properties)"), "\(run.output)")
        #expect(run.lines.contains { $0.hasPrefix("  body ") }, "\(run.output)")
        #expect(run.lines.contains { $0.hasPrefix("  tag ") && $0.hasSuffix("indexed") }, "\(run.output)")
    }

    @Test func dumpShowsTheMigratedObjectsAndQueriesThem() throws {
        let run = try strata("dump", path, "Entry")
        #expect(run.status == 0, "\(run.errors)")
        #expect(
            run.lines == [
                #"{"id":1,"body":"hello migrated world","words":3,"tag":"migrated"}"#,
                #"{"id":2,"body":"two words","words":2,"tag":"migrated"}"#,
                #"{"id":3,"body":"written at version three","words":0,"tag":"new"}"#,
            ], "\(run.output)")
        let query = try strata("dump", path, "Entry", "--where", "tag == 'migrated' AND words > 2")
        #expect(query.status == 0, "\(query.errors)")
        #expect(query.lines.count == 1 && query.lines[0].hasPrefix(#"{"id":1,"#), "\(query.output)")
    }

    @Test func verifyPassesAMigratedFileInsteadOfRaisingAFalseAlarm() throws {
        let run = try strata("verify", path)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.errors.isEmpty, "\(run.errors)")
        #expect(run.output.contains("object schema: 1 class, readable"), "\(run.output)")
    }

    @Test func theToolLeavesTheFileAsItWas() throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for command in [["info", path], ["schema", path], ["dump", path, "Entry"], ["verify", path]] {
            #expect(try strata(arguments: command).status == 0, "\(command)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // The app still opens it at its own version: the tool wrote no schema version of its own.
        let realm = try Realm(
            configuration: .init(fileURL: URL(fileURLWithPath: path), schemaVersion: 3, objectTypes: [EntryV3.self]))
        #expect(realm.objects(EntryV3.self).count == 3)
    }
}
