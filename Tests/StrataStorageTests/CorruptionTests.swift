import Foundation
import Testing

@testable import StrataStorage

/// Damaged and hostile files: every one must produce typed errors only — never a crash, an out-of-bounds read
/// or a hang — whether it is opened, verified, read in full or written to.
@Suite("Corrupt files", .timeLimit(.minutes(5)))
struct CorruptionTests {
    static let pageSize = 1024
    static var mutations: Int { ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil ? 20_000 : 1_500 }

    /// A small file with several trees: keyed, list, nested trees and overflow values, plus free pages.
    /// Returns its bytes and the pages reachable from its newest version.
    static func baseImage() throws -> (image: [UInt8], live: [Int]) {
        let file = MemoryFile(name: "base")
        let store = try Store.open(file: file, options: StoreOptions(pageSize: pageSize))
        var generator = SeededGenerator(seed: 77)
        for round in 0..<6 {
            try store.write { txn in
                let keyed = try #require(try txn.tree(named: "keyed", create: .keyed))
                for k in 0..<300 {
                    try txn.put(
                        key(k * 7 + round),
                        [UInt8](repeating: UInt8(k & 0xFF), count: Int.random(in: 0..<60, using: &generator)), in: keyed
                    )
                }
                for k in stride(from: 0, to: 300, by: 5) { try txn.delete(key(k * 7 + round + 1), in: keyed) }
                let list = try #require(try txn.tree(named: "list", create: .list))
                for k in 0..<100 { try txn.append(key(k), to: list) }
                let nested = try #require(try txn.subtree(forKey: [0xEE] + key(round), in: keyed, create: .list))
                for k in 0..<50 { try txn.append(key(k), to: nested) }
                try txn.put([UInt8]("blob"), [UInt8](repeating: UInt8(round), count: 5000), in: keyed)
            }
        }
        #expect(try store.verify().isValid)
        return (file.snapshot(), try store.reachablePages().map(Int.init).filter { $0 >= 2 })
    }

    enum Mutation: CaseIterable {
        case flipBits, truncate, garbagePage, zeroPage, swapPages, fieldEditResealed, pointerLoopResealed, metaTampered
    }

    private static func seal(_ image: inout [UInt8], page: Int) {
        image.withUnsafeMutableBytes { bytes in
            PageChecksum.seal(bytes.baseAddress! + page * pageSize, page: PageNumber(page), pageSize: pageSize)
        }
    }

    private static func pageKind(_ image: [UInt8], _ page: Int) -> UInt8 { image[page * pageSize + PageHeader.kind] }

