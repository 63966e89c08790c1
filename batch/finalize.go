package batch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// openInput opens owner's batch input fileID for a run: unlike Open, a file past its
// expiry is still read (a batch holds its input until it ends).
func (f *Files) openInput(ctx context.Context, owner, fileID string) (io.ReadCloser, error) {
	rec, err := store.GetJSON[fileRecord](ctx, f.st, store.Files, fileID)
	if err == nil && (!store.Owns(owner, rec.Owner) || rec.State != stateProcessed) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("open the input file %s: %w", fileID, err)
	}
	return &chunkReader{ctx: ctx, st: f.st, id: fileID, chunks: rec.Chunks}, nil
}

// outputFileID is the id of batch id's output (kind "output") or error file: derived from
// the batch, so a finalization that runs again writes the same files.
func outputFileID(id, kind string) string {
	h := sha256.Sum256([]byte(id + "/" + kind))
	return "file-" + hex.EncodeToString(h[:12])
}

// lazyFile writes one of a batch's files, created at its first line.
type lazyFile struct {
	f      *Files
	ctx    context.Context
	rec    fileRecord
	w      *fileWriter
	exists bool // written whole by an earlier finalization
	lines  int
}

// add writes one line.
func (l *lazyFile) add(line []byte) error {
	l.lines++
	if l.exists {
		return nil
	}
	if l.w == nil {
		w, err := l.f.create(l.ctx, l.rec)
		if errors.Is(err, errExists) {
			l.exists = true
			return nil
		}
		if err != nil {
			return err
		}
		l.w = w
	}
	if _, err := l.w.Write(line); err != nil {
		return err
	}
	_, err := l.w.Write([]byte{'\n'})
	return err
}

// commit stores the file; its id, or "" when it has no line.
func (l *lazyFile) commit() (string, error) {
	if l.lines == 0 {
		return "", nil
	}
	if l.w != nil {
		if _, err := l.w.commit(); err != nil {
			return "", err
		}
	}
	return l.rec.ID, nil
}

// abort removes a file left half written.
func (l *lazyFile) abort() {
	if l.w != nil {
		l.w.abort()
	}
}

// finalize ends the batch of run r, which ended with end: it marks the batch finalizing,
// writes its output and error files from the stored results (and, for an expired batch or
// one whose key was revoked or whose runs died, an error line for each line never
// answered), then sets the final status, counts and file ids, releases the input file, and
// deletes the results. Each step can run again: a finalization that stops is finished by
// the next run.
func (s *Service) finalize(r *run, end ending) error {
	ctx := r.lineCtx
	id := r.rec.ID
	var rec record
	err := s.st.Update(ctx, func(tx store.Tx) error {
		var err error
		rec, err = store.GetJSON[record](ctx, tx, store.Batches, id)
		if err != nil {
			return err
		}
		if rec.Starts != r.rec.Starts || !rec.Running() {
			return errLost
		}
		if rec.Ending == "" {
			rec.Ending = end
		}
		rec.Status = StatusFinalizing
		if rec.FinalizingAt.IsZero() {
			rec.FinalizingAt = s.now().UTC()
		}
		return store.PutJSON(ctx, tx, store.Batches, id, rec)
	})
	if err != nil {
		return err
	}
	end = rec.Ending
	now := s.now().UTC()
	newFile := func(kind string) fileRecord {
		fr := fileRecord{ID: outputFileID(id, kind), Owner: rec.Owner, Filename: id + "_" + kind + ".jsonl",
			Purpose: PurposeBatchOutput, CreatedAt: now}
		if rec.OutputExpiry > 0 {
			fr.ExpiresAt = now.Add(time.Duration(rec.OutputExpiry) * time.Second)
		}
		return fr
	}
	out := &lazyFile{f: s.files, ctx: ctx, rec: newFile("output")}
	errs := &lazyFile{f: s.files, ctx: ctx, rec: newFile("error")}
	var counts RequestCounts
	var usage Usage
	var cost float64
	emit := func(res *lineResult) error {
		usage.add(res.Usage)
		cost += res.CostUSD
		if res.OK {
			counts.Completed++
			return out.add(res.Line)
		}
		counts.Failed++
		return errs.add(res.Line)
	}
	unrun := unrunError(end, rec.Starts-rec.HandedBack)
	if err := s.writeResults(ctx, &rec, unrun, emit); err != nil {
		out.abort()
		errs.abort()
		return err
	}
	outID, err := out.commit()
	if err != nil {
		errs.abort()
		return err
	}
	errID, err := errs.commit()
	if err != nil {
		return err
	}
	err = s.st.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[record](ctx, tx, store.Batches, id)
		if err != nil {
			return err
		}
		if cur.Starts != r.rec.Starts || cur.Status != StatusFinalizing {
			return errLost
		}
		now := s.now().UTC()
		switch end {
		case endCompleted:
			cur.Status, cur.CompletedAt = StatusCompleted, now
		case endCancelled:
			cur.Status, cur.CancelledAt = StatusCancelled, now
			if cur.CancellingAt.IsZero() {
				cur.CancellingAt = now
			}
		case endExpired:
			cur.Status, cur.ExpiredAt = StatusExpired, now
		default: // key revoked, runs died
			cur.Status, cur.FailedAt = StatusFailed, now
			cur.Errors = []BatchError{{Code: unrun.Code, Message: unrun.Message}}
		}
		cur.Completed, cur.Failed, cur.Usage, cur.CostUSD = counts.Completed, counts.Failed, usage, cost
		cur.OutputFileID, cur.ErrorFileID = outID, errID
		if err := releaseTx(ctx, tx, cur.InputFileID, cur.ID); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.Batches, cur.ID, cur)
	})
	if err != nil {
		return err
	}
	s.log.Info("batch: ended", "batch", id, "status", endStatus(end), "completed", counts.Completed, "failed", counts.Failed,
		"output_file_id", outID, "error_file_id", errID)
	s.deleteResults(ctx, id)
	return nil
}

