package completions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sensitiveEntity is one kind of data a secrets or pii guardrail finds: a pattern, an
// optional check of each match (Luhn, IBAN checksum, digit count), and its mask.
type sensitiveEntity struct {
	name  string
	re    *regexp.Regexp
	valid func(string) bool // nil: every match counts
	// prefixes: a match failing valid may hold a valid one ending at a separator.
	prefixes bool
	mask     string
	// may is a cheap test a text must pass for re to be worth running (a '@' for an
	// email, enough digits for a card number): most texts hold no entity at all.
	may func(string) bool
}

// sensitiveEntities are the entities in the order they are looked for (the longer and
// stricter first: a card number is not taken for a phone number).
var sensitiveEntities = []sensitiveEntity{
	{name: "private_key", mask: "[PRIVATE_KEY]", may: func(s string) bool { return strings.Contains(s, "PRIVATE KEY-----") },
		re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
	{name: "api_key", mask: "[API_KEY]", may: mayHoldAPIKey,
		re: regexp.MustCompile(`\b(?:sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|xox[abposr]-[A-Za-z0-9-]{10,})`)},
	{name: "email", mask: "[EMAIL]", may: func(s string) bool { return strings.IndexByte(s, '@') > 0 },
		re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)},
	{name: "credit_card", mask: "[CREDIT_CARD]", valid: luhn, prefixes: true, may: func(s string) bool { return hasDigits(s, 13) },
		re: regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)},
	{name: "iban", mask: "[IBAN]", valid: ibanValid, prefixes: true, may: func(s string) bool { return hasDigits(s, 4) },
		re: regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`)},
	{name: "phone", mask: "[PHONE]", valid: phoneLike, may: func(s string) bool { return hasDigits(s, 8) },
		re: regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}\b`)},
}

// defaultEntities are what each kind looks for without Entities.
var defaultEntities = map[string][]string{
	GuardrailSecrets: {"api_key", "private_key"},
	GuardrailPII:     {"email", "phone", "credit_card", "iban"},
}

// sensitiveDataGuardrail masks or blocks the entities it finds (kinds secrets and pii).
type sensitiveDataGuardrail struct {
	entities []sensitiveEntity
	block    bool
}

// newSensitiveDataGuardrail checks c's action and entities (filling in the defaults).
func newSensitiveDataGuardrail(c *GuardrailConfig, field func(string) string) (Guardrail, error) {
	switch c.Action {
	case "":
		c.Action = GuardrailMask
		if c.Mode == GuardrailPostCall {
			c.Action = GuardrailBlock
		}
	case GuardrailMask:
		if c.Mode == GuardrailPostCall {
			return nil, invalid(field("action"), "mask rewrites what is sent upstream: it is for pre_call guardrails; a post_call guardrail blocks")
		}
	case GuardrailBlock:
	default:
		return nil, invalid(field("action"), "must be mask or block, got %q", c.Action)
	}
	names := c.Entities
	if len(names) == 0 {
		names = defaultEntities[c.Kind]
	}
	g := &sensitiveDataGuardrail{block: c.Action == GuardrailBlock}
	for i, n := range names {
		k := slices.IndexFunc(sensitiveEntities, func(e sensitiveEntity) bool { return e.name == n })
		if k < 0 {
			return nil, invalid(fmt.Sprintf("%s[%d]", field("entities"), i), "must be api_key, private_key, email, phone, credit_card or iban, got %q", n)
		}
	}
	for _, e := range sensitiveEntities { // in the order they are looked for
		if slices.Contains(names, e.name) {
			g.entities = append(g.entities, e)
		}
	}
	return g, nil
}

// Check masks the entities found in each text, or blocks naming the kinds found.
func (g *sensitiveDataGuardrail) Check(_ context.Context, in GuardrailInput) (GuardrailVerdict, error) {
	var out []string
	var found []string
	for i, text := range in.Texts {
		masked := text
		for _, e := range g.entities {
			if !e.may(masked) {
				continue
			}
			hit := false
			masked = e.re.ReplaceAllStringFunc(masked, func(m string) string {
				if e.valid == nil || e.valid(m) {
					hit = true
					return e.mask
				}
				if e.prefixes {
					// The longest match may run on into what follows (a card number and
					// its CVV, an IBAN and a currency): its shorter prefixes ending at a
					// separator are tried, longest first.
					for k := len(m) - 1; k > 0; k-- {
						if (m[k] == ' ' || m[k] == '-') && e.valid(m[:k]) {
							hit = true
							return e.mask + m[k:]
						}
					}
				}
				return m
			})
			if hit && !slices.Contains(found, e.name) {
				found = append(found, e.name)
			}
		}
		if masked != text {
			if out == nil {
				out = slices.Clone(in.Texts)
			}
			out[i] = masked
		}
	}
	if len(found) == 0 {
		return GuardrailVerdict{}, nil
	}
	if g.block {
		return GuardrailVerdict{Blocked: true, Reason: "found " + strings.Join(found, ", ")}, nil
	}
	return GuardrailVerdict{Texts: out}, nil
}

