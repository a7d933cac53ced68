import Foundation
import StrataTestSupport
import Testing

@Suite("strata load")
struct LoadTests {
    let directory = TemporaryDirectory()
    let path: String

    init() throws {
        path = directory.file("specimens.strata")
        try EveryTypeFile.write(to: path)
    }

    private func dump(_ className: String, _ file: String? = nil) throws -> [String] {
        let run = try strata("dump", file ?? path, className)
        #expect(run.status == 0, "\(run.errors)")
        return run.lines
    }

    private func write(_ lines: [String], to name: String) throws -> String {
        let file = directory.file(name)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test func linksBetweenInputsResolveWithinOneLoad() throws {
        let labels = try write([#"{"$key":70,"text":"seventy"}"#, "", #"{"$key":80,"text":"eighty"}"#], to: "l.jsonl")
        let specimens = try write(
            [
                // A link to a later line, one to an object already in the file, and labels by their $key here.
                #"{"id":10,"friend":11,"tag":{"$key":80},"tags":[{"$key":70},{"$key":80}],"friendMap":{"old":1}}"#,
                #"{"id":11,"friend":10,"mixed":{"$class":"Label","$key":70},"part":{"name":"p","label":{"$key":70}}}"#,
            ], to: "s.jsonl")
        let run = try strata("load", path, "Specimen", specimens, "Label", labels)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.lines == ["added 2 Specimen objects to \(path)", "added 2 Label objects to \(path)"])
        // The file gives the labels keys of its own (4 and 5); the links follow them.
        let labelLines = try dump("Label")
        #expect(
            labelLines.suffix(2) == [
                #"{"$key":4,"text":"seventy","colour":null}"#, #"{"$key":5,"text":"eighty","colour":null}"#,
            ])
        let specimensAfter = try dump("Specimen")
        let ten = try #require(specimensAfter.first { $0.hasPrefix(#"{"id":10,"#) })
        #expect(ten.contains(#""friend":11"#) && ten.contains(#""tag":{"$key":5}"#))
        #expect(ten.contains(#""tags":[{"$key":4},{"$key":5}]"#) && ten.contains(#""friendMap":{"old":1}"#))
        let eleven = try #require(specimensAfter.first { $0.hasPrefix(#"{"id":11,"#) })
        #expect(eleven.contains(#""mixed":{"$class":"Label","$key":4}"#))
        #expect(eleven.contains(#""part":{"name":"p","weight":null,"detail":null,"label":{"$key":4},"counts":[]}"#))
        // Properties a line leaves out keep their defaults.
        #expect(eleven.contains(#""int":0,"#) && eleven.contains(#""optString":null,"#))
        #expect(try strata("verify", path).status == 0)
    }

    @Test func anErrorNamesTheInputAndLineAndWritesNothing() throws {
        let labelsBefore = try dump("Label")
        let specimensBefore = try dump("Specimen")
        let good = #"{"id":20,"string":"fine"}"#
        let cases: [(lines: [String], className: String, message: String)] = [
            (
                [good, #"{"id":21,"int":"x"}"#], "Specimen",
                #"line 2: Specimen.int is a int: expected an integer, found "x""#
            ),
            (
                [good, #"{"id":21,"int":1.5}"#], "Specimen",
                "line 2: Specimen.int is a int: expected an integer, found 1.5"
            ),
            ([good, good], "Specimen", "line 2: a Specimen with primary key 20 is already in"),
            ([#"{"id":1}"#], "Specimen", "line 1: a Specimen with primary key 1 is already in"),
            (
                [good, #"{"id":21,"#], "Specimen",
                "line 2: not valid JSON at character 10: expected a member name in quotes"
            ),
            (
                [good, #"{"id":21} x"#], "Specimen",
                "line 2: not valid JSON at character 11: unexpected text after the value"
            ),
            ([#"[1, 2]"#], "Specimen", "line 1: expected a JSON object, one per line"),
            (
                [#"{"id":21,"colour":"red"}"#], "Specimen",
                "line 1: Specimen has no property colour (its properties: id, bool"
            ),
            ([#"{"id":21,"friendOf":[]}"#], "Specimen", "line 1: Specimen has no property friendOf"),
            ([#"{"$key":1,"id":21}"#], "Specimen", "line 1: Specimen has a primary key: its lines have no $key"),
            ([#"{"string":"no key"}"#], "Specimen", "line 1: Specimen.id, the primary key, needs a value"),
            (
                [#"{"id":21,"friend":99}"#], "Specimen",
                "line 1: Specimen.friend links to the Specimen with primary key 99, which is neither in"
            ),
            (
                [#"{"id":21,"tag":{"$key":1}}"#], "Specimen",
                "line 1: Specimen.tag links to the Label with $key 1, which is not in this load"
            ),
            (
                [#"{"id":21,"tag":3}"#], "Specimen",
                #"line 1: Specimen.tag links to a Label, which has no primary key: expected {"$key": N}, found 3"#
            ),
            ([#"{"id":21,"bool":null}"#], "Specimen", "line 1: Specimen.bool is a bool: null is not allowed"),
            (
                [#"{"id":21,"ints":[1,null]}"#], "Specimen",
                "line 1: Specimen.ints[1] is a list<int>: null is not allowed"
            ),
            (
                [#"{"id":21,"intMap":{"a.b":1}}"#], "Specimen",
                #"line 1: Specimen.intMap: the map key "a.b" contains ".""#
            ),
            (
                [#"{"id":21,"mixed":{"$when":1}}"#], "Specimen",
                "line 1: Specimen.mixed: expected $date, $data, $objectId"
            ),
            (
                [#"{"id":21,"mixed":{"$date":"2023-02-30T00:00:00Z"}}"#], "Specimen",
                "Specimen.mixed: 2023-02-30T00:00:00Z is no date: day 30 is out of range"
            ),
            ([#"{"id":21,"date":"yesterday"}"#], "Specimen", "line 1: Specimen.date is a date: expected a date like"),
            ([#"{"id":21,"data":"not base64!"}"#], "Specimen", "line 1: Specimen.data is a data: expected base64"),
            (
                [#"{"id":21,"part":{"name":"p","size":1}}"#], "Specimen",
                "line 1: Specimen.part: the embedded SpecimenPart has no property size"
            ),
            (
                [#"{"$key":1,"text":"a"}"#, #"{"$key":1,"text":"b"}"#], "Label",
                "line 2: a Label with $key 1 appears twice in this load"
            ),
            ([#"{"$key":"one","text":"a"}"#], "Label", #"line 1: $key must be an integer, not "one""#),
        ]
        for (lines, className, message) in cases {
            let run = try strataWithInput(lines.joined(separator: "\n"), "load", path, className)
            #expect(run.status == 1, "\(lines): \(run.errors)")
            #expect(run.output.isEmpty, "\(lines)")
            #expect(run.errors.hasPrefix("strata: cannot load standard input "), "\(lines): \(run.errors)")
            #expect(run.errors.contains(message), "\(lines): \(run.errors)")
            #expect(run.errors.hasSuffix("; nothing was written\n"), "\(run.errors)")
        }
        // The first line of each case was fine: nothing of it stayed.
        #expect(try dump("Label") == labelsBefore)
        #expect(try dump("Specimen") == specimensBefore)
        #expect(try strata("verify", path).status == 0)
    }

    @Test func anErrorInASecondInputNamesThatFile() throws {
        let labels = try write([#"{"$key":1,"text":"ok"}"#], to: "labels.jsonl")
        let specimens = try write([#"{"id":30}"#, #"{"id":31,"float":"fast"}"#], to: "bad.jsonl")
        let run = try strata("load", path, "Label", labels, "Specimen", specimens)
        #expect(run.status == 1)
        #expect(
            run.errors.contains("cannot load \(specimens) line 2: Specimen.float is a float: expected a number"),
            "\(run.errors)")
        #expect(try dump("Label").count == 3)
    }

    @Test func creatingAFileNeedsASchemaAndAFailedLoadLeavesNoFile() throws {
        let target = directory.file("new.strata")
        let missing = try strataWithInput(#"{"$key":1,"text":"a"}"#, "load", target, "Label")
        #expect(missing.status == 2)
        #expect(missing.errors.contains("\(target) does not exist: give --schema-from SOURCE"), "\(missing.errors)")
        let failed = try strataWithInput(
            #"{"$key":1,"text":"a"}"# + "\n" + #"{"text":5}"#, "load", target, "Label", "--schema-from", path)
        #expect(failed.status == 1)
        #expect(
            failed.errors.contains("line 2: Label.text is a string: expected a string, found 5"), "\(failed.errors)")
        // Neither the file nor the scratch file it was built in is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix(".") })
        #expect(!FileManager.default.fileExists(atPath: target))
        let created = try strataWithInput(#"{"$key":1,"text":"a"}"#, "load", target, "Label", "--schema-from", path)
        #expect(created.status == 0, "\(created.errors)")
        #expect(try dump("Label", target) == [#"{"$key":1,"text":"a","colour":null}"#])
        #expect(try dump("Specimen", target).isEmpty)
        let info = try jsonObject(try strata("info", target, "--json").output)
        #expect(info["schemaVersion"] as? Int == 0)
        let again = try strataWithInput("", "load", target, "Label", "--schema-from", path)
        #expect(again.status == 2)
        #expect(again.errors.contains("exists: --schema-from \(path) only creates a new file"))
    }

    @Test func usageErrors() throws {
        let cases: [(arguments: [String], message: String)] = [
            (["load", path], "usage: strata load FILE CLASS"),
            (["load", path, "Nope", "-"], "has no class named Nope; its classes: Label, Specimen"),
            (
                ["load", path, "SpecimenPart", "-"],
                "SpecimenPart is embedded: its objects load inside their owners' lines"
            ),
            (["load", path, "Label", "-", "Specimen"], "Specimen has no INPUT"),
            (["load", path, "Label", "-", "Specimen", "-"], "standard input (-) can be read only once"),
            (
                ["load", path, "Label", directory.file("nowhere.jsonl")],
                "cannot open \(directory.file("nowhere.jsonl")): no such file"
            ),
            (["load", path, "Label", "-", "--where", "x"], "load does not take --where"),
        ]
        for (arguments, message) in cases {
            let run = try strataWithInput("", arguments)
            #expect(run.status == 2, "\(arguments): \(run.errors)")
            #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
    }
}
