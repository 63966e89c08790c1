package providers_test

// Review 14b: Bedrock prices.

import (
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

var r14Usage = providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}

// TestReview14bPricesThatHold: model ids, inference profiles and a region prefix are priced
// from their own Bedrock entries; an unknown id has no price.
func TestReview14bPricesThatHold(t *testing.T) {
	c := providers.DefaultCatalog()
	for _, m := range []struct {
		model string
		usd   float64 // for 1000 prompt and 1000 completion tokens
	}{
		{"bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", 0.018},
		{"bedrock/us.anthropic.claude-3-5-sonnet-20240620-v1:0", 0.018},
		{"bedrock/us-west-2/anthropic.claude-3-5-sonnet-20240620-v1:0", 0.018},
		{"bedrock/us-gov-west-1/anthropic.claude-3-5-sonnet-20240620-v1:0", 0.0216},
		{"bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.0198},
		{"bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.018},
	} {
		if got := c.Cost(m.model, r14Usage); !got.Known || math.Abs(got.TotalUSD-m.usd) > 1e-9 {
			t.Errorf("%s: %+v, want %v", m.model, got, m.usd)
		}
	}
	for _, m := range []string{"bedrock/acme.unknown-model-v1:0", "bedrock/anthropic.claude-9-opus-20300101-v1:0",
		"bedrock/arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/mi1dadi0g15f"} {
		if got := c.Cost(m, r14Usage); got.Known {
			t.Errorf("%s: %+v, want unknown", m, got)
		}
	}
}

// TestReview14bGovCloudARNPricedAtGovCloudRates: a foundation model called by its
// GovCloud ARN costs what the same model costs as "bedrock/us-gov-west-1/<id>" (the
// catalogue's GovCloud entry, 20% above the commercial one), not the commercial price:
// the ARN names its region as the prefix does.
func TestReview14bGovCloudARNPricedAtGovCloudRates(t *testing.T) {
	c := providers.DefaultCatalog()
	byPrefix := c.Cost("bedrock/us-gov-west-1/anthropic.claude-3-5-sonnet-20240620-v1:0", r14Usage)
	for _, m := range []string{
		"bedrock/arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0",
		"bedrock/arn:aws:bedrock:us-gov-west-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0",
	} {
		got := c.Cost(m, r14Usage)
		if !got.Known || math.Abs(got.TotalUSD-byPrefix.TotalUSD) > 1e-9 {
			p, _ := c.Lookup(m)
			t.Errorf("%s: $%v (entry %q), the region-prefixed form $%v", m, got.TotalUSD, p.Key, byPrefix.TotalUSD)
		}
	}
}

// TestReview14bUnknownIDsHaveNoMadeUpPrice: ids the catalogue does not list — a geo
// profile it has no entry for, a model version it does not know, a name that is not a
// Bedrock model id — have no price, rather than another entry's: for Claude Sonnet 4.5
// every geo profile the catalogue lists costs 10% more than the base id, so the base
// price is wrong for an unlisted one.
func TestReview14bUnknownIDsHaveNoMadeUpPrice(t *testing.T) {
	c := providers.DefaultCatalog()
	for _, m := range []string{
		"bedrock/ca.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"bedrock/anthropic.claude-3-5-sonnet-20240620-v9:0",
		"bedrock/claude-3-5-sonnet-20240620",
	} {
		if got := c.Cost(m, r14Usage); got.Known {
			p, _ := c.Lookup(m)
			t.Errorf("%s: priced $%v from entry %q, want unknown", m, got.TotalUSD, p.Key)
		}
	}
}
