/// The one error type of ModelDepot: a stable code and a message that says what failed,
/// with which value, and what to do next.
///
/// The server sends it as `{"error": {"code": …, "message": …}}`; the SDK and the CLI decode
/// the same body, so a caller sees the same code wherever an error was raised.
///
/// ```swift
/// do {
///     _ = try TFLiteVerifier().verify(bytes)
/// } catch let error as DepotError where error.code == .indexOutOfRange {
///     print(error.message)
/// }
/// ```
public struct DepotError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stable, machine-readable error code: every code any part of ModelDepot raises, in one
    /// list, so that each has its HTTP status (`status` on the server) without a default.
    public enum Code: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
        // MARK: The server and its API
        /// A model name breaks the naming rules.
        case invalidName = "invalid_name"
        /// A request is malformed: bad JSON, a bad parameter, a malformed header or hex digest.
        case badRequest = "bad_request"
        /// No credentials, or credentials that match no working key.
        case unauthorized = "unauthorized"
        /// The key is valid but may not do this.
        case forbidden = "forbidden"
        /// The model, version, key or blob does not exist.
        case notFound = "not_found"
        /// The thing to create exists already.
        case alreadyExists = "already_exists"
        /// The request conflicts with the current state (e.g. deleting a model that has versions).
        case conflict = "conflict"
        /// The upload is larger than the server accepts.
        case payloadTooLarge = "payload_too_large"
        /// The uploaded bytes do not hash to the SHA-256 the client sent.
        case digestMismatch = "digest_mismatch"
        /// An upload announced its digest as a trailer, which never came (a proxy on the way may drop
        /// trailers: send the digest as a header instead).
        case trailerMissing = "trailer_missing"
        /// A request's head is larger than the server takes (its bytes, or its number of fields).
        case requestHeadTooLarge = "request_head_too_large"
        /// A request's head did not arrive in time.
        case requestTimeout = "request_timeout"
        /// The requested byte range lies outside the file.
        case rangeNotSatisfiable = "range_not_satisfiable"
        /// Too many failed authentications from this address or for this key: wait for `Retry-After`.
        case tooManyRequests = "too_many_requests"
        /// The server's storage is full: nothing was stored.
        case insufficientStorage = "insufficient_storage"
        /// The server could not do what it should have; the message says what.
        case internalError = "internal_error"
        /// The server could not be reached or answered something unexpected (CLI and SDK).
        case unavailable = "unavailable"

        // MARK: Companion files
        /// A companion file's name, digest, size or count breaks a rule, or its content is not what its name promises.
        case invalidCompanionFile = "invalid_companion_file"

        // MARK: Experiments
        /// A batch of outcome events breaks a rule (its id, an event's metric, version, arm, time or value).
        case invalidEvents = "invalid_events"
        /// A metric's name, kind, direction or tolerance breaks a rule, or too many metrics are declared.
        case invalidMetric = "invalid_metric"
        /// The exposure token of an outcome event's version and arm is not one this server made
        /// for the batch's installation, the model, and that version and arm (forged, copied, or
        /// for another model).
        case invalidExposure = "invalid_exposure"
        /// The exposure token of an outcome event's version and arm is older than the server accepts (8 days): the
        /// device fetches a new one with its next manifest check.
        case expiredExposure = "expired_exposure"

        // MARK: The SDK: downloads and conditions
        /// A downloaded file's size differs from its manifest's.
        case sizeMismatch = "size_mismatch"
        /// Download conditions (network, power, idle, background) did not hold (in time).
        case conditionsNotMet = "conditions_not_met"
        /// The device lacks the space a download needs.
        case notEnoughSpace = "not_enough_space"
        /// The app cancelled a check or download.
        case cancelled = "cancelled"
        /// A download URL or a redirect names an origin that is neither the server's nor one the app allows.
        case originNotAllowed = "origin_not_allowed"
        /// A redirect goes from `https` to `http`.
        case insecureRedirect = "insecure_redirect"
        /// No byte of a download arrived for the stall timeout.
        case transferStalled = "transfer_stalled"
        /// A download's bytes arrived more slowly than the minimum rate over its window.
        case transferTooSlow = "transfer_too_slow"
        /// A file the SDK keeps (the trust state, the installation id, a model's record) exists but
        /// cannot be read: before the first unlock, say. It is never taken for absent, so rollback
        /// protection and the installation's bucket survive; try again once the device is unlocked.
        case storageUnreadable = "storage_unreadable"

        // MARK: Signed manifests and root documents
        /// A manifest carries no signature (or is not a signed envelope at all).
        case unsignedManifest = "unsigned_manifest"
        /// A signature comes from a key the trusted root document does not list.
        case unknownSigningKey = "unknown_signing_key"
        /// A signature comes from a key the trusted root document revoked.
        case revokedSigningKey = "revoked_signing_key"
        /// One key signed the same document twice.
        case duplicateSignature = "duplicate_signature"
        /// A signature does not verify with the key it names, or too few keys signed.
        case invalidSignature = "invalid_signature"
        /// A signed envelope, manifest or root document is malformed.
        case invalidMetadata = "invalid_metadata"
        /// A manifest or root document is larger than the SDK reads.
        case metadataTooLarge = "metadata_too_large"
        /// A manifest's expiry has passed (the server stopped refreshing it, or the answer was frozen).
        case manifestExpired = "manifest_expired"
        /// A manifest is older than one the device accepted before (a replay).
        case manifestRollback = "manifest_rollback"
        /// A manifest is for another model than the one asked for.
        case manifestMismatch = "manifest_mismatch"
        /// A root document is not signed by the root it claims to follow, or by its own root keys.
        case untrustedRoot = "untrusted_root"
        /// The newest trusted root document has expired.
        case rootExpired = "root_expired"

        // MARK: TFLite verification
        /// The file could not be opened, mapped or read.
        case fileUnreadable = "file_unreadable"
        /// The file is shorter than the smallest possible TFLite model (12 bytes).
        case modelTooSmall = "model_too_small"
        /// The file is 2 GiB or larger.
        case modelTooLarge = "model_too_large"
        /// Bytes 4..<8 are not the TFLite file identifier `TFL3`.
        case wrongFileIdentifier = "wrong_file_identifier"
        /// `Model.version` is not the schema version 3.
        case unsupportedSchemaVersion = "unsupported_schema_version"
        /// An offset, vector, string or field lies outside the file.
        case offsetOutOfBounds = "offset_out_of_bounds"
        /// An offset, vector or field is not aligned as FlatBuffers requires.
        case misaligned = "misaligned"
        /// A table's vtable is malformed.
        case invalidVTable = "invalid_vtable"
        /// A string has no terminating zero byte.
        case unterminatedString = "unterminated_string"
        /// Tables nest deeper than the verifier allows.
        case nestingTooDeep = "nesting_too_deep"
        /// The file holds more tables than the verifier allows.
        case tooManyTables = "too_many_tables"
        /// The model has no subgraph.
        case noSubgraphs = "no_subgraphs"
        /// An index (tensor, buffer, operator code, subgraph, …) points past the end of its list.
        case indexOutOfRange = "index_out_of_range"
        /// `-1` (no tensor) appears where only an optional operator input may use it.
        case optionalTensorNotAllowed = "optional_tensor_not_allowed"
        /// One tensor is both an input and an output of the same operator.
        case tensorIsInputAndOutput = "tensor_is_input_and_output"
        /// A dimension is negative, or a shape signature disagrees with its shape.
        case invalidShape = "invalid_shape"
        /// A tensor's byte size does not fit in an integer.
        case tensorSizeOverflow = "tensor_size_overflow"
        /// A tensor's type is not a known `TensorType`.
        case unknownTensorType = "unknown_tensor_type"
        /// A constant tensor's data does not have the size its shape and type require.
        case constantDataMismatch = "constant_data_mismatch"
        /// Quantization parameters disagree with each other or with the tensor's shape.
        case invalidQuantization = "invalid_quantization"
        /// An external buffer (`Buffer.offset`/`size`) lies outside the file.
        case externalBufferOutOfBounds = "external_buffer_out_of_bounds"
        /// An operator code is negative, or a custom operator has no name.
        case invalidOperatorCode = "invalid_operator_code"
        /// The verification policy does not allow custom operators.
        case customOperatorNotAllowed = "custom_operator_not_allowed"
        /// The verification policy does not allow Flex (TensorFlow select) operators.
        case flexOperatorNotAllowed = "flex_operator_not_allowed"
        /// The verification policy does not allow sparse tensors.
        case sparseTensorNotAllowed = "sparse_tensor_not_allowed"
        /// The model's inputs or outputs differ from what the app expects.
        case signatureMismatch = "signature_mismatch"
        /// The `TFLITE_METADATA` buffer is not valid TFLite Model Metadata (`M001`), or does not fit the model.
        case invalidModelMetadata = "invalid_model_metadata"
        /// The zip of associated files appended to the model is damaged or inconsistent.
        case invalidAssociatedFiles = "invalid_associated_files"
        /// The associated files inflate to more than ``TFLiteVerificationPolicy/maximumAssociatedFilesSize``.
        case associatedFilesTooLarge = "associated_files_too_large"
        /// The metadata names an associated file that the appended zip does not hold.
        case associatedFileMissing = "associated_file_missing"

        // MARK: Associated files: zlib
        /// A zlib or DEFLATE stream is damaged.
        case invalidCompressedData = "invalid_compressed_data"

        // MARK: Updates by patch
        /// A patch is damaged, or does not fit the file it patches or the file it should make.
        case invalidPatch = "invalid_patch"

        // MARK: Images (ModelDepotVision)
        /// An image could not be decoded, or a size or region does not fit it.
        case invalidImage = "invalid_image"

        // MARK: Vision tasks (ModelDepotVision)
        /// The model does not have the inputs or outputs the task needs (an image in, scores or detections out).
        case unsupportedModel = "unsupported_model"
        /// A task's options are out of range (a threshold outside 0–1, a count below 1) or ask
        /// for what was not given (classification without a classifier).
        case invalidOptions = "invalid_options"

        /// A code this version does not know, sent by a newer server: the message says what happened.
        case unrecognized = "unrecognized"

        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for people: what failed, with which value, and what to do next.
    public let message: String
    /// What went wrong underneath (a system error, a path, a database's or a store's answer),
    /// for the log of whoever raised the error; never encoded, so never sent.
    public let cause: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: What failed, with which value, and what to do next.
    ///   - cause: What went wrong underneath, for the log only.
    public init(_ code: Code, _ message: String, cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    private enum CodingKeys: String, CodingKey {
        case code, message
    }

    /// Decodes an error body's error; a code this version does not know becomes ``Code/unrecognized``
    /// with the message kept, so a newer server's refusal still reads as what it says.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = Code(rawValue: try container.decode(String.self, forKey: .code)) ?? .unrecognized
        message = try container.decode(String.self, forKey: .message)
        cause = nil
    }

    /// The message and code, and the cause when there is one (what logs print).
    public var description: String { "\(message) [\(code)]" + (cause.map { " (\($0))" } ?? "") }
}
