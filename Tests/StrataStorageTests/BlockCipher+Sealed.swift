@testable import StrataStorage

extension BlockCipher {
    /// `plaintext` sealed under `nonce` and `associated`: its ciphertext and the whole tag field, which starts as
    /// `tagFill` bytes (so a test can see what the seal left unwritten).
    func sealed(_ plaintext: [UInt8], nonce: [UInt8], associated: [UInt8], tagFill: UInt8 = 0) throws -> (
        ciphertext: [UInt8], tag: [UInt8]
    ) {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: tagFill, count: BlockCipher.tagSize)
        try plaintext.withUnsafeBytes { input in
            try ciphertext.withUnsafeMutableBytes { output in
                try associated.withUnsafeBytes { associated in
                    try tag.withUnsafeMutableBytes { tag in
                        try seal(
                            input, into: output.baseAddress!, nonce: nonce, associated: associated,
                            tag: tag.baseAddress!)
                    }
                }
            }
        }
        return (ciphertext, tag)
    }
}
