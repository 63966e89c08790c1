package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// File purposes.
const (
	// PurposeBatch is a batch's input: JSONL requests, checked line by line at upload.
	PurposeBatch = "batch"
	// PurposeBatchOutput is a batch's output or error file; only the server creates them.
	PurposeBatchOutput = "batch_output"
)

// Bounds and defaults of files.
const (
	// ChunkSize is the largest piece of a file's content one store record holds. Values are
	// read and written whole by every driver, so pieces bound the memory a file takes to
	// upload, read or write (one piece) whatever its size; bbolt keeps a value in
	// contiguous pages, which large values fragment, and PostgreSQL TOASTs each value and
	// returns it whole. 1 MiB keeps a 100 MiB file to 100 records.
	ChunkSize = 1 << 20
	// DefaultMaxFileBytes is the largest upload when FilesOptions.MaxBytes is 0 (serve
	// --files-max-bytes): OpenAI's bound for a batch input is 200 MB; the content is
	// stored in the database (bbolt or PostgreSQL), so the default is half of it.
	DefaultMaxFileBytes = 100 << 20
	// MaxRequests is the most requests (lines) one batch input file may hold: OpenAI's.
	MaxRequests = 50_000
	// DefaultInputExpiry is how long an uploaded batch input is kept when the upload does
	// not say (OpenAI keeps purpose=batch files 30 days).
	DefaultInputExpiry = 30 * 24 * time.Hour
	// MinExpiresAfter and MaxExpiresAfter bound expires_after.seconds and
	// output_expires_after.seconds (OpenAI's: one hour to 30 days).
	MinExpiresAfter = 3600
	MaxExpiresAfter = 2_592_000
	// MaxFileListLimit is the largest page of ListFiles, and its default (OpenAI's).
	MaxFileListLimit = 10_000
	// staleUpload is how long an upload may stay unfinished before Sweep removes it (its
	// process died mid-upload).
	staleUpload = time.Hour
)

// File is OpenAI's file object.
type File struct {
	ID     string `json:"id" jsonschema:"description=The file's id (file- and 24 hex digits)"`
	Object string `json:"object" jsonschema:"enum=file"`
	Bytes  int64  `json:"bytes" jsonschema:"description=The file's size in bytes"`
	// CreatedAt and ExpiresAt are Unix seconds; ExpiresAt is null for a file kept until it
	// is deleted.
	CreatedAt int64  `json:"created_at"`
	ExpiresAt *int64 `json:"expires_at" jsonschema:"description=Unix seconds when the file is deleted; null for never"`
	Filename  string `json:"filename"`
	Purpose   string `json:"purpose" jsonschema:"enum=batch,enum=batch_output"`
	Status    string `json:"status" jsonschema:"enum=processed,description=Always processed: a file is checked as it is uploaded"`
	// StatusDetails is OpenAI's deprecated field; always null.
	StatusDetails *string `json:"status_details" jsonschema:"type=null"`
}

// FileList is a page of ListFiles (OpenAI's list object).
type FileList struct {
	Object  string `json:"object" jsonschema:"enum=list"`
	Data    []File `json:"data"`
	FirstID string `json:"first_id,omitempty"`
	LastID  string `json:"last_id,omitempty"`
	HasMore bool   `json:"has_more"`
}

// FileDeletion is the answer of a file's DELETE.
type FileDeletion struct {
	ID      string `json:"id"`
	Object  string `json:"object" jsonschema:"enum=file"`
	Deleted bool   `json:"deleted"`
}

// ExpiresAfter is OpenAI's expiration policy of a file: Seconds after its creation.
type ExpiresAfter struct {
	// Anchor is the time the policy counts from; only "created_at".
	Anchor string `json:"anchor" jsonschema:"enum=created_at"`
	// Seconds is 3600 (one hour) to 2592000 (30 days).
	Seconds int64 `json:"seconds" jsonschema:"minimum=3600,maximum=2592000"`
}

