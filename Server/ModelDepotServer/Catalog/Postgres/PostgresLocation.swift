import Foundation
import ModelDepotShared
import PostgresNIO

/// Where a PostgreSQL catalog is: a `postgres://user:password@host:port/database` URL
/// (`postgresql://` too), as libpq takes it. `?sslmode=disable|prefer|require` chooses TLS:
/// `require` by default for a host on the network, `prefer` (TLS when the server offers it) for
/// this machine (`localhost`, `127.0.0.0/8`, `::1`), whose traffic no one else sees.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, Hashable { case disable, prefer, require }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// Parses a URL.
    /// - Throws: ``DepotError`` `badRequest` naming what is wrong with it.
    public init(url text: String) throws(DepotError) {
        let hint = "Give it as postgres://USER:PASSWORD@HOST:PORT/DATABASE."
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            ["postgres", "postgresql"].contains(scheme.lowercased())
        else {
            throw DepotError(.badRequest, "The database '\(Self.redacted(text))' is not a postgres:// URL. \(hint)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw DepotError(.badRequest, "The database URL '\(Self.redacted(text))' names no host. \(hint)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw DepotError(.badRequest, "The database URL '\(Self.redacted(text))' names no user. \(hint)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw DepotError(.badRequest, "The database URL '\(Self.redacted(text))' names no database (the path after the host). \(hint)")
        }
        var tls = Self.isThisMachine(host) ? TLSMode.prefer : .require
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode", let value = item.value, let mode = TLSMode(rawValue: value) else {
                throw DepotError(
                    .badRequest,
                    "The database URL's parameter '\(item.name)=\(item.value ?? "")' is not understood; only sslmode=disable, prefer or require is."
                )
            }
            tls = mode
        }
        self.host = host
        self.port = components.port ?? 5432
        self.user = components.percentEncodedUser?.removingPercentEncoding ?? user
        self.password = components.percentEncodedPassword?.removingPercentEncoding
        self.database = database.removingPercentEncoding ?? database
        self.tls = tls
    }

    /// Whether `host` names this machine: its traffic does not leave it.
    static func isThisMachine(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard name != "localhost" else { return true }
        guard let address = AddressRange.bytes(name) else { return false }
        return address.count == 4 ? address[0] == 127 : address == Array(repeating: 0, count: 15) + [1]
    }

    /// The URL without its password, for logs and errors.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    var clientConfiguration: PostgresClient.Configuration {
        let tlsChoice: PostgresClient.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password,
            database: database, tls: tlsChoice)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// `text` with any password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}
