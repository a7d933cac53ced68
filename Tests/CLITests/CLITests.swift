import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import StrataStorage

// MARK: Models stored in the files the CLI reads (the CLI itself knows none of them)

final class Customer: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var email: String?
    @Persisted var joined = Date(timeIntervalSince1970: 0)
    @Persisted var avatar: Data?
    @Persisted var balance: Decimal128 = 0
    @Persisted var ref = ObjectId()
    @Persisted var token = UUID()
    @Persisted var rating: Double?
    @Persisted var address: ShippingAddress?
    @Persisted var referrer: Customer?
    @Persisted var favourite: Gadget?
    @Persisted var tags: List<String>
    @Persisted var luckyNumbers: MutableSet<Int>
    @Persisted var settings: Map<String, String>
    @Persisted var gadgets: List<Gadget>
    @Persisted(indexed: .fullText) var bio = ""
    @Persisted var extra: AnyRealmValue
    @Persisted(originProperty: "referrer") var referrals: LinkingObjects<Customer>
}

final class ShippingAddress: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
}

/// A class without a primary key: links to it are written as its object key.
final class Gadget: Object {
    @Persisted var label = ""
}

final class AuditEvent: AsymmetricObject {
    @Persisted var action = ""
}

// MARK: Running the tool

/// The `strata` executable, built next to the test bundle.
let strataExecutable: URL = {
    #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("strata")
        }
    #endif
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("strata")
}()

/// What one run of `strata` printed, and how it ended.
struct ToolRun {
    let status: Int32
    let output: String
    let errors: String
    /// The non-empty lines of standard output.
    var lines: [String] { output.split(separator: "\n").map(String.init) }
}

/// Runs `strata arguments` to completion. Its output goes to files, so neither stream can fill a pipe and stall it.
func strata(_ arguments: String...) throws -> ToolRun { try strata(arguments: arguments) }

let setpriv = "/usr/bin/setpriv"

/// Runs `strata arguments` to completion (see ``strata(_:)``), as user and group `user` when given (the caller
/// must be root), with `environment` added to this process's (whose own `STRATA_ENCRYPTION_KEY` is left out).
func strata(arguments: [String], as user: Int? = nil, environment: [String: String] = [:]) throws -> ToolRun {
    let scratch = TemporaryDirectory()
    try Data().write(to: URL(fileURLWithPath: scratch.file("out")))
    try Data().write(to: URL(fileURLWithPath: scratch.file("err")))
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.file("out")))
    let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.file("err")))
    let process = Process()
    if let user {
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments =
            ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", strataExecutable.path] + arguments
    } else {
        process.executableURL = strataExecutable
        process.arguments = arguments
    }
    var inherited = ProcessInfo.processInfo.environment
    inherited["STRATA_ENCRYPTION_KEY"] = nil
    process.environment = inherited.merging(environment) { $1 }
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    process.waitUntilExit()
    try output.close()
    try errors.close()
    return ToolRun(
        status: process.terminationStatus,
        output: try String(contentsOfFile: scratch.file("out"), encoding: .utf8),
        errors: try String(contentsOfFile: scratch.file("err"), encoding: .utf8))
}

/// `text` parsed as JSON and written back with sorted keys: two texts of the same JSON value compare equal.
func canonicalJSON(_ text: String) throws -> String {
    let value = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
    return String(decoding: data, as: UTF8.self)
}

// MARK: Tests

@Suite("strata CLI")
struct CLITests {
    let directory = TemporaryDirectory()
    let path: String
    static let joined = Date(timeIntervalSince1970: 1_700_000_000)

