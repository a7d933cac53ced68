import StrataStorage

// strata: inspect, check, compact and benchmark Strata storage files.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    strata — inspect and maintain Strata files

    USAGE
      strata info FILE                 versions, pages, free space, trees and open readers
      strata verify FILE               check every reachable page; exit 1 if the file is damaged
      strata dump FILE [TREE] [--limit N]
                                       list trees, or the entries of one tree (keys and values as text or hex)
      strata compact FILE OUT          write the live data of FILE into a new, minimal file OUT
      strata bench [--count N] [--dir DIR]
                                       quick self-benchmark of the storage engine (default 100000 keys)
      strata help                      this text

    EXIT STATUS
      0 success, 1 damage found or the operation failed, 2 bad usage or the file cannot be opened
    """

func standardError(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    standardError("strata: \(message)")
    exit(status)
}

/// Opens an existing file read-only; explains the usual problems in plain words.
func openExisting(_ path: String) -> Store {
    do {
        return try Store.open(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
    } catch .fileNotFound {
        fail("\(path): no such file", status: 2)
    } catch .incompatibleFile(_, let reason) {
        fail("\(path) cannot be opened: \(reason)", status: 2)
    } catch {
        fail("\(path): \(error)", status: 2)
    }
}

func formatBytes(_ count: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(count) B" : "\((value * 10).rounded() / 10) \(units[unit])"
}

func padded(_ text: String, to width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func printable(_ bytes: [UInt8]) -> String {
    if !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
    }
    let digits = Array("0123456789abcdef")
    var text = "0x"
    for byte in bytes.prefix(64) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 15)])
    }
    return bytes.count > 64 ? text + "… (\(bytes.count) bytes)" : text
}

func info(_ path: String) throws {
    let store = openExisting(path)
    let stats = try store.statistics()
    var fileInfo = stat()
    let fileSize = stat(path, &fileInfo) == 0 ? Int(fileInfo.st_size) : 0
    print("file:         \(path)")
    print("size:         \(formatBytes(fileSize)) (\(stats.pageCount) pages of \(stats.pageSize) bytes)")
    print("version:      \(stats.version)")
    let free = stats.pageCount > 0 ? Double(stats.freePages) * 100 / Double(stats.pageCount) : 0
    print("free pages:   \(stats.freePages) (\((free * 10).rounded() / 10)%)")
    print("trees:        \(stats.trees.count)")
    for tree in stats.trees { print("  \(tree.name)  \(tree.kind), \(tree.count) entries") }
    if stats.otherProcesses.isEmpty {
        print("other processes: none")
    } else {
        for process in stats.otherProcesses {
            let pin = process.pinnedVersion == 0 ? "no pinned version" : "pins version \(process.pinnedVersion)"
            print("other process: pid \(process.pid), \(pin)")
        }
    }
}

func verify(_ path: String) throws -> Int32 {
    let store = openExisting(path)
    let report = try store.verify()
    print(report)
    return report.isValid ? 0 : 1
}

func dump(_ path: String, tree: String?, limit: Int) throws {
    let store = openExisting(path)
    let snapshot = try store.read()
    guard let tree else {
        for name in try snapshot.treeNames() {
            if let view = try snapshot.tree(named: name) { print("\(name)\t\(view.kind)\t\(view.count)") }
        }
        return
    }
    guard let view = try snapshot.tree(named: tree) else { fail("\(path) has no tree named \(tree)") }
    var cursor = view.makeCursor()
    var more = try cursor.first()
    var shown = 0
    while more && shown < limit {
        let value =
            try cursor.isSubtree() ? "<tree of \(try cursor.subtree().count) entries>" : printable(try cursor.value())
        print(view.kind == .list ? "[\(shown)]\t\(value)" : "\(printable(try cursor.key()))\t\(value)")
        shown += 1
        more = try cursor.next()
    }
    if view.count > shown { print("… \(view.count - shown) more (use --limit)") }
}

func compact(_ path: String, to output: String) throws {
    let store = openExisting(path)
    let result = try store.compact(to: output)
    print("compacted version \(result.version): \(result.sourcePages) pages -> \(result.compactedPages) pages")
    print("wrote \(output)")
}

func bench(count: Int, directory: String) throws {
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
    report(
        "sequential insert (one txn)", count,
        try clock.measure {
            try store.write { txn in
                let tree = try txn.tree(named: "seq", create: .keyed)!
                for index in 0..<count {
                    fill(UInt64(index))
                    try txn.put(key, value, in: tree)
                }
            }
        })
    report(
        "random insert (one txn)", count,
        try clock.measure {
            try store.write { txn in
                let tree = try txn.tree(named: "rnd", create: .keyed)!
                for random in keys {
                    fill(random)
                    try txn.put(key, value, in: tree)
                }
            }
        })
    // Readers are scoped: a live snapshot pins its version and would stop the commits below from reusing pages.
    do {
        let snapshot = try store.read()
        let tree = try snapshot.tree(named: "rnd")!
        var found = 0
        report(
            "random get", count,
            try clock.measure {
                for random in keys.shuffled() {
                    fill(random)
                    if try tree.withValue(forKey: key, { $0.count }) != nil { found += 1 }
                }
            })
        guard found == count else { fail("random get found \(found) of \(count) keys") }
        var scanned = 0
        report(
            "ordered scan", count,
            try clock.measure {
                var cursor = tree.makeCursor()
                var more = try cursor.first()
                while more {
                    scanned += try cursor.withValue { $0.count }
                    more = try cursor.next()
                }
            })
    }
    let commits = 200
    report(
        "durable single-put commit", commits,
        try clock.measure {
            for index in 0..<commits {
                try store.write { txn in
                    fill(UInt64(index))
                    try txn.put(key, value, in: try txn.tree(named: "rnd")!)
                }
            }
        })
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let positional = arguments.enumerated().filter { index, argument in
    !argument.hasPrefix("--") && (index == 0 || !arguments[index - 1].hasPrefix("--"))
}.map(\.element)

do {
    switch positional.first {
    case "info" where positional.count == 2:
        try info(positional[1])
    case "verify" where positional.count == 2:
        exit(try verify(positional[1]))
    case "dump" where positional.count == 2 || positional.count == 3:
        try dump(
            positional[1], tree: positional.count == 3 ? positional[2] : nil, limit: Int(option("--limit") ?? "") ?? 100
        )
    case "compact" where positional.count == 3:
        try compact(positional[1], to: positional[2])
    case "bench" where positional.count == 1:
        try bench(count: Int(option("--count") ?? "") ?? 100_000, directory: option("--dir") ?? "/tmp")
    case "help", nil:
        print(usage)
    default:
        standardError(usage)
        exit(2)
    }
} catch {
    fail("\(error)")
}
