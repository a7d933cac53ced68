/// What one open of an encrypted file has already authenticated, each page known by its number and its sealed
/// tail (nonce and tag), so that checking the same page again needs at most its decryption: the pages its recovery
/// checked, and the meta slots it decoded.
///
/// An open reads the meta slots three times (a first look before it holds a slot in the lock file, again under the
/// lock's change counter, and once more for the recovery notice), and the first two check every page the newest
/// commit listed (a single-sync commit lists up to a few hundred): without this each slot is authenticated and
/// decoded three times and each listed page authenticated twice, and authenticating is most of what opening an
/// encrypted page costs. A commit found whole by the first look is not checked again by the second
/// (``foundWhole(_:)``). Remembering the tail is enough: every write of a page draws a fresh nonce, and a different page under
/// the same nonce and tag would be a forged tag. Used for one open only, so it holds at most what its recovery
/// checked.
///
/// With `seeding`, each page authenticated whole (not one only decrypted again) is also stored in the file's
/// decrypted-page cache, so that the open's first read finds the root pages there instead of authenticating them
/// once more.
final class AuthenticatedPages: Sendable {
    /// A page number and its 44-byte sealed tail, in words: hashed and compared as five words and two halves,
    /// not byte by byte.
    private struct Page: Hashable {
        let number: PageNumber
        let tailEnd: UInt32
        let tail: (UInt64, UInt64, UInt64, UInt64, UInt64)

        init(_ number: PageNumber, _ tail: UnsafeRawBufferPointer) {
            precondition(tail.count == PageSealer.overhead, "a sealed tail is a nonce and a tag")
            self.number = number
            let base = tail.baseAddress!
            self.tail = (
                base.loadUnaligned(as: UInt64.self), base.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: 24, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: 32, as: UInt64.self)
            )
            tailEnd = base.loadUnaligned(fromByteOffset: 40, as: UInt32.self)
        }

        static func == (left: Page, right: Page) -> Bool {
            left.number == right.number && left.tailEnd == right.tailEnd && left.tail.0 == right.tail.0
                && left.tail.1 == right.tail.1 && left.tail.2 == right.tail.2 && left.tail.3 == right.tail.3
                && left.tail.4 == right.tail.4
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(number)
            hasher.combine(tail.0)
            hasher.combine(tail.4)
        }
    }

    private struct Record {
        var pages: Set<Page> = []
        /// Meta slots decoded, by slot and sealed tail.
        var metas: [Page: Meta] = [:]
        /// Metas whose commit recovery found whole (every page listed and both roots intact).
        var whole: [Meta] = []
    }

    private let record = Locked(Record())
    /// The file's decrypted-page cache, given the pages this open authenticates; nil to keep them only here.
    let seeding: DecryptedPages?

    init(seeding: DecryptedPages? = nil) {
        self.seeding = seeding
    }

    /// Whether page `number`, whose sealed tail is `tail`, was authenticated before.
    func contains(_ number: PageNumber, tail: UnsafeRawBufferPointer) -> Bool {
        let page = Page(number, tail)
        return record.withLock { $0.pages.contains(page) }
    }

    /// Remembers that page `number`, whose sealed tail is `tail`, authenticated.
    func insert(_ number: PageNumber, tail: UnsafeRawBufferPointer) {
        let page = Page(number, tail)
        record.withLock { _ = $0.pages.insert(page) }
    }

    /// The meta decoded before from meta slot `slot` when its sealed tail was `tail`.
    func meta(slot: PageNumber, tail: UnsafeRawBufferPointer) -> Meta? {
        let key = Page(slot, tail)
        return record.withLock { $0.metas[key] }
    }

    /// Remembers `meta` as the meta slot `slot` decodes to while its sealed tail is `tail`.
    func insert(_ meta: Meta, slot: PageNumber, tail: UnsafeRawBufferPointer) {
        let key = Page(slot, tail)
        record.withLock { $0.metas[key] = meta }
    }

    /// Whether recovery found `meta`'s commit whole before in this open.
    ///
    /// The open reads the metas a second time under the lock's change counter, in case a commit landed since its
    /// first look; a meta found again as it was (the same slot contents, its tail unchanged) names pages that no
    /// writer rewrites while it is the newest or the one before (a writer only writes pages free in the newest
    /// version), so checking them again would decrypt and checksum the same bytes.
    func foundWhole(_ meta: Meta) -> Bool {
        record.withLock { $0.whole.contains(meta) }
    }

    /// Remembers that recovery found `meta`'s commit whole.
    func insertWhole(_ meta: Meta) {
        record.withLock { $0.whole.append(meta) }
    }
}
