package server

import (
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestOptimizeRequiresOptimizer: a submit that is valid but for a missing optimizer is a 422
// naming the field, and no job is created for it.
func TestOptimizeRequiresOptimizer(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"input_url":"`+e.url+`","target_models":["scripted/task"]}`)
	wantError(t, r, 422, KindValidation, `optimizer is required: "agentopt"`)
	ok := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"]}`)
	if ok.status != 202 {
		t.Fatalf("with the optimizer: %d %s", ok.status, ok.raw)
	}
}
