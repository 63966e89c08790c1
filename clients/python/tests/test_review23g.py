"""Review 23g: the SSE specification has one byte order mark (U+FEFF) beginning a stream
ignored. Taken as part of the first line it made that line's field "\\ufeffdata", an
unknown one, and the first event was lost. No test sleeps."""

import unittest

from tests.test_review23c import ChunkedStream, events

BOM = "\ufeff".encode("utf-8")


class LeadingBOMTest(unittest.TestCase):
    def test_leading_bom_ignored(self):
        for name, body, want in [
            ("data first", BOM + b"data: a\n\ndata: b\n\n", [("", "a"), ("", "b")]),
            ("event first, CR", BOM + b"event: delta\rdata: a\r\r", [("delta", "a")]),
            ("comment first", BOM + b": hi\r\n\r\ndata: a\r\n\r\n", [("", "a")]),
            ("a second BOM is kept", BOM + BOM + b"data: a\n\ndata: b\n\n", [("", "b")]),
            ("a BOM later is kept", b"data: a\n\n" + BOM + b"data: b\n\ndata: c\n\n", [("", "a"), ("", "c")]),
        ]:
            for split in ("whole", "a byte a read"):
                chunks = [body] if split == "whole" else [body[i:i + 1] for i in range(len(body))]
                with self.subTest(name, split=split):
                    self.assertEqual(events(ChunkedStream(chunks)), want)


if __name__ == "__main__":
    unittest.main()
