import Foundation
import StrataStorage

// Binding the right-hand side of a comparison: literals and arguments converted to the path's stored type, and
// the check that operator, path and value fit together.

/// An `Optional` seen through `Any`: query arguments are taken as `Any`, where a nil `String?` is not `nil`.
protocol OptionalQueryArgument {
    /// The wrapped value, or nil.
    var wrappedQueryArgument: Any? { get }
}

extension Optional: OptionalQueryArgument {
    var wrappedQueryArgument: Any? { map { $0 as Any } }
}

extension QueryBinder {
    func bindOperand(_ operand: RQLOperand, for path: BoundPath, op: RQLOperator = .equal)
        throws(Realm.Error) -> BoundOperand
    {
        switch operand {
        case .literal(let value, _): return .value(value)
        case .arithmetic:
            return operand.readsProperty
                ? .path(try bindArithmeticPath(operand)) : .value(try arithmeticConstant(operand))
        case .argument(let number, let position):
            guard number < arguments.count else {
                throw failure(
                    "$\(number) has no argument (\(arguments.count) given)", at: position)
            }
            return try convert(arguments[number], for: path, at: position)
        case .subquery:
            return .path(try bindPathOperand(operand)!)
        case .shape(_, let position):
            throw failure("a shape can only follow GEOWITHIN", at: position)
        case .object(let className, let primaryKey, let position):
            return try bindObjectLiteral(className: className, primaryKey: primaryKey, for: path, at: position)
        case .list(let elements, _):
            var values: [_StoredValue] = []
            for element in elements {
                switch try bindOperand(element, for: path) {
                case .value(let value): values.append(value)
                case .values(let more): values += more
                case .path: throw failure("a list holds values, not properties", at: element.position)
                }
            }
            return .values(values)
        case .keyPath(let components, let position):
            return .path(try bindPath(components, at: position))
        }
    }

    /// An argument as a stored value (objects as their keys, sequences as lists).
    func convert(_ argument: Any?, for path: BoundPath, at position: Int) throws(Realm.Error) -> BoundOperand {
        guard let argument else { return .value(.null) }
        // The common arguments first, by exact type: the casts below look up protocol conformances.
        switch ObjectIdentifier(type(of: argument)) {
        case ObjectIdentifier(Int.self): return .value(.int(Int64(argument as! Int)))
        case ObjectIdentifier(String.self): return .value(.string(argument as! String))
        case ObjectIdentifier(Double.self): return .value(.double(argument as! Double))
        case ObjectIdentifier(Bool.self): return .value(.bool(argument as! Bool))
        case ObjectIdentifier(Date.self): return .value(.date(argument as! Date))
        // Lists of values for IN: the casts below would first try to bridge the array to a class.
        case ObjectIdentifier([Int].self): return .values((argument as! [Int]).map { .int(Int64($0)) })
        case ObjectIdentifier([Int64].self): return .values((argument as! [Int64]).map { .int($0) })
        case ObjectIdentifier([String].self): return .values((argument as! [String]).map { .string($0) })
        case ObjectIdentifier([Double].self): return .values((argument as! [Double]).map { .double($0) })
        case ObjectIdentifier(Set<Int>.self): return .values((argument as! Set<Int>).map { .int(Int64($0)) })
        case ObjectIdentifier(Set<String>.self): return .values((argument as! Set<String>).map { .string($0) })
        default: break
        }
        // `String?` and other optionals arrive boxed in `Any` (`filter("email == %@", email)`), and NSPredicate
        // code passes `NSNull()` for nil: both stand for their value or nil.
        if let optional = argument as? any OptionalQueryArgument {
            return try convert(optional.wrappedQueryArgument, for: path, at: position)
        }
        if argument is NSNull { return .value(.null) }
        if let value = argument as? AnyRealmValue {
            switch value {
            case .none: return .value(.null)
            case .int(let int): return .value(.int(Int64(int)))
            case .bool(let bool): return .value(.bool(bool))
            case .float(let float): return .value(.float(float))
            case .double(let double): return .value(.double(double))
            case .string(let string): return .value(.string(string))
            case .data(let data): return .value(.data(data))
            case .date(let date): return .value(.date(date))
            case .objectId(let id): return .value(.objectId(id))
            case .decimal128(let decimal): return .value(.decimal128(decimal))
            case .uuid(let uuid): return .value(.uuid(uuid))
            case .object(let object): return try convert(object, for: path, at: position)
            case .list, .dictionary:
                throw failure(
                    "a nested list or dictionary cannot be a query argument; compare its elements instead "
                        + "(\(path.text)[0], \(path.text)['key'], \(path.text)[*])", at: position)
            }
        }
        if let object = argument as? ObjectBase {
            guard let managed = object.managed, managed.realm === realm else {
                throw failure("an object argument must be managed by this Realm", at: position)
            }
            // A mixed value holding a link is read as the object: compare with the object itself (its key alone
            // would not say which class it is in).
            if path.type == .any { return .value(.object(object)) }
            guard path.type == .object, managed.table.className == path.objectClassName else {
                throw failure(
                    "\(path.text) holds \(path.objectClassName ?? path.type.description), not \(managed.table.className)",
                    at: position)
            }
            return .value(.int(managed.key))
        }
        if argument is String { return .value(.string(argument as! String)) }
        if let sequence = argument as? any Sequence, !(argument is Data) {
            var values: [_StoredValue] = []
            for element in sequence {
                // One level only: a list of lists is no query value (and a nested argument could be deeper than
                // any stack).
                if element is any Sequence, !(element is String), !(element is Data) {
                    throw failure("a list argument holds values, not other lists (\(type(of: element)))", at: position)
                }
                switch try convert(element, for: path, at: position) {
                case .value(let value): values.append(value)
                case .values(let more): values += more
                case .path: break
                }
            }
            return .values(values)
        }
        switch argument {
        case let value as Bool: return .value(.bool(value))
        case let value as Int: return .value(.int(Int64(value)))
        case let value as Int8: return .value(.int(Int64(value)))
        case let value as Int16: return .value(.int(Int64(value)))
        case let value as Int32: return .value(.int(Int64(value)))
        case let value as Int64: return .value(.int(value))
        case let value as UInt8: return .value(.int(Int64(value)))
        case let value as UInt16: return .value(.int(Int64(value)))
        case let value as UInt32: return .value(.int(Int64(value)))
        case let value as Float: return .value(.float(value))
        case let value as Double: return .value(.double(value))
        case let value as Data: return .value(.data(value))
        case let value as Date: return .value(.date(value))
        case let value as UUID: return .value(.uuid(value))
        case let value as ObjectId: return .value(.objectId(value))
        case let value as Decimal128: return .value(.decimal128(value))
        case let value as any _Persistable:
            // Enums and custom-persisted types: their stored value.
            let stored = value._stored
            if case .object = stored {
                let property = path.text.split(separator: ".").dropFirst().joined(separator: ".")
                throw failure(
                    "\(type(of: argument)) is persisted as an embedded object and cannot be compared as a value; "
                        + "compare its properties instead ($0.\(property).persistableValue.<property> in where, "
                        + "\(property).<property> in the query language)", at: position)
            }
            return .value(stored)
        default:
            throw failure("\(type(of: argument)) is not a valid query argument", at: position)
        }
    }

