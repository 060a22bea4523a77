import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// The console in a real browser (Debian's Chromium, headless, through chromedriver) against a
/// real `depot serve`: sign in, create a model, upload with the progress bar (picked and dropped,
/// and a refused file), publish, a 90/10 rule with conditions set with the keyboard alone and its
/// preview checked, the rule seen by the CLI, traffic from SDK devices in the results, keys; on a
/// laptop and on a phone's width. Screenshots of each page go to `.build/console-screenshots/`.
@Suite struct ConsoleBrowserEndToEndTests {
    static let screenshots = Binaries.repository.appendingPathComponent(".build/console-screenshots")

    static func screenshot(_ browser: Browser, _ name: String) async throws {
        try await browser.screenshot(to: screenshots.appendingPathComponent("\(name).png"))
    }

    @Test func aPersonRunsModelsRolloutsResultsAndKeysInTheBrowser() async throws {
        let scratch = try Scratch()
        // Up to 200 phones, all on 127.0.0.1: one client network, whose first 100 installations
        // an hour would count otherwise (a test fleet behind one address, as the flag is for).
        let server = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("storage"), arguments: ["--outcome-installations-per-network", "1000"])
        let root = try await server.initializeRoot(keyFile: scratch.path("root.key"))
        let browser = try await Browser()
        let console = server.url.appendingPathComponent("console")

        try await browser.open(console)
        #expect(try await browser.url.hasSuffix("/console/sign-in"))
        try await Self.screenshot(browser, "sign-in")
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
        let listed = try await Command.depot(["models", "show", "flowers", "--json"], environment: server.environment).decode(
            ModelSummary.self)
        #expect(listed.description == "Flower classifier" && listed.tags == ["vision", "v2"])

        try await uploads(browser, server: server, scratch: scratch)
        try await rollout(browser, server: server, console: console)
        try await results(browser, server: server, root: root, scratch: scratch, console: console)
        try await keys(browser, server: server, console: console)

