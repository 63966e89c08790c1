package main

import (
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestPagingFlagsRefused: the list commands' paging flags out of their range (a negative
// or zero --page or --page-size of activity, a --limit of batch list outside 1-100) are
// refused naming the flag, where the client would send nothing and the server answer its
// default page as if the flag had been taken; in range they are taken.
func TestPagingFlagsRefused(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	url := cliServer(t, func(st *store.Store) []server.Option {
		roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: roll})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g), server.Spend(roll), batchesOption(t, st)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"activity", "--page", "-1"}, "--page must be 1 or more, got -1"},
		{[]string{"activity", "--page", "0"}, "--page must be 1 or more, got 0"},
		{[]string{"activity", "--page-size", "-5"}, "--page-size must be 1 to 1000, got -5"},
		{[]string{"activity", "--page-size", "0", "--by", "tag"}, "--page-size must be 1 to 1000, got 0"},
		{[]string{"activity", "--page-size", "1001", "--by", "team"}, "--page-size must be 1 to 1000, got 1001"},
		{[]string{"batch", "list", "--limit", "-1"}, "--limit must be 1-100, got -1"},
		{[]string{"batch", "--limit", "0"}, "--limit must be 1-100, got 0"},
		{[]string{"batch", "list", "--limit", "101"}, "--limit must be 1-100, got 101"},
	} {
		if code, out, errOut := cli(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %q %q, want an error %q", c.args, code, out, errOut, c.want)
		}
	}
	for _, args := range [][]string{
		{"activity", "--page", "2", "--page-size", "1"},
		{"activity", "--page-size", "1000", "--by", "tag"},
		{"batch", "list", "--limit", "100"},
		{"batch", "list", "--limit", "1"},
	} {
		if code, out, errOut := cli(t, args...); code != 0 {
			t.Errorf("%v: %d %q %q", args, code, out, errOut)
		}
	}
}
