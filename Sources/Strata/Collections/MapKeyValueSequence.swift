extension Map {
    /// The entries as `(key: Key, value: Value)` pairs, in the map's order, as the SDK's adaptor gives them (a `Map`
    /// is already a collection of such pairs in Strata; this keeps code written for the SDK compiling).
    ///
    /// ```swift
    /// for (city, park) in dog.favoriteParksByCity.asKeyValueSequence() { print(city, park) }
    /// ```
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { Array(self) }
}
