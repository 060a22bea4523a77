import ModelDepot
import ModelDepotShared

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a `VerifiedModel` in LiteRT through its C API ("CompiledModel", CPU): nothing
/// unverified reaches LiteRT's loader, which crashes on damaged files.
///
/// ```swift
/// let library = try LiteRTLibrary(path: "/path/to/ai_edge_litert/libLiteRt.so")
/// let interpreter = try LiteRTInterpreter(model: model, library: library)
/// let outputs = try interpreter.run([TensorValue(float32: [0.1, 0.2, 0.3, 0.4], shape: [1, 4])])
/// ```
public final class LiteRTInterpreter: TensorRunner, @unchecked Sendable {
    // @unchecked: the handles are created in init and destroyed with it; `run` only reads
    // them, and LiteRT's compiled model is run by one caller at a time (documented).
    typealias Handle = LiteRTLibrary.Handle

    /// A tensor's type as LiteRT reports it: the 72-byte `LiteRtRankedTensorType`.
    struct RankedType {
        var raw: [UInt8]

        var elementType: TFLiteTensorType? {
            let code = Int(raw[0]) | Int(raw[1]) << 8
            // LiteRT numbers element types as TfLiteType does, not as the schema does.
            let names = [1: "float32", 2: "int32", 3: "uint8", 4: "int64", 6: "bool", 7: "int16", 9: "int8", 10: "float16", 11: "float64"]
            return names[code].flatMap { TFLiteTensorType(name: $0) }
        }

        var shape: [Int] {
            let rank = Int(raw[4] & 0x7f)
            return (0..<min(rank, 8)).map { index in
                let offset = 8 + 4 * index
                return Int(
                    Int32(
                        bitPattern: UInt32(raw[offset]) | UInt32(raw[offset + 1]) << 8 | UInt32(raw[offset + 2]) << 16 | UInt32(
                            raw[offset + 3]) << 24))
            }
        }
    }

    private let library: LiteRTLibrary
    /// The verified bytes LiteRT reads the model from; they live as long as the interpreter.
    private let bytes: VerifiedModelBytes
    private let handles: Handles
    private let inputs: [RankedType]
    private let outputs: [RankedType]
    /// Where loads and runs are recorded, with the model they are recorded for.
    private let outcomes: (recorder: OutcomeRecorder, model: VerifiedModel)?

    /// Loads and compiles a verified model from its bytes, read and checked again now.
    /// - Parameters:
    ///   - verified: The model, as the downloader returned it.
    ///   - library: The loaded LiteRT library.
    ///   - outcomes: Where to record the load, each run and its latency
    ///     (`ModelDownloader.outcomes`); `nil` records nothing.
    /// - Throws: `DepotError`: `digest_mismatch` or `size_mismatch` when the file changed
    ///   after it was verified; `unavailable` naming the LiteRT call that failed and its status.
    public convenience init(model verified: VerifiedModel, library: LiteRTLibrary, outcomes: OutcomeRecorder? = nil) throws(DepotError) {
        let bytes: VerifiedModelBytes
        do {
            bytes = try verified.loadVerifiedBytes()
        } catch {
            outcomes?.record(.loadFailed, code: error.code, for: verified)
            throw error
        }
        try self.init(bytes: bytes, library: library, outcomes: outcomes)
    }

    /// Loads and compiles a model from verified bytes.
    /// - Parameters:
    ///   - bytes: The model's bytes, checked against its verified SHA-256.
    ///   - library: The loaded LiteRT library.
    ///   - outcomes: Where to record the load, each run and its latency; `nil` records nothing.
    /// - Throws: `DepotError` (`unavailable`) naming the LiteRT call that failed and its status.
    public init(bytes: VerifiedModelBytes, library: LiteRTLibrary, outcomes: OutcomeRecorder? = nil) throws(DepotError) {
        self.library = library
        self.bytes = bytes
        let verified = bytes.model
        self.outcomes = outcomes.map { ($0, verified) }
        let load = { () throws(DepotError) in try Self.load(bytes, library) }
        if let outcomes {
            (handles, inputs, outputs) = try outcomes.recordingLoad(of: verified, load)
        } else {
            (handles, inputs, outputs) = try load()
        }
    }

    /// LiteRT's environment, model, options and compiled model, destroyed together with their
    /// owner, or at once when loading fails halfway.
    private final class Handles {
        let library: LiteRTLibrary
        var environment: Handle = nil
        var model: Handle = nil
        var options: Handle = nil
        var compiled: Handle = nil

        init(_ library: LiteRTLibrary) { self.library = library }

        deinit {
            if let compiled { library.destroyCompiledModel(compiled) }
            if let options { library.destroyOptions(options) }
            if let model { library.destroyModel(model) }
            if let environment { library.destroyEnvironment(environment) }
        }
    }

