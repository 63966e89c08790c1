package providers

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// sovereignEntra answers token requests to any login host with a token, recording the
// scope asked; other requests go to the real transport (the fake deployment).
type sovereignEntra struct {
	mu     sync.Mutex
	scopes []string
}

func (s *sovereignEntra) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
		return http.DefaultTransport.RoundTrip(r)
	}
	b, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(b))
	s.mu.Lock()
	s.scopes = append(s.scopes, form.Get("scope"))
	s.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(`{"token_type":"Bearer","expires_in":3600,"access_token":"tok"}`))}, nil
}

// Azure Government's and Azure China's Azure OpenAI take tokens for their own
// Cognitive Services audience (https://cognitiveservices.azure.us/.default,
// https://cognitiveservices.azure.cn/.default): with their authority host the public
// cloud's scope gets AADSTS500011 or a token the resource refuses.
func TestReview15bSovereignCloudScope(t *testing.T) {
	for _, c := range []struct{ authority, scope string }{
		{"https://login.microsoftonline.us/", "https://cognitiveservices.azure.us/.default"},
		{"https://login.microsoftonline.us", "https://cognitiveservices.azure.us/.default"},
		{"https://login.chinacloudapi.cn/", "https://cognitiveservices.azure.cn/.default"},
		{"https://login.microsoftonline.com/", AzureTokenScope},
	} {
		dep, rt := newFakeDeployment(t), &sovereignEntra{}
		a := NewAzure(AzureConfig{Config: Config{BaseURL: dep.srv.URL, HTTPClient: &http.Client{Transport: rt}},
			TenantID: entraTestTenant, ClientID: entraTestClient, ClientSecret: entraTestSecret, AuthorityHost: c.authority})
		if _, err := a.Complete(context.Background(), hello("dep")); err != nil {
			t.Fatalf("%s: %v", c.authority, err)
		}
		if len(rt.scopes) != 1 || rt.scopes[0] != c.scope {
			t.Errorf("authority %s: scopes asked %q, want %q", c.authority, rt.scopes, c.scope)
		}
	}
}
