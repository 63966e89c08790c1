package validation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// DescribeJSONError is err, from decoding the JSON document b, as a person editing b needs
// it: its message, followed by the line and column it happened at when the error says
// where (a syntax or a type error).
func DescribeJSONError(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return err.Error() + " (" + LineCol(b, syn.Offset) + ")"
	case errors.As(err, &typ):
		return err.Error() + " (" + LineCol(b, typ.Offset) + ")"
	}
	return err.Error()
}

// LineCol is "line L, column C" of byte offset off in b (both 1-based).
func LineCol(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(b[:off], '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}
