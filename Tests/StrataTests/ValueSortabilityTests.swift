import Foundation
import Testing

@testable import Strata

final class BinaryValuesOwner: Object {
    @Persisted var blobs: List<Data>
    @Persisted var optionalBlobs: List<Data?>
    @Persisted var blobsByName: Map<String, Data>
}

/// `sorted(ascending:)` and `distinct()` are offered on exactly the collections of values the SDK offers them on
/// (`SortableType`, which includes `Data`): binary values sort byte by byte, shorter prefix first, as the SDK
/// orders binary. On collections of objects `distinct()` does not compile (it used to trap at run time).
@Suite("Sortable values")
struct ValueSortabilityTests {
    @Test func binaryValuesSortByteWiseAndDistinct() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sortable-\(UUID())", objectTypes: [BinaryValuesOwner.self]))
        let owner = BinaryValuesOwner()
        let values = [Data([2]), Data([1, 9]), Data([1]), Data(), Data([1, 9])]
        owner.blobs.append(objectsIn: values)
        owner.optionalBlobs.append(objectsIn: [Data([5]), nil, Data([0])])
        owner.blobsByName["b"] = Data([7])
        owner.blobsByName["a"] = Data([7])
        owner.blobsByName["c"] = Data([3])
        try realm.write { realm.add(owner) }
        #expect(
            Array(owner.blobs.sorted(ascending: true)) == [Data(), Data([1]), Data([1, 9]), Data([1, 9]), Data([2])])
        #expect(Array(owner.blobs.sorted(ascending: false)).first == Data([2]))
        #expect(Array(owner.blobs.distinct()) == [Data([2]), Data([1, 9]), Data([1]), Data()])
        #expect(Array(owner.optionalBlobs.sorted()) == [nil, Data([0]), Data([5])])
        #expect(Array(owner.blobsByName.sorted()) == [Data([3]), Data([7]), Data([7])])
        #expect(Array(owner.blobsByName.distinct()).count == 2)
        // Unmanaged collections answer the same.
        let loose = BinaryValuesOwner()
        loose.blobs.append(objectsIn: values)
        #expect(Array(loose.blobs.sorted()) == [Data(), Data([1]), Data([1, 9]), Data([1, 9]), Data([2])])
    }
}
