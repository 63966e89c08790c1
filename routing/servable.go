package routing

// servable returns the request's candidates that can take it: those whose context_length
// holds the conversation with its tool definitions and, with tools, those that can call
// them. When none can, the request is invalid (naming the candidates' field).
func (s *Selector) servable(req *Request) ([]Candidate, error) {
	all, field := req.Candidates()
	// The context filter first: the tools rule chooses among the candidates that can hold
	// the conversation (one known to support tools but too small must not shut out one that
	// fits and is not known to lack support).
	cands, err := fitContext(all, req.Messages, req.Tools, field)
	if err != nil {
		return nil, err
	}
	if len(req.Tools) > 0 {
		// Those known to support tools; without any, those not known to lack support (a
		// self-hosted or new model the catalogue does not list).
		var yes, unknown []Candidate
		for _, c := range cands {
			switch supported, known := supportsTools(c, s.cat); {
			case supported:
				yes = append(yes, c)
			case !known:
				unknown = append(unknown, c)
			}
		}
		switch {
		case len(yes) > 0:
			cands = yes
		case len(unknown) > 0:
			cands = unknown
		case len(cands) < len(all):
			return nil, invalid(field, "every candidate whose context_length fits the conversation is known not to support tool calling, which tools requires; "+
				"add one that does (or declare it with attributes.supports_tools: true)")
		default:
			return nil, invalid(field, "every candidate is known not to support tool calling, which tools requires; "+
				"add one that does (or declare it with attributes.supports_tools: true)")
		}
	}
	return cands, nil
}
