import Hummingbird
import HummingbirdTesting

extension ApplicationProtocol {
    /// Runs `test` like `test(_:_:)`, but a test that throws ends only after its server has shut
    /// down gracefully. HummingbirdTesting rethrows inside the task group that runs the server,
    /// which cancels the server while a connection may still wait to be accepted. NIO traps on
    /// that connection ("Deinited NIOAsyncWriter without calling finish()"), and the trap ends the
    /// whole test run, not only the failing test.
    func testShuttingDown<Value: Sendable>(
        _ setup: TestingSetup, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let outcome: Result<Value, any Error> = try await self.test(setup) { client in
            do {
                return .success(try await test(client))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
