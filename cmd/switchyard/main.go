// Command switchyard runs the Switchyard server and talks to one.
//
//	switchyard serve [--addr 127.0.0.1:8080] [--data ./switchyard-data] [--store postgres://…] [--workers N] ...
//	switchyard worker --store postgres://… [--workers N] ...
//	switchyard version | --version
//
// Every flag can also be set through an environment variable named SWITCHYARD_ plus the
// flag name in upper case with dashes as underscores (--max-body-bytes: SWITCHYARD_MAX_BODY_BYTES).
// A flag given on the command line wins over the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP server", runServe},
		{"worker", "run jobs from a shared PostgreSQL store without serving the API (--store postgres://…)", runWorker},
		{"version", "print the version (also --version)", runVersion},
		{"train", "train a custom router from dataset URLs and wait for it", runTrain},
		{"predict", "rank models for texts with a trained router", runPredict},
		{"optimize", "optimize an agent's system prompt and wait for the result", runOptimize},
		{"cleanup", "run the router model lifecycle once on a stopped server's data (--dry-run: report only)", runCleanup},
		{"backup", "copy a stopped server's database file whole (a running one writes its own: serve --backup-every, SIGUSR1), or check a backup (--verify FILE)", runBackup},
		{"restore", "put a backup in place of a stopped server's database (--from FILE), keeping the file it replaces", runRestore},
		{"chat", "chat with a model through a running server (streams; one-shot with a prompt, else interactive)", runChat},
		{"jobs", "list your training and optimization jobs, or delete some (jobs delete ID...)", runJobs},
		{"models", "list your router models, show one, or delete some", runModels},
		{"conversations", "list your conversations, show one's messages, or delete some", runConversations},
		{"keys", "issue virtual keys with budgets and model lists, list them with their spend, update or revoke them", runKeys},
		{"teams", "create teams (a budget, rate and model list their virtual keys share), list them with their spend, update or delete them; teams members adds, lists, updates and removes their users", runTeams},
		{"orgs", "create organizations (LiteLLM's: a model list and an account over every team put in one), list them with their spend, teams and members, update or delete them; orgs members adds, lists, updates and removes their users", runOrgs},
		{"tags", "give request tags budgets (LiteLLM's /tag/new: an account every request naming the tag draws on, across your virtual keys), list them with their spend, update or delete them", runTags},
		{"activity", "show your spend, tokens and requests per day, per model, request tag, team or key (LiteLLM's /user/daily/activity, /tag/daily/activity and /team/daily/activity, from the server's daily spend)", runActivity},
		{"deployments", "add, update and delete the deployments the gateway routes a model name to (LiteLLM's /model/new: stored, served at once, the api_key sealed), or list all of them", runDeployments},
		{"users", "create users (LiteLLM's internal users: a budget and model list the virtual keys made for them share), list them with their spend, teams and keys, update or delete them", runUsers},
		{"customers", "list the end users your apps name in their requests with their spend, create them with budgets and model lists, block, unblock, update or delete them", runCustomers},
		{"batch", "run a JSONL file of requests through the gateway as a batch and download the answers; list, show, cancel or download batches", runBatch},
		{"cache", "take your answers out of the server's response cache: purge all (or --namespace NS), or delete KEY...", runCache},
		{"litellm-config", "check a LiteLLM proxy config.yaml: print the providers, model groups, settings and warnings serve --litellm-config would take from it", runLiteLLMConfig},
		{"select", "pick a model for a prompt: -m provider/model... --prompt TEXT [--tradeoff cost|latency] (or the JSON request on stdin or --file)", runSelectStdin},
		{"preferences", "create, list, show, rename or delete the preferences (pref_...) that personalize model selection from feedback", runPreferences},
		{"feedback", "thumbs up or down on a candidate of a model selection session (SESSION CANDIDATE up|down)", runFeedback},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		usage(stdout) // asked for: the answer, on stdout
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "-v" {
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			errOut := stderr
			if asksHelp(args[1:]) {
				errOut = stdout // the flags' usage is the answer asked for (a usage error stays on stderr)
			}
			if err := c.run(ctx, args[1:], stdout, errOut); err != nil {
				if err == flag.ErrHelp {
					return 0
				}
				var ue *usageError
				if errors.As(err, &ue) {
					if !ue.printed {
						fmt.Fprintf(stderr, "switchyard %s: %v\n", c.name, err)
					}
					return 2 // a command line error, as for an unknown command
				}
				fmt.Fprintf(stderr, "switchyard %s: %v\n", c.name, err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(stderr, "switchyard: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// asksHelp reports whether a command's args ask for its usage (-h, -help or --help before
// any "--").
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: switchyard <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'switchyard <command> -h' for its flags.")
}

// envName is the environment variable that sets a flag.
func envName(flagName string) string {
	return "SWITCHYARD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args, then fills every flag not given on the command line from its
// SWITCHYARD_* environment variable.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	fs.VisitAll(func(f *flag.Flag) {
		f.Usage = fmt.Sprintf("%s (env %s)", f.Usage, envName(f.Name))
	})
	if err := fs.Parse(args); err != nil {
		return asUsageError(err)
	}
	if fs.NArg() > 0 {
		// The flag package stops at the first argument that is not a flag: without this a
		// stray word would silently drop every flag after it (serve on the defaults).
		return &usageError{err: fmt.Errorf("unexpected argument %q: %s takes flags only", fs.Arg(0), fs.Name())}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []string
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: %v", envName(f.Name), v, err))
			}
		}
	})
	if len(errs) > 0 {
		// As the same value given as a flag: a command line error, exit 2.
		return &usageError{err: fmt.Errorf("bad environment: %s", strings.Join(errs, "; "))}
	}
	return nil
}

// usageError is a command line refused: run exits 2, as for an unknown command, printing
// the error unless the flag package already did (with the usage).
type usageError struct {
	err     error
	printed bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// asUsageError marks a flag parsing error as printed (flag.ErrHelp stays as it is).
func asUsageError(err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &usageError{err: err, printed: true}
}
