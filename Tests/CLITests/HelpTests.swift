import Foundation
import Testing

@Suite("strata help")
struct HelpTests {
    static let commands = ["info", "schema", "dump", "load", "trees", "verify", "compact", "bench"]

    @Test(arguments: commands)
    func eachCommandPrintsItsOwnUsageWithHelp(_ command: String) throws {
        for arguments in [[command, "--help"], [command, "-h"], ["help", command], [command, "FILE", "--help"]] {
            let run = try strata(arguments: arguments)
            #expect(run.status == 0, "\(arguments): \(run.errors)")
            #expect(run.errors.isEmpty)
            #expect(run.lines.first?.hasPrefix("usage: strata \(command) ") == true, "\(arguments): \(run.output)")
            #expect(run.output.contains("EXIT STATUS"))
            // Only this command: no other command's usage line.
            for other in Self.commands where other != command {
                #expect(!run.output.contains("usage: strata \(other) "), "\(arguments)")
            }
        }
    }

    @Test func theOverviewListsEveryCommandAndTheExitStatuses() throws {
        for arguments in [["help"], ["--help"], []] {
            let run = try strata(arguments: arguments)
            #expect(run.status == 0)
            for command in Self.commands {
                #expect(run.output.contains("strata \(command) "), "\(command) missing from \(arguments)")
            }
            for status in ["0  success", "1  damage found", "2  bad usage"] {
                #expect(run.output.contains(status), "\(arguments): \(status)")
            }
        }
        let unknown = try strata("help", "frobnicate")
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("unknown command frobnicate"))
    }

    @Test func commandHelpDocumentsItsJSONKeysAndOptions() throws {
        let info = try strata("info", "--help").output
        for key in ["sizeBytes", "openReaders", "schemaVersion", "classesError"] { #expect(info.contains(key)) }
        let dump = try strata("dump", "--help").output
        for text in ["--arg VALUE", "oid(", "2024-01-01@10:00:00", "'text'", "$date", "--limit"] {
            #expect(dump.contains(text), "dump --help lacks \(text)")
        }
        let load = try strata("load", "--help").output
        for text in ["--schema-from", "one write transaction", "$key"] { #expect(load.contains(text)) }
    }

    @Test func benchRefusesADebugBuild() throws {
        let run = try strata("bench", "--count", "10")
        #if DEBUG
            #expect(run.status == 1)
            #expect(run.output.isEmpty)
            #expect(run.errors.contains("debug build"), "\(run.errors)")
            #expect(run.errors.contains("swift build -c release"))
        #else
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("random get"))
        #endif
    }
}
