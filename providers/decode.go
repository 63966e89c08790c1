package providers

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// upstreamJSON keeps encoding/json's leniency for what upstreams send: invalid UTF-8 is
// replaced rather than rejected, a repeated name keeps its last value and names match
// without regard to case.
var upstreamJSON = jsonv2.JoinOptions(
	jsontext.AllowInvalidUTF8(true),
	jsontext.AllowDuplicateNames(true),
	jsonv2.MatchCaseInsensitiveNames(true),
)

// decodeUpstream unmarshals an upstream response body or stream event into v. It uses the
// encoding/json/v2 implementation, which decodes a typical stream chunk in about half the
// time and a quarter of the allocations of encoding/json: this runs once per relayed
// fragment, the gateway's hottest loop.
func decodeUpstream(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, upstreamJSON)
}
