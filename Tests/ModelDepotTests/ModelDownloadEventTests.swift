import ModelDepot
import ModelDepotShared
import Testing

/// Events an app can switch over without breaking when a kind is added: each kind fills only its
/// own values, and reads as a line for logs.
@Suite struct ModelDownloadEventTests {
    let flowers = try! ModelName("flowers")

    @Test func eachKindCarriesOnlyItsOwnValues() {
        let downloading = ModelDownloadEvent.downloading(model: flowers, version: 2, bytes: 400, total: 992)
        #expect(downloading.kind == .downloading && downloading.version == 2 && downloading.bytes == 400 && downloading.total == 992)
        #expect(downloading.patched == nil && downloading.error == nil)
        let downloaded = ModelDownloadEvent.downloaded(model: flowers, version: 2, patched: 1, fetched: 120, saved: 872)
        #expect(downloaded.kind == .downloaded && downloaded.patched == 1 && downloaded.fetched == 120 && downloaded.saved == 872)
        #expect(downloaded.bytes == nil)
        let failed = ModelDownloadEvent.failed(model: flowers, error: DepotError(.unavailable, "offline"))
        #expect(failed.kind == .failed && failed.version == nil && failed.error?.code == .unavailable)
        #expect(ModelDownloadEvent.checking(model: flowers).version == nil)
        #expect(Set([ModelDownloadEvent.Kind.checking, .upToDate, .downloading, .downloaded, .verifying, .installed, .failed]).count == 7)
    }

    @Test func anAppSwitchesOverKindsWithADefault() {
        func label(_ event: ModelDownloadEvent) -> String {
            switch event.kind {
            case .downloading: "\(event.bytes ?? 0) of \(event.total ?? 0)"
            case .installed: "v\(event.version ?? 0)"
            default: event.kind.name
            }
        }
        #expect(label(.downloading(model: flowers, version: 1, bytes: 5, total: 9)) == "5 of 9")
        #expect(label(.installed(model: flowers, version: 3)) == "v3")
        #expect(label(.verifying(model: flowers, version: 3)) == "verifying")
        #expect(
            ModelDownloadEvent.downloading(model: flowers, version: 1, bytes: 5, total: 9).description == "downloading flowers v1 5/9 bytes"
        )
    }
}
