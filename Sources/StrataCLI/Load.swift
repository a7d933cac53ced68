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

/// `strata load`.
func load(into path: String, inputs arguments: [String], schemaSource: String?) -> Int32 {
    let inputs = loadInputs(arguments)
    let lines = readLines(of: inputs)
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
    let counts: [(String, Int)]
    if let schemaSource {
        counts = createAndLoad(path, schemaFrom: schemaSource, lines: lines, inputs: inputs)
    } else {
        counts = loadIntoExisting(path, lines: lines, inputs: inputs)
    }
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
/// that is not a JSON object (status 1).
private func readLines(of inputs: [LoadInput]) -> [LoadLine] {
    var lines: [LoadLine] = []
    for input in inputs {
        let text: String
        if input.source == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            checkReadableFile(input.source)
            guard let data = FileManager.default.contents(atPath: input.source) else {
                fail("cannot read \(input.source)", status: ExitStatus.usage)
            }
            text = String(decoding: data, as: UTF8.self)
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.hasSuffix("\r") ? line.dropLast() : line
            guard !content.allSatisfy(\.isWhitespace) else { continue }
            let failure = { (reason: String) -> Never in
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

/// Loads into the existing file at `path`; the counts of objects added per class.
private func loadIntoExisting(_ path: String, lines: [LoadLine], inputs: [LoadInput]) -> [(String, Int)] {
    checkReadableFile(path)
    let realm: Realm
    do {
        realm = try openRealm(path, readOnly: false)
    } catch {
        fail(
            realmFailure(error, path: path).replacingOccurrences(of: "cannot read", with: "cannot write"),
            status: ExitStatus.usage)
    }
    return loadInOneWrite(realm, path: path, lines: lines, inputs: inputs)
}

/// Creates the file at `path` with the object schema of `source` and loads into it. The file is built beside `path`
/// under another name and appears at `path` only once everything is loaded, committed and on disk.
private func createAndLoad(_ path: String, schemaFrom source: String, lines: [LoadLine], inputs: [LoadInput])
    -> [(String, Int)]
{
    let directory = (path as NSString).deletingLastPathComponent
    let loading =
        (directory.isEmpty ? "." : directory) + "/." + (path as NSString).lastPathComponent + ".loading-\(getpid())"
    func removeScratch() { for file in [loading, loading + ".lock", loading + ".log"] { unlink(file) } }
    removeScratch()
    copySchema(of: source, into: loading, onFailure: removeScratch)
    let counts: [(String, Int)] = {
        let realm: Realm
        do {
            realm = try openRealm(loading, readOnly: false)
        } catch {
            removeScratch()
            fail("cannot create \(path): \(error)")
        }
        return loadInOneWrite(realm, path: path, lines: lines, inputs: inputs, onFailure: removeScratch)
    }()
    // The Realm is closed. Its commit may sit in the commit log beside the file: put the file itself on disk, and
    // check (a read-only open refuses a file its log is ahead of) that it holds the commit before the log goes.
    let descriptor = open(loading, O_RDWR)
    let synced = descriptor >= 0 && fsync(descriptor) == 0
    if descriptor >= 0 { close(descriptor) }
    do {
        guard synced else { throw StorageError.io(path: loading, operation: "fsync", code: errno) }
        let check = try Store.open(path: loading, options: StoreOptions(readOnly: true, createIfMissing: false))
        check.close()
    } catch {
        removeScratch()
        fail("cannot create \(path): \(error); nothing was written")
    }
    unlink(loading + ".log")
    unlink(loading + ".lock")
    // `link` fails rather than replace a file that appeared at `path` meanwhile.
    guard link(loading, path) == 0 else {
        let reason = String(cString: strerror(errno))
        removeScratch()
        fail("cannot create \(path): \(reason); nothing was written")
    }
    removeScratch()
    return counts
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

/// Adds every line's object to `realm` in one write transaction, ending the process with status 1 and nothing
/// written on the first error.
private func loadInOneWrite(
    _ realm: Realm, path: String, lines: [LoadLine], inputs: [LoadInput], onFailure: () -> Void = {}
) -> [(String, Int)] {
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
    do {
        try realm.beginWrite()
    } catch {
        onFailure()
        fail("cannot write to \(path): \(error)")
    }
    let reader = ObjectReader(realm: realm, path: path)
    do {
        try reader.load(lines)
    } catch {
        realm.cancelWrite()
        onFailure()
        fail("cannot load \(error.input) line \(error.line): \(error.reason); nothing was written")
    }
    do {
        try realm.commitWrite()
    } catch {
        onFailure()
        fail("cannot load into \(path): \(error); nothing was written")
    }
    var counts: [String: Int] = [:]
    for line in lines { counts[line.input.className, default: 0] += 1 }
    var seen: Set<String> = []
    return inputs.compactMap { seen.insert($0.className).inserted ? ($0.className, counts[$0.className] ?? 0) : nil }
}
