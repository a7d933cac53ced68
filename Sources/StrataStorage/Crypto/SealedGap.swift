/// The zero gap of a sealed page, which the commit log leaves out of an encrypted file's records.
///
/// Every commit zeroes the gap between a branch or leaf page's slots and its entries before sealing it
/// (``PageExtents``). In counter mode, encrypting zeros gives the key stream itself, so the sealed bytes of the gap
/// follow from the page's nonce and the key: a record need not carry them, and a small commit's record is as
/// small as a plain file's (a single put into a large tree logs about two pages' worth of bytes, not four whole
/// pages). Logging whole sealed pages made durable single-put commits of an encrypted file about 1.6× as slow as
/// a plain file's on this machine, most of it in the larger synchronous write.
enum SealedGap {
    /// The extent `PageExtents` gives a clear page, as a sealed page's gap: only the part below the page's usable
    /// bytes (its nonce and tag follow them); a page without a gap is logged whole.
    static func of(clear page: UnsafeRawPointer, sealer: PageSealer) -> (head: Int, tail: Int) {
        let (head, tail) = PageExtents.of(page, pageSize: sealer.pageSize)
        guard head < tail, tail <= sealer.usableSize else { return (sealer.pageSize, sealer.pageSize) }
        return (head, tail)
    }

    /// Puts back the gap `[head, tail)` of the sealed page `image` (page `number`, its other bytes in place, the gap
    /// itself undefined), then checks the page's tag. False when the bounds make no sense or the page does not
    /// authenticate: the record is not replayed. A page logged whole (`head == tail`) is only checked.
    static func restore(
        _ image: UnsafeMutableRawPointer, head: Int, tail: Int, page number: PageNumber, sealer: PageSealer
    ) -> Bool {
        let usable = sealer.usableSize
        guard head <= tail, head == tail || tail <= usable else { return false }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: usable, alignment: 16)
        defer { scratch.deallocate() }
        if head < tail {
            // The key stream from the page's start to the gap's end, by encrypting zeros under the page's nonce.
            let nonce = Array(UnsafeRawBufferPointer(start: image + usable, count: BlockCipher.nonceSize))
            scratch.initializeMemory(as: UInt8.self, repeating: 0, count: tail)
            do {
                try sealer.cipher.decryptAuthenticated(
                    UnsafeRawBufferPointer(start: scratch, count: tail), into: scratch, nonce: nonce)
            } catch {
                return false
            }
            (image + head).copyMemory(from: scratch + head, byteCount: tail - head)
        }
        return (try? sealer.open(UnsafeRawPointer(image), page: number, into: scratch)) == true
    }
}
