"""Review 23c: server-sent events may end their lines with CRLF, LF or CR alone (the SSE
specification allows all three). The client splits at each, and a CRLF whose CR and LF
arrive in different reads is one line ending, not two (an empty line would end an event
early). No test sleeps."""

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import switchyard

CHUNK_A = json.dumps({"type": "text", "text": "Hel"})
CHUNK_B = json.dumps({"type": "text", "text": "lo"})
FINAL = json.dumps({"type": "text", "text": "", "final": True, "model": "openai/gpt-4o",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}})


class ReadPast(Exception):
    """A read after the chunks a test gave: the client waited for more than it needed."""


class ChunkedStream:
    """An event-stream answer whose read1 returns the given chunks one at a time, then
    raises ReadPast (or returns b"" when ``end``)."""

    def __init__(self, chunks, end=True):
        self.chunks = list(chunks)
        self.end = end
        self.reads = 0
        self.headers = {"Content-Type": "text/event-stream"}

    def read1(self, n=-1):
        if self.reads >= len(self.chunks):
            if self.end:
                return b""
            raise ReadPast()
        chunk = self.chunks[self.reads]
        assert len(chunk) <= n, "chunk larger than the read"
        self.reads += 1
        return chunk

    def read(self, *a):
        raise AssertionError("a stream is read with read1, as it arrives")

    def close(self):
        pass


def events(resp):
    """The events the client makes of resp, as (event, data) pairs."""
    with mock.patch("urllib.request.urlopen", lambda req, timeout=None: resp):
        c = switchyard.Client("http://127.0.0.1:9", "k")
        return [(e["event"], e["data"]) for e in c.stream_events("/api/v1/completions", {"stream": True})]


WANT = [("delta", '{"a":\n1}'), ("", "x"), ("", ""), ("", "cut")]


class LineEndingsTest(unittest.TestCase):
    BODIES = {
        "LF": ': hi\n\nevent: delta\ndata: {"a":\ndata: 1}\n\n\n\ndata:x\n\ndata\n\ndata: cut',
        "CRLF": ': hi\r\n\r\nevent: delta\r\ndata: {"a":\r\ndata: 1}\r\n\r\n\r\n\r\ndata:x\r\n\r\ndata\r\n\r\ndata: cut',
        "CR": ': hi\r\revent: delta\rdata: {"a":\rdata: 1}\r\r\r\rdata:x\r\rdata\r\rdata: cut',
        "mixed": ': hi\r\n\revent: delta\ndata: {"a":\rdata: 1}\r\n\n\r\r\ndata:x\r\r\ndata\n\r\ndata: cut',
    }

    def test_every_ending_whole_and_byte_by_byte(self):
        for name, body in self.BODIES.items():
            raw = body.encode()
            self.assertEqual(events(ChunkedStream([raw])), WANT, name)
            # One byte a read: every CRLF's CR and LF arrive in different reads.
            self.assertEqual(events(ChunkedStream([raw[i:i + 1] for i in range(len(raw))])), WANT, name + " by byte")

    def test_cr_then_crlf_is_two_endings(self):
        # A CR, then a CRLF: a blank line between the data lines (two events); an LF then
        # a CR is two endings too.
        self.assertEqual(events(ChunkedStream([b'data: a\r\r\ndata: b\r\n\r\n'])), [("", "a"), ("", "b")])
        self.assertEqual(events(ChunkedStream([b'data: a\n\rdata: b\r\n'])), [("", "a"), ("", "b")])

    def test_crlf_across_reads(self):
        # The CR of each CRLF ends a read and its LF begins the next: still one event with
        # two data lines; and an event ended by CRs alone is given from the bytes read,
        # without reading further (ReadPast after the last chunk).
        resp = ChunkedStream([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\nevent: e\rdata: c\r\r"], end=False)
        with mock.patch("urllib.request.urlopen", lambda req, timeout=None: resp):
            it = switchyard.Client("http://127.0.0.1:9", "k").stream_events("/api/v1/completions", {})
            self.assertEqual(next(it), {"event": "", "data": "a\nb"})
            self.assertEqual(next(it), {"event": "e", "data": "c"})
            with self.assertRaises(ReadPast):
                next(it)

    def test_utf8_split_across_reads(self):
        # A character whose bytes arrive in different reads is decoded whole.
        raw = 'data: café ☕\r\r'.encode()
        self.assertEqual(events(ChunkedStream([raw[i:i + 1] for i in range(len(raw))])), [("", "café ☕")])


class CRStreamHandler(BaseHTTPRequestHandler):
    """Answers a completion with a stream whose lines end with CR alone, written in pieces
    that cut its CRLFs in two."""

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for piece in [": keep-alive\r\r", "data: " + CHUNK_A + "\r", "\r", "data: " + CHUNK_B + "\r\n",
                      "\r", "\n", "data: " + FINAL + "\r\r", "data: [DONE]\r\r"]:
            self.wfile.write(piece.encode())
            self.wfile.flush()


class CRStreamTest(unittest.TestCase):
    """Over a real connection (http.client's response, read with read1), a completion
    streamed with CR line endings gives every chunk, the final response and its end."""

    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), CRStreamHandler)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def test_cr_stream(self):
        c = switchyard.Client("http://127.0.0.1:%d" % self.httpd.server_port, "k")
        st = switchyard.complete([{"role": "user", "content": "hi"}], "openai/gpt-4o", stream=True, client=c)
        self.assertEqual([ch["text"] for ch in st], ["Hel", "lo"])
        self.assertEqual((st.text, st.final["message"]["content"][0]["text"]), ("Hello", "Hello"))


if __name__ == "__main__":
    unittest.main()
