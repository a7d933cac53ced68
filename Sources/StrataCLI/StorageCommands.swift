import Strata
import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Commands on the storage layer: integrity, raw trees, compaction and a quick benchmark.

/// Whether the tree `name` holds an object class's rows (`o:<class>`), whose values `verify` also checks as rows.
func isObjectRowTree(_ name: String) -> Bool { name.hasPrefix("o:") }

/// `strata verify FILE [--json]`: checks every page reachable from the newest version, then that the object schema
/// reads. 0 when intact, 1 when damaged.
func verify(_ path: String, json: Bool = false) -> Int32 {
    let store = openStore(path)
    if json { return verifyWithJSON(path, store: store) }
    if let notice = store.recovery { print("recovery: \(notice)") }
    let report: VerifyReport
    do {
        report = try store.verify(rowTrees: isObjectRowTree)
    } catch {
        print("verify stopped: \(error)")
        standardError("strata: \(path) is damaged: \(error)")
        return ExitStatus.failure
    }
    print(report)
    guard report.isValid else {
        let count = report.problems.count + report.omittedProblems
        standardError(
            "strata: \(path) is damaged: \(count) problem\(count == 1 ? "" : "s") found, the first: \(report.problems[0])"
        )
        return ExitStatus.failure
    }
    do {
        let classes = try openRealm(path).schema.objectSchema.count
        print("object schema: \(classes) class\(classes == 1 ? "" : "es"), readable")
    } catch {
        standardError("strata: \(path) is damaged: \(realmFailure(error, path: path))")
        return ExitStatus.failure
    }
    return ExitStatus.ok
}

/// `strata verify FILE --json`: the same checks, reported as one JSON object.
private func verifyWithJSON(_ path: String, store: Store) -> Int32 {
    var report: VerifyReport?
    var stopped: String?
    do {
        report = try store.verify(rowTrees: isObjectRowTree)
    } catch {
        stopped = "\(error)"
    }
    var classes: Int?
    var schemaError: String?
    if report?.isValid == true {
        do {
            classes = try openRealm(path).schema.objectSchema.count
        } catch {
            schemaError = realmFailure(error, path: path)
        }
    }
    let value = verifyJSON(
        path: path, report: report, stopped: stopped, schemaClasses: classes, schemaError: schemaError,
        recovery: store.recovery)
    printJSON(value)
    guard report?.isValid == true, stopped == nil, schemaError == nil else {
        let reason =
            stopped ?? schemaError ?? report.map { "\($0.problems.count + $0.omittedProblems) problem(s)" } ?? ""
        standardError("strata: \(path) is damaged: \(reason)")
        return ExitStatus.failure
    }
    return ExitStatus.ok
}

/// `strata trees FILE [TREE] [--limit N] [--json]`: the named trees of the storage engine, or the raw entries of
/// one.
func trees(_ path: String, tree: String?, limit: Int, json: Bool = false) -> Int32 {
    let store = openStore(path)
    do {
        let snapshot = try store.read()
        if json { return try treesJSON(path, snapshot: snapshot, tree: tree, limit: limit) }
        guard let tree else {
            let names = try snapshot.treeNames()
            let width = (names.map(\.count).max() ?? 0) + 2
            for name in names {
                if let view = try snapshot.tree(named: name) {
                    print("\(padded(name, to: width))\(view.kind), \(view.count) entries")
                }
            }
            return ExitStatus.ok
        }
        guard let view = try snapshot.tree(named: tree) else {
            usageError("\(path) has no tree named \(tree) (list them with `strata trees \(path)`)")
        }
        var cursor = view.makeCursor()
        var more = try cursor.first()
        var shown = 0
        while more && shown < limit {
            let value =
                try cursor.isSubtree()
                ? "<tree of \(try cursor.subtree().count) entries>" : printable(try cursor.value())
            print(view.kind == .list ? "[\(shown)]\t\(value)" : "\(printable(try cursor.key()))\t\(value)")
            shown += 1
            more = try cursor.next()
        }
        if view.count > shown { print("… \(view.count - shown) more (use --limit)") }
        return ExitStatus.ok
    } catch {
        fail("cannot read \(path): \(error)")
    }
}

/// `strata trees FILE [TREE] --json`.
private func treesJSON(_ path: String, snapshot: ReadTransaction, tree: String?, limit: Int) throws -> Int32 {
    var members: [(key: String, value: JSONValue)] = [("file", .string(path)), ("version", .int(snapshot.version))]
    guard let tree else {
        var listed: [JSONValue] = []
        for name in try snapshot.treeNames() {
            guard let view = try snapshot.tree(named: name) else { continue }
            listed.append(
                .object([("name", .string(name)), ("kind", .string("\(view.kind)")), ("entries", .int(view.count))]))
        }
        printJSON(.object(members + [("trees", .array(listed))]))
        return ExitStatus.ok
    }
    guard let view = try snapshot.tree(named: tree) else {
        usageError("\(path) has no tree named \(tree) (list them with `strata trees \(path)`)")
    }
    var shown: [JSONValue] = []
    var cursor = view.makeCursor()
    var more = try cursor.first()
    while more && shown.count < limit {
        let isList = view.kind == .list
        let key = isList ? nil : try cursor.key()
        let entry =
            try cursor.isSubtree()
            ? treeEntryJSON(
                index: isList ? shown.count : nil, key: key, value: nil, subtreeEntries: try cursor.subtree().count)
            : treeEntryJSON(index: isList ? shown.count : nil, key: key, value: try cursor.value(), subtreeEntries: nil)
        shown.append(entry)
        more = try cursor.next()
    }
    members += [
        ("tree", .string(tree)), ("kind", .string("\(view.kind)")), ("entries", .int(view.count)),
        ("shown", .array(shown)), ("more", .int(view.count - shown.count)),
    ]
    printJSON(.object(members))
    return ExitStatus.ok
}

