// Package store is Switchyard's persistence seam.
//
// It follows gocloud.dev's shape: a small [Driver] interface that each backend implements
// (store/memstore for tests and embedding, store/boltstore on a bbolt file for the server),
// and a portable [*Store] that capabilities hold. Records are opaque bytes grouped into
// named collections; capabilities own their record types and encode them (usually as JSON
// with [PutJSON] and [GetJSON]).
//
// Guarantees every driver gives (checked by store/storetest):
//   - Get of a missing key returns an error that matches [ErrNotFound];
//   - List returns entries in ascending byte order of key, filtered by prefix, paged by
//     After and Limit;
//   - Update applies all of its writes or none of them;
//   - concurrent callers are safe;
//   - an Update, UpdateLocked, Put or Delete called from inside an Update's function of
//     the same store on the same goroutine fails at once with an error matching
//     [ErrNested].
//
// On top of any driver, the owner index ([PutOwned], [ListOwned]) lists one owner's
// records of a kind newest first, with cursor pagination and a creation-time window.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Errors returned by every driver. Compare with errors.Is.
var (
	// ErrNotFound means the key does not exist in the collection.
	ErrNotFound = errors.New("store: not found")
	// ErrClosed means the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrLocked means another process holds the database file.
	ErrLocked = errors.New("store: database is locked by another process")
	// ErrInvalid means a collection or key is empty or otherwise unusable.
	ErrInvalid = errors.New("store: invalid collection or key")
	// ErrNoDriver is the answer of a Store with no driver (the zero Store, or a nil one):
	// make Stores with New or a driver package's Open.
	ErrNoDriver = errors.New("store: no driver (make a Store with New or a driver package's Open)")
	// ErrCorrupt means the database file is damaged (for example truncated) and cannot be
	// opened safely.
	ErrCorrupt = errors.New("store: database file is damaged")
	// ErrUnwritable means a write failed because the database's storage refuses writes: its
	// disk is full, its quota is spent, or its file system is read-only. Reads still work,
	// and writes work again once space is freed or the file system is writable, without a
	// restart. The error also wraps the system's own (naming the file). PostgreSQL's
	// disk_full and read_only_sql_transaction (a standby after a failover) are the same.
	ErrUnwritable = errors.New("store: the database cannot be written (disk full or read-only file system)")
	// ErrNested means Update (or UpdateLocked) was called from inside another Update's
	// function on the same goroutine, which the Driver contract forbids (the function acts
	// only through its Tx): the drivers (memstore, boltstore, pgstore; checked by
	// store/storetest) refuse the inner call with an error matching ErrNested rather than
	// wait for a lock or a record the outer transaction holds until it ends, which it
	// never would. An Update of one store inside another store's function goes on
	// (nothing of the outer one is waited for), except while the inner store runs an
	// Update's function of its own on another goroutine (the drivers cannot tell the two
	// apart then; pgstore counts all of a process's PostgreSQL stores as one, as they may
	// share a database).
	ErrNested = errors.New("store: Update called inside another Update's function (use its Tx)")
	// ErrCommitUnknown means an Update's commit was sent but its outcome never came back
	// (the connection to the database broke): its writes may or may not have been kept. A
	// caller that runs it again must make it idempotent (a write that records its own id).
	ErrCommitUnknown = errors.New("store: the outcome of the commit is unknown")
)

// CommitUnknownError is an Update's error matching ErrCommitUnknown from a driver that can
// learn the outcome later (a CommitChecker: pgstore, once its database answers again):
// Store.CommitStatus with Token says whether the transaction committed. A driver gives one
// only for a transaction that wrote.
type CommitUnknownError struct {
	// Token names the transaction to the driver's CommitStatus (pgstore: its id).
	Token string
	// Err is the commit's failure as the driver saw it (the connection broken).
	Err error
}

func (e *CommitUnknownError) Error() string {
	return fmt.Sprintf("%v: %v (transaction %s)", ErrCommitUnknown, e.Err, e.Token)
}

