/// The pages of an encrypted file that one open has already authenticated, each known by its number and its
/// sealed tail (nonce and tag), so that checking the same page again needs only its decryption.
///
/// An open reads the meta slots twice (a first look before it holds a slot in the lock file, then again under the
/// lock's change counter), and each read checks every page the newest commit listed (a single-sync commit lists
/// up to a few hundred): without this each of those pages is authenticated twice, and HMAC-SHA-256 is most of what
/// opening an encrypted page costs. Remembering the tail is enough: every write of a page draws a fresh random
/// nonce, and a different page under the same nonce and tag would be a forged tag. Used for one open only, so it
/// holds at most the pages its recovery checked.
final class AuthenticatedPages: Sendable {
    private struct Page: Hashable {
        let number: PageNumber
        let tail: [UInt8]
    }

    private let pages = Locked<Set<Page>>([])

    /// Whether page `number`, whose sealed tail is `tail`, was authenticated before.
    func contains(_ number: PageNumber, tail: UnsafeRawBufferPointer) -> Bool {
        let page = Page(number: number, tail: Array(tail))
        return pages.withLock { $0.contains(page) }
    }

    /// Remembers that page `number`, whose sealed tail is `tail`, authenticated.
    func insert(_ number: PageNumber, tail: UnsafeRawBufferPointer) {
        let page = Page(number: number, tail: Array(tail))
        pages.withLock { _ = $0.insert(page) }
    }
}
