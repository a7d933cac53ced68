import Foundation
import Strata
import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Commands on the object layer: the stored schema and the objects of a class. The CLI has no model classes: it
// reads the classes stored in the file through `DynamicObject`.

/// `strata info FILE [--json]`: the storage summary, then the object classes with their object counts.
func info(_ path: String, json: Bool = false) -> Int32 {
    let store = openStore(path)
    let stats: StoreStatistics
    do {
        stats = try store.statistics()
    } catch {
        fail("cannot read \(path): \(error)")
    }
    var fileInfo = stat()
    let fileSize = stat(path, &fileInfo) == 0 ? Int(fileInfo.st_size) : 0
    if json { return printInfoJSON(path: path, stats: stats, fileSize: fileSize, recovery: store.recovery) }
    let committed = Date(timeIntervalSince1970: Double(stats.commitTimeMicroseconds) / 1e6)
    print("file:           \(path)")
    print("size:           \(formatBytes(fileSize)) (\(stats.pageCount) pages of \(stats.pageSize) bytes)")
    print("version:        \(stats.version), committed \(DateText.format(committed))")
    if let notice = store.recovery { print("recovery:       \(notice)") }
    let free = stats.pageCount > 0 ? Double(stats.freePages) * 100 / Double(stats.pageCount) : 0
    print("free pages:     \(stats.freePages) (\((free * 10).rounded() / 10)%)")
    print("trees:          \(stats.trees.count)")
    let width = (stats.trees.map(\.name.count).max() ?? 0) + 2
    for tree in stats.trees { print("  \(padded(tree.name, to: width))\(tree.kind), \(tree.count) entries") }
    if stats.otherProcesses.isEmpty {
        print("open readers:   none in other processes")
    } else {
        print("open readers:   \(stats.otherProcesses.count) other process(es)")
        for process in stats.otherProcesses {
            let pin = process.pinnedVersion == 0 ? "no pinned version" : "pins version \(process.pinnedVersion)"
            print("  pid \(process.pid), \(pin)")
        }
    }
    let realm: Realm
    do {
        realm = try openRealm(path)
    } catch {
        print("classes:        unreadable")
        standardError("strata: \(realmFailure(error, path: path))")
        return ExitStatus.failure
    }
    let classes = realm.schema.objectSchema
    guard !classes.isEmpty else {
        print("classes:        none (no object schema stored: a storage-only file)")
        return ExitStatus.ok
    }
    // Every class's objects, embedded and asymmetric ones included, are the rows of its `o:<class>` tree
    // (Documentation/ObjectLayer.md, "Storage layout").
    var rows: [String: Int] = [:]
    for tree in stats.trees where tree.name.hasPrefix("o:") { rows[String(tree.name.dropFirst(2))] = tree.count }
    print("schema version: \(realm.configuration.schemaVersion)")
    print("classes:        \(classes.count)")
    let nameWidth = (classes.map(\.className.count).max() ?? 0) + 2
    for objectSchema in classes {
        let count = rows[objectSchema.className] ?? 0
        var line = "  \(padded(objectSchema.className, to: nameWidth))\(count) object\(count == 1 ? "" : "s")"
        if objectSchema.isEmbedded { line += " (embedded)" }
        if objectSchema.isAsymmetric { line += " (asymmetric, waiting in the outbox)" }
        print(line)
    }
    return ExitStatus.ok
}

/// `strata schema FILE [--json]`: every stored class and property.
func schema(_ path: String, json: Bool = false) -> Int32 {
    let (_, realm) = openRealmOrExit(path)
    if json {
        printJSON(schemaJSON(path: path, realm: realm))
        return ExitStatus.ok
    }
    let classes = realm.schema.objectSchema
    guard !classes.isEmpty else {
        print("\(path) stores no object classes (a storage-only file: see `strata trees \(path)`)")
        return ExitStatus.ok
    }
    let embedded = Set(classes.filter(\.isEmbedded).map(\.className))
    for (index, objectSchema) in classes.enumerated() {
        if index > 0 { print("") }
        let kind = objectSchema.isEmbedded ? "embedded class" : objectSchema.isAsymmetric ? "asymmetric class" : "class"
        let count = objectSchema.properties.count
        print("\(kind) \(objectSchema.className) (\(count) propert\(count == 1 ? "y" : "ies"))")
        let rows = objectSchema.properties.map { property in
            (property.name, typeName(of: property), attributes(of: property, embedded: embedded))
        }
        let nameWidth = (rows.map(\.0.count).max() ?? 0) + 2
        let typeWidth = (rows.map(\.1.count).max() ?? 0) + 2
        for row in rows {
            print("  " + padded(row.0, to: nameWidth) + (row.2.isEmpty ? row.1 : padded(row.1, to: typeWidth) + row.2))
        }
    }
    print("")
    print("Names are the persisted names that queries use. Swift property names (propertiesMapping) and")
    print("LinkingObjects properties are not stored in the file.")
    return ExitStatus.ok
}

