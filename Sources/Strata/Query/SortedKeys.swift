/// Set operations on object keys kept as ascending arrays without duplicates (index candidates, full-text
/// postings): merges instead of hash sets, so results stay in key order for reading rows.
enum SortedKeys {
    /// `keys` sorted, without duplicates.
    static func normalized(_ keys: [Int64]) -> [Int64] {
        var sorted = keys.sorted()
        var kept = 0
        for index in sorted.indices where kept == 0 || sorted[index] != sorted[kept - 1] {
            sorted[kept] = sorted[index]
            kept += 1
        }
        sorted.removeLast(sorted.count - kept)
        return sorted
    }

    /// The keys in every one of `lists`: the shortest list, narrowed by each other one with exponential search,
    /// so a long list costs about the short one's length times its logarithm, not its own length.
    static func intersection(_ lists: [[Int64]]) -> [Int64] {
        guard var result = lists.min(by: { $0.count < $1.count }) else { return [] }
        for list in lists where !result.isEmpty {
            result = filter(result, by: list, keeping: true)
        }
        return result
    }

    /// The keys of `a` that are not in `b`.
    static func subtracting(_ a: [Int64], _ b: [Int64]) -> [Int64] { filter(a, by: b, keeping: false) }

    /// The keys of `a` that are (`keeping`) or are not in `b`, found by galloping through `b`.
    private static func filter(_ a: [Int64], by b: [Int64], keeping: Bool) -> [Int64] {
        var kept: [Int64] = []
        kept.reserveCapacity(a.count)
        b.withUnsafeBufferPointer { list in
            var low = 0
            for key in a {
                // Gallop to a bound past `key`, then binary search.
                var step = 1
                var high = low
                while high < list.count && list[high] < key {
                    low = high + 1
                    high += step
                    step *= 2
                }
                high = Swift.min(high, list.count)
                while low < high {
                    let middle = (low + high) / 2
                    if list[middle] < key { low = middle + 1 } else { high = middle }
                }
                if (low < list.count && list[low] == key) == keeping { kept.append(key) }
            }
        }
        return kept
    }

    /// The keys of either list.
    static func union(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                result.append(a[i])
                i += 1
            } else if i == a.count || b[j] < a[i] {
                result.append(b[j])
                j += 1
            } else {
                result.append(a[i])
                i += 1
                j += 1
            }
        }
        return result
    }
}
