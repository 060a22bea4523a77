import HTTPTypes
import NIOCore
import Testing

@testable import ModelDepotServer

/// The request heads ``FastPathHandler`` answers itself, and the ones it leaves to NIO's decoder
/// and the router: anything unusual, malformed or unfinished.
@Suite struct FastPathRequestHeadTests {
    static let plain =
        "GET /v1/models/flowers/manifest HTTP/1.1\r\nHost: depot:8080\r\nAuthorization: Bearer s3cret\r\nIf-None-Match:  \"abc\" \t\r\n\r\n"

    func parse(_ text: String) -> FastPathRequestHead {
        FastPathRequestHead.parse(ByteBuffer(string: text))
    }

    @Test func aPlainGetIsTakenWithItsFieldsAndLength() throws {
        guard case .request(let request, let length) = parse(Self.plain + "GET /next HTTP/1.1\r\n") else {
            Issue.record("not taken: \(parse(Self.plain))")
            return
        }
        #expect(length == Self.plain.utf8.count)
        #expect(request.path == "/v1/models/flowers/manifest")
        #expect(request.fields[device: .authorization] == "Bearer s3cret")
        #expect(request.fields[device: .ifNoneMatch] == "\"abc\"")
        #expect(DeviceField.allCases.filter { request.fields[device: $0] != nil } == [.authorization, .ifNoneMatch])
    }

    /// The model a manifest target names, read on its bytes; any other target is not a manifest's.
    @Test func aManifestTargetNamesItsModel() {
        let targets: [(String, String?)] = [
            ("/v1/models/flowers/manifest", "flowers"), ("/v1/models/flowers/manifest?x=1/manifest", "flowers"),
            ("/v1/models/a/manifest", "a"), ("/v1/models/Bad%20Name/manifest", "Bad%20Name"),
            ("/v1/models//manifest", nil), ("/v1/models/manifest", nil), ("/v1/models/a/b/manifest", nil),
            ("/v1/models/flowers/manifests", nil), ("/v1/models/flowers/manifest/", nil), ("/v2/models/flowers/manifest", nil),
            ("/v1/models/flowers", nil), ("/v1/blobs/sha256/ab", nil), ("", nil), ("?", nil),
            ("/v1/models/flöwers/manifest", "flöwers"),
        ]
        for (target, model) in targets {
            #expect(FastPaths.manifestModel(in: target) == model, "\(target)")
        }
    }

