/// A Python function for the tests' raw-socket clients: `read_answers(s, count)` reads `count`
/// HTTP/1.1 answers (each with `Content-Length`) from socket `s` and returns their statuses and
/// bodies; bytes read past them are kept for the next call. Prepend it to a script.
enum PythonAnswerReader {
    static let function = """
        import sys
        _received = b""
        def read_answers(s, count):
            global _received
            answers = []
            while len(answers) < count:
                while b"\\r\\n\\r\\n" not in _received:
                    chunk = s.recv(65536)
                    if not chunk: sys.exit("closed after %s" % [status for status, _ in answers])
                    _received += chunk
                head, _received = _received.split(b"\\r\\n\\r\\n", 1)
                lines = head.decode().split("\\r\\n")
                length = next(int(l.split(":")[1]) for l in lines if l.lower().startswith("content-length:"))
                while len(_received) < length:
                    _received += s.recv(65536)
                answers.append((lines[0].split(" ")[1], _received[:length]))
                _received = _received[length:]
            return answers

        """
}
