import ModelDepot
import ModelDepotShared
@_exported import ModelDepotVision

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `libLiteRt.so` (from the `ai-edge-litert` wheel) loaded with `dlopen`, with the C functions
/// the interpreter uses. The package builds without LiteRT; only this loads it.
public final class LiteRTLibrary: @unchecked Sendable {
    // @unchecked: the handle and function pointers are set once in init and only read after.
    typealias Handle = UnsafeMutableRawPointer?
    typealias CreateEnvironment = @convention(c) (Int32, UnsafeRawPointer?, UnsafeMutablePointer<Handle>) -> Int32
    typealias CreateModelFromBuffer = @convention(c) (Handle, UnsafeRawPointer, Int, UnsafeMutablePointer<Handle>) -> Int32
    typealias CreateOptions = @convention(c) (UnsafeMutablePointer<Handle>) -> Int32
    typealias SetAccelerators = @convention(c) (Handle, Int32) -> Int32
    typealias CreateCompiledModel = @convention(c) (Handle, Handle, Handle, UnsafeMutablePointer<Handle>) -> Int32
    typealias GetSignature = @convention(c) (Handle, Int, UnsafeMutablePointer<Handle>) -> Int32
    typealias GetTensorByIndex = @convention(c) (Handle, Int, UnsafeMutablePointer<Handle>) -> Int32
    typealias GetRankedTensorType = @convention(c) (Handle, UnsafeMutableRawPointer) -> Int32
    typealias CreateBufferFromHostMemory =
        @convention(c) (
            UnsafeRawPointer, UnsafeMutableRawPointer, Int, UnsafeRawPointer?,
            UnsafeMutablePointer<Handle>
        ) -> Int32
    typealias Run = @convention(c) (Handle, Int, Int, UnsafeMutablePointer<Handle>, Int, UnsafeMutablePointer<Handle>) -> Int32
    typealias Destroy = @convention(c) (Handle) -> Void

    private let handle: UnsafeMutableRawPointer
    let createEnvironment: CreateEnvironment
    let createModelFromBuffer: CreateModelFromBuffer
    let createOptions: CreateOptions
    let setAccelerators: SetAccelerators
    let createCompiledModel: CreateCompiledModel
    let getSignature: GetSignature
    let getInput: GetTensorByIndex
    let getOutput: GetTensorByIndex
    let getRankedTensorType: GetRankedTensorType
    let createBuffer: CreateBufferFromHostMemory
    let run: Run
    let destroyBuffer: Destroy
    let destroyCompiledModel: Destroy
    let destroyModel: Destroy
    let destroyOptions: Destroy
    let destroyEnvironment: Destroy

    /// Loads the library.
    /// - Parameter path: The path of `libLiteRt.so`.
    /// - Throws: `DepotError` (`unavailable`) with `dlerror`'s reason or the missing symbol.
    public init(path: String) throws(DepotError) {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw DepotError(
                .unavailable,
                "Could not load LiteRT from '\(path)': \(dlerror().map { String(cString: $0) } ?? "unknown error"). Install ai-edge-litert==2.3.0 and give the path of its libLiteRt.so."
            )
        }
        self.handle = handle
        func symbol<T>(_ name: String, as type: T.Type) throws(DepotError) -> T {
            guard let pointer = dlsym(handle, name) else {
                throw DepotError(.unavailable, "'\(path)' has no \(name); this needs the LiteRT C API of ai-edge-litert 2.3.0.")
            }
            return unsafeBitCast(pointer, to: T.self)
        }
        createEnvironment = try symbol("LiteRtCreateEnvironment", as: CreateEnvironment.self)
        createModelFromBuffer = try symbol("LiteRtCreateModelFromBuffer", as: CreateModelFromBuffer.self)
        createOptions = try symbol("LiteRtCreateOptions", as: CreateOptions.self)
        setAccelerators = try symbol("LiteRtSetOptionsHardwareAccelerators", as: SetAccelerators.self)
        createCompiledModel = try symbol("LiteRtCreateCompiledModel", as: CreateCompiledModel.self)
        getSignature = try symbol("LiteRtGetModelSignature", as: GetSignature.self)
        getInput = try symbol("LiteRtGetSignatureInputTensorByIndex", as: GetTensorByIndex.self)
        getOutput = try symbol("LiteRtGetSignatureOutputTensorByIndex", as: GetTensorByIndex.self)
        getRankedTensorType = try symbol("LiteRtGetRankedTensorType", as: GetRankedTensorType.self)
        createBuffer = try symbol("LiteRtCreateTensorBufferFromHostMemory", as: CreateBufferFromHostMemory.self)
        run = try symbol("LiteRtRunCompiledModel", as: Run.self)
        destroyBuffer = try symbol("LiteRtDestroyTensorBuffer", as: Destroy.self)
        destroyCompiledModel = try symbol("LiteRtDestroyCompiledModel", as: Destroy.self)
        destroyModel = try symbol("LiteRtDestroyModel", as: Destroy.self)
        destroyOptions = try symbol("LiteRtDestroyOptions", as: Destroy.self)
        destroyEnvironment = try symbol("LiteRtDestroyEnvironment", as: Destroy.self)
    }

    // No `dlclose` when the library goes: LiteRT's worker threads (XNNPACK's pool) outlive the
    // interpreters that started them, and unloading their code under them crashed the process at
    // exit (seen with an interpreter that failed to load). dlopen counts references, so loading
    // the same path again costs nothing; the library stays mapped until the process ends.
}

extension LiteRTLibrary: ModelInterpreterFactory {
    /// A LiteRT interpreter (CPU) for a verified model, built from its bytes as read and checked
    /// again at this moment (`VerifiedModel/loadVerifiedBytes()`), never from the file's path.
    /// - Throws: `DepotError`: `digest_mismatch` or `size_mismatch` when the file changed after
    ///   verification, or a LiteRT failure.
    public func makeInterpreter(for model: VerifiedModel) throws -> LiteRTInterpreter {
        try LiteRTInterpreter(model: model, library: self)
    }
}

extension LiteRTLibrary: TensorRunnerFactory {
    /// A LiteRT interpreter for a verified model, for the vision tasks
    /// (``makeInterpreter(for:)``: its verified bytes read and checked again now).
    public func makeRunner(for model: VerifiedModel) throws -> any TensorRunner {
        try makeInterpreter(for: model)
    }
}
