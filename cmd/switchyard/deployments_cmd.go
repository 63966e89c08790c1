package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/switchyard-ai/switchyard/client"
)

// envDeploymentAPIKey is the environment variable `deployments add` takes a deployment's
// api_key from when neither --api-key nor --api-key-env is given.
const envDeploymentAPIKey = "SWITCHYARD_DEPLOYMENT_API_KEY"

// keyValues is a repeatable NAME=VALUE flag; a VALUE that is JSON (a number, true, an
// object) is kept as that JSON's value, any other as a string.
type keyValues map[string]any

// String lists the pairs given.
func (kv keyValues) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, kv[k]))
	}
	return strings.Join(parts, ",")
}

// Set reads one NAME=VALUE.
func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	var val any
	if err := json.Unmarshal([]byte(v), &val); err != nil {
		val = v
	}
	kv[strings.TrimSpace(k)] = val
	return nil
}

// deploymentFlags are the settings `deployments add` and `deployments update` take.
type deploymentFlags struct {
	id, name, model, apiBase, apiKey, apiKeyEnv, apiVersion string
	rpm                                                     int
	tpm                                                     int64
	params, info                                            keyValues
}

// deploymentSettings are the names of deploymentFlags' flags.
var deploymentSettings = []string{"id", "name", "model", "api-base", "api-key", "api-key-env", "api-version", "rpm", "tpm", "param", "info"}

