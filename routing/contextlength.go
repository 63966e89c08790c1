package routing

// bytesPerToken is how many bytes of text a token covers at least on average for the
// tokenizers in use (about 4 for English prose, 3 for code): dividing by it overestimates
// no conversation's size by much, so a candidate is skipped only when its window is
// clearly too small.
const bytesPerToken = 4

// perMessageTokens is the framing a chat format adds per message.
const perMessageTokens = 4

// EstimateTokens is a quick, tokenizer-free estimate of a conversation's size in tokens,
// as context_length is compared with.
func EstimateTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)/bytesPerToken + perMessageTokens
	}
	return n
}

// fitContext drops the candidates whose context_length is below the conversation's
// estimated size; when that drops them all the request is invalid, naming field.
func fitContext(cands []Candidate, msgs []Message, field string) ([]Candidate, error) {
	need := -1
	var out []Candidate
	for _, c := range cands {
		if c.ContextLength != nil {
			if need < 0 {
				need = EstimateTokens(msgs)
			}
			if *c.ContextLength < need {
				continue
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, invalid(field, "every candidate's context_length is below the conversation's estimated %d tokens", need)
	}
	if len(out) == len(cands) {
		return cands, nil
	}
	return out, nil
}
