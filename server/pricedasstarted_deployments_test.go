package server

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDeploymentChangedMidCallPricedAsItStarted: an embeddings call to a deployment added
// by POST /model/new that is deleted (/model/delete) or re-priced (/model/update) while its
// upstream is answering is priced at what the deployment cost when the call was made: an
// Azure deployment through its model_info.base_model (its provider gone once deleted), a
// deployment with its own input_cost_per_token at that price, not at the update's.
func TestDeploymentChangedMidCallPricedAsItStarted(t *testing.T) {
	for _, tc := range []struct {
		name, deployment, change string
		want                     float64
	}{
		{name: "azure base model deleted",
			deployment: `{"model_name":"emb","litellm_params":{"model":"azure/team-emb","api_key":"k","api_base":"%s","api_version":"2024-10-21"},"model_info":{"id":"emb-1","base_model":"text-embedding-3-small","mode":"embedding"}}`,
			change:     `/model/delete {"id":"emb-1"}`, want: 1000 * 2e-8},
		{name: "own price updated",
			deployment: `{"model_name":"emb","litellm_params":{"model":"openai/house-emb","api_key":"k","api_base":"%s/v1","input_cost_per_token":0.000001},"model_info":{"id":"emb-1","mode":"embedding"}}`,
			change:     `/model/update {"model_name":"emb","litellm_params":{"model":"openai/house-emb","api_key":"k","api_base":"%s/v1","input_cost_per_token":0.01},"model_info":{"id":"emb-1","mode":"embedding"}}`,
			want:       1000 * 1e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived, release := make(chan struct{}, 1), make(chan struct{})
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				select {
				case arrived <- struct{}{}:
				default:
				}
				<-release
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":1000,"total_tokens":1000}}`)
			}))
			t.Cleanup(up.Close)
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			st := newTestStore(t)
			t.Cleanup(func() { st.Close() })
			hs := deploymentServer(t, st, nil)
			call := func(path, body string) string {
				t.Helper()
				code, b := adminCall(t, hs, "POST", path, body)
				if code != http.StatusOK {
					t.Fatalf("%s %s: %d %s", path, body, code, b)
				}
				return b
			}
			call("/model/new", strings.ReplaceAll(tc.deployment, "%s", up.URL))
			type answer struct {
				code int
				body []byte
			}
			done := make(chan answer, 1)
			go func() {
				resp, b := post(t, hs.URL+"/v1/embeddings", testKey, `{"model":"emb","input":"hello"}`)
				done <- answer{resp.StatusCode, b}
			}()
			select {
			case <-arrived:
			case a := <-done:
				t.Fatalf("answered before reaching the upstream: %d %s", a.code, a.body)
			}
			path, body, _ := strings.Cut(strings.ReplaceAll(tc.change, "%s", up.URL), " ")
			call(path, body)
			close(release)
			a := <-done
			if a.code != http.StatusOK {
				t.Fatalf("/v1/embeddings: %d %s", a.code, a.body)
			}
			var out struct {
				Usage struct {
					Costs struct {
						Total float64 `json:"total_tokens_cost"`
						Known bool    `json:"price_known"`
					} `json:"costs"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(a.body, &out); err != nil {
				t.Fatalf("%v: %s", err, a.body)
			}
			if c := out.Usage.Costs; !c.Known || math.Abs(c.Total-tc.want) > 1e-12 {
				t.Errorf("costs %+v, want the start-time price %v: %s", c, tc.want, a.body)
			}
		})
	}
}
