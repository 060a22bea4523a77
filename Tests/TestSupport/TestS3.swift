import Foundation

/// The throwaway S3 server `scripts/test` starts (`scripts/test-s3`: moto, authentication on).
public enum TestS3 {
    public struct Settings: Sendable {
        public let endpoint: String
        public let accessKeyID: String
        public let secretAccessKey: String
        public let bucket: String

        /// The `AWS_*` environment a server or a test uses to reach it.
        public var environment: [String: String] {
            [
                "AWS_ENDPOINT_URL_S3": endpoint, "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey,
                "AWS_REGION": "us-east-1",
            ]
        }

        /// `s3://BUCKET/PREFIX` with a new prefix, so that tests never see each other's objects.
        public func freshURL() -> String {
            "s3://\(bucket)/test-\(UUID().uuidString.lowercased())"
        }
    }

    public static func settings() throws -> Settings {
        let environment = ProcessInfo.processInfo.environment
        guard let endpoint = environment["DEPOT_TEST_S3_ENDPOINT"], let access = environment["DEPOT_TEST_S3_ACCESS_KEY"],
            let secret = environment["DEPOT_TEST_S3_SECRET"], let bucket = environment["DEPOT_TEST_S3_BUCKET"]
        else {
            throw TestPostgres.Unavailable(
                description:
                    "DEPOT_TEST_S3_ENDPOINT is not set: run the tests with scripts/test, which starts an S3 server (or run `eval \"$(scripts/test-s3 start)\"` first)."
            )
        }
        return Settings(endpoint: endpoint, accessKeyID: access, secretAccessKey: secret, bucket: bucket)
    }
}
