/// A type-safe query as text, for `print` and the debugger. Written with an explicit stack, like everything that
/// walks a query (see ``QueryLogic``): a query built from thousands of operators is described without
/// recursion, and `dump` shows that text instead of reflecting the tree level by level.
extension Query: CustomStringConvertible, CustomReflectable {
    /// The query in a form close to the query language: `(\Dog.<Int> < 2 && \Dog.<String> BEGINSWITH[c] "R")`.
    /// Key paths of `@Persisted` properties show their root and value types (Swift describes them by address,
    /// not by name); other key paths show as Swift prints them.
    public var description: String { node.text }

    /// The query's text (see ``description``) as its only child, so that `dump` does not reflect the whole tree.
    public var customMirror: Mirror { Mirror(self, children: ["query": description]) }
}

extension QueryNode {
    /// The node as text (see `Query.description`).
    var text: String {
        enum Piece {
            case node(QueryNode)
            case text(String)
        }
        var output = ""
        var pieces: [Piece] = [.node(self)]
        while let piece = pieces.popLast() {
            switch piece {
            case .text(let text):
                output += text
            case .node(let node):
                guard case .logic(let logic) = node else {
                    output += node.conditionText
                    continue
                }
                if logic.op == .not {
                    pieces += [.text(")"), .node(logic.operands[0]), .text("!(")]
                    continue
                }
                // A chain of one operator reads as one parenthesised list.
                var operands: [QueryNode] = []
                var pending = Array(logic.operands.reversed())
                while let operand = pending.popLast() {
                    if case .logic(let inner) = operand, inner.op == logic.op {
                        pending += inner.operands.reversed()
                    } else {
                        operands.append(operand)
                    }
                }
                let separator = logic.op == .and ? " && " : " || "
                pieces.append(.text(")"))
                for (index, operand) in operands.enumerated().reversed() {
                    pieces.append(.node(operand))
                    if index > 0 { pieces.append(.text(separator)) }
                }
                pieces.append(.text("("))
            }
        }
        return output
    }

    /// A node that is not `&&`, `||` or `!`, as text.
    private var conditionText: String {
        func options(_ options: StringOptions) -> String {
            let letters =
                (options.contains(.caseInsensitive) ? "c" : "") + (options.contains(.diacriticInsensitive) ? "d" : "")
            return letters.isEmpty ? "" : "[\(letters)]"
        }
        func value(_ value: Any?) -> String {
            guard let value else { return "nil" }
            if let text = value as? String { return "\"\(text)\"" }
            return "\(value)"
        }
        switch self {
        case .path(let components):
            let components = components.filter { if case .elements = $0 { false } else { true } }
            return components.enumerated().map { index, component in
                switch component {
                case .operation(let name) where name.hasPrefix("["):
                    // A map subscript: `[` and the key (see `Query.subscript(member:)`).
                    return "[\"\(name.dropFirst())\"]"
                case .operation(let name) where name.hasPrefix("]"):
                    // A position in a mixed value's list (see `Query.subscript(position:)`), written `[0]`; the
                    // marker drops the dot before it.
                    return "\u{0}[\(name.dropFirst())]"
                case .operation(let name): return name
                case .elements: return ""
                case .keyPath(let keyPath):
                    // `\Person.dog` then `\Dog.name` reads `\Person.dog.name`. A `@Persisted` property's key path
                    // is a computed one, which Swift describes by address: name its types instead.
                    var text = "\(keyPath)"
                    if text.contains("<computed") {
                        let types = Swift.type(of: keyPath)
                        text = "\\\(types.rootType).<\(types.valueType)>"
                    }
                    guard index > 0, let dot = text.firstIndex(of: ".") else { return text }
                    return String(text[text.index(after: dot)...])
                }
            }.joined(separator: ".").replacingOccurrences(of: ".[\"", with: "[\"")
                .replacingOccurrences(of: ".\u{0}", with: "")
        case .value(let single): return value(single)
        case .values(let list): return "{" + list.map(value).joined(separator: ", ") + "}"
        case .compare(let left, let op, let right, let stringOptions):
            return "\(left.conditionText) \(op.rawValue)\(options(stringOptions)) \(right.conditionText)"
        case .between(let path, let low, let high):
            return "\(path.conditionText) BETWEEN {\(value(low)), \(value(high))}"
        case .text(let path, let words): return "\(path.conditionText) TEXT \(value(words))"
        case .geoWithin(let path, let shape): return "\(path.conditionText) GEOWITHIN \(shape)"
        case .logic: return "<condition>"
        case .subqueryCount(let condition): return "(\(condition.text)).count"
        }
    }
}