// apiKeyPrefixes start the API keys the api_key entity finds.
var apiKeyPrefixes = []string{"sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox"}

// mayHoldAPIKey reports whether s holds a prefix of an API key.
func mayHoldAPIKey(s string) bool {
	for _, p := range apiKeyPrefixes {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// hasDigits reports whether s holds at least n decimal digits.
func hasDigits(s string, n int) bool {
	for i := 0; i < len(s) && n > 0; i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n--
		}
	}
	return n == 0
}

// digits returns the decimal digits of s.
func digits(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i]-'0')
		}
	}
	return out
}

// luhn reports whether s's 13 to 19 digits pass the Luhn check (card numbers).
func luhn(s string) bool {
	d := digits(s)
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i])
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// ibanValid reports whether s (spaces allowed) passes the IBAN mod-97 check.
func ibanValid(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&b, "%d", r-'A'+10)
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// isoDate starts a match that is a date ("2024-01-15", maybe with its time's hour).
var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\b`)

// phoneLike reports whether s has 8 to 15 digits (ITU E.164's most): shorter groups of
// digits are dates, versions and amounts. An ISO date is not a phone number, nor are
// groups joined by dots only (IPv4 addresses, versions such as 2024.10.15) unless
// shaped as a dotted phone number is (555.123.4567, 01.23.45.67.89) or marked as one
// by a + or a parenthesised area code.
func phoneLike(s string) bool {
	n := len(digits(s))
	if n < 8 || n > 15 || isoDate.MatchString(s) {
		return false
	}
	if strings.ContainsAny(s, "+(") || !strings.Contains(s, ".") || strings.ContainsAny(s, " -") {
		return true
	}
	groups := strings.Split(s, ".")
	if len(groups) == 3 && len(groups[0]) == 3 && len(groups[1]) == 3 && len(groups[2]) == 4 {
		return true
	}
	for _, g := range groups {
		if len(g) != 2 {
			return false
		}
	}
	return len(groups) == 5
}

// regexGuardrail blocks text matching one of its expressions (kind regex).
type regexGuardrail struct {
	res []*regexp.Regexp
}

// bannedWordsGuardrail blocks text holding one of its words or phrases, in any case, not
// inside a longer word (kind banned_words). It searches the lower-cased text with
// strings.Index, much faster than a case-insensitive regular expression with word
// boundaries.
type bannedWordsGuardrail struct {
	words []string // lower-cased
}

// newBannedWordsGuardrail compiles c.Words as one case-insensitive whole-word expression
// each.
func newBannedWordsGuardrail(c GuardrailConfig, field func(string) string) (Guardrail, error) {
	if len(c.Words) == 0 {
		return nil, invalid(field("words"), "a banned_words guardrail needs at least one word")
	}
	g := &bannedWordsGuardrail{}
	for i, w := range c.Words {
		w = strings.TrimSpace(w)
		if w == "" {
			return nil, invalid(fmt.Sprintf("%s[%d]", field("words"), i), "must not be empty")
		}
		g.words = append(g.words, strings.ToLower(w))
	}
	if len(c.Patterns) > 0 {
		return nil, invalid(field("patterns"), "belongs to the regex kind; banned_words takes words")
	}
	return g, nil
}

// newRegexGuardrail compiles c.Patterns.
func newRegexGuardrail(c GuardrailConfig, field func(string) string) (Guardrail, error) {
	if len(c.Patterns) == 0 {
		return nil, invalid(field("patterns"), "a regex guardrail needs at least one pattern")
	}
	if len(c.Words) > 0 {
		return nil, invalid(field("words"), "belongs to the banned_words kind; regex takes patterns")
	}
	g := &regexGuardrail{}
	for i, p := range c.Patterns {
		if p == "" { // it would match, and block, every text
			return nil, invalid(fmt.Sprintf("%s[%d]", field("patterns"), i), "must not be empty")
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, invalid(fmt.Sprintf("%s[%d]", field("patterns"), i), "is not a valid regular expression: %v", err)
		}
		g.res = append(g.res, re)
	}
	return g, nil
}

// isWordRune reports whether r is a word character: a letter, a digit or '_' in any
// script (a no-break space, a typographic apostrophe, a dash or CJK punctuation is not).
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// Check blocks the first text matching an expression, naming the expression by index
// (the reason does not repeat the text).
func (g *regexGuardrail) Check(_ context.Context, in GuardrailInput) (GuardrailVerdict, error) {
	for _, text := range in.Texts {
		for i, re := range g.res {
			if re.MatchString(text) {
				return GuardrailVerdict{Blocked: true, Reason: fmt.Sprintf("matched pattern %d", i)}, nil
			}
		}
	}
	return GuardrailVerdict{}, nil
}

// Check blocks the first text holding a banned word, naming the word by index (the reason
// does not repeat it).
func (g *bannedWordsGuardrail) Check(_ context.Context, in GuardrailInput) (GuardrailVerdict, error) {
	for _, text := range in.Texts {
		lower := strings.ToLower(text)
		for i, w := range g.words {
			if containsWord(lower, w) {
				return GuardrailVerdict{Blocked: true, Reason: fmt.Sprintf("matched banned word %d", i)}, nil
			}
		}
	}
	return GuardrailVerdict{}, nil
}

// containsWord reports whether s holds w not inside a longer word: where w starts (ends)
// with a word character, the one before (after) it in s is not one.
func containsWord(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(w)
		first, _ := utf8.DecodeRuneInString(w)
		last, _ := utf8.DecodeLastRuneInString(w)
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		next, _ := utf8.DecodeRuneInString(s[end:])
		before := i == 0 || !isWordRune(first) || !isWordRune(prev)
		after := end == len(s) || !isWordRune(last) || !isWordRune(next)
		if before && after {
			return true
		}
		from = i + 1
	}
}

// moderationGuardrail classifies the text with a moderation model (Gateway.Moderate).
type moderationGuardrail struct {
	g          *Gateway
	model      string
	categories []string
}

// newModerationGuardrail checks c's model (when g is known) and categories.
func newModerationGuardrail(g *Gateway, c GuardrailConfig, field func(string) string) (Guardrail, error) {
	for i, cat := range c.Categories {
		if strings.TrimSpace(cat) == "" {
			return nil, invalid(fmt.Sprintf("%s[%d]", field("categories"), i), "must not be empty")
		}
	}
	if len(c.Words) > 0 || len(c.Patterns) > 0 {
		return nil, invalid(field("words"), "words and patterns belong to the banned_words and regex kinds")
	}
	model := cmp.Or(c.Model, DefaultModerationModel)
	if g != nil {
		if _, err := g.moderationTargets(model); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				return nil, invalid(field("model"), "%s", ve.Message)
			}
			return nil, invalid(field("model"), "%v", err)
		}
	}
	return &moderationGuardrail{g: g, model: model, categories: c.Categories}, nil
}

// Check sends the texts to the moderation model, a result each, and blocks when one is
// flagged (in one of the categories, when they are set). The call is the caller's
// moderation request (recorded in the ledger and by the observer under its owner), not
// held to its key's model list: the gateway makes it, not the caller.
func (m *moderationGuardrail) Check(ctx context.Context, in GuardrailInput) (GuardrailVerdict, error) {
	var texts []string
	for _, t := range in.Texts {
		if strings.TrimSpace(t) != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) == 0 {
		return GuardrailVerdict{}, nil
	}
	input, err := json.Marshal(texts)
	if err != nil {
		return GuardrailVerdict{}, err
	}
	scope := Scope{Owner: in.Scope.Owner, Tag: in.Scope.Tag, CallTimeout: in.Scope.CallTimeout}
	resp, err := m.g.Moderate(ctx, scope, &ModerationRequest{Model: m.model, Input: ModerationInput(input)})
	if err != nil {
		return GuardrailVerdict{}, err
	}
	for _, raw := range resp.Results {
		var r struct {
			Flagged    bool            `json:"flagged"`
			Categories map[string]bool `json:"categories"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return GuardrailVerdict{}, fmt.Errorf("moderation result: %w", err)
		}
		var hit []string
		for cat, on := range r.Categories {
			if on && (len(m.categories) == 0 || slices.Contains(m.categories, cat)) {
				hit = append(hit, cat)
			}
		}
		slices.Sort(hit)
		switch {
		case len(hit) > 0:
			return GuardrailVerdict{Blocked: true, Reason: resp.Model + " flagged " + strings.Join(hit, ", ")}, nil
		case r.Flagged && len(m.categories) == 0:
			return GuardrailVerdict{Blocked: true, Reason: resp.Model + " flagged the text"}, nil
		}
	}
	return GuardrailVerdict{}, nil
}
