package batch

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEndpointsDocumented: the endpoint enum of the OpenAPI document is Endpoints, so an
// endpoint added to one is added to the other.
func TestEndpointsDocumented(t *testing.T) {
	f, _ := reflect.TypeFor[CreateRequest]().FieldByName("Endpoint")
	var enum []string
	for _, part := range strings.Split(f.Tag.Get("jsonschema"), ",") {
		if v, ok := strings.CutPrefix(part, "enum="); ok {
			enum = append(enum, v)
		}
	}
	if !slices.Equal(enum, Endpoints) {
		t.Errorf("documented endpoints %v, accepted %v", enum, Endpoints)
	}
}
