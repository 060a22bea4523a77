import HTTPTypes
import ModelDepotShared
import NIOCore

/// The HTTP/1.1 bytes of a ``FastPathAnswer``'s head (and body, when it has one in memory), as NIO's
/// encoder writes the router's answers: status line, the answer's fields, `Date` and `Server`.
enum FastPathAnswerEncoder {
    /// Encodes `answer` into `buffer`, emptied first: a buffer no write holds any more (the last
    /// answer's, once sent) is reused without an allocation.
    static func encode(_ answer: FastPathAnswer, into buffer: inout ByteBuffer) {
        let head = answer.head ?? Self.head(status: answer.status, headers: answer.headers)
        buffer.clear(minimumCapacity: head.readableBytes + 128 + (answer.body?.readableBytes ?? 0))
        buffer.writeImmutableBuffer(head)
        if let exposure = answer.exposure {
            buffer.writeString(DepotHeader.exposure)
            buffer.writeStaticString(": ")
            buffer.writeString(exposure)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("Date: ")
        buffer.writeString(HTTPDate.now())
        buffer.writeStaticString("\r\nServer: ModelDepot\r\n\r\n")
        if let body = answer.body { buffer.writeImmutableBuffer(body) }
    }

    /// The status line and the fields, each line ending in CRLF.
    static func head(status: HTTPResponse.Status, headers: HTTPFields) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256)
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(status.reasonPhrase)
        buffer.writeStaticString("\r\n")
        for field in headers {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        return buffer
    }
}
