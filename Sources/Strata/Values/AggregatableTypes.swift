public import Foundation

/// A type whose values have a smallest and a largest: what `min()` and `max()` of a collection of values, and
/// `min(ofProperty:)`/`max(ofProperty:)`, work on. As in the SDK: the integer and floating-point types, `Date`,
/// `Decimal128`, `AnyRealmValue` and optionals of them.
public protocol MinMaxType {}

/// A type whose values can be summed and averaged: what `sum()` and `average()` of a collection of values work on.
/// As in the SDK: the integer and floating-point types, `Decimal128`, `AnyRealmValue` and optionals of them.
public protocol AddableType {}

/// A type whose values have an order: what `sorted(ascending:)` and `distinct()` of a collection of values work on.
/// As in the SDK: the number types, `String`, `Data` (byte-wise), `Date`, `Decimal128`, `AnyRealmValue` and
/// optionals of them; Strata also orders `Bool`, `ObjectId` and `UUID`.
public protocol SortableType {}

extension Int: MinMaxType, AddableType, SortableType {}
extension Int8: MinMaxType, AddableType, SortableType {}
extension Int16: MinMaxType, AddableType, SortableType {}
extension Int32: MinMaxType, AddableType, SortableType {}
extension Int64: MinMaxType, AddableType, SortableType {}
extension Float: MinMaxType, AddableType, SortableType {}
extension Double: MinMaxType, AddableType, SortableType {}
extension Decimal128: MinMaxType, AddableType, SortableType {}
extension AnyRealmValue: MinMaxType, AddableType, SortableType {}
extension Date: MinMaxType, SortableType {}
extension Bool: SortableType {}
extension Data: SortableType {}
extension String: SortableType {}
extension ObjectId: SortableType {}
extension UUID: SortableType {}
extension Optional: MinMaxType where Wrapped: MinMaxType {}
extension Optional: AddableType where Wrapped: AddableType {}
extension Optional: SortableType where Wrapped: SortableType {}
