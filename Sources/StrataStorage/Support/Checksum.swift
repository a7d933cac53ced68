/// xxHash64 (Yann Collet's XXH64 algorithm), implemented from the published specification.
///
/// Used for page and meta checksums: it detects torn and bit-flipped pages far better than a simple sum
/// and runs at several gigabytes per second, so checksumming a page costs well under a microsecond.
enum Checksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        var acc = acc &+ input &* prime2
        acc = (acc << 31) | (acc >> 33)
        return acc &* prime1
    }

    @inline(__always)
    private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        let acc = acc ^ round(0, value)
        return acc &* prime1 &+ prime4
    }

    @inline(__always)
    private static func rotl(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    /// The XXH64 hash of `count` bytes at `pointer`.
    static func xxh64(_ pointer: UnsafeRawPointer, count: Int, seed: UInt64 = 0) -> UInt64 {
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2
            var v2 = seed &+ prime2
            var v3 = seed
            var v4 = seed &- prime1
            let limit = count - 32
            while offset <= limit {
                v1 = round(v1, UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                v3 = round(
                    v3, UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)))
                v4 = round(
                    v4, UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)))
                offset += 32
            }
            hash = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ prime5
        }
        hash = hash &+ UInt64(count)
        while offset + 8 <= count {
            let lane = UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            hash ^= round(0, lane)
            hash = rotl(hash, 27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            let lane = UInt64(UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            hash ^= lane &* prime1
            hash = rotl(hash, 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            let byte = UInt64(pointer.load(fromByteOffset: offset, as: UInt8.self))
            hash ^= byte &* prime5
            hash = rotl(hash, 11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        hash = hash &* prime3
        hash ^= hash >> 32
        return hash
    }
}
