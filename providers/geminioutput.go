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

// takeOutputCall takes the call of the answer function out (see geminiOutputTool) out of
// calls: its arguments are the answer's text, the other calls stay calls (in calls' own
// array). ok is false, and calls untouched, when out is "" or was not called.
func takeOutputCall(calls []ToolCall, out string) (answer string, kept []ToolCall, ok bool) {
	if out == "" {
		return "", calls, false
	}
	i := slices.IndexFunc(calls, func(c ToolCall) bool { return c.Name == out })
	if i < 0 {
		return "", calls, false
	}
	answer = calls[i].Arguments
	return answer, slices.Delete(calls, i, i+1), true
}
