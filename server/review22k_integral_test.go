package server

import (
	"strings"
	"testing"
)

// An integer field takes an integral number in any notation (09b5d39), and the value taken
// is the number written: read through float64, 9007199254740993.0 became
// 9007199254740992, a fraction past float64's exact integers (9007199254740993.5) or one
// too small for it (1e-400, 1.0000000000000000001) was taken as an integer, and
// 9223372036854775807.0, in int64's range, was refused as out of it.
func TestReview22kIntegralNumbersAreExact(t *testing.T) {
	type req struct {
		A int64 `json:"a"`
		B int32 `json:"b"`
		N *int  `json:"n"`
	}
	for _, c := range []struct {
		body string
		a    int64
		b    int32
		n    int
	}{
		{body: `{"a":9007199254740993.0}`, a: 9007199254740993},
		{body: `{"a":9007199254740993}`, a: 9007199254740993},
		{body: `{"a":9223372036854775807.0}`, a: 9223372036854775807},
		{body: `{"a":-9223372036854775808.0}`, a: -9223372036854775808},
		{body: `{"a":922337203685477580.7e1}`, a: 9223372036854775807},
		{body: `{"a":-0.0,"b":2147483647.0}`, b: 2147483647},
		{body: `{"n":2e1}`, n: 20},
		{body: `{"n":200E-1}`, n: 20},
		{body: `{"a":0.0e-999999999999999999999}`},
	} {
		var r req
		if err := decodeExact([]byte(c.body), &r, 422); err != nil || r.A != c.a || r.B != c.b || (c.n != 0) != (r.N != nil) || r.N != nil && *r.N != c.n {
			t.Errorf("%s: %+v, %v; want a=%d b=%d n=%d", c.body, r, err, c.a, c.b, c.n)
		}
	}
	for body, want := range map[string]string{
		`{"a":9007199254740993.5}`:        `field "a" must be an integer`,
		`{"a":1.0000000000000000001}`:     `field "a" must be an integer`,
		`{"n":1e-400}`:                    `field "n" must be an integer`,
		`{"n":25e-1}`:                     `field "n" must be an integer`,
		`{"a":1e400}`:                     `field "a" is out of range`,
		`{"a":9223372036854775808.0}`:     `field "a" is out of range`,
		`{"b":2147483648.0}`:              `field "b" is out of range`,
		`{"a":1e99999999999999999999999}`: `field "a" is out of range`,
		`{"a":"1.0"}`:                     `field "a" must be an integer, got string`,
		`{"a":1.0,"c":1}`:                 `unknown field "c"`,
		`{"A":1.0}`:                       `unknown field "A"`,
	} {
		var r req
		err := decodeExact([]byte(body), &r, 422)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %+v, %v; want an error saying %s", body, r, err, want)
		}
	}
}
