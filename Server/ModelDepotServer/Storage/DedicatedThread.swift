import Foundation
import ModelDepotShared

/// Runs long work on a thread of its own: verifying an upload (reading the model page by page,
/// from a mapped file or from the object store, and inflating every associated file) and making
/// a patch (seconds of CPU). On a thread of the concurrency pool, or of NIO's, it would hold up
/// the requests and writes that wait for that thread.
enum DedicatedThread {
    /// - Parameter background: Runs the thread at a lower priority (`nice` 10), so that requests
    ///   keep the processor while work nobody waits for goes on.
    static func run<T: Sendable>(background: Bool = false, _ work: @escaping @Sendable () throws(DepotError) -> T) async throws(DepotError)
        -> T
    {
        let result: Result<T, DepotError> = await withCheckedContinuation { continuation in
            Thread {
                #if os(Linux)
                    // On Linux a nice value belongs to a thread: "who" 0 is the calling one.
                    if background { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10) }
                #endif
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
