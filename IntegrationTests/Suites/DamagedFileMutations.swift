import Foundation
import StrataTestSupport

@testable import StrataStorage

/// The ways the damaged-file corpus damages a real object file. Each is seeded and deterministic: variant `n`
/// of a run is the same bytes on every run of the same base file.
enum FileDamageKind: String, CaseIterable, Sendable {
    /// 1 to 8 bits flipped in one page the newest version reaches (meta pages included).
    case flippedBits
    /// A page the newest version reaches, zeroed.
    case zeroedPage
    /// A page the newest version reaches, overwritten with random bytes.
    case randomPage
    /// A page the newest version reaches, swapped with another page of the file.
    case swappedPages
    /// The file cut short at a random length.
    case truncated
    /// Random bytes appended to the file.
    case appendedBytes
    /// The newest meta page replaced by the meta it overwrote (two commits older, with a valid checksum): the
    /// newest commit is lost.
    case staleMeta
    /// One structural field of a tree page (header count or upper bound, a slot, an entry's key length or value
    /// length and storage kind, a branch child or count, a nested tree descriptor) changed, and the page sealed
    /// again with a valid checksum: only structural checks can catch it.
    case structuralFieldResealed
    /// A meta page field (page count, catalog or free-tree descriptor, version) changed and the page sealed again.
    case metaFieldResealed
}

/// One damaged copy of the base file.
struct FileDamageVariant: Sendable {
    let index: Int
    let kind: FileDamageKind
    /// The damaged file's bytes.
    let image: [UInt8]
}

/// Makes the damaged variants of a base file (see ``FileDamageKind``).
struct FileDamageCorpus {
    let base: [UInt8]
    /// The same file one commit earlier: its meta pages are the stale metas.
    let previous: [UInt8]
    let pageSize: Int
    /// The version the base file opens at.
    let newestVersion: UInt64
    /// Pages the newest version reaches, the two meta pages included.
    let live: [Int]
    /// The tree (branch and leaf) pages among them; in an encrypted file, every page past the metas.
    let treePages: [Int]
    /// Whether the file is encrypted: its pages' fields are sealed and cannot be edited one by one.
    let encrypted: Bool

    init(base: [UInt8], previous: [UInt8], path: String, encryption: FileEncryption = .plain) throws {
        self.base = base
        self.previous = previous
        let store = try Store.open(path: path, options: encryption.options(StoreOptions(readOnly: true)))
        pageSize = store.pageSize
        newestVersion = store.latestVersion
        live = [0, 1] + (try store.reachablePages().map(Int.init).filter { $0 >= 2 })
        let pageSize = pageSize
        // An encrypted file's page kinds are sealed: its bytes say nothing about which pages are trees (reading
        // the kind from ciphertext picked pages at random and, some runs, none). There a structural edit is damage
        // like any other, caught by the page's tag: any page past the metas serves, at any offset.
        encrypted = encryption != .plain
        treePages =
            encrypted
            ? live.filter { $0 >= 2 }
            : live.filter { page in
                let kind = base[page * pageSize + PageHeader.kind]
                return page >= 2 && (kind == PageKind.branch.rawValue || kind == PageKind.leaf.rawValue)
            }
    }

    /// Variant `index`: its kind cycles through every kind; its damage comes from a generator seeded with the
    /// index.
    func variant(_ index: Int) -> FileDamageVariant {
        let kind = FileDamageKind.allCases[index % FileDamageKind.allCases.count]
        var generator = SeededGenerator(seed: 0xDA3A_6E00 &+ UInt64(index))
        return FileDamageVariant(index: index, kind: kind, image: damage(kind, &generator))
    }

    private var pages: Int { base.count / pageSize }

