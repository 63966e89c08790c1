package server

import (
	"net/http"

	"github.com/switchyard-ai/switchyard/completions"
)

// litellmGuardrailList is the answer of GET /guardrails/list, in LiteLLM's shape.
type litellmGuardrailList struct {
	Guardrails []litellmGuardrail `json:"guardrails"`
}

// litellmGuardrail describes one configured guardrail as LiteLLM's /guardrails/list does.
// A banned_words or regex guardrail's words and patterns are not shown (only how many):
// what a guardrail looks for is the operator's to know.
type litellmGuardrail struct {
	Name   string                 `json:"guardrail_name" jsonschema:"description=What a request's or a key's guardrails name"`
	Params litellmGuardrailParams `json:"litellm_params"`
	Info   litellmGuardrailInfo   `json:"guardrail_info"`
}

// litellmGuardrailParams are a guardrail's settings under LiteLLM's names.
type litellmGuardrailParams struct {
	Guardrail string `json:"guardrail" jsonschema:"description=The kind: moderation or secrets or pii or banned_words or regex or custom"`
	Mode      string `json:"mode" jsonschema:"description=pre_call or post_call"`
	DefaultOn bool   `json:"default_on" jsonschema:"description=Runs on every chat request"`
	OnError   string `json:"on_error,omitempty" jsonschema:"description=block (fails closed) or allow"`
	// OnUnchecked is a pre_call guardrail's answer to parts it cannot read (recordings, images, files).
	OnUnchecked string   `json:"on_unchecked,omitempty" jsonschema:"description=pre_call: allow (recordings and images and files pass unchecked\\, logged) or block (refused naming the part)"`
	Action      string   `json:"action,omitempty" jsonschema:"description=secrets and pii: mask or block"`
	Entities    []string `json:"entities,omitempty"`
	Model       string   `json:"model,omitempty" jsonschema:"description=moderation: the model it calls"`
	Categories  []string `json:"categories,omitempty"`
	Timeout     float64  `json:"timeout,omitempty" jsonschema:"description=Seconds one check may take"`
}

// litellmGuardrailInfo counts what a guardrail looks for without showing it.
type litellmGuardrailInfo struct {
	Words    int `json:"words,omitempty" jsonschema:"description=banned_words: how many words or phrases"`
	Patterns int `json:"patterns,omitempty" jsonschema:"description=regex: how many patterns"`
}

// guardrailRoutes registers GET /guardrails/list: the guardrails a request or a virtual
// key may name.
func (s *Server) guardrailRoutes(g *completions.Gateway) {
	s.Handle(Route{Method: "GET", Path: "/guardrails/list", Summary: "LiteLLM's guardrail list: the guardrails configured on the server (--guardrails), which requests and virtual keys may name",
		Tags: []string{"LiteLLM compatibility"}, Response: litellmGuardrailList{}, ScopedKeys: true},
		func(w http.ResponseWriter, r *http.Request) error {
			out := litellmGuardrailList{Guardrails: []litellmGuardrail{}}
			for _, c := range g.Guardrails() {
				out.Guardrails = append(out.Guardrails, litellmGuardrail{Name: c.Name,
					Params: litellmGuardrailParams{Guardrail: c.Kind, Mode: c.Mode, DefaultOn: c.DefaultOn, OnError: c.OnError, OnUnchecked: c.OnUnchecked, Action: c.Action,
						Entities: c.Entities, Model: c.Model, Categories: c.Categories, Timeout: c.Timeout},
					Info: litellmGuardrailInfo{Words: len(c.Words), Patterns: len(c.Patterns)}})
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}
