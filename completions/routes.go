package completions

import "fmt"

// Routes is what a running Gateway routes by that SetRoutes may replace: the model groups
// (with their members' limits and timeouts) and the price catalogue. The server's dynamic
// deployments (LiteLLM's POST /model/new) change them at run time.
type Routes struct {
	// ModelGroups replace Options.ModelGroups (checked as New checks them).
	ModelGroups map[string]ModelGroup
	// Prices replaces Options.Prices; nil keeps the gateway's current catalogue.
	Prices PriceCatalogue
	// Stored marks the members added through an admin API and kept in a store (LiteLLM's
	// db_model deployments): DeploymentID(group, model) to the id they were stored under,
	// which Deployments reports as theirs (Deployment.ID, Deployment.Stored).
	Stored map[string]string
	// IDs are the ids a configuration gives its members (a LiteLLM config's
	// model_info.id): DeploymentID(group, model) to that id, which Deployments reports
	// as theirs (Deployment.ID) instead of the hash. Stored wins for a member in both.
	IDs map[string]string
	// Wildcards replace Options.Wildcards (checked as New checks them); nil keeps the
	// gateway's current ones.
	Wildcards []Wildcard
	// Listed replace Options.Listed (what ListedModels and Deployments list beside the
	// groups with Options.ListConfigured); nil keeps the gateway's current ones.
	Listed []string
	// DeploymentNames replace Options.DeploymentNames; nil keeps the gateway's current
	// ones.
	DeploymentNames map[string][]NamedDeployment
	// ContextWindowFallbacksSet replaces Options.ContextWindowFallbacksSet; nil keeps the
	// gateway's current one.
	ContextWindowFallbacksSet *bool
}

// routeTable is one immutable routing table: Routes with its members' limits counted and
// timeouts indexed. A request keeps the table it started with (plan.rt) for its limits and
// timeouts, whatever SetRoutes swaps in meanwhile.
type routeTable struct {
	groups   map[string]ModelGroup
	limits   *memberLimits // model group members' rpm, tpm and max_parallel (nil: none)
	timeouts map[string]MemberTimeouts
	// params are the members' default request parameters, by model (nil: none).
	params map[string]MemberParams
	prices PriceCatalogue
	stored map[string]string
	ids    map[string]string
	// wildcards are Routes.Wildcards compiled, in the order they are tried.
	wildcards []wildcardRoute
	// listed are Routes.Listed.
	listed []string
	// served is what a request may name with Options.ListConfigured besides the groups
	// (servedNames).
	served servedNames
	// named are Routes.DeploymentNames.
	named map[string][]NamedDeployment
	// windowSet is Routes.ContextWindowFallbacksSet.
	windowSet bool
}

// newRouteTable checks r and builds its table; the counts of a member whose limits are
// unchanged from old's are carried over (its calls in flight, its minute's calls and
// tokens, the requests queued for its slots), so a swap neither resets nor doubles them.
func newRouteTable(r Routes, old *routeTable) (*routeTable, error) {
	if err := checkModelGroups(r.ModelGroups); err != nil {
		return nil, err
	}
	limits, err := memberLimitsOf(r.ModelGroups)
	if err != nil {
		return nil, err
	}
	timeouts, err := memberTimeoutsOf(r.ModelGroups)
	if err != nil {
		return nil, err
	}
	wildcards, err := compileWildcards(r.Wildcards)
	if err != nil {
		return nil, err
	}
	params, err := memberParamsOf(r.ModelGroups)
	if err != nil {
		return nil, err
	}
	if err := checkDeploymentNames(r.DeploymentNames); err != nil {
		return nil, err
	}
	rt := &routeTable{groups: compileTagRegex(r.ModelGroups), limits: newMemberLimits(limits), timeouts: timeouts, params: params, prices: r.Prices, stored: r.Stored, ids: r.IDs, wildcards: wildcards, listed: r.Listed, named: r.DeploymentNames}
	if r.ContextWindowFallbacksSet != nil {
		rt.windowSet = *r.ContextWindowFallbacksSet
	}
	if old != nil {
		if r.ContextWindowFallbacksSet == nil {
			rt.windowSet = old.windowSet
		}
		if r.Listed == nil {
			rt.listed = old.listed
		}
		if r.DeploymentNames == nil {
			rt.named = old.named
		}
		if rt.prices == nil {
			rt.prices = old.prices
		}
		if r.Wildcards == nil {
			rt.wildcards = old.wildcards
		}
		if rt.limits != nil && old.limits != nil {
			for model, u := range rt.limits.m {
				if prev := old.limits.m[model]; prev != nil && prev.lim == u.lim {
					rt.limits.m[model] = prev
				}
			}
		}
	}
	rt.served = newServedNames(rt.groups, rt.listed)
	return rt, nil
}

// routes returns the routing table in force.
func (g *Gateway) routes() *routeTable {
	if rt := g.rt.Load(); rt != nil {
		return rt
	}
	return &routeTable{} // a zero Gateway
}

// prices returns the price catalogue in force (nil: none).
func (g *Gateway) prices() PriceCatalogue { return g.routes().prices }

// Prices returns the price catalogue in force: Options.Prices, or the last SetRoutes' (the
// dynamic deployments' own prices with it); nil when the gateway has none. It is safe to call
// under concurrent SetRoutes, so model selection and training can price models as the
// gateway does now rather than as it did at start-up.
func (g *Gateway) Prices() PriceCatalogue { return g.prices() }

// SetRoutes replaces the gateway's model groups (and, when r.Prices is set, its price
// catalogue) at run time, safely under concurrent requests: the new table is checked
// whole (an error wrapping ErrInvalid names the group, as New's) and then swapped in
// atomically. Requests already under way keep the table they started with for their
// members' limits and timeouts; the next requests use the new one. A member whose limits
// are unchanged keeps its counts. The members' providers must be known to
// Options.Providers (register new ones there first).
func (g *Gateway) SetRoutes(r Routes) error {
	if g.rt.Load() == nil {
		return ErrZeroGateway
	}
	g.swapMu.Lock()
	defer g.swapMu.Unlock()
	rt, err := newRouteTable(r, g.rt.Load())
	if err != nil {
		return fmt.Errorf("completions: routes: %w", err)
	}
	if err := g.checkGroupMembers(rt.groups); err != nil {
		return fmt.Errorf("completions: routes: %w", err)
	}
	g.rt.Store(rt)
	return nil
}

// ModelGroupsInForce returns a copy of the model groups the gateway routes by now
// (Options.ModelGroups, or the last SetRoutes').
func (g *Gateway) ModelGroupsInForce() map[string]ModelGroup {
	groups := g.routes().groups
	out := make(map[string]ModelGroup, len(groups))
	for k, v := range groups {
		out[k] = v
	}
	return out
}
