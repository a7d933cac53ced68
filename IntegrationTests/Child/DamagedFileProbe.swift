import Foundation
import Strata

// The child side of the damaged-file corpus test (IntegrationTests/Suites/DamagedFileTests.swift).
//
//   damaged-file-probe build DIR
//       writes DIR/newest.strata (the newest version) and DIR/previous.strata (the same file one commit earlier),
//       then prints "built NEWEST PREVIOUS": the digests of a full read of each
//   damaged-file-probe probe NEWEST PREVIOUS
//       for each line "variant INDEX PATH" on standard input: prints "begin INDEX", opens the file at PATH, reads
//       every object, property and collection, runs queries, writes and commits, reads the write back, then
//       prints "outcome INDEX CLASS DETAIL" and deletes the file; CLASS is one of
//         clean     everything read equals the newest version and the write committed and reads back
//         previous  everything read equals the previous version, the open's recovery notice said which newer
//                   commit it dropped, and nothing reported an error
//         unreported  the same without a notice: nothing in the file tells a dropped commit (an older intact meta
//                   page in the newest slot is what a crash just before the newest meta write leaves)
//         error     a call threw, or the Realm reported damage, before anything wrong was seen
//         wrong     what was read differs from both versions (or the write did not read back) and nothing
//                   reported it
//       DETAIL is, for errors, "KIND<TAB>DESCRIPTION" (KIND: the Realm.Error case, "untyped" for anything else)
//       and, for wrong reads, what differed.

/// Entry point of the `damaged-file-probe` mode.
func runDamagedFileProbe(_ arguments: [String]) throws {
    guard arguments.count >= 3 else { fail("damaged-file-probe: build DIR | probe NEWEST PREVIOUS") }
    switch arguments[2] {
    case "build":
        guard arguments.count >= 4 else { fail("damaged-file-probe build needs a directory") }
        let directory = arguments[3]
        try DamageProbeData.build(path: directory + "/previous.strata", commits: DamageProbeData.commits - 1)
        try DamageProbeData.build(path: directory + "/newest.strata", commits: DamageProbeData.commits)
        let newest = try DamageProbeReader.digest(ofCopyOf: directory + "/newest.strata")
        let previous = try DamageProbeReader.digest(ofCopyOf: directory + "/previous.strata")
        say("built \(newest) \(previous)")
    case "probe":
        guard arguments.count >= 5 else { fail("damaged-file-probe probe needs the two digests") }
        let expected = (newest: arguments[3], previous: arguments[4])
        while let line = readLine() {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count == 3, parts[0] == "variant" else { fail("unexpected input \(line)") }
            say("begin \(parts[1])")
            let outcome = DamageProbeReader.probe(path: parts[2], expected: expected)
            for suffix in ["", ".lock", ".log"] { try? FileManager.default.removeItem(atPath: parts[2] + suffix) }
            say("outcome \(parts[1]) \(outcome)")
        }
    default:
        fail("damaged-file-probe: unknown step \(arguments[2])")
    }
}

// MARK: The models: every property type, indexes, primary keys, links, backlinks, embedded objects.

final class ProbeOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var small: Int8 = 0
    @Persisted var medium: Int32 = 0
    @Persisted var flag = false
    @Persisted var score = 0.0
    @Persisted var ratio: Float = 0
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var blob = Data()
    @Persisted var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Persisted var objectId = ObjectId()
    @Persisted var amount = Decimal128(0)
    @Persisted var nickname: String?
    @Persisted var maybeAge: Int?
    @Persisted var biography = ""
    @Persisted var anything: AnyRealmValue = .none
    @Persisted var address: ProbeAddress?
    @Persisted var pet: ProbePet?
    @Persisted var pets: List<ProbePet>
    @Persisted var numbers: List<Int>
    @Persisted var places: List<ProbeAddress>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var mixedList: List<AnyRealmValue>
}

final class ProbePet: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted(indexed: true) var kind = ""
    @Persisted var weight = 0.0
    @Persisted(originProperty: "pets") var owners: LinkingObjects<ProbeOwner>
}

final class ProbeAddress: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var zip = 0
}

final class ProbeEvent: Object {
    @Persisted(indexed: true) var day = 0
    @Persisted var note = ""
    @Persisted var pet: ProbePet?
}

/// The content of the probe file: deterministic, so that the file's pages are the same on every run.
enum DamageProbeData {
    /// Write transactions after the one that registers the classes.
    static let commits = 4
    static let owners = 40
    static let pets = 20
    static let events = 2_000

    static func configuration(_ path: String, readOnly: Bool = false) -> Realm.Configuration {
        Realm.Configuration(
            fileURL: URL(fileURLWithPath: path), encryptionKey: encryption.key.map { Data($0) }, readOnly: readOnly,
            objectTypes: [ProbeOwner.self, ProbePet.self, ProbeAddress.self, ProbeEvent.self])
    }

