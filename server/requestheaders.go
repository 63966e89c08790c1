package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
)

// applyRequestHeaders adds what a request's headers say to it: Cache-Control (see
// applyCacheHeader) and tags, from X-Switchyard-Tags or LiteLLM's x-litellm-tags
// (comma-separated; added to the body's).
func applyRequestHeaders(r *http.Request, req *completions.Request) error {
	if err := applyCacheHeader(r, req); err != nil {
		return err
	}
	tags, err := headerTags(r, req.Tags)
	req.Tags = tags
	return err
}

// headerTags adds the tags of X-Switchyard-Tags and LiteLLM's x-litellm-tags
// (comma-separated), then those of the calling virtual key (requestKeyTags), to tags, the
// body's; the body's alone are checked with the rest of the body.
func headerTags(r *http.Request, tags []string) ([]string, error) {
	var fromHeader []string
	for _, h := range []string{"X-Switchyard-Tags", "X-Litellm-Tags"} {
		for _, v := range r.Header.Values(h) {
			fromHeader = append(fromHeader, completions.SplitTags(v)...)
		}
	}
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok && info.rejectClientTags &&
		slices.ContainsFunc(append(slices.Clip(tags), fromHeader...), func(t string) bool { return !strings.HasPrefix(t, completions.BatchTagPrefix) }) {
		e := Validation(http.StatusBadRequest, "Client-side 'metadata.tags' not allowed in request. 'reject_clientside_metadata_tags'=True. Tags can only be set via API key metadata.")
		e.Param = "metadata.tags"
		return tags, e
	}
	withKey := requestKeyTags(r, nil)
	if len(fromHeader) == 0 && len(withKey) == 0 {
		return tags, nil
	}
	tags = completions.AddTags(tags, fromHeader...)
	tags = completions.AddTags(tags, withKey...)
	if err := completions.CheckTags("X-Switchyard-Tags", tags); err != nil {
		return tags, Validation(http.StatusBadRequest, "%s (the key's, the header's and the body's together)", userMessage(err))
	}
	return tags, nil
}