/// `string?`, `list<int>`, `map<string, Dog?>`, `set<mixed>`: the stored type, its collection kind and
/// optionality.
func typeName(of property: Property) -> String {
    var element =
        property.type == .object
        ? property.objectClassName ?? "object" : property.type == .any ? "mixed" : property.type.rawValue
    if property.isOptional { element += "?" }
    if property.isArray { return "list<\(element)>" }
    if property.isSet { return "set<\(element)>" }
    if property.isMap { return "map<string, \(element)>" }
    return element
}

/// `primary key`, `indexed`, `full-text indexed`, `link`, `embedded`, comma-separated.
func attributes(of property: Property, embedded: Set<String>) -> String {
    var attributes: [String] = []
    if property.isPrimary {
        attributes.append("primary key")
    } else if property.isFullTextIndexed {
        attributes.append("full-text indexed")
    } else if property.isIndexed {
        attributes.append("indexed")
    }
    if property.type == .object, let target = property.objectClassName {
        attributes.append(embedded.contains(target) ? "embedded object" : "link to \(target)")
    }
    return attributes.joined(separator: ", ")
}

/// `strata dump FILE CLASS [--where RQL [--arg VALUE]...] [--limit N]`: the class's objects as JSON lines (see
/// ``ObjectJSON``); `arguments` are the values of `$0`, `$1`, … in the query.
func dumpObjects(_ path: String, className: String, query: String?, arguments: [Any?] = [], limit: Int?) -> Int32 {
    let (store, realm) = openRealmOrExit(path)
    let classes = realm.schema.objectSchema
    guard let objectSchema = realm.schema[className: className] else {
        let known = classes.filter { !$0.isEmbedded && !$0.isAsymmetric }.map(\.className)
        let raw =
            className.contains(":") || className.hasPrefix("$")
            ? "\nRaw storage trees are listed and dumped by `strata trees \(path) [TREE]`." : ""
        usageError(
            "\(path) has no class named \(className)"
                + (known.isEmpty ? " (it stores no object classes)" : "; its classes: \(known.joined(separator: ", "))")
                + raw)
    }
    if objectSchema.isEmbedded {
        usageError("\(className) is embedded: its objects are nested in their owners' lines; dump the owning class")
    }
    if objectSchema.isAsymmetric {
        usageError(
            "\(className) is asymmetric: its objects wait in the outbox and cannot be queried; see `strata trees \(path) o:\(className)`"
        )
    }
    var objects = realm.dynamicObjects(className)
    if let query {
        do {
            objects = try filter(objects, query, arguments)
        } catch let Realm.Error.invalidQuery(query, position, reason) {
            let caret = String(repeating: " ", count: position) + "^"
            fail("invalid query: \(reason)\n  \(query)\n  \(caret)", status: ExitStatus.usage)
        } catch {
            fail("invalid query \"\(query)\": \(error)", status: ExitStatus.usage)
        }
    }
    requireIntact(store, path: path, before: "dump \(className)")
    var printed = 0
    for object in objects {
        if let limit, printed >= limit { break }
        print(ObjectJSON.line(for: object))
        printed += 1
    }
    return ExitStatus.ok
}

/// The most `--arg` values a query takes: `checkedFilter` takes its arguments variadically, and Swift cannot spread
/// an array into variadic parameters, so each count is one call below.
let maximumQueryArguments = 8

/// `objects.checkedFilter(query, $0, $1, …)` with `arguments` (nil as `AnyRealmValue.none`, which a query compares
/// as nil).
private func filter(_ objects: Results<DynamicObject>, _ query: String, _ arguments: [Any?]) throws
    -> Results<DynamicObject>
{
    let a = arguments.map { $0 ?? AnyRealmValue.none }
    switch a.count {
    case 0: return try objects.checkedFilter(query)
    case 1: return try objects.checkedFilter(query, a[0])
    case 2: return try objects.checkedFilter(query, a[0], a[1])
    case 3: return try objects.checkedFilter(query, a[0], a[1], a[2])
    case 4: return try objects.checkedFilter(query, a[0], a[1], a[2], a[3])
    case 5: return try objects.checkedFilter(query, a[0], a[1], a[2], a[3], a[4])
    case 6: return try objects.checkedFilter(query, a[0], a[1], a[2], a[3], a[4], a[5])
    case 7: return try objects.checkedFilter(query, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
    default: return try objects.checkedFilter(query, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
    }
}

/// Ends the process with status 1 and one line naming the first problem when a page of `store`'s newest version is
/// damaged. Objects are read through `Results` and accessors, which cannot throw and stop the process on a page
/// they cannot read; the storage engine's `verify` reads every page through a path that can.
func requireIntact(_ store: Store, path: String, before action: String) {
    let report: VerifyReport
    do {
        report = try store.verify(rowTrees: isObjectRowTree)
    } catch {
        fail("cannot \(action): \(path) is damaged: \(error)")
    }
    guard let first = report.problems.first else { return }
    let count = report.problems.count + report.omittedProblems
    fail(
        "cannot \(action): \(path) is damaged (\(count) problem\(count == 1 ? "" : "s"), the first: \(first)); "
            + "`strata verify \(path)` lists them")
}
