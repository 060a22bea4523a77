// libFuzzer entry point for the fast path's outcome batch reader; built and run by scripts/fuzz.
import Foundation
import ModelDepotShared

/// Reads a body as the fast path does; a batch read that `JSONDecoder` does not read the same is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOutcomeBatchJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let batch = OutcomeBatchReader.read(bytes) {
        let decoded = try? JSONDecoder().decode(OutcomeBatch.self, from: Data(bytes))
        precondition(decoded == batch, "read \(batch), JSONDecoder read \(String(describing: decoded))")
    }
    return 0
}