    /// Damages `image`. Page-level damage hits a live page (one reachable from the newest version): damage to a
    /// free page is harmless and, rightly, invisible.
    static func mutate(_ image: [UInt8], live: [Int], _ mutation: Mutation, _ generator: inout SeededGenerator)
        -> [UInt8]
    {
        var image = image
        let pages = image.count / pageSize
        let page = live.randomElement(using: &generator)!
        let base = page * pageSize
        switch mutation {
        case .flipBits:
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                image[Int.random(in: 0..<image.count, using: &generator)] ^=
                    UInt8(1) << UInt8.random(in: 0...7, using: &generator)
            }
        case .truncate:
            image.removeLast(Int.random(in: 1...image.count, using: &generator))
        case .garbagePage:
            for index in base..<(base + pageSize) { image[index] = UInt8.random(in: 0...255, using: &generator) }
        case .zeroPage:
            for index in base..<(base + pageSize) { image[index] = 0 }
        case .swapPages:
            let other = Int.random(in: 0..<pages, using: &generator) * pageSize
            for index in 0..<pageSize { image.swapAt(base + index, other + index) }
        case .fieldEditResealed:
            // Any header or slot or entry byte of a tree page, with the checksum fixed up: only structural
            // validation can catch it.
            guard page >= 2 else { break }
            let offset = Int.random(in: 16..<min(pageSize, 200), using: &generator)
            if Bool.random(using: &generator) {
                image[base + offset] = UInt8.random(in: 0...255, using: &generator)
            } else {
                let end = base + pageSize - 1 - Int.random(in: 0..<300, using: &generator)
                image[end] = UInt8.random(in: 0...255, using: &generator)
            }
            seal(&image, page: page)
        case .pointerLoopResealed:
            // Point a branch child at the page itself or at another page.
            let branches = live.filter { pageKind(image, $0) == PageKind.branch.rawValue }
            guard let branch = branches.randomElement(using: &generator) else { break }
            let branchBase = branch * pageSize
            let count = Int(
                UInt16(image[branchBase + PageHeader.count]) | UInt16(image[branchBase + PageHeader.count + 1]) << 8)
            guard count > 0 else { break }
            let slot = PageHeader.size + Int.random(in: 0..<count, using: &generator) * 2
            let offset = Int(UInt16(image[branchBase + slot]) | UInt16(image[branchBase + slot + 1]) << 8)
            guard offset + 6 <= pageSize else { break }
            let target =
                Bool.random(using: &generator)
                ? UInt32(branch) : UInt32.random(in: 0..<UInt32(pages), using: &generator)
            for byte in 0..<4 {
                image[branchBase + offset + 2 + byte] = UInt8(truncatingIfNeeded: target >> (8 * UInt32(byte)))
            }
            seal(&image, page: branch)
        case .metaTampered:
            // Plausible but wrong fields in a meta page, checksum fixed up.
            let slot = Int.random(in: 0...1, using: &generator)
            let field = [
                Meta.pageCountOffset, Meta.catalogOffset, Meta.catalogOffset + 4, Meta.catalogOffset + 8,
                Meta.freeTreeOffset, Meta.freeTreeOffset + 4, Meta.versionOffset,
            ].randomElement(using: &generator)!
            image[slot * pageSize + field] = UInt8.random(in: 0...255, using: &generator)
            image[slot * pageSize + field + 1] = UInt8.random(in: 0...3, using: &generator)
            seal(&image, page: slot)
        }
        return image
    }

    /// The newest version of the base file.
    static let baseVersion: UInt64 = 6

    /// Opens, verifies, reads everything and writes. Returns whether the damage was detected somewhere: an error,
    /// a problem found by verify, or recovery falling back to an older version because the newest commit's pages
    /// are not intact.
    static func exercise(_ image: [UInt8]) -> Bool {
        let store: Store
        do {
            store = try Store.open(
                file: FaultInjectingFile(name: "mutant", image: image), options: StoreOptions(pageSize: pageSize))
        } catch {
            return true  // rejected at open with a typed error
        }
        var detected = store.latestVersion < baseVersion
        if let report = try? store.verify() { detected = detected || !report.isValid } else { detected = true }
        do {
            let snapshot = try store.read()
            for name in try snapshot.treeNames() {
                guard let view = try snapshot.tree(named: name) else { continue }
                var cursor = view.makeCursor()
                var more = try cursor.first()
                while more {
                    _ = try cursor.value()
                    if try cursor.isSubtree() { _ = try cursor.subtree().entries() }
                    more = try cursor.next()
                }
                _ = try? view.get(key(21))
                _ = try? view.element(at: view.count / 2)
                _ = try? view.entries().reversed()
            }
        } catch {
            detected = true
        }
        do {
            try store.write { txn in
                let keyed = try txn.tree(named: "keyed", create: .keyed)!
                for k in 0..<40 { try txn.put(key(k * 3), [UInt8](repeating: 1, count: 30), in: keyed) }
                for k in 0..<40 { try txn.delete(key(k * 7), in: keyed) }
                if let list = try txn.tree(named: "list"), try txn.kind(of: list) == .list, try txn.count(in: list) > 3
                {
                    try txn.remove(at: 1, from: list)
                    try txn.insert([UInt8]("x"), at: 2, in: list)
                }
            }
            _ = try? store.verify()
        } catch {
            detected = true
        }
        return detected
    }

    @Test func mutatedFilesYieldTypedErrorsOnly() throws {
        let (base, live) = try Self.baseImage()
        #expect(try Store.open(file: FaultInjectingFile(name: "base", image: base)).latestVersion == Self.baseVersion)
        #expect(!Self.exercise(base), "the undamaged base file must pass everything")
        var generator = SeededGenerator(seed: 4242)
        var detected: [Mutation: Int] = [:]
        var total: [Mutation: Int] = [:]
        for index in 0..<Self.mutations {
            let mutation = Mutation.allCases[index % Mutation.allCases.count]
            let mutant = Self.mutate(base, live: live, mutation, &generator)
            // Only variants that changed a live page count (a page swapped with itself, a pointer set to the
            // page it already named, change nothing).
            let changed = live.contains { page in
                let range = (page * Self.pageSize)..<((page + 1) * Self.pageSize)
                return range.upperBound > mutant.count || mutant[range] != base[range]
            }
            guard changed else { continue }
            total[mutation, default: 0] += 1
            if Self.exercise(mutant) { detected[mutation, default: 0] += 1 }
        }
        // Damage to a live page that changes bytes its checksum covers, and a pointer edited and sealed again,
        // must always be caught (by open, verify, a read or a write); a truncated file either loses its newest
        // commits (recovery falls back to an older meta whose pages all remain) or is rejected. Flipped bits and
        // resealed field edits can hit unused bytes and stay harmless, so they only have to come out as typed
        // errors.
        for mutation in [Mutation.garbagePage, .zeroPage, .swapPages, .pointerLoopResealed] {
            #expect(
                detected[mutation, default: 0] == total[mutation, default: 0] && total[mutation, default: 0] > 0,
                "\(mutation): detected \(detected[mutation, default: 0]) of \(total[mutation, default: 0])")
        }
    }

    @Test func foreignAndEmptyFilesAreRejected() throws {
        let directory = TemporaryDirectory()
        let foreign = directory.file("foreign.txt")
        try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: foreign))
        #expect(throws: StorageError.incompatibleFile(path: foreign, reason: "not a Strata file (no Strata header)")) {
            try Store.open(path: foreign)
        }
        let tiny = directory.file("tiny")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: tiny))
        #expect(throws: StorageError.self) { try Store.open(path: tiny) }
        let missing = directory.file("missing.strata")
        #expect(throws: StorageError.fileNotFound(path: missing)) {
            try Store.open(path: missing, options: StoreOptions(createIfMissing: false))
        }
    }
}

