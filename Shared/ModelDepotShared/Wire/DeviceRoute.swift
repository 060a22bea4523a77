/// The paths of the requests a device makes, the one place the SDK and the server (its
/// router and its fast path) take them from.
public enum DeviceRoute {
    /// `/v1/models/{name}/manifest` is this, the model's name, then ``manifestSuffix``.
    public static let manifestPrefix = "/v1/models/"
    public static let manifestSuffix = "/manifest"
    /// `/v1/models/{name}/events` is ``manifestPrefix``, the model's name, then this.
    public static let eventsSuffix = "/events"
    /// `/v1/blobs/sha256/{hex}` is this, then the blob's SHA-256 in lower-case hex.
    public static let blobPrefix = "/v1/blobs/sha256/"

    /// The query item of a model file's download URL that carries the arm token the server
    /// signed into the manifest (`?arm=<arm>.<mac>`): the download counts for that arm.
    public static let armQueryItem = "arm"

    public static func manifest(of model: ModelName) -> String { manifestPrefix + model.rawValue + manifestSuffix }

    /// `/v1/models/{name}/events`, where the SDK sends outcome batches.
    public static func events(of model: ModelName) -> String { manifestPrefix + model.rawValue + eventsSuffix }

    public static func blob(sha256: String) -> String { blobPrefix + sha256 }

    /// A model file's download URL with the arm token the server made for it
    /// (`/v1/blobs/sha256/<hex>?arm=<token>`).
    public static func blob(sha256: String, armToken: String) -> String { blobPrefix + sha256 + "?" + armQueryItem + "=" + armToken }
}
