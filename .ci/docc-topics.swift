// Fails when a DocC landing page leaves a top-level public symbol out of its topic groups.
// Usage: swift .ci/docc-topics.swift ARCHIVE MODULE (an archive written by `docc convert`).
//
// DocC puts every symbol that no page curates into generated groups ("Classes", "Structures"...) on the module's
// page; in the render JSON those groups carry `"generated": true`. A module page with such a group lists a symbol
// that Sources/MODULE/MODULE.docc/MODULE.md should place in a topic group of its own.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let archive = arguments.first, let module = arguments.last else {
    print("usage: swift .ci/docc-topics.swift ARCHIVE MODULE")
    exit(2)
}
let page = URL(fileURLWithPath: archive).appendingPathComponent("data/documentation/\(module.lowercased()).json")
guard let data = try? Data(contentsOf: page),
    let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
    let sections = json["topicSections"] as? [[String: Any]]
else {
    print("error: cannot read the topic groups of \(page.path)")
    exit(1)
}
let curated = sections.filter { $0["generated"] as? Bool != true }.flatMap { $0["identifiers"] as? [String] ?? [] }
let missing = sections.filter { $0["generated"] as? Bool == true }.flatMap { section in
    (section["identifiers"] as? [String] ?? []).map { "\(section["title"] as? String ?? "?"): \($0)" }
}
if missing.isEmpty {
    print("\(module): \(curated.count) entries in topic groups, no top-level symbol left out")
} else {
    print("error: \(module).docc/\(module).md leaves \(missing.count) top-level symbols out of its topic groups:")
    for entry in missing { print("  \(entry)") }
    exit(1)
}
