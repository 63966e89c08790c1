package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/validation"
)

// geminiPath reports whether a request of method on path belongs to the Gemini API
// surface — everything under /v1beta/models, and POST /v1/models/{model}:{method} for the
// methods the surface serves (never OpenAI's own /v1/models/{id}, whose fine-tuned ids
// hold colons) —, whose failures are written in Google's envelope {"error": {"code",
// "message", "status"}} and whose key may come as x-goog-api-key or ?key=.
func geminiPath(method, path string) bool {
	if path == "/v1beta/models" || strings.HasPrefix(path, "/v1beta/models/") {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/v1/models/")
	if !ok || method != http.MethodPost {
		return false
	}
	cut := strings.LastIndexByte(rest, ':')
	return cut > 0 && slices.Contains(geminiMethods, rest[cut+1:])
}

// geminiKey is the key of a request on the Gemini surface as Google's clients send it:
// the x-goog-api-key header, or the key query parameter.
func geminiKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Goog-Api-Key")); k != "" {
		return k
	}
	// Read before the route's handler (scalarQuery), so the last of repeated keys here too,
	// as LiteLLM's request.query_params.get("key") reads it.
	if vs := r.URL.Query()["key"]; len(vs) > 0 {
		return strings.TrimSpace(vs[len(vs)-1])
	}
	return ""
}

// geminiErrors are the failures the Gemini routes answer, in Google's envelope.
var geminiErrors = map[int]string{
	400: "INVALID_ARGUMENT: the message names the field (contents[i].parts[j]…)",
	403: "PERMISSION_DENIED: the key may not call the model",
	404: "NOT_FOUND: no configured provider serves the model, or the method is not generateContent, streamGenerateContent or countTokens",
	429: "RESOURCE_EXHAUSTED: the key's budget or rate is spent or every upstream was rate limited",
	502: "UNAVAILABLE: every model failed",
	503: "UNAVAILABLE: every upstream was overloaded",
}

// writeGeminiError writes ae as Google's APIs do: the status the OpenAI surfaces would
// answer (see openAIStatus; every upstream overloaded a 503) with Google's canonical status
// name.
func writeGeminiError(w http.ResponseWriter, ae *APIError, cause error) {
	status, _, _, _ := openAIStatus(w.Header(), ae, cause)
	if ae.Status == http.StatusForbidden {
		status = ae.Status // Google's PERMISSION_DENIED, not LiteLLM's 401 of a model refused
	}
	var af *completions.AllFailedError
	if errors.As(cause, &af) && af.Every(providers.KindOverloaded) {
		status = http.StatusServiceUnavailable
	}
	body := completions.GeminiErrorBody{Error: completions.GeminiErrorObject{Code: status, Message: ae.Message, Status: completions.GeminiStatus(status)}}
	if status == http.StatusTooManyRequests {
		body.Error.Details = geminiQuotaDetails(w.Header(), cause)
	}
	writeJSON(w, status, body)
}

// geminiQuotaDetails are the google.rpc details of a 429, as Gemini CLI's and the SDKs'
// quota classification reads them: a spent budget is an ErrorInfo BUDGET_EXCEEDED with a
// QuotaFailure whose quotaId names a daily-class limit — what the classifier treats as
// terminal rather than retrying for minutes (a budget does not clear by waiting); a rate
// limit is RATE_LIMIT_EXCEEDED with a RetryInfo holding the Retry-After delay, so the
// client waits that long and retries.
func geminiQuotaDetails(h http.Header, cause error) []map[string]any {
	const domain = "switchyard"
	if errors.Is(cause, completions.ErrBudgetExceeded) {
		return []map[string]any{
			{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "BUDGET_EXCEEDED", "domain": domain},
			{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []map[string]string{{
				"subject": "api_key", "quotaId": "SwitchyardKeyBudgetDaily",
				"description": "the key's budget is spent: it does not clear by retrying (raise it, or wait for its reset)"}}},
		}
	}
	details := []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED", "domain": domain}}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs >= 0 {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(secs) + "s"})
	}
	return details
}

// geminiMethods are the model methods the surface serves.
var geminiMethods = []string{"generateContent", "streamGenerateContent", "countTokens"}