    @Test func onlyTheFieldsTheResolversReadAreKept() throws {
        let head =
            "GET /v1/blobs/sha256/ab HTTP/1.1\r\nUser-Agent: curl/8\r\nHost: x\r\nDEPOT-platform: ios\r\nAccept: */*\r\n"
            + "range: bytes=0-9\r\nX-Custom: ignored\r\nDepot-Arm: rule-1/b\r\nDepot-Country: de\r\n\r\n"
        guard case .request(let request, let length) = parse(head) else {
            Issue.record("not taken")
            return
        }
        #expect(length == head.utf8.count)
        #expect(
            DeviceField.allCases.filter { request.fields[device: $0] != nil } == [.range, .platform, .country], "Depot-Arm is not read")
        #expect([DeviceField.platform, .range, .country].map { request.fields[device: $0] } == ["ios", "bytes=0-9", "de"])
        // A field that is dropped is still checked: a malformed one sends the request to the router.
        #expect(parse("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: caf\u{e9}\r\n\r\n") == .other)
    }

    /// Every field read here is found by its name in any case, and only by its name: a name one
    /// letter off, or one letter longer or shorter, is another field and dropped.
    @Test(arguments: DeviceField.allCases)
    func aReadFieldIsFoundByItsNameInAnyCase(_ field: DeviceField) {
        let name = field.name.canonicalName
        for spelling in [
            name, name.uppercased(), String(name.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element }),
        ] {
            guard case .request(let request, _) = parse("GET / HTTP/1.1\r\nHost: x\r\n\(spelling): v\r\n\r\n") else {
                Issue.record("\(spelling) not taken")
                continue
            }
            #expect(DeviceField.allCases.filter { request.fields[device: $0] != nil } == [field], "\(spelling)")
            #expect(request.fields[device: field] == "v")
        }
        for other in [String(name.dropLast()) + "_", String(name.dropLast()), name + "s"] {
            guard case .request(let request, _) = parse("GET / HTTP/1.1\r\nHost: x\r\n\(other): v\r\n\r\n") else {
                Issue.record("\(other) not taken")
                continue
            }
            #expect(DeviceField.allCases.allSatisfy { request.fields[device: $0] == nil }, "\(other)")
        }
    }

    @Test func theRootTargetIsTaken() {
        #expect(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n") == .request(FastPathRequest(path: "/", fields: FastPathFields()), length: 27))
    }

    @Test(arguments: [1, 10, 40, 90])
    func aHeadCutShortIsIncomplete(_ cut: Int) {
        #expect(parse(String(decoding: Self.plain.utf8.prefix(cut), as: UTF8.self)) == .incomplete)
        #expect(parse(String(Self.plain.dropLast())) == .incomplete)
    }

    @Test(arguments: [
        "GET /v1/models/flowers/manifest HTTP/1.0\r\nHost: x\r\n\r\n",
        "GET http://x/v1/models/flowers/manifest HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /caf\u{e9} HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\"\r\nif-none-match: \"b\"\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nTRANSFER-ENCODING: chunked\r\n\r\n",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: 3 3\r\n\r\nabc",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "POST /v1/models/flowers/versions HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n",
        "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n",
        "POST /v1/models/flowers/events HTTP/1.0\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        "POST /v1/models/flowers/events HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        "P(ST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        "PROPFINDPROPFINDPROPFIND / HTTP/1.1\r\nHost: x\r\n\r\n",
        " / HTTP/1.1\r\nHost: x\r\n\r\n",
        "Gifest HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET  HTTP/1.1\r\nHost: x\r\n\r\n",
        " HTTP/1.1\r\nHost: x\r\n\r\n",
        "HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST * HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nTE: trailers\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nKeep-Alive: timeout=5\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n: empty name\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX(A): b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: caf\u{e9}\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: b\rc\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\n",
        "GET / HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n",
    ])
    func anythingElseTakesTheConnectionToTheRouter(_ text: String) {
        #expect(parse(text) == .other, "\(text.debugDescription)")
    }

    /// A field name is a token: of the 128 ASCII bytes, one in a name is taken exactly when it is
    /// one of RFC 9110's `tchar`s (a colon, CR and LF end the name or the line instead).
    @Test func aFieldNameTakesExactlyTheTokenCharacters() {
        let tchar = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~".utf8)
        for byte in UInt8(0)...127 where ![UInt8(ascii: ":"), 0x0A, 0x0D].contains(byte) {
            var head = ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\nX")
            head.writeInteger(byte)
            head.writeString("Y: z\r\n\r\n")
            #expect((FastPathRequestHead.parse(head) != .other) == tchar.contains(byte), "byte \(byte)")
        }
    }

    /// Every byte at every place of a word of the eight-byte check, in a target and in a field's
    /// value: taken exactly when visible ASCII (in a value also a space or a tab).
    @Test func targetsAndValuesTakeExactlyVisibleASCII() {
        for byte in UInt8(0)...255 where byte != 0x0A && byte != 0x0D {
            for place in [1, 6, 7, 8, 13, 15, 16, 22] {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 24)
                bytes[place] = byte
                let inTarget = ByteBuffer(bytes: Array("GET /".utf8) + bytes + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                #expect((FastPathRequestHead.parse(inTarget) != .other) == (0x21...0x7E).contains(byte), "byte \(byte) at \(place)")
                let inValue = ByteBuffer(bytes: Array("GET / HTTP/1.1\r\nHost: x\r\nX-A: ".utf8) + bytes + Array("\r\n\r\n".utf8))
                #expect(
                    (FastPathRequestHead.parse(inValue) != .other) == ((0x20...0x7E).contains(byte) || byte == 0x09),
                    "byte \(byte) at \(place)")
            }
        }
    }

    /// A `POST` with a small body (an outcome batch) is read here with its fields: the lengths are
    /// the head's and, with the body, the request's.
    @Test func aPostWithASmallBodyIsReadWithItsLengths() {
        let post =
            "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer k\r\ncontent-length:  5 \r\n\r\n"
        var fields = FastPathFields()
        _ = fields.set(.authorization, "Bearer k")
        let expected = FastPathRequestHead.posted(
            FastPathRequest(path: "/v1/models/flowers/events", fields: fields), head: post.utf8.count,
            length: post.utf8.count + 5)
        #expect(parse(post + "{\"a\":GET / HTTP/1.1\r\n") == expected, "the body's length, not what follows")
        #expect(parse(post) == expected, "known before the body arrives")
        #expect(parse(String(post.dropLast(2))) == .incomplete)
        let bodiless = "POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\n\r\n"
        #expect(parse(bodiless) == .routed(length: bodiless.utf8.count), "without Content-Length: the router's")
    }

    /// Requests the router answers alone, the connection coming back here after: their length is
    /// the head's and the body's.
    @Test func requestsWithNoBodyOrASmallOneGoToTheRouterAloneWithTheirLength() {
        let head = "HEAD /v1/blobs/sha256/ab HTTP/1.1\r\nHost: x\r\n\r\n"
        #expect(parse(head) == .routed(length: head.utf8.count))
        let delete = "DELETE /v1/admin/models/flowers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n"
        #expect(parse(delete) == .routed(length: delete.utf8.count))
        let get = "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n"
        #expect(parse(get + "abc") == .routed(length: get.utf8.count + 3), "a GET with a body is the router's")
        let largest = "PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n"
        #expect(parse(largest) == .routed(length: largest.utf8.count + FastPathRequestHead.maxRoutedBody))
    }

    @Test func aHeadLongerThanTheLimitGoesToTheRouter() {
        let long = "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + String(repeating: "a", count: FastPathRequestHead.maxLength)
        #expect(parse(long) == .other)
        #expect(parse(long + "\r\n\r\n") == .other)
        #expect(parse(String(decoding: long.utf8.prefix(FastPathRequestHead.maxLength - 1), as: UTF8.self)) == .incomplete)
    }
}
