package completions

import (
	"context"
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestRealtimeAzureTranscriptionPricedByBaseModel: an Azure realtime session's input
// transcription names a deployment of the resource; it is priced as the model that
// deployment's configuration says it runs (base_models: LiteLLM's model_info.base_model),
// as Azure deployments are priced on every other route — when the realtime deployment's
// own provider entry configures it, and when the transcription deployment is configured as
// an entry of its own (LiteLLM gives a deployment of another api_version one), which the
// ledger then names. A deployment no entry configures is priced by its own name, as
// before (azure/{deployment}: no price for a name the catalogue does not know).
func TestRealtimeAzureTranscriptionPricedByBaseModel(t *testing.T) {
	fc, err := providers.ParseConfig([]byte(`{"providers": [
		{"name": "azure", "base_models": {"voice-rt": "gpt-realtime", "asr-same": "gpt-4o-transcribe"}},
		{"name": "azure-asr", "format": "azure", "base_url": "https://contoso.openai.azure.com", "api_key": "k2", "api_version": "2025-03-01-preview",
		 "base_models": {"asr-own": "gpt-4o-mini-transcribe"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"AZURE_API_KEY": "k", "AZURE_API_BASE": "https://contoso.openai.azure.com", "AZURE_API_VERSION": "2024-10-01-preview"}[k]
	}
	reg := providers.FromEnv(env, providers.Options{})
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	cat := providers.DefaultCatalog()
	ledger := &recordingLedger{}
	g, err := New(Options{Providers: reg, Prices: cat, Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	u := providers.AudioUsage{InputTokens: 100, InputAudioTokens: 100, OutputTokens: 10}
	for _, tc := range []struct {
		deployment, ledgerModel string
		want                    providers.Cost
	}{
		{"asr-same", "azure/asr-same", cat.AudioCost("azure/gpt-4o-transcribe", u)},
		{"asr-own", "azure-asr/asr-own", cat.AudioCost("azure/gpt-4o-mini-transcribe", u)},
		{"asr-unknown", "azure/asr-unknown", providers.Cost{}},
	} {
		s, err := g.BeginRealtime(context.Background(), Scope{}, "azure/voice-rt")
		if err != nil {
			t.Fatal(err)
		}
		s.BillTranscription(context.Background(), tc.deployment, u)
		_, c, _ := s.Usage()
		s.End(context.Background(), nil)
		if c.PriceKnown != tc.want.Known || math.Abs(c.TotalTokensCost-tc.want.TotalUSD) > 1e-12 || tc.want.Known && tc.want.TotalUSD <= 0 {
			t.Errorf("%s: costs %+v, want %+v", tc.deployment, c, tc.want)
		}
		e := ledger.all()
		if len(e) == 0 || e[len(e)-1].Model != tc.ledgerModel {
			t.Errorf("%s: ledger %+v, want the last entry of %s", tc.deployment, e, tc.ledgerModel)
		}
	}
}