// Unwrap returns ErrCommitUnknown and the driver's error.
func (e *CommitUnknownError) Unwrap() []error { return []error{ErrCommitUnknown, e.Err} }

// CommitChecker is implemented by a Driver whose Updates may fail with a
// *CommitUnknownError: CommitStatus reports whether the transaction token names committed
// (false: it rolled back, none of its writes kept), or an error (one matching
// ErrCommitUnknown when the database cannot tell yet: the transaction still running; one
// matching ErrInvalid when it never will: the token names no transaction of it, as a
// PostgreSQL id it has not reached after a failover, or one too old to tell). A driver may
// end a transaction of its own that it lost (pgstore: a session the server holds open,
// waiting for the COMMIT that never reached it) so that the answer comes at once.
type CommitChecker interface {
	CommitStatus(ctx context.Context, token string) (committed bool, err error)
}

// Collection names a group of records. Keys are unique within a collection.
type Collection string

// The collections Switchyard's capabilities keep.
const (
	RouterModels              Collection = "router_models"                // trained router metadata
	RouterWeights             Collection = "router_weights"               // fitted embedder + classifier state
	TrainingJobs              Collection = "training_jobs"                // custom router training jobs
	OptimizationJobs          Collection = "optimization_jobs"            // agent prompt optimization jobs
	Artifacts                 Collection = "artifacts"                    // files such as an optimized agent.py
	Conversations             Collection = "conversations"                // completions conversations
	Messages                  Collection = "messages"                     // conversation messages, keyed conversation/seq
	Sessions                  Collection = "sessions"                     // model selection sessions
	Preferences               Collection = "preferences"                  // model selection preferences (pref_ ids) with their feedback counts
	APIKeys                   Collection = "api_keys"                     // API keys, keyed by SHA-256 hash, never in clear
	EmbeddingCache            Collection = "embedding_cache"              // embedder name/content hash -> vector
	OwnerIndex                Collection = "owner_index"                  // kind/owner/newest-first time/id -> "" (see PutOwned)
	ScopedKeys                Collection = "scoped_keys"                  // temporary scoped keys (job keys), keyed by SHA-256 hash
	Budgets                   Collection = "budgets"                      // shared spending accounts of scoped keys
	VirtualKeys               Collection = "virtual_keys"                 // issued virtual keys' descriptions, keyed owner/id
	Teams                     Collection = "teams"                        // teams of virtual keys, keyed owner/team id
	Organizations             Collection = "organizations"                // LiteLLM's organizations (the level above teams) of an owner, keyed owner/organization id
	OrganizationMembers       Collection = "organization_members"         // organization memberships, keyed owner/organization id/user id
	Users                     Collection = "users"                        // LiteLLM's internal users of an owner, keyed owner/user id
	TeamMembers               Collection = "team_members"                 // team memberships, keyed owner/team id/user id (written and deleted with each UserTeams record)
	UserTeams                 Collection = "user_teams"                   // the same memberships by user, keyed owner/user id/team id -> ""
	EndUsers                  Collection = "end_users"                    // end users (LiteLLM's customers) of an app, keyed owner/end user id
	EndUserCounts             Collection = "end_user_counts"              // how many end users each owner has, keyed owner (kept with every creation and deletion in EndUsers)
	LiteLLMBudgets            Collection = "litellm_budgets"              // LiteLLM's reusable budgets (/budget/new), keyed owner/budget id
	LiteLLMTags               Collection = "litellm_tags"                 // LiteLLM's tags with budgets (/tag/new), keyed owner/tag; their accounts in Budgets (completions.TagBudgetID)
	BudgetCustomers           Collection = "budget_customers"             // the end users each LiteLLM budget applies to, keyed owner/path-escaped budget id/end user id -> "" (written and deleted with each EndUsers record naming a budget)
	ResponseCache             Collection = "response_cache"               // the gateway's cached answers, keyed by request hash
	SpendRollups              Collection = "spend_rollups"                // daily spend per key and tag or model, keyed owner/day/kind/name
	Responses                 Collection = "responses"                    // stored /v1/responses answers, keyed by response id
	ResponseItems             Collection = "response_items"               // output item id -> the response id that holds it
	ResponseExpiry            Collection = "response_expiry"              // expiry (Unix seconds, 12 digits)/response id -> ""
	ResponseCacheExpiry       Collection = "response_cache_expiry"        // expiry (Unix nanoseconds, 19 digits)/cache key -> "" (written and deleted with each ResponseCache record)
	SessionExpiry             Collection = "session_expiry"               // creation time (Unix nanoseconds, 19 digits)/session id -> "" (written and deleted with each Sessions record: a session expires a retention after its creation)
	Migrations                Collection = "migrations"                   // one-time data migrations that ran, keyed by name -> when (RFC 3339)
	ResponseEvents            Collection = "response_events"              // a streamed background response's events, keyed response id/sequence number (10 digits)
	ResponseTombstones        Collection = "response_tombstones"          // owner hash/deleted response id -> its expiry (Unix seconds)
	OpenAIConversations       Collection = "openai_conversations"         // OpenAI Conversations API conversations, keyed by id
	OpenAIConversationItems   Collection = "openai_conversation_items"    // their items, keyed id/(9999999999 - seq): newest first
	OpenAIConversationItemIDs Collection = "openai_conversation_item_ids" // conversation id/item id -> the item's seq
	SharedCounters            Collection = "shared_counters"              // each process's counts for limits shared by replicas, keyed name/process (see Counters)
	Files                     Collection = "files"                        // uploaded and generated files' descriptions (OpenAI's Files API), keyed by id
	FileChunks                Collection = "file_chunks"                  // files' content in pieces of at most 1 MiB, keyed id/sequence number
	TrainingUploads           Collection = "training_uploads"             // training jobs' uploaded dataset files in pieces of at most 1 MiB, keyed job id/sequence number (6 digits)
	OptimizationBundles       Collection = "optimization_bundles"         // optimization jobs' bundles as downloaded and checked at submit, in pieces of at most 1 MiB, keyed job id/sequence number (6 digits), each with an index entry keyed "!" + job id
	Batches                   Collection = "batches"                      // batches (OpenAI's Batch API), keyed by id
	BatchResults              Collection = "batch_results"                // each answered line of a running batch, keyed batch id/line index
	RequestLog                Collection = "request_log"                  // the gateway's request history (usagelog.History), keyed by the request's id (its receipt time in Unix µs, made unique: 16 hex digits); owner index kind "request"
	Deployments               Collection = "deployments"                  // deployments added through LiteLLM's POST /model/new, keyed by model_info.id; their api_key sealed (AES-GCM), never in clear
	DeploymentReservedGroups  Collection = "deployment_reserved_groups"   // one record, "model-groups": the --model-groups names the last reload on any replica swapped in, which /model/new may not take
	RealtimeSecrets           Collection = "realtime_secrets"             // ephemeral realtime client secrets (POST /v1/realtime/client_secrets), keyed by their SHA-256, never in clear
	RealtimeCalls             Collection = "realtime_calls"               // realtime calls being watched (POST /v1/realtime/calls), keyed by call id: who placed each and with which model, for a hang-up at any replica
	RealtimeSecretExpiry      Collection = "realtime_secret_expiry"       // expiry (Unix nanoseconds, 19 digits)/client secret's SHA-256 -> "" (written and deleted with each RealtimeSecrets record)
)

