package completions

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestMetadataTags(t *testing.T) {
	for raw, want := range map[string]string{
		``: `[]`, `null`: `[]`, `{}`: `[]`, `{"tags":null}`: `[]`, `{"user":"u"}`: `[]`,
		`{"tags":["a","b:c"]}`: `[a b:c]`, `{"tags":"a, b ,,c"}`: `[a b c]`,
	} {
		got, err := metadataTags([]byte(raw))
		if err != nil || fmt.Sprint(append([]string{}, got...)) != want {
			t.Errorf("%s: %v %v, want %s", raw, got, err, want)
		}
	}
	for raw, field := range map[string]string{`"x"`: "metadata", `{"tags":3}`: "metadata.tags", `{"tags":["ok","no way"]}`: "metadata.tags"} {
		var ve *ValidationError
		if _, err := metadataTags([]byte(raw)); !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a validation error naming %s", raw, err, field)
		}
	}
}

// Tags reach the observer and the ledger, for chat and embeddings alike.
func TestTagsReachTheRecords(t *testing.T) {
	h := newEmbedHarness(t)
	ctx := context.Background()
	if _, err := h.g.Embed(ctx, Scope{Owner: "o"}, &EmbeddingsRequest{Model: "openai/text-embedding-3-small",
		Input: EmbeddingInput{Texts: []string{"x"}}, Tags: []string{"feature:rag"}}); err != nil {
		t.Fatal(err)
	}
	if r := h.observed.take(t); fmt.Sprint(r.Tags) != "[feature:rag]" {
		t.Fatalf("observed tags %v", r.Tags)
	}
	if e := h.ledger.all(); len(e) != 1 || fmt.Sprint(e[0].Tags) != "[feature:rag]" {
		t.Fatalf("ledger %+v", e)
	}
	var ve *ValidationError
	if _, err := h.g.Embed(ctx, Scope{}, &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"x"}},
		Tags: []string{""}}); !errors.As(err, &ve) || ve.Field != "tags" {
		t.Fatalf("an empty tag: %v", err)
	}

	c := newHarness(t, func(o *Options) { o.Observer = h.observed })
	req := userReq("hi", "a/m")
	req.Tags = []string{"team:a", "env:dev"}
	if _, err := c.g.Complete(ctx, Scope{}, req); err != nil {
		t.Fatal(err)
	}
	if r := h.observed.take(t); fmt.Sprint(r.Tags) != "[team:a env:dev]" {
		t.Fatalf("chat's observed tags %v", r.Tags)
	}
	if e := c.ledger.all(); len(e) != 1 || fmt.Sprint(e[0].Tags) != "[team:a env:dev]" {
		t.Fatalf("chat's ledger %+v", e)
	}
}
