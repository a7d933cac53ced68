import Foundation
import HTTPTypes
import HummingbirdTesting
import StrataService
import Testing

/// Many clients writing the same object at once over real connections: every write counted, none lost.
@Suite struct ConcurrentRequestTests {
    @Test(arguments: Backend.allCases) func concurrentLikesOfOneBookAreAllCounted(backend: Backend) async throws {
        let connections = 20
        let likesPerConnection = 10
        try await withLibraryApplication(backend, .live) { _, client in
            try await client.addShelf()
            let port = try #require(client.port)
            let answers = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<connections {
                    group.addTask {
                        try await TestClient.withClient(host: "127.0.0.1", port: port) { connection in
                            var likes: [Int] = []
                            for _ in 0..<likesPerConnection {
                                let response = try await connection.post("/books/dune/likes", body: .init())
                                #expect(response.status == .ok)
                                let body = try #require(response.body)
                                likes.append(
                                    try JSONDecoder().decode(BookResource.self, from: Data(String(buffer: body).utf8))
                                        .likes)
                            }
                            return likes
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let total = connections * likesPerConnection
            // Each request saw its own increment: the answers are exactly 1...total.
            #expect(answers.sorted() == Array(1...total))
            #expect(try await client.send(.get, "/books/dune").decoded(BookResource.self).likes == total)
        }
    }
}
