public import Foundation
import Synchronization

/// A 12-byte identifier that is unique without coordination and sorts roughly by creation time.
///
/// The layout follows the widely used BSON ObjectId format:
///
/// | Bytes | Content                                                            |
/// |-------|--------------------------------------------------------------------|
/// | 0–3   | Seconds since the Unix epoch, big-endian                           |
/// | 4–8   | A random value chosen once per process                             |
/// | 9–11  | A counter, big-endian, starting at a random value for each process |
///
/// Ordering (`Comparable`) is lexicographic on the 12 bytes, so identifiers created in later seconds sort after
/// earlier ones, and identifiers created by one process within the same second sort by creation order (until the
/// 24-bit counter wraps around).
///
/// The textual form (``stringValue``, ``description`` and the `Codable` representation) is 24 lowercase
/// hexadecimal characters.
public struct ObjectId: Hashable, Comparable, Sendable {
    /// Bytes 0–7, big-endian: the timestamp and the first four bytes of the process-unique value.
    private var high: UInt64
    /// Bytes 8–11, big-endian: the last byte of the process-unique value and the counter.
    private var low: UInt32

    /// Creates the all-zero identifier, `000000000000000000000000`.
    public init() {
        high = 0
        low = 0
    }

    /// Creates an identifier from its parts; used by ``generate()`` and by tests.
    ///
    /// - Parameters:
    ///   - timestamp: Seconds since the Unix epoch.
    ///   - processUnique: The per-process value; only the low 40 bits are used.
    ///   - counter: The counter value; only the low 24 bits are used.
    init(timestamp: UInt32, processUnique: UInt64, counter: UInt32) {
        let unique = processUnique & 0xFF_FFFF_FFFF
        high = UInt64(timestamp) << 32 | unique >> 8
        low = UInt32(truncatingIfNeeded: unique & 0xFF) << 24 | counter & 0xFF_FFFF
    }

    /// Creates an identifier from a creation time, a machine identifier and a process identifier, as the SDK's
    /// initialiser of the same name does.
    ///
    /// Bytes 0–3 hold `timestamp` in whole seconds since the Unix epoch (big-endian), bytes 4–6 the low three
    /// bytes of `machineId` and bytes 7–8 the low two bytes of `processId` (both least significant byte first,
    /// as the SDK stores them), and bytes 9–11 the next value of the per-process counter that ``generate()``
    /// uses, so two identifiers made from the same arguments still differ.
    ///
    /// ```swift
    /// let id = ObjectId(timestamp: Date(timeIntervalSince1970: 1_700_000_000), machineId: 10, processId: 20)
    /// id.timestamp  // 2023-11-14 22:13:20 +0000
    /// ```
    ///
    /// - Parameters:
    ///   - timestamp: The creation time; only whole seconds since 1970 (modulo 2^32) are kept.
    ///   - machineId: The machine identifier; only its low 24 bits are kept.
    ///   - processId: The process identifier; only its low 16 bits are kept.
    public init(timestamp: Date, machineId: Int, processId: Int) {
        let seconds = UInt32(truncatingIfNeeded: Int64(timestamp.timeIntervalSince1970.rounded(.down)))
        let machine = UInt64(truncatingIfNeeded: machineId)
        let process = UInt64(truncatingIfNeeded: processId)
        // Bytes 4-8 in order: machine bytes 0, 1, 2 (least significant first), then process bytes 0, 1.
        let middle =
            (machine & 0xFF) << 32 | (machine >> 8 & 0xFF) << 24 | (machine >> 16 & 0xFF) << 16
            | (process & 0xFF) << 8 | (process >> 8 & 0xFF)
        let counter = Generator.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        self.init(timestamp: seconds, processUnique: middle, counter: counter)
    }

