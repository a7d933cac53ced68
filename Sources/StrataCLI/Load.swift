import Foundation
import Strata
import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// `strata load FILE CLASS [INPUT] [CLASS INPUT]... [--schema-from SOURCE]`: the JSON lines `strata dump` writes,
// added to FILE in one write transaction. All or nothing: any error cancels the transaction (and removes a FILE
// this load was creating), and names the input and line.

/// One input of a load: the class its lines hold and where they come from (`-` for standard input).
struct LoadInput {
    let className: String
    let source: String

    /// How messages name the input.
    var name: String { source == "-" ? "standard input" : source }
}

/// `strata load`: the target file is opened (or created aside) and the classes checked before any input is read,
/// so that a mistake in the command line is reported at once, not after reading standard input.
func load(into path: String, inputs arguments: [String], schemaSource: String?) -> Int32 {
    let inputs = loadInputs(arguments)
    let exists = access(path, F_OK) == 0
    if exists, let schemaSource {
        usageError(
            "\(path) exists: --schema-from \(schemaSource) only creates a new file; load into \(path) without it")
    }
    if !exists && schemaSource == nil {
        usageError(
            "\(path) does not exist: give --schema-from SOURCE to create it with the classes of SOURCE (the file the "
                + "lines were dumped from, or any file of the same app)")
    }
    let newFile = schemaSource.map { NewFile(path: path, schemaFrom: $0) }
    let onFailure: () -> Void = { newFile?.remove() }
    let counts: [(String, Int)] = {
        let realm = newFile?.start() ?? openForWriting(path)
        checkClasses(of: inputs, in: realm, path: path, onFailure: onFailure)
        let lines = readLines(of: inputs, onFailure: onFailure)
        return loadInOneWrite(realm, path: path, lines: lines, inputs: inputs, onFailure: onFailure)
    }()
    newFile?.finish()
    for (className, count) in counts {
        print("added \(count) \(className) object\(count == 1 ? "" : "s") to \(path)")
    }
    return ExitStatus.ok
}

/// `CLASS [INPUT]` or `CLASS INPUT CLASS INPUT …` as inputs; standard input at most once.
private func loadInputs(_ arguments: [String]) -> [LoadInput] {
    let pairs = arguments.count == 1 ? [arguments[0], "-"] : arguments
    guard pairs.count % 2 == 0 else {
        usageError("load takes CLASS INPUT pairs; \(arguments.last!) has no INPUT (use - for standard input)")
    }
    let inputs = stride(from: 0, to: pairs.count, by: 2).map { LoadInput(className: pairs[$0], source: pairs[$0 + 1]) }
    if inputs.filter({ $0.source == "-" }).count > 1 { usageError("standard input (-) can be read only once") }
    return inputs
}

/// One line of an input, parsed.
struct LoadLine {
    let input: LoadInput
    let number: Int
    let members: [(key: String, value: JSONValue)]
}

/// Every non-blank line of every input, parsed; ends the process on an unreadable input (status 2) or a line
/// that is not a JSON object (status 1), after `onFailure`.
private func readLines(of inputs: [LoadInput], onFailure: () -> Void) -> [LoadLine] {
    var lines: [LoadLine] = []
    for input in inputs {
        let text: String
        if input.source == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            guard let data = FileManager.default.contents(atPath: input.source) else {
                onFailure()
                checkReadableFile(input.source)
                fail("cannot read \(input.source)", status: ExitStatus.usage)
            }
            text = String(decoding: data, as: UTF8.self)
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.hasSuffix("\r") ? line.dropLast() : line
            guard !content.allSatisfy(\.isWhitespace) else { continue }
            func failure(_ reason: String) -> Never {
                onFailure()
                fail("cannot load \(input.name) line \(index + 1): \(reason); nothing was written")
            }
            do {
                guard case .object(let members) = try JSONReader.parse(String(content)) else {
                    failure("expected a JSON object, one per line, as `strata dump` writes them")
                }
                lines.append(LoadLine(input: input, number: index + 1, members: members))
            } catch {
                failure("not valid JSON at character \(error.column): \(error.reason)")
            }
        }
    }
    return lines
}

/// The existing file at `path`, opened for writing (status 2 when that fails).
private func openForWriting(_ path: String) -> Realm {
    checkReadableFile(path)
    do {
        return try openRealm(path, readOnly: false)
    } catch {
        fail(
            realmFailure(error, path: path).replacingOccurrences(of: "cannot read", with: "cannot write"),
            status: ExitStatus.usage)
    }
}

/// A file `load` creates: built under a hidden name beside `path`, with the object schema of `source`, and linked
/// to `path` only once everything is loaded, committed and on disk.
struct NewFile {
    let path: String
    let source: String
    let loading: String

    init(path: String, schemaFrom source: String) {
        self.path = path
        self.source = source
        let directory = (path as NSString).deletingLastPathComponent
        loading =
            (directory.isEmpty ? "." : directory) + "/." + (path as NSString).lastPathComponent
            + ".loading-\(getpid())"
    }

