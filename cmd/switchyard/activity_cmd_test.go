package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestActivityCommand: two requests made through the gateway (one tagged) come back from
// `switchyard activity` per model and, with --by tag, per tag; --api-key and --user narrow
// to a key's or a user's requests; a flag of the other grouping and a bad day are refused
// before any request.
func TestActivityCommand(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	url := cliServer(t, func(st *store.Store) []server.Option {
		roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: roll})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g), server.Spend(roll)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	c, err := client.New(client.WithBaseURL(url), client.WithAPIKey(cliKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTeam(context.Background(), &client.TeamRequest{TeamID: "eng", Name: "Engineering"}); err != nil {
		t.Fatal(err)
	}
	vk, err := c.IssueKey(context.Background(), &client.KeyRequest{Name: "bot", TeamID: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := client.New(client.WithBaseURL(url), client.WithAPIKey(vk.Key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.Complete(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o-mini"},
		Messages: []client.ChatMessage{{Role: "user", Content: []client.ContentBlock{{Type: "text", Text: "hello"}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, tags := range [][]string{nil, {"team:a"}} {
		if _, err := c.Complete(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o-mini"}, Tags: tags,
			Messages: []client.ChatMessage{{Role: "user", Content: []client.ContentBlock{{Type: "text", Text: "hello"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// A day either side of today: midnight may pass.
	days := []string{"--from", time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly), "--to", time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)}
	code, out, errOut := cli(t, append([]string{"activity"}, days...)...)
	if code != 0 || !regexp.MustCompile(`openai/gpt-4o-mini\s+3\s+0\s+\d+\s+\$`).MatchString(out) || !regexp.MustCompile(`total\s+3\s+0`).MatchString(out) {
		t.Fatalf("activity: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, append([]string{"activity", "--by", "tag"}, days...)...)
	if code != 0 || !regexp.MustCompile(`team:a\s+1\s+0`).MatchString(out) || !regexp.MustCompile(`total\s+1\s+0`).MatchString(out) {
		t.Fatalf("activity --by tag: %d %s %s", code, out, errOut)
	}
	// Per team: only the team key's request; per key: the key (with its name) and the
	// operator's own requests under its owner id.
	code, out, errOut = cli(t, append([]string{"activity", "--by", "team", "--teams", "eng"}, days...)...)
	if code != 0 || !regexp.MustCompile(`eng \(Engineering\)\s+1\s+0`).MatchString(out) || !regexp.MustCompile(`total\s+1\s+0`).MatchString(out) {
		t.Fatalf("activity --by team: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, append([]string{"activity", "--by", "key"}, days...)...)
	if code != 0 || !regexp.MustCompile(regexp.QuoteMeta(vk.ID)+` \(bot\)\s+1\s+0`).MatchString(out) || !regexp.MustCompile(`key_[0-9a-f]+\s+2\s+0`).MatchString(out) {
		t.Fatalf("activity --by key: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, append([]string{"activity", "--by", "key", "--api-key", vk.ID}, days...)...)
	if code != 0 || !regexp.MustCompile(`total\s+1\s+0`).MatchString(out) {
		t.Fatalf("activity --by key --api-key: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, append([]string{"activity", "--api-key", vk.ID}, days...)...)
	if code != 0 || !regexp.MustCompile(`openai/gpt-4o-mini\s+1\s+0`).MatchString(out) || !regexp.MustCompile(`total\s+1\s+0`).MatchString(out) {
		t.Fatalf("activity --api-key (per model): %d %s %s", code, out, errOut)
	}
	// A user's key: --user answers the user's requests alone, per key or per model.
	if _, err := c.CreateUser(context.Background(), &client.UserRequest{UserID: "ann"}); err != nil {
		t.Fatal(err)
	}
	ann, err := c.IssueKey(context.Background(), &client.KeyRequest{Name: "ann-bot", UserID: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := client.New(client.WithBaseURL(url), client.WithAPIKey(ann.Key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.Complete(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o-mini"},
		Messages: []client.ChatMessage{{Role: "user", Content: []client.ContentBlock{{Type: "text", Text: "hello"}}}}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, append([]string{"activity", "--by", "key", "--user", "ann"}, days...)...)
	if code != 0 || !regexp.MustCompile(regexp.QuoteMeta(ann.ID)+` \(ann-bot\)\s+1\s+0`).MatchString(out) || !regexp.MustCompile(`total\s+1\s+0`).MatchString(out) || strings.Contains(out, vk.ID) {
		t.Fatalf("activity --by key --user ann: %d %s %s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"activity", "--by", "tag", "--model", "openai/gpt-4o-mini"}, "--model is for --by model or key"},
		{[]string{"activity", "--tags", "team:a"}, "--tags is for --by tag"},
		{[]string{"activity", "--from", "June"}, "--from"},
		{[]string{"activity", "--by", "colour"}, "--by"},
		{[]string{"activity", "--teams", "eng"}, "--teams is for --by team"},
		{[]string{"activity", "--by", "team", "--api-key", "vk_x"}, "--api-key is for --by model or key"},
		{[]string{"activity", "--by", "tag", "--user", "ann"}, "--user is for --by model or key"},
	} {
		if code, _, errOut := cli(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Fatalf("%v: %d %s", c.args, code, errOut)
		}
	}
}