/// Damage to the bytes of pages reachable from the newest version, with the checksum left as it was: every
/// variant must be caught — by open (recovery falling back counts), a full read of every tree, or `verify` —
/// and no variant may be read without an error as data that differs from the undamaged file.
@Suite("Damaged live pages", .timeLimit(.minutes(5)))
struct DamagedLivePageTests {
    static var variants: Int { ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil ? 6_000 : 600 }

    enum Damage: CaseIterable {
        case flipBits, garbage, zero, otherPage, byteRun, header
    }

    /// What a full read of every tree returns: each tree's name, then its entries (key, value), nested trees
    /// read in place of their descriptors.
    static func dump(_ store: Store) throws -> [[UInt8]] {
        let snapshot = try store.read()
        var out: [[UInt8]] = []
        func read(_ view: TreeView) throws {
            out.append([UInt8]("tree of \(view.count)"))
            var cursor = view.makeCursor()
            var more = try cursor.first()
            while more {
                out.append(try cursor.key())
                if try cursor.isSubtree() { try read(try cursor.subtree()) } else { out.append(try cursor.value()) }
                more = try cursor.next()
            }
        }
        for name in try snapshot.treeNames() {
            out.append(Array(name.utf8))
            if let view = try snapshot.tree(named: name) { try read(view) }
        }
        return out
    }