    static func petCode(_ n: Int) -> String { "pet-\(n)" }

    static func text(_ seed: Int, length: Int) -> String {
        let words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris", "juniper"]
        var result = ""
        var n = seed
        while result.utf8.count < length {
            result += words[n % words.count] + " "
            n = (n &* 31 &+ 7) & 0xFFFF
        }
        return result
    }

    /// Builds the file at `path` with the class registration and the first `commits` write transactions.
    static func build(path: String, commits: Int) throws {
        let realm = try Realm(configuration: configuration(path))
        if commits >= 1 {
            try realm.write {
                for n in 0..<pets {
                    realm.create(
                        ProbePet.self,
                        value: [
                            "code": petCode(n), "kind": ["cat", "dog", "fish", "owl"][n % 4], "weight": Double(n) / 4,
                        ])
                }
                for n in 0..<owners { realm.add(makeOwner(n, realm: realm)) }
            }
        }
        if commits >= 2 {
            try realm.write {
                for n in 0..<events {
                    let event = ProbeEvent()
                    event.day = n % 97
                    event.note = n % 50 == 0 ? text(n, length: 1_500) : "note \(n)"
                    event.pet = realm.object(ofType: ProbePet.self, forPrimaryKey: petCode(n % pets))
                    realm.add(event)
                }
            }
        }
        if commits >= 3 {
            try realm.write {
                for n in stride(from: 0, to: owners, by: 3) {
                    guard let owner = realm.object(ofType: ProbeOwner.self, forPrimaryKey: n) else { continue }
                    owner.age += 1
                    owner.tags.insert("third")
                    owner.numbers.append(n * 3)
                    owner.scores["third"] = n
                }
                realm.delete(realm.objects(ProbeEvent.self).filter("day == 13"))
            }
        }
        if commits >= 4 {
            // The newest commit touches every class, so that losing it changes what every reader sees.
            try realm.write {
                for n in stride(from: 1, to: owners, by: 4) {
                    guard let owner = realm.object(ofType: ProbeOwner.self, forPrimaryKey: n) else { continue }
                    owner.name = "renamed \(n)"
                    owner.pets.removeAll()
                    owner.anything = .string("newest \(n)")
                }
                for n in 0..<40 {
                    realm.create(ProbeEvent.self, value: ["day": 200 + n, "note": "newest \(n)"])
                }
                if let pet = realm.object(ofType: ProbePet.self, forPrimaryKey: petCode(5)) { realm.delete(pet) }
                if let owner = realm.object(ofType: ProbeOwner.self, forPrimaryKey: owners - 1) {
                    realm.delete(owner)
                }
            }
        }
    }

    static func makeOwner(_ n: Int, realm: Realm) -> ProbeOwner {
        let owner = ProbeOwner()
        owner.id = n
        owner.name = "owner \(n)"
        owner.age = n % 90
        owner.small = Int8(truncatingIfNeeded: n)
        owner.medium = Int32(n * 1_000)
        owner.flag = n % 2 == 0
        owner.score = Double(n) * 1.5
        owner.ratio = Float(n) / 7
        owner.born = Date(timeIntervalSince1970: Double(n) * 86_400)
        owner.blob = Data((0..<(n % 40)).map { UInt8(truncatingIfNeeded: $0 &* n) })
        owner.uuid = UUID(
            uuid: (
                UInt8(n & 0xFF), UInt8(n >> 8), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, UInt8(n % 251)
            ))
        owner.objectId = (try? ObjectId(string: String(format: "%024x", n * 7_919))) ?? ObjectId()
        owner.amount = Decimal128(n) / Decimal128(100)
        owner.nickname = n % 3 == 0 ? nil : "nick \(n)"
        owner.maybeAge = n % 5 == 0 ? nil : n
        owner.biography = n % 25 == 0 ? text(n, length: 6_000) : text(n, length: 60)
        switch n % 5 {
        case 0: owner.anything = .int(n)
        case 1: owner.anything = .string("any \(n)")
        case 2: owner.anything = .double(Double(n) / 3)
        case 3: owner.anything = .none
        default: owner.anything = .bool(n % 2 == 0)
        }
        let address = ProbeAddress()
        address.city = "city \(n % 17)"
        address.zip = 10_000 + n
        owner.address = n % 4 == 3 ? nil : address
        owner.pet = realm.object(ofType: ProbePet.self, forPrimaryKey: petCode(n % pets))
        for k in 0..<(n % 6) {
            if let pet = realm.object(ofType: ProbePet.self, forPrimaryKey: petCode((n + k * 11) % pets)) {
                owner.pets.append(pet)
            }
        }
        owner.numbers.append(objectsIn: (0..<(n % 9)).map { $0 * n })
        for k in 0..<(n % 3) {
            let place = ProbeAddress()
            place.city = "place \(k)"
            place.zip = k
            owner.places.append(place)
        }
        owner.tags.insert(objectsIn: (0..<(n % 5)).map { "tag\($0 * 3 % 7)" })
        for k in 0..<(n % 4) { owner.scores["k\(k)"] = k * n }
        owner.mixedList.append(objectsIn: [.int(n), .string("m\(n)"), .none])
        return owner
    }
}

