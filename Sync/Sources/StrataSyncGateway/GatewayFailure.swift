import Foundation
import Hummingbird
import NIOCore
import PostgresNIO
import StrataSync

/// A request the gateway refuses before or instead of asking PostgreSQL: its HTTP status and error body.
struct GatewayFailure: Error {
    var status: Int
    var body: GatewayWire.ErrorBody

    init(status: Int, body: GatewayWire.ErrorBody) {
        self.status = status
        self.body = body
    }

    static func unauthorized(_ message: String) -> GatewayFailure {
        GatewayFailure(status: 401, body: .init(code: "unauthorized", message: message))
    }

    static func forbidden(_ message: String) -> GatewayFailure {
        GatewayFailure(status: 403, body: .init(code: "forbidden", message: message))
    }

    static let tooLarge = GatewayFailure(
        status: 413, body: .init(code: "payloadTooLarge", message: "the request body is too large"))

    static func badRequest(_ message: String) -> GatewayFailure {
        GatewayFailure(status: 400, body: .init(code: "badRequest", message: message))
    }

    /// The status and body that report `error`: the gateway's own refusals as they are, ``SyncError``s by
    /// ``GatewayWire/status(of:)``, a body over the limit 413, PostgreSQL's errors 503 when it cannot be reached
    /// and 500 otherwise (their details stay in the gateway's log), anything else 500.
    init(_ error: any Error) {
        switch error {
        case let failure as GatewayFailure:
            self = failure
        case let error as SyncError:
            self.init(status: GatewayWire.status(of: error), body: .init(error))
        case is NIOTooManyBytesError:  // what collecting a body over its limit throws
            self = .tooLarge
        case let error as HTTPError where error.status == .contentTooLarge:
            self = .tooLarge
        case let error as PSQLError
        where [.connectionError, .serverClosedConnection, .poolClosed, .uncleanShutdown].contains(error.code):
            self.init(status: 503, body: .init(code: "serverUnavailable", message: "PostgreSQL cannot be reached"))
        default:
            self.init(status: 500, body: .init(code: "internalError", message: "the gateway failed; see its log"))
        }
    }

    /// The answer: the status with the JSON error body (and a bearer challenge for 401).
    var response: Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        let data = (try? GatewayWire.encode(body)) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
