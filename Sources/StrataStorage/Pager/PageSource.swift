/// Resolves page numbers to validated page memory. Read paths are generic over it and specialised.
protocol PageSource {
    var geometry: PageGeometry { get }
    var file: PathRef { get }
    /// Pages that exist in this view: bounds anything sized by data read from the file.
    var pageLimit: UInt64 { get }
    /// The page's bytes, validated on first use (see ``ValidatedPages``), and the number of entries under it
    /// (nil when not known: a write transaction's own pages). Throws for a page number outside the version's
    /// pages and for a page that fails validation.
    func validatedPage(_ number: PageNumber) throws(StorageError) -> (page: UnsafeRawPointer, entries: UInt64?)
}

extension PageSource {
    /// The page's bytes, validated.
    @inline(__always)
    func page(_ number: PageNumber) throws(StorageError) -> UnsafeRawPointer { try validatedPage(number).page }

    /// A validated node view of a tree page.
    @inline(__always)
    func node(_ number: PageNumber) throws(StorageError) -> Node {
        try Node(page(number), page: number, pageSize: geometry.usableSize, file: file)
    }

    /// A validated node view of a tree page reached through a reference that counts `expected` entries under it
    /// (a branch entry, or a tree descriptor for the root): the page must hold exactly that many.
    @inline(__always)
    func node(_ number: PageNumber, entries expected: UInt64) throws(StorageError) -> Node {
        let (page, entries) = try validatedPage(number)
        let node = try Node(page, page: number, pageSize: geometry.usableSize, file: file)
        if let entries, entries != expected {
            throw file.corrupt(number, "the page holds \(entries) entries, the reference to it counts \(expected)")
        }
        return node
    }
}

/// The pages of one committed version, read through a mapping, each validated on first use.
///
/// Holds no strong references: it is copied on every lookup, and its owner (a read transaction, which keeps the
/// mapping and the file alive) outlives it. This keeps reference counting out of the read path.
struct SnapshotPages: PageSource {
    let base: UnsafeRawPointer
    let pageCount: UInt64
    let geometry: PageGeometry
    /// The version read: no page it reaches can have been written after it.
    let version: UInt64
    unowned(unsafe) let file: PathRef
    unowned(unsafe) let validated: ValidatedPages
    /// An encrypted file's decrypted pages, which are read instead of the mapping's sealed ones; nil (one
    /// predictable branch per lookup) for a plain file.
    unowned(unsafe) let decrypted: DecryptedPages?
    /// The decrypted pages' slots known current, looked up without reference counting (``CurrentSlots``); nil
    /// for a plain file.
    let currentSlots: UnsafePointer<CurrentSlots>?

    init(mapping: Mapping, meta: Meta, file: PathRef, validated: ValidatedPages, decrypted: DecryptedPages? = nil) {
        let geometry = meta.geometry
        precondition(
            UInt64(mapping.capacity) >= meta.pageCount * UInt64(geometry.pageSize), "mapping too small for version")
        self.base = mapping.base
        self.pageCount = meta.pageCount
        self.geometry = geometry
        self.version = meta.version
        self.file = file
        self.validated = validated
        self.decrypted = decrypted
        self.currentSlots = decrypted.map { UnsafePointer($0.current) }
    }

    var pageLimit: UInt64 { pageCount }

    @inline(__always)
    func validatedPage(_ number: PageNumber) throws(StorageError) -> (page: UnsafeRawPointer, entries: UInt64?) {
        guard number >= 2, UInt64(number) < pageCount else {
            throw file.corrupt(number, "reference to page \(number) outside the version's \(pageCount) pages")
        }
        var page = base + Int(number) &* geometry.pageSize
        if let currentSlots {
            if let known = currentSlots.pointee.knownCurrent(number) {
                page = known
            } else {
                page = try decrypted.unsafelyUnwrapped.page(number, sealed: page, file: file)
            }
        }
        let written = page.u64(PageHeader.version)
        // `written - 1 < version`: stamped by a commit (never 0) no newer than this version.
        if written &- 1 < version, let entries = validated.entries(number, version: written) { return (page, entries) }
        return (
            page,
            try validated.validate(page, number: number, limit: version, geometry: geometry, file: file)
        )
    }
}
