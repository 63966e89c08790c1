package inference

import (
	"math/bits"
	"strings"
	"unicode"
)

// shapeWeight is how many times each shape feature is counted (its term frequency is then
// 1+ln 3): once, a feature weighs as one of a prompt's thousands of n-grams and the heads
// barely use it; on llmrouter9, three counts cut the validation log loss about twice as
// much as one.
const shapeWeight = 3

// shapeBuckets appends to buckets the hashed shape features of text (words as
// normalizeText returns them), each shapeWeight times, tagged 's'. A feature is a name and
// the bit length of a count, so each bucket spans a doubling: 9 and 15 words fall
// together, 16 starts the next.
func shapeBuckets(text string, words []string, seed, dims uint64, buckets []int32) []int32 {
	digits, letters := 0, 0
	for _, r := range text {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
		}
	}
	code := 0
	if strings.Contains(text, "```") || strings.Contains(text, "\n    ") || strings.Contains(text, "\n\t") {
		code = 1
	}
	features := [...]struct {
		name  string
		count int
	}{
		{"chars", len(text) / 16},
		{"words", len(words) / 4},
		{"lines", strings.Count(text, "\n")},
		{"digits", digits * 20 / (1 + digits + letters)}, // share of digits in twentieths
		{"dollars", strings.Count(text, "$")},
		{"parens", strings.Count(text, "(")},
		{"questions", strings.Count(text, "?")},
		{"code", code},
	}
	for _, f := range features {
		h := hashInit(seed, 's', byte(bits.Len(uint(f.count))))
		b := int32(hashFinish(hashString(h, f.name)) % dims)
		for range shapeWeight {
			buckets = append(buckets, b)
		}
	}
	return buckets
}
