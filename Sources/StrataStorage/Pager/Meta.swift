/// The contents of a meta page: the root of one committed version.
///
/// Pages 0 and 1 hold meta records; commit `v` writes slot `v % 2`, so the previous version's meta survives a
/// torn meta write. Layout after the page header:
/// ```
/// 32  8 bytes  magic "STRATA\u{0}\u{1}"
/// 40  u32      format version
/// 44  u32      page size
/// 48  u64      version (commit number)
/// 56  u64      page count (pages [0, count) are in use or free; the file may be longer)
/// 64  32 bytes catalog tree (named trees)
/// 96  32 bytes free tree (pages that later commits may reuse)
/// 128 u64      commit time, microseconds since 1970 (informational)
/// 136 u32      number of listed pages (0: the commit synced its pages before writing this meta)
/// 140 u32      reserved tail: bytes at the end of every page the layout leaves alone (0; see PageGeometry)
/// 144 ...      listed pages, 12 bytes each: u32 page number, u64 checksum of that page
/// ```
/// The page header's checksum covers the whole page.
///
/// A commit that wrote few enough pages lists them here and syncs once, after writing its pages and this meta
/// together. Recovery accepts such a meta only if every listed page holds exactly the listed checksum and this
/// version; otherwise the commit did not reach the disk whole and the previous version is used.
struct Meta: Sendable, Equatable {
    var version: UInt64
    var pageCount: UInt64
    var pageSize: Int
    var catalog: TreeRoot
    var freeTree: TreeRoot
    var commitTime: UInt64
    /// Pages written by this commit, when it used the single-sync protocol.
    var written: [PageStamp] = []
    /// Bytes at the end of every page that the layout leaves alone (``PageGeometry/reservedTail``); 0 in plain
    /// files, whose meta pages then hold the zero they always held at this offset.
    var reservedTail: Int = 0

    /// The sizes the file's pages are laid out with.
    var geometry: PageGeometry { PageGeometry(pageSize: pageSize, reservedTail: reservedTail) }

    /// A page number and the checksum it must carry.
    struct PageStamp: Sendable, Equatable {
        let page: PageNumber
        let checksum: UInt64
    }

    static let magic: [UInt8] = [0x53, 0x54, 0x52, 0x41, 0x54, 0x41, 0x00, 0x01]
    static let formatVersion: UInt32 = 1
    static let magicOffset = 32
    static let formatOffset = 40
    static let pageSizeOffset = 44
    static let versionOffset = 48
    static let pageCountOffset = 56
    static let catalogOffset = 64
    static let freeTreeOffset = 96
    static let timeOffset = 128
    static let writtenCountOffset = 136
    static let reservedTailOffset = 140
    static let writtenOffset = 144
    static let stampSize = 12

    /// How many written pages a meta page whose layout may use `usableSize` bytes can list.
    static func maxWritten(usableSize: Int) -> Int { (usableSize - writtenOffset) / stampSize }
    /// Largest page count addressable by 32-bit page numbers.
    static let maxPageCount = UInt64(UInt32.max)