// Entry is one record returned by List.
type Entry struct {
	Key   string
	Value []byte
}

// ListOptions selects and pages the records List returns.
type ListOptions struct {
	// Prefix keeps only keys that start with it.
	Prefix string
	// After starts the listing strictly after this key (the last key of the previous page).
	After string
	// Limit caps the number of entries; 0 means no limit.
	Limit int
	// Descending lists in descending key order: the page starts strictly before After
	// (the last key of the previous page, as in ascending order), at the end of the
	// collection or of Prefix's keys when After is empty.
	Descending bool
}

// Reader reads records.
type Reader interface {
	// Get returns the value stored under key, or an error matching ErrNotFound.
	Get(ctx context.Context, c Collection, key string) ([]byte, error)
	// List returns the entries of c in ascending key order (descending with
	// opts.Descending), as selected by opts.
	List(ctx context.Context, c Collection, opts ListOptions) ([]Entry, error)
}

// Writer writes records.
type Writer interface {
	// Put stores value under key, replacing any previous value. The driver keeps its own copy.
	Put(ctx context.Context, c Collection, key string, value []byte) error
	// Delete removes key. Deleting a missing key is not an error.
	Delete(ctx context.Context, c Collection, key string) error
}

// Tx is the view of the store inside Update. Reads see the transaction's own writes.
type Tx interface {
	Reader
	Writer
}

