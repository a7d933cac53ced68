import StrataStorage

extension Realm {
    /// Why a Realm's file opened at an older version than the newest commit it holds.
    ///
    /// Opening a file checks its newest commit (the meta page naming it, its root pages, and for small commits
    /// the pages it wrote). When that commit cannot be read and no commit log beside the file holds it, the file
    /// opens at the commit before, so that the app keeps working with everything up to it. That is the designed
    /// outcome after a power cut interrupted a commit (which then never returned, so nothing acknowledged is
    /// lost); otherwise it means the file was damaged. Either way it is reported here, never silent.
    ///
    /// ```swift
    /// let realm = try Realm()
    /// if let notice = realm.recoveryNotice {
    ///     log.warning("\(notice)")  // opened version 41; dropped version 42: root page 7 fails its checksum
    /// }
    /// ```
    public struct RecoveryNotice: Sendable, Equatable, CustomStringConvertible {
        /// The commit that was dropped, or nil when its meta page is too damaged to tell.
        public let droppedVersion: UInt64?
        /// The version the file opened at.
        public let openedVersion: UInt64
        /// The page found wrong (a meta page, 0 or 1; a root page; a page the dropped commit wrote), or nil when
        /// no single page is at fault (the file is shorter than the dropped commit needs).
        public let page: UInt32?
        /// What was wrong, in words.
        public let reason: String

        /// "opened version V; dropped version D: reason".
        public var description: String { text }
        private let text: String

        init(_ notice: StrataStorage.RecoveryNotice) {
            droppedVersion = notice.droppedVersion
            openedVersion = notice.openedVersion
            page = notice.page
            reason = notice.reason
            text = notice.description
        }
    }

    /// Why this Realm's file opened at an older version than the newest commit in it (see ``RecoveryNotice``),
    /// or nil when it opened at its newest commit. The same for every Realm on the file in this process, since
    /// the file is opened once per process.
    public var recoveryNotice: RecoveryNotice? { store.recovery.map(RecoveryNotice.init) }
}
