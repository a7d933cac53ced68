import Foundation
import Testing

@testable import StrataStorage

/// The nonces pages are sealed under (``NonceSequence``): counter mode is only safe while none repeats under a key.
@Suite("Nonce sequence")
struct NonceSequenceTests {
    private func split(_ nonce: [UInt8]) -> (prefix: UInt64, counter: UInt32) {
        nonce.withUnsafeBytes {
            (
                UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            )
        }
    }

    @Test func threadsDrawingAtOnceNeverGetTheSameNonce() async {
        let sequence = NonceSequence()
        let drawn = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<5_000).map { _ in sequence.next() } }
            }
            return await group.reduce(into: [[UInt8]]()) { $0 += $1 }
        }
        #expect(drawn.count == 20_000)
        #expect(Set(drawn).count == 20_000)
        #expect(drawn.allSatisfy { $0.count == BlockCipher.nonceSize })
        // One prefix, and the counters are exactly 0 ..< 20,000: none skipped, none given twice.
        #expect(Set(drawn.map { split($0).prefix }).count == 1)
        #expect(Set(drawn.map { split($0).counter }) == Set(0..<20_000))
    }

    @Test func aNewRandomPrefixIsDrawnWhenTheCounterRunsOut() {
        let sequence = NonceSequence(period: 3)
        let drawn = (0..<9).map { _ in split(sequence.next()) }
        #expect(drawn.map(\.counter) == [0, 1, 2, 0, 1, 2, 0, 1, 2])
        let prefixes = [drawn[0].prefix, drawn[3].prefix, drawn[6].prefix]
        #expect(Set(prefixes).count == 3)
        #expect(drawn[1].prefix == drawn[0].prefix && drawn[5].prefix == drawn[3].prefix)
    }

    @Test func twoSequencesStartFromDifferentPrefixes() {
        // What keeps two processes (or a forked child, which replaces its sequence) apart: 64 random bits each.
        let first = split(NonceSequence().next())
        let second = split(NonceSequence().next())
        #expect(first.prefix != second.prefix)
        #expect(first.counter == 0 && second.counter == 0)
    }

    @Test func sealedPagesCarryTheSequencesNonces() throws {
        let cipher = try BlockCipher(key: (0..<64).map { UInt8($0) })
        let first = BlockCipher.freshNonce()
        let second = BlockCipher.freshNonce()
        #expect(split(first).prefix == split(second).prefix)
        #expect(split(second).counter != split(first).counter)
        // A nonce from the sequence seals and opens as any other.
        let plaintext = [UInt8](repeating: 7, count: 100)
        var sealed = [UInt8](repeating: 0, count: 100)
        var tag = [UInt8](repeating: 0, count: BlockCipher.tagSize)
        try plaintext.withUnsafeBytes { input in
            try sealed.withUnsafeMutableBytes { output in
                try tag.withUnsafeMutableBytes { tag in
                    try cipher.seal(
                        input, into: output.baseAddress!, nonce: second,
                        associated: UnsafeRawBufferPointer(start: nil, count: 0),
                        tag: tag.baseAddress!)
                }
            }
        }
        #expect(sealed != plaintext)
        var opened = [UInt8](repeating: 0, count: 100)
        let authentic = try sealed.withUnsafeBytes { input in
            try opened.withUnsafeMutableBytes { output in
                try tag.withUnsafeBytes { tag in
                    try cipher.open(
                        input, into: output.baseAddress!, nonce: second,
                        associated: UnsafeRawBufferPointer(start: nil, count: 0), tag: tag)
                }
            }
        }
        #expect(authentic && opened == plaintext)
    }
}
