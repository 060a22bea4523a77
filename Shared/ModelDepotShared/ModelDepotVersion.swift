/// The version of this ModelDepot release. The server, the CLI and the SDK are released together
/// and tagged with it (`1.0.0`): `depot --version` prints it, the server reports it at `/healthz`
/// and in `/metrics` (`depot_build_info`), and the SDK sends it as `Depot-SDK-Version`.
public let modelDepotVersion = "1.0.0"
