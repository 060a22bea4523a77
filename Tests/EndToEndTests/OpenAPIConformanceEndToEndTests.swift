import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// schemathesis (PyPI, installed by `scripts/bootstrap`) drives a real `depot serve` from its
/// own `/openapi.yaml`: generated requests for every operation (examples, fuzzing, and stateful
/// sequences through the links it infers), with the admin token and the names of a real model
/// and blob. No answer may be a 5xx, and every answer must be documented: status, content type,
/// headers and body schema.
@Suite struct OpenAPIConformanceEndToEndTests {
    @Test func everyGeneratedRequestGetsADocumentedAnswerAndNoServerError() async throws {
        // Fuzzing sends many bad keys from 127.0.0.1: without a high allowance the address
        // throttle would answer nearly everything with (documented) 429s and test little else.
        let published = try await PublishedModel(arguments: ["--auth-failure-allowance", "1000000"])
        let manifest = try await Command.curl([
            "-H", "Authorization: Bearer \(published.appKey)",
            published.server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString,
        ])
        let configuration = published.scratch.path("schemathesis.toml")
        try """
        headers = { Authorization = "Bearer \(ServerProcess.adminToken)" }
        [parameters]
        name = "flowers"
        hex = "\(try manifestPayload(manifest.output).sha256)"
        number = 1
        file = "1.json"
        metric = "accepted"
        """.write(toFile: configuration, atomically: true, encoding: .utf8)

        // One worker: CPython 3.11.7's AST validator keeps its recursion depth per interpreter, not
        // per thread, so hypothesis describing strategies from two workers at once fails now and
        // then with "AST constructor recursion depth mismatch" (its own error, not an answer; seen
        // in the fuzzing phase with two workers). The coverage phase is left out: there it failed
        // so every time. Revoking
        // keys is left out: the fuzzer would create an admin key, revoke the test's token with it,
        // and meet only 401s from then on.
        let run = try await Program.run(
            "schemathesis",
            [
                "--config-file", configuration, "run", published.server.url.absoluteString + "/openapi.yaml",
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance",
                "--phases", "examples,fuzzing,stateful", "--max-examples", "25", "--workers", "1", "--seed", "1",
                // The whole suite runs at once on two cores: an answer can wait its turn for seconds.
                "--request-timeout", "60",
                "--exclude-operation-id", "revokeKey",
            ])
        let report = run.text + run.error
        #expect(run.status == 0, "\(report.suffix(6000))")
        #expect(report.contains("Tested: 42"), "every operation but revokeKey was tested: \(report.suffix(3000))")
        #expect(!report.contains("Failures:"), "\(report.suffix(6000))")
    }
}
