package providers

import "slices"

// geminiOutputTool is the name of the function whose arguments carry req's structured
// output when Gemini cannot be asked for it as a response schema: a json_schema beside
// functions (Gemini refuses responseMimeType application/json with functionDeclarations);
// "" otherwise. Named as Claude's output tool (outputToolName).
func geminiOutputTool(req *Request) string {
	f := req.ResponseFormat
	if !f.JSON() || f.Type != ResponseJSONSchema || len(f.Schema) == 0 || len(req.Tools) == 0 || req.Search {
		return ""
	}
	return outputToolName(req, "json_answer")
}

// takeOutputCall takes the calls of the answer function out (see geminiOutputTool) out of
// calls: the first one's arguments are the answer's text (a model calling it again in
// parallel repeats it: no caller declared that function, so none of them stays a call),
// the other calls stay calls (in calls' own array). A thought signature only an answer
// call carried (Gemini signs the first call of a turn) goes to the first call kept, which
// Gemini 3 wants it on when the turn comes back. ok is false, and calls untouched, when
// out is "" or was not called.
func takeOutputCall(calls []ToolCall, out string) (answer string, kept []ToolCall, ok bool) {
	if out == "" {
		return "", calls, false
	}
	i := slices.IndexFunc(calls, func(c ToolCall) bool { return c.Name == out })
	if i < 0 {
		return "", calls, false
	}
	answer = calls[i].Arguments
	signature := ""
	for _, c := range calls {
		if c.Name == out && signature == "" {
			signature = c.ThoughtSignature
		}
	}
	kept = slices.DeleteFunc(calls, func(c ToolCall) bool { return c.Name == out })
	if len(kept) > 0 && kept[0].ThoughtSignature == "" {
		kept[0].ThoughtSignature = signature
	}
	return answer, kept, true
}
