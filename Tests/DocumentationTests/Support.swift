import Foundation
import Strata
import Testing

/// Samples that open `Realm()` or `Realm(actor: self)` use the default configuration. The tests of this suite
/// point it at a fresh in-memory Realm before each sample (so nothing is written to `./default.strata`) and run
/// one at a time, since the default configuration is shared by the whole process. No other test of the package
/// uses the default configuration.
@Suite("Samples using the default configuration", .serialized)
struct DefaultConfigurationSamples {
    /// Points `Realm.Configuration.defaultConfiguration` at a new in-memory Realm and returns that configuration.
    @discardableResult
    static func useFreshDefaultConfiguration(_ name: String) -> Realm.Configuration {
        let configuration = Realm.Configuration(inMemoryIdentifier: "docs-\(name)-\(UUID())")
        Realm.Configuration.defaultConfiguration = configuration
        return configuration
    }
}

/// A configuration for an in-memory Realm of its own.
func inMemoryConfiguration(_ name: String, objectTypes: [ObjectBase.Type]? = nil) -> Realm.Configuration {
    Realm.Configuration(inMemoryIdentifier: "docs-\(name)-\(UUID())", objectTypes: objectTypes)
}

/// A fresh directory under the system's temporary folder, removed when the value goes away.
final class TemporaryFolder {
    let url: URL
    var path: String { url.path }

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-docs-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
