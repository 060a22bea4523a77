extension DepotError.Code {
    /// A model name breaks the naming rules.
    public static let invalidName = Self("invalid_name")
    /// A request is malformed: bad JSON, a bad parameter, a malformed header or hex digest.
    public static let badRequest = Self("bad_request")
    /// No credentials, or credentials that match no working key.
    public static let unauthorized = Self("unauthorized")
    /// The key is valid but may not do this.
    public static let forbidden = Self("forbidden")
    /// The model, version, key or blob does not exist.
    public static let notFound = Self("not_found")
    /// The thing to create exists already.
    public static let alreadyExists = Self("already_exists")
    /// The request conflicts with the current state (e.g. deleting a model that has versions).
    public static let conflict = Self("conflict")
    /// The upload is larger than the server accepts.
    public static let payloadTooLarge = Self("payload_too_large")
    /// The uploaded bytes do not hash to the SHA-256 the client sent.
    public static let digestMismatch = Self("digest_mismatch")
    /// An upload announced its digest as a trailer, which never came (a proxy on the way may drop
    /// trailers: send the digest as a header instead).
    public static let trailerMissing = Self("trailer_missing")
    /// The requested byte range lies outside the file.
    public static let rangeNotSatisfiable = Self("range_not_satisfiable")
    /// Too many failed authentications from this address or for this key: wait for `Retry-After`.
    public static let tooManyRequests = Self("too_many_requests")
    /// The server's storage is full: nothing was stored.
    public static let insufficientStorage = Self("insufficient_storage")
    /// The server could not do what it should have; the message says what.
    public static let internalError = Self("internal_error")
    /// The server could not be reached or answered something unexpected (CLI and SDK).
    public static let unavailable = Self("unavailable")
}
