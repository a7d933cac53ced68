import Foundation

extension UploadBatch {
    /// A rough size of the batch in the change format, in bytes, which bounds how many batches one PostgreSQL
    /// transaction merges: a fixed cost per object and per update, plus the length of strings and data. Cheap
    /// (no encoding), and an overestimate for small values.
    var estimatedByteCount: Int {
        var total = 128
        for change in changes {
            total += 160
            for update in change.properties.values {
                switch update {
                case .value(let value, _): total += 64 + value.estimatedByteCount
                case .list(let operations):
                    for operation in operations {
                        if case .insert(_, _, let value) = operation { total += value.estimatedByteCount }
                        total += 128
                    }
                case .map(let operations):
                    for operation in operations {
                        if case .set(let key, let value, _) = operation {
                            total += key.utf8.count + (value?.estimatedByteCount ?? 0)
                        }
                        total += 96
                    }
                case .set(let operations):
                    for operation in operations {
                        switch operation {
                        case .add(let value, _): total += 96 + value.estimatedByteCount
                        case .remove(let value, let tags): total += 32 + 64 * tags.count + value.estimatedByteCount
                        }
                    }
                }
            }
        }
        return total
    }
}

extension SyncValue {
    /// A rough size of the value's JSON: its text's length for strings, data and decimals, 24 otherwise.
    fileprivate var estimatedByteCount: Int {
        switch self {
        case .string(let text), .decimal128(let text): return 16 + text.utf8.count
        case .data(let data): return 16 + data.count * 4 / 3
        case .embedded(let properties), .dictionary(let properties):
            return 16 + properties.reduce(0) { $0 + 16 + $1.key.utf8.count + $1.value.estimatedByteCount }
        case .list(let elements): return 16 + elements.reduce(0) { $0 + 8 + $1.estimatedByteCount }
        case .link(let key): return 16 + key.estimatedByteCount
        case .typedLink(let type, let key): return 32 + type.utf8.count + key.estimatedByteCount
        default: return 24
        }
    }
}
