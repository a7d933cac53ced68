import Foundation
import Strata
import StrataStorage

// `--json` of info, schema, verify and trees: one JSON object on one line, its keys fixed and documented in
// `strata COMMAND --help` and Documentation/CLI.md. Every key is always present (null when it has no value), so a
// script can rely on it.

extension JSONValue {
    static func int<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }
    static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
}

/// Prints `value` as one line.
func printJSON(_ value: JSONValue) { print(value.text) }

/// `kind` of a class: "object", "embedded" or "asymmetric".
func classKind(_ objectSchema: ObjectSchema) -> String {
    objectSchema.isEmbedded ? "embedded" : objectSchema.isAsymmetric ? "asymmetric" : "object"
}

/// `strata info FILE --json`; exit status 1 when the object schema cannot be read.
func printInfoJSON(path: String, stats: StoreStatistics, fileSize: Int, recovery: RecoveryNotice?) -> Int32 {
    let committed = Date(timeIntervalSince1970: Double(stats.commitTimeMicroseconds) / 1e6)
    var rows: [String: Int] = [:]
    for tree in stats.trees where tree.name.hasPrefix("o:") { rows[String(tree.name.dropFirst(2))] = tree.count }
    var schemaVersion = JSONValue.null
    var classes = JSONValue.null
    var classesError = JSONValue.null
    var status = ExitStatus.ok
    do {
        let realm = try openRealm(path)
        let objectSchema = realm.schema.objectSchema
        if !objectSchema.isEmpty { schemaVersion = .int(realm.configuration.schemaVersion) }
        classes = .array(
            objectSchema.map {
                .object([
                    ("name", .string($0.className)), ("kind", .string(classKind($0))),
                    ("objects", .int(rows[$0.className] ?? 0)),
                ])
            })
    } catch {
        classesError = .string(realmFailure(error, path: path))
        standardError("strata: \(realmFailure(error, path: path))")
        status = ExitStatus.failure
    }
    printJSON(
        .object([
            ("file", .string(path)), ("sizeBytes", .int(fileSize)), ("pageSize", .int(stats.pageSize)),
            ("pageCount", .int(stats.pageCount)), ("freePages", .int(stats.freePages)),
            ("version", .int(stats.version)), ("committed", .string(DateText.format(committed))),
            ("recovery", recoveryJSON(recovery)),
            (
                "trees",
                .array(
                    stats.trees.map {
                        .object([
                            ("name", .string($0.name)), ("kind", .string("\($0.kind)")), ("entries", .int($0.count)),
                        ])
                    })
            ),
            (
                "openReaders",
                .array(
                    stats.otherProcesses.map {
                        .object([
                            ("pid", .int($0.pid)),
                            ("pinnedVersion", $0.pinnedVersion == 0 ? .null : .int($0.pinnedVersion)),
                        ])
                    })
            ),
            ("schemaVersion", schemaVersion), ("classes", classes), ("classesError", classesError),
        ]))
    return status
}

/// `strata schema FILE --json`.
func schemaJSON(path: String, realm: Realm) -> JSONValue {
    let classes = realm.schema.objectSchema
    return .object([
        ("file", .string(path)),
        ("schemaVersion", classes.isEmpty ? .null : .int(realm.configuration.schemaVersion)),
        (
            "classes",
            .array(
                classes.map { objectSchema in
                    .object([
                        ("name", .string(objectSchema.className)), ("kind", .string(classKind(objectSchema))),
                        ("primaryKey", .optional(objectSchema.primaryKeyProperty?.name)),
                        ("properties", .array(objectSchema.properties.map(propertyJSON))),
                    ])
                })
        ),
    ])
}

private func propertyJSON(_ property: Property) -> JSONValue {
    let collection: String? = property.isArray ? "list" : property.isSet ? "set" : property.isMap ? "map" : nil
    return .object([
        ("name", .string(property.name)),
        ("type", .string(property.type == .any ? "mixed" : property.type.rawValue)),
        ("typeName", .string(typeName(of: property))), ("optional", .bool(property.isOptional)),
        ("collection", .optional(collection)),
        ("objectClass", .optional(property.type == .object ? property.objectClassName : nil)),
        ("primaryKey", .bool(property.isPrimary)), ("indexed", .bool(property.isIndexed)),
        ("fullTextIndexed", .bool(property.isFullTextIndexed)),
    ])
}

/// `strata verify FILE --json`: the storage report (or why checking stopped) and whether the schema reads.
func verifyJSON(
    path: String, report: VerifyReport?, stopped: String?, schemaClasses: Int?, schemaError: String?,
    recovery: RecoveryNotice?
) -> JSONValue {
    let valid = report?.isValid == true && stopped == nil && schemaError == nil
    return .object([
        ("file", .string(path)), ("valid", .bool(valid)),
        ("version", report.map { .int($0.version) } ?? .null),
        ("pageCount", report.map { .int($0.pageCount) } ?? .null),
        ("reachablePages", report.map { .int($0.reachablePages) } ?? .null),
        ("freePages", report.map { .int($0.freePages) } ?? .null),
        ("trees", report.map { .int($0.treeCount) } ?? .null),
        ("entries", report.map { .int($0.entryCount) } ?? .null),
        ("metaSlots", .array((report?.metaSlots ?? []).map(JSONValue.string))),
        (
            "problems",
            .array(
                (report?.problems ?? []).map {
                    .object([
                        ("page", $0.page.map { .int($0) } ?? .null), ("tree", .string($0.tree)),
                        ("message", .string($0.message)),
                    ])
                })
        ),
        ("omittedProblems", .int(report?.omittedProblems ?? 0)), ("error", .optional(stopped)),
        ("recovery", recoveryJSON(recovery)),
        (
            "objectSchema",
            .object([
                ("readable", .bool(schemaClasses != nil)), ("classes", schemaClasses.map { .int($0) } ?? .null),
                ("error", .optional(schemaError)),
            ])
        ),
    ])
}

/// One entry of `strata trees FILE TREE --json`.
func treeEntryJSON(index: Int?, key: [UInt8]?, value: [UInt8]?, subtreeEntries: Int?) -> JSONValue {
    .object([
        ("index", index.map { .int($0) } ?? .null), ("key", .optional(key.map(hex))),
        ("keyText", .optional(key.flatMap(text))), ("value", .optional(value.map(hex))),
        ("valueText", .optional(value.flatMap(text))), ("subtreeEntries", subtreeEntries.map { .int($0) } ?? .null),
    ])
}

/// Every byte as two lowercase hex digits.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 15)])
    }
    return text
}

/// The bytes as text when they are printable ASCII (as the text output shows them), else nil.
private func text(_ bytes: [UInt8]) -> String? {
    guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

/// A recovery notice (the file opened at the commit before a newest one it could not read), or null.
func recoveryJSON(_ notice: RecoveryNotice?) -> JSONValue {
    guard let notice else { return .null }
    return .object([
        ("openedVersion", .int(notice.openedVersion)),
        ("droppedVersion", notice.droppedVersion.map { .int($0) } ?? .null),
        ("page", notice.page.map { .int($0) } ?? .null), ("reason", .string(notice.reason)),
    ])
}
