/// How a file's meta pages are written and read: as plain ``Meta`` pages, or sealed behind an encrypted file's
/// header (``SealedMeta``). Recovery reads the meta slots through it, so the same fallback rules (newest valid
/// slot wins; a damaged slot is passed over) hold for both kinds of file.
enum MetaCodec: Sendable {
    case plain
    case sealed(SealedMeta)

    /// Reads meta slot `slot` from `page`, which holds at least `available` readable bytes.
    func decode(_ page: UnsafeRawPointer, slot: PageNumber, available: Int) throws(StorageError) -> Result<
        Meta, Meta.Rejection
    > {
        switch self {
        case .plain: Meta.decode(page, slot: slot, available: available)
        case .sealed(let sealed): try sealed.decode(page, slot: slot, available: available)
        }
    }

    /// Writes `meta` as meta slot `slot` into `page` (`meta.pageSize` bytes).
    func encode(_ meta: Meta, into page: UnsafeMutableRawPointer, slot: PageNumber) throws(StorageError) {
        switch self {
        case .plain: meta.encode(into: page, slot: slot)
        case .sealed(let sealed): try sealed.encode(meta, into: page, slot: slot)
        }
    }
}
