/// Resolves page numbers to validated page memory. Read paths are generic over it and specialised.
protocol PageSource {
    var geometry: PageGeometry { get }
    var file: PathRef { get }
    /// Pages that exist in this view: bounds anything sized by data read from the file.
    var pageLimit: UInt64 { get }
    /// The page's bytes; throws for a page number outside the version's pages.
    func page(_ number: PageNumber) throws(StorageError) -> UnsafeRawPointer
}

extension PageSource {
    /// A validated node view of a tree page.
    @inline(__always)
    func node(_ number: PageNumber) throws(StorageError) -> Node {
        try Node(page(number), page: number, pageSize: geometry.pageSize, file: file)
    }
}

/// The pages of one committed version, read through a mapping.
///
/// Holds no strong references: it is copied on every lookup, and its owner (a read transaction, which keeps the
/// mapping and the file alive) outlives it. This keeps reference counting out of the read path.
struct SnapshotPages: PageSource {
    let base: UnsafeRawPointer
    let pageCount: UInt64
    let geometry: PageGeometry
    unowned(unsafe) let file: PathRef

    init(mapping: Mapping, pageCount: UInt64, geometry: PageGeometry, file: PathRef) {
        precondition(UInt64(mapping.capacity) >= pageCount * UInt64(geometry.pageSize), "mapping too small for version")
        self.base = mapping.base
        self.pageCount = pageCount
        self.geometry = geometry
        self.file = file
    }

    var pageLimit: UInt64 { pageCount }

    @inline(__always)
    func page(_ number: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        guard number >= 2, UInt64(number) < pageCount else {
            throw file.corrupt(number, "reference to page \(number) outside the version's \(pageCount) pages")
        }
        return base + Int(number) &* geometry.pageSize
    }
}