    /// Checks that the operator and value fit the property.
    func check(_ op: RQLOperator, path: BoundPath, right: BoundOperand, at position: Int) throws(Realm.Error) {
        switch op {
        case .beginsWith, .endsWith, .contains, .like:
            guard path.type == .string || path.type == .data || path.type == .any else {
                throw failure(
                    "\(op.rawValue) needs a string or data property; \(path.text) is \(path.type)", at: position)
            }
        default: break
        }
        let values: [_StoredValue]
        switch right {
        case .value(let value): values = [value]
        case .values(let list):
            guard op == .in else { throw failure("a list of values needs IN", at: position) }
            values = list
        case .path(let other):
            guard Self.comparable(path.type, other.type) else {
                throw failure(
                    "\(path.text) (\(path.type)) cannot be compared with \(other.text) (\(other.type))", at: position)
            }
            return
        }
        if op == .in, case .value = right {
            throw failure("IN needs a list: {…} or an array argument", at: position)
        }
        for value in values where !Self.fits(value, path.type) {
            let hint =
                path.type == .date && QueryValues.number(value) != nil
                ? " (a date is written 2024-01-01@10:00:00 or T1704103200:0)" : ""
            throw failure(
                "\(path.text) is \(path.type) and cannot be compared with \(Self.describe(value))\(hint)", at: position)
        }
        if case .object = path.type, [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) {
            throw failure("links can only be compared with == and !=", at: position)
        }
    }

    static func describe(_ value: _StoredValue) -> String {
        switch value {
        case .null: "nil"
        case .int(let v): "the integer \(v)"
        case .bool(let v): "\(v)"
        case .float(let v): "the number \(v)"
        case .double(let v): "the number \(v)"
        case .string(let v): "the string '\(v)'"
        case .data: "data"
        case .date(let v): "the date \(v)"
        case .objectId(let v): "oid(\(v.stringValue))"
        case .uuid(let v): "uuid(\(v.uuidString))"
        case .decimal128(let v): "the decimal \(v)"
        case .object, .collection, .mixed: "an object"
        }
    }

    static let numeric: Set<PropertyType> = [.int, .float, .double, .decimal128]

    private static func comparable(_ a: PropertyType, _ b: PropertyType) -> Bool {
        a == b || a == .any || b == .any || (numeric.contains(a) && numeric.contains(b))
    }

    static func fits(_ value: _StoredValue, _ type: PropertyType) -> Bool {
        switch value {
        case .null: return true
        case .int, .float, .double, .decimal128: return numeric.contains(type) || type == .any || type == .object
        case .bool: return type == .bool || type == .any
        case .string: return type == .string || type == .any
        case .data: return type == .data || type == .any
        case .date: return type == .date || type == .any
        case .objectId: return type == .objectId || type == .any
        case .uuid: return type == .uuid || type == .any
        case .object, .collection, .mixed: return type == .any
        }
    }
}
