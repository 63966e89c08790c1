package completions

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MaxTags bounds a request's tags.
const MaxTags = 16

// BatchTagPrefix starts the tag a batch's lines carry (batch:<id>, added by the server): one
// such tag is not counted against MaxTags, so a request that is valid alone is valid as a
// batch line.
const BatchTagPrefix = "batch:"

// CheckTags validates request tags (field names them in the error): at most MaxTags (and
// one batch:<id> tag), each 1-64 characters of letters, digits and . _ : / - (they become
// keys of the usage log's totals, and a header carries them comma-separated), which may
// start with one of LiteLLM's tag-routing marks: "!" (ExcludeTagMark: the deployments
// carrying the rest are left out) or "&" (RequireTagMark: only those carrying it); a mark
// may also follow a ':' (after a tag-routing prefix: ModelGroup.TagRoutePrefix).
func CheckTags(field string, tags []string) error {
	n := len(tags)
	for _, t := range tags {
		if strings.HasPrefix(t, BatchTagPrefix) {
			n--
			break
		}
	}
	if n > MaxTags {
		return invalid(field, "at most %d tags, got %d", MaxTags, n)
	}
	for i, t := range tags {
		bare := t
		if tagMark(t) != 0 {
			bare = t[1:]
		}
		if bare == "" || len(t) > 64 || !tagChars(bare) {
			return invalid(field, "tag %d %q must be 1-64 letters, digits or . _ : / - (after a leading ! or &, or one right after a :)", i, t)
		}
	}
	return nil
}

// Tag-routing marks a request's tag may start with (LiteLLM's): a tag-filtered model
// group leaves out the members carrying an excluded tag and keeps only those carrying
// every required one. A deployment's own tags carry no mark (CheckDeploymentTags).
const (
	ExcludeTagMark = '!'
	RequireTagMark = '&'
)

// tagChars reports whether bare, a tag after its mark, is letters, digits and . _ : / -,
// with at most one mark right after each ':' and not last: a tag_routing_prefix such as
// "route:" (ModelGroup.TagRoutePrefix) goes before the mark ("route:!provider:openai").
func tagChars(bare string) bool {
	for i := 0; i < len(bare); i++ {
		c := bare[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:/-", c) >= 0:
		case (c == ExcludeTagMark || c == RequireTagMark) && i > 0 && bare[i-1] == ':' && i+1 < len(bare) && bare[i+1] != ExcludeTagMark && bare[i+1] != RequireTagMark:
		default:
			return false
		}
	}
	return true
}

// CheckDeploymentTags validates the tags of a deployment (a model group member) or the
// name of a tag as CheckTags does, refusing the marks a request's tags may hold:
// a deployment carries tags, it does not exclude or require them.
func CheckDeploymentTags(field string, tags []string) error {
	if err := CheckTags(field, tags); err != nil {
		return err
	}
	for i, t := range tags {
		if j := strings.IndexAny(t, "!&"); j >= 0 {
			return invalid(field, "tag %d %q must not hold %q: ! and & mark a request's tags (leave out, require)", i, t, t[j])
		}
	}
	return nil
}

// AddTags returns tags with more appended, each once, in order.
func AddTags(tags []string, more ...string) []string {
	for _, t := range more {
		seen := false
		for _, have := range tags {
			seen = seen || have == t
		}
		if !seen {
			tags = append(tags, t)
		}
	}
	return tags
}

// metadataTags reads the tags of a request's metadata object (LiteLLM's "tags": an array
// of strings, or one comma-separated string); other members are OpenAI's key-value pairs,
// ignored. A metadata that is not an object, or tags of another type, is an error naming
// the field.
func metadataTags(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalid("metadata", "must be an object")
	}
	t, ok := m["tags"]
	if !ok || bytes.Equal(bytes.TrimSpace(t), []byte("null")) {
		return nil, nil
	}
	var tags []string
	if err := json.Unmarshal(t, &tags); err != nil {
		var one string
		if json.Unmarshal(t, &one) != nil {
			return nil, invalid("metadata.tags", "must be an array of strings or a comma-separated string")
		}
		// OpenAI's metadata values are free strings (up to 512 characters): one that is not
		// a list of tags is an OpenAI value, not a mistake, and is ignored as the others.
		tags = AddTags(nil, SplitTags(one)...)
		if CheckTags("metadata.tags", tags) != nil {
			return nil, nil
		}
		return tags, nil
	}
	if err := CheckTags("metadata.tags", tags); err != nil {
		return nil, err
	}
	return AddTags(nil, tags...), nil
}

// requestTags reads LiteLLM's request-body tags (field): an array of strings or one
// comma-separated string, each tag checked by CheckTags; absent or null is none.
func requestTags(field string, raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var tags []string
	if err := json.Unmarshal(raw, &tags); err != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil, invalid(field, "must be an array of strings or a comma-separated string")
		}
		tags = SplitTags(one)
	}
	if err := CheckTags(field, tags); err != nil {
		return nil, err
	}
	return AddTags(nil, tags...), nil
}

// SplitTags splits a comma-separated list of tags (a header's), dropping empty items.
func SplitTags(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// BodyMetadataTags returns the tags a request body carries in LiteLLM's metadata.tags and
// litellm_metadata.tags (as chat requests read them), for the operations whose request
// types have no metadata (embeddings, rerank, moderation, images): what LiteLLM's tag
// routing and spend tracking read on every route. A body that is not a JSON object, or has
// neither, has none; a malformed value is a *ValidationError naming it.
func BodyMetadataTags(body []byte) ([]string, error) {
	var b struct {
		Metadata        json.RawMessage `json:"metadata"`
		LiteLLMMetadata struct {
			Tags json.RawMessage `json:"tags"`
		} `json:"litellm_metadata"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil, nil // not an object of these fields: the request's own decoding says why
	}
	tags, err := metadataTags(b.Metadata)
	if err != nil {
		return nil, err
	}
	more, err := requestTags("litellm_metadata.tags", b.LiteLLMMetadata.Tags)
	if err != nil {
		return nil, err
	}
	return AddTags(tags, more...), nil
}