    /// A file with three customers (two of them older than 30), two gadgets, two embedded addresses and an
    /// outbox entry, written with the library.
    init() throws {
        path = directory.file("shop.strata")
        let configuration = Realm.Configuration(
            fileURL: URL(fileURLWithPath: path), objectTypes: [Customer.self, Gadget.self, AuditEvent.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let lamp = realm.create(Gadget.self, value: ["label": "lamp"])
            let kettle = realm.create(Gadget.self, value: ["label": "kettle"])
            let ann = realm.create(
                Customer.self,
                value: [
                    "id": 1, "name": "Ann", "age": 34, "email": "ann@example.com", "joined": Self.joined,
                    "avatar": Data([1, 2, 3]), "balance": try Decimal128(string: "12.5"),
                    "ref": try ObjectId(string: "65a1b2c3d4e5f60718293a4b"),
                    "token": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, "rating": 4.5,
                    "address": ["street": "1 Main St", "city": "Oslo"], "favourite": lamp, "tags": ["a", "b"],
                    "luckyNumbers": [7, 3], "settings": ["theme": "dark", "lang": "en"], "gadgets": [lamp, kettle],
                    "bio": "likes \"lamps\"\nand kettles",
                ])
            ann.extra = AnyRealmValue.fromArray([.int(1), .string("two")])
            realm.create(
                Customer.self,
                value: [
                    "id": 2, "name": "Bob", "age": 25, "joined": Self.joined, "referrer": ann,
                    "address": ["street": "2 High St", "city": "Lima"],
                ])
            let cid = realm.create(
                Customer.self,
                value: [
                    "id": 3, "name": "Cid", "age": 41, "joined": Self.joined.addingTimeInterval(0.25),
                    "referrer": ann, "ref": try ObjectId(string: "65a1b2c3d4e5f60718293a4c"),
                    "token": UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
                ])
            cid.extra = .object(lamp)
            realm.create(AuditEvent.self, value: ["action": "import"])
        }
        // A last, small commit: most pages of the newest version were written by earlier ones.
        try realm.write { realm.object(ofType: Customer.self, forPrimaryKey: 2)?.age = 26 }
    }

    @Test func infoShowsTheStorageSummaryAndEveryClassWithItsObjectCount() throws {
        let run = try strata("info", path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.isEmpty)
        for label in ["file:", "size:", "version:", "free pages:", "trees:", "open readers:", "classes:"] {
            #expect(run.lines.contains { $0.hasPrefix(label) }, "no \(label) line in\n\(run.output)")
        }
        func classLine(_ name: String) -> String? {
            run.lines.first { $0.split(separator: " ").first.map(String.init) == name && $0.hasPrefix("  ") }
        }
        #expect(classLine("Customer")?.contains("3 objects") == true, "\(run.output)")
        #expect(classLine("Gadget")?.contains("2 objects") == true)
        #expect(classLine("ShippingAddress")?.contains("2 objects (embedded)") == true)
        #expect(classLine("AuditEvent")?.contains("1 object (asymmetric") == true)
        #expect(run.lines.contains { $0.contains("o:Customer") && $0.contains("3 entries") })
    }

    @Test func schemaListsEveryClassAndPropertyWithItsAttributes() throws {
        let run = try strata("schema", path)
        #expect(run.status == 0, "\(run.errors)")
        for header in [
            "asymmetric class AuditEvent (1 property)", "class Customer (19 properties)", "class Gadget (1 property)",
            "embedded class ShippingAddress (2 properties)",
        ] {
            #expect(run.lines.contains(header), "no \(header) in\n\(run.output)")
        }
        // The Customer section, each property line as its words.
        let start = try #require(run.lines.firstIndex(of: "class Customer (19 properties)"))
        var properties: [String: [String]] = [:]
        for line in run.lines[(start + 1)...] {
            guard line.hasPrefix("  ") else { break }
            let words = line.split(separator: " ").map(String.init)
            properties[words[0]] = Array(words.dropFirst())
        }
        #expect(properties.count == 19)
        #expect(properties["id"] == ["int", "primary", "key"])
        #expect(properties["name"] == ["string", "indexed"])
        #expect(properties["age"] == ["int"])
        #expect(properties["email"] == ["string?"])
        #expect(properties["joined"] == ["date"])
        #expect(properties["avatar"] == ["data?"])
        #expect(properties["balance"] == ["decimal128"])
        #expect(properties["ref"] == ["objectId"])
        #expect(properties["token"] == ["uuid"])
        #expect(properties["rating"] == ["double?"])
        #expect(properties["address"] == ["ShippingAddress?", "embedded", "object"])
        #expect(properties["referrer"] == ["Customer?", "link", "to", "Customer"])
        #expect(properties["tags"] == ["list<string>"])
        #expect(properties["luckyNumbers"] == ["set<int>"])
        #expect(properties["settings"] == ["map<string,", "string>"])
        #expect(properties["gadgets"] == ["list<Gadget>", "link", "to", "Gadget"])
        #expect(properties["bio"] == ["string", "full-text", "indexed"])
        #expect(properties["extra"] == ["mixed?"] || properties["extra"] == ["mixed"])
        #expect(properties["referrals"] == nil)  // linking objects are computed, not stored
    }

    @Test func dumpWithAQueryPrintsExactlyTheMatchingObjectsAsJSONLines() throws {
        let run = try strata("dump", path, "Customer", "--where", "age > 30")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.isEmpty)
        let ann = """
            {"id": 1, "name": "Ann", "age": 34, "email": "ann@example.com", "joined": "2023-11-14T22:13:20Z",
             "avatar": "AQID", "balance": "12.5", "ref": "65a1b2c3d4e5f60718293a4b",
             "token": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "rating": 4.5,
             "address": {"street": "1 Main St", "city": "Oslo"}, "referrer": null, "favourite": {"$key": 1},
             "tags": ["a", "b"], "luckyNumbers": [3, 7], "settings": {"lang": "en", "theme": "dark"},
             "gadgets": [{"$key": 1}, {"$key": 2}], "bio": "likes \\"lamps\\"\\nand kettles", "extra": [1, "two"]}
            """
        let cid = """
            {"id": 3, "name": "Cid", "age": 41, "email": null, "joined": "2023-11-14T22:13:20.250Z", "avatar": null,
             "balance": "0", "ref": "65a1b2c3d4e5f60718293a4c", "token": "00000000-0000-0000-0000-000000000001",
             "rating": null, "address": null, "referrer": 1, "favourite": null, "tags": [], "luckyNumbers": [],
             "settings": {}, "gadgets": [], "bio": "", "extra": {"$class": "Gadget", "$key": 1}}
            """
        #expect(run.lines.count == 2, "\(run.output)")
        #expect(try run.lines.map(canonicalJSON) == [canonicalJSON(ann), canonicalJSON(cid)], "\(run.output)")
        // Properties come in schema order.
        #expect(run.lines.first?.hasPrefix(#"{"id":1,"name":"Ann","age":34,"#) == true)
    }

