package providers

import "bytes"

// EventSkipper is implemented by streams that skip an undecodable event when it cannot
// have held any part of the answer (the OpenAI, Anthropic and Gemini adapters' streams).
type EventSkipper interface {
	// SkippedEvents is how many events the stream skipped so far.
	SkippedEvents() int
}

// maxSkippedEvents is how many undecodable events one stream may skip; one more fails it.
const maxSkippedEvents = 3

// answerMembers are the member names (lower case) an event that carries text, a tool call,
// an error, the finish reason or usage has in the OpenAI, Anthropic or Gemini wire format;
// an undecodable event that mentions none of them held none.
var answerMembers = [][]byte{[]byte(`"content"`), []byte(`"text"`), []byte(`"delta"`), []byte(`"tool_calls"`),
	[]byte(`"arguments"`), []byte(`"refusal"`), []byte(`"error"`), []byte(`"finish_reason"`), []byte(`"usage"`),
	// Anthropic
	[]byte(`"content_block"`), []byte(`"stop_reason"`), []byte(`"partial_json"`), []byte(`"input"`),
	// Gemini
	[]byte(`"candidates"`), []byte(`"parts"`), []byte(`"finishreason"`), []byte(`"usagemetadata"`),
	[]byte(`"promptfeedback"`), []byte(`"functioncall"`)}

// skip reports whether the undecodable event data may be skipped, and counts it: only when
// it cannot have held text, a tool call, an error, the finish reason or usage, and the
// stream skipped fewer than maxSkippedEvents before. Anything else fails the attempt,
// since a lost piece of the answer would go unnoticed.
func (s *streamState) skip(data []byte) bool {
	if s.skipped >= maxSkippedEvents {
		return false
	}
	lower := bytes.ToLower(data) // member names match without regard to case
	for _, m := range answerMembers {
		if bytes.Contains(lower, m) {
			return false
		}
	}
	s.skipped++
	return true
}

// SkippedEvents implements EventSkipper.
func (s *streamState) SkippedEvents() int { return s.skipped }
