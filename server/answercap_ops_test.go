package server

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestOversizedImageAnswerIsChargedToTheKey: an image answer past the cap on its size is
// a 502 to the client, and the call the upstream made is charged all the same: the key's
// spend and the request's record (outcome error) carry the estimate of the image asked
// (dall-e-3 hd 1024x1792, one image), marked estimated.
func TestOversizedImageAnswerIsChargedToTheKey(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "209715200") // 200 MiB: past the images' 128 MiB
		w.Write([]byte(`{"created":1,`))
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k"}))
	hs, s := passThroughServerOver(t, reg)
	vk := issue(t, s, `{"name":"painter","models":["openai/dall-e-3"],"max_budget_usd":5}`)
	resp, b := post(t, hs.URL+"/v1/images/generations", vk.Key, `{"model":"openai/dall-e-3","prompt":"a lighthouse","size":"1024x1792","quality":"hd"}`)
	if resp.StatusCode != 502 || !strings.Contains(string(b), "cap on an answer's size") {
		t.Fatalf("%d %s, want a 502 naming the cap", resp.StatusCode, b)
	}
	want := providers.DefaultCatalog().ImageCost("openai/dall-e-3", providers.ImageUsage{Images: 1, Size: "1024x1792", Quality: "hd"}).TotalUSD
	if want <= 0 {
		t.Fatalf("dall-e-3 hd priced at %v", want)
	}
	if got := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.CostUSD; math.Abs(got-want) > 1e-12 {
		t.Errorf("key spend %v, want %v", got, want)
	}
	rows := passThroughHistory(t, s, vk.Key)
	if len(rows) != 1 || rows[0].Outcome != "error" || !rows[0].UsageEstimated || math.Abs(rows[0].CostUSD-want) > 1e-12 {
		t.Errorf("history %+v, want one error of $%v estimated", rows, want)
	}
}