// geminiRoutes registers the Gemini API surface: generateContent, streamGenerateContent
// and countTokens on /v1beta/models/{model}:{method} (and /v1/models/…), and the model
// list in Google's shape.
func (s *Server) geminiRoutes(g *completions.Gateway) {
	for _, prefix := range []string{"/v1beta/models/", "/v1/models/"} {
		s.handleGatewayAsking(Route{Method: "POST", Path: prefix + "{model...}",
			Summary: "Gemini API over the same gateway: model is {model}:generateContent, {model}:streamGenerateContent (alt=sse for server-sent events) or {model}:countTokens (Google's GenAI SDKs and Gemini CLI reach any configured model; key in x-goog-api-key, ?key= or Authorization)",
			Tags:    []string{"Completions"}, Request: completions.GeminiGenerateRequest{}, Response: completions.GeminiResponse{}, Stream: true, ScopedKeys: true,
			Query:  []QueryParam{{Name: "alt", Description: "sse: stream server-sent events (streamGenerateContent)"}, {Name: "key", Description: "the API key, as Google's clients may send it"}},
			Errors: geminiErrors},
			g, "", geminiAskedModel(prefix), func(w http.ResponseWriter, r *http.Request) error { return s.handleGemini(g, w, r) })
	}
	s.Handle(Route{Method: "GET", Path: "/v1beta/models", Summary: "The models this server can route to, in the Gemini API's list shape (name models/{id}, supportedGenerationMethods)",
		Tags: []string{"Completions"}, Response: geminiModelList{}, ScopedKeys: true,
		Query: []QueryParam{{Name: "pageSize", Description: "models per page (default 50, at most 1000: more is 1000; 0 is the default)", Type: "integer", Minimum: Bound(0)}, {Name: "pageToken", Description: "the nextPageToken of the previous page"}}},
		func(w http.ResponseWriter, r *http.Request) error { return s.listGeminiModels(g, w, r) })
	s.Handle(Route{Method: "GET", Path: "/v1beta/models/{model...}", Summary: "One model this server can route to, in the Gemini API's shape",
		Tags: []string{"Completions"}, Response: geminiModel{}, ScopedKeys: true, Errors: map[int]string{404: "NOT_FOUND: no configured provider serves the model"}},
		func(w http.ResponseWriter, r *http.Request) error {
			name := strings.TrimPrefix(r.PathValue("model"), "models/")
			id, ok := g.ResolveModel(name)
			if !ok || !g.Allows(completionsScope(r, time.Time{}), id) {
				writeJSON(w, http.StatusNotFound, completions.GeminiErrorBody{Error: completions.GeminiErrorObject{Code: http.StatusNotFound,
					Message: fmt.Sprintf("models/%s is not found: no configured provider serves it. Call ListModels to see the available models.", name), Status: "NOT_FOUND"}})
				return nil
			}
			writeJSON(w, http.StatusOK, newGeminiModel(id))
			return nil
		})
}

