import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// The console in a real browser (Debian's Chromium, headless, through chromedriver) against a
/// real `depot serve`: sign in, create a model, see a version the CLI uploaded with its metadata
/// and labels, publish it and see that through the CLI, create and revoke a key; on a laptop and
/// on a phone's width. Screenshots of each page go to `.build/console-screenshots/`.
@Suite struct ConsoleBrowserEndToEndTests {
    static let screenshots = Binaries.repository.appendingPathComponent(".build/console-screenshots")

    @Test func aPersonManagesModelsVersionsAndKeysInTheBrowser() async throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let browser = try await Browser()
        let console = server.url.appendingPathComponent("console")

        try await browser.open(console)
        #expect(try await browser.url.hasSuffix("/console/sign-in"))
        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("sign-in.png"))
        try await browser.type("wrong-token", into: "#token")
        try await browser.click("button[type=submit]")
        #expect(try await browser.text(of: ".error").contains("not a working ModelDepot token"))
        try await browser.type(ServerProcess.adminToken, into: "#token")
        try await browser.click("form[action='/console/sign-in'] button")
        #expect(try await browser.url.hasSuffix("/console/models"))

        try await browser.type("flowers", into: "#name")
        try await browser.type("Flower classifier", into: "#description")
        try await browser.type("vision, v2", into: "#tags")
        try await browser.click("form[action='/console/models'] button")
        #expect(try await browser.url.hasSuffix("/console/models/flowers"))
        let listed = try Command.depot(["models", "show", "flowers", "--json"], environment: server.environment).decode(ModelSummary.self)
        #expect(listed.description == "Flower classifier" && listed.tags == ["vision", "v2"])

        let uploaded = try Command.depot(["upload", "flowers", Binaries.fixture("metadata/image_classifier")], environment: server.environment)
        #expect(uploaded.status == 0, "\(uploaded.error)")
        try await browser.open(console.appendingPathComponent("models/flowers"))
        let page = try await browser.source
        #expect(page.contains("5 labels: red, green, blue, dark, bright"))
        #expect(page.contains("image float32 [1, 16, 16, 3]"))
        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("model.png"))
        try await browser.click("form[action='/console/models/flowers/versions/1/publish'] button")
        let versions = try Command.depot(["versions", "flowers", "--json"], environment: server.environment).decode(ModelVersionList.self)
        #expect(versions.versions.first?.published == true, "published in the browser, seen by the CLI")

        try await browser.open(console.appendingPathComponent("keys"))
        try await browser.type("phones", into: "#key-name")
        try await browser.click("form[action='/console/keys'] button")
        let secret = try await browser.value(of: "#secret")
        #expect(secret.hasPrefix("depot_"))
        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("keys.png"))
        let keys = try Command.depot(["keys", "list", "--json"], environment: server.environment).decode(AccessKeyList.self).keys
        let phones = try #require(keys.first { $0.name == "phones" })
        try await browser.click("a[href='/console/keys/\(phones.id)/revoke']")
        try await browser.click("form[action='/console/keys/\(phones.id)/revoke'] button")
        let revoked = try Command.depot(["keys", "list", "--json"], environment: server.environment).decode(AccessKeyList.self).keys
        #expect(revoked.first { $0.id == phones.id }?.revokedAt != nil)

        try await browser.resize(width: 390, height: 844)
        try await browser.open(console.appendingPathComponent("models"))
        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("models-phone.png"))
        try await browser.click(".sign-out button")
        #expect(try await browser.url.hasSuffix("/console/sign-in"))
        try await browser.open(console.appendingPathComponent("models"))
        #expect(try await browser.url.hasSuffix("/console/sign-in"), "signed out")
        await browser.quit()
    }
}
