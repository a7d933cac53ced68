import Foundation
import Testing

@testable import Strata

final class Appointment: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var at = Date(timeIntervalSince1970: 0)
    @Persisted var cancelledAt: Date?
    @Persisted var extra: AnyRealmValue
}

@Suite("Query language: date literals")
struct DateLiteralTests {
    /// 2024-01-01 10:00:00 UTC.
    static let tenOClock = Date(timeIntervalSince1970: 1_704_103_200)

    /// Appointments 1…5 at ten o'clock on 1 January 2024 plus -1 day, -1 s, 0, +0.5 s and +1 day; number 2 was
    /// cancelled at ten o'clock, number 3 has the date in a mixed value too.
    private func appointments() throws -> Realm {
        let realm = try Realm(
            configuration: .init(inMemoryIdentifier: "dates-\(UUID())", objectTypes: [Appointment.self]))
        try realm.write {
            for (id, offset) in [-86_400, -1, 0, 0.5, 86_400].enumerated() {
                realm.create(
                    Appointment.self, value: ["id": id + 1, "at": Self.tenOClock.addingTimeInterval(offset)])
            }
            realm.object(ofType: Appointment.self, forPrimaryKey: 2)?.cancelledAt = Self.tenOClock
            realm.object(ofType: Appointment.self, forPrimaryKey: 3)?.extra = .date(Self.tenOClock)
        }
        return realm
    }

    private func ids(_ realm: Realm, _ query: String) throws -> [Int] {
        try realm.objects(Appointment.self).checkedFilter(query).map(\.id).sorted()
    }

    @Test func everyWrittenFormOfTheSameInstantMatchesIt() throws {
        let realm = try appointments()
        for literal in [
            "2024-01-01@10:00:00", "2024-01-01T10:00:00", "2024-01-01T10:00:00Z", "2024-01-01@10:00:00Z",
            "2024-01-01@10:00:00:0", "2024-1-1@10:0:0", "T1704103200:0", "T+1704103200:+0",
        ] {
            #expect(try ids(realm, "at == \(literal)") == [3], "\(literal)")
        }
    }

    @Test func theFourthTimeFieldCountsNanoseconds() throws {
        let realm = try appointments()
        #expect(try ids(realm, "at == 2024-01-01@10:00:00:500000000") == [4])
        #expect(try ids(realm, "at == T1704103200:500000000") == [4])
        // :600000 is 600 microseconds, not 0.6 seconds: after number 3, before number 4 (at 0.5 s). Dates are
        // stored as seconds in a Double, about 0.1 µs apart today: finer nanoseconds round.
        #expect(try ids(realm, "at > 2024-01-01@10:00:00:600000") == [4, 5])
        #expect(try ids(realm, "at < 2024-01-01@10:00:00:600000") == [1, 2, 3])
    }

    @Test func dateLiteralsWorkWithEveryComparisonAndInFilter() throws {
        let realm = try appointments()
        #expect(try ids(realm, "at < 2024-01-01@10:00:00") == [1, 2])
        #expect(try ids(realm, "at >= 2024-01-01T09:59:59 AND at <= 2024-01-01T10:00:01") == [2, 3, 4])
        #expect(try ids(realm, "at BETWEEN {2023-12-31@00:00:00, 2024-01-01@09:59:59}") == [1, 2])
        #expect(try ids(realm, "at IN {2024-01-02@10:00:00, T1704016800:0}") == [1, 5])
        #expect(try ids(realm, "cancelledAt == 2024-01-01@10:00:00") == [2])
        #expect(try ids(realm, "cancelledAt != nil AND cancelledAt < T1704103201:0") == [2])
        #expect(try ids(realm, "extra == 2024-01-01@10:00:00") == [3])
        // The non-throwing filter parses them too.
        #expect(realm.objects(Appointment.self).filter("at > 2024-01-01@10:00:00").count == 2)
        #expect(realm.objects(Appointment.self).where { $0.at > Self.tenOClock }.count == 2)
    }

