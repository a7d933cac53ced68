/// Sectioned results and their sections move between Realms of one file like the collections they are made
/// from: a ``ThreadSafeReference`` to them resolves, a ``Frozen`` of them hands each reader its own view, and
/// observation on a queue or an actor finds them again there. The rebound value sections the same collection with
/// the same key function (it is a new value, so not `==` to the original, as a thawed one is not).
extension SectionSource: RealmRebindable {
    func rebound(to realm: Realm) -> SectionSource? {
        switch self {
        case .results(let results): results.rebound(to: realm).map { .results($0) }
        case .values(let values, let ascending): values.rebound(to: realm).map { .values($0, ascending: ascending) }
        }
    }
}

extension SectionedResults: RealmRebindable {
    func rebound(to realm: Realm) -> SectionedResults? {
        if realm === self.realm { return self }
        return source.rebound(to: realm).map { SectionedResults(source: $0, key: cache.key) }
    }
}

extension ResultsSection: RealmRebindable {
    func rebound(to realm: Realm) -> ResultsSection? {
        parent.rebound(to: realm).map { ResultsSection(key: key, parent: $0) }
    }
}
