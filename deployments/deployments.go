// Package deployments keeps the deployments added at run time — LiteLLM's POST /model/new,
// /model/update and /model/delete, as a LiteLLM proxy with store_model_in_db: true serves
// them — in a store and applies them to a running completions.Gateway. Each deployment is a
// LiteLLM model_list entry (model_name, litellm_params, model_info) read exactly as one of
// the config file is (litellmconfig.ParseWith): the same provider entries, groups, limits,
// timeouts and prices; one named like a group of the file joins it. Its api_key is stored
// sealed (AES-256-GCM under Options.SecretKey), never in clear, and never returned; so is a
// credential written into its api_base (user:password@, a query such as ?key= or ?code=),
// the api_base being stored and answered in its public form (completions.PublicURL).
// Deployments stored by another replica on the same store are picked up by Sync, which Run
// calls on an interval.
package deployments

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/litellmconfig"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// ErrInvalid is matched (errors.Is) by every *FieldError.
var ErrInvalid = errors.New("deployments: invalid deployment")

// ErrNotFound is returned for an id no stored deployment has.
var ErrNotFound = errors.New("deployments: not found")

// ErrInConfig is returned for an id of a deployment of the config file: only stored ones
// may be changed or deleted through the API.
var ErrInConfig = errors.New("deployments: the deployment is in the config file")

// ErrDuplicate is returned when model_info.id is taken already.
var ErrDuplicate = errors.New("deployments: id taken")

// FieldError is a value of a deployment that cannot be used; Field names it
// ("litellm_params.api_base").
type FieldError struct {
	Field   string
	Message string
}

// Error names the field and the problem.
func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// DefaultPoll is Options.Poll's default.
const DefaultPoll = 10 * time.Second

// Options configure a Service.
type Options struct {
	// Store keeps the deployments (collection store.Deployments). Required.
	Store *store.Store
	// Gateway is the gateway whose routes the deployments change. Required.
	Gateway *completions.Gateway
	// Registry is the gateway's provider registry: the deployments' provider entries are
	// registered in it (and removed with them). Required.
	Registry *providers.Registry
	// ProviderOptions are the options the registry's providers were made with.
	ProviderOptions providers.Options
	// Config is the LiteLLM config file the server serves (nil: none); stored deployments are
	// read as entries appended to its model_list.
	Config []byte
	// Groups are model groups configured otherwise (--model-groups), when Config is nil;
	// a stored deployment may not take one of their names.
	Groups map[string]completions.ModelGroup
	// Prices is the price catalogue without the deployments' own prices (nil: the default
	// catalogue); each application sets the gateway's to it with theirs.
	Prices *providers.Catalog
	// SecretKey seals stored api_keys (its SHA-256 is the AES-256 key: LiteLLM's
	// LITELLM_SALT_KEY). Without it an api_key may only be os.environ/NAME.
	SecretKey []byte
	// LookupEnv resolves os.environ/ values (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Poll is how often Run looks for deployments other replicas stored (0: DefaultPoll).
	Poll   time.Duration
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// DeploymentTags, when set, returns tags to add to deployments beside their own
	// litellm_params.tags, by deployment id (model_info.id) or model group name (each of its
	// deployments): LiteLLM's /tag/new models. Sync reads it each time and applies a change.
	DeploymentTags func(ctx context.Context) (map[string][]string, error)
}

