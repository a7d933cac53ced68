import Dispatch
import Foundation
import Strata
import Testing

/// An actor that receives sectioned changes delivered to it and reports each with whether it ran there.
private actor SectionedChangeSink {
    let reports: AsyncStream<String>.Continuation

    init(_ reports: AsyncStream<String>.Continuation) { self.reports = reports }

    func report(_ change: RealmSectionedResultsChange<SectionedResults<String?, Contact>>) {
        assertIsolated()
        switch change {
        case .initial(let sections): reports.yield("initial \(sections.allKeys)")
        case .update(let sections, _, let insertions, _, let newSections, _):
            reports.yield("update \(sections.allKeys) rows \(insertions) sections \(Array(newSections))")
        case .error(let error): reports.yield("error \(error)")
        }
    }
}

/// Sectioned results and their sections observed where the Realm SDK lets you ask (`observe(on: queue)`), on an
/// actor, and as the `changes`/`snapshots` sequences the other collections have.
@Suite("Sectioned results: delivery on queues, actors and async sequences")
struct SectionedResultsDeliveryTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "sectioned-delivery-\(UUID())", objectTypes: [Contact.self])

    /// Contacts "banana", "apple": sections a [apple], b [banana].
    private func realm() throws -> Realm {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for name in ["banana", "apple"] { realm.create(Contact.self, value: ["name": name]) }
        }
        return realm
    }

    @Test(.timeLimit(.minutes(1))) func sectionedResultsAndASectionDeliverOnTheQueue() async throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        let queue = MarkedQueue("sectioned-on")
        let (deliveries, sink) = AsyncStream.makeStream(of: QueueDelivery.self)
        func report(_ what: String) { sink.yield(QueueDelivery(onQueue: queue.isCurrent, what: what)) }
        let whole = sections.observe(on: queue.queue) { change in
            switch change {
            case .initial(let sections): report("whole initial \(sections.allKeys)")
            case .update(let sections, _, let insertions, _, let newSections, _):
                report("whole update \(sections.allKeys) \(insertions) \(Array(newSections))")
            case .error(let error): report("whole error \(error)")
            }
        }
        let section = sections[0].observe(keyPaths: [\Contact.name], on: queue.queue) { change in
            switch change {
            case .initial(let section): report("a initial \(section.map(\.name))")
            case .update(let section, _, let insertions, _, _, _):
                report("a update \(section.map(\.name)) \(insertions)")
            case .error(let error): report("a error \(error)")
            }
        }
        var iterator = deliveries.makeAsyncIterator()
        var initial: [QueueDelivery] = []
        for _ in 0..<2 { initial.append(await iterator.next()!) }
        #expect(initial.allSatisfy { $0.onQueue })
        #expect(
            Set(initial.map(\.what)) == ["whole initial [Optional(\"a\"), Optional(\"b\")]", "a initial [\"apple\"]"])

        try await realm.asyncWrite {
            realm.create(Contact.self, value: ["name": "avocado"])
            realm.create(Contact.self, value: ["name": "cherry"])
        }
        var updates: [QueueDelivery] = []
        for _ in 0..<2 { updates.append(await iterator.next()!) }
        #expect(updates.allSatisfy { $0.onQueue })
        #expect(
            Set(updates.map(\.what)) == [
                "whole update [Optional(\"a\"), Optional(\"b\"), Optional(\"c\")] [[0, 1], [2, 0]] [2]",
                "a update [\"apple\", \"avocado\"] [[0, 1]]",
            ])
        whole.invalidate()
        section.invalidate()
    }

    @Test(.timeLimit(.minutes(1))) func sectionedResultsDeliverOnAnActor() async throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        let (reports, continuation) = AsyncStream.makeStream(of: String.self)
        let sink = SectionedChangeSink(continuation)
        let token = await sections.observe(on: sink) { sink, change in sink.report(change) }
        var iterator = reports.makeAsyncIterator()
        #expect(await iterator.next() == "initial [Optional(\"a\"), Optional(\"b\")]")
        try await realm.asyncWrite { realm.create(Contact.self, value: ["name": "cherry"]) }
        #expect(
            await iterator.next()
                == "update [Optional(\"a\"), Optional(\"b\"), Optional(\"c\")] rows [[2, 0]] sections [2]")
        token.invalidate()
    }

    @Test(.timeLimit(.minutes(1))) func changesBeginWithTheInitialStateThenReportEachWrite() async throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        var whole = sections.changes.makeAsyncIterator()
        var section = sections[1].changes(keyPaths: [\Contact.name]).makeAsyncIterator()
        guard case .initial(let initial)? = await whole.next() else {
            Issue.record("no initial state")
            return
        }
        #expect(initial.allKeys == ["a", "b"])
        guard case .initial(let b)? = await section.next() else {
            Issue.record("no initial section")
            return
        }
        #expect(b.map(\.name) == ["banana"])

        try realm.write { realm.create(Contact.self, value: ["name": "blueberry"]) }
        guard case .update(_, let deletions, let insertions, _, let newSections, _)? = await whole.next() else {
            Issue.record("no update")
            return
        }
        #expect(deletions.isEmpty && newSections.isEmpty)
        #expect(insertions == [IndexPath(item: 1, section: 1)])
        guard case .update(let updated, _, let rows, _, _, _)? = await section.next() else {
            Issue.record("no section update")
            return
        }
        #expect(updated.map(\.name) == ["banana", "blueberry"])
        #expect(rows == [IndexPath(item: 1, section: 1)])
    }

    @Test(.timeLimit(.minutes(1))) func snapshotsAreFrozenStatesReadableInAnyTask() async throws {
        let realm = try realm()
        var snapshots = realm.objects(Contact.self).sectioned(by: \.initial).snapshots.makeAsyncIterator()
        let first = try #require(await snapshots.next())
        try realm.write { realm.create(Contact.self, value: ["name": "cherry"]) }
        let second = try #require(await snapshots.next())
        let keys = await Task.detached { (first.value.allKeys, second.value.allKeys, second.value.isFrozen) }.value
        #expect(keys.0 == ["a", "b"])
        #expect(keys.1 == ["a", "b", "c"])
        #expect(keys.2)
    }

    /// A `ThreadSafeReference` to sectioned results (or to one section) resolves in another Realm of the file,
    /// live there with the same key function.
    @Test func aThreadSafeReferenceToSectionsResolvesElsewhere() async throws {
        let realm = try realm()
        let sections = realm.objects(Contact.self).sectioned(by: \.initial)
        let whole = ThreadSafeReference(to: sections)
        let section = ThreadSafeReference(to: sections[1])
        let configuration = configuration
        let resolved = try await Task.detached {
            let other = try Realm(configuration: configuration)
            try other.write { other.create(Contact.self, value: ["name": "berry"]) }
            let sections = try #require(other.resolve(whole))
            let section = try #require(other.resolve(section))
            return (sections.allKeys, section.key, section.map(\.name), sections.isFrozen)
        }.value
        #expect(resolved.0 == ["a", "b"])
        #expect(resolved.1 == "b")
        #expect(resolved.2 == ["banana", "berry"])
        #expect(!resolved.3)
        withExtendedLifetime(realm) {}
    }
}