    /// Writes the meta page (header, fields, checksum) into `page`, which is `pageSize` bytes.
    func encode(into page: UnsafeMutableRawPointer, slot: PageNumber) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        page.setU64(PageHeader.version, version)
        page.setU32(PageHeader.pageNumber, slot)
        page.setU8(PageHeader.kind, PageKind.meta.rawValue)
        for (index, byte) in Meta.magic.enumerated() { page.setU8(Meta.magicOffset + index, byte) }
        page.setU32(Meta.formatOffset, Meta.formatVersion)
        page.setU32(Meta.pageSizeOffset, UInt32(pageSize))
        page.setU64(Meta.versionOffset, version)
        page.setU64(Meta.pageCountOffset, pageCount)
        catalog.encode(into: page + Meta.catalogOffset)
        freeTree.encode(into: page + Meta.freeTreeOffset)
        page.setU64(Meta.timeOffset, commitTime)
        precondition(
            written.count <= Meta.maxWritten(usableSize: geometry.usableSize), "too many pages listed in a meta page")
        page.setU32(Meta.writtenCountOffset, UInt32(written.count))
        page.setU32(Meta.reservedTailOffset, UInt32(reservedTail))
        for (index, stamp) in written.enumerated() {
            let offset = Meta.writtenOffset + index * Meta.stampSize
            page.setU32(offset, stamp.page)
            page.setU64(offset + 4, stamp.checksum)
        }
        PageChecksum.seal(page, page: slot, pageSize: pageSize)
    }

    /// Why a meta slot was rejected.
    enum Rejection: Error, Equatable {
        case notStrata
        case unsupportedFormat(UInt32)
        case badPageSize(Int)
        case checksum
        case inconsistent(String)
    }

    /// Reads meta slot `slot` from `page`, which holds at least `available` readable bytes.
    static func decode(_ page: UnsafeRawPointer, slot: PageNumber, available: Int) -> Result<Meta, Rejection> {
        guard available >= 256 else { return .failure(.notStrata) }
        for (index, byte) in magic.enumerated() where page.u8(magicOffset + index) != byte {
            return .failure(.notStrata)
        }
        let format = page.u32(formatOffset)
        guard format == formatVersion else { return .failure(.unsupportedFormat(format)) }
        let pageSize = Int(page.u32(pageSizeOffset))
        guard PageGeometry.isValid(pageSize: pageSize), available >= pageSize else {
            return .failure(.badPageSize(pageSize))
        }
        guard PageChecksum.verify(page, page: slot, pageSize: pageSize) else { return .failure(.checksum) }
        guard page.u8(PageHeader.kind) == PageKind.meta.rawValue, page.u32(PageHeader.pageNumber) == slot else {
            return .failure(.inconsistent("meta header does not name slot \(slot)"))
        }
        let pageCount = page.u64(pageCountOffset)
        guard pageCount >= 2, pageCount <= maxPageCount else {
            return .failure(.inconsistent("page count \(pageCount) is out of range"))
        }
        guard let catalog = TreeRoot.decode(page + catalogOffset, pageCount: pageCount), catalog.kind == .keyed,
            let freeTree = TreeRoot.decode(page + freeTreeOffset, pageCount: pageCount), freeTree.kind == .keyed
        else { return .failure(.inconsistent("tree descriptors are invalid")) }
        let reservedTail = Int(page.u32(reservedTailOffset))
        guard reservedTail < pageSize / 4 else {
            return .failure(.inconsistent("reserves \(reservedTail) bytes of every page, more than a page can spare"))
        }
        let listed = Int(page.u32(writtenCountOffset))
        guard listed <= maxWritten(usableSize: pageSize - reservedTail) else {
            return .failure(.inconsistent("lists \(listed) written pages, more than a meta page holds"))
        }
        var written: [PageStamp] = []
        written.reserveCapacity(listed)
        for index in 0..<listed {
            let offset = writtenOffset + index * stampSize
            written.append(PageStamp(page: page.u32(offset), checksum: page.u64(offset + 4)))
        }
        return .success(
            Meta(
                version: page.u64(versionOffset), pageCount: pageCount, pageSize: pageSize, catalog: catalog,
                freeTree: freeTree, commitTime: page.u64(timeOffset), written: written, reservedTail: reservedTail))
    }
}

/// Page checksums: XXH64 of everything after the checksum field, seeded with the page number so that a page
/// written to the wrong place does not validate.
enum PageChecksum {
    @inline(__always)
    static func compute(_ page: UnsafeRawPointer, page number: PageNumber, pageSize: Int) -> UInt64 {
        Checksum.xxh64(page + 8, count: pageSize - 8, seed: UInt64(number))
    }

    static func seal(_ page: UnsafeMutableRawPointer, page number: PageNumber, pageSize: Int) {
        page.setU64(PageHeader.checksum, compute(UnsafeRawPointer(page), page: number, pageSize: pageSize))
    }

    static func verify(_ page: UnsafeRawPointer, page number: PageNumber, pageSize: Int) -> Bool {
        page.u64(PageHeader.checksum) == compute(page, page: number, pageSize: pageSize)
    }
}