    /// Creates LiteRT's environment, model, options and compiled model; returns them with the
    /// signature's input and output types.
    private static func load(_ bytes: VerifiedModelBytes, _ library: LiteRTLibrary) throws(DepotError) -> (
        Handles, [RankedType], [RankedType]
    ) {
        let verified = bytes.model
        let handles = Handles(library)
        try check(library.createEnvironment(0, nil, &handles.environment), "LiteRtCreateEnvironment")
        let environment = handles.environment
        var loaded: Handle = nil
        let status = bytes.withUnsafeBytes { library.createModelFromBuffer(environment, $0.baseAddress!, $0.count, &loaded) }
        handles.model = loaded
        try check(status, "LiteRtCreateModelFromBuffer")
        try check(library.createOptions(&handles.options), "LiteRtCreateOptions")
        try check(library.setAccelerators(handles.options, 1), "LiteRtSetOptionsHardwareAccelerators")
        try check(library.createCompiledModel(environment, loaded, handles.options, &handles.compiled), "LiteRtCreateCompiledModel")
        var signature: Handle = nil
        try check(library.getSignature(loaded, 0, &signature), "LiteRtGetModelSignature")
        let counts =
            verified.description.signatures.first.map { ($0.inputs.count, $0.outputs.count) }
            ?? (verified.description.inputs.count, verified.description.outputs.count)
        return (
            handles, try types(count: counts.0, signature, library.getInput, library),
            try types(count: counts.1, signature, library.getOutput, library)
        )
    }

    /// Runs the model's first signature.
    /// - Parameter values: One tensor per input, in the signature's order, of its type and shape.
    /// - Returns: One tensor per output.
    /// - Throws: `DepotError`: `signature_mismatch` for a wrong input count, type or size;
    ///   `unavailable` when a LiteRT call fails. With an `OutcomeRecorder`, the run (or its
    ///   failure) and its latency are recorded.
    public func run(_ values: [TensorValue]) throws(DepotError) -> [TensorValue] {
        guard let outcomes else { return try compute(values) }
        return try outcomes.recorder.recordingRun(of: outcomes.model) { () throws(DepotError) in try compute(values) }
    }

    private func compute(_ values: [TensorValue]) throws(DepotError) -> [TensorValue] {
        guard values.count == inputs.count else {
            throw DepotError(.signatureMismatch, "The model takes \(inputs.count) inputs; \(values.count) were given.")
        }
        var memory: [UnsafeMutableRawPointer] = []
        var buffers: [Handle] = []
        defer {
            for buffer in buffers { library.destroyBuffer(buffer) }
            for pointer in memory { free(pointer) }
        }
        func buffer(_ type: RankedType, bytes: [UInt8]?) throws(DepotError) -> Handle {
            guard let elementType = type.elementType, let size = TensorValue.byteCount(type: elementType, shape: type.shape) else {
                throw DepotError(.signatureMismatch, "A tensor has an element type this interpreter does not copy.")
            }
            var host: UnsafeMutableRawPointer?
            guard posix_memalign(&host, 64, max(size, 64)) == 0, let host else {
                throw DepotError(.unavailable, "Could not allocate \(size) bytes for a tensor.")
            }
            memory.append(host)
            if let bytes { bytes.withUnsafeBytes { host.copyMemory(from: $0.baseAddress!, byteCount: size) } }
            var handle: Handle = nil
            let status = type.raw.withUnsafeBytes { raw in library.createBuffer(raw.baseAddress!, host, size, nil, &handle) }
            try Self.check(status, "LiteRtCreateTensorBufferFromHostMemory")
            buffers.append(handle)
            return handle
        }
        var inputBuffers: [Handle] = []
        for (index, (type, value)) in zip(inputs, values).enumerated() {
            let expected = type.elementType.flatMap { TensorValue.byteCount(type: $0, shape: type.shape) }
            guard value.type == type.elementType, value.bytes.count == expected else {
                throw DepotError(
                    .signatureMismatch,
                    "Input \(index) must be \(type.elementType?.name ?? "?") \(type.shape) (\(expected ?? 0) bytes); got \(value.type) \(value.shape) (\(value.bytes.count) bytes)."
                )
            }
            inputBuffers.append(try buffer(type, bytes: value.bytes))
        }
        var outputBuffers: [Handle] = []
        for type in outputs { outputBuffers.append(try buffer(type, bytes: nil)) }
        try Self.check(
            library.run(handles.compiled, 0, inputBuffers.count, &inputBuffers, outputBuffers.count, &outputBuffers),
            "LiteRtRunCompiledModel")
        return zip(outputs, memory.suffix(outputs.count)).map { type, host in
            let elementType = type.elementType!
            let size = TensorValue.byteCount(type: elementType, shape: type.shape)!
            return TensorValue(type: elementType, shape: type.shape, bytes: Array(UnsafeRawBufferPointer(start: host, count: size)))
        }
    }

    private static func types(
        count: Int, _ signature: Handle, _ get: LiteRTLibrary.GetTensorByIndex,
        _ library: LiteRTLibrary
    ) throws(DepotError) -> [RankedType] {
        var result: [RankedType] = []
        for index in 0..<count {
            var tensor: Handle = nil
            try check(get(signature, index, &tensor), "LiteRtGetSignatureTensorByIndex(\(index))")
            var raw = [UInt8](repeating: 0, count: 72)
            let status = raw.withUnsafeMutableBytes { bytes in library.getRankedTensorType(tensor, bytes.baseAddress!) }
            try check(status, "LiteRtGetRankedTensorType")
            result.append(RankedType(raw: raw))
        }
        return result
    }

    private static func check(_ status: Int32, _ call: String) throws(DepotError) {
        guard status == 0 else {
            throw DepotError(.unavailable, "LiteRT's \(call) failed with status \(status).")
        }
    }
}