    @Test func dumpNamesObjectsWithoutAPrimaryKeyByObjectKeyAndHonoursLimit() throws {
        let all = try strata("dump", path, "Gadget")
        #expect(all.status == 0, "\(all.errors)")
        #expect(all.lines == [#"{"$key":1,"label":"lamp"}"#, #"{"$key":2,"label":"kettle"}"#])
        let sorted = try strata("dump", path, "Customer", "--where", "TRUEPREDICATE SORT(age DESC)", "--limit", "1")
        #expect(sorted.status == 0, "\(sorted.errors)")
        #expect(try sorted.lines.map { try canonicalJSON($0) }.count == 1)
        #expect(sorted.lines.first?.hasPrefix(#"{"id":3,"#) == true)
    }

    @Test func aMalformedQueryExitsWithStatus2AndShowsTheQuery() throws {
        let run = try strata("dump", path, "Customer", "--where", "age >> 30")
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.errors.contains("invalid query"), "\(run.errors)")
        #expect(run.errors.contains("age >> 30"))
        #expect(run.errors.contains("^"))
        let unknown = try strata("dump", path, "Customer", "--where", "height > 2")
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("height"), "\(unknown.errors)")
    }

    @Test func verifyPassesOnAGoodFileAndFailsOnADamagedOne() throws {
        let good = try strata("verify", path)
        #expect(good.status == 0, "\(good.output)\(good.errors)")
        #expect(good.output.contains("OK: no problems found"))
        // Flip bytes in the middle of a page the newest version reaches (a free page's damage is harmless) but the
        // newest commit did not write: open checks the pages of the newest commit and falls back to the version
        // before when they are damaged, so only `verify` finds damage to older pages.
        let (page, pageSize) = try {
            let store = try Store.open(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
            let written = Set(try store.read().meta.written.map(\.page))
            let pages = try store.reachablePages().filter { $0 >= 2 && !written.contains($0) }
            return (try #require(pages.first), store.pageSize)
        }()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let offset = UInt64(Int(page) * pageSize + pageSize / 2)
        try handle.seek(toOffset: offset)
        let original = try #require(try handle.read(upToCount: 8))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(original.map { ~$0 }))
        try handle.close()
        let damaged = try strata("verify", path)
        #expect(damaged.status == 1, "\(damaged.output)\(damaged.errors)")
        #expect(damaged.errors.contains("is damaged"), "\(damaged.errors)")
        #expect(damaged.errors.contains("page \(page)"))
    }

    /// The pages of the newest version, and those its last commit wrote.
    private func pages() throws -> (reachable: [PageNumber], written: Set<PageNumber>, pageSize: Int) {
        let store = try Store.open(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
        return (try store.reachablePages(), Set(try store.read().meta.written.map(\.page)), store.pageSize)
    }

    /// `original` with page `page` zeroed, written over the file.
    private func zero(page: PageNumber, of original: Data, pageSize: Int) throws {
        var data = original
        let start = Int(page) * pageSize
        data.replaceSubrange(start..<(start + pageSize), with: Data(count: pageSize))
        try data.write(to: URL(fileURLWithPath: path))
    }

    @Test func dumpOfADamagedFileExitsWithStatus1AndOneLineInsteadOfCrashing() throws {
        // Zero, one at a time, every page of the newest version that its last commit did not write (those are
        // checked when the file opens): lists, sets, maps, embedded objects, rows, schema, indexes. Reading objects
        // cannot throw, so before this fix a damaged collection page stopped `dump` with a fatal error.
        let (reachable, written, pageSize) = try pages()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let damaged = reachable.filter { $0 >= 2 && !written.contains($0) }
        #expect(damaged.count > 10)
        for page in damaged {
            try zero(page: page, of: original, pageSize: pageSize)
            let run = try strata("dump", path, "Customer")
            #expect(run.status == 1, "page \(page): \(run.errors)")
            #expect(run.output.isEmpty, "page \(page)")
            #expect(run.errors.hasPrefix("strata: ") && run.errors.filter { $0 == "\n" }.count == 1, "\(run.errors)")
            #expect(
                run.errors.contains("is damaged") || run.errors.contains("cannot read the objects"),
                "page \(page): \(run.errors)")
        }
        try original.write(to: URL(fileURLWithPath: path))
        #expect(try strata("dump", path, "Customer").lines.count == 3)
    }

    @Test func aDamagedNewestCommitNextToItsLogIsExplained() throws {
        // The last commit's pages are also in the commit log beside the file. A read-only open falls back from the
        // damaged newest commit, sees the log ahead of it and must refuse; it used to say the log's commits were
        // "not yet applied", which hid the damage.
        #expect(FileManager.default.fileExists(atPath: path + ".log"))
        let (_, written, pageSize) = try pages()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let page = try #require(written.filter { $0 >= 2 }.min())
        try zero(page: page, of: original, pageSize: pageSize)
        for command in [["info", path], ["dump", path, "Customer"], ["verify", path]] {
            let run = try strata(arguments: command)
            #expect(run.status == 2, "\(command): \(run.errors)")
            #expect(
                run.errors.contains("the newest commit in the file (version 3) fails its checks"),
                "\(command): \(run.errors)")
            #expect(run.errors.contains("page \(page) is not as written"), "\(run.errors)")
            #expect(run.errors.contains("or the file was damaged since"))
            #expect(run.errors.contains(".log holds commits up to version 3: open the file read-write once"))
            #expect(!run.errors.contains("not yet applied"))
        }
        // As the message says, a read-write open restores the commit from the log.
        _ = try Store.open(path: path, options: StoreOptions(createIfMissing: false))
        let verified = try strata("verify", path)
        #expect(verified.status == 0, "\(verified.errors)")
        let bob = try strata("dump", path, "Customer", "--where", "id == 2")
        #expect(bob.lines.first?.contains(#""age":26"#) == true, "\(bob.output)")
    }

    @Test func infoAndVerifySayWhichCommitADamagedNewestMetaPageDropped() throws {
        // Without its commit log, a file whose newest meta page (version 3, slot 1) is damaged opens at version 2.
        try FileManager.default.removeItem(atPath: path + ".log")
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(try pages().pageSize + 72))
        try handle.write(contentsOf: Data([0xFF, 0xFF]))
        try handle.close()
        let line = "opened version 2; dropped version 3: meta page 1 is unreadable (checksum mismatch)"
        let info = try strata("info", path)
        #expect(info.status == 0, "\(info.errors)")
        #expect(info.lines.contains("recovery:       \(line)"), "\(info.output)")
        #expect(info.lines.contains { $0.hasPrefix("version:        2,") }, "\(info.output)")
        let verify = try strata("verify", path)
        #expect(verify.status == 0, "\(verify.errors)")
        #expect(verify.lines.contains("recovery: \(line)"), "\(verify.output)")
        for command in ["info", "verify"] {
            let run = try strata(command, path, "--json")
            let recovery = try #require(try jsonObject(run.output)["recovery"] as? [String: Any], "\(command)")
            #expect(recovery["openedVersion"] as? Int == 2 && recovery["droppedVersion"] as? Int == 3, "\(command)")
            #expect(recovery["page"] as? Int == 1 && recovery["reason"] as? String != nil, "\(command)")
        }
    }

    @Test func filesThatCannotBeOpenedExitWithStatus2AndSayWhy() throws {
        let missing = directory.file("missing.strata")
        let run = try strata("info", missing)
        #expect(run.status == 2)
        #expect(run.errors == "strata: cannot open \(missing): no such file\n")
        #expect(!FileManager.default.fileExists(atPath: missing))  // never created
        let foreign = directory.file("notes.txt")
        try Data(String(repeating: "not a database\n", count: 400).utf8).write(to: URL(fileURLWithPath: foreign))
        for command in ["info", "schema", "verify"] {
            let run = try strata(command, foreign)
            #expect(run.status == 2, "\(command)")
            #expect(run.errors.hasPrefix("strata: cannot open \(foreign): "), "\(command): \(run.errors)")
            #expect(run.errors.contains("not a Strata file"), "\(command): \(run.errors)")
        }
        let folder = try strata("dump", directory.path, "Customer")
        #expect(folder.status == 2)
        #expect(folder.errors.contains("is a directory"))
    }

    /// Root reads every file, so as root the tool runs as `nobody` (through `setpriv`).
    @Test(.enabled(if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: setpriv)))
    func anUnreadableFileExitsWithStatus2() throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let arguments = ["info", path]
        let run = try getuid() == 0 ? strata(arguments: arguments, as: 65534) : strata(arguments: arguments)
        #expect(run.status == 2)
        #expect(
            run.errors == "strata: cannot open \(path): permission denied (the file is not readable by this user)\n")
    }

    @Test func usageErrorsExitWithStatus2AndSayWhatIsWrong() throws {
        let help = try strata("help")
        #expect(help.status == 0)
        #expect(help.output.contains("EXIT STATUS"))
        let cases: [(arguments: [String], message: String)] = [
            (["frobnicate"], "unknown command frobnicate"),
            (["info"], "usage: strata info FILE"),
            (["dump", path], "dump needs a class"),
            (["dump", path, "Nope"], "has no class named Nope; its classes: Customer, Gadget"),
            (["dump", path, "ShippingAddress"], "ShippingAddress is embedded"),
            (["dump", path, "Customer", "--limit", "many"], "--limit needs a number"),
            (["dump", path, "Customer", "--where"], "--where needs a value"),
            (["info", path, "--where", "age > 1"], "info does not take --where"),
            (["schema", path, "--bogus"], "unknown option --bogus"),
        ]
        for (arguments, message) in cases {
            let run = try strata(arguments: arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.output.isEmpty, "\(arguments)")
            #expect(run.errors.hasPrefix("strata: "), "\(arguments): \(run.errors)")
            #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
    }

    @Test func treesListsTheStorageTreesAndTheirRawEntries() throws {
        let list = try strata("trees", path)
        #expect(list.status == 0, "\(list.errors)")
        #expect(list.lines.contains { $0.hasPrefix("o:Gadget ") && $0.hasSuffix("keyed, 2 entries") }, "\(list.output)")
        let entries = try strata("trees", path, "$schema", "--limit", "1")
        #expect(entries.status == 0)
        #expect(entries.lines.count == 2, "\(entries.output)")
        #expect(entries.lines.last?.hasPrefix("… ") == true)
    }
}
