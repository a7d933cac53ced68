import Foundation
import Testing

/// Keeps every Swift sample of the README and of `Documentation/*.md` compiled: each ```swift block must appear,
/// line by line and in order, in one of the source files of this test target, where it builds and runs with the
/// rest of the tests. Lines are compared with their leading and trailing whitespace removed and runs of inner
/// whitespace collapsed (so a sample may align its comments while the formatter does not); blank lines are
/// ignored, and the test code may have lines of its own (checks, set-up) between a sample's lines.
///
/// Blocks fenced as ```swift fragment are illustrative pieces that cannot compile on their own and are not
/// checked (see Documentation/Testing.md); keep them rare.
@Suite("Documentation samples are compiled")
struct DocumentationSamplesGuardTests {
    /// The package's root folder, found from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A fenced Swift block of a Markdown file.
    struct Block {
        var file: String
        var line: Int
        var lines: [String]
    }

    /// Trims a line and collapses its inner whitespace.
    static func normalized(_ line: Substring) -> String {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// The ```swift blocks of the Markdown file at `url`, with their non-blank lines normalised.
    static func swiftBlocks(in url: URL) throws -> [Block] {
        let name = url.path.replacingOccurrences(of: packageRoot.path + "/", with: "")
        return swiftBlocks(inMarkdown: try String(contentsOf: url, encoding: .utf8), file: name)
    }

    /// The ```swift blocks of `markdown`. Other fenced blocks (other languages, ```swift fragment) are skipped.
    static func swiftBlocks(inMarkdown markdown: String, file: String) -> [Block] {
        var blocks: [Block] = []
        var fence: String?  // the open fence's backticks
        var current: Block?  // the open block, when it is a ```swift block
        for (number, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if trimmed == open {
                    if let block = current { blocks.append(block) }
                    fence = nil
                    current = nil
                } else if !trimmed.isEmpty {
                    current?.lines.append(normalized(line))
                }
            } else if trimmed.hasPrefix("```") {
                let marker = String(trimmed.prefix { $0 == "`" })
                fence = marker
                let info = trimmed.dropFirst(marker.count).split(separator: " ")
                current = info == ["swift"] ? Block(file: file, line: number + 1, lines: []) : nil
            }
        }
        return blocks
    }

    /// Markdown files whose samples must compile.
    static func markdownFiles() throws -> [URL] {
        let documentation = packageRoot.appendingPathComponent("Documentation")
        let pages = try FileManager.default.contentsOfDirectory(atPath: documentation.path)
            .filter { $0.hasSuffix(".md") }.sorted()
            .map { documentation.appendingPathComponent($0) }
        return [packageRoot.appendingPathComponent("README.md")] + pages
    }

    /// The normalised non-blank lines of each Swift source of this target.
    static func sources() throws -> [(name: String, lines: [String])] {
        let folder = packageRoot.appendingPathComponent("Tests/DocumentationTests")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .sorted().map { name in
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                let lines = text.split(separator: "\n").map(normalized).filter { !$0.isEmpty }
                return (name, lines)
            }
    }

    /// Whether `needle` appears in `haystack` in order (other lines may come between).
    static func appearsInOrder(_ needle: [String], in haystack: [String]) -> Bool {
        var next = needle.startIndex
        for line in haystack where next < needle.endIndex && line == needle[next] { next += 1 }
        return next == needle.endIndex
    }

    @Test func everySwiftSampleIsInTheSamplesTarget() throws {
        let sources = try Self.sources()
        var checked = 0
        for file in try Self.markdownFiles() {
            for block in try Self.swiftBlocks(in: file) where !block.lines.isEmpty {
                checked += 1
                let found = sources.contains { Self.appearsInOrder(block.lines, in: $0.lines) }
                #expect(
                    found,
                    """
                    \(block.file):\(block.line): this ```swift block is not in Tests/DocumentationTests \
                    (its lines must appear there in order); first line: \(block.lines[0])
                    """)
            }
        }
        #expect(checked > 20, "found only \(checked) Swift samples: are the Markdown files where the test looks?")
    }

    @Test func theGuardReadsSwiftBlocksOnly() {
        let markdown = """
            Text.
            ```swift
            let a = 1

              let b = 2   // two
            ```
            ```sh
            swift test
            ```
            ```swift fragment
            dogs.observe { … }
            ```
            """
        let blocks = Self.swiftBlocks(inMarkdown: markdown, file: "Page.md")
        #expect(blocks.count == 1)
        #expect(blocks.first?.line == 2)
        #expect(blocks.first?.lines == ["let a = 1", "let b = 2 // two"])
    }

    @Test func theGuardRejectsASampleThatDrifted() {
        let source = ["let realm = try Realm()", "try realm.write {", "#expect(true)", "realm.add(dog)", "}"]
        #expect(Self.appearsInOrder(["let realm = try Realm()", "realm.add(dog)", "}"], in: source))
        #expect(!Self.appearsInOrder(["realm.add(dog)", "let realm = try Realm()"], in: source))
        #expect(!Self.appearsInOrder(["let realm = try Realm(configuration: c)"], in: source))
        #expect(Self.normalized("    let a = 1      // comment  ") == "let a = 1 // comment")
    }
}
