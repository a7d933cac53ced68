import Foundation

/// The date literals of the Realm Query Language, in the forms the Realm SDKs write and read them. Every date is in
/// UTC:
///
/// - `2024-01-01@10:00:00`, or with `T` instead of `@`: year, month, day, hours, minutes, seconds;
/// - `2024-01-01@10:00:00:123000000`: the same and a fourth time field counting nanoseconds (not a fraction:
///   `:5` is five nanoseconds, `:500000000` half a second), as Realm writes it;
/// - a trailing `Z` (`2024-01-01T10:00:00Z`) names UTC explicitly;
/// - `T1704103200:0`: seconds and nanoseconds since 1970-01-01 00:00:00 UTC, both with the same sign
///   (`T-1:-500000000` is one and a half seconds before 1970).
///
/// What is not a date literal is reported with what to write instead: a date without its time, a time without
/// seconds, ISO 8601 fractions (`.123`) and time zone offsets (`+02:00`).
enum RQLDateLiteral {
    /// Why the text at `offset` (a UTF-8 offset into the query) is no date.
    struct Failure: Error {
        let reason: String
        let offset: Int
    }

    /// The readable literal starting at `start` (a digit), with the offset just after it; nil when the digits there
    /// are not followed by `-` and a digit (a plain number).
    static func scanReadable(_ bytes: [UInt8], from start: Int) throws(Failure) -> (date: Date, end: Int)? {
        var scanner = Scanner(bytes: bytes, at: start)
        let year = scanner.digits()
        guard scanner.peek() == UInt8(ascii: "-"), scanner.peek(1).map(isDigit) == true else { return nil }
        scanner.at += 1
        let month = scanner.digits()
        guard scanner.accept("-"), scanner.peek().map(isDigit) == true else {
            throw Failure(reason: "a date is written year-month-day: 2024-01-31@10:00:00", offset: start)
        }
        let day = scanner.digits()
        let text = scanner.text(from: start)
        guard scanner.accept("@") || scanner.accept("T") else {
            throw Failure(
                reason: "the date \(text) needs a time of day: \(text)@00:00:00 (dates in queries are UTC)",
                offset: start)
        }
        var time: [Substring] = []
        repeat {
            guard scanner.peek().map(isDigit) == true else {
                guard time.count == 3 else { break }
                throw Failure(
                    reason: "\(scanner.text(from: start)) needs nanoseconds after the last colon (\(text)@10:00:00:0)",
                    offset: start)
            }
            time.append(scanner.digits())
        } while time.count < 4 && scanner.accept(":")
        guard time.count >= 3 else {
            throw Failure(
                reason:
                    "the date \(scanner.text(from: start)) needs hours, minutes and seconds: \(text)@10:00:00",
                offset: start)
        }
        try rejectUnsupportedSuffix(&scanner, literalStart: start)
        guard let values = numbers([year, month, day] + time) else {
            throw Failure(reason: "the date \(scanner.text(from: start)) has a field too large", offset: start)
        }
        let literal = scanner.text(from: start)
        func check(_ value: Int64, _ range: ClosedRange<Int64>, _ name: String) throws(Failure) {
            guard range.contains(value) else {
                throw Failure(
                    reason: "\(name) \(value) is out of range (\(range.lowerBound)-\(range.upperBound)) in \(literal)",
                    offset: start)
            }
        }
        try check(values[1], 1...12, "month")
        try check(values[2], 1...daysIn(month: values[1], year: values[0]), "day")
        try check(values[3], 0...23, "hour")
        try check(values[4], 0...59, "minute")
        try check(values[5], 0...59, "second")
        let nanoseconds = values.count > 6 ? values[6] : 0
        try check(nanoseconds, 0...999_999_999, "the nanoseconds")
        let days = daysSince1970(year: values[0], month: values[1], day: values[2])
        let seconds = days * 86_400 + values[3] * 3_600 + values[4] * 60 + values[5]
        return (date(seconds: seconds, nanoseconds: nanoseconds), scanner.at)
    }