// endStatus is the final status of a run that ended with e.
func endStatus(e ending) Status {
	switch e {
	case endCompleted:
		return StatusCompleted
	case endCancelled:
		return StatusCancelled
	case endExpired:
		return StatusExpired
	}
	return StatusFailed
}

// unrunError is the error of the lines never answered when a batch ends with e (nil:
// they are left out, as for a cancelled batch); died counts the runs that died.
func unrunError(e ending, died int) *LineError {
	switch e {
	case endExpired:
		return &LineError{Code: CodeExpired, Message: "This request could not be executed before the completion window expired."}
	case endKeyRevoked:
		return &LineError{Code: CodeKeyRevoked, Message: "This request was not sent: " + ErrKeyRevoked.Error() + "; create the batch again with a valid key to run the remaining requests."}
	case endCrashed:
		return &LineError{Code: CodeFailed, Message: fmt.Sprintf("This request was not sent: the batch failed after its worker stopped %d times while running it.", died)}
	}
	return nil
}

// writeResults calls emit with every line's result in input order: the stored result of
// each answered line and, when unrun is set, an error line for each line never answered.
func (s *Service) writeResults(ctx context.Context, rec *record, unrun *LineError, emit func(*lineResult) error) error {
	prefix := resultPrefix(rec.ID)
	var page []store.Entry
	after := ""
	more := true
	// next returns the next stored result in key (input) order, nil at the end.
	next := func() (int, *lineResult, error) {
		for {
			if len(page) == 0 {
				if !more {
					return 0, nil, nil
				}
				var err error
				page, err = s.st.List(ctx, store.BatchResults, store.ListOptions{Prefix: prefix, After: after, Limit: 256})
				if err != nil {
					return 0, nil, fmt.Errorf("read the answered lines: %w", err)
				}
				more = len(page) == 256
				if len(page) == 0 {
					return 0, nil, nil
				}
				after = page[len(page)-1].Key
			}
			e := page[0]
			page = page[1:]
			i, ok := resultIndex(prefix, e.Key)
			var res lineResult
			if ok && decode(e.Value, &res) == nil {
				return i, &res, nil
			}
		}
	}
	if unrun == nil {
		for {
			_, res, err := next()
			if err != nil || res == nil {
				return err
			}
			if err := emit(res); err != nil {
				return err
			}
		}
	}
	input, err := s.files.openInput(ctx, rec.Owner, rec.InputFileID)
	if err != nil {
		return err
	}
	defer input.Close()
	br := bufio.NewReaderSize(input, 64<<10)
	ri, res, err := next()
	if err != nil {
		return err
	}
	idx := 0
	for lineNo := 1; ; lineNo++ {
		b, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("read the input file: %w", rerr)
		}
		if line := inputLineText(b, lineNo); len(line) > 0 {
			i := idx
			idx++
			for res != nil && ri < i { // a result without its line: cannot happen; skip it
				if ri, res, err = next(); err != nil {
					return err
				}
			}
			if res != nil && ri == i {
				if err := emit(res); err != nil {
					return err
				}
				if ri, res, err = next(); err != nil {
					return err
				}
			} else {
				l, _ := parseLine(line, lineNo)
				if err := emit(errorResult(newRequestID(), l.CustomID, unrun.Code, unrun.Message)); err != nil {
					return err
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
	}
}

// deleteResults removes batch id's stored results, once its files hold them.
func (s *Service) deleteResults(ctx context.Context, id string) {
	prefix := resultPrefix(id)
	for {
		entries, err := s.st.List(ctx, store.BatchResults, store.ListOptions{Prefix: prefix, Limit: 500})
		if err == nil && len(entries) > 0 {
			err = s.st.Update(ctx, func(tx store.Tx) error {
				for _, e := range entries {
					if err := tx.Delete(ctx, store.BatchResults, e.Key); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			s.log.Warn("batch: delete the answered lines of an ended batch", "batch", id, "err", err)
			return
		}
		if len(entries) < 500 {
			return
		}
	}
}
