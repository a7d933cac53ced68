import Strata
import Testing

@Test func versionIsSemantic() {
    #expect(Strata.version.split(separator: ".").count == 3)
}
