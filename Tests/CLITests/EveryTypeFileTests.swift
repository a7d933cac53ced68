import Foundation
import Strata
import StrataStorage
import StrataTestSupport
import Testing

@Suite("strata on a file with every property type")
struct EveryTypeFileTests {
    let directory = TemporaryDirectory()
    let path: String

    init() throws {
        path = directory.file("specimens.strata")
        try EveryTypeFile.write(to: path)
    }

    /// `strata dump FILE CLASS` for each top-level class, checked to succeed.
    private func dumps(of file: String) throws -> [String: String] {
        var output: [String: String] = [:]
        for className in ["Label", "Specimen"] {
            let run = try strata("dump", file, className)
            #expect(run.status == 0, "\(className): \(run.errors)")
            #expect(run.errors.isEmpty, "\(run.errors)")
            output[className] = run.output
        }
        return output
    }

    @Test func everyCommandReadsIt() throws {
        for command in [["info", path], ["schema", path], ["verify", path], ["trees", path]] {
            let run = try strata(arguments: command)
            #expect(run.status == 0, "\(command): \(run.errors)")
            #expect(run.errors.isEmpty, "\(command): \(run.errors)")
        }
        let schema = try strata("schema", path)
        let specimen = try #require(schema.lines.firstIndex { $0.hasPrefix("class Specimen (") })
        // Every stored property (the backlinks are computed, not stored).
        #expect(schema.lines[specimen] == "class Specimen (76 properties)", "\(schema.output)")
        #expect(schema.lines.contains("embedded class SpecimenPart (5 properties)"))
        #expect(schema.lines.contains("embedded class SpecimenDetail (2 properties)"))
    }

    @Test func dumpWritesEachValueInAFormThatKeepsItsType() throws {
        let specimens = try #require(try dumps(of: path)["Specimen"]).split(separator: "\n").map(String.init)
        try #require(specimens.count == 3)
        for line in specimens { _ = try canonicalJSON(line) }  // valid JSON
        let full = try #require(
            try JSONSerialization.jsonObject(with: Data(specimens[0].utf8)) as? [String: Any])
        #expect(full["int64"] as? Int == Int(Int64.min))
        #expect(full["optDouble"] as? String == "NaN" && full["optFloat"] as? String == "Infinity")
        // A date keeps the sub-millisecond fraction it was stored with.
        #expect(full["date"] as? String == "2023-11-10T10:00:00.1234567Z", "\(full["date"] ?? "")")
        let mixed = try #require(full["mixed"] as? [String: Any])
        #expect((mixed["date"] as? [String: Any])?["$date"] as? String == "2023-11-10T10:00:00.1234567Z")
        #expect((mixed["float"] as? [String: Any])?["$float"] as? Double == 1.5)
        #expect((mixed["nan"] as? [String: Any])?["$double"] as? String == "NaN")
        #expect((mixed["oid"] as? [String: Any])?["$objectId"] as? String == "65a1b2c3d4e5f60718293a4b")
        #expect((mixed["link"] as? [String: Any])?["$class"] as? String == "Label")
        #expect(specimens[0].contains(#""double":2.0"#) && specimens[0].contains(#""int":7"#))
        // Elements of mixed collections are tagged too, and nil elements of optional lists are null.
        #expect(specimens[0].contains(#""mixedSet":[1,1.0,"one",{"$data":"AQ=="}]"#), "\(specimens[0])")
        #expect(specimens[0].contains(#""optInts":[1,null,3]"#))
        #expect(!specimens[0].contains("friendOf"))  // computed: not dumped
    }

    @Test func loadingTheDumpIntoANewFileGivesTheSameDump() throws {
        let original = try dumps(of: path)
        let labels = directory.file("labels.jsonl")
        let specimens = directory.file("specimens.jsonl")
        try Data(original["Label"]!.utf8).write(to: URL(fileURLWithPath: labels))
        try Data(original["Specimen"]!.utf8).write(to: URL(fileURLWithPath: specimens))
        let copy = directory.file("copy.strata")
        let load = try strata(
            "load", copy, "Label", labels, "Specimen", specimens, "--schema-from", path)
        #expect(load.status == 0, "\(load.errors)")
        #expect(
            load.lines == ["added 3 Label objects to \(copy)", "added 3 Specimen objects to \(copy)"], "\(load.output)")
        let copied = try dumps(of: copy)
        for className in ["Label", "Specimen"] {
            let before = original[className]!.split(separator: "\n")
            let after = copied[className]!.split(separator: "\n")
            #expect(before.count == after.count, "\(className)")
            for (old, new) in zip(before, after) { #expect(old == new, "\(className):\n\(old)\n\(new)") }
        }
        #expect(try strata("verify", copy).status == 0)
        // No scratch file is left beside the new file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") } == [])
        // Through the models: the values are the same values (exact dates, mixed types), and backlinks follow.
        let source = try Realm(
            configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: EveryTypeFile.types))
        let loaded = try Realm(
            configuration: .init(fileURL: URL(fileURLWithPath: copy), objectTypes: EveryTypeFile.types))
        let before = try #require(source.object(ofType: Specimen.self, forPrimaryKey: 1))
        let after = try #require(loaded.object(ofType: Specimen.self, forPrimaryKey: 1))
        #expect(after.date == before.date && after.optDate == before.optDate)
        #expect(after.mixed.dictionaryValue?["float"] == .float(1.5))
        #expect(after.mixed.dictionaryValue?["date"] == .date(before.date))
        #expect(after.mixedSet.count == 4)
        #expect(after.friendOf.map(\.id).sorted() == [3])
        #expect(loaded.objects(Label.self).first { $0.text == "red" }?.taggedOn.count == 2)
        #expect(after.part?.detail?.at == before.part?.detail?.at && after.part?.label?.text == "red")
    }

    @Test func loadingIntoTheFileItCameFromAddsCopiesOfObjectsWithoutPrimaryKeys() throws {
        let original = try dumps(of: path)
        let run = try strataWithInput(original["Label"]!, "load", path, "Label")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.lines == ["added 3 Label objects to \(path)"])
        let labels = try strata("dump", path, "Label")
        #expect(labels.lines.count == 6)
        #expect(labels.lines.dropFirst(3).first?.hasPrefix(#"{"$key":4,"text":"red""#) == true, "\(labels.output)")
        // Specimens have primary keys: loading them again is refused, whole.
        let again = try strataWithInput(original["Specimen"]!, "load", path, "Specimen")
        #expect(again.status == 1)
        #expect(
            again.errors.contains("standard input line 1: a Specimen with primary key 1 is already in"),
            "\(again.errors)")
        #expect(try strata("dump", path, "Specimen").lines.count == 3)
    }
}
