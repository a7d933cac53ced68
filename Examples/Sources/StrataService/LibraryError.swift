import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Strata

/// What a repository reports to the routes, each with its HTTP status: the client learns what was wrong
/// (`{"error": "..."}`), and nothing was written.
public enum LibraryError: Error, Equatable, CustomStringConvertible, HTTPResponseError {
    /// No such author or book (404).
    case notFound(String)
    /// An author or book with that id exists already (409).
    case duplicate(String)
    /// The request asked for something malformed: a bad field, a bad query (400). Strata's own message when it
    /// came from a `Realm.Error`.
    case badInput(String)
    /// The service is shutting down or was closed (503).
    case unavailable(String)
    /// The backend cannot do that (501): the GRDB backend has no RQL filter and no change stream.
    case unsupported(String)
    /// Anything else (500); the message is logged, the client gets it too.
    case failed(String)

    /// The HTTP status of the error.
    public var status: HTTPResponse.Status {
        switch self {
        case .notFound: .notFound
        case .duplicate: .conflict
        case .badInput: .badRequest
        case .unavailable: .serviceUnavailable
        case .unsupported: .notImplemented
        case .failed: .internalServerError
        }
    }

    /// The message the client gets.
    public var description: String {
        switch self {
        case .notFound(let message), .duplicate(let message), .badInput(let message), .unavailable(let message),
            .unsupported(let message), .failed(let message):
            message
        }
    }

    /// The JSON body `{"error": message}` with the error's status.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try JSONEncoder().encode(["error": description])
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The library error for an error a Strata call threw: a duplicate primary key is a conflict, a malformed
    /// query or value is bad input, both with Strata's message; anything else is a failure.
    public static func from(_ error: any Error) -> LibraryError {
        if let error = error as? LibraryError { return error }
        guard let realmError = error as? Realm.Error else { return .failed("\(error)") }
        switch realmError {
        case .primaryKeyExists: return .duplicate(realmError.description)
        case .invalidQuery, .invalidValue, .valueTooLarge, .primaryKeyChange: return .badInput(realmError.description)
        default: return .failed(realmError.description)
        }
    }
}
