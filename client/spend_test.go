package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestSpendByTag: tags sent with the Go client's requests come back in its Spend report.
func TestSpendByTag(t *testing.T) {
	up := newToolUpstream(t)
	c, _ := realServer(t, func(st *store.Store, _ string) []server.Option {
		roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
		env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}
		g, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
			Prices: providers.DefaultCatalog(), Store: st, Observer: roll})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Spend(roll), server.Completions(g)}
	})
	ctx := context.Background()
	for _, md := range []map[string]any{{"tags": []string{"team:a"}}, {"tags": []string{"team:a", "env:ci"}}} {
		if _, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini", Metadata: md,
			Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Complete(ctx, &client.CompletionRequest{Models: []string{"openai/gpt-4o-mini"}, Tags: []string{"env:ci"},
		Messages: []client.ChatMessage{{Role: "user", Content: []client.ContentBlock{{Type: "text", Text: "Weather in Lyon?"}}}}}); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Spend(ctx, client.SpendQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range rep.Data {
		got[r.Tag] = r.Requests
	}
	if rep.By != "tag" || got["team:a"] != 2 || got["env:ci"] != 2 || len(got) != 2 {
		t.Fatalf("spend by tag %+v", rep)
	}
	if rep, err := c.Spend(ctx, client.SpendQuery{By: "model", From: time.Now(), To: time.Now()}); err != nil || len(rep.Data) != 1 || rep.Data[0].Requests != 3 {
		t.Fatalf("spend by model %+v %v", rep, err)
	}
}

// TestDailyActivity: the Go client's requests come back from UserDailyActivity per model
// and provider and from TagDailyActivity per tag; a query without dates is ErrInvalid;
// APIKey answers one key's days (with its models), UserID one user's, for the operator and
// for the user's own key (another user's is ErrForbidden).
func TestDailyActivity(t *testing.T) {
	up := newToolUpstream(t)
	c, _ := realServer(t, func(st *store.Store, _ string) []server.Option {
		roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
		env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}
		g, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
			Prices: providers.DefaultCatalog(), Store: st, Observer: roll})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Spend(roll), server.Completions(g)}
	})
	ctx := context.Background()
	for _, md := range []map[string]any{{"tags": []string{"team:a"}}, {"tags": []string{"team:a", "env:ci"}}} {
		if _, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini", Metadata: md,
			Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}}); err != nil {
			t.Fatal(err)
		}
	}
	today := time.Now()
	q := client.DailyActivityQuery{From: today.AddDate(0, 0, -1), To: today.AddDate(0, 0, 1)} // midnight may pass
	a, err := c.UserDailyActivity(ctx, q)
	if err != nil || len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 2 || a.Results[0].Metrics.SuccessfulRequests != 2 ||
		a.Results[0].Breakdown.Models["openai/gpt-4o-mini"].Metrics.APIRequests != 2 || a.Results[0].Breakdown.Providers["openai"].Metrics.TotalTokens == 0 {
		t.Fatalf("user daily activity %+v %v", a, err)
	}
	a, err = c.TagDailyActivity(ctx, client.DailyActivityQuery{From: q.From, To: q.To, Tags: []string{"env:ci"}})
	if err != nil || len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 || len(a.Results[0].Breakdown.Entities) != 1 ||
		a.Results[0].Breakdown.Entities["env:ci"].Metrics.APIRequests != 1 {
		t.Fatalf("tag daily activity %+v %v", a, err)
	}
	if _, err := c.TeamDailyActivity(ctx, client.DailyActivityQuery{}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("no dates: %v", err)
	}

	// A team's key: its request counts in the team's entity and under the key's id.
	for _, team := range []string{"eng", "ops"} {
		if _, err := c.CreateTeam(ctx, &client.TeamRequest{TeamID: team, Name: team + "-team"}); err != nil {
			t.Fatal(err)
		}
	}
	vk, err := c.IssueKey(ctx, &client.KeyRequest{Name: "bot", TeamID: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(vk.Key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}}); err != nil {
		t.Fatal(err)
	}
	if a, err = c.TeamDailyActivity(ctx, client.DailyActivityQuery{From: q.From, To: q.To, TeamIDs: []string{"eng", "ops"}}); err != nil || len(a.Results) != 1 {
		t.Fatalf("team daily activity %+v %v", a, err)
	}
	if e := a.Results[0].Breakdown.Entities["eng"]; err != nil || len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 || e.Metrics.APIRequests != 1 || e.Metadata["team_alias"] != "eng-team" {
		t.Fatalf("team daily activity %+v %v", a, err)
	}
	if a, err := c.TeamDailyActivity(ctx, client.DailyActivityQuery{From: q.From, To: q.To, ExcludeTeamIDs: []string{"eng"}}); err != nil || len(a.Results) != 0 {
		t.Fatalf("team daily activity without eng %+v %v", a, err)
	}
	if a, err = c.UserDailyActivity(ctx, client.DailyActivityQuery{From: q.From, To: q.To, APIKey: vk.ID}); err != nil || len(a.Results) != 1 {
		t.Fatalf("user daily activity of the key %+v %v", a, err)
	}
	if k := a.Results[0].Breakdown.APIKeys[vk.ID]; err != nil || len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 || k.Metrics.APIRequests != 1 ||
		k.Metadata.KeyAlias != "bot" || k.Metadata.TeamID != "eng" || !k.Metadata.KeyExists {
		t.Fatalf("user daily activity of the key %+v %v", a, err)
	}
	if m := a.Results[0].Breakdown.Models["openai/gpt-4o-mini"]; m.Metrics.APIRequests != 1 || m.APIKeyBreakdown[vk.ID].Metrics.APIRequests != 1 {
		t.Fatalf("the key's model, per key: %+v", a.Results[0].Breakdown.Models)
	}

	// A user's key: UserID answers the user's days; the key reads its own user's, and
	// another user's is ErrForbidden.
	if _, err := c.CreateUser(ctx, &client.UserRequest{UserID: "ann"}); err != nil {
		t.Fatal(err)
	}
	ann, err := c.IssueKey(ctx, &client.KeyRequest{Name: "ann-bot", UserID: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(ann.Key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}}); err != nil {
		t.Fatal(err)
	}
	for _, who := range []*client.Client{c, ac} {
		a, err := who.UserDailyActivity(ctx, client.DailyActivityQuery{From: q.From, To: q.To, UserID: "ann"})
		if err != nil || len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 || a.Results[0].Breakdown.APIKeys[ann.ID].Metadata.UserID != "ann" {
			t.Fatalf("user daily activity of ann %+v %v", a, err)
		}
	}
	if _, err := ac.UserDailyActivity(ctx, client.DailyActivityQuery{From: q.From, To: q.To, UserID: "bob"}); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("ann's key asking for bob's days: %v", err)
	}
}
