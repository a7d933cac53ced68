import Foundation
import StrataTestSupport
import Testing

@Suite("strata dump --where with --arg and date literals")
struct QueryArgumentTests {
    let directory = TemporaryDirectory()
    let path: String

    init() throws {
        path = directory.file("specimens.strata")
        try EveryTypeFile.write(to: path)
    }

    /// The ids of the specimens `dump --where query --arg …` prints.
    private func ids(_ query: String, _ arguments: String...) throws -> [Int] {
        let run = try strata(
            arguments: ["dump", path, "Specimen", "--where", query] + arguments.flatMap { ["--arg", $0] })
        #expect(run.status == 0, "\(query) \(arguments): \(run.errors)")
        return try run.lines.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["id"] as? Int)
        }
    }

    @Test func eachArgumentGetsTheTypeItsTextShows() throws {
        #expect(try ids("id == $0", "2") == [2])
        #expect(try ids("id > $0 AND id < $1", "1", "3") == [2])
        #expect(try ids("double > $0", "0.2") == [1])
        #expect(try ids("double > $0", "-1e3") == [1, 2, 3])
        #expect(try ids("bool == $0", "true") == [1])
        #expect(try ids("bool == $0", "FALSE") == [2, 3])
        #expect(try ids("optString == $0", "null") == [2, 3])
        #expect(try ids("optString != $0", "nil") == [1])
        #expect(try ids("optString == $0", "''") == [1])
        #expect(try ids("string BEGINSWITH $0", "hello") == [1])  // bare text is a string
        #expect(try ids("string BEGINSWITH $0", "\"hello, \"") == [1])  // quotes keep spaces and commas
        #expect(try ids("objectId == $0", "oid(65a1b2c3d4e5f60718293a4b)") == [1])
        #expect(try ids("optObjectId == $0", "oid('65a1b2c3d4e5f60718293a4c')") == [1])
        #expect(try ids("uuid == $0", "uuid(E621E1F8-C36C-495A-93FC-0C247A3E6E5F)") == [1])
        #expect(try ids("id IN $0", "{1, 3}") == [1, 3])
        #expect(try ids("string IN $0", "{'a', 'hello, \"world\"\\ ✓'}") == [1])
    }

    @Test func datesAsArgumentsInEveryWrittenForm() throws {
        // As dump writes them (every fraction digit: the stored value exactly), and as the query language does.
        #expect(try ids("date == $0", "2023-11-10T10:00:00.1234567Z") == [1])
        #expect(try ids("date > $0", "2023-11-10@10:00:00") == [1])
        #expect(try ids("date > $0", "2023-11-10T10:00:00Z") == [1])
        #expect(try ids("date > $0 AND date < $1", "T1699610399:0", "2023-11-10@10:00:00:200000000") == [1])
        #expect(try ids("optDate < $0", "1970-01-01@00:00:00") == [1])
    }

    @Test func dateLiteralsInTheQueryItself() throws {
        #expect(try ids("date > 2023-11-10@09:59:59 AND date < T1699610401:0") == [1])
        #expect(try ids("date BETWEEN {2023-11-10T10:00:00Z, 2023-11-10T10:00:00:200000000}") == [1])
        #expect(try ids("optDate < 1920-01-01@12:00:01 AND optDate > 1920-01-01@12:00:00") == [1])
    }

    @Test func malformedArgumentsAndDatesAreUsageErrorsThatSayWhy() throws {
        let cases: [(arguments: [String], message: String)] = [
            (
                ["--where", "date > $0", "--arg", "2023-13-01@00:00:00"],
                "--arg 2023-13-01@00:00:00: month 13 is out of range"
            ),
            (["--where", "date > $0", "--arg", "2023-02-30T00:00:00Z"], "day 30 is out of range (1-28)"),
            (["--where", "date > $0", "--arg", "2023-02-03"], "a date needs a time of day"),
            (["--where", "date > $0", "--arg", "T1:-5"], "the same sign"),
            (["--where", "objectId == $0", "--arg", "oid(123)"], "'123' is not an ObjectId"),
            (["--where", "uuid == $0", "--arg", "uuid(nope)"], "'nope' is not a UUID"),
            (["--where", "string == $0", "--arg", "'open"], "the string is not closed"),
            (["--where", "id IN $0", "--arg", "{1, 2"], "the list is not closed"),
            (["--arg", "1"], "there is no --where"),
            (["--where", "id == $1", "--arg", "1"], "$1 has no argument (1 given)"),
            (["--where", "date > 2024-01-01"], "needs a time of day: 2024-01-01@00:00:00"),
            (["--where", "date > 2024-01-01T10:00:00.5Z"], "fractions of a second are written as nanoseconds"),
            (["--where", "date > 2024-01-01T10:00:00+02:00"], "time zone offsets are not supported"),
            (["--where", "id == $0", "--arg", "'1'"], "invalid query"),
            (Array(repeating: ["--arg", "1"], count: 9).flatMap { $0 } + ["--where", "id == $0"], "at most 8 --arg"),
        ]
        for (arguments, message) in cases {
            let run = try strata(arguments: ["dump", path, "Specimen"] + arguments)
            #expect(run.status == 2, "\(arguments): \(run.errors)")
            #expect(run.output.isEmpty, "\(arguments)")
            #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
    }
}
