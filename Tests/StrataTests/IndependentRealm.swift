@testable import Strata

extension Realm {
    /// A second instance of `configuration`'s file for the calling isolation, for tests of Realms that read
    /// different versions side by side: `Realm(configuration:)` returns the instance the isolation already has
    /// open (as the Realm SDK does), so these tests open past the cache.
    static func independent(_ configuration: Configuration) throws -> Realm {
        try Realm(configuration: configuration, confinedTo: nil)
    }
}