    /// Creates an identifier from its 12-byte binary form, as produced by ``bytes``.
    ///
    /// - Parameter bytes: Exactly 12 bytes.
    /// - Returns: `nil` if `bytes` does not hold exactly 12 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var high: UInt64 = 0
        var low: UInt32 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 {
                high = high << 8 | UInt64(byte)
            } else {
                low = low << 8 | UInt32(byte)
            }
        }
        self.high = high
        self.low = low
    }

    /// Parses the 24-character hexadecimal form of an identifier.
    ///
    /// Upper- and lowercase hexadecimal digits are accepted; nothing else is (no surrounding whitespace, no `0x`
    /// prefix).
    ///
    /// - Parameter string: Exactly 24 hexadecimal characters.
    /// - Throws: ``ObjectIdParseError`` if `string` is not exactly 24 hexadecimal characters.
    public init(string: String) throws(ObjectIdParseError) {
        let utf8 = string.utf8
        guard utf8.count == 24 else { throw ObjectIdParseError(input: string) }
        var high: UInt64 = 0
        var low: UInt32 = 0
        for (index, character) in utf8.enumerated() {
            guard let nibble = Self.hexValue(character) else { throw ObjectIdParseError(input: string) }
            if index < 16 {
                high = high << 4 | UInt64(nibble)
            } else {
                low = low << 4 | UInt32(nibble)
            }
        }
        self.high = high
        self.low = low
    }

    /// Creates a new, unique identifier.
    ///
    /// The identifier combines the current time in seconds, a random value chosen once per process and a
    /// per-process counter that starts at a random value and is incremented atomically on every call, so this is
    /// safe to call from any thread or task.
    ///
    /// - Returns: A fresh identifier.
    public static func generate() -> ObjectId {
        let seconds = Int64(Date().timeIntervalSince1970.rounded(.down))
        let counter = Generator.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return ObjectId(
            timestamp: UInt32(truncatingIfNeeded: seconds), processUnique: Generator.processUnique, counter: counter)
    }

    /// The 12-byte binary form of the identifier, in the order described in the type's overview.
    public var bytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(12)
        for shift in stride(from: 56, through: 0, by: -8) {
            result.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 24, through: 0, by: -8) {
            result.append(UInt8(truncatingIfNeeded: low >> UInt32(shift)))
        }
        return result
    }

    /// The creation time stored in the first four bytes, with a resolution of one second.
    public var timestamp: Date {
        Date(timeIntervalSince1970: TimeInterval(high >> 32))
    }

    /// The 24-character lowercase hexadecimal form of the identifier.
    public var stringValue: String {
        let digits = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(24)
        for shift in stride(from: 60, through: 0, by: -4) {
            result.append(digits[Int(high >> UInt64(shift) & 0xF)])
        }
        for shift in stride(from: 28, through: 0, by: -4) {
            result.append(digits[Int(low >> UInt32(shift) & 0xF)])
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Orders identifiers lexicographically by their 12 bytes.
    ///
    /// - Parameters:
    ///   - lhs: An identifier.
    ///   - rhs: Another identifier.
    /// - Returns: `true` if `lhs` sorts before `rhs`.
    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The per-process state behind ``ObjectId/generate()``.
    private enum Generator {
        /// Five random bytes, fixed for the lifetime of the process.
        static let processUnique = UInt64.random(in: 0...0xFF_FFFF_FFFF)
        /// The next counter value; only the low 24 bits are used, so wrapping around `UInt32` is harmless.
        static let counter = Atomic<UInt32>(UInt32.random(in: 0...0xFF_FFFF))
    }
}

extension ObjectId: CustomStringConvertible {
    /// The 24-character lowercase hexadecimal form, the same as ``stringValue``.
    public var description: String { stringValue }
}

extension ObjectId: ExpressibleByStringLiteral {
    /// Creates an identifier from a 24-character hexadecimal literal, as in the SDK:
    /// `let id: ObjectId = "6543a1b2c3d4e5f60718293a"`.
    ///
    /// A literal that is not exactly 24 hexadecimal characters is a programming error and stops the program with
    /// a message naming the literal (the SDK aborts too). Parse text that comes from outside the program with
    /// ``init(string:)``, which throws instead.
    ///
    /// As with the SDK, a dictionary literal whose values are an `ObjectId` and strings is inferred as
    /// `[String: ObjectId]`, turning the strings into identifiers: write `["id": id, "name": "Acme"] as [String: Any]`
    /// when passing one to `init(value:)` or `create(_:value:)`.
    ///
    /// - Parameter value: Exactly 24 hexadecimal characters.
    public init(stringLiteral value: String) {
        do {
            try self.init(string: value)
        } catch {
            fatalError("ObjectId literal: \(error.description)")
        }
    }

    /// Creates an identifier from a 24-character hexadecimal static string, as the SDK's `ObjectId(_:)` does;
    /// an invalid string stops the program with a message naming it (use ``init(string:)`` for text from
    /// outside the program).
    ///
    /// - Parameter string: Exactly 24 hexadecimal characters.
    public init(_ string: StaticString) {
        self.init(stringLiteral: string.description)
    }
}

extension ObjectId: Codable {
    /// Decodes an identifier from a single 24-character hexadecimal string.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError.dataCorrupted` if the string is not a valid identifier, or the decoder's error if
    ///   the value is not a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            self = try ObjectId(string: string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the identifier as a single 24-character lowercase hexadecimal string.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

/// The error thrown by ``ObjectId/init(string:)`` when its input is not 24 hexadecimal characters.
public struct ObjectIdParseError: Error, Equatable, CustomStringConvertible {
    /// The string that failed to parse.
    public let input: String

    /// Creates an error for the given unparsable input.
    ///
    /// - Parameter input: The string that failed to parse.
    public init(input: String) {
        self.input = input
    }

    /// A message naming the invalid input.
    public var description: String {
        "Invalid ObjectId \"\(input)\": expected exactly 24 hexadecimal characters"
    }
}
