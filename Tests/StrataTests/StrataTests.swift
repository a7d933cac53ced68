import Strata
import Testing

@Test func versionIsSemantic() {
    #expect(StrataInfo.version.split(separator: ".").count == 3)
}
