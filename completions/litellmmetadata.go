package completions

import "encoding/json"

// LiteLLMMetadata is LiteLLM's litellm_metadata request field: metadata for the gateway
// that no provider is sent. LiteLLM's clients use it where a surface's own metadata belongs
// to the provider (Anthropic's /v1/messages metadata takes only user_id). Only User is read:
// the end user the request is made for.
type LiteLLMMetadata struct {
	// User names the request's end user, as the body's user does.
	User string `json:"user,omitempty" jsonschema:"description=The end user the request is made for (LiteLLM's litellm_metadata.user; read after the body's user)"`
}

// EndUser is m's User; "" for a nil m.
func (m *LiteLLMMetadata) EndUser() string {
	if m == nil {
		return ""
	}
	return m.User
}

// MetadataUserID is the user_id string of an OpenAI-style metadata object, which LiteLLM
// reads as the end user after user and litellm_metadata.user; "" when metadata is absent,
// not an object, or has no string user_id.
func MetadataUserID(metadata json.RawMessage) string {
	if len(metadata) == 0 {
		return ""
	}
	var m struct {
		UserID json.RawMessage `json:"user_id"`
	}
	if json.Unmarshal(metadata, &m) != nil {
		return ""
	}
	var id string
	if json.Unmarshal(m.UserID, &id) != nil {
		return ""
	}
	return id
}
