package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// runBatch is `switchyard batch`: run a JSONL file of requests as a batch through the
// server's gateway (upload, create, wait, download), and list, show, cancel or download
// batches.
func runBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "run", "show", "cancel", "download")
	if err != nil {
		return err
	}
	fs := newFlagSet("batch", "batch [list] | batch run FILE.jsonl [--endpoint E] [--no-wait] [--out DIR] | batch show ID | batch cancel ID | batch download ID [--out DIR]", stderr)
	cf := addClientFlags(fs)
	endpoint := fs.String("endpoint", "/v1/chat/completions", "run: the endpoint of every line (/v1/chat/completions, /v1/embeddings, /v1/responses, /v1/completions)")
	noWait := fs.Bool("no-wait", false, "run: upload and start the batch, print its id and return")
	pollEvery := fs.Duration("poll", 2*time.Second, "run: how often to poll the batch")
	outDir := fs.String("out", ".", "run, download: the directory the output and error files are written to (<batch id>_output.jsonl, <batch id>_error.jsonl)")
	limit := fs.Int("limit", 20, "list: how many batches (1-100), newest first")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub == "run" || sub == "download" {
		// Before anything is sent (and paid for): the files must have somewhere to go.
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	oneID := func() (string, error) {
		if len(pos) != 1 {
			return "", &usageError{err: fmt.Errorf("give one batch id: switchyard batch %s ID", sub)}
		}
		return pos[0], nil
	}
	switch sub {
	case "list":
		if *limit < 1 || *limit > 100 { // the client would send no limit (20) for one not positive
			return fmt.Errorf("--limit must be 1-100, got %d", *limit)
		}
		l, err := c.ListBatches(ctx, "", *limit)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, l)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tENDPOINT\tDONE\tFAILED\tCREATED")
		for _, b := range l.Data {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%s\n", b.ID, b.Status, b.Endpoint, b.RequestCounts.Completed+b.RequestCounts.Failed,
				b.RequestCounts.Total, b.RequestCounts.Failed, time.Unix(b.CreatedAt, 0).Local().Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	case "show":
		id, err := oneID()
		if err != nil {
			return err
		}
		b, err := c.Batch(ctx, id)
		if err != nil {
			return err
		}
		return showBatch(stdout, b, cf.jsonOut)
	case "cancel":
		id, err := oneID()
		if err != nil {
			return err
		}
		b, err := c.CancelBatch(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "batch %s %s\n", b.ID, b.Status)
		return nil
	case "download":
		id, err := oneID()
		if err != nil {
			return err
		}
		b, err := c.Batch(ctx, id)
		if err != nil {
			return err
		}
		return downloadBatch(ctx, c, b, *outDir, stdout)
	}
	// run
	if len(pos) != 1 {
		return &usageError{err: errors.New("give one JSONL file of requests: switchyard batch run requests.jsonl")}
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	file, err := c.UploadFile(ctx, filepath.Base(pos[0]), f, "batch")
	if err != nil {
		return err
	}
	b, err := c.CreateBatch(ctx, &client.CreateBatchRequest{InputFileID: file.ID, Endpoint: *endpoint})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "batch %s %s (%d requests, file %s)\n", b.ID, b.Status, b.RequestCounts.Total, file.ID)
	if *noWait {
		fmt.Fprintln(stdout, b.ID)
		return nil
	}
	p := newProgress(stderr, isTerminal(stderr))
	for st, err := range c.WatchBatch(ctx, b.ID, *pollEvery) {
		if err != nil {
			p.finish()
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "stopped waiting; the batch goes on: switchyard batch show %s\n", b.ID)
			}
			return err
		}
		b = st
		n := b.RequestCounts
		frac := -1.0
		if n.Total > 0 {
			frac = float64(n.Completed+n.Failed) / float64(n.Total)
		}
		p.set(b.Status, fmt.Sprintf("%d/%d answered, %d failed", n.Completed+n.Failed, n.Total, n.Failed), frac)
	}
	p.finish()
	if err := showBatch(stdout, b, cf.jsonOut); err != nil {
		return err
	}
	return downloadBatch(ctx, c, b, *outDir, stdout)
}

// showBatch prints a batch's summary (or its JSON).
func showBatch(w io.Writer, b *client.Batch, asJSON bool) error {
	if asJSON {
		return printJSON(w, b)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "batch\t%s\n", b.ID)
	fmt.Fprintf(tw, "status\t%s\n", b.Status)
	fmt.Fprintf(tw, "endpoint\t%s\n", b.Endpoint)
	fmt.Fprintf(tw, "requests\t%d total, %d completed, %d failed\n", b.RequestCounts.Total, b.RequestCounts.Completed, b.RequestCounts.Failed)
	fmt.Fprintf(tw, "tokens\t%d in, %d out\n", b.Usage.InputTokens, b.Usage.OutputTokens)
	if b.Switchyard != nil {
		fmt.Fprintf(tw, "cost\t$%.6f\n", b.Switchyard.CostUSD)
	}
	if b.Errors != nil {
		for _, e := range b.Errors.Data {
			fmt.Fprintf(tw, "error\t%s: %s\n", e.Code, e.Message)
		}
	}
	for _, f := range []struct {
		name string
		id   *string
	}{{"output file", b.OutputFileID}, {"error file", b.ErrorFileID}} {
		if f.id != nil {
			fmt.Fprintf(tw, "%s\t%s\n", f.name, *f.id)
		}
	}
	return tw.Flush()
}

// downloadBatch writes an ended batch's output and error files to dir.
func downloadBatch(ctx context.Context, c *client.Client, b *client.Batch, dir string, stdout io.Writer) error {
	if !b.Done() {
		return fmt.Errorf("batch %s is %s: its files are written when it ends", b.ID, b.Status)
	}
	for _, f := range []struct {
		kind string
		id   *string
	}{{"output", b.OutputFileID}, {"error", b.ErrorFileID}} {
		kind, id := f.kind, f.id
		if id == nil {
			continue
		}
		rc, err := c.FileContent(ctx, *id)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, b.ID+"_"+kind+".jsonl")
		err = writeFile(path, rc)
		rc.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return nil
}

// writeFile copies r into a new file at path.
func writeFile(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
