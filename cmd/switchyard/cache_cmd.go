package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// runCache is `switchyard cache purge [--namespace NS]` and `switchyard cache delete
// KEY...`: take the calling key's answers out of the server's response cache.
func runCache(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("want a subcommand: switchyard cache purge [--namespace NS] | switchyard cache delete KEY...")
	}
	sub, args, err := subcommand(args, "purge", "delete")
	if err != nil {
		return err
	}
	fs := newFlagSet("cache", "cache purge [--namespace NS] | cache delete KEY...", stderr)
	cf := addClientFlags(fs)
	ns := fs.String("namespace", "", "purge: only the answers asked for in this cache namespace")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	nsSet := false
	fs.Visit(func(f *flag.Flag) { nsSet = nsSet || f.Name == "namespace" })
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch sub {
	case "purge":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (purge takes --namespace only)", pos[0])
		}
		var namespace *string
		if nsSet {
			namespace = ns
		}
		n, err := c.PurgeCache(ctx, namespace)
		if err != nil {
			return err
		}
		if cf.jsonOut {
			return printJSON(stdout, map[string]int{"deleted": n})
		}
		noun := "answers"
		if n == 1 {
			noun = "answer"
		}
		fmt.Fprintf(stdout, "deleted %d cached %s\n", n, noun)
		return nil
	default: // delete
		if nsSet {
			return errors.New("--namespace is for cache purge")
		}
		if len(pos) == 0 {
			return errors.New("give the keys to delete (an answer's X-Switchyard-Cache-Key): switchyard cache delete KEY...")
		}
		for _, k := range pos {
			if err := c.DeleteCached(ctx, k); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			fmt.Fprintf(stdout, "deleted %s\n", k)
		}
		return nil
	}
}
