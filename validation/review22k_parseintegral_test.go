package validation_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/switchyard-ai/switchyard/validation"
)

// ParseIntegral reads an integral JSON number in any notation exactly, from its digits.
func TestReview22kParseIntegral(t *testing.T) {
	for num, want := range map[string]int64{
		"0": 0, "-0": 0, "-0.0": 0, "0e-99999999999999999999": 0, "20": 20, "20.0": 20, "2e1": 20, "2E+1": 20,
		"200e-1": 20, "0.2e2": 20, "-1.5e1": -15, "9007199254740993.0": 9007199254740993,
		"9223372036854775807.0": 9223372036854775807, "-9223372036854775808": -9223372036854775808,
		"1000000000e-9": 1,
	} {
		if n, err := validation.ParseIntegral(num, 64); err != nil || n != want {
			t.Errorf("%s: %d, %v; want %d", num, n, err, want)
		}
	}
	notInteger := []string{"0.5", "25e-1", "1e-400", "1.0000000000000000001", "9007199254740993.5", "1e-99999999999999999999"}
	outOfRange := []string{"1e400", "9223372036854775808", "-9223372036854775809.0", "1e99999999999999999999"}
	notNumber := []string{"", "-", "01", "1.", ".5", "1e", "1e+", "0x10", "+1"}
	for want, nums := range map[error][]string{validation.ErrNotInteger: notInteger, strconv.ErrRange: outOfRange, strconv.ErrSyntax: notNumber} {
		for _, num := range nums {
			if n, err := validation.ParseIntegral(num, 64); !errors.Is(err, want) {
				t.Errorf("%q: %d, %v; want %v", num, n, err, want)
			}
		}
	}
	if _, err := validation.ParseIntegral("2147483648.0", 32); !errors.Is(err, strconv.ErrRange) {
		t.Errorf("2147483648.0 in 32 bits: %v, want out of range", err)
	}
}