/// `strata compact FILE OUT [--decrypt]`: writes the newest version's live data into a new, minimal file, encrypted
/// with FILE's key when FILE is encrypted, or plain with `--decrypt`.
func compact(_ path: String, to output: String, decrypt: Bool) -> Int32 {
    let store = openStore(path)
    if decrypt && store.options.encryptionKey == nil {
        usageError("--decrypt copies an encrypted file; \(path) is not")
    }
    do {
        let result = try store.compact(to: output, encryptionKey: decrypt ? nil : store.options.encryptionKey)
        print("compacted version \(result.version): \(result.sourcePages) pages -> \(result.compactedPages) pages")
        print("wrote \(output)")
        return ExitStatus.ok
    } catch {
        fail("cannot compact \(path) into \(output): \(error)")
    }
}

/// `strata bench`, refused in a debug build: unoptimised code runs many times slower, so its numbers would mislead
/// whoever reads them.
func benchUnlessDebugBuild(count: Int, directory: String) -> Int32 {
    #if DEBUG
        fail(
            "bench refuses to run: this strata is a debug build, whose numbers would mislead (unoptimised code "
                + "runs many times slower); build it with `swift build -c release` and run .build/release/strata bench")
    #else
        do {
            return try bench(count: count, directory: directory)
        } catch {
            fail("bench failed: \(error)")
        }
    #endif
}

/// `strata bench [--count N] [--dir DIR]`: a quick self-benchmark of the storage engine in a scratch file.
func bench(count: Int, directory: String) throws -> Int32 {
    let path = directory + "/strata-bench-\(getpid()).strata"
    defer {
        unlink(path)
        unlink(path + ".lock")
        unlink(path + ".log")
    }
    let store = try Store.open(path: path, options: StoreOptions(durability: .full))
    var generator = SystemRandomNumberGenerator()
    let keys = (0..<count).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
    let value = [UInt8](repeating: 0xAB, count: 100)
    let clock = ContinuousClock()
    func report(_ name: String, _ operations: Int, _ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let nanos = seconds * 1e9 / Double(operations)
        print("\(padded(name, to: 34)) \(Int(seconds * 1000)) ms  (\(Int(nanos)) ns/op)")
    }
    print("strata bench: \(count) keys of 16 bytes, 100-byte values, file in \(directory)")
    var key = [UInt8](repeating: 0, count: 16)
    func fill(_ n: UInt64) {
        withUnsafeBytes(of: n.bigEndian) { for index in 0..<8 { key[index] = $0[index] } }
    }
    let sequential = try clock.measure {
        try store.write { txn in
            let tree = try txn.tree(named: "seq", create: .keyed)!
            for index in 0..<count {
                fill(UInt64(index))
                try txn.put(key, value, in: tree)
            }
        }
    }
    report("sequential insert (one txn)", count, sequential)
    let random = try clock.measure {
        try store.write { txn in
            let tree = try txn.tree(named: "rnd", create: .keyed)!
            for random in keys {
                fill(random)
                try txn.put(key, value, in: tree)
            }
        }
    }
    report("random insert (one txn)", count, random)
    // Readers are scoped: a live snapshot pins its version and would stop the commits below from reusing pages.
    do {
        let snapshot = try store.read()
        let tree = try snapshot.tree(named: "rnd")!
        var found = 0
        let gets = try clock.measure {
            for random in keys.shuffled() {
                fill(random)
                if try tree.withValue(forKey: key, { $0.count }) != nil { found += 1 }
            }
        }
        report("random get", count, gets)
        guard found == count else { fail("random get found \(found) of \(count) keys") }
        var scanned = 0
        let scan = try clock.measure {
            var cursor = tree.makeCursor()
            var more = try cursor.first()
            while more {
                scanned += try cursor.withValue { $0.count }
                more = try cursor.next()
            }
        }
        report("ordered scan", count, scan)
    }
    let commits = 200
    let durable = try clock.measure {
        for index in 0..<commits {
            try store.write { txn in
                fill(UInt64(index))
                try txn.put(key, value, in: try txn.tree(named: "rnd")!)
            }
        }
    }
    report("durable single-put commit", commits, durable)
    return ExitStatus.ok
}
