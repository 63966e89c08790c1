package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// A virtual key's tags are LiteLLM's key-level tags: kept in its metadata as "tags" (where
// LiteLLM's /key/generate tags field puts them), they are added to every request the key
// makes — its tag routing, its tag budgets (POST /tag/new) and the usage log's per-tag
// totals see them as the request's own.

// keyTags returns the tags of a key's metadata (its "tags" label), checked as request tags
// are; none without the label.
func keyTags(md map[string]any) ([]string, error) {
	return checkKeyTags("metadata.tags", md["tags"], "the key's tags: every request of the key carries them")
}

// teamTags returns the tags of a team's metadata (its "tags" label, LiteLLM's team-level
// tags), checked as keyTags checks a key's: every request of the team's keys carries them
// after the key's own (as LiteLLM's proxy merges them); none without the label.
func teamTags(md map[string]any) ([]string, error) {
	return checkKeyTags("metadata.tags", md["tags"], "the team's tags: every request of its keys carries them")
}

// checkKeyTags checks raw, a key's or a team's tags given as field (a JSON list of
// strings; nil: none), as request tags are, and returns them without repeats; whose says
// what they are for the error.
func checkKeyTags(field string, raw any, whose string) ([]string, error) {
	invalid := func(format string, args ...any) error {
		e := Validation(http.StatusUnprocessableEntity, format, args...)
		e.Param = field
		return e
	}
	if raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, invalid("%s: must be a list of tags, got %T (%s)", field, raw, whose)
	}
	tags := make([]string, 0, len(list))
	for i, v := range list {
		t, ok := v.(string)
		if !ok {
			return nil, invalid("%s[%d]: must be a string, got %T", field, i, v)
		}
		if strings.HasPrefix(t, completions.BatchTagPrefix) {
			return nil, invalid("%s[%d]: %q: tags starting %s are the batches' own", field, i, t, completions.BatchTagPrefix)
		}
		tags = append(tags, t)
	}
	if err := completions.CheckTags(field, tags); err != nil {
		return nil, invalid("%s (%s)", userMessage(err), whose)
	}
	return completions.AddTags(nil, tags...), nil
}

// linkTags puts req.Tags, given in a native request, into req's metadata as its tags label
// (none: removed), or answers 422 naming tags when they are not tags. Tags given beside a
// metadata.tags label of other tags win and replace it, as LiteLLM's /key/generate sets
// the top-level tags into the metadata after it (and as a team's do).
func (req *keyRequest) linkTags() error {
	md, err := linkTagsLabel(req.Tags, req.Metadata, "the key's tags: every request of the key carries them")
	if err != nil {
		return err
	}
	req.Metadata = md
	return nil
}

// linkTags puts req.Tags, given in a team request, into req's metadata as its tags label
// (none: removed), or answers 422 naming tags when they are not tags; tags given beside a
// metadata.tags label of other tags win and replace it, as LiteLLM's /team/new and
// /team/update set the top-level tags into the metadata after it.
func (req *teamRequest) linkTags() error {
	md, err := linkTagsLabel(req.Tags, req.Metadata, "the team's tags: every request of its keys carries them")
	if err != nil {
		return err
	}
	req.Metadata = md
	return nil
}

// linkTagsLabel returns a copy of md with its tags label set to given, tags given apart as
// the field tags (none: removed; a tags label of md, other tags or none, replaced), or
// answers 422 naming tags when they are not tags; whose says what the tags are for the
// error.
func linkTagsLabel(given []string, md map[string]any, whose string) (map[string]any, error) {
	list := make([]any, len(given))
	for i, t := range given {
		list[i] = t
	}
	tags, err := checkKeyTags("tags", list, whose)
	if err != nil {
		return nil, err
	}
	return withKeyTags(md, tags), nil
}

// withKeyTags returns a copy of a key's metadata md with its tags label set to tags (none:
// removed).
func withKeyTags(md map[string]any, tags []string) map[string]any {
	out := maps.Clone(md)
	if out == nil {
		out = map[string]any{}
	}
	if len(tags) == 0 {
		delete(out, "tags")
	} else {
		list := make([]any, len(tags))
		for i, t := range tags {
			list[i] = t
		}
		out["tags"] = list
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// requestKeyTags adds the tags of the virtual key r is made with (keyTags, then its team's
// teamTags, kept in its scope) to tags, the request's; the request's alone when r's key is
// not a virtual key or has none.
func requestKeyTags(r *http.Request, tags []string) []string {
	p, _ := PrincipalFrom(r.Context())
	if vk, ok := p.Scope.(virtualKeyScope); ok && len(vk.Tags) > 0 {
		return completions.AddTags(tags, vk.Tags...)
	}
	return tags
}

// checkKeyTeamTags answers 422 naming metadata.tags when a key of owner's team teamID ("":
// none), read through rd, whose metadata is md would carry more than completions.MaxTags
// tags with the team's (teamTags): every request of the key carries both, and a request
// may carry no more, so each of them would be refused.
func checkKeyTeamTags(ctx context.Context, rd store.Reader, owner, teamID string, md map[string]any) error {
	if teamID == "" {
		return nil
	}
	own, err := keyTags(md)
	if err != nil || len(own) == 0 {
		return err
	}
	t, err := storedTeamOf(ctx, rd, owner, teamID)
	if err != nil {
		return err
	}
	team, err := teamTags(t.Metadata)
	if err != nil { // a label an earlier build kept unchecked: not added to requests
		return nil
	}
	if n := len(completions.AddTags(slices.Clone(own), team...)); n > completions.MaxTags {
		e := Validation(http.StatusUnprocessableEntity, "metadata.tags: the key's %d tags and the %d of its team %s make %d, more than the %d a request may carry (every request of the key carries both)",
			len(own), len(team), teamID, n, completions.MaxTags)
		e.Param = "metadata.tags"
		return e
	}
	return nil
}

// checkTeamKeysTags answers 422 naming metadata.tags when tags, the new tags of owner's
// team teamID, and the tags of a virtual key of the team, read through rd, would be more
// than completions.MaxTags together (checkKeyTeamTags), naming the key.
func checkTeamKeysTags(ctx context.Context, rd store.Reader, owner, teamID string, tags []string) error {
	if len(tags) == 0 {
		return nil
	}
	return eachTeamKey(ctx, rd, owner, teamID, func(rec storedVirtualKey) error {
		own, err := keyTags(rec.Metadata)
		if err != nil || len(own) == 0 {
			return nil
		}
		if n := len(completions.AddTags(slices.Clone(own), tags...)); n > completions.MaxTags {
			e := Validation(http.StatusUnprocessableEntity, "metadata.tags: the team's %d tags and the %d of its key %s make %d, more than the %d a request may carry (every request of the key carries both): remove some of the key's first",
				len(tags), len(own), rec.ID, n, completions.MaxTags)
			e.Param = "metadata.tags"
			return e
		}
		return nil
	})
}

// eachTeamKey calls fn with each virtual key of owner's team teamID, read through rd, and
// stops at the first error fn returns.
func eachTeamKey(ctx context.Context, rd store.Reader, owner, teamID string, fn func(storedVirtualKey) error) error {
	es, err := rd.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return fmt.Errorf("server: listing the keys of team %s: %w", teamID, err)
	}
	for _, e := range es {
		rec, err := readKeyRecord(e.Value)
		if err != nil {
			return fmt.Errorf("server: key record %s: %w", e.Key, err)
		}
		if rec.TeamID != teamID {
			continue
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}
