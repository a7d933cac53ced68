// What `strata help`, `strata --help` and `strata COMMAND --help` print. Documentation/CLI.md says the same at
// more length; keep the two in step.

/// One command's help: how it is called, one line for the overview, and the details `strata COMMAND --help` adds.
struct CommandHelp {
    let name: String
    /// The arguments after the command name, as `strata help` lists them.
    let synopsis: String
    /// One line for the overview.
    let summary: String
    /// The rest of `strata COMMAND --help`: options, output, JSON keys.
    let details: String

    /// `strata COMMAND --help`.
    var text: String {
        """
        usage: strata \(name) \(synopsis)

        \(summary)

        \(details)

        \(exitStatus)
        """
    }
}

let exitStatus = """
    EXIT STATUS
      0  success (verify: no damage found)
      1  damage found (verify; info, schema and dump refuse a damaged file), or the operation failed and
         changed nothing (load rejected its input, compact failed, bench refused a debug build)
      2  bad usage (unknown command or option, a malformed query or --arg, an unknown class), or the file
         cannot be opened (missing, not readable, not a Strata file, locked, or a damaged newest commit
         that its commit log holds: a read-write open restores it)
    """

let commands: [CommandHelp] = [
    CommandHelp(
        name: "info", synopsis: "FILE [--json]",
        summary: "The storage summary of FILE, then its object classes with their object counts.",
        details: """
            Prints the file's size and page count, its newest version and when it was committed, the free pages,
            every storage tree with its entry count, the processes that have the file open, the schema version
            and each class (embedded and asymmetric ones marked).

            --json   one JSON object instead, with the keys
                       file, sizeBytes, pageSize, pageCount, freePages, version, committed (ISO 8601, UTC),
                       trees [{name, kind ("keyed" or "list"), entries}],
                       openReaders [{pid, pinnedVersion (null when none)}],
                       schemaVersion (null for a file without object classes),
                       classes [{name, kind ("object", "embedded" or "asymmetric"), objects}]
                         (null when the object schema cannot be read),
                       classesError (why not, else null)
            """),
    CommandHelp(
        name: "schema", synopsis: "FILE [--json]",
        summary: "The object schema stored in FILE: every class and property.",
        details: """
            Each property with its type (string?, list<int>, set<Dog>, map<string, mixed>), primary key, index,
            full-text index and link target. Names are the persisted names queries use.

            --json   one JSON object instead, with the keys
                       file, schemaVersion (null for a file without object classes),
                       classes [{name, kind ("object", "embedded" or "asymmetric"), primaryKey (a property
                         name or null), properties [{name, type (bool, int, float, double, string, data, date,
                         decimal128, objectId, uuid, object or mixed), typeName (as the text output writes
                         it), optional, collection (null, "list", "set" or "map"), objectClass (the link or
                         embedded target, else null), primaryKey, indexed, fullTextIndexed}]}]
            """),
    CommandHelp(
        name: "dump", synopsis: "FILE CLASS [--where QUERY] [--arg VALUE]... [--limit N]",
        summary: "The objects of CLASS as JSON lines, one object per line.",
        details: """
            --where QUERY  a Realm Query Language predicate, e.g. "age > 30 AND name BEGINSWITH 'A'"; it may
                           end with SORT(...), DISTINCT(...) and LIMIT(...), applied in the order written.
                           Dates are written 2024-01-01@10:00:00 (UTC; also with T, :NANOSECONDS, Z) or
                           T1704103200:0 (seconds:nanoseconds since 1970).
            --arg VALUE    the value of $0, then $1, ... in QUERY; repeat it for each. A value's type comes
                           from how it is written:
                             null or nil               nil
                             true, false               a boolean
                             42, -7                    an integer
                             2.5, -1e3, 1.0            a double
                             2024-01-01@10:00:00, 2024-01-01T10:00:00.250Z, T1704103200:0
                                                       a date (UTC)
                             oid(65a1b2c3d4e5f60718293a4b), uuid(E621E1F8-C36C-495A-93FC-0C247A3E6E5F)
                                                       an ObjectId, a UUID
                             {1, 2, 'x'}               a list of values (for IN)
                             'text' or "text"          a string, whatever it holds ('42' is a string)
                             anything else             a string, as written
            --limit N      print at most N objects

            Lines: properties in schema order under their persisted names. A link is the target's primary
            key, or {"$key": N} when its class has none (objects of such classes start with their "$key").
            Embedded objects are nested objects, lists and sets arrays, maps objects. Dates are ISO 8601 in
            UTC with as many fraction digits as the stored value needs; data is base64; ObjectId, UUID and
            Decimal128 are strings; non-finite numbers are "NaN", "Infinity" and "-Infinity". In mixed
            values, types JSON lacks are tagged: {"$date": ...}, {"$data": ...}, {"$objectId": ...},
            {"$uuid": ...}, {"$decimal128": ...}, {"$float": ...}, {"$double": "NaN"}, and a link names its
            class: {"$class": "Dog", "$primaryKey": 1} or {"$class": "Dog", "$key": 3}. Map keys never start
            with $, so these objects are never a map. `strata load` reads these lines back.

            Every page of the file is checked first; a damaged file is refused.
            """),
    CommandHelp(
        name: "load", synopsis: "FILE CLASS [INPUT] [CLASS INPUT]... [--schema-from SOURCE]",
        summary: "Adds the objects of JSON lines written by `strata dump` to FILE, in one write transaction.",
        details: """
            INPUT is a file of JSON lines as `strata dump FILE CLASS` writes them; without INPUT (one CLASS
            only), or with INPUT -, they are read from standard input. Several CLASS INPUT pairs load
            together, so that links between them resolve: a link {"$key": N} names the object of its class
            whose line has "$key": N in this load (object keys are not kept: the file gives new ones); a
            link by primary key names an object in the file or in this load.

            FILE must exist and store CLASS (its schema is the app's), unless --schema-from is given:
            --schema-from SOURCE  create FILE, which must not exist, with the object schema and schema version
                                  of SOURCE (its classes, none of its objects), then load into it.

            Everything loads in one write transaction: on any error nothing is written (and no FILE is
            created), and the error names the input and line. Every line must be a JSON object; its members
            are properties of CLASS (missing ones keep their defaults), typed as `dump` writes them. An
            object whose primary key is already in FILE is an error, not an update.

            Prints how many objects of each class were added.
            """),
    CommandHelp(
        name: "trees", synopsis: "FILE [TREE] [--limit N] [--json]",
        summary: "The storage engine's named trees, or the raw entries of TREE.",
        details: """
            Keys and values are shown as text when printable, else as hex (at most 64 bytes); 100 entries
            unless --limit says otherwise.

            --json   one JSON object instead, with the keys
                       without TREE: file, version, trees [{name, kind, entries}]
                       with TREE: file, version, tree, kind, entries, shown [{index (list trees, else null),
                         key (hex, null in list trees), keyText (the key as text when printable, else
                         null), value (hex, null for a nested tree), valueText, subtreeEntries (the entry
                         count of a nested tree, else null)}], more (entries not shown)
            """),
    CommandHelp(
        name: "verify", synopsis: "FILE [--json]",
        summary: "Checks every page reachable from the newest version, then that the object schema reads.",
        details: """
            Exit status 0 when the file is intact, 1 when damage is found (the first problem is named on
            standard error).

            --json   one JSON object instead, with the keys
                       file, valid (true only when no problem was found and the object schema reads),
                       version, pageCount, reachablePages, freePages, trees, entries,
                       metaSlots [what each meta slot holds], problems [{page (or null), tree, message}],
                       omittedProblems (problems beyond the first 1000), error (why checking stopped, else
                       null), objectSchema {readable, classes (a count, or null), error (or null)}
            """),
    CommandHelp(
        name: "compact", synopsis: "FILE OUT [--decrypt]",
        summary: "Writes the live data of FILE's newest version into a new, minimal file OUT.",
        details: """
            OUT must not exist. FILE is only read. The copy of an encrypted FILE is encrypted with the same key
            (and a file id of its own).

            --decrypt  write OUT unencrypted (FILE must be encrypted)
            """),
    CommandHelp(
        name: "bench", synopsis: "[--count N] [--dir DIR]",
        summary: "A quick self-benchmark of the storage engine in a scratch file.",
        details: """
            --count N  keys to write and read (default 100000)
            --dir DIR  where the scratch file goes (default /tmp)

            Only a release build measures anything (swift build -c release): a debug build of strata is
            refused with exit status 1.
            """),
]

/// `strata help`: every command in one screen.
let usage: String = {
    var text = """
        strata — inspect and maintain Strata files

        Every command but load opens FILE read-only and never creates it, and works without the app's
        model classes, at whatever schema version the file carries.

        ENCRYPTED FILES
          Give the 64-byte key in the environment, STRATA_ENCRYPTION_KEY=<128 hex characters>, or with
          --key-file PATH (a file holding the key, raw or as 128 hex characters), to any command; never as
          an argument. A missing or wrong key is refused with exit status 2 and nothing is written.

        USAGE

        """
    for command in commands {
        let call = "strata \(command.name) \(command.synopsis)"
        text += "  \(call)\n      \(command.summary)\n"
    }
    text += """
          strata help [COMMAND]   this text, or one command's options, output and JSON keys
                                  (also strata COMMAND --help)

        \(exitStatus)
        """
    return text
}()

/// The help of `name`, when it is a command.
func help(for name: String) -> CommandHelp? { commands.first { $0.name == name } }
