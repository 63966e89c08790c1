package completions

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// gatedUpstream is a scripted OpenAI-, Azure- and Cohere-format upstream (chat,
// embeddings, image generations and edits, speech, transcriptions, translations, rerank)
// whose calls, once arrived, wait until the test lets them answer: the test changes the
// routes meanwhile, as a deployment deleted or re-priced while its call is under way.
type gatedUpstream struct {
	srv     *httptest.Server
	mu      sync.Mutex
	arrived chan struct{} // a call came (buffered: the first one is told)
	release chan struct{} // closed: the calls answer
}

func newGatedUpstream(t *testing.T) *gatedUpstream {
	u := &gatedUpstream{}
	u.open()
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		arrived, release := u.arrived, u.release
		u.mu.Unlock()
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-release
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/chat/completions"):
			io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":100}}`)
		case strings.HasSuffix(p, "/embeddings"):
			io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":1000,"total_tokens":1000}}`)
		case strings.HasSuffix(p, "/images/generations"), strings.HasSuffix(p, "/images/edits"):
			io.WriteString(w, `{"created":1,"data":[{"b64_json":"aGk="}],"quality":"high","size":"1024x1024","usage":{"input_tokens":100,"input_tokens_details":{"text_tokens":100,"image_tokens":0},"output_tokens":1000,"total_tokens":1100}}`)
		case strings.HasSuffix(p, "/audio/transcriptions"), strings.HasSuffix(p, "/audio/translations"):
			io.WriteString(w, `{"text":"heard","usage":{"type":"duration","seconds":60}}`)
		case strings.HasSuffix(p, "/audio/speech"):
			w.Header().Set("Content-Type", "audio/mpeg")
			io.WriteString(w, "AUDIO")
		case strings.HasSuffix(p, "/rerank"):
			io.WriteString(w, `{"id":"co-1","results":[{"index":0,"relevance_score":0.9}],"meta":{"billed_units":{"search_units":1}}}`)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// open makes the next calls wait again.
func (u *gatedUpstream) open() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.arrived, u.release = make(chan struct{}, 1), make(chan struct{})
}