// check validates e as the field param.
func (e *ExpiresAfter) check(param string) error {
	if e == nil {
		return nil
	}
	if e.Anchor != "created_at" {
		return invalid(param, "%s.anchor must be \"created_at\", got %q", param, e.Anchor)
	}
	if e.Seconds < MinExpiresAfter || e.Seconds > MaxExpiresAfter {
		return invalid(param, "%s.seconds must be %d (one hour) to %d (30 days), got %d", param, MinExpiresAfter, MaxExpiresAfter, e.Seconds)
	}
	return nil
}

// Upload is a file a client uploads.
type Upload struct {
	// Filename is the name the client gave (kept, shown back; at most 512 bytes kept).
	Filename string
	// Purpose must be PurposeBatch.
	Purpose string
	// Content is read twice: once to check it, once to store it.
	Content io.ReadSeeker
	// ExpiresAfter, when set, bounds the file's life; else DefaultInputExpiry.
	ExpiresAfter *ExpiresAfter
}

// File states in the store: a file is written piece by piece in "uploading" (invisible)
// and becomes "processed" in the transaction that indexes it.
const (
	stateUploading = "uploading"
	stateProcessed = "processed"
	// stateDeleted is a deleted or expired file's tombstone: no content, not listed, but
	// its place in its owner's listing is kept a day, so that a client deleting the files
	// it pages through (after=<the file it just deleted>) can go on.
	stateDeleted = "deleted"
)

