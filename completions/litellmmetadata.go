package completions

import "encoding/json"

// LiteLLMMetadata is LiteLLM's litellm_metadata request field: metadata for the gateway
// that no provider is sent. LiteLLM's clients use it where a surface's own metadata belongs
// to the provider (Anthropic's /v1/messages metadata takes only user_id). User and Tags
// are read: the end user the request is made for, and the request's tags.
type LiteLLMMetadata struct {
	// User names the request's end user, as the body's user does.
	User string `json:"user,omitempty" jsonschema:"description=The end user the request is made for (LiteLLM's litellm_metadata.user; read after the body's user)"`
	// Tags are the request's tags, as metadata.tags are (an array of strings or one
	// comma-separated string): LiteLLM's clients put them here on /v1/messages and
	// /v1/responses, where LiteLLM keeps its metadata.
	Tags json.RawMessage `json:"tags,omitempty" jsonschema:"oneof_type=array;string,description=The request's tags (LiteLLM's litellm_metadata.tags): added to metadata.tags and tags"`
}

// UnmarshalJSON reads LiteLLM's litellm_metadata as LiteLLM does: any JSON value is
// taken (only an object's user is read), and a numeric user is its decimal text.
func (m *LiteLLMMetadata) UnmarshalJSON(b []byte) error {
	var obj struct {
		User json.RawMessage `json:"user"`
		Tags json.RawMessage `json:"tags"`
	}
	*m = LiteLLMMetadata{}
	if json.Unmarshal(b, &obj) != nil {
		return nil // not an object: nothing LiteLLM reads
	}
	m.User, m.Tags = scalarText(obj.User), obj.Tags
	return nil
}

// scalarText is a JSON string's value or a JSON number's text ("" for anything else), as
// LiteLLM's str() of an end user id.
func scalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// EndUser is m's User; "" for a nil m.
func (m *LiteLLMMetadata) EndUser() string {
	if m == nil {
		return ""
	}
	return m.User
}

// MetadataUserID is the user_id of an OpenAI-style metadata object (a string, or a
// number's text), which LiteLLM reads as the end user after user and
// litellm_metadata.user; "" when metadata is absent, not an object, or has no such
// user_id.
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
	return scalarText(m.UserID)
}