// TestEveryOperationPricedAsItStarted: a call of every priced operation (embeddings, image
// generations and edits, speech, transcriptions, translations, rerank, the pass-through
// routes; chat as well) whose deployment is deleted while its upstream is answering (its
// group and provider gone, SetRoutes with a catalogue that no longer prices it, as
// /model/delete or a /model/update of its price leaves it) is priced, answered and billed
// at the price it had when the request started, not at nothing. The Azure rows price a
// deployment through its base model (base_models: model_info.base_model), which its
// provider says and the registry no longer has once the deployment is gone.
func TestEveryOperationPricedAsItStarted(t *testing.T) {
	ctx := context.Background()
	png := testPNG(t, 8, 8)
	// forward is what the pass-through routes do between Begin and End: the call upstream.
	forward := func(u *gatedUpstream, path string) error {
		resp, err := http.Post(u.srv.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	type call func(g *Gateway, u *gatedUpstream, s Scope) (Costs, error)
	passThrough := func(model, path string, embeddings bool) call {
		return func(g *Gateway, u *gatedUpstream, s Scope) (Costs, error) {
			pt, err := g.BeginPassThrough(ctx, s, "openai", model, false)
			if err != nil {
				return Costs{}, err
			}
			if err := forward(u, path); err != nil {
				return Costs{}, err
			}
			pt.End(ctx, PassThroughUsage{Usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 100}, Reported: true, Embeddings: embeddings}, time.Millisecond, nil)
			return Costs{}, nil // the record says the cost
		}
	}
	for _, tc := range []struct {
		name, member string
		op           string // the record's Operation ("": chat)
		keepPrices   bool   // the deletion leaves the catalogue as it was (an Azure base model's price stays)
		call         call
	}{
		{name: "embeddings", member: "openai/text-embedding-3-small", op: OperationEmbeddings, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.Embed(ctx, s, &EmbeddingsRequest{Model: "m", Input: EmbeddingInput{Texts: []string{"hello"}}})
			if err != nil {
				return Costs{}, err
			}
			return *r.Usage.Costs, nil
		}},
		{name: "image generation", member: "openai/gpt-image-1", op: OperationImageGeneration, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.GenerateImages(ctx, s, &ImageGenerationRequest{Model: "m", Prompt: "a cat"})
			if err != nil {
				return Costs{}, err
			}
			return *r.Usage.Costs, nil
		}},
		{name: "image edit", member: "openai/gpt-image-1", op: OperationImageEdit, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.EditImages(ctx, s, &ImageEditRequest{Model: "m", Prompt: "add a hat", Images: []ImageFile{{Filename: "a.png", ContentType: "image/png", Data: png}}})
			if err != nil {
				return Costs{}, err
			}
			return *r.Usage.Costs, nil
		}},
		{name: "speech", member: "openai/tts-1", op: OperationSpeech, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			sp, err := g.Speak(ctx, s, &SpeechRequest{Model: "m", Input: "Hello world", Voice: "alloy"})
			if err != nil {
				return Costs{}, err
			}
			io.ReadAll(sp)
			return sp.Costs, sp.Close()
		}},
		{name: "transcription", member: "openai/whisper-1", op: OperationTranscription, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.Transcribe(ctx, s, &TranscriptionRequest{Model: "m", File: []byte("hello"), Filename: "a.wav"})
			if err != nil {
				return Costs{}, err
			}
			return r.Costs, nil
		}},
		{name: "translation", member: "openai/whisper-1", op: OperationTranslation, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.Transcribe(ctx, s, &TranscriptionRequest{Model: "m", Translate: true, File: []byte("bonjour"), Filename: "a.wav"})
			if err != nil {
				return Costs{}, err
			}
			return r.Costs, nil
		}},
		{name: "rerank", member: "cohere/rerank-v3.5", op: OperationRerank, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.Rerank(ctx, s, &RerankRequest{Model: "m", Query: "q", Documents: []RerankDocument{"a"}})
			if err != nil {
				return Costs{}, err
			}
			return *r.Usage.Costs, nil
		}},
		{name: "pass-through chat", member: "openai/gpt-4o", op: OperationPassThrough, call: passThrough("gpt-4o", "/v1/chat/completions", false)},
		{name: "pass-through embeddings", member: "openai/text-embedding-3-small", op: OperationPassThrough, call: passThrough("text-embedding-3-small", "/v1/embeddings", true)},
		{name: "azure embeddings by base model", member: "azure/team-emb", op: OperationEmbeddings, keepPrices: true, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			r, err := g.Embed(ctx, s, &EmbeddingsRequest{Model: "m", Input: EmbeddingInput{Texts: []string{"hello"}}})
			if err != nil {
				return Costs{}, err
			}
			return *r.Usage.Costs, nil
		}},
		{name: "azure chat by base model", member: "azure/team-chat", op: "", keepPrices: true, call: func(g *Gateway, _ *gatedUpstream, s Scope) (Costs, error) {
			var o OpenAIChatRequest
			if err := json.Unmarshal([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), &o); err != nil {
				return Costs{}, err
			}
			req, err := o.ToRequest()
			if err != nil {
				return Costs{}, err
			}
			r, err := g.Complete(ctx, s, req)
			if err != nil {
				return Costs{}, err
			}
			return r.Usage.Costs, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// run makes the call, deleting the deployment once its upstream has it when
			// del; it returns the call's costs and the recorded and billed ones.
			run := func(del bool) (answered, recorded Costs, billed float64) {
				u := newGatedUpstream(t)
				env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": u.srv.URL + "/v1", "COHERE_API_KEY": "co", "COHERE_BASE_URL": u.srv.URL,
					"AZURE_API_KEY": "az", "AZURE_API_BASE": u.srv.URL}
				getenv := func(k string) string { return env[k] }
				reg := providers.FromEnv(getenv, providers.Options{})
				fc, err := providers.ParseConfig([]byte(`{"providers": [{"name": "azure", "base_models": {"team-emb": "text-embedding-3-small", "team-chat": "gpt-4o-2024-08-06"}}]}`))
				if err != nil {
					t.Fatal(err)
				}
				if err := reg.Configure(fc, getenv, providers.Options{}); err != nil {
					t.Fatal(err)
				}
				obs := &recordingObserver{}
				g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), Observer: obs, DefaultMaxRetries: -1,
					ModelGroups: map[string]ModelGroup{"m": {Models: []string{tc.member}}}})
				if err != nil {
					t.Fatal(err)
				}
				budget := NewBudget(BudgetLimits{})
				type result struct {
					c   Costs
					err error
				}
				done := make(chan result, 1)
				go func() {
					c, err := tc.call(g, u, Scope{Owner: "k1", Budget: budget})
					done <- result{c, err}
				}()
				select {
				case <-u.arrived:
				case res := <-done:
					t.Fatalf("answered before reaching the upstream: %+v, %v", res.c, res.err)
				}
				if del {
					r := Routes{ModelGroups: map[string]ModelGroup{}}
					if !tc.keepPrices {
						none, err := providers.ParseCatalog([]byte(`{}`))
						if err != nil {
							t.Fatal(err)
						}
						r.Prices = none
					}
					if err := g.SetRoutes(r); err != nil {
						t.Fatal(err)
					}
					prov, _, _ := providers.ParseModel(tc.member)
					reg.Remove(prov)
				}
				close(u.release)
				res := <-done
				if res.err != nil {
					t.Fatal(res.err)
				}
				rec := obs.take(t)
				if rec.Operation != tc.op {
					t.Fatalf("recorded operation %q, want %q", rec.Operation, tc.op)
				}
				return res.c, rec.Usage.Costs, budget.Used(ctx).CostUSD
			}
			_, want, _ := run(false)
			if !want.PriceKnown || want.Spent() <= 0 {
				t.Fatalf("the start-time price is not known: %+v", want)
			}
			answered, recorded, billed := run(true)
			if tc.op != OperationPassThrough && (!answered.PriceKnown || math.Abs(answered.Spent()-want.Spent()) > 1e-12) {
				t.Errorf("the answer's costs %+v, want the start-time price %v", answered, want.Spent())
			}
			if !recorded.PriceKnown || math.Abs(recorded.Spent()-want.Spent()) > 1e-12 {
				t.Errorf("the recorded costs %+v, want the start-time price %v", recorded, want.Spent())
			}
			if math.Abs(billed-want.Spent()) > 1e-12 {
				t.Errorf("the budget was charged %v, want the start-time price %v", billed, want.Spent())
			}
		})
	}
}
