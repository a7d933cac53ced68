// strata: inspect, check, compact, load and benchmark Strata files, from the object classes down to the raw trees.
// Every command but `load` opens its file read-only, and all work without the app's model classes.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let command = CommandLineArguments(Array(CommandLine.arguments.dropFirst()))
let positional = command.positional

if command.wantsHelp || positional.first == "help" {
    let topic = positional.first == "help" ? positional.dropFirst().first : positional.first
    guard let topic else {
        print(usage)
        exit(ExitStatus.ok)
    }
    guard let commandHelp = help(for: topic) else { usageError("unknown command \(topic)") }
    print(commandHelp.text)
    exit(ExitStatus.ok)
}

func requireArguments(_ count: ClosedRange<Int>, _ name: String) {
    guard count.contains(positional.count - 1) else {
        usageError("usage: strata \(name) \(help(for: name)?.synopsis ?? "")")
    }
}

let status: Int32
switch positional.first {
case "info":
    command.accept(["--json", "--key-file"], for: "info")
    requireArguments(1...1, "info")
    status = info(positional[1], json: command.has("--json"))
case "schema":
    command.accept(["--json", "--key-file"], for: "schema")
    requireArguments(1...1, "schema")
    status = schema(positional[1], json: command.has("--json"))
case "dump":
    command.accept(["--where", "--arg", "--limit", "--key-file"], for: "dump")
    if positional.count == 2 {
        usageError(
            "dump needs a class: strata dump \(positional[1]) CLASS (list the classes with `strata schema \(positional[1])`)"
        )
    }
    requireArguments(2...2, "dump")
    if command.options["--where"] == nil && !command.queryArguments.isEmpty {
        usageError("--arg gives the values of $0, $1, ... in a --where query; there is no --where")
    }
    if command.queryArguments.count > maximumQueryArguments {
        usageError(
            "a query takes at most \(maximumQueryArguments) --arg values (use a list, --arg \"{1, 2, 3}\", for IN)")
    }
    status = dumpObjects(
        positional[1], className: positional[2], query: command.options["--where"],
        arguments: command.queryArguments.map(parseQueryArgument), limit: command.count("--limit"))
case "load":
    command.accept(["--schema-from", "--key-file"], for: "load")
    guard positional.count >= 3 else { usageError("usage: strata load \(help(for: "load")!.synopsis)") }
    status = load(
        into: positional[1], inputs: Array(positional[2...]), schemaSource: command.options["--schema-from"])
case "trees":
    command.accept(["--limit", "--json", "--key-file"], for: "trees")
    requireArguments(1...2, "trees")
    status = trees(
        positional[1], tree: positional.count == 3 ? positional[2] : nil, limit: command.count("--limit") ?? 100,
        json: command.has("--json"))
case "verify":
    command.accept(["--json", "--key-file"], for: "verify")
    requireArguments(1...1, "verify")
    status = verify(positional[1], json: command.has("--json"))
case "compact":
    command.accept(["--key-file", "--decrypt"], for: "compact")
    requireArguments(2...2, "compact")
    status = compact(positional[1], to: positional[2], decrypt: command.has("--decrypt"))
case "bench":
    command.accept(["--count", "--dir"], for: "bench")
    requireArguments(0...0, "bench")
    status = benchUnlessDebugBuild(
        count: max(command.count("--count") ?? 100_000, 1), directory: command.options["--dir"] ?? "/tmp")
case nil:
    print(usage)
    status = ExitStatus.ok
case let other?:
    usageError("unknown command \(other)")
}
exit(status)
