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
// The fields Not Diamond's SDKs add are accepted with their meaning there: metric
// ("accuracy", the only one), timeout (seconds; past it the request's default answers
// alone with score_source "default", or without one the selection fails with
// [ErrTimeout]), default (one of the candidates, or its index; when the tools or
// context_length filters removed it, the remaining candidate with the best prior answers
// in its place, score_source "default_replaced"), response_model (accepted,
// not used), and per candidate input_price and output_price (their mean is the price when
// price is absent), context_length (a candidate whose window is below the conversation's
// [EstimateTokens], tool definitions included, is skipped) and is_custom (never matched
// by name to a measured model, and a preference's feedback on it is counted apart from the
// public model of the same name).
//
// # Ranking
//
// The conversation is rendered in one fixed way (see [Conversation]): "<role>: <content>"
// per message joined by newlines; the last user turn weighs most (0.7 by default) when
// features or router estimates are mixed.
//
// Without a preference_id, the learned default router ranks ([DefaultRouter], a
// [LearnedRouter]). It ships inside the binary (routing/defaultrouter, 5.8 MiB, no
// download) and was trained by routing/internal/buildrouter, deterministically, from public
// per-prompt evaluation data: llmrouter9 (9 open models), ZeroEval (maths and code, 50
// models incl. GPT-4o, o1-mini, Claude 3.5 Sonnet, Gemini 1.5) and MMLU-Pro (17 models),
// about 17,500 prompts; 46 models measured on at least 1,500 prompts are its classes
// ([LearnedRouter.Models]). For each model it estimates the probability that the model
// answers the prompt well: one logistic regression per model on n-gram TF-IDF features
// (a model not measured on a prompt teaches nothing there), blended with a task prior —
// a softmax head recognises which of the sources' tasks (gsm8k, an MMLU-Pro subject, ...)
// the prompt resembles and contributes each model's mean score on those tasks, which
// steadies the estimates where single prompts are noisy (see inference.Example.Task) —
// and each model's estimates Platt-scaled on a validation split so that an estimate of 0.7
// comes true about 70% of the time (held-out calibration error in BENCHMARKS.md). Candidates are matched to its
// models by normalised id — provider prefixes, dates, version stamps and -latest dropped,
// so "openai/gpt-4o-2024-08-06" is gpt-4o — and score_source says "learned"; failing
// that, by their nearest measured relative (serving-variant suffixes such as -turbo or
// -instruct dropped or added), "learned_relative" with estimated_from naming it. The other
// candidates are scored by the prior of [DefaultScorer] — the candidate's "quality"
// attribute, else a built-in table of published figures ([LookupBenchmark]: MMLU-Pro, or
// for models whose vendor published only GPQA Diamond — GPT-5, Claude 4.x, Gemini 2.5, ... —
// an MMLU-Pro estimated from it by [GPQAToMMLUPro]; for a model newer than the table, its
// newest older sibling's, [LookupBenchmarkRelative]: claude-opus-4-6 gets claude-opus-4-1's),
// else 0.5, raised to a power set by the conversation's difficulty — rescaled to the
// prompt by the learned estimates of candidates that also have a table figure; their
// score_source says attribute, benchmark, benchmark_relative (estimated_from naming the
// sibling) or unknown.
//
// With a preference_id, [CustomRouter] asks the owner's trained router model (via
// [CustomModels]) for its per-model estimates (with a task prior and task experts —
// per-model heads fitted on one task's rows — when its training rows carried task labels);
// the candidates it knows are ranked by them
// (or by its softmax head, or a blend, when that ranked better on its validation split;
// see the inference package), and the others follow, ranked by the default router.
//
// # Estimates and the tradeoff
//
// Every ranked candidate carries Quality: the estimated probability, 0-1, of a good
// answer. Unlike a softmax over "which model is best", estimates do not compete: on an
// easy prompt every capable model gets a high one. With tradeoff "cost" or "latency" the
// pick is therefore a real Pareto choice: the cheapest (fastest) candidate whose estimate
// is at least the best estimate minus a tolerance, in quality points; the rule repeats on
// the rest for the following positions. Prices come from the candidates or the catalogue;
// latencies from the candidates or, when none declares one, from [Options.Latency] (the
// completions gateway's measurements of how fast each model answered lately). The
// tolerance is the request's
// tradeoff_tolerance (an extension field, 0-1), else [Options.Tolerance] when the
// operator set it, else the router's own default, else [DefaultTolerance]. A trained
// router's default is measured when it is trained: on its held-out split and the validation
// split of the fit that scored it, the largest tolerance whose mean score stays within one
// point of the no-tradeoff score; its model details show the whole frontier (mean score and
// mean price per tolerance, and the standard error of the score given up), so a user can
// see what a larger tolerance saves and costs. On a few hundred rows that loss is itself
// uncertain by about a point, so the default moves between neighbouring tolerances from one
// training run to the next; a request that needs a given price sets tradeoff_tolerance.
// The learned default router's is chosen the same way on its validation split and its
// fit's validation rows. Prices come from the request, else the catalogue;
// latencies from the request; unknown is never cheaper or faster than known.
//
// When tools are present only candidates that support tool calling remain: declared by an
// attribute (supports_tools, function_calling or supports_function_calling), else known to
// the [Catalog], else to the built-in table. When none is known to, the candidates not known
// to lack support remain (a model none of them lists); only when every candidate is known
// not to support tools is the request refused. The rule applies to the candidates whose
// context_length fits the conversation.
//
// Without tradeoff the list is the router's order.
//
// # Personalized routing from feedback
//
// A preference (Selector.CreatePreference; ids "pref_...", Not Diamond's user preferences)
// personalizes selection with feedback. Model selection with preference_id set to one ranks
// with its base router (the learned default router, or the owner's trained router named by
// its router_model_id), then corrects each candidate's estimate by what feedback taught
// about that model: Selector.Feedback takes a thumbs up or down (feedback.accuracy 1 or 0)
// on a candidate of a session, and when the session was selected under a preference it adds
// to the preference's counts for that model — N feedbacks, Y thumbs up, P the base
// estimates of those selections — in the same store transaction as the session, so
// concurrent feedback and replicas sharing a store lose nothing. The correction is
// logit((Y + k·p̄)/(N + k)) − logit(p̄) with p̄ = P/N and k = FeedbackPseudoCount, added to the
// base estimate's logit: the router's belief is a Beta prior of strength k, and comparing
// with P (what the router expected on exactly the rated prompts) keeps its per-prompt
// knowledge. Only the part of that shift beyond FeedbackBiasAllowance (0.2 logits)
// applies: feedback mostly rates the pick, and a model is picked where its estimate
// happens to be high, so its outcomes there fall a little short even when the router is
// calibrated (the winner's curse); correcting that made picks worse where the router had
// measured the models, while real misjudgments (a model no router knows, a belief from
// other kinds of prompts) are larger. A corrected candidate's score_source is its base source with
// SourceFeedbackSuffix ("learned+feedback", "unknown+feedback"); a model no router knows
// starts at its prior and moves with its feedback. Sessions under a preference keep each
// ranked candidate's base estimate and the top three tasks of the task head (TaskWeight);
// sessions stored before have neither and still load. [Selector.ReportLatency] records a
// call's speed (Not Diamond's latency report) the same way; under a preference, tradeoff
// "latency" ranks each reported model by its mean seconds per output token. A per-task correction was not kept:
// it was not evaluated (BENCHMARKS.md, "Personalized routing from feedback", has the
// figures of the per-model one).
//
// # Sessions
//
// [Selector.Select] stores a [Session] per call in store.Sessions: the chosen label, the
// ranked list, the time, the owner and, only with hash_content, SHA-256 hashes of the
// message contents (never the contents). previous_session links sessions;
// [Selector.SessionChain] walks the links. Sessions of another owner are not found.
package routing
