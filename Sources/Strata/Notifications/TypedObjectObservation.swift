// The Realm Swift SDK types an object's change by the closure's annotation, not by the receiver's static type: an
// object read as `Object` (from `AnyRealmValue.object(_:)`, a dynamic list, a superclass property) can be observed
// as the model class it is, `o.observe { (change: ObjectChange<Dog>) in … }`.

extension ObjectBase {
    /// ``ThreadConfined/observe(keyPaths:_:)-([String]?,(ObjectChange<Self>)->Void)`` delivering the object as `T`, the
    /// class its closure names (the Realm SDK's form, for objects whose static type is a base class). Traps when
    /// the object is not a `T`.
    ///
    /// ```swift
    /// if case .object(let object) = box.anyValue {
    ///     token = object.observe { (change: ObjectChange<Dog>) in … }
    /// }
    /// ```
    public func observe<T: ObjectBase>(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<T>) -> Void)
        -> NotificationToken
    {
        guard let typed = self as? T else {
            fatalError("observe: the object is a \(type(of: self)), not the \(T.self) the change block takes")
        }
        let observer = registeredObserver(as: typed, paths: keyPaths.map(splitKeyPaths))
        observer.handler = block
        return observer.token()
    }
}
