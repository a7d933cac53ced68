public import Foundation

// Sectioned results report rows as `IndexPath(item:section:)`. On Apple platforms UIKit and AppKit give
// `IndexPath` these members; Foundation alone (Linux) does not, so Strata adds them there, with the same meaning:
// a two-element path, section first.
#if !canImport(UIKit) && !canImport(AppKit)
    extension IndexPath {
        /// The path of row `item` of section `section`.
        ///
        /// ```swift
        /// let first = sectioned[IndexPath(item: 0, section: 0)]
        /// ```
        public init(item: Int, section: Int) { self.init(indexes: [section, item]) }

        /// The path of row `row` of section `section` (the table-view spelling of ``init(item:section:)``).
        public init(row: Int, section: Int) { self.init(indexes: [section, row]) }

        /// The section: the first index. Traps unless the path has two indexes.
        public var section: Int {
            precondition(count == 2, "IndexPath.section: the path \(self) does not have exactly two indexes")
            return self[0]
        }

        /// The row in the section: the second index. Traps unless the path has two indexes.
        public var item: Int {
            precondition(count == 2, "IndexPath.item: the path \(self) does not have exactly two indexes")
            return self[1]
        }

        /// The row in the section (the table-view spelling of ``item``).
        public var row: Int { item }
    }
#endif