// geminiModel is a model in the Gemini API's shape.
type geminiModel struct {
	// Name is "models/" and the gateway's model string (or model group).
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName"`
	Description                string   `json:"description"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

// geminiModelList is the Gemini API's models.list answer.
type geminiModelList struct {
	Models        []geminiModel `json:"models"`
	NextPageToken string        `json:"nextPageToken,omitempty"`
}

// newGeminiModel is the gateway model (or model group) id in the Gemini API's shape.
func newGeminiModel(id string) geminiModel {
	desc := "Served by Switchyard through provider " + id[:max(strings.IndexByte(id, '/'), 0)]
	if !strings.Contains(id, "/") {
		desc = "A Switchyard model group"
	}
	return geminiModel{Name: "models/" + id, BaseModelID: id, Version: "001", DisplayName: id, Description: desc, SupportedGenerationMethods: geminiMethods}
}

// listGeminiModels answers GET /v1beta/models: the model groups and chat models /v1/models
// lists (a scoped key sees those it may call), a page at a time.
func (s *Server) listGeminiModels(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	size := 50
	if v := r.URL.Query().Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.respondError(w, r, Validation(http.StatusBadRequest, "pageSize: must be a non-negative whole number, got %q", v), nil)
			return nil
		}
		if n > 0 {
			size = min(n, 1000)
		}
	}
	from := 0
	if v := r.URL.Query().Get("pageToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.respondError(w, r, Validation(http.StatusBadRequest, "pageToken: not a token this server gave, got %q", v), nil)
			return nil
		}
		from = n
	}
	scope := completionsScope(r, time.Time{})
	list := geminiModelList{Models: []geminiModel{}}
	i := 0
	for _, m := range g.ListedModels() {
		if !g.Allows(scope, m) || g.HasEmbeddingModel(m) || g.HasRerankModel(m) {
			continue // the chat models, as before
		}
		if i >= from && len(list.Models) < size {
			list.Models = append(list.Models, newGeminiModel(m))
		} else if len(list.Models) == size && list.NextPageToken == "" {
			list.NextPageToken = strconv.Itoa(i)
		}
		i++
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// handleGemini serves POST /v1beta/models/{model}:{method}: generateContent,
// streamGenerateContent and countTokens.
func (s *Server) handleGemini(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	rest := r.PathValue("model") // {model}:{method}
	cut := strings.LastIndexByte(rest, ':')
	if cut < 0 {
		s.respondError(w, r, NotFound("no route for POST %s: name a method, as models/{model}:generateContent", r.URL.Path), nil)
		return nil
	}
	model, method := strings.TrimPrefix(rest[:cut], "models/"), rest[cut+1:]
	switch method {
	case "generateContent", "streamGenerateContent":
		return s.handleGenerateContent(g, w, r, model, method == "streamGenerateContent")
	case "countTokens":
		return s.handleGeminiCountTokens(g, w, r, model)
	}
	s.respondError(w, r, NotFound("no route for POST %s: method %q is not one of %s", r.URL.Path, method, strings.Join(geminiMethods, ", ")), nil)
	return nil
}

// handleGenerateContent translates a GenerateContentRequest to a chat request, answers it
// through the gateway and translates the answer back (whole, or streamed chunks).
func (s *Server) handleGenerateContent(g *completions.Gateway, w http.ResponseWriter, r *http.Request, model string, stream bool) error {
	received := time.Now()
	var greq completions.GeminiGenerateRequest
	if err := decodeJSON(r, &greq, decodeOptions{AllowUnknownFields: true, Rewrite: func(b []byte) ([]byte, error) {
		return completions.NormalizeGeminiJSON(b, completions.GeminiGenerateTopLevel)
	}}); err != nil {
		return s.openAIError(w, r, err)
	}
	greq.Model, greq.Stream = model, stream
	sse := r.URL.Query().Get("alt") == "sse"
	creq, err := greq.ToChatRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	req, err := creq.ToRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	thoughts := greq.IncludeThoughts()
	// The answer names the model as the request did, unless it named a model group.
	named := func(provider, name string) string {
		if g.IsModelGroup(model) {
			return provider + "/" + name
		}
		return model
	}
	refusal := func(cf *completions.ContentFilterError) *completions.GeminiResponse {
		resp := completions.NewGeminiResponse(contentFilteredResponse(cf), model, false)
		resp.Candidates[0].FinishReason = "SAFETY"
		return resp
	}
	if n := greq.Candidates(); n > 1 {
		return s.answerChoices(g, w, r, req, n, received,
			func(cf *completions.ContentFilterError) { writeJSON(w, http.StatusOK, refusal(cf)) },
			func(resps []*completions.Response) {
				writeJSON(w, http.StatusOK, completions.NewGeminiResponseN(resps, named(resps[0].Provider, resps[0].Model), thoughts))
			})
	}
	return s.answerOpenAI(g, w, r, req, received, openAIAnswer{
		what: "generateContent",
		whole: func(resp *completions.Response) error {
			writeJSON(w, http.StatusOK, completions.NewGeminiResponse(resp, named(resp.Provider, resp.Model), thoughts))
			return nil
		},
		refused: func(cf *completions.ContentFilterError, stream bool) error {
			if stream {
				return completions.WriteGeminiChunks(w, refusal(cf), sse)
			}
			writeJSON(w, http.StatusOK, refusal(cf))
			return nil
		},
		stream: func(st *completions.ResponseStream) error {
			return completions.WriteGeminiStream(w, st, named(st.Provider(), st.Model()), thoughts, sse)
		},
	})
}

// geminiCountRequest is countTokens' body: contents alone, or a whole
// generateContentRequest.
type geminiCountRequest struct {
	Contents               []completions.GeminiContent         `json:"contents,omitempty"`
	SystemInstruction      *completions.GeminiContent          `json:"systemInstruction,omitempty"`
	Tools                  []completions.GeminiTool            `json:"tools,omitempty"`
	GenerationConfig       *completions.GeminiGenerationConfig `json:"generationConfig,omitempty"`
	GenerateContentRequest *completions.GeminiGenerateRequest  `json:"generateContentRequest,omitempty"`
}

// geminiTokenCount is countTokens' answer.
type geminiTokenCount struct {
	TotalTokens int `json:"totalTokens"`
}

// handleGeminiCountTokens serves {model}:countTokens: the prompt tokens a request would
// cost on its model, estimated without calling it (Gateway.CountTokens), as
// {"totalTokens": n}.
func (s *Server) handleGeminiCountTokens(g *completions.Gateway, w http.ResponseWriter, r *http.Request, model string) error {
	received := time.Now()
	var creq geminiCountRequest
	if err := decodeJSON(r, &creq, decodeOptions{AllowUnknownFields: true, Rewrite: func(b []byte) ([]byte, error) {
		return completions.NormalizeGeminiJSON(b, completions.GeminiCountTopLevel)
	}}); err != nil {
		return s.openAIError(w, r, err)
	}
	greq := creq.GenerateContentRequest
	if greq == nil {
		greq = &completions.GeminiGenerateRequest{Contents: creq.Contents, SystemInstruction: creq.SystemInstruction, Tools: creq.Tools, GenerationConfig: creq.GenerationConfig}
	} else if len(creq.Contents) > 0 {
		return s.openAIError(w, r, validation.New(completions.ErrInvalid, "contents", "give contents or generateContentRequest, not both"))
	}
	greq.Model, greq.Stream = model, false
	// LiteLLM's fallbacks change no count: ignored in a generateContentRequest as at the top.
	greq.Fallbacks, greq.ContextWindowFallbacks = nil, nil
	chat, err := greq.ToChatRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	chat.N = nil
	req, err := chat.ToRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	// The header's and the key's tags select a tag-filtered group's members as
	// generateContent's (a count draws on no budget).
	if req.Tags, err = headerTags(r, req.Tags); err != nil {
		return s.openAIError(w, r, err)
	}
	n, err := g.CountTokens(r.Context(), completionsScope(r, received), req)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	writeJSON(w, http.StatusOK, geminiTokenCount{TotalTokens: n})
	return nil
}
