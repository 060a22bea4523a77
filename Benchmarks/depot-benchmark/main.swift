import Crypto
// The measuring half of scripts/bench/tflite and scripts/bench/rollout.
//
//   depot-benchmark verify FILE...   map + verify each file 20 times (no hashing): median, min ms
//   depot-benchmark sha256 FILE      the file's SHA-256, as ModelDepot computes it (mapped, streamed)
//   depot-benchmark rules            nanoseconds per rollout evaluation, with 0 and 20 rules
//   depot-benchmark sdk-verify FILE  the SDK's check of a downloaded file (SHA-256 + TFLite)
//   depot-benchmark sdk-install SERVER KEY ROOT_KEY MODEL CACHE [--url-session]   one download-verify-install
//   depot-benchmark signing          Ed25519 sign/verify per second; signed manifests made/checked per second
//   depot-benchmark patch-apply OLD PATCH NEW_SIZE   the SDK's Patch.apply, mapped files to a temporary file, 5 times: MB/s
//   depot-benchmark track < DETECTIONS.jsonl   ObjectTracker on a stream of detections (scripts/bench/tracking)
//   depot-benchmark camera SERVER KEY ROOT_KEY CACHE LIBLITERT FRAMES.nv12   CustomObjectDetector per frame (scripts/bench/camera)
import Foundation
import ModelDepotShared

let arguments = CommandLine.arguments.dropFirst()
// A failure ends the run with its message and exit status 1, never a trap.
do {
    switch arguments.first {
    case "verify":
        for path in arguments.dropFirst() {
            var times: [Duration] = []
            var model: TFLiteModelDescription?
            for _ in 0..<20 {
                let start = ContinuousClock.now
                let file = try MappedFile(path: path)
                model = try file.withBytes { bytes throws(DepotError) in try TFLiteVerifier().verify(bytes) }
                times.append(ContinuousClock.now - start)
            }
            times.sort()
            let milliseconds = { (duration: Duration) in
                Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1e3
            }
            let tensors = model?.subgraphs.reduce(0) { $0 + $1.tensorCount } ?? 0
            let operators = model?.subgraphs.reduce(0) { $0 + $1.operatorCount } ?? 0
            print(
                String(
                    format: "verify %@: %d bytes, %d tensors, %d operators: median %.3f ms, min %.3f ms",
                    (path as NSString).lastPathComponent, try MappedFile(path: path).count, tensors, operators,
                    milliseconds(times[times.count / 2]), milliseconds(times[0])))
        }
    case "sha256":
        guard let path = arguments.dropFirst().first else {
            print("usage: depot-benchmark sha256 FILE")
            exit(2)
        }
        let file = try MappedFile(path: path)
        print(file.withBytes { SHA256.digest(streaming: $0).hex }, path)
    case "rules":
        try RuleBenchmark().run()
    case "signing":
        try SigningBenchmark.run(seconds: 2)
    case "sdk-verify":
        try SDKBenchmark.verify(arguments.dropFirst().first ?? "")
    case "sdk-install":
        let values = Array(arguments.dropFirst()).filter { $0 != "--url-session" }
        guard values.count == 5 else {
            print("usage: depot-benchmark sdk-install SERVER KEY ROOT_KEY MODEL CACHE [--url-session]")
            exit(2)
        }
        try await SDKBenchmark.install(
            server: values[0], key: values[1], rootKey: values[2], model: values[3], cache: values[4],
            urlSession: arguments.contains("--url-session"))
    case "patch-apply":
        let values = Array(arguments.dropFirst())
        guard values.count == 3, let size = Int(values[2]) else {
            print("usage: depot-benchmark patch-apply OLD PATCH NEW_SIZE")
            exit(2)
        }
        try PatchBenchmark.apply(old: values[0], patch: values[1], newSize: size)
    case "track":
        try TrackBenchmark.run()
    case "camera":
        try await CameraBenchmark.run(Array(arguments.dropFirst()))
    default:
        print(
            "usage: depot-benchmark track < DETECTIONS.jsonl | camera SERVER KEY ROOT_KEY CACHE LIBLITERT FRAMES.nv12 | verify FILE... | sha256 FILE | rules | sdk-verify FILE | sdk-install SERVER KEY ROOT_KEY MODEL CACHE [--url-session] | signing | patch-apply OLD PATCH NEW_SIZE"
        )
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("depot-benchmark: \((error as? DepotError)?.message ?? "\(error)")\n".utf8))
    exit(1)
}
