package routing

import "encoding/json"

// bytesPerToken is how many bytes of text a token covers at least on average for the
// tokenizers in use (about 4 for English prose, 3 for code): dividing by it overestimates
// no conversation's size by much, so a candidate is skipped only when its window is
// clearly too small.
const bytesPerToken = 4

// perMessageTokens is the framing a chat format adds per message.
const perMessageTokens = 4

// EstimateTokens is a quick, tokenizer-free estimate of a conversation's size in tokens,
// as context_length is compared with: the messages and, when given, the tool definitions
// sent with them (their JSON, at the same bytes per token), which take room in the
// chosen model's context window too.
func EstimateTokens(msgs []Message, tools ...Tool) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)/bytesPerToken + perMessageTokens
	}
	if len(tools) > 0 {
		// A Tool holds strings and JSON-decoded parameters: marshalling cannot fail for
		// one that came off the wire; a Go caller's unmarshallable parameters count as
		// their name and description only.
		if b, err := json.Marshal(tools); err == nil {
			n += len(b) / bytesPerToken
		} else {
			for _, t := range tools {
				n += (len(t.Name) + len(t.Description)) / bytesPerToken
			}
		}
	}
	return n
}

// fitContext drops the candidates whose context_length is below the conversation's
// estimated size (messages and tool definitions); when that drops them all the request is
// invalid, naming field.
func fitContext(cands []Candidate, msgs []Message, tools []Tool, field string) ([]Candidate, error) {
	need := -1
	var out []Candidate
	for _, c := range cands {
		if c.ContextLength != nil {
			if need < 0 {
				need = EstimateTokens(msgs, tools...)
			}
			if *c.ContextLength < need {
				continue
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		what := "the conversation's"
		if len(tools) > 0 {
			what = "the conversation's and its tools'"
		}
		return nil, invalid(field, "every candidate's context_length is below %s estimated %d tokens", what, need)
	}
	if len(out) == len(cands) {
		return cands, nil
	}
	return out, nil
}
