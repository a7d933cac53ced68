/// `obj('Person', 3)` in the query language (core's `OBJ '(' STRING ',' primary_key ')'`): the object of a class
/// found by its primary key, compared as an object argument would be (`owner == obj('Person', 'Ann')`, or in an
/// `IN` list). The class must exist and have a primary key of the written type; a key no object has matches no
/// link.
extension QueryBinder {
    /// A key no object has: what a link compares with when `obj(…)` names no object, so that `==` and `IN` never
    /// hold and `!=` holds for every link.
    static let absentObjectKey: Int64 = .min

    /// The object `obj(className, primaryKey)` names, as the value `path` (a link, a collection of links or a
    /// mixed value) compares with.
    func bindObjectLiteral(className: String, primaryKey: _StoredValue, for path: BoundPath, at position: Int)
        throws(Realm.Error) -> BoundOperand
    {
        let binding: TableBinding
        do {
            binding = try realm.bindingForQuery(className)
        } catch {
            throw failure("obj('\(className)', …) names no class of this Realm's schema", at: position)
        }
        guard let keyIndex = binding.table.primaryKeyIndex else {
            throw failure("obj('\(className)', …): \(className) has no primary key", at: position)
        }
        let keyInfo = binding.table.infos[keyIndex]
        guard Self.primaryKey(primaryKey, fits: keyInfo) else {
            throw failure(
                "obj('\(className)', …): the primary key of \(className) is \(keyInfo.isOptional ? "an optional " : "")"
                    + "\(keyInfo.type), not \(Self.describeKey(primaryKey))", at: position)
        }
        guard path.type == .any || (path.type == .object && path.objectClassName == className) else {
            throw failure(
                "\(path.text) holds \(path.objectClassName ?? path.type.description), not \(className)", at: position)
        }
        let key = try KeyEncoding.primaryKey(primaryKey).flatMap { (encoded) throws(Realm.Error) in
            try realm.lookupPrimaryKey(binding, encoded)
        }
        guard let key else { return .value(.int(Self.absentObjectKey)) }
        // A mixed value holding a link is read as the object (see `convert`).
        if path.type == .any { return .value(.object(realm.object(binding, key: key))) }
        return .value(.int(key))
    }

    /// Whether a written key is of the primary key's type (nil only for an optional key).
    private static func primaryKey(_ value: _StoredValue, fits info: _PropertyInfo) -> Bool {
        switch value {
        case .null: info.isOptional
        case .int: info.type == .int
        case .string: info.type == .string
        case .objectId: info.type == .objectId
        case .uuid: info.type == .uuid
        default: false
        }
    }

    /// The kind of a written key, for messages.
    private static func describeKey(_ value: _StoredValue) -> String {
        switch value {
        case .null: "nil"
        case .int(let int): "the integer \(int)"
        case .string(let string): "the string '\(string)'"
        case .objectId(let id): "the ObjectId \(id)"
        case .uuid(let uuid): "the UUID \(uuid)"
        default: "a \(value)"
        }
    }
}
