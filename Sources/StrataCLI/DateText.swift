import Foundation

/// Dates as the tool writes and reads them.
///
/// `dump` writes ISO 8601 in UTC with exactly the fraction digits the stored value needs (a date is stored as a
/// `Double` of seconds since 2001): `2023-11-14T22:13:20Z`, `2023-11-14T22:13:20.250Z`,
/// `2023-11-14T22:13:20.2500001Z`. `load` reads that back to the same `Double`, bit for bit.
///
/// `--arg` also takes the date literals of the Realm Query Language (the library's parser reads them in
/// queries; this mirrors its rules for values that arrive as arguments): `2024-01-01@10:00:00`, with `T` for `@`,
/// a fourth `:NANOSECONDS` field or a trailing `Z`, and `T<seconds>:<nanoseconds>` since 1970.
enum DateText {
    /// The ISO 8601 text of `date` that ``parseISO(_:)`` reads back exactly.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite else { return "\(interval)" }
        let seconds = interval.rounded(.down)
        let whole = Date(timeIntervalSinceReferenceDate: seconds).formatted(.iso8601)
        guard interval > seconds else { return whole }
        return String(whole.dropLast()) + "." + fractionDigits(of: interval, after: seconds) + "Z"
    }

    /// The fewest digits (at least three: milliseconds) after the point such that `seconds + Double("0." +
    /// digits)`, which is how ``parseISO(_:)`` reads them, is `interval` again. Dates taken with millisecond,
    /// microsecond or nanosecond precision need 3, 6 or 9; any other `Double` gets the shortest decimal form of its
    /// fraction, which is exact.
    private static func fractionDigits(of interval: Double, after seconds: Double) -> String {
        // Exact: `interval` and `seconds` are less than one apart.
        let fraction = interval - seconds
        var scale = 1.0
        for count in 1...9 {
            scale *= 10
            guard count >= 3 else { continue }
            let scaled = (fraction * scale).rounded()
            guard scaled < scale else { continue }
            let digits = String(Int(scaled))
            let text = String(repeating: "0", count: count - digits.count) + digits
            if let value = Double("0." + text), seconds + value == interval { return text }
        }
        return shortestDigits(of: fraction)
    }

    /// The digits after the point of `fraction` (in 0..<1) in its shortest round-tripping decimal form.
    private static func shortestDigits(of fraction: Double) -> String {
        let shortest = "\(fraction)"  // "0.25", "5e-07", "1.25e-05"
        let parts = shortest.split(separator: "e")
        let mantissa = parts[0]
        let exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let point = mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) }
        var digits = mantissa.filter { $0 != "." }
        var pointAt = (point ?? mantissa.count) + exponent
        // Digits before the point are zero for a fraction below one: drop them.
        while pointAt > 0, digits.first == "0" {
            digits.removeFirst()
            pointAt -= 1
        }
        var text = String(repeating: "0", count: max(0, -pointAt)) + digits
        while text.count > 3, text.last == "0" { text.removeLast() }
        while text.count < 3 { text += "0" }
        return text
    }

    /// A date written by ``format(_:)``, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`; nil for text of another form. Throws
    /// for a date of that form that does not exist (`2023-02-30`). Read byte by byte: `load` reads one per date.
    static func parseISO(_ text: String) throws(ArgumentError) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- 0x30
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1.asciiValue }),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21,
                bytes[20..<(bytes.count - 1)].allSatisfy({ $0 &- 0x30 < 10 }),
                let value = Double("0" + String(decoding: bytes[19..<(bytes.count - 1)], as: UTF8.self))
            else { return nil }
            fraction = value
        }
        let seconds = try secondsSince1970(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        // Whole seconds are exact in a Double, and so is their distance to 2001: the fraction adds exactly as
        // `format` took it away.
        let whole = Double(seconds) - Date.timeIntervalBetween1970AndReferenceDate
        return Date(timeIntervalSinceReferenceDate: whole + fraction)
    }

    /// A date in any form `--arg` takes; nil when `text` is no date at all; throws when it is written as a date but
    /// one that does not exist (month 13) or cannot be stored.
    static func parse(_ text: String) throws(ArgumentError) -> Date? {
        if let date = try parseISO(text) { return date }
        if let match = text.wholeMatch(of: /T([+-]?[0-9]+):([+-]?[0-9]+)/) {
            guard let seconds = Int64(match.1), let nanoseconds = Int64(match.2) else {
                throw ArgumentError(reason: "the date is out of range")
            }
            guard abs(nanoseconds) <= 999_999_999 else {
                throw ArgumentError(reason: "the nanoseconds are out of range (0-999999999)")
            }
            guard (seconds >= 0 && nanoseconds >= 0) || (seconds <= 0 && nanoseconds <= 0) else {
                throw ArgumentError(reason: "the seconds and nanoseconds must have the same sign")
            }
            return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
        }
        guard
            let match = text.wholeMatch(
                of:
                    /([0-9]{1,9})-([0-9]{1,2})-([0-9]{1,2})[@T]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,9}))?Z?/
            )
        else {
            if text.wholeMatch(of: /[0-9]+-[0-9]+-[0-9]+/) != nil {
                throw ArgumentError(reason: "a date needs a time of day: \(text)@00:00:00 (dates are UTC)")
            }
            return nil
        }
        let seconds = try secondsSince1970(
            year: Int64(match.1)!, month: Int64(match.2)!, day: Int64(match.3)!, hour: Int64(match.4)!,
            minute: Int64(match.5)!, second: Int64(match.6)!)
        let nanoseconds = match.7.map { Int64($0)! } ?? 0
        guard nanoseconds <= 999_999_999 else {
            throw ArgumentError(reason: "the nanoseconds \(nanoseconds) are out of range (0-999999999)")
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    /// The UTC time given, as seconds since 1970, after checking that it exists.
    private static func secondsSince1970(
        year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64
    ) throws(ArgumentError) -> Int64 {
        guard (1...12).contains(month) else { throw ArgumentError(reason: "month \(month) is out of range (1-12)") }
        let days = daysIn(month: month, year: year)
        guard (1...days).contains(day) else { throw ArgumentError(reason: "day \(day) is out of range (1-\(days))") }
        for (name, value, maximum) in [("hour", hour, 23), ("minute", minute, 59), ("second", second, 59)]
        where value > maximum {
            throw ArgumentError(reason: "\(name) \(value) is out of range (0-\(maximum))")
        }
        return daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar (as the query parser counts them):
    /// 400-year eras of 146,097 days, then years, months and days within the era counted from March.
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    }
}
