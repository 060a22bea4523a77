/// The keys requests to the object store are signed with (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
public struct S3Credentials: Sendable, Hashable {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// For temporary credentials: sent as `x-amz-security-token`.
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}