    @Test func datesBefore1970AndAroundLeapDaysAreExact() throws {
        let realm = try Realm(
            configuration: .init(inMemoryIdentifier: "old-dates-\(UUID())", objectTypes: [Appointment.self]))
        let cases: [(literal: String, seconds: Double)] = [
            ("1969-12-31@23:59:59", -1), ("1970-01-01@00:00:00", 0), ("1900-01-01@00:00:00", -2_208_988_800),
            ("2000-02-29@12:00:00", 951_825_600), ("2100-03-01@00:00:00", 4_107_542_400),
            ("1600-02-29@00:00:00", -11_670_998_400), ("T-1:-500000000", -1.5), ("T-2:0", -2),
        ]
        try realm.write {
            for (index, entry) in cases.enumerated() {
                realm.create(
                    Appointment.self, value: ["id": index, "at": Date(timeIntervalSince1970: entry.seconds)])
            }
        }
        for (index, entry) in cases.enumerated() {
            #expect(try ids(realm, "at == \(entry.literal)") == [index], "\(entry.literal)")
        }
    }

    @Test func unsupportedDateFormsSayWhatToWriteInstead() throws {
        let realm = try appointments()
        let cases: [(query: String, position: Int, reason: String)] = [
            ("at > 2024-01-01", 5, "the date 2024-01-01 needs a time of day: 2024-01-01@00:00:00"),
            ("at > 2024-01-01@10:00", 5, "needs hours, minutes and seconds"),
            ("at > 2024-01-01T10:00:00.5Z", 24, "fractions of a second are written as nanoseconds after a colon"),
            ("at > 2024-01-01T10:00:00+02:00", 24, "time zone offsets are not supported: dates in queries are UTC"),
            ("at > 2024-01-01T10:00:00-05:00", 24, "time zone offsets are not supported"),
            ("at > 2024-13-01@10:00:00", 5, "month 13 is out of range (1-12)"),
            ("at > 2023-02-29@10:00:00", 5, "day 29 is out of range (1-28)"),
            ("at > 2024-01-01@24:00:00", 5, "hour 24 is out of range (0-23)"),
            ("at > 2024-01-01@10:60:00", 5, "minute 60 is out of range (0-59)"),
            ("at > 2024-01-01@10:00:60", 5, "second 60 is out of range (0-59)"),
            ("at > 2024-01-01@10:00:00:1000000000", 5, "the nanoseconds 1000000000 is out of range"),
            ("at > 2024-01-01@10:00:00:", 5, "needs nanoseconds after the last colon"),
            ("at > 2024-01-01@10:00:00:1:2", 26, "unexpected character after the date"),
            // `/` divides: 2024 / 01 / 01 is the number 2024, which no date compares with.
            ("at > 2024/01/01", 5, "cannot be compared with the integer 2024 (a date is written 2024-01-01@10:00:00"),
            ("at > T1704103200:", 5, "needs nanoseconds after the colon"),
            ("at > T1704103200:-5", 5, "must have the same sign"),
            ("at > T1:1000000000", 5, "out of range (0-999999999)"),
            ("at > T99999999999999999999:0", 5, "out of range"),
        ]
        for (query, position, reason) in cases {
            do {
                _ = try realm.objects(Appointment.self).checkedFilter(query)
                Issue.record("\(query) was accepted")
            } catch let Realm.Error.invalidQuery(text, at, message) {
                #expect(text == query)
                #expect(at == position, "\(query): \(message)")
                #expect(message.contains(reason), "\(query): \(message)")
            }
        }
    }

    @Test func aPropertyNamedLikeAnEpochLiteralIsStillAProperty() throws {
        // `T1` without a colon is a name; only `T<digits>:` starts a date.
        let realm = try appointments()
        #expect(throws: Realm.Error.self) { try realm.objects(Appointment.self).checkedFilter("T1 == 3") }
        do {
            _ = try realm.objects(Appointment.self).checkedFilter("T1 == 3")
        } catch let Realm.Error.invalidQuery(_, _, reason) {
            #expect(reason.contains("T1"), "\(reason)")
        }
    }

    @Test func aDateComparedWithAnotherTypeIsATypeError() throws {
        let realm = try appointments()
        do {
            _ = try realm.objects(Appointment.self).checkedFilter("id == 2024-01-01@10:00:00")
            Issue.record("accepted")
        } catch let Realm.Error.invalidQuery(_, position, _) {
            #expect(position == 6)
        }
    }
}