// Driver is what a storage backend implements.
type Driver interface {
	Reader
	Writer
	// Update runs fn in a transaction: if fn returns an error none of its writes are kept.
	// A driver may run fn more than once (e.g. to group concurrent writers into one commit),
	// so fn must act only through tx, or idempotently.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// Close releases the backend. Later calls return ErrClosed.
	Close() error
}

// Ref names one record: its collection and key.
type Ref struct {
	Collection Collection
	Key        string
}

// RecordLocker is implemented by a Driver whose concurrent transactions writing one record
// may abort each other (pgstore's SERIALIZABLE transactions, run again after a
// serialization failure up to a bound). UpdateLocked is Update that first waits until no
// other UpdateLocked naming one of the records of locks is running, and holds those off
// until it ends: read-modify-writes of a record many writers share (a budget account
// every request charges) then run one after the other, waiting instead of aborting each
// other. fn may read and write other records too, as in Update; locks that name no
// stored record (one fn creates) are taken all the same. Drivers whose writers never
// abort each other (memstore and boltstore run them one at a time) need not implement
// it: UpdateLocked is then Update. A wrapping driver should forward it (with the package
// function UpdateLocked), else its store's writers of a hot record abort each other as
// under Update.
type RecordLocker interface {
	UpdateLocked(ctx context.Context, locks []Ref, fn func(tx Tx) error) error
}

// UpdateLocked runs fn as d's RecordLocker.UpdateLocked when d has it, else as d.Update:
// for drivers that wrap another and forward its locking.
func UpdateLocked(ctx context.Context, d Driver, locks []Ref, fn func(tx Tx) error) error {
	if l, ok := d.(RecordLocker); ok {
		return l.UpdateLocked(ctx, locks, fn)
	}
	return d.Update(ctx, fn)
}

// Store is the portable type capabilities hold. It is safe for concurrent use. Make one with
// New or a driver package's Open; the zero Store answers every call with ErrNoDriver.
type Store struct {
	d Driver
}

// New wraps a driver into a Store.
func New(d Driver) *Store { return &Store{d: d} }

func check(c Collection, key string) error {
	if c == "" {
		return fmt.Errorf("%w: empty collection", ErrInvalid)
	}
	if key == "" {
		return fmt.Errorf("%w: empty key in %s", ErrInvalid, c)
	}
	return nil
}

// Get returns the value stored under key in c, or an error matching ErrNotFound.
func (s *Store) Get(ctx context.Context, c Collection, key string) ([]byte, error) {
	if err := s.check(c, key); err != nil {
		return nil, err
	}
	return s.d.Get(ctx, c, key)
}

// Put stores value under key in c.
func (s *Store) Put(ctx context.Context, c Collection, key string, value []byte) error {
	if err := s.check(c, key); err != nil {
		return err
	}
	return s.d.Put(ctx, c, key, value)
}

// Delete removes key from c; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, c Collection, key string) error {
	if err := s.check(c, key); err != nil {
		return err
	}
	return s.d.Delete(ctx, c, key)
}

// List returns the entries of c in ascending key order (descending with opts.Descending).
func (s *Store) List(ctx context.Context, c Collection, opts ListOptions) ([]Entry, error) {
	if s == nil || s.d == nil {
		return nil, ErrNoDriver
	}
	if c == "" {
		return nil, fmt.Errorf("%w: empty collection", ErrInvalid)
	}
	return s.d.List(ctx, c, opts)
}