/// Reads a probe file through a Realm and reduces everything read to a digest.
enum DamageProbeReader {
    /// FNV-1a over the text of everything read. With `STRATA_DAMAGE_TRACE` set to a directory, the text is also
    /// written there (`<file name>.txt`), to compare what a damaged variant read with what the intact file holds.
    struct Digest {
        private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325
        var trace: FileHandle?

        mutating func add(_ text: String) {
            trace?.write(Data((text + "\n").utf8))
            for byte in text.utf8 {
                value ^= UInt64(byte)
                value = value &* 0x0000_0100_0000_01B3
            }
            value ^= 0xFF
            value = value &* 0x0000_0100_0000_01B3
        }

        var hex: String { String(value, radix: 16) }
    }

    /// The digest of a full read of a copy of `path` (so that the original stays byte for byte as written).
    static func digest(ofCopyOf path: String) throws -> String {
        let copy = path + ".digest-copy"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        defer { for suffix in ["", ".lock", ".log"] { try? FileManager.default.removeItem(atPath: copy + suffix) } }
        let realm = try Realm(configuration: DamageProbeData.configuration(copy, readOnly: true))
        var digest = Digest()
        readEverything(realm, into: &digest)
        try queryEverything(realm, into: &digest)
        return digest.hex
    }

    static func describe(_ owner: ProbeOwner) -> String {
        var parts: [String] = [
            "\(owner.id)", owner.name, "\(owner.age)", "\(owner.small)", "\(owner.medium)", "\(owner.flag)",
            "\(owner.score)", "\(owner.ratio)", "\(owner.born.timeIntervalSince1970)", owner.blob.base64EncodedString(),
            owner.uuid.uuidString, owner.objectId.stringValue, owner.amount.stringValue, owner.nickname ?? "nil",
            owner.maybeAge.map { "\($0)" } ?? "nil", owner.biography, "\(owner.anything)",
            owner.address.map { "\($0.city)/\($0.zip)" } ?? "no address", owner.pet?.code ?? "no pet",
        ]
        parts.append(owner.pets.map(\.code).joined(separator: ","))
        parts.append(owner.numbers.map { "\($0)" }.joined(separator: ","))
        parts.append(owner.places.map { "\($0.city)/\($0.zip)" }.joined(separator: ","))
        parts.append(owner.tags.sorted().joined(separator: ","))
        parts.append(owner.scores.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ","))
        parts.append(owner.mixedList.map { "\($0)" }.joined(separator: ","))
        parts.append("\(owner.pets.count) \(owner.numbers.count) \(owner.tags.count) \(owner.scores.count)")
        return parts.joined(separator: "|")
    }

    /// Every object, every property, every collection.
    static func readEverything(_ realm: Realm, into digest: inout Digest) {
        let owners = realm.objects(ProbeOwner.self)
        digest.add("owners \(owners.count)")
        for owner in owners { digest.add(describe(owner)) }
        let pets = realm.objects(ProbePet.self)
        digest.add("pets \(pets.count)")
        for pet in pets {
            digest.add("\(pet.code)|\(pet.kind)|\(pet.weight)|\(pet.owners.count)")
            digest.add(pet.owners.map { "\($0.id)" }.sorted().joined(separator: ","))
        }
        let events = realm.objects(ProbeEvent.self)
        digest.add("events \(events.count)")
        for event in events { digest.add("\(event.day)|\(event.note)|\(event.pet?.code ?? "-")") }
    }

    /// Queries: indexed and unindexed, RQL and type-safe, sorted, aggregates, primary-key lookups.
    static func queryEverything(_ realm: Realm, into digest: inout Digest) throws {
        let owners = realm.objects(ProbeOwner.self)
        let events = realm.objects(ProbeEvent.self)
        let pets = realm.objects(ProbePet.self)
        func ids(_ results: Results<ProbeOwner>) -> String { results.map { "\($0.id)" }.joined(separator: ",") }
        digest.add(ids(owners.filter("age > 40 AND flag == true")))
        digest.add(ids(owners.filter("name BEGINSWITH 'renamed'")))
        digest.add(ids(owners.filter("name == $0", "owner 42")))
        digest.add(ids(owners.where { $0.score < 90 && $0.nickname != nil }))
        digest.add(ids(owners.sorted(byKeyPath: "score", ascending: false)))
        digest.add(ids(owners.filter("ANY pets.kind == 'owl'").sorted(byKeyPath: "name")))
        digest.add(ids(try owners.checkedFilter("tags CONTAINS 'third' OR scores.@count > 2")))
        digest.add("\(owners.sum(ofProperty: "age") as Int) \(owners.max(ofProperty: "score") as Double? ?? -1)")
        digest.add("\(events.filter("day == 5").count) \(events.filter("day BETWEEN {200, 220}").count)")
        digest.add("\(events.filter("note CONTAINS 'ember'").count) \(events.where { $0.pet.weight > 3 }.count)")
        digest.add(pets.filter("kind == 'dog'").sorted(byKeyPath: "weight").map(\.code).joined(separator: ","))
        for key in [0, 7, 42, 151, DamageProbeData.owners - 1] {
            digest.add(realm.object(ofType: ProbeOwner.self, forPrimaryKey: key).map(describe) ?? "no owner \(key)")
        }
        for key in [0, 5, 77] {
            digest.add(realm.object(ofType: ProbePet.self, forPrimaryKey: DamageProbeData.petCode(key))?.kind ?? "none")
        }
    }

    /// What the Realm reports about damage found by reads that could not throw.
    static func reportedDamage(_ realm: Realm) -> (any Error)? {
        realm.damage
    }

    /// Opens, reads, queries, writes and reads back the file at `path`; the outcome line's class and detail.
    static func probe(path: String, expected: (newest: String, previous: String)) -> String {
        var digest = Digest()
        if let directory = ProcessInfo.processInfo.environment["STRATA_DAMAGE_TRACE"] {
            let trace = directory + "/" + URL(fileURLWithPath: path).lastPathComponent + ".txt"
            _ = FileManager.default.createFile(atPath: trace, contents: nil)
            digest.trace = FileHandle(forWritingAtPath: trace)
        }
        var stage = "open"
        do {
            let realm = try Realm(configuration: DamageProbeData.configuration(path))
            stage = "read"
            readEverything(realm, into: &digest)
            stage = "query"
            try queryEverything(realm, into: &digest)
            if let damage = reportedDamage(realm) { return classify(damage, stage: stage) }
            let version: String
            switch digest.hex {
            case expected.newest: version = "newest"
            case expected.previous:
                // Falling back a commit is recovery, and the open says which commit it dropped, unless the file
                // is exactly what a crash before the newest meta write leaves (see `unreported` above).
                version = realm.recoveryNotice != nil ? "previous" : "unreported"
            default: return "wrong read \(digest.hex) is neither version"
            }
            stage = "write"
            let target = realm.object(ofType: ProbeOwner.self, forPrimaryKey: 7)
            let age = target?.age ?? 0
            let dayCount = realm.objects(ProbeEvent.self).filter("day == 999").count
            try realm.write {
                target?.age += 1_000
                target?.numbers.append(424_242)
                target?.tags.insert("written")
                target?.scores["written"] = 1
                realm.create(ProbeEvent.self, value: ["day": 999, "note": "written"])
                if let event = realm.objects(ProbeEvent.self).filter("day == 3").first { realm.delete(event) }
            }
            stage = "read back"
            let reread = realm.object(ofType: ProbeOwner.self, forPrimaryKey: 7)
            if let damage = reportedDamage(realm) { return classify(damage, stage: stage) }
            guard reread?.age == (target == nil ? nil : age + 1_000),
                reread.map({ $0.numbers.last == 424_242 && $0.tags.contains("written") }) ?? true,
                realm.objects(ProbeEvent.self).filter("day == 999").count == dayCount + 1
            else { return "wrong write did not read back" }
            return version == "newest" ? "clean" : version
        } catch {
            return classify(error, stage: stage)
        }
    }

    static func classify(_ error: any Error, stage: String) -> String {
        let text = "\(stage): \(error)".replacingOccurrences(of: "\n", with: " ")
        guard let error = error as? Realm.Error else { return "error untyped\t\(text)" }
        let kind: String
        switch error {
        case .incompatibleFile: kind = "incompatibleFile"
        case .fileAccess: kind = "fileAccess"
        case .fileNotFound: kind = "fileNotFound"
        case .schemaMismatch: kind = "schemaMismatch"
        case .migrationRequired: kind = "migrationRequired"
        case .invalidSchemaVersion: kind = "invalidSchemaVersion"
        case .primaryKeyExists: kind = "primaryKeyExists"
        case .invalidValue: kind = "invalidValue"
        case .invalidatedObject: kind = "invalidatedObject"
        default: kind = "other"
        }
        return "error \(kind)\t\(text)"
    }
}
