// Package routing picks the LLM to call for a conversation from a list of candidates
// (model selection, POST /api/v1/model-select).
//
// # Requests
//
// [ParseRequest] decodes the wire request. Candidates are accepted as {"name": ...},
// {"provider": ..., "model": ...} or plain "provider/model" strings, under llm_providers or
// its alias models, and normalised to [Candidate]; the response writes the chosen label
// back in the shape the caller used. [Request.Validate] enforces the spec's rules; every
// violation is a [*ValidationError] naming the field (matching [ErrInvalid], HTTP 400).
// Unknown preference_id or previous_session values are [*NotFoundError] (matching
// [ErrNotFound], HTTP 404).
//
// # Ranking
//
// The conversation is rendered in one fixed way (see [Conversation]): "<role>: <content>"
// per message joined by newlines; the last user turn weighs most (0.7 by default) when
// features or router probabilities are mixed.
//
// Without a preference_id, [DefaultScorer] ranks candidates by a quality prior — the
// candidate's "quality" attribute, else a built-in table of published MMLU-Pro figures
// whose sources are named in prior.go ([LookupBenchmark]), else an unknown prior of 0.5 —
// raised to a power set by the conversation's difficulty (length, code, math, tools,
// turns; see [Features.Difficulty]). The power keeps the order of the priors and only
// widens or narrows the gaps, which is what the tradeoff reads; "quality_code" and
// "quality_math" attributes can change the order for code or math conversations. This is
// a heuristic prior, not a learned model: for per-prompt routing train a custom router.
//
// With a preference_id, [CustomRouter] asks the owner's trained router model (via
// [CustomModels]) for probabilities over the models it was trained on; the candidates it
// knows are ranked by them, and the others follow, ranked by the default scorer.
//
// When tools are present only candidates that support tool calling remain: declared by an
// attribute (supports_tools, function_calling or supports_function_calling), else known to
// the [Catalog], else to the built-in table.
//
// With tradeoff "cost" or "latency" the ranked list is reordered by a Pareto rule: first
// comes the cheapest (fastest) candidate whose score is at least best·(1 − tolerance), with
// the relative tolerance [Options.Tolerance] (default 0.05) and best the top score among
// the candidates of the best tier; the rule repeats on the rest. Prices come from the
// request, else the catalogue; latencies from the request; unknown is never cheaper or
// faster than known. Without tradeoff the list is the router's order.
//
// # Sessions
//
// [Selector.Select] stores a [Session] per call in store.Sessions: the chosen label, the
// ranked list, the time, the owner and, only with hash_content, SHA-256 hashes of the
// message contents (never the contents). previous_session links sessions;
// [Selector.SessionChain] walks the links. Sessions of another owner are not found.
package routing