    /// Removes the file being built.
    func remove() { for file in [loading, loading + ".lock", loading + ".log"] { unlink(file) } }

    /// The file being built, with the schema of `source`, open for writing.
    func start() -> Realm {
        remove()
        copySchema(of: source, into: loading, onFailure: remove)
        do {
            return try openRealm(loading, readOnly: false)
        } catch {
            remove()
            fail("cannot create \(path): \(error)")
        }
    }

    /// Puts the built file at `path`, once its Realm is closed. Its last commit may sit in the commit log beside it:
    /// the file itself is synced, and checked to hold that commit (a read-only open refuses a file whose log is
    /// ahead of it) before the log goes.
    func finish() {
        let synced = sync(loading)
        do {
            guard synced else { throw StorageError.io(path: loading, operation: "fsync", code: errno) }
            let check = try Store.open(path: loading, options: StoreOptions(readOnly: true, createIfMissing: false))
            check.close()
        } catch {
            remove()
            fail("cannot create \(path): \(error); nothing was written")
        }
        unlink(loading + ".log")
        unlink(loading + ".lock")
        // `link` fails rather than replace a file that appeared at `path` meanwhile.
        guard link(loading, path) == 0 else {
            let reason = String(cString: strerror(errno))
            remove()
            fail("cannot create \(path): \(reason); nothing was written")
        }
        remove()
        // The new name is durable once the directory is.
        _ = sync(
            (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent)
    }

    /// `fsync` of the file or directory at `path`.
    private func sync(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }
}

/// A new file at `target` with the object schema of `source` (its classes and schema version) and no objects: what
/// the app's first open with its models would have made of an empty file. Only the `$schema` tree is copied, and
/// each class gets its empty object tree (and primary-key tree), as the library registers a class
/// (Documentation/ObjectLayer.md, "Storage layout").
private func copySchema(of source: String, into target: String, onFailure: () -> Void) {
    let sourceStore = openStore(source)
    let classes: [ObjectSchema]
    do {
        classes = try openRealm(source).schema.objectSchema
    } catch {
        onFailure()
        fail("cannot read the schema of \(source): \(realmFailure(error, path: source))", status: ExitStatus.usage)
    }
    guard !classes.isEmpty else {
        onFailure()
        usageError("\(source) stores no object classes: there is no schema to copy")
    }
    do {
        let entries = try sourceStore.read().tree(named: "$schema")?.entries() ?? []
        let store = try Store.open(path: target, options: StoreOptions(pageSize: sourceStore.pageSize))
        defer { store.close() }
        try store.write { transaction in
            let schema = try transaction.tree(named: "$schema", create: .keyed)!
            for (key, value) in entries { try transaction.put(key, value, in: schema) }
            for objectSchema in classes {
                _ = try transaction.tree(named: "o:" + objectSchema.className, create: .keyed)
                if objectSchema.primaryKeyProperty != nil {
                    _ = try transaction.tree(named: "p:" + objectSchema.className, create: .keyed)
                }
            }
        }
    } catch {
        onFailure()
        fail("cannot copy the schema of \(source): \(error)")
    }
}

/// Ends the process with a usage error unless `realm` stores each input's class as a top-level class.
private func checkClasses(of inputs: [LoadInput], in realm: Realm, path: String, onFailure: () -> Void) {
    for input in inputs {
        guard let objectSchema = realm.schema[className: input.className] else {
            onFailure()
            let known = realm.schema.objectSchema.filter { !$0.isEmbedded && !$0.isAsymmetric }.map(\.className)
            usageError(
                "\(path) has no class named \(input.className)"
                    + (known.isEmpty ? "" : "; its classes: \(known.joined(separator: ", "))"))
        }
        if objectSchema.isEmbedded || objectSchema.isAsymmetric {
            onFailure()
            usageError(
                objectSchema.isEmbedded
                    ? "\(input.className) is embedded: its objects load inside their owners' lines"
                    : "\(input.className) is asymmetric: its objects are created by the app for its outbox, not loaded")
        }
    }
}

/// Adds every line's object to `realm` in one write transaction, ending the process with status 1 and nothing
/// written on the first error.
private func loadInOneWrite(
    _ realm: Realm, path: String, lines: [LoadLine], inputs: [LoadInput], onFailure: () -> Void = {}
) -> [(String, Int)] {
    // `write` rather than `beginWrite()`: a Realm that cannot start a write (read-only, damaged) is an error the
    // tool reports, not a trap.
    let reader = ObjectReader(realm: realm, path: path)
    do {
        try realm.write { try reader.load(lines) }
    } catch let error as LoadError {
        onFailure()
        fail("cannot load \(error.input) line \(error.line): \(error.reason); nothing was written")
    } catch {
        onFailure()
        fail("cannot load into \(path): \(error); nothing was written")
    }
    var counts: [String: Int] = [:]
    for line in lines { counts[line.input.className, default: 0] += 1 }
    var seen: Set<String> = []
    return inputs.compactMap { seen.insert($0.className).inserted ? ($0.className, counts[$0.className] ?? 0) : nil }
}
