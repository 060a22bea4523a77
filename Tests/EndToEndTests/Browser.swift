import Foundation
import TestSupport

/// Debian's Chromium, headless, driven through chromedriver with the W3C WebDriver protocol
/// (plain HTTP and JSON): what a person does in the console, done by a real browser.
final class Browser: @unchecked Sendable {
    // @unchecked: the driver process and the session id are set in init and only read afterwards.
    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    private let driver: RunningProgram
    private let endpoint: URL
    private var session = ""
    private let profile: Scratch

    /// Starts chromedriver on a free port and opens a headless Chromium session.
    init(width: Int = 1280, height: Int = 900) async throws {
        let port = try freeLocalPort()
        endpoint = URL(string: "http://127.0.0.1:\(port)")!
        profile = try Scratch()
        // swift-subprocess starts it with no signal blocked: with the test process's blocked mask
        // inherited, Chromium never finishes starting.
        driver = try await RunningProgram.start("/usr/bin/chromedriver", ["--port=\(port)"])
        _ = try await driver.line(containing: "started successfully", within: 30)
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": "/usr/bin/chromium",
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=\(width),\(height)",
                            "--user-data-dir=\(profile.path("profile"))",
                        ],
                    ],
                ]
            ]
        ]
        let created = try await request("POST", "/session", capabilities)
        guard let value = created["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            throw E2EFailure("chromedriver did not open a session: \(created)")
        }
        session = id
        // Finding an element waits up to 30 s for it to appear: how the test waits for the page.
        _ = try await command("POST", "timeouts", ["implicit": 30_000])
    }

    func quit() async {
        _ = try? await request("DELETE", "/session/\(session)")
    }

    func open(_ url: URL) async throws { _ = try await command("POST", "url", ["url": url.absoluteString]) }

    var url: String { get async throws { try await command("GET", "url")["value"] as? String ?? "" } }

    var source: String { get async throws { try await command("GET", "source")["value"] as? String ?? "" } }

    func resize(width: Int, height: Int) async throws { _ = try await command("POST", "window/rect", ["width": width, "height": height]) }

    /// The first element `selector` (CSS) finds.
    func element(_ selector: String) async throws -> String {
        let found = try await command("POST", "element", ["using": "css selector", "value": selector])
        guard let value = found["value"] as? [String: Any], let id = value[Self.elementKey] as? String else {
            throw E2EFailure("no element '\(selector)' on \(try await url): \(found)")
        }
        return id
    }

    func type(_ text: String, into selector: String) async throws {
        _ = try await command("POST", "element/\(try await element(selector))/value", ["text": text])
    }

    func click(_ selector: String) async throws {
        _ = try await command("POST", "element/\(try await element(selector))/click", [:])
    }

    func text(of selector: String) async throws -> String {
        try await command("GET", "element/\(try await element(selector))/text")["value"] as? String ?? ""
    }

    func value(of selector: String) async throws -> String {
        try await command("GET", "element/\(try await element(selector))/property/value")["value"] as? String ?? ""
    }

    /// Runs a script in the page and returns its result.
    @discardableResult
    func execute(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await command("POST", "execute/sync", ["script": script, "args": arguments])["value"]
    }

    /// Presses keys as a keyboard does, into whatever has the focus (`Key.tab` and the like included).
    func keys(_ text: String) async throws {
        let presses = text.unicodeScalars.flatMap { key in
            [["type": "keyDown", "value": String(key)], ["type": "keyUp", "value": String(key)]]
        }
        _ = try await command("POST", "actions", ["actions": [["type": "key", "id": "keyboard", "actions": presses]]])
    }

    /// What has the focus: its id, else its tag with its label or text.
    var focused: String {
        get async throws {
            try await execute(
                """
                const e = document.activeElement;
                return e.id || (e.tagName.toLowerCase() + ":" + (e.getAttribute("aria-label") || e.textContent.trim()));
                """) as? String ?? ""
        }
    }

    /// Presses Tab until `target` (see ``focused``) has the focus.
    /// - Returns: Everything that had the focus on the way, `target` last.
    @discardableResult
    func tab(to target: String, within presses: Int = 60) async throws -> [String] {
        var visited: [String] = []
        for _ in 0..<presses {
            try await keys(Key.tab)
            visited.append(try await focused)
            if visited.last == target { return visited }
        }
        throw E2EFailure("\(presses) presses of Tab did not reach '\(target)': \(visited)")
    }

    /// WebDriver's codes for keys that are not text.
    enum Key {
        static let tab = "\u{E004}", enter = "\u{E007}", backspace = "\u{E003}"
    }

    /// Saves a PNG of the viewport.
    func screenshot(to file: URL) async throws {
        guard let base64 = try await command("GET", "screenshot")["value"] as? String, let png = Data(base64Encoded: base64) else {
            throw E2EFailure("chromedriver sent no screenshot")
        }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try png.write(to: file)
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        try await request(method, "/session/\(session)/\(path)", body)
    }

    /// One WebDriver command, sent with curl.
    private func request(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        var arguments = ["-sS", "-m", "60", "-X", method, "-w", "\n%{http_code}", endpoint.appendingPathComponent(path).absoluteString]
        if let body {
            arguments += [
                "-H", "Content-Type: application/json", "--data-binary",
                String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self),
            ]
        }
        let output = try await Program.run("curl", arguments)
        let text = output.text
        let status = text.split(separator: "\n").last.map(String.init) ?? ""
        let json = Data(text.dropLast(status.count).utf8)
        let answer = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] ?? [:]
        guard status == "200" else { throw E2EFailure("WebDriver \(method) \(path): \(status) \(answer) \(output.error)") }
        return answer
    }
}
