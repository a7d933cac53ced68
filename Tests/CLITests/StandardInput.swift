import Foundation
import StrataTestSupport

/// Runs `strata arguments` with `input` as its standard input (read from a file, so that no pipe can stall), to
/// completion.
func strataWithInput(_ input: String, _ arguments: String...) throws -> ToolRun {
    try strataWithInput(input, arguments)
}

/// ``strataWithInput(_:_:)-(_,String...)`` with the arguments as an array.
func strataWithInput(_ input: String, _ arguments: [String]) throws -> ToolRun {
    let scratch = TemporaryDirectory()
    for name in ["in", "out", "err"] { try Data().write(to: URL(fileURLWithPath: scratch.file(name))) }
    try Data(input.utf8).write(to: URL(fileURLWithPath: scratch.file("in")))
    let process = Process()
    process.executableURL = strataExecutable
    process.arguments = arguments
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: scratch.file("in")))
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.file("out")))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.file("err")))
    try process.run()
    process.waitUntilExit()
    return ToolRun(
        status: process.terminationStatus,
        output: try String(contentsOfFile: scratch.file("out"), encoding: .utf8),
        errors: try String(contentsOfFile: scratch.file("err"), encoding: .utf8))
}
