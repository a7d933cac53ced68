/// How an encrypted file's pages, meta pages and commit log records are encrypted and authenticated, recorded in the
/// file's clear-text header (``EncryptedFileHeader``) so that a file keeps the suite it was created with.
///
/// Both take the same 64-byte key and store the same page layout (a 12-byte nonce and a 32-byte tag field in the
/// page's last 44 bytes), so a file's suite changes nothing else in it.
package enum CipherSuite: UInt32, Sendable, CaseIterable {
    /// AES-256 in counter mode under the key's first 32 bytes, then HMAC-SHA-256 under its last 32 (the tag field
    /// holds the whole HMAC). The suite of every file created before AES-256-GCM; its header's suite field is
    /// zero, as it always was.
    case aes256CTRWithHMACSHA256 = 0
    /// AES-256 in Galois/counter mode (a 96-bit nonce, a 128-bit tag in the tag field's first 16 bytes, its last
    /// 16 zero), under a key derived from all 64 bytes of the key (``BlockCipher``). Encrypts and authenticates
    /// a page in one pass with the processor's AES and carry-less multiply instructions: about 1.3 µs a 4 KiB page
    /// here against about 3 µs for counter mode and HMAC-SHA-256.
    case aes256GCM = 1

    /// The suite new encrypted files are created with.
    static let newFiles = CipherSuite.aes256GCM
}
