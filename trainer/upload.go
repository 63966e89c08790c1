package trainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/store"
)

// UploadChunkSize is the size of the pieces an uploaded dataset is stored in
// (store.TrainingUploads): a 200 MiB upload is 200 records, none too large for a
// PostgreSQL row or a bbolt value.
const UploadChunkSize = 1 << 20

// Upload is a dataset file sent with the training request itself rather than named by a
// URL.
type Upload struct {
	// Filename names the file in errors and hints its format by its extension, as a URL's
	// path does ("" reads as "upload").
	Filename string
	// ContentType hints the format as a URL's Content-Type does ("" for none).
	ContentType string
	// Data is the file's content.
	Data []byte
	// Format is how to read Data: "" detects a records file (JSON array, JSONL or CSV with
	// problem,correct_models) as for a URL; FormatJSON, FormatJSONL or FormatCSV insist on
	// one; FormatNotDiamond reads Not Diamond's joint CSV with NotDiamond.
	Format Format
	// NotDiamond configures FormatNotDiamond; with a records format it must be zero (its
	// options are refused, naming prompt_column, maximize or llm_providers).
	NotDiamond NotDiamondCSV
}

// UploadInfo describes a job's uploaded dataset in its status (never its content).
type UploadInfo struct {
	// Filename is the uploaded file's name.
	Filename string `json:"filename"`
	// Bytes is its size.
	Bytes int `json:"bytes"`
	// Format is how it is read: json, jsonl, csv (records) or notdiamond (Not Diamond's
	// joint CSV).
	Format Format `json:"format" jsonschema:"enum=json,enum=jsonl,enum=csv,enum=notdiamond"`
}

// uploadRecord is what a job record keeps about its uploaded dataset; the content is in
// store.TrainingUploads under uploadKey(job id, 0…Chunks-1).
type uploadRecord struct {
	Filename    string         `json:"filename"`
	ContentType string         `json:"content_type,omitempty"`
	Bytes       int            `json:"bytes"`
	Chunks      int            `json:"chunks"`
	Format      Format         `json:"format"`
	NotDiamond  *NotDiamondCSV `json:"notdiamond,omitempty"`
}

func uploadKey(jobID string, seq int) string { return fmt.Sprintf("%s/%06d", jobID, seq) }

// MaxUploadBytes is the most bytes an uploaded dataset may hold: the bound the fetcher
// applies to one URL's body (its MaxBytes, fetch.DefaultMaxBytes by default), within
// MaxDatasetBytes.
func (s *Service) MaxUploadBytes() int64 { return min(s.fetcher.Limit(), MaxDatasetBytes) }