func addDeploymentFlags(fs *flag.FlagSet) *deploymentFlags {
	f := &deploymentFlags{params: keyValues{}, info: keyValues{}}
	fs.StringVar(&f.id, "id", "", "add: the deployment's id (model_info.id); empty: the server makes one")
	fs.StringVar(&f.name, "name", "", "the model name clients send (a model group; one of the config file's joins it); required by add")
	fs.StringVar(&f.model, "model", "", "the provider/model the deployment calls (litellm_params.model): openai/gpt-4o; required by add")
	fs.StringVar(&f.apiBase, "api-base", "", "the provider's endpoint root (litellm_params.api_base)")
	fs.StringVar(&f.apiKey, "api-key", "", "the provider's key, or os.environ/NAME for the server's variable NAME; stored sealed, never printed (prefer --api-key-env: a flag's value is seen by ps)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "read the provider's key from this environment variable of this command (add defaults to "+envDeploymentAPIKey+" when set)")
	fs.StringVar(&f.apiVersion, "api-version", "", "an Azure deployment's api-version (litellm_params.api_version)")
	fs.IntVar(&f.rpm, "rpm", 0, "the deployment's requests per minute (litellm_params.rpm); 0: not set")
	fs.Int64Var(&f.tpm, "tpm", 0, "the deployment's tokens per minute (litellm_params.tpm); 0: not set")
	fs.Var(f.params, "param", "another litellm_params NAME=VALUE (a JSON VALUE is kept as such): timeout=30, input_cost_per_token=0.000002; repeatable")
	fs.Var(f.info, "info", "a model_info NAME=VALUE: base_model=gpt-4o, mode=embedding; repeatable")
	return f
}

// request is the DeploymentRequest the flags describe, its api_key read from the
// environment when asked (or, for add, from envDeploymentAPIKey when no key flag is given).
func (f *deploymentFlags) request(set map[string]bool, add bool, getenv func(string) string) (*client.DeploymentRequest, error) {
	if set["api-key"] && set["api-key-env"] {
		return nil, errors.New("give --api-key or --api-key-env, not both")
	}
	key := f.apiKey
	switch {
	case set["api-key-env"]:
		if key = getenv(f.apiKeyEnv); key == "" {
			return nil, fmt.Errorf("--api-key-env %s: the variable is not set or empty", f.apiKeyEnv)
		}
	case add && !set["api-key"]:
		key = getenv(envDeploymentAPIKey)
	}
	return &client.DeploymentRequest{ID: f.id, ModelName: f.name, Model: f.model, APIBase: f.apiBase, APIKey: key, APIVersion: f.apiVersion,
		RequestsPerMinute: f.rpm, TokensPerMinute: f.tpm, Params: f.params, Info: f.info}, nil
}

// runDeployments is `switchyard deployments`: LiteLLM's dynamic models (/model/new,
// PATCH /model/{model_id}/update, /model/delete), and the list of every deployment the
// server routes to (/model/info). The api_key is never printed: the server answers none.
func runDeployments(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, "list", "add", "update", "delete")
	if err != nil {
		return err
	}
	fs := newFlagSet("deployments", "deployments [list] | deployments add --name NAME --model PROVIDER/MODEL [settings] | deployments update ID [settings] | deployments delete ID...", stderr)
	cf := addClientFlags(fs)
	df := addDeploymentFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	set := flagsGiven(fs)
	if sub != "add" && sub != "update" {
		if err := flagsOnlyFor(set, deploymentSettings, "deployments add and deployments update"); err != nil {
			return err
		}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	show := showRecord(stdout, cf.jsonOut, printDeployment)
	switch sub {
	case "add":
		if len(pos) > 0 {
			return fmt.Errorf("unexpected argument %q (settings are flags: switchyard deployments add --name gpt-4o --model openai/gpt-4o --api-key-env OPENAI_KEY)", pos[0])
		}
		if df.name == "" || df.model == "" {
			return errors.New("give --name (the model name clients send) and --model (provider/model): switchyard deployments add --name gpt-4o --model openai/gpt-4o")
		}
		req, err := df.request(set, true, os.Getenv)
		if err != nil {
			return err
		}
		return show(c.AddDeployment(ctx, req))
	case "update":
		if len(pos) != 1 || set["id"] {
			return errors.New("give one deployment id: switchyard deployments update ID --api-base https://…")
		}
		req, err := df.request(set, false, os.Getenv)
		if err != nil {
			return err
		}
		return show(c.UpdateDeployment(ctx, pos[0], req))
	case "delete":
		if len(pos) == 0 {
			return errors.New("give the stored deployment id(s) to delete (switchyard deployments lists them)")
		}
		return forEachID(pos, cf.jsonOut, stdout, func(id string) (any, string, error) {
			if err := c.DeleteDeployment(ctx, id); err != nil {
				return nil, "", err
			}
			return deploymentDeletion{ID: id, Deleted: true}, "deleted deployment " + id, nil
		})
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q (switchyard deployments update ID, or deployments delete ID)", pos[0])
	}
	ds, err := c.DeploymentInfos(ctx)
	if err != nil {
		return err
	}
	if cf.jsonOut {
		return printJSON(stdout, orEmpty(ds))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODEL\tAPI BASE\tSTORED")
	for _, d := range ds {
		base := d.Params.APIBase
		if base == "" {
			base = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", d.Info.ID, d.ModelName, d.Params.Model, base, d.Info.Stored)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(ds) == 0 {
		fmt.Fprintln(stdout, "(no deployments: switchyard deployments add --name gpt-4o --model openai/gpt-4o --api-key-env OPENAI_KEY)")
	}
	return nil
}

// deploymentDeletion is what deployments delete --json prints for each deployment.
type deploymentDeletion struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func printDeployment(w io.Writer, d *client.Deployment) {
	fmt.Fprintf(w, "id:        %s\n", d.ID)
	fmt.Fprintf(w, "name:      %s\n", d.ModelName)
	fmt.Fprintf(w, "model:     %s\n", d.Model())
	for _, k := range slices.Sorted(maps.Keys(d.Params)) {
		if k == "model" || k == "api_key" { // the server answers no api_key; never print one
			continue
		}
		fmt.Fprintf(w, "%-10s %v\n", k+":", d.Params[k])
	}
	if ref, ok := d.Params["api_key"].(string); ok && strings.HasPrefix(ref, "os.environ/") {
		fmt.Fprintf(w, "api_key:   %s\n", ref)
	}
	fmt.Fprintf(w, "updated:   %s\n", d.UpdatedAt.Format("2006-01-02 15:04:05Z07:00"))
}