// fileRecord is a file's description in store.Files; its content is in store.FileChunks
// under "<id>/<sequence number, 6 digits>".
type fileRecord struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"`
	Filename  string    `json:"filename"`
	Purpose   string    `json:"purpose"`
	Bytes     int64     `json:"bytes"`
	Chunks    int       `json:"chunks"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Input summarizes a batch input, checked at upload.
	Input *inputSummary `json:"input,omitempty"`
	// HeldBy lists the unfinished batches that read the file: it cannot be deleted, and
	// does not expire, until they end.
	HeldBy []string `json:"held_by,omitempty"`
}

// ref is the record's owner-index reference.
func (f *fileRecord) ref() store.OwnedRef {
	return store.OwnedRef{Kind: fileKind, Owner: f.Owner, Created: f.CreatedAt, ID: f.ID}
}

// expired reports whether the file is past its expiry at now.
func (f *fileRecord) expired(now time.Time) bool {
	return !f.ExpiresAt.IsZero() && !now.Before(f.ExpiresAt)
}

// object is the record's wire form.
func (f *fileRecord) object() File {
	out := File{ID: f.ID, Object: "file", Bytes: f.Bytes, CreatedAt: f.CreatedAt.Unix(), Filename: f.Filename,
		Purpose: f.Purpose, Status: stateProcessed}
	if !f.ExpiresAt.IsZero() {
		e := f.ExpiresAt.Unix()
		out.ExpiresAt = &e
	}
	return out
}

// fileKind is the owner-index kind of files.
const fileKind = "file"

func chunkKey(id string, seq int) string { return fmt.Sprintf("%s/%06d", id, seq) }

// FilesOptions configure NewFiles. The zero value is ready to use.
type FilesOptions struct {
	// MaxBytes is the largest upload (0: DefaultMaxFileBytes).
	MaxBytes int64
	// Clock is the time source (default time.Now).
	Clock func() time.Time
	// Logger receives the sweep's lines (default slog.Default()).
	Logger *slog.Logger
}

// Files is OpenAI's Files API on a store: batch inputs uploaded by clients and the output
// and error files batches write. Every file belongs to an owner (the server passes the API
// key's); another owner's file answers ErrNotFound. It is safe for concurrent use.
type Files struct {
	st       *store.Store
	maxBytes int64
	now      func() time.Time
	log      *slog.Logger
}

// NewFiles returns the files of st.
func NewFiles(st *store.Store, o FilesOptions) (*Files, error) {
	if st == nil {
		return nil, errors.New("batch: NewFiles needs a store")
	}
	f := &Files{st: st, maxBytes: o.MaxBytes, now: o.Clock, log: o.Logger}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultMaxFileBytes
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	return f, nil
}

// MaxBytes is the largest upload Upload takes.
func (f *Files) MaxBytes() int64 { return f.maxBytes }

// newFileID returns a new file id: "file-" and 24 hex digits.
func newFileID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "file-" + hex.EncodeToString(b[:])
}

// Upload checks and stores a client's file for owner. Only PurposeBatch is accepted (a
// *ValidationError naming purpose otherwise); the content must be a batch input (see
// CheckInput: a *ValidationError naming the line and field) of at most MaxBytes (a
// *ValidationError matching ErrTooLarge). Nothing is stored unless the whole file passes.
func (f *Files) Upload(ctx context.Context, owner string, u Upload) (File, error) {
	switch u.Purpose {
	case PurposeBatch:
	case "":
		return File{}, invalid("purpose", "purpose is required: this server's files are batch inputs (purpose \"batch\")")
	case PurposeBatchOutput:
		return File{}, invalid("purpose", "purpose \"batch_output\" is for the files batches write; upload batch inputs with purpose \"batch\"")
	default:
		return File{}, invalid("purpose", "purpose %q is not supported here: this server's Files API holds batch inputs (purpose \"batch\") and the output files batches write", u.Purpose)
	}
	if u.Content == nil {
		return File{}, invalid("file", "file is required")
	}
	if err := u.ExpiresAfter.check("expires_after"); err != nil {
		return File{}, err
	}
	n, err := u.Content.Seek(0, io.SeekEnd)
	if err != nil {
		return File{}, fmt.Errorf("batch: size of the upload: %w", err)
	}
	if n > f.maxBytes {
		return File{}, &ValidationError{Param: "file", TooLarge: true,
			Message: fmt.Sprintf("the file is %d bytes, over this server's limit of %d bytes per file", n, f.maxBytes)}
	}
	if n == 0 {
		return File{}, invalid("file", "the file is empty: a batch input holds one JSON request per line")
	}
	if _, err := u.Content.Seek(0, io.SeekStart); err != nil {
		return File{}, fmt.Errorf("batch: rewind the upload: %w", err)
	}
	sum, err := CheckInput(u.Content)
	if err != nil {
		return File{}, err
	}
	if _, err := u.Content.Seek(0, io.SeekStart); err != nil {
		return File{}, fmt.Errorf("batch: rewind the upload: %w", err)
	}
	now := f.now().UTC()
	rec := fileRecord{ID: newFileID(), Owner: owner, Filename: clip(u.Filename, 512), Purpose: PurposeBatch,
		CreatedAt: now, ExpiresAt: now.Add(DefaultInputExpiry), Input: sum}
	if u.ExpiresAfter != nil {
		rec.ExpiresAt = now.Add(time.Duration(u.ExpiresAfter.Seconds) * time.Second)
	}
	w, err := f.create(ctx, rec)
	if err != nil {
		return File{}, err
	}
	if _, err := io.Copy(w, u.Content); err != nil {
		w.abort()
		return File{}, fmt.Errorf("batch: store file: %w", err)
	}
	out, err := w.commit()
	if err != nil {
		return File{}, err
	}
	return out.object(), nil
}

// clip cuts s to at most n bytes, dropping a rune cut in two.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// Get returns owner's file id.
func (f *Files) Get(ctx context.Context, owner, id string) (File, error) {
	rec, err := f.get(ctx, f.st, owner, id)
	if err != nil {
		return File{}, err
	}
	return rec.object(), nil
}

// get reads owner's processed, unexpired file id through r.
func (f *Files) get(ctx context.Context, r store.Reader, owner, id string) (fileRecord, error) {
	if id == "" {
		return fileRecord{}, invalid("file_id", "file_id is required")
	}
	rec, err := store.GetJSON[fileRecord](ctx, r, store.Files, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!store.Owns(owner, rec.Owner) || rec.State != stateProcessed || rec.expired(f.now()))) {
		return fileRecord{}, &NotFoundError{What: "file", ID: id}
	}
	if err != nil {
		return fileRecord{}, fmt.Errorf("batch: read file %s: %w", id, err)
	}
	return rec, nil
}

// FileQuery selects a page of ListFiles.
type FileQuery struct {
	// Purpose keeps only files of this purpose ("": all).
	Purpose string
	// After is the id of the last file of the previous page ("": the first page).
	After string
	// Limit is 1 to MaxFileListLimit; 0 means MaxFileListLimit (OpenAI's default).
	Limit int
	// Order is "desc" (newest first, the default) or "asc".
	Order string
}

// List returns a page of owner's files.
func (f *Files) List(ctx context.Context, owner string, q FileQuery) (FileList, error) {
	limit := q.Limit
	if limit == 0 {
		limit = MaxFileListLimit
	}
	if limit < 1 || limit > MaxFileListLimit {
		return FileList{}, invalid("limit", "limit must be 1 to %d, got %d", MaxFileListLimit, q.Limit)
	}
	var oldest bool
	switch q.Order {
	case "", "desc":
	case "asc":
		oldest = true
	default:
		return FileList{}, invalid("order", "order must be \"asc\" or \"desc\", got %q", q.Order)
	}
	switch q.Purpose {
	case "", PurposeBatch, PurposeBatchOutput:
	default:
		return FileList{}, invalid("purpose", "purpose must be \"batch\" or \"batch_output\" (the purposes this server keeps), got %q", q.Purpose)
	}
	cursor := ""
	if q.After != "" {
		// Any file of the key's that was listed, deleted or expired since (its tombstone).
		rec, err := store.GetJSON[fileRecord](ctx, f.st, store.Files, q.After)
		if err != nil || !store.Owns(owner, rec.Owner) || rec.State == stateUploading {
			return FileList{}, invalid("after", "after names no file of this key: %q", q.After)
		}
		cursor = store.CursorAfter(rec.ref())
	}
	now := f.now()
	out := FileList{Object: "list", Data: []File{}}
	for {
		page, next, err := store.ListOwned(ctx, f.st, store.OwnedQuery{Kind: fileKind, Owner: owner, Cursor: cursor,
			Limit: min(limit-len(out.Data), store.MaxPageLimit), OldestFirst: oldest},
			func(id string) (File, bool, error) {
				rec, err := store.GetJSON[fileRecord](ctx, f.st, store.Files, id)
				if errors.Is(err, store.ErrNotFound) {
					return File{}, false, nil
				}
				if err != nil {
					return File{}, false, err
				}
				ok := rec.Owner == owner && rec.State == stateProcessed && !rec.expired(now) && (q.Purpose == "" || rec.Purpose == q.Purpose)
				return rec.object(), ok, nil
			})
		if err != nil {
			return FileList{}, fmt.Errorf("batch: list files: %w", err)
		}
		out.Data = append(out.Data, page...)
		if next == "" {
			break
		}
		if len(out.Data) >= limit {
			out.HasMore = true
			break
		}
		cursor = next
	}
	if len(out.Data) > 0 {
		out.FirstID, out.LastID = out.Data[0].ID, out.Data[len(out.Data)-1].ID
	}
	return out, nil
}

// Delete deletes owner's file id and its content in one transaction. The input of an
// unfinished batch cannot be deleted (a *ConflictError).
func (f *Files) Delete(ctx context.Context, owner, id string) error {
	err := f.st.Update(ctx, func(tx store.Tx) error {
		rec, err := f.get(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if len(rec.HeldBy) > 0 {
			return &ConflictError{Message: fmt.Sprintf("file %s is the input of batch %s, which has not ended: cancel the batch (POST /v1/batches/%s/cancel) or wait for it to end, then delete the file", id, rec.HeldBy[0], rec.HeldBy[0])}
		}
		return tombstoneFileTx(ctx, tx, &rec, f.now())
	})
	if err != nil {
		var nf *NotFoundError
		var ce *ConflictError
		var ve *ValidationError
		if errors.As(err, &nf) || errors.As(err, &ce) || errors.As(err, &ve) {
			return err
		}
		return fmt.Errorf("batch: delete file %s: %w", id, err)
	}
	return nil
}

// tombstoneLife is how long a deleted file's tombstone keeps its place in listings.
const tombstoneLife = 24 * time.Hour

// tombstoneFileTx removes rec's content and index entry and leaves its tombstone.
func tombstoneFileTx(ctx context.Context, tx store.Tx, rec *fileRecord, now time.Time) error {
	for i := range rec.Chunks {
		if err := tx.Delete(ctx, store.FileChunks, chunkKey(rec.ID, i)); err != nil {
			return err
		}
	}
	if rec.State == stateProcessed {
		if err := store.DeleteOwned(ctx, tx, rec.ref()); err != nil {
			return err
		}
	}
	t := fileRecord{ID: rec.ID, Owner: rec.Owner, Purpose: rec.Purpose, CreatedAt: rec.CreatedAt, State: stateDeleted, ExpiresAt: now.Add(tombstoneLife)}
	return store.PutJSON(ctx, tx, store.Files, rec.ID, t)
}

// deleteFileTx removes rec, its index entry and its content.
func deleteFileTx(ctx context.Context, tx store.Tx, rec *fileRecord) error {
	for i := range rec.Chunks {
		if err := tx.Delete(ctx, store.FileChunks, chunkKey(rec.ID, i)); err != nil {
			return err
		}
	}
	if rec.State == stateProcessed {
		if err := store.DeleteOwned(ctx, tx, rec.ref()); err != nil {
			return err
		}
	}
	return tx.Delete(ctx, store.Files, rec.ID)
}

// Open returns owner's file id and a reader of its content, one piece in memory at a time.
// A file deleted while it is read fails the next Read with an error matching ErrNotFound.
func (f *Files) Open(ctx context.Context, owner, id string) (File, io.ReadCloser, error) {
	rec, err := f.get(ctx, f.st, owner, id)
	if err != nil {
		return File{}, nil, err
	}
	return rec.object(), &chunkReader{ctx: ctx, st: f.st, id: id, chunks: rec.Chunks}, nil
}

// chunkReader reads a file's pieces in order.
type chunkReader struct {
	ctx    context.Context
	st     *store.Store
	id     string
	chunks int
	next   int
	buf    []byte
}

// Read implements io.Reader.
func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.next >= r.chunks {
			return 0, io.EOF
		}
		b, err := r.st.Get(r.ctx, store.FileChunks, chunkKey(r.id, r.next))
		if errors.Is(err, store.ErrNotFound) {
			return 0, &NotFoundError{What: "file", ID: r.id}
		}
		if err != nil {
			return 0, fmt.Errorf("batch: read file %s: %w", r.id, err)
		}
		r.buf = b
		r.next++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Close implements io.Closer.
func (r *chunkReader) Close() error { r.buf, r.next = nil, r.chunks; return nil }

// fileWriter stores a file's content piece by piece: each piece is committed with the
// record's count of pieces, so a file whose writer died can be removed whole.
type fileWriter struct {
	f   *Files
	ctx context.Context
	rec fileRecord
	buf []byte
}

// create starts writing file rec (its id, owner, names and times set): it stores the
// record as uploading. A record of the same id left uploading (a writer that died) is
// removed first; a processed one is an error matching errExists.
func (f *Files) create(ctx context.Context, rec fileRecord) (*fileWriter, error) {
	rec.State, rec.Bytes, rec.Chunks = stateUploading, 0, 0
	err := f.st.Update(ctx, func(tx store.Tx) error {
		old, err := store.GetJSON[fileRecord](ctx, tx, store.Files, rec.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		case old.State == stateProcessed:
			return errExists
		default:
			if err := deleteFileTx(ctx, tx, &old); err != nil {
				return err
			}
		}
		return store.PutJSON(ctx, tx, store.Files, rec.ID, rec)
	})
	if err != nil {
		if errors.Is(err, errExists) {
			return nil, err
		}
		return nil, fmt.Errorf("batch: store file: %w", err)
	}
	return &fileWriter{f: f, ctx: ctx, rec: rec, buf: make([]byte, 0, ChunkSize)}, nil
}

// errExists means a file of that id is already stored (a batch's output written by an
// earlier run).
var errExists = errors.New("batch: file exists")

// Write implements io.Writer.
func (w *fileWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), ChunkSize-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(w.buf) == ChunkSize {
			if err := w.flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// flush stores the buffered piece.
func (w *fileWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	seq := w.rec.Chunks
	err := w.f.st.Update(w.ctx, func(tx store.Tx) error {
		if err := tx.Put(w.ctx, store.FileChunks, chunkKey(w.rec.ID, seq), w.buf); err != nil {
			return err
		}
		rec := w.rec
		rec.Chunks, rec.Bytes = seq+1, rec.Bytes+int64(len(w.buf))
		return store.PutJSON(w.ctx, tx, store.Files, rec.ID, rec)
	})
	if err != nil {
		return fmt.Errorf("batch: store file %s: %w", w.rec.ID, err)
	}
	w.rec.Chunks, w.rec.Bytes = seq+1, w.rec.Bytes+int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// commit stores the last piece and makes the file visible (processed and indexed), with
// change applied to the record in the same transaction (nil: none).
func (w *fileWriter) commit() (fileRecord, error) {
	if err := w.flush(); err != nil {
		w.abort()
		return fileRecord{}, err
	}
	w.rec.State = stateProcessed
	err := w.f.st.Update(w.ctx, func(tx store.Tx) error {
		if err := store.PutJSON(w.ctx, tx, store.Files, w.rec.ID, w.rec); err != nil {
			return err
		}
		return store.PutOwned(w.ctx, tx, w.rec.ref())
	})
	if err != nil {
		w.abort()
		return fileRecord{}, fmt.Errorf("batch: store file %s: %w", w.rec.ID, err)
	}
	return w.rec, nil
}

// abort removes what was written (best effort: a leftover is removed by Sweep).
func (w *fileWriter) abort() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 30*time.Second)
	defer cancel()
	_ = w.f.st.Update(ctx, func(tx store.Tx) error {
		rec, err := store.GetJSON[fileRecord](ctx, tx, store.Files, w.rec.ID)
		if err != nil {
			return nil
		}
		if rec.State != stateUploading {
			return nil
		}
		return deleteFileTx(ctx, tx, &rec)
	})
}

// hold records, in tx, that batch id reads owner's file rec.
func holdTx(ctx context.Context, tx store.Tx, rec *fileRecord, id string) error {
	if !slices.Contains(rec.HeldBy, id) {
		rec.HeldBy = append(rec.HeldBy, id)
	}
	return store.PutJSON(ctx, tx, store.Files, rec.ID, rec)
}

// releaseTx removes batch id's hold on file fileID in tx (a file gone is not an error).
func releaseTx(ctx context.Context, tx store.Tx, fileID, id string) error {
	rec, err := store.GetJSON[fileRecord](ctx, tx, store.Files, fileID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	i := slices.Index(rec.HeldBy, id)
	if i < 0 {
		return nil
	}
	rec.HeldBy = slices.Delete(rec.HeldBy, i, i+1)
	return store.PutJSON(ctx, tx, store.Files, rec.ID, rec)
}

// Sweep deletes the files past their expiry (unless an unfinished batch reads them) and
// uploads left unfinished for an hour (their process died), and reports how many it
// deleted.
func (f *Files) Sweep(ctx context.Context) (int, error) {
	now := f.now()
	deleted := 0
	after := ""
	for {
		entries, err := f.st.List(ctx, store.Files, store.ListOptions{After: after, Limit: 500})
		if err != nil {
			return deleted, fmt.Errorf("batch: sweep files: %w", err)
		}
		for _, e := range entries {
			var rec fileRecord
			if decode(e.Value, &rec) != nil {
				continue
			}
			due := (rec.State == stateProcessed && rec.expired(now) && len(rec.HeldBy) == 0) ||
				(rec.State == stateUploading && now.Sub(rec.CreatedAt) > staleUpload) ||
				(rec.State == stateDeleted && rec.expired(now))
			if !due {
				continue
			}
			gone := false
			err := f.st.Update(ctx, func(tx store.Tx) error {
				gone = false
				cur, err := store.GetJSON[fileRecord](ctx, tx, store.Files, rec.ID)
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
				if cur.State != rec.State || len(cur.HeldBy) > 0 {
					return nil
				}
				gone = cur.State != stateDeleted // a tombstone's end is not a file deleted
				if cur.State == stateProcessed {
					return tombstoneFileTx(ctx, tx, &cur, now)
				}
				return deleteFileTx(ctx, tx, &cur)
			})
			if err != nil {
				return deleted, fmt.Errorf("batch: sweep file %s: %w", rec.ID, err)
			}
			if gone {
				deleted++
			}
		}
		if len(entries) < 500 {
			return deleted, nil
		}
		after = entries[len(entries)-1].Key
	}
}
