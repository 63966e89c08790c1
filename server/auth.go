package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// Owner identifies the key (a prefix of its SHA-256 hash); capabilities scope jobs,
	// models and conversations to it.
	Owner string
	// Scope is set for temporary keys minted by the server (e.g. a sandboxed agent's key);
	// capabilities interpret it. Nil for ordinary keys.
	Scope any
}

type principalKey struct{}

// PrincipalFrom returns the caller of an authenticated request.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok && info.authenticated {
		return info.principal, true
	}
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

func owner(r *http.Request) string {
	p, _ := PrincipalFrom(r.Context())
	return p.Owner
}

// storedKey is what the store keeps of a key: never the key itself.
type storedKey struct {
	Owner     string    `json:"owner"`
	Label     string    `json:"label,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Auth checks bearer keys: keys given at start (e.g. SWITCHYARD_API_KEYS), keys kept in the
// store (as SHA-256 hashes only), temporary scoped keys held in memory, and shared scoped
// keys that another process on the same store minted (sharedkeys.go).
type Auth struct {
	store     *store.Store
	static    [][sha256.Size]byte
	owners    map[string]bool // the static keys' owners
	mu        sync.RWMutex
	temporary map[[sha256.Size]byte]Principal
	resolver  ScopeResolver // shared keys of other processes (sharedkeys.go)
	// stored caches, for a minute, owners seen to have a stored key (ownerLive).
	stored map[string]time.Time
}

func newAuth(st *store.Store, keys []string) *Auth {
	a := &Auth{store: st, temporary: map[[sha256.Size]byte]Principal{}, owners: map[string]bool{}, stored: map[string]time.Time{}}
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			h := sha256.Sum256([]byte(k))
			a.static = append(a.static, h)
			a.owners[ownerOf(h)] = true
		}
	}
	return a
}

// ownerLive reports whether owner is still a key of this server: one given at start or
// one kept in the store. A virtual key acts for its issuer and stops with it.
func (a *Auth) ownerLive(ctx context.Context, owner string) (bool, error) {
	if a.owners[owner] {
		return true, nil
	}
	a.mu.RLock()
	seen, ok := a.stored[owner]
	a.mu.RUnlock()
	if ok && time.Since(seen) < time.Minute {
		return true, nil
	}
	if a.store == nil {
		return false, nil
	}
	es, err := a.store.List(ctx, store.APIKeys, store.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("auth: reading key store: %w: %w", ErrKeyStoreUnavailable, err)
	}
	for _, e := range es {
		var sk storedKey
		if json.Unmarshal(e.Value, &sk) == nil && sk.Owner == owner {
			a.mu.Lock()
			a.stored[owner] = time.Now()
			a.mu.Unlock()
			return true, nil
		}
	}
	return false, nil
}

func ownerOf(h [sha256.Size]byte) string { return "key_" + hex.EncodeToString(h[:8]) }

// ErrNoKey means the request carried no usable bearer key.
var ErrNoKey = errors.New("missing or invalid API key")

// ErrKeyStoreUnavailable means the store holding the keys did not answer (its database
// restarting or failing over): the key may be valid, and the request may be sent again.
var ErrKeyStoreUnavailable = errors.New("the key store does not answer")

// Authenticate returns the principal of a presented key.
func (a *Auth) Authenticate(ctx context.Context, key string) (Principal, error) {
	if key == "" {
		return Principal{}, ErrNoKey
	}
	return a.authenticateHash(ctx, sha256.Sum256([]byte(key)))
}

// Credential is what the server keeps to act later as the key of r (a batch runs its
// lines as the key that created it): the hex SHA-256 of the key, never the key itself.
func Credential(r *http.Request) string {
	h := sha256.Sum256([]byte(bearer(r)))
	return hex.EncodeToString(h[:])
}

// PrincipalOf returns the principal of the key a Credential was made from, as
// Authenticate does for the key itself: ErrNoKey once the key is deleted, revoked,
// expired or retired.
func (a *Auth) PrincipalOf(ctx context.Context, credential string) (Principal, error) {
	b, err := hex.DecodeString(credential)
	if err != nil || len(b) != sha256.Size {
		return Principal{}, ErrNoKey
	}
	var h [sha256.Size]byte
	copy(h[:], b)
	return a.authenticateHash(ctx, h)
}

// authenticateHash returns the principal of the key whose SHA-256 is h.
func (a *Auth) authenticateHash(ctx context.Context, h [sha256.Size]byte) (Principal, error) {
	found := 0
	for _, s := range a.static {
		// Compare every key so the time taken does not say which one matched.
		found |= subtle.ConstantTimeCompare(h[:], s[:])
	}
	if found == 1 {
		return Principal{Owner: ownerOf(h)}, nil
	}
	a.mu.RLock()
	p, ok := a.temporary[h]
	a.mu.RUnlock()
	if ok {
		return p, nil
	}
	if a.store != nil {
		sk, err := store.GetJSON[storedKey](ctx, a.store, store.APIKeys, hex.EncodeToString(h[:]))
		if err == nil {
			return Principal{Owner: sk.Owner}, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return Principal{}, fmt.Errorf("auth: reading key store: %w: %w", ErrKeyStoreUnavailable, err)
		}
		p, ok, err := a.sharedKey(ctx, h)
		if err != nil {
			return Principal{}, err
		}
		if ok {
			return p, nil
		}
	}
	return Principal{}, ErrNoKey
}

// AddTemporaryKey makes key valid for owner with the given scope until the returned function
// is called. The key is held only as a hash.
func (a *Auth) AddTemporaryKey(key, owner string, scope any) (revoke func()) {
	h := sha256.Sum256([]byte(key))
	a.mu.Lock()
	a.temporary[h] = Principal{Owner: owner, Scope: scope}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.temporary, h)
		a.mu.Unlock()
	}
}

// HasKeys reports whether any key is configured (static or stored).
func (a *Auth) HasKeys(ctx context.Context) (bool, error) {
	if len(a.static) > 0 {
		return true, nil
	}
	if a.store == nil {
		return false, nil
	}
	es, err := a.store.List(ctx, store.APIKeys, store.ListOptions{Limit: 1})
	return len(es) > 0, err
}

// CreateKey mints a new random key, stores its hash and returns the key. The key itself is
// never stored; show it to the user once.
func (a *Auth) CreateKey(ctx context.Context, label string) (string, error) {
	if a.store == nil {
		return "", errors.New("auth: no store to keep the key in")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	key := "sy-" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	rec := storedKey{Owner: ownerOf(h), Label: label, CreatedAt: time.Now().UTC()}
	if err := store.PutJSON(ctx, a.store, store.APIKeys, hex.EncodeToString(h[:]), rec); err != nil {
		return "", err
	}
	return key, nil
}

// bearer is the request's API key: Authorization: Bearer <key>, or on the /v1/
// compatibility surfaces, the Azure deployment and engine routes and LiteLLM's token
// counter api-key (how Azure OpenAI's SDKs send it) or x-api-key (how Anthropic's SDKs
// and Claude Code do; api-key wins when both come, as in LiteLLM), and on
// the Gemini surface x-goog-api-key or ?key= (how Google's SDKs and Gemini CLI do), and on
// /v1/realtime a browser's WebSocket subprotocol openai-insecure-api-key.<key>. On the
// /v1/ and MCP routes LiteLLM's x-litellm-api-key, when sent, wins over all of them. The
// service's own operations take the Authorization header only, as the spec says.
func bearer(r *http.Request) string {
	if takesLiteLLMKeyHeader(r.URL.Path) {
		// LiteLLM's own header, "Bearer sk-…" or the bare key, comes first as in LiteLLM:
		// it is there so that MCP clients and SDKs can keep Authorization for something
		// else (an MCP server's own token, a provider SDK's credential).
		k := strings.TrimSpace(r.Header.Get("X-Litellm-Api-Key"))
		if scheme, rest, ok := strings.Cut(k, " "); ok && strings.EqualFold(scheme, "Bearer") {
			k = strings.TrimSpace(rest)
		}
		if k != "" {
			return k
		}
	}
	h := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		// An empty "Bearer " (an SDK whose key is unset) leaves the other headers to say.
		if k := realtimeProtocolKey(r); k != "" {
			// A browser's realtime client, which cannot set headers on a WebSocket, offers
			// its key as the subprotocol openai-insecure-api-key.<key>.
			return k
		}
		if geminiPath(r.Method, r.URL.Path) {
			if k := geminiKey(r); k != "" {
				return k
			}
		}
		if takesAPIKeyHeader(r.URL.Path) {
			// Azure OpenAI's api-key before Anthropic's x-api-key, LiteLLM's order.
			if k := strings.TrimSpace(r.Header.Get("Api-Key")); k != "" {
				return k
			}
			return strings.TrimSpace(r.Header.Get("X-Api-Key"))
		}
		if k := passThroughKey(r); k != "" {
			return k
		}
		return ""
	}
	return strings.TrimSpace(key)
}

// takesLiteLLMKeyHeader reports whether path takes LiteLLM's x-litellm-api-key: the /v1/
// compatibility surfaces and the MCP gateway's routes (/mcp, /mcp/{server}, /mcp-rest/…).
func takesLiteLLMKeyHeader(path string) bool {
	return takesAPIKeyHeader(path) || isPassThroughPath(path) || path == "/mcp" || strings.HasPrefix(path, "/mcp/") || strings.HasPrefix(path, "/mcp-rest/")
}

// takesAPIKeyHeader reports whether path is on a /v1/ compatibility surface, the Azure
// deployment and engine routes or LiteLLM's token counter, where the key may come as
// x-api-key or api-key; /v1/modelSelect is the spec's own alias of model selection.
func takesAPIKeyHeader(path string) bool {
	return strings.HasPrefix(path, "/v1/") && path != "/v1/modelSelect" || deploymentPath(path) || path == tokenCounterPath
}
