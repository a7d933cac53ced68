import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The repository as a `Service` of the service group: it runs until graceful shutdown, then closes the
/// repository. Listed before the HTTP server in the group, it shuts down after it (a group shuts services down
/// in reverse order, each after the previous one returned): the server stops accepting, finishes the requests in
/// flight, and only then is the file closed.
public struct LibraryService: Service {
    /// The repository closed on shutdown.
    public let library: any LibraryRepository

    /// The service for `library`.
    public init(library: any LibraryRepository) {
        self.library = library
    }

    /// Waits for the graceful shutdown, then closes the repository.
    public func run() async throws {
        // Cancellation (the group failing) closes the repository too.
        try? await gracefulShutdown()
        await library.close()
    }
}

/// The HTTP application over `library`, listening on `host`:`port` (0: any free port, reported to
/// `onServerRunning`).
public func makeApplication(
    library: any LibraryRepository, host: String = "127.0.0.1", port: Int = 8080, logger: Logger,
    onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router()
    router.middlewares.add(LogRequestsMiddleware(.debug))
    LibraryRoutes(library: library).register(on: router)
    return Application(
        router: router,
        configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "strata-server"),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
        logger: logger)
}

/// The service group of the server: the repository, then the HTTP application; `signals` (SIGTERM and SIGINT
/// by default) start a graceful shutdown, as does `triggerGracefulShutdown()`.
public func makeServiceGroup(
    library: any LibraryRepository, application: some ApplicationProtocol,
    signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger
) -> ServiceGroup {
    ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: [
                .init(service: LibraryService(library: library)),
                .init(service: application),
            ],
            gracefulShutdownSignals: signals,
            logger: logger))
}
