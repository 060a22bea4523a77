import HTTPTypes
import NIOCore

/// The HTTP/1.1 bytes of a ``HotAnswer``'s head (and body, when it has one in memory), as NIO's
/// encoder writes the router's answers: status line, the answer's fields, `Date` and `Server`.
enum HotAnswerEncoder {
    static func encode(_ answer: HotAnswer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 512 + (answer.body?.readableBytes ?? 0))
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(answer.status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(answer.status.reasonPhrase)
        buffer.writeStaticString("\r\n")
        for field in answer.headers {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("Date: ")
        buffer.writeString(HTTPDate.now())
        buffer.writeStaticString("\r\nServer: ModelDepot\r\n\r\n")
        if var body = answer.body { buffer.writeBuffer(&body) }
        return buffer
    }
}
