import Foundation
import Strata
import StrataStorage
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real object file (every property type, indexes, primary keys, links and backlinks, a few thousand objects,
/// several versions) damaged in a few thousand seeded ways (``FileDamageKind``). Each variant is opened, read in
/// full, queried, written and read back through a Realm in a child process (`damaged-file-probe` in
/// IntegrationTests/Child/DamagedFileProbe.swift), which must end every variant with a clean result or a typed
/// error: no signal, no hang, no wrong data without an error. Runs on a plain and on an encrypted file (fewer
/// variants: on an encrypted file every damage to a page's bytes is a failed tag, so the kinds differ less).
@Suite("Damaged files", .serialized)
struct DamagedFileTests {
    /// Variants probed for a plain or an encrypted file.
    static func variants(_ encryption: FileEncryption) -> Int {
        switch encryption {
        case .plain: soak ? 20_000 : 2_000
        case .encrypted: soak ? 5_000 : 500
        }
    }
    /// `STRATA_DAMAGE_VARIANTS=12,345`: probe only these variants (to reproduce one; the totals are not checked).
    static var chosen: [Int]? {
        ProcessInfo.processInfo.environment["STRATA_DAMAGE_VARIANTS"].map {
            $0.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
    }
    /// Children run at a time (each takes its share of the variants in turn).
    static let shards = 2
    /// A variant that takes longer than this counts as a hang.
    static let deadline = 20.0
    /// Variants one child probes before a fresh one takes over. A Realm whose objects' collections were read stays
    /// alive for the process's lifetime (the objects and their collection accessors hold each other), so every
    /// variant's file, commit log and mapping stay open until the child exits: in memory (`/dev/shm`) that is
    /// about 7 MB a variant.
    static let variantsPerChild = 50

    /// What happened to one variant.
    enum Outcome: Equatable, Sendable {
        case clean
        /// The previous version was read, whole, and the open's recovery notice named the commit it dropped.
        case previous
        /// The previous version was read, whole, without a notice: the newest meta slot held an older intact meta
        /// (stale, or its version edited and sealed again), which is exactly what a crash just before the newest
        /// meta write leaves. Nothing in the file can tell the two apart, so only those damage kinds may do this.
        case unreported
        case error(kind: String, message: String)
        case wrong(String)
        /// The child died (a trap) with this message.
        case trap(String)
        case hang

        init(line: String) {
            let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
            let detail = fields.count > 1 ? fields[1] : ""
            switch fields[0] {
            case "clean": self = .clean
            case "previous": self = .previous
            case "unreported": self = .unreported
            case "error":
                let parts = detail.split(separator: "\t", maxSplits: 1).map(String.init)
                self = .error(kind: parts[0], message: parts.count > 1 ? parts[1] : "")
            default: self = .wrong(detail)
            }
        }
    }

    /// A directory in memory when there is one (each variant writes its own file and commit log).
    static func scratchDirectory() -> String {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
        let path = base + "strata-damage-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Probes `variants` in one child after another: a child that dies or hangs is replaced at the next
    /// variant.
    static func probe(
        _ variants: [Int], corpus: FileDamageCorpus, digests: [String], directory: String, shard: Int,
        encryption: FileEncryption
    ) throws -> [Int: (kind: FileDamageKind, outcome: Outcome)] {
        var results: [Int: (kind: FileDamageKind, outcome: Outcome)] = [:]
        var child: TimedChild?
        var probedByChild = 0
        for index in variants {
            let variant =
                index < 0
                ? FileDamageVariant(index: index, kind: .appendedBytes, image: corpus.base) : corpus.variant(index)
            let path = "\(directory)/variant-\(index).strata"
            _ = FileManager.default.createFile(atPath: path, contents: Data(variant.image))
            if probedByChild == variantsPerChild {
                child?.finish()
                child = nil
            }
            if child == nil {
                child = try TimedChild(
                    ["damaged-file-probe", "probe"] + digests, errorPath: "\(directory)/shard-\(shard).err",
                    encryption: encryption)
                probedByChild = 0
            }
            probedByChild += 1
            let running = child!
            running.send("variant \(index) \(path)")
            var outcome: Outcome?
            while outcome == nil {
                switch running.readLine(within: deadline) {
                case .line(let line):
                    if line.hasPrefix("outcome \(index) ") {
                        outcome = Outcome(line: String(line.dropFirst("outcome \(index) ".count)))
                    }
                case .ended:
                    outcome = .trap("\(running.termination()): \(running.stopMessage())")
                    child = nil
                case .timedOut:
                    running.kill()
                    outcome = .hang
                    child = nil
                }
            }
            for suffix in ["", ".lock", ".log"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            results[index] = (variant.kind, outcome!)
        }
        child?.finish()
        return results
    }

    /// What one run of the corpus produced.
    struct Run: Sendable {
        /// Why the probe file could not be built, if it could not.
        var buildFailure: String?
        /// The digests of a full read of the newest and the previous version.
        var digests: [String] = []
        var results: [Int: (kind: FileDamageKind, outcome: Outcome)] = [:]
        /// Shards that stopped with an error of the harness.
        var failures: [String] = []
    }

    /// Builds the probe file in `directory`, then probes the variants, `shards` children at a time. Blocks for
    /// minutes.
    static func run(in directory: String, encryption: FileEncryption) throws -> Run {
        var run = Run()
        let builder = try TimedChild(
            ["damaged-file-probe", "build", directory], errorPath: directory + "/build.err", encryption: encryption)
        guard case .line(let built) = builder.readLine(within: 300), built.hasPrefix("built ") else {
            run.buildFailure = "\(builder.termination()) \(builder.stopMessage())"
            return run
        }
        builder.finish()
        run.digests = built.split(separator: " ").dropFirst().map(String.init)
        let basePath = directory + "/newest.strata"
        let corpus = try FileDamageCorpus(
            base: Array(try Data(contentsOf: URL(fileURLWithPath: basePath))),
            previous: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/previous.strata"))),
            path: basePath, encryption: encryption)
        // Variant -1 - shard is the undamaged file: it must come out clean.
        let indices = chosen ?? Array(0..<variants(encryption))
        let shardIndices = (0..<shards).map { shard in
            [-1 - shard] + Array(stride(from: shard, to: indices.count, by: shards).map { indices[$0] })
        }
        let collected = Locked<[Int: (kind: FileDamageKind, outcome: Outcome)]>([:])
        let failures = Locked<[String]>([])
        let digests = run.digests
        DispatchQueue.concurrentPerform(iterations: shards) { shard in
            do {
                let results = try probe(
                    shardIndices[shard], corpus: corpus, digests: digests, directory: directory, shard: shard,
                    encryption: encryption)
                collected.withLock { $0.merge(results) { first, _ in first } }
            } catch {
                failures.withLock { $0.append("shard \(shard): \(error)") }
            }
        }
        run.results = collected.withLock { $0 }
        run.failures = failures.withLock { $0 }
        return run
    }

    /// Runs `body` on a thread of its own: it waits for child processes for minutes, and must not hold one of
    /// the cooperative pool's threads (two on a two-core machine), which other suites' async tests need.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result(catching: body)) }.start()
        }
    }

    @Test(arguments: FileEncryption.allCases)
    func damagedFilesEndInTypedErrorsNeverTrapsHangsOrWrongReads(_ encryption: FileEncryption) async throws {
        // A child that dies must not take the test with it when it is sent its next line.
        signal(SIGPIPE, SIG_IGN)
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await Self.offThePool { try Self.run(in: directory, encryption: encryption) }
        if let failure = run.buildFailure {
            Issue.record("the probe file was not built: \(failure)")
            return
        }
        let digests = run.digests
        #expect(digests.count == 2 && digests[0] != digests[1], "the newest commit must change what is read")
        let shardFailures = run.failures
        #expect(shardFailures.isEmpty, "\(shardFailures)")
        let results = run.results
        for shard in 0..<Self.shards {
            let intact = results[-1 - shard].map { "\($0.outcome)" } ?? "not probed"
            #expect(intact == "\(Outcome.clean)", "the undamaged file read as \(intact)")
        }
        let report = DamageReport(results.filter { $0.key >= 0 }, path: directory)
        print(report.table)
        if let chosen = Self.chosen {
            for index in chosen { print("#\(index) \(results[index].map { "\($0.kind): \($0.outcome)" } ?? "-")") }
        }
        // Counts first, so that a failure prints numbers and a few examples rather than every variant.
        let (variants, traps, hangs, untyped, pathless, wrong) = (
            report.variants, report.traps, report.hangs, report.untyped, report.pathless, report.wrong
        )
        #expect(variants == (Self.chosen?.count ?? Self.variants(encryption)))
        #expect(traps.count == 0, "variants that trapped, e.g. \(traps.prefix(5))")
        #expect(hangs.count == 0, "variants that hung: \(hangs.prefix(20))")
        #expect(untyped.count == 0, "errors that are not a Realm.Error: \(untyped.prefix(5))")
        #expect(pathless.count == 0, "incompatibleFile errors not naming the file: \(pathless.prefix(5))")
        // Every page a read uses is validated (checksum, version stamp, structure) and fields a checksum cannot
        // protect are checked against each other, so nothing is read as other data without an error; and a file
        // that opens at the previous commit says so (the child counts an unreported fallback as a wrong read).
        #expect(wrong.count == 0, "variants that read wrong data without an error, e.g. \(wrong.prefix(5))")
        let silent = report.unreported.filter { !$0.contains("staleMeta") && !$0.contains("metaFieldResealed") }
        #expect(silent.isEmpty, "variants that fell back a commit without a notice: \(silent.prefix(5))")
        #expect(
            Self.chosen != nil || (report.count(.clean) > 0 && report.typedErrors > 0),
            "the corpus must exercise both outcomes")
    }
}

/// The tally of a run, and the table printed for it.
struct DamageReport {
    let outcomes: [Int: (kind: FileDamageKind, outcome: DamagedFileTests.Outcome)]
    let path: String

    init(_ outcomes: [Int: (kind: FileDamageKind, outcome: DamagedFileTests.Outcome)], path: String) {
        self.outcomes = outcomes
        self.path = path
    }

    var variants: Int { outcomes.count }

    func count(_ outcome: DamagedFileTests.Outcome) -> Int { outcomes.values.filter { $0.outcome == outcome }.count }

    var typedErrors: Int {
        outcomes.values.filter {
            if case .error(let kind, _) = $0.outcome { return kind != "untyped" }
            return false
        }.count
    }

    private func messages(_ pick: (DamagedFileTests.Outcome) -> String?) -> [String] {
        outcomes.sorted { $0.key < $1.key }.compactMap { index, entry in
            pick(entry.outcome).map { "#\(index) \(entry.kind): \($0)" }
        }
    }

    var traps: [String] { messages { if case .trap(let message) = $0 { message } else { nil } } }
    var hangs: [String] { messages { $0 == .hang ? "hang" : nil } }
    var unreported: [String] { messages { $0 == .unreported ? "unreported" : nil } }
    var wrong: [String] { messages { if case .wrong(let detail) = $0 { detail } else { nil } } }
    var untyped: [String] {
        messages { if case .error("untyped", let message) = $0 { message } else { nil } }
    }
    var pathless: [String] {
        messages {
            if case .error("incompatibleFile", let message) = $0, !message.contains(path) { message } else { nil }
        }
    }

    /// One row per damage kind and a total: variants, clean, previous version (reported, and silent: see
    /// ``DamagedFileTests/Outcome/unreported``), typed errors, wrong reads, traps, hangs; then the error kinds and the distinct trap messages.
    var table: String {
        func row(_ name: String, _ entries: [(kind: FileDamageKind, outcome: DamagedFileTests.Outcome)]) -> String {
            var clean = 0
            var previous = 0
            var unreported = 0
            var errors = 0
            var wrong = 0
            var traps = 0
            var hangs = 0
            for entry in entries {
                switch entry.outcome {
                case .clean: clean += 1
                case .previous: previous += 1
                case .unreported: unreported += 1
                case .error: errors += 1
                case .wrong: wrong += 1
                case .trap: traps += 1
                case .hang: hangs += 1
                }
            }
            return [
                name, "\(entries.count)", "\(clean)", "\(previous)", "\(unreported)", "\(errors)", "\(wrong)",
                "\(traps)", "\(hangs)",
            ]
            .enumerated().map {
                $0.offset == 0
                    ? $0.element.padding(toLength: 24, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: max(0, 9 - $0.element.count)) + $0.element
            }.joined()
        }
        var lines = [
            "damage                  variants    clean previous   silent   errors    wrong    traps    hangs"
        ]
        for kind in FileDamageKind.allCases {
            lines.append(row(kind.rawValue, outcomes.values.filter { $0.kind == kind }))
        }
        lines.append(row("total", Array(outcomes.values)))
        var kinds: [String: Int] = [:]
        for entry in outcomes.values {
            if case .error(let kind, let message) = entry.outcome {
                let named = kind == "incompatibleFile" && message.contains("page") ? "incompatibleFile (page)" : kind
                kinds[named, default: 0] += 1
            }
        }
        lines.append(
            "errors: " + kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        var trapMessages: [String: Int] = [:]
        for message in traps {
            let text = message.split(separator: ":", maxSplits: 1).last.map(String.init) ?? message
            let normalised = text.replacingOccurrences(of: #"[0-9]+"#, with: "N", options: .regularExpression)
            trapMessages[String(normalised.prefix(160)), default: 0] += 1
        }
        for (message, count) in trapMessages.sorted(by: { $0.value > $1.value }) {
            lines.append("trap x\(count):\(message)")
        }
        for detail in wrong.prefix(10) { lines.append("wrong: \(detail)") }
        return lines.joined(separator: "\n")
    }
}
