// The command line, split into the command, its positional arguments, its options and flags.

/// The command line split into positional arguments, `--option value` pairs, repeated `--arg` values and flags.
struct CommandLineArguments {
    var positional: [String] = []
    var options: [String: String] = [:]
    /// The `--arg` values, in order: `$0`, `$1`, … of a query.
    var queryArguments: [String] = []
    var flags: Set<String> = []
    /// Whether `--help` or `-h` was given (anywhere).
    var wantsHelp = false

    /// Options that take a value; `--arg` may repeat, the others may not.
    static let valued: Set<String> = [
        "--where", "--arg", "--limit", "--count", "--dir", "--schema-from", "--key-file",
    ]
    /// Options without a value.
    static let switches: Set<String> = ["--json", "--decrypt"]

    init(_ arguments: [String]) {
        var remaining = arguments[...]
        var optionsEnded = false
        while let argument = remaining.popFirst() {
            if argument == "--" && !optionsEnded {
                optionsEnded = true
                continue
            }
            if !optionsEnded && (argument == "--help" || argument == "-h") {
                wantsHelp = true
                continue
            }
            guard !optionsEnded && argument.hasPrefix("--") && argument.count > 2 else {
                positional.append(argument)
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            if Self.switches.contains(name) {
                guard value == nil else { usageError("\(name) takes no value") }
                flags.insert(name)
                continue
            }
            guard Self.valued.contains(name) else { usageError("unknown option \(name)") }
            if value == nil { value = remaining.popFirst() }
            guard let value else { usageError("\(name) needs a value") }
            if name == "--arg" {
                queryArguments.append(value)
                continue
            }
            guard options[name] == nil else { usageError("\(name) is given twice") }
            options[name] = value
        }
    }

    /// Ends with a usage error when an option or flag outside `allowed` was given.
    func accept(_ allowed: Set<String>, for command: String) {
        var given = Set(options.keys).union(flags)
        if !queryArguments.isEmpty { given.insert("--arg") }
        for name in given.sorted() where !allowed.contains(name) {
            usageError("\(command) does not take \(name)")
        }
    }

    /// Whether flag `name` (`--json`) was given.
    func has(_ name: String) -> Bool { flags.contains(name) }

    /// The value of a count option such as `--limit`, when given.
    func count(_ name: String) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), value >= 0 else { usageError("\(name) needs a number of 0 or more, not \(text)") }
        return value
    }
}
