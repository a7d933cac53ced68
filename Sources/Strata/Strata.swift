/// Strata: a pure-Swift embedded object database.
///
/// The object layer (models, `Realm`, queries, notifications) is built on ``StrataStorage``, the copy-on-write
/// B+tree storage engine. This module currently exposes the engine's version information; the object API of
/// `API.md` lands on top of it.
public enum Strata {
    /// The version of the Strata package.
    public static let version = "0.1.0"
}
