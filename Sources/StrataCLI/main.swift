// strata: inspect, check, compact and benchmark Strata files, from the object classes down to the raw trees.
// Every command opens its file read-only and works without the app's model classes.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    strata — inspect and maintain Strata files

    USAGE
      strata info FILE                 versions, file size, free pages, trees, open readers, and the object
                                       classes with their object counts
      strata schema FILE               the stored object schema: every class (embedded and asymmetric marked)
                                       and property (type, optionality, list/set/map, primary key, index,
                                       full-text index, link target)
      strata dump FILE CLASS [--where QUERY] [--limit N]
                                       the objects of CLASS as JSON lines, one object per line; QUERY is a
                                       Realm Query Language predicate, e.g. --where "age > 30 AND name BEGINSWITH 'A'"
                                       (it may end with SORT(...), DISTINCT(...) or LIMIT(...), applied in the
                                       order written). Every page is checked first; a damaged file is refused
                                       (exit status 1)
      strata trees FILE [TREE] [--limit N]
                                       the storage engine's named trees, or the raw entries of TREE (keys and
                                       values as text or hex; 100 entries unless --limit says otherwise)
      strata verify FILE               check every reachable page and the object schema; exit 1 if damaged
      strata compact FILE OUT          write the live data of FILE into a new, minimal file OUT
      strata bench [--count N] [--dir DIR]
                                       quick self-benchmark of the storage engine (default 100000 keys, in /tmp)
      strata help                      this text

    JSON LINES (dump)
      Properties appear in schema order under their persisted names. A link is the target's primary key, or
      {"$key": N} when the target class has no primary key (objects of such classes carry their "$key");
      embedded objects are nested objects, lists and sets arrays, maps objects; dates are ISO 8601 (UTC), data
      is base64, ObjectId, UUID and Decimal128 are strings. Links inside mixed values also name the class:
      {"$class": "Dog", "$primaryKey": 1}.

    EXIT STATUS
      0  success
      1  damage found (verify; dump and schema refuse a damaged file), or the operation failed
      2  bad usage (unknown command or option, malformed query, unknown class), or the file cannot be
         opened (missing, not readable, not a Strata file, locked, or a damaged newest commit that its
         commit log holds: a read-write open restores it)
    """

/// The command line split into positional arguments and `--option value` pairs.
struct CommandLineArguments {
    var positional: [String] = []
    var options: [String: String] = [:]

    /// Options that take a value; anything else starting with `--` is an error.
    static let valued: Set<String> = ["--where", "--limit", "--count", "--dir"]

    init(_ arguments: [String]) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--help" || argument == "-h" {
                positional = ["help"]
                return
            }
            guard argument.hasPrefix("--") && argument.count > 2 else {
                positional.append(argument)
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard Self.valued.contains(name) else { usageError("unknown option \(name)") }
            if value == nil { value = remaining.popFirst() }
            guard let value else { usageError("\(name) needs a value") }
            guard options[name] == nil else { usageError("\(name) is given twice") }
            options[name] = value
        }
    }

    /// Ends with a usage error when an option outside `allowed` was given.
    func accept(_ allowed: Set<String>, for command: String) {
        for name in options.keys.sorted() where !allowed.contains(name) {
            usageError("\(command) does not take \(name)")
        }
    }

    /// The value of a count option such as `--limit`, when given.
    func count(_ name: String) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), value >= 0 else { usageError("\(name) needs a number of 0 or more, not \(text)") }
        return value
    }
}

let command = CommandLineArguments(Array(CommandLine.arguments.dropFirst()))
let positional = command.positional

func requireArguments(_ count: ClosedRange<Int>, _ form: String) {
    guard count.contains(positional.count - 1) else { usageError("usage: strata \(form)") }
}

let status: Int32
switch positional.first {
case "info":
    command.accept([], for: "info")
    requireArguments(1...1, "info FILE")
    status = info(positional[1])
case "schema":
    command.accept([], for: "schema")
    requireArguments(1...1, "schema FILE")
    status = schema(positional[1])
case "dump":
    command.accept(["--where", "--limit"], for: "dump")
    if positional.count == 2 {
        usageError(
            "dump needs a class: strata dump \(positional[1]) CLASS (list the classes with `strata schema \(positional[1])`)"
        )
    }
    requireArguments(2...2, "dump FILE CLASS [--where QUERY] [--limit N]")
    status = dumpObjects(
        positional[1], className: positional[2], query: command.options["--where"], limit: command.count("--limit"))
case "trees":
    command.accept(["--limit"], for: "trees")
    requireArguments(1...2, "trees FILE [TREE] [--limit N]")
    status = trees(
        positional[1], tree: positional.count == 3 ? positional[2] : nil, limit: command.count("--limit") ?? 100)
case "verify":
    command.accept([], for: "verify")
    requireArguments(1...1, "verify FILE")
    status = verify(positional[1])
case "compact":
    command.accept([], for: "compact")
    requireArguments(2...2, "compact FILE OUT")
    status = compact(positional[1], to: positional[2])
case "bench":
    command.accept(["--count", "--dir"], for: "bench")
    requireArguments(0...0, "bench [--count N] [--dir DIR]")
    do {
        status = try bench(
            count: max(command.count("--count") ?? 100_000, 1), directory: command.options["--dir"] ?? "/tmp")
    } catch {
        fail("bench failed: \(error)")
    }
case "help", nil:
    print(usage)
    status = ExitStatus.ok
case let other?:
    usageError("unknown command \(other)")
}
exit(status)
