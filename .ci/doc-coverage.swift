// Fails when a public symbol of the library targets has no documentation comment.
// Usage: swift .ci/doc-coverage.swift SYMBOL_GRAPH_DIRECTORY (from `swift package dump-symbol-graph`).
import Foundation

let directory = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? ".")
let sources = FileManager.default.currentDirectoryPath + "/Sources/"
var checked = 0
var missing: [String] = []
let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
for file in files where file.lastPathComponent.hasPrefix("Strata") && !file.lastPathComponent.contains("Test") {
    guard let data = try? Data(contentsOf: file),
        let graph = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let symbols = graph["symbols"] as? [[String: Any]]
    else {
        print("error: cannot read \(file.path)")
        exit(1)
    }
    for symbol in symbols {
        guard let access = symbol["accessLevel"] as? String, access == "public" || access == "open",
            let location = symbol["location"] as? [String: Any], let uri = location["uri"] as? String,
            let range = uri.range(of: sources)
        else { continue }
        checked += 1
        if symbol["docComment"] == nil {
            let line = ((location["position"] as? [String: Any])?["line"] as? Int ?? 0) + 1
            let name = (symbol["pathComponents"] as? [String])?.joined(separator: ".") ?? "?"
            missing.append("Sources/\(uri[range.upperBound...]):\(line): \(name)")
        }
    }
}
guard checked > 0 else {
    print("error: no public symbols found in \(directory.path)")
    exit(1)
}
if missing.isEmpty {
    print("\(checked) public symbols, every one documented")
} else {
    print("error: \(missing.count) of \(checked) public symbols have no documentation comment:")
    for entry in Set(missing).sorted() { print("  \(entry)") }
    exit(1)
}
