package completions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// ModelGroup is a model name that stands for several models (Options.ModelGroups), as
// LiteLLM's model aliases and Not Diamond's router model do: a request to the
// OpenAI-compatible or Messages surfaces naming the group is answered by the first of
// Models that succeeds — in the order given, or, with Route, best first for the request's
// messages as the gateway's Ranker (the learned router) orders them. Clients that can name
// only one model (Claude Code, an OpenAI SDK app) get routing and fallbacks that way.
type ModelGroup struct {
	// Models are "provider/model" names, at least one.
	Models []string `json:"models"`
	// Route orders Models per request with the gateway's Ranker; without it they are tried
	// in the given order.
	Route bool `json:"route,omitempty"`
	// Tradeoff, with Route, is "cost" or "latency": the cheapest (fastest) model whose
	// estimated quality is within the router's tolerance of the best comes first.
	Tradeoff string `json:"tradeoff,omitempty"`
}

// TradeoffRanker is a Ranker that can put the cheapest or fastest model within its
// tolerance of the best first (routing.CompletionsRanker).
type TradeoffRanker interface {
	RankTradeoff(ctx context.Context, messages []providers.Message, models []string, tradeoff string) ([]string, error)
}

// groupNameRE is a group name: no "/" (which would read as provider/model).
var groupNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// checkModelGroups validates groups; errors wrap ErrInvalid and name the group.
func checkModelGroups(groups map[string]ModelGroup) error {
	for name, g := range groups {
		if !groupNameRE.MatchString(name) {
			return fmt.Errorf("%w: model group %q: a name is 1-64 letters, digits, '_', '.', ':' or '-' (no '/')", ErrInvalid, name)
		}
		if len(g.Models) == 0 || len(g.Models) > MaxModels {
			return fmt.Errorf("%w: model group %q: 1 to %d models, got %d", ErrInvalid, name, MaxModels, len(g.Models))
		}
		for _, m := range g.Models {
			if _, _, err := providers.ParseModel(m); err != nil {
				return fmt.Errorf("%w: model group %q: %q is not of the form provider/model", ErrInvalid, name, m)
			}
		}
		switch {
		case g.Tradeoff != "" && g.Tradeoff != "cost" && g.Tradeoff != "latency":
			return fmt.Errorf("%w: model group %q: tradeoff must be cost or latency, got %q", ErrInvalid, name, g.Tradeoff)
		case g.Tradeoff != "" && !g.Route:
			return fmt.Errorf("%w: model group %q: tradeoff needs route: true", ErrInvalid, name)
		}
	}
	return nil
}

// ParseModelGroups reads a model groups document: a JSON object of group name to group
// ({"smart": {"models": ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"], "route": true}}).
// Errors say where (line and column) or which group.
func ParseModelGroups(b []byte) (map[string]ModelGroup, error) {
	var groups map[string]ModelGroup
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&groups); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Errorf("%w: invalid JSON: %v (%s)", ErrInvalid, err, lineCol(b, syn.Offset))
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%w: invalid JSON: %v (%s)", ErrInvalid, err, lineCol(b, typ.Offset))
		}
		return nil, fmt.Errorf("%w: invalid JSON: %v", ErrInvalid, err)
	}
	if err := checkModelGroups(groups); err != nil {
		return nil, err
	}
	return groups, nil
}

// LoadModelGroups reads ParseModelGroups' document from path.
func LoadModelGroups(path string) (map[string]ModelGroup, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("completions: reading model groups: %w", err)
	}
	return ParseModelGroups(b)
}

// lineCol is "line L, column C" of byte offset off in b (1-based).
func lineCol(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(b[:off], '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// ModelGroups lists the gateway's model group names, sorted.
func (g *Gateway) ModelGroups() []string {
	names := make([]string, 0, len(g.opts.ModelGroups))
	for n := range g.opts.ModelGroups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// expandGroups returns models with each model group's name (on the OpenAI-compatible and
// Messages surfaces) replaced by its models, and the group of a request whose models are
// one group (its routing preferences apply), else nil.
func (g *Gateway) expandGroups(models []string, bare bool) ([]string, *ModelGroup) {
	if !bare || len(g.opts.ModelGroups) == 0 || !slices.ContainsFunc(models, func(m string) bool { _, ok := g.opts.ModelGroups[m]; return ok }) {
		return models, nil
	}
	var out []string
	var only *ModelGroup
	for _, m := range models {
		grp, ok := g.opts.ModelGroups[strings.TrimSpace(m)]
		if !ok {
			out = append(out, m)
			continue
		}
		out = append(out, grp.Models...)
		if len(models) == 1 {
			only = &grp
		}
	}
	return out, only
}
