import HTTPTypes
import NIOCore
import Testing

@testable import ModelDepotServer

/// A request's device fields read the same from the router's `HTTPFields` and from the bytes the
/// fast path keeps, as strings and as bytes.
@Suite struct DeviceFieldsTests {
    static let head =
        "GET /v1/models/flowers/manifest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k1\r\nIf-None-Match: W/\"b\", \"a\"\r\n"
        + "Depot-Exposure: 20450.ab12.mac\r\nDepot-Country:\r\n\r\n"

    func fastPathFields(_ text: String) throws -> FastPathFields {
        // Bytes before the reader index: the values are found from it.
        var buffer = ByteBuffer(string: "ignored" + text)
        buffer.moveReaderIndex(forwardBy: 7)
        guard case .request(let request, _) = FastPathRequestHead.parse(buffer) else { throw Unparsed() }
        return request.fields
    }

    struct Unparsed: Error {}

    @Test func bothFormsReadTheSameValuesAsStringsAndAsBytes() throws {
        let parsed = try fastPathFields(Self.head)
        let router: HTTPFields = [
            .authorization: "Bearer k1", .ifNoneMatch: "W/\"b\", \"a\"", .depotExposure: "20450.ab12.mac", .depotCountry: "",
        ]
        for field in DeviceField.allCases {
            #expect(parsed[device: field] == router[device: field], "\(field)")
            let bytes = parsed.withValue(field) { $0.map { Array($0) } }
            #expect(bytes == router.withValue(field) { $0.map { Array($0) } }, "\(field)")
            #expect(bytes == parsed[device: field].map { Array($0.utf8) }, "\(field)")
        }
        #expect(parsed[device: .country] == "", "an empty value is sent, not missing")
        #expect(parsed[device: .range] == nil)
    }

    /// The handler answers, consumes the request and receives more while the fields are read:
    /// what they read does not change.
    @Test func theFieldsKeepTheirValuesWhileTheBytesReceivedChange() throws {
        var received = ByteBuffer(string: Self.head)
        guard case .request(let request, let length) = FastPathRequestHead.parse(received) else { throw Unparsed() }
        let values = DeviceField.allCases.map { request.fields[device: $0] }
        let bytes = DeviceField.allCases.map { field in request.fields.withValue(field) { $0.map { Array($0) } } }
        received.moveReaderIndex(forwardBy: length)
        received.writeString("GET / HTTP/1.1\r\nHost: y\r\nAuthorization: Bearer other\r\n\r\n")
        received.discardReadBytes()
        #expect(DeviceField.allCases.map { request.fields[device: $0] } == values)
        #expect(DeviceField.allCases.map { field in request.fields.withValue(field) { $0.map { Array($0) } } } == bytes)
        received.clear()
        #expect(request.fields[device: .authorization] == "Bearer k1")
    }

    @Test func fieldsSetFromStringsEqualParsedOnes() throws {
        var set = FastPathFields()
        let first = set.set(.authorization, "Bearer k1"), again = set.set(.authorization, "Bearer k2")
        #expect(first && !again, "a field is set once")
        let tag = set.set(.ifNoneMatch, "W/\"b\", \"a\""), exposure = set.set(.exposure, "20450.ab12.mac")
        #expect(tag && exposure)
        #expect(set != (try fastPathFields(Self.head)), "the country is missing")
        let country = set.set(.country, "")
        #expect(country)
        #expect(set == (try fastPathFields(Self.head)))
        #expect(set[device: .authorization] == "Bearer k1")
    }

    @Test func everyFieldHasALaneAndAValueBeyondWhatASpanHoldsIsNotSet() {
        #expect(DeviceField.allCases.count <= SIMD16<UInt32>.scalarCount, "FastPathFields.spans needs more lanes")
        #expect(FastPathRequestHead.maxLength < 0xFFFF, "a span's start and count take 16 bits each")
        var fields = FastPathFields()
        let set = [
            fields.set(.platform, start: 0xFFFF, count: 1), fields.set(.platform, start: 0, count: 0x10000),
            fields.set(.platform, start: -1, count: 1),
        ]
        #expect(set == [false, false, false])
        #expect(fields[device: .platform] == nil)
    }

    /// `If-None-Match` as devices send it (the tag itself) is compared on its bytes; a list, a
    /// weak tag or `*` is read as the RFC says, from either form of the fields.
    @Test(
        arguments: [
            ("\"a\"", true), ("W/\"a\"", true), ("\"b\", \"a\"", true), ("*", true), (" * ", true), ("\"b\"", false), ("\"a", false),
            ("", false), (nil, false),
        ] as [(String?, Bool)])
    func ifNoneMatchReadsTheFieldsAsTheHeader(_ header: String?, _ matches: Bool) throws {
        var router = HTTPFields()
        var fast = FastPathFields()
        if let header {
            router[.ifNoneMatch] = header
            _ = fast.set(.ifNoneMatch, header)
        }
        #expect(EntityTag.ifNoneMatch(header, matches: "\"a\"") == matches)
        #expect(EntityTag.ifNoneMatch(in: router, matches: "\"a\"") == matches)
        #expect(EntityTag.ifNoneMatch(in: fast, matches: "\"a\"") == matches)
    }
}
