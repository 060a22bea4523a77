// libFuzzer entry point for the fast path's request head reader; built and run by scripts/fuzz.
import NIOCore

/// Reads one head; a head longer than the bytes given, or than the reader's limit, is a finding,
/// and so is a request (a batch, or one for the router) longer than a head and the largest body it may wait for.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHotRequestHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = ByteBuffer(bytes: UnsafeBufferPointer(start: data, count: size))
    if case .request(let request, let length) = FastPathRequestHead.parse(buffer) {
        precondition(length <= size && length <= FastPathRequestHead.maxLength, "a head of \(length) bytes in \(size)")
        precondition(request.path.hasPrefix("/"), "target '\(request.path)'")
    }
    if case .posted(let request, let head, let length) = FastPathRequestHead.parse(buffer) {
        precondition(
            head <= size && head <= FastPathRequestHead.maxLength && length >= head && length - head <= FastPathRequestHead.maxRoutedBody,
            "a head of \(head) bytes in \(size), a request of \(length)")
        precondition(request.path.hasPrefix("/"), "target '\(request.path)'")
    }
    if case .routed(let length) = FastPathRequestHead.parse(buffer) {
        precondition(
            length > 0 && length <= FastPathRequestHead.maxLength + FastPathRequestHead.maxRoutedBody, "a routed request of \(length) bytes"
        )
    }
    return 0
}
