package providers

import (
	"fmt"
	"strings"
	"testing"
)

// TestReview27hAnswerChoicesBounded: an answer that names ever new choice and tool-call
// indices (a hostile or broken upstream) grows the meter's memory only to its bound, and
// its empty entries do not each add a tool call's overhead to the estimate.
func TestReview27hAnswerChoicesBounded(t *testing.T) {
	const model = "openai/gpt-4o-mini"
	m, err := NewUsageMeter(FormatOpenAI, "text/event-stream")
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for line := 0; line < 20; line++ {
		var b strings.Builder
		b.WriteString(`data: {"choices":[`)
		for i := 0; i < 2000; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"index":%d,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":""}}]}}`, next, next)
			next++
		}
		b.WriteString("]}\n\n")
		m.Write([]byte(b.String()))
	}
	entries := len(m.answer.choices)
	for _, c := range m.answer.choices {
		entries += len(c.calls)
	}
	if entries > maxAnswerEntries {
		t.Errorf("%d choices and tool calls kept for %d named, want at most %d", entries, 2*next, maxAnswerEntries)
	}
	if got := m.AnswerTokens(model); got > 4*maxAnswerEntries {
		t.Errorf("%d completion tokens estimated for an answer without text", got)
	}
}
