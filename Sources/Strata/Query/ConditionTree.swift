/// The inner nodes of a query's condition tree: AND and OR over any number of operands, NOT over one.
enum ConditionShape {
    case and, or, not
}

/// How deep the per-row code recurses into nested conditions. Compiled conditions and column kernels are made
/// only for trees up to this depth (deeper ones run in the general evaluator), and the general evaluator
/// switches from recursion to an explicit stack below it: a few levels of recursion are faster, and this many
/// cost a small, bounded part of any thread's stack whatever `QueryLimits.maximumDepth` allows.
let conditionRecursionLimit = 32

/// One step of ``foldConditions(_:split:leaf:combine:)``.
private enum FoldStep<Node> {
    /// Fold this node.
    case visit(Node)
    /// Combine the last `count` results into one node of `shape`.
    case combine(ConditionShape, count: Int)
}

/// Folds a condition tree bottom-up with an explicit stack instead of recursion: `split` tells an inner node
/// (AND, OR, NOT: its shape and operands) from a condition (nil), `leaf` turns each condition into a result and
/// `combine` turns an inner node's operands' results, left to right, into the node's.
///
/// Binding, compiling and rebinding a query walk its tree this way, so that how deep it nests costs no stack:
/// a debug build spends a kilobyte or more of stack per call of a function that throws typed errors and switches
/// over many cases, and a query runs on whatever thread the app calls from (512 KiB of stack on Apple platforms'
/// secondary threads).
func foldConditions<Node, Result, Failure: Error>(
    _ root: Node,
    split: (Node) -> (ConditionShape, [Node])?,
    leaf: (Node) throws(Failure) -> Result,
    combine: (ConditionShape, [Result]) throws(Failure) -> Result
) throws(Failure) -> Result {
    var steps: [FoldStep<Node>] = [.visit(root)]
    var results: [Result] = []
    while let step = steps.popLast() {
        switch step {
        case .visit(let node):
            guard let (shape, operands) = split(node) else {
                results.append(try leaf(node))
                continue
            }
            steps.append(.combine(shape, count: operands.count))
            // Last operand pushed first: the operands fold left to right.
            for operand in operands.reversed() { steps.append(.visit(operand)) }
        case .combine(let shape, let count):
            let operands = Array(results.suffix(count))
            results.removeLast(count)
            results.append(try combine(shape, operands))
        }
    }
    return results[0]
}

extension RQLPredicate {
    /// The shape and operands of an AND, OR or NOT; nil for a condition.
    var logicalOperands: (ConditionShape, [RQLPredicate])? {
        switch self {
        case .and(let operands): (.and, operands)
        case .or(let operands): (.or, operands)
        case .not(let operand): (.not, [operand])
        default: nil
        }
    }
}

extension BoundPredicate {
    /// The shape and operands of an AND, OR or NOT; nil for a condition.
    var logicalOperands: (ConditionShape, [BoundPredicate])? {
        switch self {
        case .and(let operands): (.and, operands)
        case .or(let operands): (.or, operands)
        case .not(let operand): (.not, [operand])
        default: nil
        }
    }

    /// The AND, OR or NOT of `operands`.
    init(_ shape: ConditionShape, _ operands: [BoundPredicate]) {
        switch shape {
        case .and: self = .and(operands)
        case .or: self = .or(operands)
        case .not: self = .not(operands[0])
        }
    }
}
