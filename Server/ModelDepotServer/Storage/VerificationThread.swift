import Foundation
import ModelDepotShared

/// Runs the verification of an upload on a thread of its own. It reads the model page by page
/// (from a mapped file, or from the object store, waiting for each page) and inflates every
/// associated file: work that would otherwise hold a thread of the concurrency pool, or of
/// NIO's pool, that requests and writes wait for.
enum VerificationThread {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws(DepotError) -> T) async throws(DepotError) -> T {
        let result: Result<T, DepotError> = await withCheckedContinuation { continuation in
            Thread {
                do throws(DepotError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }.start()
        }
        return try result.get()
    }
}
