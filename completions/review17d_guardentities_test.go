package completions

import (
	"context"
	"strings"
	"testing"
)

// review17d: the credit_card and iban entities take the regexp's longest match and only
// then run the Luhn / mod-97 check; a failing check leaves the whole match alone instead
// of trying the shorter valid prefix. So a card number followed by its CVV or expiry
// ("4111 1111 1111 1111 123"), or an IBAN followed by an upper-case word or code
// ("GB82WEST12345698765432 EUR"), reaches the upstream unmasked. Fix: on a failed check
// try the match's shorter prefixes (13-19 digits for a card, the country's IBAN length),
// or bound the patterns (card groups of 4, IBAN without trailing spaces into a new word).
func TestReview17dPIIMasksCardAndIBANFollowedByMore(t *testing.T) {
	c := GuardrailConfig{Kind: GuardrailPII, Mode: GuardrailPreCall}
	gr, err := newSensitiveDataGuardrail(&c, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	for text, secret := range map[string]string{
		"card 4111 1111 1111 1111 123 thanks":      "4111 1111 1111 1111",
		"card 4111111111111111 123":                "4111111111111111",
		"pay to GB82WEST12345698765432 EUR please": "GB82WEST12345698765432",
		"pay to GB82 WEST 1234 5698 7654 32 TODAY": "GB82 WEST 1234 5698 7654 32",
	} {
		v, _ := gr.Check(context.Background(), GuardrailInput{Mode: GuardrailPreCall, Texts: []string{text}})
		out := text
		if v.Texts != nil {
			out = v.Texts[0]
		}
		if strings.Contains(out, secret) {
			t.Errorf("%q left %q unmasked: %q", text, secret, out)
		}
	}
}

// review17d: buildGuardrails rejects action/entities outside secrets and pii, patterns on
// banned_words and words on regex, but silently ignores every other field of another kind:
// patterns or words on a secrets/pii guardrail (an operator's own secret formats), model or
// categories on banned_words/regex/secrets/pii. The operator believes a check is configured
// that never runs. An empty regex pattern ("") is accepted and blocks every request.
// Fix: reject each kind's foreign fields naming them, and an empty pattern.
func TestReview17dGuardrailConfigRejectsForeignFields(t *testing.T) {
	for _, cfg := range []string{
		`[{"name":"s","kind":"secrets","mode":"pre_call","patterns":["acme-[0-9]{8}"]}]`,
		`[{"name":"p","kind":"pii","mode":"pre_call","words":["ssn"]}]`,
		`[{"name":"w","kind":"banned_words","mode":"pre_call","words":["x"],"categories":["hate"]}]`,
		`[{"name":"r","kind":"regex","mode":"pre_call","patterns":["x"],"model":"omni-moderation-latest"}]`,
		`[{"name":"r","kind":"regex","mode":"pre_call","patterns":[""]}]`,
	} {
		if _, err := ParseGuardrails([]byte(cfg)); err == nil {
			t.Errorf("accepted %s", cfg)
		}
	}
}
