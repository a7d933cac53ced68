import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import StrataStorage

/// `text` as a JSON object, parsed by Foundation (so the output is valid JSON for any consumer).
func jsonObject(_ text: String) throws -> [String: Any] {
    let lines = text.split(separator: "\n")
    #expect(lines.count == 1, "--json prints one line")
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite("strata --json")
struct JSONOutputTests {
    let directory = TemporaryDirectory()
    let path: String

    init() throws {
        path = directory.file("specimens.strata")
        try EveryTypeFile.write(to: path)
    }

    @Test func infoHasEveryDocumentedKey() throws {
        let run = try strata("info", path, "--json")
        #expect(run.status == 0, "\(run.errors)")
        let info = try jsonObject(run.output)
        #expect(
            Set(info.keys) == [
                "file", "sizeBytes", "pageSize", "pageCount", "freePages", "version", "committed", "recovery",
                "trees", "openReaders", "schemaVersion", "classes", "classesError",
            ])
        #expect(info["recovery"] is NSNull)
        #expect(info["file"] as? String == path)
        let size = try #require(info["sizeBytes"] as? Int)
        #expect(size == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        #expect((info["pageSize"] as? Int).map { size % $0 == 0 } == true)
        #expect(info["schemaVersion"] as? Int == 0)
        #expect(info["classesError"] is NSNull)
        #expect((info["committed"] as? String)?.hasSuffix("Z") == true)
        let classes = try #require(info["classes"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: classes.map { ($0["name"] as! String, $0) })
        #expect(byName["Specimen"]?["objects"] as? Int == 3 && byName["Specimen"]?["kind"] as? String == "object")
        #expect(byName["Label"]?["objects"] as? Int == 3)
        #expect(byName["SpecimenPart"]?["kind"] as? String == "embedded")
        #expect(byName["SpecimenPart"]?["objects"] as? Int == 4)
        let trees = try #require(info["trees"] as? [[String: Any]])
        #expect(
            trees.contains {
                $0["name"] as? String == "o:Label" && $0["kind"] as? String == "keyed" && $0["entries"] as? Int == 3
            })
        #expect(info["openReaders"] as? [Any] != nil)
    }

    @Test func schemaDescribesEveryProperty() throws {
        let run = try strata("schema", path, "--json")
        #expect(run.status == 0, "\(run.errors)")
        let schema = try jsonObject(run.output)
        #expect(Set(schema.keys) == ["file", "schemaVersion", "classes"])
        let classes = try #require(schema["classes"] as? [[String: Any]])
        let specimen = try #require(classes.first { $0["name"] as? String == "Specimen" })
        #expect(specimen["kind"] as? String == "object" && specimen["primaryKey"] as? String == "id")
        let properties = try #require(specimen["properties"] as? [[String: Any]])
        #expect(properties.count == 76)
        let byName = Dictionary(uniqueKeysWithValues: properties.map { ($0["name"] as! String, $0) })
        for property in properties {
            #expect(
                Set(property.keys) == [
                    "name", "type", "typeName", "optional", "collection", "objectClass", "primaryKey", "indexed",
                    "fullTextIndexed",
                ])
        }
        #expect(byName["id"]?["primaryKey"] as? Bool == true && byName["id"]?["indexed"] as? Bool == true)
        #expect(
            byName["optDates"]?["type"] as? String == "date" && byName["optDates"]?["collection"] as? String == "list")
        #expect(
            byName["optDates"]?["optional"] as? Bool == true
                && byName["optDates"]?["typeName"] as? String == "list<date?>")
        #expect(
            byName["tagMap"]?["objectClass"] as? String == "Label"
                && byName["tagMap"]?["collection"] as? String == "map")
        #expect(
            byName["mixedSet"]?["type"] as? String == "mixed" && byName["mixedSet"]?["collection"] as? String == "set")
        #expect(byName["string"]?["collection"] is NSNull && byName["string"]?["objectClass"] is NSNull)
        let label = try #require(classes.first { $0["name"] as? String == "Label" })
        #expect(label["primaryKey"] is NSNull)
        #expect(classes.first { $0["name"] as? String == "SpecimenDetail" }?["kind"] as? String == "embedded")
    }

    @Test func verifyReportsIntactAndDamagedFiles() throws {
        let good = try strata("verify", path, "--json")
        #expect(good.status == 0, "\(good.errors)")
        let report = try jsonObject(good.output)
        #expect(
            Set(report.keys) == [
                "file", "valid", "version", "pageCount", "reachablePages", "freePages", "trees", "entries",
                "metaSlots", "problems", "omittedProblems", "error", "recovery", "objectSchema",
            ])
        #expect(report["recovery"] is NSNull)
        #expect(report["valid"] as? Bool == true)
        #expect((report["problems"] as? [Any])?.isEmpty == true)
        #expect((report["metaSlots"] as? [String])?.count == 2)
        let objectSchema = try #require(report["objectSchema"] as? [String: Any])
        #expect(objectSchema["readable"] as? Bool == true && objectSchema["classes"] as? Int == 4)
        // A last, small commit, then damage to a page of the newest version that it did not write (open checks
        // the pages of the newest commit and would fall back from them).
        do {
            let realm = try Realm(
                configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: EveryTypeFile.types))
            try realm.write { realm.objects(Label.self).first?.colour = "#0f0" }
        }
        let store = try Store.open(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
        let written = Set(try store.read().meta.written.map(\.page))
        let page = try #require(try store.reachablePages().first { $0 >= 2 && !written.contains($0) })
        let pageSize = store.pageSize
        store.close()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(Int(page) * pageSize + pageSize / 2))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 16))
        try handle.close()
        let bad = try strata("verify", path, "--json")
        #expect(bad.status == 1)
        #expect(bad.errors.contains("is damaged"), "\(bad.errors)")
        let damaged = try jsonObject(bad.output)
        #expect(damaged["valid"] as? Bool == false)
        let problems = try #require(damaged["problems"] as? [[String: Any]])
        #expect(problems.contains { $0["page"] as? Int == Int(page) }, "\(problems)")
        #expect(problems.allSatisfy { Set($0.keys) == ["page", "tree", "message"] })
    }

    @Test func treesListsTreesAndEntries() throws {
        let list = try jsonObject(try strata("trees", path, "--json").output)
        #expect(Set(list.keys) == ["file", "version", "trees"])
        let trees = try #require(list["trees"] as? [[String: Any]])
        #expect(trees.contains { $0["name"] as? String == "$schema" })
        let run = try strata("trees", path, "$schema", "--limit", "2", "--json")
        #expect(run.status == 0, "\(run.errors)")
        let schema = try jsonObject(run.output)
        #expect(Set(schema.keys) == ["file", "version", "tree", "kind", "entries", "shown", "more"])
        let shown = try #require(schema["shown"] as? [[String: Any]])
        #expect(shown.count == 2)
        #expect(schema["more"] as? Int == (schema["entries"] as? Int).map { $0 - 2 })
        for entry in shown {
            #expect(Set(entry.keys) == ["index", "key", "keyText", "value", "valueText", "subtreeEntries"])
            #expect(entry["index"] is NSNull)
        }
        // Keys are hex and, when printable, text: `backlinks`, `class:…`.
        let first = try #require(shown.first)
        let keyText = try #require(first["keyText"] as? String)
        #expect(first["key"] as? String == keyText.utf8.map { String(format: "%02x", $0) }.joined())
        // A nested tree (a list's owner → its elements) reports its entry count instead of a value.
        let lists = try jsonObject(try strata("trees", path, "l:Specimen.ints", "--json").output)
        let owners = try #require(lists["shown"] as? [[String: Any]])
        #expect(owners.first?["value"] is NSNull && owners.first?["subtreeEntries"] as? Int == 4, "\(owners)")
    }

    @Test func jsonIsOnlyForTheCommandsThatDocumentIt() throws {
        for command in [["dump", path, "Label", "--json"], ["compact", path, directory.file("out"), "--json"]] {
            let run = try strata(arguments: command)
            #expect(run.status == 2, "\(command)")
            #expect(run.errors.contains("does not take --json"), "\(run.errors)")
        }
    }
}