    /// The epoch literal `T<seconds>:<nanoseconds>` starting at `start` (a `T`), with the offset just after it; nil
    /// when the text there is not `T`, an optional sign, digits and `:` (an identifier such as `T1`).
    static func scanEpoch(_ bytes: [UInt8], from start: Int) throws(Failure) -> (date: Date, end: Int)? {
        var scanner = Scanner(bytes: bytes, at: start + 1)
        let secondsSign = scanner.sign()
        guard scanner.peek().map(isDigit) == true else { return nil }
        let secondsText = scanner.digits()
        guard scanner.accept(":") else { return nil }
        let nanosecondsSign = scanner.sign()
        guard scanner.peek().map(isDigit) == true else {
            throw Failure(
                reason:
                    "T\(secondsSign < 0 ? "-" : "")\(secondsText): needs nanoseconds after the colon (T1704103200:0)",
                offset: start)
        }
        let nanosecondsText = scanner.digits()
        try rejectUnsupportedSuffix(&scanner, literalStart: start)
        let literal = scanner.text(from: start)
        guard let seconds = Int64(secondsText), let nanoseconds = Int64(nanosecondsText) else {
            throw Failure(reason: "the date \(literal) is out of range", offset: start)
        }
        guard nanoseconds <= 999_999_999 else {
            throw Failure(
                reason: "the nanoseconds of \(literal) are out of range (0-999999999): they count nanoseconds",
                offset: start)
        }
        let signedSeconds = seconds * secondsSign
        let signedNanoseconds = nanoseconds * nanosecondsSign
        guard (signedSeconds >= 0 && signedNanoseconds >= 0) || (signedSeconds <= 0 && signedNanoseconds <= 0) else {
            throw Failure(
                reason: "the seconds and nanoseconds of \(literal) must have the same sign (T-1:-500000000)",
                offset: start)
        }
        return (date(seconds: signedSeconds, nanoseconds: signedNanoseconds), scanner.at)
    }

    /// The date `seconds` and `nanoseconds` after 1970-01-01 00:00:00 UTC.
    static func date(seconds: Int64, nanoseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    /// Fails on what may follow a literal in other date syntaxes but not in this one, saying what to write instead.
    private static func rejectUnsupportedSuffix(_ scanner: inout Scanner, literalStart: Int) throws(Failure) {
        let literal = scanner.text(from: literalStart)
        switch scanner.peek() {
        case UInt8(ascii: "."):
            throw Failure(
                reason:
                    "fractions of a second are written as nanoseconds after a colon in RQL: \(literal):500000000 is half a second past \(literal), not \(literal).5",
                offset: scanner.at)
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            throw Failure(
                reason: "time zone offsets are not supported: dates in queries are UTC (write \(literal) in UTC)",
                offset: scanner.at)
        case UInt8(ascii: "Z"):
            scanner.at += 1
        default:
            break
        }
        if let next = scanner.peek(), isDigit(next) || isLetter(next) || next == UInt8(ascii: ":") {
            throw Failure(
                reason: "unexpected character after the date \(scanner.text(from: literalStart))", offset: scanner.at)
        }
    }

    private static func numbers(_ fields: [Substring]) -> [Int64]? {
        var values: [Int64] = []
        for field in fields {
            guard field.count <= 12, let value = Int64(field) else { return nil }
            values.append(value)
        }
        return values
    }

    private static func isLeap(_ year: Int64) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given day of the proleptic Gregorian calendar (the calendar `timegm` uses, so
    /// that a literal means what it means in Realm): whole 400-year eras of 146,097 days, then the years, months
    /// and days within the era, counted from March so that the leap day comes last.
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// A cursor over the query's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var at: Int

        func peek(_ offset: Int = 0) -> UInt8? { at + offset < bytes.count ? bytes[at + offset] : nil }

        mutating func accept(_ character: Unicode.Scalar) -> Bool {
            guard peek() == UInt8(ascii: character) else { return false }
            at += 1
            return true
        }

        /// The digits at the cursor (possibly none), consumed.
        mutating func digits() -> Substring {
            let start = at
            while let next = peek(), RQLDateLiteral.isDigit(next) { at += 1 }
            return Substring(String(decoding: bytes[start..<at], as: UTF8.self))
        }

        /// An optional `+` or `-`, consumed: the sign it gives.
        mutating func sign() -> Int64 {
            if accept("-") { return -1 }
            _ = accept("+")
            return 1
        }

        func text(from start: Int) -> String { String(decoding: bytes[start..<at], as: UTF8.self) }
    }
}
