import Foundation
import Strata
import StrataTestSupport
import Testing

final class Revision: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
    @Persisted var edits = 0
}

@Suite("strata on a file with many committed versions")
struct VersionedFileTests {
    let directory = TemporaryDirectory()

    @Test func theToolReadsTheNewestVersionWhileOlderOnesArePinned() throws {
        let path = directory.file("revisions.strata")
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [Revision.self]))
        try realm.write {
            for id in 1...10 { realm.create(Revision.self, value: ["id": id, "text": "first \(id)"]) }
        }
        // A version this process keeps pinned while 30 more commits add, edit and delete.
        let pinned = realm.freeze()
        for commit in 1...30 {
            try realm.write {
                let id = commit % 10 + 1
                if let revision = realm.object(ofType: Revision.self, forPrimaryKey: id) {
                    if commit % 7 == 0 {
                        realm.delete(revision)
                    } else {
                        revision.text = "edit \(commit)"
                        revision.edits += 1
                    }
                } else {
                    realm.create(Revision.self, value: ["id": id, "text": "again \(commit)"])
                }
            }
        }
        let expected = realm.objects(Revision.self).sorted(byKeyPath: "id").map {
            [$0.id, $0.text, $0.edits] as [AnyHashable]
        }
        #expect(pinned.objects(Revision.self).count == 10)

        let info = try strata("info", path, "--json")
        #expect(info.status == 0, "\(info.errors)")
        let report = try jsonObject(info.output)
        #expect(report["version"] as? Int == 31 + 1, "\(report)")  // the schema's commit, then 31 writes
        let readers = try #require(report["openReaders"] as? [[String: Any]])
        let me = readers.first { $0["pid"] as? Int == Int(getpid()) }
        #expect((me?["pinnedVersion"] as? Int).map { $0 <= 2 } == true, "\(readers)")
        #expect((report["freePages"] as? Int).map { $0 >= 0 } == true)

        let dump = try strata("dump", path, "Revision", "--where", "TRUEPREDICATE SORT(id ASC)")
        #expect(dump.status == 0, "\(dump.errors)")
        let dumped = try dump.lines.map { line -> [AnyHashable] in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return [object["id"] as! Int, object["text"] as! String, object["edits"] as! Int]
        }
        #expect(dumped == Array(expected))
        #expect(dumped.count < 10)  // deletions are seen

        let verify = try strata("verify", path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
        #expect(try strata("schema", path).status == 0)
        #expect(try strata("trees", path, "o:Revision").status == 0)
        _ = pinned
    }
}
