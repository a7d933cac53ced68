import BenchSupport
import Foundation
import Strata

/// What validating pages costs a reader: iterating `size` objects (reading two properties) right after opening
/// their file — every page is read for the first time in the process, so each is checksummed and its structure
/// checked — against the same iteration again, when the validated pages are only looked up. Median of `runs`
/// fresh opens. The first iteration also maps the file's pages into the process, so the difference is an upper
/// bound on validation.
func pageValidationCost(size: Int, runs: Int, directory: URL) throws -> (cold: Duration, warm: Duration) {
    let configuration = Realm.Configuration(
        fileURL: directory.appendingPathComponent("validation.strata"), objectTypes: [Item.self])
    do {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for index in 0..<size {
                realm.add(Item(value: ["id": index, "name": "item \(index)", "count": index, "score": 0.5]))
            }
        }
    }
    var colds: [Duration] = []
    var warms: [Duration] = []
    for _ in 0..<runs {
        // A Realm opened after the last one closed: the file is opened afresh, with nothing validated yet (pages a
        // process writes itself count as validated, which is why the objects were written by a Realm now closed).
        let realm = try Realm(configuration: configuration)
        var sum = 0
        var scores = 0.0
        let iterate = {
            for item in realm.objects(Item.self) {
                sum &+= item.count
                scores += item.score
            }
        }
        colds.append(time(iterate))
        warms.append(time(iterate))
        try check(sum == size * (size - 1), "validation iterate sum")
    }
    return (median(colds), median(warms))
}
