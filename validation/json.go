package validation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// ErrNotInteger is returned by ParseIntegral for a number whose value has a fraction part.
var ErrNotInteger = errors.New("not an integer")

// ParseIntegral parses num, a JSON number token, as a signed integer of bitSize bits when
// its value is an integer, whatever its notation ("20", "20.0", "2e1", "200e-1"). It works
// on the digits, never through float64, so the value is exact: "9007199254740993.0" is
// 9007199254740993, "9007199254740993.5" and "1e-400" have a fraction part. A value with a
// fraction part is ErrNotInteger; an integer past the type's range is a *strconv.NumError
// wrapping strconv.ErrRange ("1e400"); text that is not a JSON number is a
// *strconv.NumError wrapping strconv.ErrSyntax.
func ParseIntegral(num string, bitSize int) (int64, error) {
	// Plain digits, the common case, without allocating; ParseInt would also take "+1" and
	// "01", which JSON does not.
	if d := strings.TrimPrefix(num, "-"); d != "" && d[0] >= '1' && d[0] <= '9' {
		if n, err := strconv.ParseInt(num, 10, bitSize); err == nil {
			return n, nil
		}
	}
	syntax := &strconv.NumError{Func: "ParseIntegral", Num: num, Err: strconv.ErrSyntax}
	s, neg := strings.CutPrefix(num, "-")
	mant, expText, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, expText, hasExp = strings.Cut(s, "E")
	}
	intPart, frac, hasFrac := strings.Cut(mant, ".")
	if !allDigits(intPart) || len(intPart) > 1 && intPart[0] == '0' || hasFrac && !allDigits(frac) {
		return 0, syntax
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		if hasExp && !validExponent(expText) {
			return 0, syntax
		}
		return 0, nil // zero in any notation (-0, 0.0, 0e5)
	}
	// point is where the decimal point falls in digits, after the exponent moves it.
	point := len(intPart) - (len(intPart+frac) - len(digits))
	if hasExp {
		if !validExponent(expText) {
			return 0, syntax
		}
		exp, err := strconv.Atoi(expText)
		switch {
		case err != nil && strings.HasPrefix(expText, "-"), err == nil && exp < -len(digits)-1:
			return 0, ErrNotInteger // the value is below one: a fraction
		case err != nil, exp > 1<<30: // point is bounded by len(num), far below that
			return 0, &strconv.NumError{Func: "ParseIntegral", Num: num, Err: strconv.ErrRange}
		}
		point += exp
	}
	digits = strings.TrimRight(digits, "0") // the trailing zeros are the point's to place
	if point < len(digits) {
		return 0, ErrNotInteger // a non-zero digit after the point
	}
	if point > 20 { // past any int64
		return 0, &strconv.NumError{Func: "ParseIntegral", Num: num, Err: strconv.ErrRange}
	}
	text := digits + strings.Repeat("0", point-len(digits))
	if neg {
		text = "-" + text
	}
	n, err := strconv.ParseInt(text, 10, bitSize)
	if err != nil {
		return 0, &strconv.NumError{Func: "ParseIntegral", Num: num, Err: strconv.ErrRange}
	}
	return n, nil
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validExponent reports whether s is a JSON number's exponent after its "e": an optional
// sign and digits.
func validExponent(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return allDigits(s)
}