    enum Outcome: String, CaseIterable {
        case rejectedAtOpen = "rejected at open"
        case olderVersion = "opened at the commit before"
        case caughtByRead = "caught by the read"
        case caughtByVerify = "caught by verify"
        case wrongRead = "read as different data"
        case undetected = "not caught"
    }

    static func describe(_ counts: [Outcome: Int]) -> String {
        Outcome.allCases.compactMap { outcome in counts[outcome].map { "\(outcome.rawValue) \($0)" } }
            .joined(separator: ", ")
    }

    static func classify(_ image: [UInt8], expected: [[UInt8]]) -> Outcome {
        let store: Store
        do {
            store = try Store.open(
                file: FaultInjectingFile(name: "mutant", image: image),
                options: StoreOptions(pageSize: CorruptionTests.pageSize))
        } catch {
            return .rejectedAtOpen
        }
        if store.latestVersion < CorruptionTests.baseVersion { return .olderVersion }
        do {
            if try dump(store) != expected { return .wrongRead }
        } catch {
            return .caughtByRead
        }
        guard let report = try? store.verify() else { return .caughtByVerify }
        return report.isValid ? .undetected : .caughtByVerify
    }

    @Test func everyChangeToALivePageIsCaught() throws {
        let (base, live) = try CorruptionTests.baseImage()
        let pageSize = CorruptionTests.pageSize
        let expected = try Self.dump(Store.open(file: FaultInjectingFile(name: "base", image: base)))
        #expect(Self.classify(base, expected: expected) == .undetected, "the undamaged file reads back and verifies")
        var generator = SeededGenerator(seed: 1919)
        var outcomes: [Outcome: Int] = [:]
        var byDamage: [Damage: [Outcome: Int]] = [:]
        var tried = 0
        while tried < Self.variants {
            let damage = Damage.allCases[tried % Damage.allCases.count]
            let page = live.randomElement(using: &generator)!
            let start = page * pageSize
            var image = base
            switch damage {
            case .flipBits:
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    image[start + Int.random(in: 0..<pageSize, using: &generator)] ^=
                        UInt8(1) << UInt8.random(in: 0...7, using: &generator)
                }
            case .garbage:
                for index in start..<(start + pageSize) { image[index] = UInt8.random(in: 0...255, using: &generator) }
            case .zero:
                for index in start..<(start + pageSize) { image[index] = 0 }
            case .otherPage:
                // A misdirected write: another page's complete, correctly sealed image lands here.
                let other = Int.random(in: 0..<(base.count / pageSize), using: &generator) * pageSize
                for index in 0..<pageSize { image[start + index] = base[other + index] }
            case .byteRun:
                let offset = Int.random(in: 0..<pageSize, using: &generator)
                for index in offset..<min(pageSize, offset + Int.random(in: 1...64, using: &generator)) {
                    image[start + index] = UInt8.random(in: 0...255, using: &generator)
                }
            case .header:
                image[start + Int.random(in: 0..<PageHeader.size, using: &generator)] ^=
                    UInt8(1) << UInt8.random(in: 0...7, using: &generator)
            }
            guard image[start..<(start + pageSize)] != base[start..<(start + pageSize)] else { continue }
            tried += 1
            let outcome = Self.classify(image, expected: expected)
            outcomes[outcome, default: 0] += 1
            byDamage[damage, default: [:]][outcome, default: 0] += 1
        }
        let summary = Damage.allCases.map { "\($0): \(Self.describe(byDamage[$0] ?? [:]))" }.joined(separator: "; ")
        print("damaged live pages, \(tried) variants: \(Self.describe(outcomes)) — \(summary)")
        #expect(outcomes[.wrongRead, default: 0] == 0, "read with no error as different data: \(summary)")
        #expect(outcomes[.undetected, default: 0] == 0, "not caught at all: \(summary)")
    }
}