        try await browser.resize(width: 390, height: 844)
        for page in [
            "models", "models/flowers", "models/flowers/versions/1", "models/flowers/rollout", "models/flowers/results",
            "models/flowers/experiment", "keys",
        ] {
            try await browser.open(console.appendingPathComponent(page))
            try await Self.expectItFitsAPhone(browser, page)
            try await Self.screenshot(browser, page.replacingOccurrences(of: "/", with: "-") + "-phone")
        }
        try await browser.click(".sign-out button")
        _ = try await browser.element("form[action='/console/sign-in']")
        #expect(try await browser.url.hasSuffix("/console/sign-in"))
        try await browser.open(console.appendingPathComponent("models"))
        #expect(try await browser.url.hasSuffix("/console/sign-in"), "signed out")
        await browser.quit()
    }

    /// At 390 px: nothing scrolls sideways, not the page and not a table in it; every action in a
    /// table and every warning lies wholly on the screen; chart text is at least 11 px.
    static func expectItFitsAPhone(_ browser: Browser, _ page: String) async throws {
        let width = try await browser.execute("return document.documentElement.clientWidth") as? Int ?? 0
        #expect(width > 300 && width <= 390, "\(page): the viewport is a phone's: \(width)")
        let overflow =
            try await browser.execute("return document.documentElement.scrollWidth - document.documentElement.clientWidth") as? Int
        #expect(overflow == 0, "\(page) fits a phone's width")
        let wideTables =
            try await browser.execute(
                """
                return Array.from(document.querySelectorAll("table")).filter(t => t.scrollWidth > t.clientWidth + 1).map(t => t.caption ? t.caption.textContent : t.outerHTML.slice(0, 80));
                """) as? [String] ?? ["?"]
        #expect(wideTables.isEmpty, "\(page): tables that scroll sideways: \(wideTables)")
        let offScreen =
            try await browser.execute(
                """
                return Array.from(document.querySelectorAll("td button, td a, .warning")).filter(e => {
                    const r = e.getBoundingClientRect();
                    return r.width === 0 || r.left < 0 || r.right > document.documentElement.clientWidth || e.scrollWidth > e.clientWidth + 1;
                }).map(e => e.textContent.trim().slice(0, 60));
                """) as? [String] ?? ["?"]
        #expect(offScreen.isEmpty, "\(page): actions or warnings not wholly on the screen: \(offScreen)")
        let smallest =
            try await browser.execute(
                """
                const sizes = Array.from(document.querySelectorAll("svg text")).map(t =>
                    parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a);
                return sizes.length ? Math.min(...sizes) : 99;
                """) as? Double ?? 0
        #expect(smallest >= 11, "\(page): chart text of \(smallest) px")
    }

    /// A file picked, uploaded and published with the progress bar at 100%; a file that is not a
    /// model refused with the verifier's error; a file dropped on the field.
    func uploads(_ browser: Browser, server: ServerProcess, scratch: Scratch) async throws {
        try await browser.type(Binaries.fixture("metadata/image_classifier"), into: "#upload-file")
        try await browser.type("first upload", into: "#upload-notes")
        try await browser.click("#upload input[name=publish]")
        try await browser.click("#upload button[type=submit]")
        #expect(try await browser.text(of: "#upload-status.done").contains("Uploaded v1"))
        #expect(try await browser.execute("return document.getElementById('upload-progress').value") as? Int == 100)
        #expect(try await browser.text(of: "#upload-percent") == "100%")
        try await Self.screenshot(browser, "upload")
        try await browser.click("#upload-status a")
        #expect(try await browser.text(of: "tbody td[data-label=Version]") == "v1")
        try await Self.screenshot(browser, "model")
        // The version's page: what `depot versions flowers 1` prints.
        try await browser.click("tbody td[data-label=Version] a")
        let shown = try await browser.text(of: "pre.version-text")
        let printed = try await Command.depot(["versions", "flowers", "1"], environment: server.environment).text
        #expect(shown == printed.trimmingCharacters(in: .newlines), "\(shown)\n---\n\(printed)")
        #expect(shown.contains("labels of output 0") && shown.contains("image  float32 [1, 16, 16, 3]"), "\(shown)")
        try await Self.screenshot(browser, "version")
        try await browser.click("a[href='/console/models/flowers']")

        try await browser.execute("document.getElementById('upload').dataset.maximumSize = '100'")
        try await browser.type(Binaries.fixture("float_classifier"), into: "#upload-file")
        try await browser.click("#upload button[type=submit]")
        #expect(try await browser.text(of: "#upload-status.error").contains("this server accepts at most 100"), "refused before sending")
        try await browser.open(URL(string: try await browser.url)!)

        let text = scratch.url.appendingPathComponent("notes.tflite")
        try Data("these are notes, not a model".utf8).write(to: text)
        try await browser.type(text.path, into: "#upload-file")
        try await browser.click("#upload button[type=submit]")
        let refused = try await browser.text(of: "#upload-status.error")
        #expect(refused.contains("[") && !refused.contains("Uploaded"), "the verifier's message and code: \(refused)")
        try await Self.screenshot(browser, "upload-refused")

        try await browser.execute(
            """
            const bytes = Uint8Array.from(atob(arguments[0]), c => c.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], "image_classifier_uint8.tflite"));
            document.getElementById("drop-zone").dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
            """, [try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("metadata/image_classifier_uint8"))).base64EncodedString()])
        #expect(try await browser.text(of: "#upload-status").contains("Ready to upload image_classifier_uint8.tflite"))
        try await browser.click("#upload input[name=publish]")
        try await browser.click("#upload button[type=submit]")
        #expect(try await browser.text(of: "#upload-status.done").contains("Uploaded v2"))
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: server.environment).decode(
            ModelVersionList.self
        )
        .versions
        #expect(
            versions.map(\.version) == [2, 1] && versions.allSatisfy(\.published), "uploaded and published in the browser, seen by the CLI")
        #expect(versions.last?.notes == "first upload")
    }

    /// The default and a 90/10 rule with two conditions, set with the keyboard alone, each previewed
    /// before it is saved; the rule as the CLI shows it.
    func rollout(_ browser: Browser, server: ServerProcess, console: URL) async throws {
        try await browser.open(console.appendingPathComponent("models/flowers/rollout"))
        try await browser.tab(to: "default-version")
        try await browser.keys("v1")
        try await browser.keys(Browser.Key.tab + Browser.Key.enter)
        #expect(try await browser.text(of: "#preview").contains("100.00% of them move from v2 to v1"))
        try await browser.tab(to: "button:Save this change")
        try await browser.keys(Browser.Key.enter)
        _ = try await browser.element("#rule-editor")
        #expect(try await browser.url.hasSuffix("/console/models/flowers/rollout"))

        let order = try await browser.tab(to: "rule-name")
        let path = try await browser.tab(to: "button:Preview")  // the rule editor's, after the default's
        #expect(order.firstIndex(of: "default-version").map { $0 < order.count - 1 } == true, "the default first: \(order)")
        #expect(
            path.prefix(5) == ["rule-conditions", "share-1", "input:Share of v1", "share-2", "input:Share of v2"],
            "labelled fields in reading order, each slider after its number: \(path)")
        try await browser.open(console.appendingPathComponent("models/flowers/rollout"))
        try await browser.tab(to: "rule-name")
        try await browser.keys("ios-canary" + Browser.Key.tab + "platform=ios" + Browser.Key.enter + "appVersion>=3.2.0" + Browser.Key.tab)
        try await browser.keys(Browser.Key.backspace + "90" + Browser.Key.tab + Browser.Key.tab + Browser.Key.backspace + "10")
        #expect(try await browser.value(of: "input[aria-label='Share of v1']") == "90", "the slider follows the number")
        #expect(try await browser.text(of: "#split-total") == "100.00%")
        try await browser.tab(to: "button:Preview")
        try await browser.keys(Browser.Key.enter)
        let preview = try await browser.text(of: "#preview")
        #expect(preview.contains("New rule 'ios-canary' (platform=ios, appVersion>=3.2.0)"), "\(preview)")
        #expect(preview.contains("10.00% of them move from v1 to v2") && preview.contains("90.00% of them stay on v1"), "\(preview)")
        try await Self.screenshot(browser, "rollout-preview")
        try await browser.tab(to: "button:Save this change")
        try await browser.keys(Browser.Key.enter)
        _ = try await browser.element("#rule-editor")
        #expect(try await browser.text(of: "table").contains("ios-canary"))
        try await Self.screenshot(browser, "rollout")

        let shown = try await Command.depot(["rollout", "show", "flowers"], environment: server.environment)
        #expect(
            shown.status == 0 && shown.text.contains("ios-canary") && shown.text.contains("platform=ios and appVersion>=3.2.0"),
            "\(shown.text)")
        #expect(shown.text.contains("v1 0-90%, v2 90-100%"), "\(shown.text)")
    }

    /// Phones running the SDK get their versions; the results page counts them per arm.
    func results(
        _ browser: Browser, server: ServerProcess, root: (file: String, publicKey: String), scratch: Scratch,
        console: URL
    ) async throws {
        let appKey = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self
        )
        .secret
        // Phones until each version has four (the experiment compares versions over installations);
        // each records how often its user accepted an answer and sends its outcomes.
        var got = [1: 0, 2: 0]
        var phone = 0
        while got.values.contains(where: { $0 < 4 }) && phone < 200 {
            let downloader = try ModelDownloader(
                configuration: ModelDownloaderConfiguration(
                    serverURL: server.url, appKey: appKey, trustedRoot: .publicKey(root.publicKey), installationID: "phone-\(phone)",
                    device: DeviceContext(platform: "ios", appVersion: "3.4.0"),
                    cacheDirectory: scratch.url.appendingPathComponent("phone-\(phone)")))
            let model = try await downloader.model(named: "flowers")
            got[model.version, default: 0] += 1
            try downloader.outcomes.record("accepted", value: Double(1 + phone), for: model)
            #expect(try await downloader.sendOutcomes() > 0)
            phone += 1
        }
        #expect(got[1]! >= 4 && got[2]! >= 4, "both versions reached phones: \(got)")
        try await browser.open(
            console.appendingPathComponent("models/flowers/results").appending(queryItems: [.init(name: "hours", value: "1")]))
        let rows =
            try await browser.execute(
                """
                return Array.from(document.querySelectorAll("#arms tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent));
                """) as? [[String]] ?? []
        for version in [1, 2] where got[version]! > 0 {
            #expect(
                rows.contains(["rule 'ios-canary'", "v\(version)", "\(got[version]!)", "\(got[version]!)", "\(got[version]!)"]),
                "manifests, downloads and installations of v\(version): \(rows)")
        }
        // Each version's line in the manifests chart, as the browser laid it out: its label and
        // its highest point (a smaller y is higher; the baseline is at y 220)
        let lines =
            try await browser.execute(
                """
                return Array.from(document.querySelectorAll("svg.chart")[0].querySelectorAll("polyline")).map(p =>
                    [p.querySelector("title").textContent, String(Math.min(...Array.from(p.points).map(q => q.y)))]);
                """) as? [[String]] ?? []
        let description = try await browser.execute("return document.querySelector('svg.chart desc').textContent;") as? String ?? ""
        for version in [1, 2] where got[version]! > 0 {
            let label = "rule 'ios-canary', v\(version)"
            let top = lines.first { $0.first == label }.flatMap { Double($0[1]) }
            #expect(top.map { $0 < 220 } == true, "\(label) rises above the baseline: \(lines)")
            #expect(description.contains("\(label): \(got[version]!)"), "the chart's totals: \(description)")
        }
        #expect(try await browser.text(of: "table").contains("ios-canary"), "the rule's sample-ratio check")
        try await Self.screenshot(browser, "results")

        // The experiment: the rule's arm, a plain-words verdict for v2, and a tile per measured
        // metric with its interval chart.
        try await browser.open(console.appendingPathComponent("models/flowers/experiment"))
        #expect(try await browser.text(of: "h2") == "rule 'ios-canary': control v1")
        #expect(try await browser.text(of: ".verdicts li").hasPrefix("Version 2 against version 1: "))
        let tiles =
            try await browser.execute(
                """
                return Array.from(document.querySelectorAll(".tile")).map(t => [t.querySelector("h3").textContent,
                    String(t.querySelectorAll("svg.interval-chart line.interval").length)]);
                """) as? [[String]] ?? []
        let accepted = tiles.first { $0.first == "accepted" }
        #expect(accepted.map { Int($0[1]).map { $0 >= 1 } == true } == true, "the accepted tile draws v2's interval: \(tiles)")
        try await Self.screenshot(browser, "experiment")
    }

    func keys(_ browser: Browser, server: ServerProcess, console: URL) async throws {
        try await browser.open(console.appendingPathComponent("keys"))
        try await browser.type("phones", into: "#key-name")
        try await browser.click("form[action='/console/keys'] button")
        let secret = try await browser.value(of: "#secret")
        #expect(secret.hasPrefix("depot_"))
        try await Self.screenshot(browser, "keys")
        let keys = try await Command.depot(["keys", "list", "--json"], environment: server.environment).decode(AccessKeyList.self).keys
        let phones = try #require(keys.first { $0.name == "phones" })
        try await browser.click("a[href='/console/keys/\(phones.id)/revoke']")
        try await browser.click("form[action='/console/keys/\(phones.id)/revoke'] button")
        let revoked = try await Command.depot(["keys", "list", "--json"], environment: server.environment).decode(AccessKeyList.self).keys
        #expect(revoked.first { $0.id == phones.id }?.revokedAt != nil)
    }
}