// SubmitUpload queues a training job for owner on a dataset uploaded with the request. The
// upload is read at once, so that bad data is refused before anything is stored: a
// *ValidationError naming upload (empty; larger than MaxUploadBytes, wrapping ErrTooLarge;
// more than MaxRows rows; fewer than MinRows usable rows, those with a correct model, or usable rows naming fewer than MinClasses or more than MaxClasses models; or a
// row that breaks a rule — it then wraps the *DatasetError naming the line, and
// matches ErrDataset too), format, prompt_column, maximize (a joint CSV option on a records
// upload) or llm_providers. The file is stored with the job in the store
// (store.TrainingUploads), so whichever process runs the job reads it there; it is
// deleted when the job ends (completed or failed: a retry uploads again), when the job is
// deleted, and by Cleanup if it outlived its job. It never appears in the job's status,
// which says only its name, size and format (JobStatus.Upload). opts and the other
// failures are as for SubmitWithOptions.
func (s *Service) SubmitUpload(ctx context.Context, owner string, up Upload, opts JobOptions) (Job, error) {
	if err := checkPrices(opts.ModelPrices); err != nil {
		return Job{}, err
	}
	name := uploadName(up.Filename)
	if len(up.Data) == 0 {
		return Job{}, invalid("upload", "the dataset file %s is empty", name)
	}
	if limit := s.MaxUploadBytes(); int64(len(up.Data)) > limit {
		return Job{}, tooLarge(name, fmt.Sprintf("holds %d bytes", len(up.Data)), limit)
	}
	rec := &uploadRecord{Filename: name, ContentType: up.ContentType, Bytes: len(up.Data), Format: up.Format}
	switch up.Format {
	case FormatNotDiamond:
		nd := up.NotDiamond
		nd.PromptColumn = strings.TrimSpace(nd.PromptColumn)
		rec.NotDiamond = &nd
	case "", FormatJSON, FormatJSONL, FormatCSV:
		if err := checkNoJointOptions(up.NotDiamond); err != nil {
			return Job{}, err
		}
		f, err := DetectFormat(name, up.ContentType, up.Data)
		if err != nil {
			return Job{}, badUpload(err)
		}
		if f == FormatJSONL {
			if _, wrapped, _ := wrappedArray(name, bytes.TrimPrefix(up.Data, []byte("\xef\xbb\xbf"))); wrapped {
				f = FormatJSON // one JSON object holding the array of records: JSON, not JSONL
			}
		}
		if up.Format != "" && f != up.Format {
			return Job{}, invalid("format", "the dataset file %s was declared %s but its content reads as %s", name, up.Format, f)
		}
		rec.Format = f
	default:
		return Job{}, invalid("format", "must be one of json, jsonl, csv or notdiamond, got %q", up.Format)
	}
	recs, err := parseUpload(rec, up.Data)
	if err != nil {
		return Job{}, badUpload(err)
	}
	if usable := countUsable(recs); usable < MinRows {
		return Job{}, invalid("upload", "the dataset file %s has only %d usable rows (%d rows read, %d without any correct model); at least %d are needed to train a router",
			name, usable, len(recs), len(recs)-usable, MinRows)
	}
	// the job's other refusals of the data itself, so that it is not accepted to fail later
	if classes := usableClasses(recs); len(classes) > MaxClasses {
		return Job{}, invalid("upload", "the dataset file %s names %d distinct models; at most %d are allowed per router", name, len(classes), MaxClasses)
	} else if len(classes) < MinClasses {
		return Job{}, invalid("upload", "the dataset file %s names only one distinct model (%s); at least %d are needed to route between",
			name, strings.Join(slices.Sorted(maps.Keys(classes)), ", "), MinClasses)
	}
	rec.Chunks = (len(up.Data) + UploadChunkSize - 1) / UploadChunkSize
	j := s.newJob(owner, nil, opts)
	j.Upload = rec
	data := up.Data
	extra := inTx(ctx, opts, j.ID)
	return s.enqueue(ctx, j, func(tx store.Tx) error {
		for i := range rec.Chunks {
			piece := data[i*UploadChunkSize : min((i+1)*UploadChunkSize, len(data))]
			if err := tx.Put(ctx, store.TrainingUploads, uploadKey(j.ID, i), piece); err != nil {
				return err
			}
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
}

// ReadUpload reads an uploaded dataset file from r for SubmitUpload's Upload.Data,
// stopping after MaxUploadBytes+1 bytes: a larger file is never held whole. Over the limit
// it returns a *ValidationError naming upload that wraps ErrTooLarge (and matches
// ErrInvalid); a read failure is returned wrapped. filename names the file in the message.
func (s *Service) ReadUpload(r io.Reader, filename string) ([]byte, error) {
	limit := s.MaxUploadBytes()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("trainer: read the uploaded dataset %s: %w", uploadName(filename), err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(uploadName(filename), "is larger", limit)
	}
	return data, nil
}

// tooLarge is the refusal of an upload over limit bytes: a *ValidationError naming upload
// that wraps ErrTooLarge. size says how large the file is ("holds 12 bytes", "is larger").
func tooLarge(name, size string, limit int64) error {
	v := invalid("upload", "the dataset file %s %s; at most %d bytes (%d MiB) are allowed, as for a dataset URL", name, size, limit, limit>>20).(*ValidationError)
	v.Err = ErrTooLarge
	return v
}

// checkNoJointOptions refuses Not Diamond's joint CSV options on a records upload, which
// would otherwise be ignored: a *ValidationError naming the option as the form does.
func checkNoJointOptions(nd NotDiamondCSV) error {
	var field string
	switch {
	case strings.TrimSpace(nd.PromptColumn) != "":
		field = "prompt_column"
	case nd.Minimize:
		field = "maximize"
	case len(nd.Models) > 0:
		field = "llm_providers"
	default:
		return nil
	}
	return invalid(field, "%s applies only to Not Diamond's joint CSV (FormatNotDiamond); a records upload does not use it", field)
}

// countUsable counts the records a job trains on: those with a correct model.
func countUsable(recs []Record) int {
	n := 0
	for _, r := range recs {
		if len(r.CorrectModels) > 0 {
			n++
		}
	}
	return n
}

// usableClasses is the set of models a job's usable rows (those with a correct model)
// name, among their correct models and their scores: the router's classes.
func usableClasses(recs []Record) map[string]bool {
	classes := map[string]bool{}
	for _, r := range recs {
		if len(r.CorrectModels) == 0 {
			continue
		}
		for _, m := range r.CorrectModels {
			classes[m] = true
		}
		for m := range r.Scores {
			classes[m] = true
		}
	}
	return classes
}

// uploadName is the name an upload goes by in messages: its base name, "upload" when it
// has none.
func uploadName(filename string) string {
	n := strings.TrimSpace(path.Base(strings.ReplaceAll(filename, `\`, "/")))
	if n == "" || n == "." || n == "/" {
		return "upload"
	}
	return n
}

// badUpload makes a problem with the uploaded data a *ValidationError naming upload (a
// *ValidationError about an option stays as it is).
func badUpload(err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return err
	}
	v := invalid("upload", "%s", err.Error()).(*ValidationError)
	v.Err = err
	return v
}

// parseUpload reads an upload's records as its record says, within MaxRows (a job on
// URLs counts its rows after each file).
func parseUpload(u *uploadRecord, data []byte) ([]Record, error) {
	if u.Format == FormatNotDiamond {
		var nd NotDiamondCSV
		if u.NotDiamond != nil {
			nd = *u.NotDiamond
		}
		return ParseNotDiamondCSV(u.Filename, data, nd)
	}
	recs, err := ParseDataset(u.Filename, u.ContentType, data)
	if err == nil && len(recs) > MaxRows {
		return nil, &DatasetError{URL: u.Filename, Message: fmt.Sprintf(
			"too many rows: the file holds %d rows; at most %d rows are allowed per training job", len(recs), MaxRows)}
	}
	return recs, err
}

// readUpload reads job j's uploaded dataset from the store and parses it.
func (s *Service) readUpload(ctx context.Context, j *jobRecord) ([]Record, error) {
	u := j.Upload
	data := make([]byte, 0, u.Bytes)
	for i := range u.Chunks {
		piece, err := s.store.Get(ctx, store.TrainingUploads, uploadKey(j.ID, i))
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("internal error: the uploaded dataset %s is no longer in the store (piece %d of %d)", u.Filename, i+1, u.Chunks)
		}
		if err != nil {
			return nil, fmt.Errorf("trainer: read the uploaded dataset of job %s: %w", j.ID, err)
		}
		data = append(data, piece...)
	}
	if len(data) != u.Bytes {
		return nil, fmt.Errorf("internal error: the uploaded dataset %s holds %d bytes in the store, %d were uploaded", u.Filename, len(data), u.Bytes)
	}
	return parseUpload(u, data)
}

// dropUploadTx deletes job j's uploaded dataset, if it has one, and forgets it in the
// record (the caller writes the record). It is idempotent, as a store.Driver may run an
// Update function more than once: the pieces to delete follow from the upload's size,
// not from Chunks, which a discarded earlier run may already have zeroed in the caller's
// record; and the record's upload description is replaced, not changed in place, since
// copies of the record share it.
func dropUploadTx(ctx context.Context, tx store.Tx, j *jobRecord) error {
	if j.Upload == nil {
		return nil
	}
	n := max(j.Upload.Chunks, (j.Upload.Bytes+UploadChunkSize-1)/UploadChunkSize)
	for i := range n {
		if err := tx.Delete(ctx, store.TrainingUploads, uploadKey(j.ID, i)); err != nil {
			return err
		}
	}
	u := *j.Upload
	u.Chunks = 0
	j.Upload = &u
	return nil
}

// sweepUploads deletes the uploaded datasets whose job is gone or has ended (a process
// that stopped between the end of a job and the deletion of its upload leaves one), one
// job's pieces at a time, and returns the jobs whose uploads it deleted (would, with dry).
func (s *Service) sweepUploads(ctx context.Context, dry bool) ([]string, error) {
	var swept []string
	after := ""
	for {
		// One piece per listing: the pieces are large, and the job ids are what matters.
		es, err := s.store.List(ctx, store.TrainingUploads, store.ListOptions{After: after, Limit: 1})
		if err != nil {
			return swept, fmt.Errorf("trainer: list uploads: %w", err)
		}
		if len(es) == 0 {
			return swept, nil
		}
		id, _, _ := strings.Cut(es[0].Key, "/")
		after = id + "/\xff"
		j, err := store.GetJSON[jobRecord](ctx, s.store, store.TrainingJobs, id)
		if err == nil && j.Unfinished() {
			continue
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return swept, fmt.Errorf("trainer: read job %s: %w", id, err)
		}
		swept = append(swept, id)
		if dry {
			continue
		}
		for {
			es, err := s.store.List(ctx, store.TrainingUploads, store.ListOptions{Prefix: id + "/", Limit: 16})
			if err != nil {
				return swept, fmt.Errorf("trainer: list uploads: %w", err)
			}
			if len(es) == 0 {
				break
			}
			err = s.store.Update(ctx, func(tx store.Tx) error {
				for _, e := range es {
					if err := tx.Delete(ctx, store.TrainingUploads, e.Key); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return swept, fmt.Errorf("trainer: remove the upload of job %s: %w", id, err)
			}
		}
		s.log.Info("trainer: removed the uploaded dataset of an ended or deleted job", "job", id)
	}
}