// Deployment is one stored deployment as answers show it: never its api_key.
type Deployment struct {
	ID            string         `json:"id"`
	ModelName     string         `json:"model_name"`
	LiteLLMParams map[string]any `json:"litellm_params"`
	ModelInfo     map[string]any `json:"model_info"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// record is a deployment as stored: litellm_params without api_key, which is sealed.
type record struct {
	Deployment
	// SealedKey is the api_key sealed (base64 of nonce and ciphertext; "" for none or an
	// os.environ/ reference, which stays in LiteLLMParams).
	SealedKey string `json:"sealed_api_key,omitempty"`
	// SealedBase is the api_base sealed when it carries a credential (user info, a query or
	// a fragment), LiteLLMParams then holding its public form; "" otherwise. A record an
	// earlier build wrote has none, its api_base in LiteLLMParams as given.
	SealedBase string `json:"sealed_api_base,omitempty"`
}

// sealedSecrets are the sealed values a record keeps from before when an update does not
// give them anew.
type sealedSecrets struct {
	key, base string
}

// Service keeps the deployments and applies them. Make one with New.
type Service struct {
	opts Options
	log  *slog.Logger
	aead cipher.AEAD // nil without SecretKey

	// foreign are the providers the registry held at New that neither are built in nor come
	// from Config (--providers-config's), or those SetOtherProviders named since: a stored
	// deployment's entry never takes their name.
	foreign atomic.Pointer[map[string]bool]
	// groups are the model groups configured otherwise (Options.Groups, or ReloadGroups').
	groups atomic.Pointer[map[string]completions.ModelGroup]
	// file is the config file served (Options.Config, or Reload's) with the
	// model_info.ids it gives its deployments: a stored deployment under one of them is not
	// served (LiteLLM serves the file's).
	file atomic.Pointer[configFile]

	// nameMu is held (read) while an addition or update judged by the groups in force is
	// stored, and (write) while ReloadGroups swaps the groups: a deployment is never stored
	// under a name the groups swapped in have.
	nameMu sync.RWMutex
	// reloadChecked, when set (tests), is called by ReloadGroups between its first check of
	// the stored deployments and the swap.
	reloadChecked func()

	mu       sync.Mutex // one application at a time
	applied  string     // fingerprint of the records last applied
	ownNames []string   // provider entries the last application registered
	// unserved are the stored deployments the last application left out because a sealed
	// value of theirs cannot be unsealed, oldest first.
	unserved []Unserved
	// configured maps completions.DeploymentID(model name, member) to the litellm_params.model
	// the configuration gives a deployment whose member differs from it (its own provider
	// entry), as of the last application; read without mu, which a Sync holds while it reads
	// the store.
	configured atomic.Pointer[map[string]string]
}

// ConfiguredModel returns the litellm_params.model ("openai/gpt-4o") the config file or a
// stored deployment gives the deployment of member under modelName, when the gateway calls
// it under a provider entry of its own ("openai-name-1a2b3c4d/gpt-4o": its api_base or
// api_key differ from the environment's); false when the two are the same or the
// deployment is not one the last Sync applied. LiteLLM's answers show that model, and an
// update sending it back must find its provider.
func (s *Service) ConfiguredModel(modelName, member string) (string, bool) {
	m := s.configured.Load()
	if m == nil {
		return "", false
	}
	model, ok := (*m)[completions.DeploymentID(modelName, member)]
	return model, ok
}

// Unserved is a stored deployment left out of routing because its sealed api_key or
// api_base cannot be unsealed (LITELLM_SALT_KEY changed since it was stored); an update
// giving a new api_key (and api_base, when that was sealed) mends it.
type Unserved struct {
	Deployment
	// Error says why it is not served.
	Error string
}

// Unserved returns the stored deployments the last Sync left out of routing (none when
// every one is served).
func (s *Service) Unserved() []Unserved {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unserved)
}

// New returns a Service; call Sync (or Run) to apply what is stored.
func New(opts Options) (*Service, error) {
	if opts.Store == nil || opts.Gateway == nil || opts.Registry == nil {
		return nil, errors.New("deployments: Options.Store, Gateway and Registry are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Prices == nil {
		opts.Prices = providers.DefaultCatalog()
	}
	s := &Service{opts: opts, log: opts.Logger}
	file := &configFile{config: opts.Config, ids: map[string]bool{}}
	foreign := map[string]bool{}
	for _, name := range opts.Registry.Names() {
		if !isPreset(name) {
			foreign[name] = true
		}
	}
	if cfg, err := litellmconfig.ParseWith(opts.Config, nil, opts.LookupEnv); err == nil {
		for _, pc := range cfg.Providers.Providers {
			delete(foreign, pc.Name)
		}
		file.ids = idSet(cfg)
	}
	s.file.Store(file)
	s.foreign.Store(&foreign)
	groups := maps.Clone(opts.Groups)
	s.groups.Store(&groups)
	if len(opts.SecretKey) > 0 {
		k := sha256.Sum256(opts.SecretKey)
		block, err := aes.NewCipher(k[:])
		if err != nil {
			return nil, fmt.Errorf("deployments: secret key: %w", err)
		}
		if s.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("deployments: secret key: %w", err)
		}
	}
	return s, nil
}

// Input is a deployment as POST /model/new and /model/update send it.
type Input struct {
	ModelName     string         `json:"model_name"`
	LiteLLMParams map[string]any `json:"litellm_params"`
	ModelInfo     map[string]any `json:"model_info"`
}

// List returns the stored deployments, oldest first.
func (s *Service) List(ctx context.Context) ([]Deployment, error) {
	recs, err := s.records(ctx, s.opts.Store)
	if err != nil {
		return nil, err
	}
	out := make([]Deployment, len(recs))
	for i, r := range recs {
		out[i] = r.Deployment
	}
	return out, nil
}

// Add stores in and applies it. model_info.id is its id when given (else a random one);
// an id taken is ErrDuplicate, a value that cannot be used a *FieldError.
func (s *Service) Add(ctx context.Context, in Input) (Deployment, error) {
	id, err := idOf(in.ModelInfo)
	if err != nil {
		return Deployment{}, err
	}
	if id == "" {
		id = newID()
	}
	if s.inConfig(id) {
		return Deployment{}, fmt.Errorf("%w: model_info.id %q is a deployment of the config file", ErrDuplicate, id)
	}
	now := s.opts.Now().UTC()
	rec, err := s.recordOf(id, in, sealedSecrets{}, now, now)
	if err != nil {
		return Deployment{}, err
	}
	s.nameMu.RLock()
	err = s.opts.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Get(ctx, store.Deployments, id); err == nil {
			return fmt.Errorf("%w: model_info.id %q", ErrDuplicate, id)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := s.check(ctx, tx, id, &rec); err != nil {
			return err
		}
		return put(ctx, tx, rec)
	})
	s.nameMu.RUnlock()
	if err != nil {
		return Deployment{}, err
	}
	return rec.Deployment, s.Sync(ctx)
}

// Update changes the stored deployment id: the fields in gives replace its own (a
// litellm_params or model_info key given replaces that key; api_key kept when not given;
// api_base given as the public form answers show keeps a credential sealed with it; rates
// and token limits given as the price catalogue's, which /model/info shows, are not made
// its own: withoutCatalogued; nor are the tags /tag/new's models add: withoutAddedTags).
// An id of the config file is ErrInConfig (also when a stored deployment, skipped, has it
// too: the file's is the one served by that id), an unknown one ErrNotFound.
func (s *Service) Update(ctx context.Context, id string, in Input) (Deployment, error) {
	if s.file.Load().ids[id] {
		return Deployment{}, fmt.Errorf("%w: %s", ErrInConfig, id)
	}
	if !s.serving(id) {
		// Added on another replica since this one's last poll: what the gateway serves it
		// with (its catalogue prices, the tags /tag/new adds) tells what an update sent back
		// whole does not make its own, so the stored deployments are applied first.
		if err := s.Sync(ctx); err != nil {
			s.log.WarnContext(ctx, "deployments: applying the stored deployments before an update", "id", id, "err", err)
		}
	}
	var out Deployment
	s.nameMu.RLock()
	err := s.opts.Store.Update(ctx, func(tx store.Tx) error {
		old, err := s.stored(ctx, tx, id)
		if err != nil {
			return err
		}
		if gid, _ := idOf(in.ModelInfo); gid != "" && gid != id {
			return &FieldError{Field: "model_info.id", Message: fmt.Sprintf("is %q: an id cannot be changed (the deployment is %q)", gid, id)}
		}
		merged := Input{ModelName: old.ModelName, LiteLLMParams: maps.Clone(old.LiteLLMParams), ModelInfo: maps.Clone(old.ModelInfo)}
		if in.ModelName != "" {
			merged.ModelName = in.ModelName
		}
		maps.Copy(merged.LiteLLMParams, s.withoutAddedTags(id, old.Deployment, in.LiteLLMParams))
		if merged.ModelInfo == nil {
			merged.ModelInfo = map[string]any{}
		}
		maps.Copy(merged.ModelInfo, s.withoutCatalogued(id, old.Deployment, in.ModelInfo))
		sealed := sealedSecrets{key: old.SealedKey, base: old.SealedBase}
		if _, given := in.LiteLLMParams["api_key"]; given {
			sealed.key = ""
		}
		if base, given := in.LiteLLMParams["api_base"]; given {
			// The public form answers show, sent back (a full edit of what /model/info
			// shows), keeps the sealed credential; any other api_base replaces it.
			clear, _ := old.LiteLLMParams["api_base"].(string)
			switch {
			case old.SealedBase != "" && sameText(base, clear):
			case old.SealedBase == "" && hasCredential(clear) && sameText(base, completions.PublicURL(clear)):
				// A record of an earlier build, its credential in clear: kept (recordOf
				// seals it), not dropped for the public form it is shown in.
				merged.LiteLLMParams["api_base"] = clear
			default:
				sealed.base = ""
			}
		}
		if b, _ := merged.LiteLLMParams["api_base"].(string); hasFragment(b) {
			if given, _ := in.LiteLLMParams["api_base"].(string); !hasFragment(given) {
				// An earlier build's, kept from before: never sent, so dropped, not refused.
				merged.LiteLLMParams["api_base"], _, _ = strings.Cut(b, "#")
			}
		}
		rec, err := s.recordOf(id, merged, sealed, old.CreatedAt, s.opts.Now().UTC())
		if err != nil {
			return err
		}
		if err := s.check(ctx, tx, id, &rec); err != nil {
			return err
		}
		out = rec.Deployment
		return put(ctx, tx, rec)
	})
	s.nameMu.RUnlock()
	if err != nil {
		return Deployment{}, err
	}
	return out, s.Sync(ctx)
}

// Delete removes the stored deployment id and applies the rest. An id of the config file
// is ErrInConfig (unless a stored deployment, skipped, has it too: that one is removed),
// an unknown one ErrNotFound.
func (s *Service) Delete(ctx context.Context, id string) (Deployment, error) {
	var out Deployment
	err := s.opts.Store.Update(ctx, func(tx store.Tx) error {
		old, err := s.stored(ctx, tx, id)
		if err != nil {
			return err
		}
		out = old.Deployment
		return tx.Delete(ctx, store.Deployments, id)
	})
	if err != nil {
		return Deployment{}, err
	}
	return out, s.Sync(ctx)
}

// inConfig reports whether id is a deployment the gateway serves that is not stored.
func (s *Service) inConfig(id string) bool {
	for _, d := range s.opts.Gateway.Deployments() {
		if d.ID == id && !d.Stored {
			return true
		}
	}
	return false
}

// Run applies what other replicas store every Options.Poll until ctx ends. It returns once
// ctx has ended (a Sync under way stops with it) and makes no store call after it returned:
// a caller that closes the store runs Run in a goroutine and waits for it first.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ctx.Err() != nil {
				return // a tick and the end together: select may have taken the tick
			}
			if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "deployments: applying the stored deployments", "err", err)
			}
		}
	}
}

// Sync reads the stored deployments and, when they changed since the last call, applies
// them to the gateway: provider entries registered (those of deleted deployments removed),
// then the model groups and prices swapped in (completions.Gateway.SetRoutes).
func (s *Service) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.records(ctx, s.opts.Store)
	if err != nil {
		return err
	}
	var extra map[string][]string
	if s.opts.DeploymentTags != nil {
		if extra, err = s.opts.DeploymentTags(ctx); err != nil {
			return fmt.Errorf("deployments: the tags added to deployments: %w", err)
		}
	}
	fp := fingerprint(recs)
	if len(extra) > 0 {
		b, _ := json.Marshal(extra) // a map's keys in order
		sum := sha256.Sum256(b)
		fp += "+" + hex.EncodeToString(sum[:])
	}
	if fp == s.applied && !s.unservedMended(recs) {
		return nil
	}
	file := s.file.Load()
	for _, r := range recs {
		if file.ids[r.ID] {
			s.log.WarnContext(ctx, "deployments: a stored deployment has the id of a deployment of the config file (model_info.id); the file's is served, the stored one skipped (delete it, or change the file)", "id", r.ID, "model_name", r.ModelName)
		}
	}
	recs, unsealed := s.unsealable(served(file, recs))
	var unserved []Unserved
	for _, r := range unsealed {
		msg := "deployments: a stored deployment is left out of routing: its sealed secret cannot be unsealed (LITELLM_SALT_KEY changed since it was stored?) or its provider cannot be built (a vertex_credentials file gone?); update it (POST /model/update) or delete it"
		why := r.err.Error()
		if errors.Is(r.err, litellmconfig.ErrEnvUnset) {
			// serve reads the process environment (LookupEnv's default), which cannot be
			// changed from outside a running server (nor by the config file:
			// environment_variables is not applied), so for serve neither a poll nor a reload
			// (SIGHUP) brings the deployment back: say so.
			msg = "deployments: a stored deployment is left out of routing: " + envUnsetRemedy
			why = "left out of routing: " + why + " (" + envUnsetRemedy + ")"
		}
		s.log.ErrorContext(ctx, msg, "id", r.rec.ID, "model_name", r.rec.ModelName, "err", r.err)
		unserved = append(unserved, Unserved{Deployment: r.rec.Deployment, Error: why})
	}
	cfg, err := s.parse(file, recs)
	if err != nil {
		return err
	}
	foreign := *s.foreign.Load()
	for _, pc := range cfg.Providers.Providers {
		if foreign[pc.Name] {
			return fmt.Errorf("deployments: a stored deployment's provider entry would replace the provider %q configured otherwise (--providers-config); rename or delete that deployment", pc.Name)
		}
	}
	if err := s.opts.Registry.Configure(&cfg.Providers, s.getenv, s.opts.ProviderOptions); err != nil {
		return fmt.Errorf("deployments: providers: %w", err)
	}
	groups := cfg.ModelGroups
	if file.config == nil {
		groups = maps.Clone(*s.groups.Load())
		if groups == nil {
			groups = map[string]completions.ModelGroup{}
		}
		for name := range cfg.ModelGroups {
			if _, ok := groups[name]; ok {
				// Stored by a replica whose --model-groups did not have the name then (before
				// its reload, or another file).
				s.log.WarnContext(ctx, "deployments: a stored deployment's model_name is a model group of --model-groups: the stored deployment is served under it, not the file's group (delete the deployment, or rename the group)", "model_name", name)
			}
		}
		maps.Copy(groups, cfg.ModelGroups)
	}
	stored, configured := map[string]string{}, map[string]string{}
	for _, d := range cfg.Deployments {
		if d.Entry > 0 && d.Entry <= len(recs) {
			stored[completions.DeploymentID(d.ModelName, d.Member)] = recs[d.Entry-1].ID
		}
		if d.Model != "" && d.Model != d.Member {
			configured[completions.DeploymentID(d.ModelName, d.Member)] = d.Model
		}
	}
	if len(extra) > 0 {
		for _, w := range addDeploymentTags(groups, stored, cfg.DeploymentIDs(), extra) {
			s.log.WarnContext(ctx, "deployments: "+w)
		}
	}
	prices := s.opts.Prices
	if len(cfg.Prices) > 0 {
		prices = prices.WithOwnPrices(cfg.Prices)
	}
	// The config file's own model_info.ids stay theirs (and so stay "in config" for
	// Update and Delete).
	// Wildcards, Listed and DeploymentNames never nil: nil would keep those in force, and a reload whose file
	// has none left must leave none.
	routes := completions.Routes{ModelGroups: groups, Prices: prices, Stored: stored, IDs: cfg.DeploymentIDs(),
		Wildcards: cfg.Wildcards, Listed: cfg.Listed, DeploymentNames: cfg.DeploymentNames, ContextWindowFallbacksSet: &cfg.ContextWindowFallbacksSet}
	if routes.Wildcards == nil {
		routes.Wildcards = []completions.Wildcard{}
	}
	if routes.DeploymentNames == nil || file.config == nil {
		// Without a LiteLLM config a "provider/model" stays the provider's, as ever.
		routes.DeploymentNames = map[string][]completions.NamedDeployment{}
	}
	if routes.Listed == nil {
		routes.Listed = []string{}
	}
	if err := s.opts.Gateway.SetRoutes(routes); err != nil {
		return fmt.Errorf("deployments: %w", err)
	}
	var names []string
	for _, pc := range cfg.Providers.Providers {
		names = append(names, pc.Name)
	}
	for _, old := range s.ownNames {
		if !slices.Contains(names, old) && !isPreset(old) {
			s.opts.Registry.Remove(old)
		}
	}
	s.ownNames, s.applied, s.unserved = names, fp, unserved
	s.configured.Store(&configured)
	s.log.InfoContext(ctx, "deployments: applied", "stored", len(recs), "model_groups", len(groups))
	return nil
}

// unservedMended reports whether a stored deployment the last application left out (of
// recs, as stored) would now be served: a vertex_credentials file put back, or a variable
// Options.LookupEnv now finds. Without it a poll would see the same records and apply
// nothing, leaving it out until they change. Called with mu held.
func (s *Service) unservedMended(recs []record) bool {
	for _, u := range s.unserved {
		i := slices.IndexFunc(recs, func(r record) bool { return r.ID == u.ID })
		if i < 0 {
			continue
		}
		if _, broken := s.unsealable(recs[i : i+1]); len(broken) == 0 {
			return true
		}
	}
	return false
}

// envUnsetRemedy is what to do about a stored deployment left out because an
// os.environ/NAME variable it names is not set.
const envUnsetRemedy = "an environment variable it names (os.environ/NAME) is not set in the server's environment, which stays as the server was started with (a reload does not change it): set the variable and restart the server, or give the value itself with POST /model/update"

// unsealedRecord is a record whose sealed value cannot be unsealed, and why.
type unsealedRecord struct {
	rec record
	err error
}

// unsealable splits recs into those whose sealed values unseal and whose provider can be
// built, and those whose cannot: a vertex_credentials file gone since the deployment was
// stored leaves that deployment out, not every one (nor the server's start).
func (s *Service) unsealable(recs []record) (ok []record, broken []unsealedRecord) {
	for _, r := range recs {
		e, err := s.entry(r)
		if err == nil {
			err = s.buildable(r.ID, e)
		}
		if err != nil {
			broken = append(broken, unsealedRecord{rec: r, err: err})
			continue
		}
		ok = append(ok, r)
	}
	return ok, broken
}

// buildable reports why the provider of the deployment id (its model_list entry e, read
// alone) cannot be built — an os.environ/NAME variable it names unset since it was stored
// included; nil when it can, or when e does not read alone for another reason (it is then
// read with the others, as before).
func (s *Service) buildable(id string, e map[string]any) error {
	cfg, err := litellmconfig.ParseWith(nil, []map[string]any{e}, s.opts.LookupEnv)
	if errors.Is(err, litellmconfig.ErrEnvUnset) {
		return fmt.Errorf("deployments: %s: %w", id, err)
	}
	if err != nil {
		return nil
	}
	if err := (&providers.Registry{}).Configure(&cfg.Providers, s.getenv, s.opts.ProviderOptions); err != nil {
		return fmt.Errorf("deployments: %s: its provider cannot be built: %w", id, err)
	}
	return nil
}

// served is recs without those whose id a deployment of the config file has.
func served(file *configFile, recs []record) []record {
	return slices.DeleteFunc(recs, func(r record) bool { return file.ids[r.ID] })
}

// getenv reads an environment variable through Options.LookupEnv.
func (s *Service) getenv(name string) string {
	v, _ := s.opts.LookupEnv(name)
	return v
}

// parse reads the config file with recs as entries appended to its model_list.
func (s *Service) parse(file *configFile, recs []record) (*litellmconfig.Config, error) {
	entries := make([]map[string]any, len(recs))
	for i, r := range recs {
		e, err := s.entry(r)
		if err != nil {
			return nil, err
		}
		entries[i] = e
	}
	return litellmconfig.ParseWith(file.config, entries, s.opts.LookupEnv)
}

// entry is r as a model_list entry, its api_key and api_base unsealed.
func (s *Service) entry(r record) (map[string]any, error) {
	params := maps.Clone(r.LiteLLMParams)
	if params == nil {
		params = map[string]any{}
	}
	if r.SealedKey != "" {
		key, err := s.unseal(r.SealedKey)
		if err != nil {
			return nil, fmt.Errorf("deployments: %s: api_key: %w", r.ID, err)
		}
		params["api_key"] = key
	}
	if r.SealedBase != "" {
		base, err := s.unseal(r.SealedBase)
		if err != nil {
			return nil, fmt.Errorf("deployments: %s: api_base: %w", r.ID, err)
		}
		params["api_base"] = base
	}
	if base, ok := params["api_base"].(string); ok && hasFragment(base) {
		// Stored by an earlier build, which took (and sealed) a fragment: it was never sent,
		// so the deployment is served as before without it rather than refused.
		params["api_base"], _, _ = strings.Cut(base, "#")
	}
	return map[string]any{"model_name": r.ModelName, "litellm_params": params, "model_info": r.ModelInfo}, nil
}

// check reads the stored deployments in tx with rec in place of id and refuses rec when
// the whole cannot be served, naming rec's field.
func (s *Service) check(ctx context.Context, tx store.Reader, id string, rec *record) error {
	recs, err := s.records(ctx, tx)
	if err != nil {
		return err
	}
	file := s.file.Load()
	if file.config == nil && !slices.ContainsFunc(recs, func(r record) bool { return r.ID == id && r.ModelName == rec.ModelName }) {
		// A name it takes now (added, or renamed): not one a reload on any replica made a
		// group (ReloadGroups), read in this transaction.
		taken, err := reservedGroup(ctx, tx, rec.ModelName)
		if err != nil {
			return err
		}
		if taken {
			return &FieldError{Field: "model_name", Message: fmt.Sprintf("%q is a model group of --model-groups (as reloaded on a server sharing this store)", rec.ModelName)}
		}
	}
	recs, _ = s.unsealable(slices.DeleteFunc(served(file, recs), func(r record) bool { return r.ID == id }))
	if _, err := s.entry(*rec); err != nil {
		// A sealed value kept from before that this server cannot unseal.
		field := "litellm_params.api_key"
		if rec.SealedKey == "" || s.unsealOK(rec.SealedKey) {
			field = "litellm_params.api_base"
		}
		return &FieldError{Field: field, Message: fmt.Sprintf("the stored value cannot be unsealed (%v): give it anew", errors.Unwrap(err))}
	}
	recs = append(recs, *rec)
	if _, taken := (*s.groups.Load())[rec.ModelName]; taken && file.config == nil {
		return &FieldError{Field: "model_name", Message: fmt.Sprintf("%q is a model group of --model-groups", rec.ModelName)}
	}
	cfg, err := s.parse(file, recs)
	var ce *litellmconfig.Error
	switch {
	case errors.As(err, &ce) && ce.Entry == len(recs):
		return &FieldError{Field: ce.Path, Message: ce.Message}
	case errors.As(err, &ce) && ce.Entry == 0 && ce.Path == "model_list":
		return &FieldError{Field: "litellm_params", Message: ce.Message}
	case err != nil:
		return &FieldError{Field: "litellm_params", Message: "does not fit the deployments served: " + err.Error()}
	}
	for _, d := range cfg.Deployments {
		if prov, _, _ := strings.Cut(d.Member, "/"); d.Entry == len(recs) && (*s.foreign.Load())[prov] {
			return &FieldError{Field: "model_name", Message: fmt.Sprintf("%q: its provider entry would be named %q, as a provider configured otherwise (--providers-config) is; choose another model_name", rec.ModelName, prov)}
		}
	}
	return s.checkProviders(cfg)
}

// checkProviders builds cfg's provider entries in a registry of their own, as Sync will
// in the gateway's: an entry that parses but cannot be built (a vertex_credentials file
// that cannot be read) is refused before anything is stored, naming the field.
func (s *Service) checkProviders(cfg *litellmconfig.Config) error {
	err := (&providers.Registry{}).Configure(&cfg.Providers, s.getenv, s.opts.ProviderOptions)
	if err == nil {
		return nil
	}
	field := "litellm_params"
	var pe *providers.ConfigError
	if errors.As(err, &pe) {
		msg := pe.Message
		if strings.HasSuffix(pe.Field, ".credentials_file") {
			field = "litellm_params.vertex_credentials"
		}
		return &FieldError{Field: field, Message: "cannot be used: " + msg}
	}
	return &FieldError{Field: field, Message: "cannot be used: " + err.Error()}
}

// recordOf checks in (the fields litellmconfig does not) and makes its record, the
// api_key and a credential in api_base sealed; kept are the sealed values kept from before
// (for the fields in does not give).
func (s *Service) recordOf(id string, in Input, kept sealedSecrets, created, updated time.Time) (record, error) {
	if strings.TrimSpace(in.ModelName) == "" {
		return record{}, &FieldError{Field: "model_name", Message: "is required: the name clients send"}
	}
	if strings.Contains(in.ModelName, "/") || strings.Contains(in.ModelName, "*") {
		return record{}, &FieldError{Field: "model_name", Message: fmt.Sprintf("%q: a deployment added through the API is a model group, whose name is 1-64 letters, digits, '_', '.', ':' or '-' (no '/' or '*')", in.ModelName)}
	}
	if in.LiteLLMParams == nil {
		return record{}, &FieldError{Field: "litellm_params", Message: "is required: at least model (provider/model)"}
	}
	model, isText := in.LiteLLMParams["model"].(string)
	if m := in.LiteLLMParams["model"]; m != nil && !isText {
		shown, _ := json.Marshal(m)
		return record{}, &FieldError{Field: "litellm_params.model", Message: fmt.Sprintf("must be a string, the provider/model to call (openai/gpt-4o), got %s", shown)}
	}
	if model == "" {
		return record{}, &FieldError{Field: "litellm_params.model", Message: "is required: the provider/model to call (openai/gpt-4o)"}
	}
	if strings.HasSuffix(model, "/*") {
		return record{}, &FieldError{Field: "litellm_params.model", Message: "a wildcard deployment belongs in the config file, not the API"}
	}
	if h, ok := in.LiteLLMParams["extra_headers"]; ok && h != nil {
		// Their values may be credentials, which a stored deployment keeps sealed only for
		// api_key and api_base.
		return record{}, &FieldError{Field: "litellm_params.extra_headers", Message: "are not stored: give them to the deployment in the config file (--litellm-config)"}
	}
	if b, ok := in.LiteLLMParams["api_base"]; ok && b != nil {
		base, isText := b.(string)
		if !isText {
			return record{}, &FieldError{Field: "litellm_params.api_base", Message: "must be a string (an http:// or https:// URL)"}
		}
		if !strings.HasPrefix(base, litellmconfig.EnvPrefix) {
			u, err := url.Parse(base)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				// Shown as answers show an api_base: a credential written in it is not echoed.
				msg := "must be an http:// or https:// URL with a host"
				if shown := completions.PublicURL(base); shown != "" {
					msg += fmt.Sprintf(", got %q", shown)
				}
				return record{}, &FieldError{Field: "litellm_params.api_base", Message: msg}
			}
			if hasFragment(base) {
				return record{}, &FieldError{Field: "litellm_params.api_base", Message: fragmentRefused}
			}
		}
	}
	params := maps.Clone(in.LiteLLMParams)
	sealed, sealedBase := kept.key, kept.base
	if base, ok := params["api_base"].(string); ok && hasCredential(base) {
		if s.aead == nil {
			return record{}, &FieldError{Field: "litellm_params.api_base", Message: "carries a credential (user:password@, or a query such as ?key= or ?code=) that cannot be stored: the server has no key to seal it with (set LITELLM_SALT_KEY, give os.environ/NAME, or put the key in api_key)"}
		}
		var err error
		if sealedBase, err = s.seal(base); err != nil {
			return record{}, err
		}
		params["api_base"] = completions.PublicURL(base)
	}
	if k, ok := params["api_key"]; ok {
		delete(params, "api_key")
		key, isText := k.(string)
		switch {
		case k == nil:
		case !isText:
			return record{}, &FieldError{Field: "litellm_params.api_key", Message: "must be a string"}
		case strings.HasPrefix(key, litellmconfig.EnvPrefix):
			params["api_key"] = key // a reference, not the key
		case key == "":
		case s.aead == nil:
			return record{}, &FieldError{Field: "litellm_params.api_key", Message: "cannot be stored: the server has no key to seal it with (set LITELLM_SALT_KEY, or give os.environ/NAME)"}
		default:
			var err error
			if sealed, err = s.seal(key); err != nil {
				return record{}, err
			}
		}
	}
	info := maps.Clone(in.ModelInfo)
	if info == nil {
		info = map[string]any{}
	}
	info["id"] = id
	info["db_model"] = true
	return record{Deployment: Deployment{ID: id, ModelName: in.ModelName, LiteLLMParams: params, ModelInfo: info, CreatedAt: created, UpdatedAt: updated},
		SealedKey: sealed, SealedBase: sealedBase}, nil
}

// serving says the gateway serves the stored deployment id.
func (s *Service) serving(id string) bool {
	for _, d := range s.opts.Gateway.Deployments() {
		if d.ID == id && d.Stored {
			return true
		}
	}
	return false
}

// withoutAddedTags returns params, the litellm_params an update of the stored deployment
// id (now old) gives, with its tags (when given as a list) rid of those the deployment is
// served with but old does not carry itself: the tags /tag/new's models add
// (Options.DeploymentTags), which /model/info shows among its litellm_params.tags. An edit
// sending back a /model/info entry whole would otherwise make them the deployment's own,
// kept after the tag drops the deployment from its models or is deleted. params is not
// changed.
func (s *Service) withoutAddedTags(id string, old Deployment, params map[string]any) map[string]any {
	given, ok := params["tags"].([]any)
	if !ok || len(given) == 0 {
		return params
	}
	var shown []string
	for _, x := range s.opts.Gateway.Deployments() {
		if x.ID == id && x.Stored {
			shown = x.Tags
			break
		}
	}
	own, _ := old.LiteLLMParams["tags"].([]any)
	added := func(tag any) bool {
		t, ok := tag.(string)
		return ok && slices.Contains(shown, t) && !slices.Contains(own, tag)
	}
	if !slices.ContainsFunc(given, added) {
		return params
	}
	out := maps.Clone(params)
	out["tags"] = slices.DeleteFunc(slices.Clone(given), added)
	return out
}

// cataloguedKeys are the model_info keys of a deployment's own price (litellmconfig's
// rates and token limits) that /model/info shows filled from the price catalogue.
var cataloguedKeys = []string{"input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
	"cache_creation_input_token_cost", "max_input_tokens", "max_output_tokens", "max_tokens"}

// withoutCatalogued returns info, the model_info an update of the stored deployment id
// (now old) gives, without the rates and token limits it sends back as the gateway
// serves them from the price catalogue (what /model/info shows in model_info) and old
// does not set itself: an edit sending back a /model/info entry whole would otherwise
// make them the deployment's own price, a flat one that drops the catalogue's long-prompt
// tiers and follows no later catalogue. A value that differs, or one old sets, stays.
// info is not changed.
func (s *Service) withoutCatalogued(id string, old Deployment, info map[string]any) map[string]any {
	if len(info) == 0 {
		return info
	}
	var d completions.Deployment
	found := false
	for _, x := range s.opts.Gateway.Deployments() {
		if x.ID == id && x.Stored {
			d, found = x, true
			break
		}
	}
	if !found || !d.PriceFound || d.Mode == completions.ModeRerank {
		return info
	}
	p := d.Price
	shown := map[string]float64{}
	if p.Known {
		shown["input_cost_per_token"], shown["output_cost_per_token"] = p.InputPerToken, p.OutputPerToken
		shown["cache_read_input_token_cost"], shown["cache_creation_input_token_cost"] = p.CacheReadPerToken, p.CacheCreationPerToken
	}
	if p.MaxInputTokens > 0 {
		shown["max_input_tokens"] = float64(p.MaxInputTokens)
	}
	if p.MaxOutputTokens > 0 {
		shown["max_output_tokens"], shown["max_tokens"] = float64(p.MaxOutputTokens), float64(p.MaxOutputTokens)
	}
	var out map[string]any
	for _, k := range cataloguedKeys {
		v, given := info[k]
		want, isShown := shown[k]
		if !given || !isShown {
			continue
		}
		if _, own := old.ModelInfo[k]; own {
			continue
		}
		if _, own := old.LiteLLMParams[k]; own {
			continue
		}
		if n, ok := number(v); !ok || n != want {
			continue
		}
		if out == nil {
			out = maps.Clone(info)
		}
		delete(out, k)
	}
	if out == nil {
		return info
	}
	return out
}

// number is v as a float64 when it is a JSON number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// sameText reports whether a and b are the same string (false for other types, which
// == could panic on).
func sameText(a, b any) bool {
	as, ok := a.(string)
	bs, ok2 := b.(string)
	return ok && ok2 && as == bs
}

// hasCredential reports whether an api_base (already checked to be an http(s) URL or an
// os.environ/ reference) carries what completions.PublicURL leaves out of it: user info,
// a query (?key=, ?api-key=, ?code=) or a fragment.
func hasCredential(base string) bool {
	if strings.HasPrefix(base, litellmconfig.EnvPrefix) {
		return false
	}
	u, err := url.Parse(base)
	return err == nil && (u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "")
}

// fragmentRefused is why an api_base with a fragment is refused (as --litellm-config's is).
const fragmentRefused = "has a fragment (#...), which an HTTP client never sends to the upstream, so what it holds would be silently dropped: remove it (a credential goes in api_key, or the query)"

// hasFragment reports whether an api_base that is a URL (not an os.environ/ reference) has a
// fragment, even an empty one ("https://host/v1#").
func hasFragment(base string) bool {
	return !strings.HasPrefix(base, litellmconfig.EnvPrefix) && strings.Contains(base, "#")
}

// idOf reads model_info.id ("" when not given).
func idOf(info map[string]any) (string, error) {
	v, ok := info["id"]
	if !ok || v == nil {
		return "", nil
	}
	id, isText := v.(string)
	if !isText || strings.TrimSpace(id) != id || len(id) > 200 || strings.ContainsAny(id, "/\x00") {
		return "", &FieldError{Field: "model_info.id", Message: "must be a string of at most 200 characters without '/' or surrounding spaces"}
	}
	return id, nil
}

// newID is a random id in UUID form, as LiteLLM's.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// seal encrypts key.
func (s *Service) seal(key string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("deployments: sealing a secret: %w", err)
	}
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(key), nil)), nil
}

// unsealOK reports whether sealed unseals.
func (s *Service) unsealOK(sealed string) bool {
	_, err := s.unseal(sealed)
	return err == nil
}

// unseal decrypts a sealed key.
func (s *Service) unseal(sealed string) (string, error) {
	if s.aead == nil {
		return "", errors.New("sealed with a secret key this server was not given (LITELLM_SALT_KEY)")
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errors.New("sealed value damaged")
	}
	key, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], nil)
	if err != nil {
		return "", fmt.Errorf("not sealed with this server's secret key (LITELLM_SALT_KEY): %w", err)
	}
	return string(key), nil
}

// records reads every stored deployment, oldest first (then by id): the order every
// replica reads them in, so provider entries are named alike everywhere.
func (s *Service) records(ctx context.Context, r store.Reader) ([]record, error) {
	entries, err := r.List(ctx, store.Deployments, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("deployments: listing: %w", err)
	}
	out := make([]record, 0, len(entries))
	for _, e := range entries {
		var rec record
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return nil, fmt.Errorf("deployments: %s: %w", e.Key, err)
		}
		out = append(out, rec)
	}
	slices.SortStableFunc(out, func(a, b record) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// get reads the record id.
// stored reads the stored deployment id for a change: ErrInConfig when id is a deployment
// of the config file, ErrNotFound when it is no deployment.
func (s *Service) stored(ctx context.Context, r store.Reader, id string) (record, error) {
	rec, err := get(ctx, r, id)
	if errors.Is(err, store.ErrNotFound) {
		if s.inConfig(id) {
			return record{}, fmt.Errorf("%w: %s", ErrInConfig, id)
		}
		return record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return rec, err
}

func get(ctx context.Context, r store.Reader, id string) (record, error) {
	b, err := r.Get(ctx, store.Deployments, id)
	if err != nil {
		return record{}, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return record{}, fmt.Errorf("deployments: %s: %w", id, err)
	}
	return rec, nil
}

// put writes rec.
func put(ctx context.Context, w store.Writer, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("deployments: %w", err)
	}
	return w.Put(ctx, store.Deployments, rec.ID, b)
}

// addDeploymentTags adds to the members of groups the tags extra gives their deployment's id
// (stored's or ids' for the member's completions.DeploymentID, else that hash itself) or
// their group's name, replacing the groups changed (their Tags copied, never shared). A
// member that would carry more than completions.MaxTags keeps its own, with a warning
// returned.
func addDeploymentTags(groups map[string]completions.ModelGroup, stored, ids map[string]string, extra map[string][]string) (warnings []string) {
	for name, g := range groups {
		changed := false
		for i, m := range g.Models {
			k := completions.DeploymentID(name, m)
			id := k
			if v, ok := stored[k]; ok {
				id = v
			} else if v, ok := ids[k]; ok {
				id = v
			}
			add := append(slices.Clip(extra[id]), extra[name]...)
			if len(add) == 0 {
				continue
			}
			if !changed {
				tags := make([][]string, len(g.Models))
				copy(tags, g.Tags)
				g.Tags, changed = tags, true
			}
			tags := completions.AddTags(slices.Clone(g.Tags[i]), add...)
			if len(tags) > completions.MaxTags {
				warnings = append(warnings, fmt.Sprintf("the tags of /tag/new's models would give deployment %s of model group %s more than %d tags: it keeps its own", id, name, completions.MaxTags))
				continue
			}
			g.Tags[i] = tags
		}
		if changed {
			groups[name] = g
		}
	}
	return warnings
}

// fingerprint identifies the records' content.
func fingerprint(recs []record) string {
	h := sha256.New()
	for _, r := range recs {
		b, _ := json.Marshal(r)
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