    private func damage(_ kind: FileDamageKind, _ generator: inout SeededGenerator) -> [UInt8] {
        var image = base
        let page = live.randomElement(using: &generator)!
        let start = page * pageSize
        switch kind {
        case .flippedBits:
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                image[start + Int.random(in: 0..<pageSize, using: &generator)] ^=
                    UInt8(1) << UInt8.random(in: 0...7, using: &generator)
            }
        case .zeroedPage:
            for offset in start..<(start + pageSize) { image[offset] = 0 }
        case .randomPage:
            for offset in start..<(start + pageSize) { image[offset] = UInt8.random(in: 0...255, using: &generator) }
        case .swappedPages:
            var other = Int.random(in: 0..<pages, using: &generator)
            if other == page { other = (page + 1) % pages }
            for offset in 0..<pageSize { image.swapAt(start + offset, other * pageSize + offset) }
        case .truncated:
            image.removeLast(Int.random(in: 1..<image.count, using: &generator))
        case .appendedBytes:
            image += (0..<Int.random(in: 1...(3 * pageSize), using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
        case .staleMeta:
            // Commit v writes slot v % 2; the previous file's copy of that slot is the meta of v - 2.
            let slot = Int(newestVersion % 2)
            image.replaceSubrange(
                slot * pageSize..<(slot + 1) * pageSize, with: previous[slot * pageSize..<(slot + 1) * pageSize])
        case .structuralFieldResealed:
            let page = treePages.randomElement(using: &generator) ?? page
            if encrypted {
                nudge(&image, at: page * pageSize + Int.random(in: 0..<(pageSize - 1), using: &generator), &generator)
            } else {
                editStructure(of: page, in: &image, &generator)
                seal(&image, page: page)
            }
        case .metaFieldResealed:
            let slot = Int(newestVersion % 2)
            let field = [
                Meta.pageCountOffset, Meta.catalogOffset, Meta.catalogOffset + 4, Meta.catalogOffset + 8,
                Meta.freeTreeOffset, Meta.freeTreeOffset + 4, Meta.freeTreeOffset + 8, Meta.versionOffset,
            ].randomElement(using: &generator)!
            nudge(&image, at: slot * pageSize + field, &generator)
            seal(&image, page: slot)
        }
        return image
    }

    /// Changes one structural field of tree page `page` (see ``FileDamageKind/structuralFieldResealed``).
    private func editStructure(of page: Int, in image: inout [UInt8], _ generator: inout SeededGenerator) {
        let start = page * pageSize
        func u16(_ offset: Int) -> Int { Int(image[offset]) | Int(image[offset + 1]) << 8 }
        let count = u16(start + PageHeader.count)
        let isLeaf = image[start + PageHeader.kind] == PageKind.leaf.rawValue
        guard count > 0 else {
            nudge(&image, at: start + PageHeader.upper, &generator)
            return
        }
        let slot = start + PageHeader.size + Int.random(in: 0..<count, using: &generator) * PageHeader.slotSize
        let entry = start + u16(slot)
        guard entry + 14 <= start + pageSize else {
            nudge(&image, at: slot, &generator)
            return
        }
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: nudge(&image, at: start + PageHeader.count, &generator)
        case 1: nudge(&image, at: start + PageHeader.upper, &generator)
        case 2: nudge(&image, at: slot, &generator)
        case 3: nudge(&image, at: entry, &generator)  // key length
        case 4:
            // Leaf: the value length (low bytes) or the storage kind (top bits); branch: the child page.
            if isLeaf && Bool.random(using: &generator) {
                image[entry + 5] ^= UInt8(1) << UInt8.random(in: 6...7, using: &generator)
            } else {
                nudge(&image, at: entry + 2, &generator)
            }
        default:
            if isLeaf {
                // A nested tree descriptor (root page, depth, kind, count) when the entry holds one, else the
                // value length.
                let info =
                    UInt32(image[entry + 2]) | UInt32(image[entry + 3]) << 8 | UInt32(image[entry + 4]) << 16
                    | UInt32(image[entry + 5]) << 24
                let keyLength = u16(entry)
                let payload = entry + EntryLayout.leafHeader + keyLength
                if info >> EntryLayout.storageShift == 2, payload + 32 <= start + pageSize {
                    nudge(&image, at: payload + [0, 4, 6, 8].randomElement(using: &generator)!, &generator)
                } else {
                    nudge(&image, at: entry + 2, &generator)
                }
            } else {
                nudge(&image, at: entry + 6, &generator)  // the subtree count
            }
        }
    }

    /// Adds a small amount, or writes a random value, to the little-endian u16 at `offset`.
    private func nudge(_ image: inout [UInt8], at offset: Int, _ generator: inout SeededGenerator) {
        let old = Int(image[offset]) | Int(image[offset + 1]) << 8
        let new =
            Bool.random(using: &generator)
            ? old &+ [-2, -1, 1, 2, 8].randomElement(using: &generator)! : Int.random(in: 0...0xFFFF, using: &generator)
        image[offset] = UInt8(truncatingIfNeeded: new)
        image[offset + 1] = UInt8(truncatingIfNeeded: new >> 8)
    }

    private func seal(_ image: inout [UInt8], page: Int) {
        let pageSize = pageSize
        image.withUnsafeMutableBytes { bytes in
            PageChecksum.seal(bytes.baseAddress! + page * pageSize, page: PageNumber(page), pageSize: pageSize)
        }
    }
}