// Update runs fn in an all-or-nothing transaction.
func (s *Store) Update(ctx context.Context, fn func(tx Tx) error) error {
	if s == nil || s.d == nil {
		return ErrNoDriver
	}
	return s.d.Update(ctx, func(tx Tx) error { return fn(checkedTx{tx}) })
}

// UpdateLocked is Update for a transaction that reads and writes the records locks names
// (and maybe others): on a driver whose concurrent writers of a record may abort each
// other (PostgreSQL), the transactions naming one record run one after the other instead
// (RecordLocker); on the others it is Update. Name the records many writers share and
// the transaction reads before it writes them (a budget account every request charges).
func (s *Store) UpdateLocked(ctx context.Context, locks []Ref, fn func(tx Tx) error) error {
	if s == nil || s.d == nil {
		return ErrNoDriver
	}
	for _, r := range locks {
		if err := check(r.Collection, r.Key); err != nil {
			return err
		}
	}
	return UpdateLocked(ctx, s.d, locks, func(tx Tx) error { return fn(checkedTx{tx}) })
}

// CommitStatus reports whether the transaction of an Update that failed with a
// *CommitUnknownError (its Token) committed; an error when the driver cannot tell (yet, or
// at all: one matching ErrCommitUnknown, as from a driver that is no CommitChecker).
// Drivers wrapping another (an Unwrap() Driver method, as telemetry's) are looked through.
func (s *Store) CommitStatus(ctx context.Context, token string) (committed bool, err error) {
	if s == nil || s.d == nil {
		return false, ErrNoDriver
	}
	for d := s.d; d != nil; {
		if c, ok := d.(CommitChecker); ok {
			return c.CommitStatus(ctx, token)
		}
		u, ok := d.(interface{ Unwrap() Driver })
		if !ok {
			break
		}
		d = u.Unwrap()
	}
	return false, fmt.Errorf("%w: the driver cannot tell a commit's outcome", ErrCommitUnknown)
}

// Close closes the underlying driver.
func (s *Store) Close() error {
	if s == nil || s.d == nil {
		return ErrNoDriver
	}
	return s.d.Close()
}

// check is check with the driver: a Store without one answers ErrNoDriver.
func (s *Store) check(c Collection, key string) error {
	if s == nil || s.d == nil {
		return ErrNoDriver
	}
	return check(c, key)
}

type checkedTx struct{ tx Tx }

// Unwrap returns the driver's transaction, for code that reaches a driver's native
// transaction (pgstore.PgxTx) to write to the same database in it.
func (t checkedTx) Unwrap() Tx { return t.tx }

func (t checkedTx) Get(ctx context.Context, c Collection, key string) ([]byte, error) {
	if err := check(c, key); err != nil {
		return nil, err
	}
	return t.tx.Get(ctx, c, key)
}
func (t checkedTx) List(ctx context.Context, c Collection, opts ListOptions) ([]Entry, error) {
	return t.tx.List(ctx, c, opts)
}
func (t checkedTx) Put(ctx context.Context, c Collection, key string, value []byte) error {
	if err := check(c, key); err != nil {
		return err
	}
	return t.tx.Put(ctx, c, key, value)
}
func (t checkedTx) Delete(ctx context.Context, c Collection, key string) error {
	if err := check(c, key); err != nil {
		return err
	}
	return t.tx.Delete(ctx, c, key)
}

// GetJSON reads the record under key in c and decodes it as JSON into a T.
func GetJSON[T any](ctx context.Context, r Reader, c Collection, key string) (T, error) {
	var v T
	b, err := r.Get(ctx, c, key)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("store: decode %s/%s: %w", c, key, err)
	}
	return v, nil
}

// PutJSON encodes v as JSON and stores it under key in c.
func PutJSON(ctx context.Context, w Writer, c Collection, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: encode %s/%s: %w", c, key, err)
	}
	return w.Put(ctx, c, key, b)
}
